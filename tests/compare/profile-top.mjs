// Self time by function in a V8 CPU profile (`node --cpu-prof`, or the page
// profile flood-profile.mjs writes), heaviest first:
//   node tests/compare/profile-top.mjs FILE.cpuprofile [ROWS]
// With a profiling package (scripts/profiling-pkg.sh) wasm functions appear
// by their Rust names.
import { readFileSync } from 'node:fs';

const [file, rows = '30'] = process.argv.slice(2);
if (!file) throw new Error('usage: node profile-top.mjs FILE.cpuprofile [ROWS]');
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  const f = nodes.get(id).callFrame;
  const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}`.trim();
  self.set(name, (self.get(name) ?? 0) + us);
  total += us;
});
console.log(`${(total / 1000).toFixed(0)} ms sampled`);
for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
  console.log(`${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`);
}
