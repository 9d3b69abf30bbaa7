// The edge example in workerd against kubewasm-sim: sync, answers equal to the
// sim's state, recovery after churn and a dropped watch, the connection
// budget (never more than the cap of requests waiting for headers), and the
// worker's guard: a shared secret, reads only, bounded queries, no internals
// in what it returns.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(here, '..', '..');
let sim, simUrl, workerd, edgeUrl;

const freePort = () => new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const secret = randomBytes(32).toString('hex');
const auth = { authorization: `Bearer ${secret}` };
const get = async (base, path) => (await fetch(base + path, base === edgeUrl ? { headers: auth } : {})).json();
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
  // The secret as `echo` stores it, newline and all: the worker trims it as
  // it trims the credential, so every request below authenticates.
  workerd = spawn(join(here, 'node_modules', '.bin', 'workerd'), ['serve', join(here, 'config.capnp')], {
    cwd: here, stdio: 'inherit',
    env: { ...process.env, API_SERVER: simUrl, API_TOKEN: '', EDGE_SECRET: `${secret}\n`, MAX_IN_FLIGHT: '6', EXTRA_INFORMERS: '9' },
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
  const bad = await fetch(`${edgeUrl}/pods?labelSelector=app%20in%20(`, { headers: auth });
  assert.equal(bad.status, 400);
  // Segments are percent-decoded, as any client may encode a name's characters.
  const encoded = [...web[0].name].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  assert.equal((await get(edgeUrl, `/pods/${web[0].namespace}/${encoded}`)).metadata.uid, pod.metadata.uid);
  const malformed = await fetch(`${edgeUrl}/pods/${web[0].namespace}/%E0%A4%A`, { headers: auth });
  assert.equal(malformed.status, 400);
  const head = await fetch(`${edgeUrl}/pods/${web[0].namespace}/${web[0].name}`, { method: 'HEAD', headers: auth });
  assert.equal(head.status, 200);
  assert.equal((await head.arrayBuffer()).byteLength, 0);
});

test('after churn and a dropped watch, answers catch up with the sim', async () => {
  // Synced is not watching yet: the ten informers' watches queue behind the
  // in-flight cap, and a drop before a watch opened would drop nothing.
  await until(async () => (await get(simUrl, '/sim/stats')).openWatches >= 10, 20_000, 'every watch open');
  await post('/sim/churn/steps', { steps: 40, seed: 9 });
  await post('/sim/drop-watches');
  await post('/sim/churn/steps', { steps: 20, seed: 10 });
  await until(async () => JSON.stringify(await edgePods('')) === JSON.stringify(await simPods('')), 20_000, 'catch-up');
  const status = await get(edgeUrl, '/status');
  assert.ok(status.pods.reconnects + status.pods.relists >= 1, `the dropped watch was re-opened: ${JSON.stringify(status.pods)}`);
});

test('answers from a cache that cannot reach the API server say so: x-cache-phase', async () => {
  await until(async () => (await get(simUrl, '/sim/stats')).openWatches >= 10, 20_000, 'every watch open');
  const phase = async () => (await fetch(`${edgeUrl}/pods`, { headers: auth })).headers.get('x-cache-phase');
  assert.equal(await phase(), 'watching');
  // Every API request fails from here: the watch is dropped and cannot come back.
  await post('/sim/faults', { latencyMs: 150, status500: 1000000 });
  await post('/sim/drop-watches');
  try {
    await until(async () => (await phase()) !== 'watching', 20_000, 'the phase leaving watching');
    const r = await fetch(`${edgeUrl}/pods/default/nope`, { headers: auth });
    assert.equal(r.status, 404);
    assert.notEqual(r.headers.get('x-cache-phase'), 'watching');
    assert.equal((await fetch(`${edgeUrl}/pods`, { headers: auth })).status, 200, 'still answered from the cache');
  } finally {
    await post('/sim/faults', { latencyMs: 150 });
  }
  await until(async () => (await phase()) === 'watching', 40_000, 'watching again');
});

test('every request needs the shared secret: missing or wrong is 401 and reveals nothing', async () => {
  const stats = await get(simUrl, '/sim/stats');
  const sent = [
    {},
    { authorization: `Bearer ${secret.slice(0, -1)}x` },
    { authorization: `Bearer ${secret}x` },
    { authorization: `Bearer ${secret.slice(0, 10)}` },
    { authorization: secret },
    { authorization: `Basic ${Buffer.from(`u:${secret}`).toString('base64')}` },
  ];
  for (const headers of sent) {
    for (const [method, path] of [['GET', '/pods'], ['GET', '/status'], ['DELETE', '/pods/default/x'], ['GET', '/nothing']]) {
      const r = await fetch(edgeUrl + path, { method, headers });
      assert.equal(r.status, 401, `${method} ${path} with ${JSON.stringify(headers)}`);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer /);
      assert.deepEqual(await r.json(), { error: 'unauthorized' });
    }
  }
  assert.equal((await get(simUrl, '/sim/stats')).objects.pods, stats.objects.pods);
});

