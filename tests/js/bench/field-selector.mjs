// What a lister's field selector costs per call on 20,000 pods of ~4 KB:
// `status.phase=Running` (read from each object's bytes), the same through
// a custom index, and `metadata.namespace=` (routed to the namespace index)
// against the `namespace` filter. PKG=dir times another build of the
// package (an A/B of a change); each figure is the median of 7 calls.
// `scripts/with-sim.sh -- node tests/js/bench/field-selector.mjs` after `make build`.
import { fileURLToPath, pathToFileURL } from 'node:url';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const pkg = process.env.PKG ?? fileURLToPath(new URL('../../../pkg/', import.meta.url));
const { KubeClient, InformerFactory } = await import(pathToFileURL(`${pkg}/node.js`).href);

await fetch(`${server}/sim/seed`, { method: 'POST', body: JSON.stringify({ namespaces: 50, pods: 20000, seed: 5, podBytes: 4000 }) });
const factory = new InformerFactory(new KubeClient({ server, token }));
const pods = factory.informer({
  version: 'v1',
  resource: 'pods',
  indexers: { phase: (o) => o.status?.phase ?? '' },
});
factory.start();
await pods.waitForSync();
const lister = pods.lister();
const median = (f) => {
  const times = [];
  let n = 0;
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    n = f().length;
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return `${times[3].toFixed(1)} ms (${n} pods)`;
};
console.log(`fieldSelector status.phase=Running: ${median(() => lister.list({ fieldSelector: 'status.phase=Running' }))}`);
console.log(`index phase=Running: ${median(() => lister.byIndex('phase', 'Running'))}`);
console.log(`fieldSelector metadata.namespace=team-17: ${median(() => lister.list({ fieldSelector: 'metadata.namespace=team-17' }))}`);
console.log(`namespace team-17: ${median(() => lister.list({ namespace: 'team-17' }))}`);
factory.shutdown();
