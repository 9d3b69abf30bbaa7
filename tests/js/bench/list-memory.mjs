// Wasm memory against cached bytes after a big single-response list, and after
// a relist of the same collection under churn (linear memory never shrinks, so
// the peak is what a page pays for its life). Run against a sim started with
// `--rv0-unpaginated` (resourceVersion=0 lists ignore `limit`, as the API
// server's watch cache does):
//   scripts/with-sim.sh --rv0-unpaginated -- node --expose-gc tests/js/bench/list-memory.mjs [PODS]
import { KubeClient, InformerFactory, wasmMemoryBytes } from 'kubewasm';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const PODS = Number(process.argv[2] || 50_000);
const sim = (path, body) => fetch(`${server}${path}`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.json());
const until = async (f, what, ms = 120_000) => {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const mib = (n) => (n / 1048576).toFixed(1);

await sim('/sim/seed', { namespaces: 50, pods: PODS, seed: 5, podBytes: 4000 });
const auth = token ? { Authorization: `Bearer ${token}` } : {};
const probe = await fetch(`${server}/api/v1/namespaces?resourceVersion=0&limit=1`, { headers: auth }).then((r) => r.json());
if (probe.items.length < 2) throw new Error('start the sim with --rv0-unpaginated: resourceVersion=0 lists are paginated');

const client = new KubeClient({ server, token, qps: 1000, burst: 1000 });
const factory = new InformerFactory(client);
const inf = factory.informer({ version: 'v1', resource: 'pods' });
factory.start();
await inf.waitForSync();
const heap = () => {
  globalThis.gc?.();
  const m = process.memoryUsage();
  // `external` counts wasm memory, reported on its own.
  return m.heapUsed + m.external - wasmMemoryBytes();
};
const report = (what) => {
  const wasm = wasmMemoryBytes();
  console.log(`${what}: ${inf.status.cached} pods, cached ${mib(inf.cachedBytes)} MiB, wasm memory ${mib(wasm)} MiB = ${(wasm / inf.cachedBytes).toFixed(2)}× cached; JS heap ${mib(heap())} MiB`);
};
report('single-response list');

// A relist of the same collection while it changes: compaction makes the
// re-watch fail with 410, and the relist (at resourceVersion "") is paginated.
const relists = inf.status.relists;
await sim('/sim/churn', { perSec: Number(process.env.CHURN ?? 500), seed: 9 });
// Hold the re-watch back while the history it would resume from is compacted.
await sim('/sim/faults', { latencyMs: 1000 });
await sim('/sim/drop-watches', {});
await sim('/sim/churn/steps', { steps: 50, seed: 3 });
await sim('/sim/compact', {});
await sim('/sim/faults/clear', {});
await until(() => inf.status.relists > relists && inf.status.phase === 'watching', 'the relist').catch((e) => { console.log(JSON.stringify(inf.status)); throw e; });
await sim('/sim/churn', { perSec: 0 });
report('relist under churn');
factory.shutdown();
