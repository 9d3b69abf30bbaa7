// What JS pays for cached objects it reads: after syncing 10,000 pods of ~3 KB,
// the first getSnapshot() builds one JS object per pod and the loop reads each
// `metadata.name` (what a list view or a handler does). Reports the time and
// the JS heap that stays per pod.
// `scripts/with-sim.sh -- node --expose-gc tests/js/bench/objects.mjs` after
// `make build` and `cd tests/js && npm ci`.
import { KubeClient, InformerFactory } from 'kubewasm';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const PODS = 10_000;
const gc = globalThis.gc ?? (() => { throw new Error('run with node --expose-gc'); });
await fetch(`${server}/sim/seed`, { method: 'POST', body: JSON.stringify({ namespaces: 10, pods: PODS, seed: 5, podBytes: 3000 }) });
const factory = new InformerFactory(new KubeClient({ server, token, qps: 1000, burst: 1000 }));
const inf = factory.informer({ version: 'v1', resource: 'pods' });
factory.start();
await inf.waitForSync();
gc();
const heap0 = process.memoryUsage().heapUsed;
const t0 = performance.now();
const snap = inf.getSnapshot();
let names = 0;
for (const p of snap) names += p.metadata.name.length > 0 ? 1 : 0;
const ms = performance.now() - t0;
gc();
const perPod = (process.memoryUsage().heapUsed - heap0) / snap.length;
console.log(`${snap.length} pods: build + read metadata.name ${ms.toFixed(1)} ms (${((ms * 1000) / snap.length).toFixed(2)} µs/pod); JS heap held ${perPod.toFixed(0)} B/pod (${names} names read)`);
factory.shutdown();
