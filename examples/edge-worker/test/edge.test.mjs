// The edge example in workerd against kubewasm-sim: sync, answers equal to the
// sim's state, recovery after churn and a dropped watch, and the connection
// budget (never more than the cap of requests waiting for headers).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(here, '..', '..');
let sim, simUrl, workerd, edgeUrl;

const freePort = () => new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const get = async (base, path) => (await fetch(base + path)).json();
const post = async (path, body) => (await fetch(simUrl + path, { method: 'POST', body: JSON.stringify(body ?? {}) })).json();
async function until(cond, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    try { if (await cond()) return; } catch { /* not up yet */ }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const simPods = async (ns, pred = () => true) => {
  const items = (await get(simUrl, '/sim/state?resource=pods')).items;
  return Object.entries(items).filter(([k]) => !ns || k.startsWith(`${ns}/`)).filter(pred).map(([k, rv]) => `${k}@${rv}`).sort();
};
const edgePods = async (query) =>
  (await get(edgeUrl, `/pods${query}`)).items.map((p) => `${p.namespace}/${p.name}@${p.resourceVersion}`).sort();

before(async () => {
  sim = spawn(join(root, 'target', 'release', 'kubewasm-sim'), ['--port', '0', '--pods', '200', '--namespaces', '3', '--seed', '4'], { stdio: ['ignore', 'pipe', 'inherit'] });
  simUrl = await new Promise((resolve) => {
    let buf = '';
    sim.stdout.on('data', (d) => { buf += d; const m = buf.match(/LISTENING (\S+)/); if (m) resolve(m[1]); });
  });
  // Slow answers make concurrent requests overlap, so the budget is observable.
  await post('/sim/faults', { latencyMs: 150 });
  await post('/sim/stats/reset');
  const port = await freePort();
  edgeUrl = `http://127.0.0.1:${port}`;
  execFileSync('node', [join(here, 'gen-config.mjs'), String(port)], { cwd: here });
  workerd = spawn(join(here, 'node_modules', '.bin', 'workerd'), ['serve', join(here, 'config.capnp')], {
    cwd: here, stdio: 'inherit',
    env: { ...process.env, API_SERVER: simUrl, API_TOKEN: '', MAX_IN_FLIGHT: '6', EXTRA_INFORMERS: '9' },
  });
});

after(() => {
  workerd?.kill();
  sim?.kill();
});

test('ten informers sync with never more than six requests waiting for headers', async () => {
  await until(async () => {
    const s = await get(edgeUrl, '/status');
    return s.synced && s.pods.phase === 'watching';
  }, 30_000, '/status synced and watching');
  const status = await get(edgeUrl, '/status');
  assert.equal(status.informers, 10);
  assert.equal(status.pods.phase, 'watching');
  const stats = await get(simUrl, '/sim/stats');
  assert.ok(stats.maxInFlight >= 2, `requests did overlap (max ${stats.maxInFlight})`);
  assert.ok(stats.maxInFlight <= 6, `at most 6 waiting for headers, saw ${stats.maxInFlight}`);
  await post('/sim/faults/clear');
});

test('answers match the sim for a namespace and a label selector', async () => {
  assert.deepEqual(await edgePods('?namespace=default'), await simPods('default'));
  const web = (await get(edgeUrl, '/pods?labelSelector=app%3Dweb')).items;
  assert.ok(web.length > 0);
  const pod = await get(edgeUrl, `/pods/${web[0].namespace}/${web[0].name}`);
  assert.equal(pod.metadata.labels.app, 'web');
  assert.equal(pod.metadata.managedFields, undefined, 'managedFields stripped for the 128 MB limit');
  const bad = await fetch(`${edgeUrl}/pods?labelSelector=app%20in%20(`);
  assert.equal(bad.status, 400);
});

test('after churn and a dropped watch, answers catch up with the sim', async () => {
  await post('/sim/churn/steps', { steps: 40, seed: 9 });
  await post('/sim/drop-watches');
  await post('/sim/churn/steps', { steps: 20, seed: 10 });
  await until(async () => JSON.stringify(await edgePods('')) === JSON.stringify(await simPods('')), 20_000, 'catch-up');
  const status = await get(edgeUrl, '/status');
  assert.ok(status.pods.reconnects + status.pods.relists >= 1, `the dropped watch was re-opened: ${JSON.stringify(status.pods)}`);
});
