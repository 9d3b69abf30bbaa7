// The host JavaScript the layers below `js` call, in one module: every
// snippet is one more request for a page that loads the package without a
// bundler.

// The next macrotask. Node and Bun have `setImmediate`, which is not held to
// the 1 ms floor Node puts on a zero-delay timer (a busy loop that yields
// every slice otherwise idles that long per turn). Pages keep the zero-delay
// timer: an unclamped yield (`scheduler.postTask`, a MessageChannel message)
// measured no clear gain in a page (BENCHMARKS.md).
const post = typeof globalThis.setImmediate === 'function'
  ? (f) => globalThis.setImmediate(f)
  : (f) => globalThis.setTimeout(f, 0);

export function nextTask() {
  return new Promise((resolve) => post(resolve));
}

// Reading a fetch body into one buffer used again for every chunk.
//
// A default reader hands over each chunk in a new ArrayBuffer. On a watch
// flood those come at about a megabyte each, and fresh memory is slow: the
// engine maps and zeroes new pages for every one until a garbage collection
// frees the old (a page's flood spent a tenth of its time in `read`,
// BENCHMARKS.md). A byte stream's BYOB reader instead fills a buffer we give
// it and gives it back, so the same pages are reused. Bodies that are not
// byte streams (a polyfill, a supplied `fetch`) keep the default reader.
const SIZE = 64 * 1024;

// `{ read() }`: a promise of the next chunk (a Uint8Array), or of null at the end.
export function bodyReader(stream) {
  let byob = null;
  try {
    byob = stream.getReader({ mode: 'byob' });
  } catch {
    // Not a byte stream: a default reader below.
  }
  if (byob === null) {
    const reader = stream.getReader();
    return {
      read: () => reader.read().then((r) => (r.done ? null : r.value)),
    };
  }
  let buf = new ArrayBuffer(SIZE);
  return {
    // The chunk is a view of the shared buffer: valid until the next read.
    read: () =>
      byob.read(new Uint8Array(buf)).then((r) => {
        if (r.value !== undefined) buf = r.value.buffer;
        return r.done ? null : r.value;
      }),
  };
}

// A timer that does not keep Node (or Bun, Deno) running by itself: for
// housekeeping that only matters while the program goes on anyway.
// Hosts take at most 2^31 - 1 ms in one timer (a longer delay fires at
// once), so a longer wait is chained.
export function idleSleep(ms, cancel) {
  return new Promise((resolve) => {
    let t;
    const step = (left) => {
      const d = Math.min(left, 0x7fffffff);
      t = globalThis.setTimeout(() => (left > d ? step(left - d) : resolve()), d);
      if (typeof t === 'object' && typeof t?.unref === 'function') t.unref();
      else if (typeof globalThis.Deno?.unrefTimer === 'function') globalThis.Deno.unrefTimer(t);
    };
    step(ms);
    // A sleep given up (its task aborted) clears its timer, so timers of
    // abandoned grace periods do not pile up for their whole delay.
    if (cancel) cancel.clear = () => { globalThis.clearTimeout(t); resolve(); };
  });
}

// `f(true)` when the global scope says the network is back (`online`) and
// `f(false)` when it is gone (`offline`), where there is such a word: a page's
// window and every kind of worker have `navigator.onLine`; Node, Deno, Bun
// and workerd do not, and get neither listener nor timer. Returns `false`
// where it does not listen, else `watch(on)`, which the module calls with
// `true` when an informer starts needing the word and `false` when none does.
//
// Chromium updates `navigator.onLine` in workers (dedicated and shared) but
// fires no events there, so a worker also looks at it once a second while
// watched, and tells each change the events did not.
const POLL_MS = 1000;

export function onNetworkChange(f) {
  try {
    const g = globalThis;
    if (typeof g.addEventListener !== 'function' || typeof g.navigator?.onLine !== 'boolean') return false;
    let last = g.navigator.onLine;
    const tell = (online) => {
      last = online;
      f(online);
    };
    g.addEventListener('online', () => tell(true));
    g.addEventListener('offline', () => tell(false));
    if (!(typeof g.WorkerGlobalScope === 'function' && g instanceof g.WorkerGlobalScope)) return () => {};
    let timer;
    return (on) => {
      if (!on) {
        if (timer !== undefined) g.clearInterval(timer);
        timer = undefined;
        return;
      }
      if (timer !== undefined) return;
      try {
        timer = g.setInterval(() => {
          let now;
          try {
            now = g.navigator.onLine;
          } catch {
            return;
          }
          if (typeof now === 'boolean' && now !== last) tell(now);
        }, POLL_MS);
        // Housekeeping only: never what keeps a host running.
        if (typeof timer === 'object' && typeof timer?.unref === 'function') timer.unref();
      } catch {
        // A host that allows no timer here: the events alone.
      }
    };
  } catch {
    // A `navigator` whose getters throw: no word to follow.
    return false;
  }
}
