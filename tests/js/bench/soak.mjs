// Soak: about 1,000,000 watch events with churn over 10 minutes against the
// sim, with add/update/delete handlers keeping a map. Prints wasm memory and
// the JS heap (after a GC) every 30 s; both should be flat after the first
// minute. At the end the handler map must equal the cache.
// `scripts/with-sim.sh -- node --expose-gc tests/js/bench/soak.mjs [minutes]`
import { KubeClient, InformerFactory, wasmMemoryBytes } from 'kubewasm';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const minutes = Number(process.argv[2] || 10);
const PER_SECOND = 1_700;
const sim = (path, body) => fetch(`${server}${path}`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.json());
const keyOf = (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);

await sim('/sim/faults/clear', {});
await sim('/sim/seed', { namespaces: 5, pods: 3_000, seed: 13, podBytes: 3000 });
const client = new KubeClient({ server, token, qps: 1000, burst: 1000 });
const factory = new InformerFactory(client);
const inf = factory.informer({ version: 'v1', resource: 'pods' });
const mine = new Map();
let events = 0;
inf.on('add', (o) => (events++, mine.set(keyOf(o), o.metadata.resourceVersion)));
inf.on('update', (_old, o) => (events++, mine.set(keyOf(o), o.metadata.resourceVersion)));
inf.on('delete', (o) => (events++, o && mine.delete(keyOf(o))));
factory.start();
await inf.waitForSync();
await sim('/sim/churn', { perSec: 50, seed: 3 });
const mib = (b) => (b / 1048576).toFixed(1);
const t0 = performance.now();
let nextSample = 0;
console.log('t_s, events, wasm_MiB, js_heap_MiB');
while (performance.now() - t0 < minutes * 60_000) {
  const tick = performance.now();
  await sim('/sim/flood', { resource: 'pods', events: PER_SECOND, wait: true });
  const elapsed = (performance.now() - t0) / 1000;
  if (elapsed >= nextSample) {
    globalThis.gc?.();
    console.log(`${elapsed.toFixed(0)}, ${events}, ${mib(wasmMemoryBytes())}, ${mib(process.memoryUsage().heapUsed)}`);
    nextSample += 30;
  }
  const rest = 1000 - (performance.now() - tick);
  if (rest > 0) await new Promise((r) => setTimeout(r, rest));
}
await sim('/sim/churn', { perSec: 0 });
const want = (await (await fetch(`${server}/sim/state?resource=pods`)).json()).items;
const deadline = performance.now() + 60_000;
const same = () => mine.size === Object.keys(want).length && Object.entries(want).every(([k, v]) => mine.get(k) === v);
while (!same() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
globalThis.gc?.();
console.log(`soak: ${events} handler events in ${minutes} min; handler map ${same() ? 'equals' : 'DIFFERS FROM'} the sim; final wasm ${mib(wasmMemoryBytes())} MiB, JS heap ${mib(process.memoryUsage().heapUsed)} MiB`);
factory.shutdown();
if (!same()) process.exit(1);
