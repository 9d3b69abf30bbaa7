// A slow handler under a flood: peak wasm memory with the default handler
// backlog bound (the watch is held back) against no bound, and whether every
// event reached the handler. One process per run (linear memory never
// shrinks); `make bench` alternates the two modes three times.
// `scripts/with-sim.sh -- node tests/js/bench/slow-handler.mjs bounded|unbounded`
import { KubeClient, InformerFactory, wasmMemoryBytes } from 'kubewasm';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const mode = process.argv[2] || 'bounded';
const PODS = 2_000;
const EVENTS = 20_000;
const HANDLER_MS = 1;
const sim = (path, body) => fetch(`${server}${path}`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.json());

await sim('/sim/faults/clear', {});
await sim('/sim/seed', { namespaces: 4, pods: PODS, seed: 9, podBytes: 3000 });
const client = new KubeClient({ server, token, qps: 1000, burst: 1000 });
const factory = new InformerFactory(client);
const inf = factory.informer({ version: 'v1', resource: 'pods', ...(mode === 'unbounded' ? { maxBacklog: 0 } : {}) });
let delivered = 0;
inf.on('update', () => {
  const end = performance.now() + HANDLER_MS;
  while (performance.now() < end);
  delivered++;
});
let heldBack = 0;
inf.on('status', (s) => {
  if (s.heldBack) heldBack++;
});
factory.start();
await inf.waitForSync();
const base = wasmMemoryBytes();
let peak = base;
const sampler = setInterval(() => (peak = Math.max(peak, wasmMemoryBytes())), 50);
const t0 = performance.now();
await sim('/sim/flood', { resource: 'pods', events: EVENTS });
while (delivered < EVENTS) {
  await new Promise((r) => setTimeout(r, 50));
  if (performance.now() - t0 > 300_000) throw new Error(`only ${delivered} of ${EVENTS} events delivered`);
}
clearInterval(sampler);
peak = Math.max(peak, wasmMemoryBytes());
const secs = (performance.now() - t0) / 1000;
const mib = (b) => (b / 1048576).toFixed(1);
console.log(
  `slow-handler ${mode}: ${delivered}/${EVENTS} events delivered in ${secs.toFixed(1)} s; wasm memory after sync ${mib(base)} MiB, peak ${mib(peak)} MiB (+${mib(peak - base)}); held back ${heldBack} times`,
);
factory.shutdown();