test('only GET and HEAD: any other method is 405 with Allow, and changes nothing', async () => {
  const [key] = await simPods('default');
  const [ns, name] = key.split('@')[0].split('/');
  for (const method of ['DELETE', 'POST', 'PUT', 'PATCH', 'OPTIONS']) {
    const r = await fetch(`${edgeUrl}/pods/${ns}/${name}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body: ['DELETE', 'OPTIONS'].includes(method) ? undefined : '{}' });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get('allow'), 'GET, HEAD');
    assert.ok(!(await r.text()).includes(name), `${method}: no pod in the answer`);
  }
  assert.ok((await simPods('default')).includes(key), 'the pod is still there');
});

test('an over-long query or path is 400', async () => {
  const long = `app in (${Array.from({ length: 200 }, (_, i) => `v${i}`).join(',')})`;
  assert.ok(encodeURIComponent(long).length > 1024);
  const q = await fetch(`${edgeUrl}/pods?labelSelector=${encodeURIComponent(long)}`, { headers: auth });
  assert.equal(q.status, 400);
  assert.match((await q.json()).error, /query/);
  const p = await fetch(`${edgeUrl}/pods/default/${'a'.repeat(1000)}`, { headers: auth });
  assert.equal(p.status, 400);
  // Just under the cap is still served.
  const values = [];
  while (encodeURIComponent(`app in (${[...values, 'w'].join(',')})`).length < 1000) values.push(`w${values.length}`);
  const under = `?labelSelector=${encodeURIComponent(`app in (${values.join(',')})`)}`;
  assert.ok(under.length > 900 && under.length <= 1024, `${under.length}`);
  const ok = await fetch(`${edgeUrl}/pods${under}`, { headers: auth });
  assert.equal(ok.status, 200);
});

const watching = async () => {
  const s = await get(edgeUrl, '/status');
  return s.synced && s.pods.phase === 'watching';
};

test('errors reach callers as a reason and a code, never a message, a stack or an address', async () => {
  await until(watching, 30_000, 'synced and watching');
  // Break the watch and fail what follows, so the informer records an error.
  await post('/sim/faults', { status500: { count: 40 } });
  await post('/sim/compact');
  await post('/sim/drop-watches');
  let text = '';
  await until(async () => {
    text = await (await fetch(`${edgeUrl}/status`, { headers: auth })).text();
    return JSON.parse(text).pods.lastError !== undefined;
  }, 20_000, 'an error in the status');
  const { lastError } = JSON.parse(text).pods;
  assert.deepEqual(Object.keys(lastError).sort(), ['code', 'reason']);
  assert.match(lastError.reason, /^[A-Za-z]+$/);
  for (const leak of [new URL(simUrl).host, 'injected', 'kubewasm-sim', '/api/v1', 'message', ' at ', '.js', '.rs', 'file:']) {
    assert.ok(!text.includes(leak), `${leak} in ${text}`);
  }
  await post('/sim/faults/clear');
  await until(watching, 30_000, 'watching again');
});

test('a worker with a bad API_SERVER answers 503 "not configured", and says nothing of the setting', async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // Rewrites config.capnp for the second port; the first workerd read its copy at start.
  execFileSync('node', [join(here, 'gen-config.mjs'), String(port)], { cwd: here });
  const bad = spawn(join(here, 'node_modules', '.bin', 'workerd'), ['serve', join(here, 'config.capnp')], {
    cwd: here, stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, API_SERVER: 'ftp://api.example.invalid', API_TOKEN: '', EDGE_SECRET: secret },
  });
  let log = '';
  bad.stderr.on('data', (d) => { log += d; });
  try {
    let res;
    await until(async () => { res = await fetch(`${url}/status`, { headers: auth }); return true; }, 20_000, 'the second worker');
    for (const path of ['/status', '/pods', '/pods/default/x']) {
      const r = path === '/status' ? res : await fetch(url + path, { headers: auth });
      assert.equal(r.status, 503, path);
      const text = await r.text();
      assert.match(text, /not configured/);
      assert.ok(!text.includes('ftp') && !text.includes('example.invalid'), text);
    }
    await until(() => /cannot start the cache/.test(log), 5_000, 'the reason in the log');
  } finally {
    bad.kill();
  }
});
