// The next macrotask, without the 4 ms floor browsers put on zero-delay
// timers once they nest (every turn of a busy loop that yields with
// setTimeout(0) nests one deeper), and without Node's 1 ms timer floor.
// `scheduler.postTask` (Chromium pages and workers) and `setImmediate`
// (Node, Bun) are not clamped; a MessageChannel message is the fallback in
// other pages; elsewhere (workerd, Deno) a zero-delay timeout, unclamped there.
const post = (() => {
  const g = globalThis;
  if (typeof g.scheduler === 'object' && g.scheduler !== null && typeof g.scheduler.postTask === 'function') {
    return (f) => g.scheduler.postTask(f);
  }
  if (typeof g.setImmediate === 'function') return (f) => g.setImmediate(f);
  if (typeof g.document === 'object' && typeof g.MessageChannel === 'function') {
    const waiting = [];
    let channel;
    return (f) => {
      if (channel === undefined) {
        channel = new g.MessageChannel();
        channel.port1.onmessage = () => {
          const next = waiting.shift();
          if (next !== undefined) next();
        };
      }
      waiting.push(f);
      channel.port2.postMessage(null);
    };
  }
  return (f) => g.setTimeout(f, 0);
})();

export function nextTask() {
  return new Promise((resolve) => post(resolve));
}
