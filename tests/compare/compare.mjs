// kubewasm beside @kubernetes/client-node 1.3.0 (both on this Node), fed by
// kubewasm-sim: `cd tests/compare && npm install && node compare.mjs` (make bench).
import { spawn, execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const sim = spawn(join(root, 'target', 'release', 'kubewasm-sim'), ['--port', '0', '--pods', '10', '--history', '400000'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => {
  let buf = '';
  sim.stdout.on('data', (d) => { buf += d; const m = buf.match(/LISTENING (\S+)/); if (m) resolve(m[1]); });
});
const seed = (pods) => fetch(`${url}/sim/seed`, { method: 'POST', body: JSON.stringify({ namespaces: 20, pods, seed: 1, podBytes: 4000 }) });
const run = (which, mode) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', join(here, 'client.mjs'), which, mode, url], { encoding: 'utf8', maxBuffer: 1 << 20 }).trim().split('\n').pop());
try {
  console.log(`Node ${process.version}, @kubernetes/client-node 1.3.0, pods of ~4 KB`);
  await seed(10_000);
  for (const which of ['client-node', 'kubewasm', 'kubewasm-diff', 'fetch-floor']) {
    const r = run(which, 'flood');
    console.log(`${which}: 200,000 MODIFIED after 10,000 pods → ${r.eventsPerSec.toFixed(0)} events/s`);
  }
  await seed(50_000);
  for (const which of ['client-node', 'kubewasm']) {
    const r = run(which, 'sync');
    console.log(`${which}: sync 50,000 pods in ${r.syncMs.toFixed(0)} ms; JS heap ${r.heapMiB.toFixed(0)} MiB + wasm ${r.wasmMiB.toFixed(0)} MiB` + (which === 'kubewasm' ? `; JS heap ${r.readHeapMiB.toFixed(0)} MiB once every object was read for a table row` : ''));
  }
  // Queries from JS: 50 namespaces of 1,000 pods, so one namespace holds 1,000.
  await fetch(`${url}/sim/seed`, { method: 'POST', body: JSON.stringify({ namespaces: 50, pods: 50_000, seed: 1, podBytes: 4000 }) });
  const q = run('kubewasm', 'query');
  console.log(`kubewasm: lister.list({ namespace, labelSelector }) → ${q.hits} of ${q.inNamespace} in the namespace, ${q.total} cached: median ${q.listerUs.toFixed(1)} µs (first call ${q.firstUs.toFixed(0)} µs); unchanged getSnapshot() ${q.snapshotUs.toFixed(3)} µs`);
} finally {
  sim.kill();
}
