// What a dashboard pays per frame on a busy cluster: `getSnapshot()` of an
// informer of 20,000 pods and of a scoped view, read after each diff while
// the sim changes 500 objects a second. PKG=dir times another build of the
// package (an A/B of a change); each figure is the median over 30 diffs.
// `scripts/with-sim.sh -- node tests/js/bench/snapshot.mjs` after `make build`.
import { fileURLToPath, pathToFileURL } from 'node:url';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const pkg = process.env.PKG ?? fileURLToPath(new URL('../../../pkg/', import.meta.url));
const { KubeClient, InformerFactory } = await import(pathToFileURL(`${pkg}/node.js`).href);
const post = (path, body) => fetch(`${server}${path}`, { method: 'POST', body: JSON.stringify(body) });

await post('/sim/seed', { namespaces: 50, pods: 20000, seed: 9, podBytes: 4000 });
const factory = new InformerFactory(new KubeClient({ server, token }));
const pods = factory.informer({ version: 'v1', resource: 'pods' });
factory.start();
await pods.waitForSync();
const view = pods.scoped({ labelSelector: 'tier=backend' });
pods.getSnapshot();
view.getSnapshot();
await post('/sim/churn', { perSec: 500 });
const whole = [];
const scoped = [];
const keys = [];
await new Promise((resolve) => {
  const off = pods.subscribe((d) => {
    let t = performance.now();
    pods.getSnapshot();
    whole.push(performance.now() - t);
    t = performance.now();
    view.getSnapshot();
    scoped.push(performance.now() - t);
    keys.push(d.added.length + d.updated.length + d.removed.length);
    if (whole.length >= 30) {
      off();
      resolve();
    }
  });
});
await post('/sim/churn', { perSec: 0 });
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(
  `getSnapshot() after each diff (median of 30 diffs of ${median(keys)} keys): ` +
    `informer of ${pods.getSnapshot().length} pods ${median(whole).toFixed(2)} ms, ` +
    `scoped view of ${view.getSnapshot().length} ${median(scoped).toFixed(2)} ms`,
);
factory.shutdown();
process.exit(0);
