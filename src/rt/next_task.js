// The next macrotask. Node and Bun have `setImmediate`, which is not held to
// the 1 ms floor Node puts on a zero-delay timer (a busy loop that yields
// every slice otherwise idles that long per turn). Pages keep the zero-delay
// timer: an unclamped yield (`scheduler.postTask`, a MessageChannel message)
// measured no faster in a page (BENCHMARKS.md).
const post = typeof globalThis.setImmediate === 'function'
  ? (f) => globalThis.setImmediate(f)
  : (f) => globalThis.setTimeout(f, 0);

export function nextTask() {
  return new Promise((resolve) => post(resolve));
}
