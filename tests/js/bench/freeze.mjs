// What freezing cached objects costs (the package freezes each object's top
// level and its `metadata`; deeper values are documented as read-only).
// Times the package's own object builder on 2,000 pods of ~3 KB from the sim,
// as shipped and with Object.freeze made a no-op, alternating, and what a deep
// freeze of every member would add.
// `scripts/with-sim.sh -- node tests/js/bench/freeze.mjs` after `make build`.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const pkgWeb = fileURLToPath(new URL('../../../pkg/web/snippets/', import.meta.url));
const snippet = readdirSync(pkgWeb).map((d) => `${pkgWeb}${d}/src/js/objects.js`)[0];
const { lazyObject, setMemberSource } = await import(pathToFileURL(snippet).href);

await fetch(`${server}/sim/seed`, { method: 'POST', body: JSON.stringify({ namespaces: 10, pods: 2000, seed: 5, podBytes: 3000 }) });
const list = await (await fetch(`${server}/api/v1/pods`, { headers: { authorization: `Bearer ${token}` } })).json();
// What the cache hands the builder: member names, and each member's JSON
// text on request (here from a table instead of wasm memory).
const members = [];
const inputs = list.items.map((p, n) => {
  delete p.metadata.managedFields;
  members[n + 1] = Object.values(p).map((v) => JSON.stringify(v));
  return { keys: Object.keys(p).join('\u0001'), id: n + 1 };
});
setMemberSource((id, i) => members[id][i]);
const deepFreeze = (v) => {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const k of Object.keys(v)) deepFreeze(v[k]);
    Object.freeze(v);
  }
  return v;
};
const realFreeze = Object.freeze;
const ROUNDS = 25;
const time = (freeze, work) => {
  Object.freeze = freeze;
  const t = performance.now();
  let n = 0;
  for (let r = 0; r < ROUNDS; r++) for (const { keys, id } of inputs) n += work(lazyObject(keys, id));
  Object.freeze = realFreeze;
  return ((performance.now() - t) * 1000) / (ROUNDS * inputs.length) + 0 * n;
};
const byName = (o) => o.metadata.name.length;
const everything = (o) => Object.keys(o).reduce((n, k) => n + (o[k] === undefined ? 0 : 1), 0);
const everythingDeep = (o) => Object.keys(o).reduce((n, k) => n + (deepFreeze(o[k]) === undefined ? 0 : 1), 0);
const rows = { name: [[], []], all: [[], []], deep: [] };
for (let i = 0; i < 5; i++) {
  rows.name[0].push(time(realFreeze, byName));
  rows.name[1].push(time((o) => o, byName));
  rows.all[0].push(time(realFreeze, everything));
  rows.all[1].push(time((o) => o, everything));
  rows.deep.push(time(realFreeze, everythingDeep));
}
const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1].toFixed(2);
const bytes = members.reduce((n, m) => n + m.reduce((a, t) => a + t.length, 0), 0) / inputs.length;
console.log(`${inputs.length} pods of ~${bytes.toFixed(0)} B, median of 5, µs per object:`);
console.log(`build + read metadata.name: frozen ${med(rows.name[0])}, not frozen ${med(rows.name[1])}`);
console.log(`build + read every member:  frozen ${med(rows.all[0])}, not frozen ${med(rows.all[1])}, deep-frozen ${med(rows.deep)}`);
