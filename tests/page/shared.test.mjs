// `kubewasm/shared` in headless Chromium against the sim: tabs of one origin
// share one set of watches through a SharedWorker, each tab's cache equals the
// server's, a closed tab lets go of its share, a paused tab resumes exactly
// where it stopped, identities never share a worker, and without SharedWorker
// the same code runs in the page.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect as tcpConnect } from 'node:net';
import { launch, startSim, until } from './harness.mjs';

let sim, browser;
const BLANK = () => `${sim.url}/version`;
const openWatches = async (s = sim) => (await s.call('/sim/stats')).openWatches;

// Ten informers over nine kinds; all cluster-wide but one, whose namespace exists.
const SCOPES = [
  { version: 'v1', resource: 'pods' }, { version: 'v1', resource: 'services' }, { version: 'v1', resource: 'configmaps' },
  { version: 'v1', resource: 'secrets' }, { version: 'v1', resource: 'namespaces' }, { version: 'v1', resource: 'nodes' },
  { version: 'v1', resource: 'serviceaccounts' }, { group: 'apps', version: 'v1', resource: 'deployments' },
  { group: 'apps', version: 'v1', resource: 'replicasets' }, { version: 'v1', resource: 'pods', labelSelector: 'tier=backend' },
];

/**
 * In a tab: connect through `kubewasm/shared` (`providedToken`: through a
 * tokenProvider), open informers for `scopes`, wait until they synced.
 */
const connect = async ({ scopes, client = {}, factory = {}, identity, host, providedToken, workerUrl }) => {
  const s = await import('/plain/pkg/shared.js');
  const tokenProvider = providedToken === undefined ? undefined : async () => providedToken;
  const conn = await s.connectShared({ client: { server: location.origin, tokenProvider, ...client }, factory, identity, host, workerUrl });
  const infs = scopes.map((sc) => conn.factory.informer(sc));
  conn.factory.start();
  window.__kw = { conn, infs };
  await Promise.race([
    Promise.all(infs.map((i) => i.waitForSync())),
    new Promise((r) => setTimeout(r, 20_000)),
  ]);
  return { host: conn.host, statuses: infs.map((i) => i.status) };
};

/** In a tab: informer `i`'s cache as key → resourceVersion. */
const cacheOf = (i) => Object.fromEntries(window.__kw.infs[i].lister().list({}).map((o) => [o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name, o.metadata.resourceVersion]));

const simState = async (resource, s = sim) => (await s.call(`/sim/state?resource=${resource}`)).items;
const sorted = (o) => JSON.stringify(Object.entries(o).sort());

/** Wait until every tab's pods informer (scope 0) equals the sim's pods. */
async function converged(pages, what) {
  await until(async () => {
    const want = sorted(await simState('pods'));
    for (const p of pages) if (sorted(await p.evaluate(cacheOf, 0)) !== want) return false;
    return true;
  }, 30_000, what);
}

/**
 * A TCP proxy in front of the sim whose open connections can be made to go
 * silent (nothing forwarded, nothing closed: a connection that died without
 * a word) and then cut.
 */
async function silentProxy(target) {
  const conns = new Set();
  const server = createServer((c) => {
    const u = tcpConnect(Number(new URL(target).port), '127.0.0.1');
    const k = { c, u, silent: false };
    conns.add(k);
    c.on('data', (d) => k.silent || u.write(d));
    u.on('data', (d) => k.silent || c.write(d));
    const end = () => {
      conns.delete(k);
      c.destroy();
      u.destroy();
    };
    c.on('close', end);
    u.on('close', () => k.silent || end());
    c.on('error', () => {});
    u.on('error', () => {});
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    silence: () => {
      for (const k of conns) k.silent = true;
    },
    cut: () => {
      for (const k of conns) if (k.silent) k.c.destroy();
    },
    stop: () => {
      for (const k of conns) k.c.destroy();
      server.close();
    },
  };
}

/** A page init script: counts the watch chunks the worker sends this tab that carry no change (keep-alives, bookmarks). */
function countIdleChunks() {
  window.__idleChunks = 0;
  const d = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage');
  Object.defineProperty(MessagePort.prototype, 'onmessage', {
    configurable: true,
    get() {
      return d.get.call(this);
    },
    set(fn) {
      d.set.call(this, fn && ((e) => {
        if (e.data?.t === 'chunk' && !/"type":"(ADDED|MODIFIED|DELETED|ERROR)"/.test(new TextDecoder().decode(e.data.data))) window.__idleChunks += 1;
        fn(e);
      }));
    },
  });
}

async function tab(opts) {
  const page = await browser.context.newPage();
  await page.goto(BLANK());
  const r = await page.evaluate(connect, opts);
  return { page, ...r };
}

before(async () => {
  sim = await startSim(['--namespaces', '3', '--pods', '60', '--seed', '5']);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  sim?.stop();
});

test('two tabs with the same ten informers open one set of watches; closing one keeps the other live; closing both releases them', async () => {
  const a = await tab({ scopes: SCOPES, factory: { releaseGraceMs: 1000 } });
  assert.deepEqual(a.host, { kind: 'shared-worker', reason: 'available' });
  assert.ok(a.statuses.every((s) => s.synced), JSON.stringify(a.statuses));
  assert.deepEqual(a.statuses[0].host, a.host, 'the status says where the watches live');
  await until(async () => (await openWatches()) === SCOPES.length, 10_000, 'one watch per scope');
  const b = await tab({ scopes: SCOPES, factory: { releaseGraceMs: 1000 } });
  assert.ok(b.statuses.every((s) => s.synced), JSON.stringify(b.statuses));
  // The second tab's informers are live (watching the worker) and added no watch upstream.
  await until(async () => (await b.page.evaluate(() => window.__kw.infs.every((i) => i.status.phase === 'watching'))), 10_000, 'tab b watching');
  assert.equal(await openWatches(), SCOPES.length);
  assert.deepEqual(await b.page.evaluate(() => [...new Set(window.__kw.infs.map((i) => i.status.transport))]), ['worker'], 'the worker carries the watches');

  // Every scope of both tabs equals the server, before and after churn.
  for (const [i, sc] of SCOPES.entries()) {
    if (sc.labelSelector) continue;
    const want = sorted(await simState(sc.resource));
    for (const t of [a, b]) assert.equal(sorted(await t.page.evaluate(cacheOf, i)), want, `${sc.resource} in a tab`);
  }
  await sim.call('/sim/churn/steps', { steps: 60, seed: 11 });
  await converged([a.page, b.page], 'both tabs equal the sim after churn');
  const backend = await b.page.evaluate(() => window.__kw.infs[9].lister().list({}).map((p) => p.metadata.labels.tier));
  assert.ok(backend.length > 0 && backend.every((t) => t === 'backend'), `selector scope: ${backend}`);

  await a.page.close();
  await sim.call('/sim/churn/steps', { steps: 40, seed: 12 });
  await converged([b.page], 'the remaining tab stays live');
  assert.equal(await openWatches(), SCOPES.length);

  await b.page.close();
  await until(async () => (await openWatches()) === 0, 20_000, 'every watch released once both tabs closed');
});

test('a tab that goes without a word (no pagehide message) still gives its share back', async () => {
  const page = await browser.context.newPage();
  await page.goto(BLANK());
  // Registered before the package's own listener: the worker never hears "bye",
  // and learns of the closed tab from the Web Lock the tab held.
  await page.evaluate(() => window.addEventListener('pagehide', (e) => e.stopImmediatePropagation()));
  const a = await page.evaluate(connect, { scopes: [SCOPES[0], SCOPES[1]] });
  assert.equal(a.host.kind, 'shared-worker');
  const b = await tab({ scopes: [SCOPES[0]] });
  await until(async () => (await openWatches()) === 2, 10_000, 'pods and services watched once');
  await page.close();
  await until(async () => (await openWatches()) === 1, 15_000, 'the closed tab\'s services released');
  await sim.call('/sim/churn/steps', { steps: 10, seed: 19 });
  await converged([b.page], 'the remaining tab stays live');
  await b.page.close();
});

test('a paused tab resumes from where it stopped, without listing again', async () => {
  const a = await tab({ scopes: SCOPES.slice(0, 1), factory: { releaseGraceMs: 30_000, hiddenPauseMs: 100 } });
  // A second tab keeps the worker's informer busy while the first one is paused.
  const b = await tab({ scopes: SCOPES.slice(0, 1), factory: { releaseGraceMs: 30_000 } });
  await converged([a.page, b.page], 'both synced');
  await a.page.evaluate(() => window.__kw.conn.factory.setVisible(false));
  await until(() => a.page.evaluate(() => window.__kw.infs[0].status.phase === 'paused'), 10_000, 'tab a paused');
  await sim.call('/sim/churn/steps', { steps: 30, seed: 13 });
  await converged([b.page], 'tab b follows while a is paused');
  const before = await a.page.evaluate(() => window.__kw.infs[0].status);
  await a.page.evaluate(() => window.__kw.conn.factory.setVisible(true));
  await converged([a.page], 'tab a catches up');
  const now = await a.page.evaluate(() => window.__kw.infs[0].status);
  // It resumed its watch from the worker's point: no second list.
  assert.equal(now.relists, before.relists, JSON.stringify(now));
  assert.equal(now.listed, before.listed, JSON.stringify(now));
  await a.page.close();
  await b.page.close();
});

test('the worker relists after a compaction and the tabs converge', async () => {
  const a = await tab({ scopes: SCOPES.slice(0, 1) });
  await converged([a.page], 'synced');
  await sim.call('/sim/churn/steps', { steps: 20, seed: 14 });
  await sim.call('/sim/compact', {});
  await sim.call('/sim/drop-watches', {});
  await sim.call('/sim/churn/steps', { steps: 20, seed: 15 });
  await converged([a.page], 'the tab equals the sim after the worker relisted');
  await a.page.close();
});

test('a tab that opens while the worker backs off is told the upstream error once, then waits and syncs', async () => {
  const a = await tab({ scopes: SCOPES.slice(0, 1) });
  await converged([a.page], 'synced');
  const left = async () => (await sim.call('/sim/faults')).status500.count;
  await sim.call('/sim/faults', { status500: { count: 1_000_000 } });
  const b = await browser.context.newPage();
  try {
    await sim.call('/sim/drop-watches', {});
    // The worker's watch fails and it backs off; A is told through its watch.
    await until(async () => (await a.page.evaluate(() => window.__kw.infs[0].status)).phase === 'backoff', 20_000, 'A backs off');
    await until(async () => (await left()) < 1_000_000, 20_000, 'the worker meets the failing server');
    // B's informer starts on the synced scope, which is not live.
    await b.goto(BLANK());
    await b.evaluate(async (sc) => {
      const s = await import('/plain/pkg/shared.js');
      const conn = await s.connectShared({ client: { server: location.origin } });
      const inf = conn.factory.informer(sc);
      conn.factory.start();
      window.__kw = { conn, infs: [inf] };
    }, SCOPES[0]);
    const status = () => b.evaluate(() => window.__kw.infs[0].status);
    await until(async () => (await status()).lastError !== undefined, 20_000, 'B\'s status shows the upstream error');
    const told = await status();
    assert.match(told.lastError.message, /upstream/);
    assert.equal(told.synced, false);
    // Told once: B's next list waits for the worker instead of failing again.
    await until(async () => (await status()).phase === 'listing', 20_000, 'B lists again, waiting for the worker');
    const before = await left();
    await until(async () => (await left()) <= before - 2, 30_000, 'the worker fails twice more');
    const waiting = await status();
    assert.equal(waiting.phase, 'listing');
    assert.equal(waiting.lastError.at, told.lastError.at, 'no second error while B waits');
  } finally {
    await sim.call('/sim/faults/clear', {});
  }
  await sim.call('/sim/churn/steps', { steps: 10, seed: 16 });
  await converged([a.page, b], 'both tabs equal the sim once the worker watches again');
  await a.page.close();
  await b.close();
});

test('a relist after a 410 that then fails upstream reaches the tabs as its error', async () => {
  const a = await tab({ scopes: SCOPES.slice(0, 1) });
  await converged([a.page], 'synced');
  const status = () => a.page.evaluate(() => window.__kw.infs[0].status);
  try {
    // The worker's watch ends with a 410 (its window compacted away); the relist that follows fails.
    await sim.call('/sim/compact', {});
    await sim.call('/sim/faults', { status500: { count: 1_000_000 } });
    await sim.call('/sim/drop-watches', { expire: true });
    await until(async () => (await status()).lastError?.code === 500, 20_000, 'the tab\'s status shows the failing relist');
  } finally {
    await sim.call('/sim/faults/clear', {});
  }
  await sim.call('/sim/churn/steps', { steps: 5, seed: 18 });
  await converged([a.page], 'the tab equals the sim once the worker relisted');
  await a.page.close();
});

test('tabs outlive their shared worker: when it dies they start another and converge', async () => {
  const a = await tab({ scopes: SCOPES.slice(0, 1) });
  const b = await tab({ scopes: SCOPES.slice(0, 1) });
  await converged([a.page, b.page], 'synced');
  const cdp = await browser.context.newCDPSession(a.page);
  const workers = async () => (await cdp.send('Target.getTargets')).targetInfos.filter((t) => t.type === 'shared_worker');
  const [worker] = await workers();
  assert.ok(worker, 'a shared worker runs');
  await cdp.send('Target.closeTarget', { targetId: worker.targetId });
  await until(async () => (await openWatches()) === 0, 10_000, 'the dead worker\'s watches closed');
  await sim.call('/sim/churn/steps', { steps: 30, seed: 16 });
  await converged([a.page, b.page], 'both tabs equal the sim through a new worker');
  const now = await workers();
  assert.equal(now.length, 1, 'one new worker for both tabs');
  assert.notEqual(now[0].targetId, worker.targetId);
  assert.equal(await openWatches(), 1, 'one upstream watch again');
  await cdp.detach();
  await a.page.close();
  await b.page.close();
});

test('objects larger than a chunk, with text outside the BMP, reach the tabs intact', async () => {
  const a = await tab({ scopes: [{ version: 'v1', resource: 'configmaps', namespace: 'default' }] });
  const text = '🚀 déjà vu — ✓ '.repeat(6000);
  // Names of 15 lengths: whatever offset a cut falls at, one of them puts a surrogate pair across it.
  const names = Array.from({ length: 15 }, (_, i) => `big-${'x'.repeat(i)}`);
  for (const name of names) {
    const r = await fetch(`${sim.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { text: `${name}:${text}` } }),
    });
    assert.ok(r.ok, `create ${name}: ${r.status}`);
  }
  const got = await until(() => a.page.evaluate((ns) => {
    const l = window.__kw.infs[0].lister();
    const objs = ns.map((n) => l.get(n, 'default'));
    return objs.every(Boolean) && objs.map((o) => o.data.text);
  }, names), 20_000, 'the configmaps in the tab');
  assert.deepEqual(got, names.map((n) => `${n}:${text}`));
  await a.page.close();
});

test('identities never share a worker; a token reaches the worker from the tab', async () => {
  const a = await tab({ scopes: SCOPES.slice(0, 1), client: { token: 'alice-token' } });
  const b = await tab({ scopes: SCOPES.slice(0, 1), client: { token: 'bob-token' } });
  const a2 = await tab({ scopes: SCOPES.slice(0, 1), client: { token: 'alice-token' } });
  for (const t of [a, b, a2]) assert.equal(t.host.kind, 'shared-worker');
  // Alice's two tabs share one watch; Bob has his own.
  await until(async () => (await openWatches()) === 2, 10_000, 'one watch per identity');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await openWatches(), 2);
  for (const t of [a, b, a2]) await t.page.close();

  // A server that checks the token: the worker asks a tab for it before each request.
  const guarded = await startSim(['--namespaces', '1', '--pods', '5', '--token', 'sesame']);
  try {
    const page = await browser.context.newPage();
    await page.goto(`${guarded.url}/version`);
    const ok = await page.evaluate(connect, { scopes: SCOPES.slice(0, 1), providedToken: 'sesame', identity: 'alice' });
    assert.equal(ok.host.kind, 'shared-worker');
    assert.ok(ok.statuses[0].synced, JSON.stringify(ok.statuses[0]));
    assert.equal(await page.evaluate(() => window.__kw.infs[0].getSnapshot().length), 5);
    // Without `identity`, a tokenProvider cannot name the worker: the page does the work itself.
    const noId = await page.evaluate(async () => {
      const s = await import('/plain/pkg/shared.js');
      const c = await s.connectShared({ client: { server: location.origin, tokenProvider: () => 'sesame' } });
      c.close();
      return c.host;
    });
    assert.equal(noId.kind, 'page');
    assert.match(noId.reason, /identity/);
    // A 404 to the worker's list (`deployments` with its group left off):
    // the tab's error names the request once, as the worker's did.
    await page.evaluate(() => {
      const inf = window.__kw.conn.factory.informer({ version: 'v1', resource: 'deployments' });
      window.__kw.infs.push(inf);
      inf.start();
    });
    const missing = await until(() => page.evaluate(() => window.__kw.infs[1].status.lastError), 20_000, 'the 404 in the status');
    assert.equal(missing.code, 404, JSON.stringify(missing));
    assert.match(missing.message, /^API error: NotFound \(404\): upstream: .*\(list deployments: GET \/api\/v1\/deployments\)$/, missing.message);
    assert.equal(missing.message.split('GET /').length, 2, missing.message);
    // A wrong token: the server's 401 reaches the tab's informer status.
    const page2 = await browser.context.newPage();
    await page2.goto(`${guarded.url}/version`);
    await page2.evaluate(async () => {
      const s = await import('/plain/pkg/shared.js');
      const conn = await s.connectShared({ client: { server: location.origin, token: 'wrong' } });
      const pods = conn.factory.informer({ version: 'v1', resource: 'pods' });
      conn.factory.start();
      window.__kw = { conn, infs: [pods] };
    });
    const err = await until(() => page2.evaluate(() => window.__kw.infs[0].status.lastError), 20_000, 'the 401 in the status');
    assert.equal(err.code, 401, JSON.stringify(err));
    // The tab's own code and reason, then the server's message, each once.
    assert.match(err.message, /^API error: Unauthorized \(401\): upstream: /, err.message);
    assert.equal(err.message.split('API error').length, 2, err.message);
    // A server the worker cannot reach at all: in the tabs as in a page, a
    // network error that the informer backs off from and tells its listeners.
    const page3 = await browser.context.newPage();
    await page3.goto(`${guarded.url}/version`);
    await page3.evaluate(async () => {
      const s = await import('/plain/pkg/shared.js');
      const conn = await s.connectShared({ client: { server: 'http://127.0.0.1:9', token: 'x' } });
      const pods = conn.factory.informer({ version: 'v1', resource: 'pods' });
      window.__errors = [];
      pods.on('error', (e) => window.__errors.push({ code: e.code, reason: e.reason }));
      conn.factory.start();
      window.__kw = { conn, infs: [pods] };
    });
    const down = await until(() => page3.evaluate(() => window.__kw.infs[0].status.lastError), 20_000, 'the failure in the status');
    assert.deepEqual([down.code, down.reason], [0, 'Network'], JSON.stringify(down));
    assert.match(down.message, /upstream: /, down.message);
    await until(async () => (await page3.evaluate(() => window.__kw.infs[0].status.phase)) === 'backoff', 20_000, 'the tab backs off');
    const told = await until(() => page3.evaluate(() => window.__errors[0]), 20_000, 'an error event');
    assert.deepEqual([told.code, told.reason], [0, 'Network']);
    await page.close();
    await page2.close();
    await page3.close();
  } finally {
    guarded.stop();
  }
});

test("an informer made from a closed connection's factory shows why it cannot list at once, not after the request timeout", async () => {
  const a = await tab({ scopes: [SCOPES[0]] });
  try {
    const r = await a.page.evaluate(async () => {
      window.__kw.conn.close();
      // What a component mounting again on the connection's factory does.
      const inf = window.__kw.conn.factory.informer({ version: 'v1', resource: 'services' });
      inf.start();
      const t0 = performance.now();
      while (!inf.status.lastError && performance.now() - t0 < 10_000) await new Promise((res) => setTimeout(res, 50));
      return { err: inf.status.lastError, synced: inf.status.synced };
    });
    assert.ok(r.err, 'an error is shown within 10 s');
    assert.equal(r.err.reason, 'Invalid');
    assert.match(r.err.message, /connection was closed/);
    assert.equal(r.synced, false);
  } finally {
    await a.page.close();
  }
});

test('without SharedWorker the same code runs in the page and says so; a dedicated Worker on request', async () => {
  const page = await browser.context.newPage();
  await page.addInitScript(() => {
    delete window.SharedWorker;
  });
  await page.goto(BLANK());
  const r = await page.evaluate(connect, { scopes: SCOPES.slice(0, 1) });
  assert.deepEqual(r.host, { kind: 'page', reason: 'this browser has no SharedWorker' });
  assert.deepEqual(r.statuses[0].host, r.host);
  assert.ok(r.statuses[0].synced);
  await sim.call('/sim/churn/steps', { steps: 10, seed: 16 });
  await converged([page], 'the page informer equals the sim');
  await page.close();

  // Asked for, a dedicated Worker of the page holds the watches instead.
  const w = await tab({ scopes: SCOPES.slice(0, 1), host: 'worker' });
  assert.deepEqual(w.host, { kind: 'worker', reason: 'configured' });
  await sim.call('/sim/churn/steps', { steps: 10, seed: 18 });
  await converged([w.page], 'the informer behind a dedicated worker equals the sim');
  await w.page.close();
});

test('the dashboard holds its watches in the SharedWorker: a second tab opens none', async () => {
  const open = async () => {
    const page = await browser.context.newPage();
    await page.goto(`${sim.url}/#pods`);
    await until(() => page.evaluate(() => window.kubewasmDashboard?.ready && window.kubewasmDashboard.status('pods')?.synced), 20_000, 'the dashboard is up');
    return page;
  };
  const first = await open();
  assert.equal(await first.getAttribute('#memory', 'data-host'), 'shared-worker');
  assert.equal((await first.evaluate(() => window.kubewasmDashboard.status('pods'))).host.kind, 'shared-worker');
  const labels = async (p) => (await p.evaluate(() => window.kubewasmDashboard.openLabels())).sort();
  const watches = await until(async () => {
    const n = await openWatches();
    return n === (await labels(first)).length && n;
  }, 10_000, 'one watch per open kind');
  const second = await open();
  assert.deepEqual(await labels(second), await labels(first));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await openWatches(), watches, 'the second tab shares the first one\'s watches');
  await sim.call('/sim/churn/steps', { steps: 20, seed: 17 });
  const want = sorted(await simState('pods'));
  for (const p of [first, second]) {
    await until(async () => sorted(await p.evaluate(() => window.kubewasmDashboard.state('pods'))) === want, 20_000, 'a dashboard tab equals the sim');
  }
  await first.close();
  await second.close();
});

test('a server that goes away under the worker: tabs back off with Network errors and tell their listeners, then converge on its return', async () => {
  const args = ['--namespaces', '3', '--pods', '60', '--seed', '5'];
  const port = Number(new URL(sim.url).port);
  const a = await tab({ scopes: SCOPES.slice(0, 1) });
  await converged([a.page], 'synced');
  await a.page.evaluate(() => {
    window.__errors = [];
    window.__kw.infs[0].on('error', (e) => window.__errors.push(e.reason));
  });
  await sim.stop();
  const status = () => a.page.evaluate(() => window.__kw.infs[0].status);
  // As a page meets an unreachable server: backoff, `Network`, an error event.
  await until(async () => {
    const s = await status();
    return s.phase === 'backoff' && s.lastError?.reason === 'Network' && s.lastError.code === 0;
  }, 20_000, 'the tab backs off with a Network error');
  await until(() => a.page.evaluate(() => window.__errors.includes('Network')), 20_000, 'an error event');
  sim = await startSim(args, { port });
  await sim.call('/sim/churn/steps', { steps: 5, seed: 21 });
  await converged([a.page], 'the tab equals the returned server');
  assert.equal((await status()).phase, 'watching');
  await a.page.close();
});

test('a tab that an upstream failure sent into a long backoff carries on as soon as the worker recovers, not when its timer ends', async () => {
  const slow = { version: 'v1', resource: 'pods', backoff: { initialMs: 60_000, capMs: 600_000 } };
  const a = await tab({ scopes: [slow] });
  await converged([a.page], 'synced');
  const status = () => a.page.evaluate(() => window.__kw.infs[0].status);
  const left = async () => (await sim.call('/sim/faults')).status500.count;
  let next;
  try {
    await sim.call('/sim/faults', { status500: { count: 3 } });
    await sim.call('/sim/drop-watches', {});
    const s = await until(async () => {
      const st = await status();
      return st.phase === 'backoff' && st.nextRetryAt && st;
    }, 30_000, 'the tab backing off');
    next = s.nextRetryAt;
    assert.ok(next - Date.now() > 40_000, `the tab waits ${next - Date.now()} ms`);
    await until(async () => (await left()) === 0, 60_000, 'the worker met every 500');
  } finally {
    await sim.call('/sim/faults/clear', {});
  }
  await sim.call('/sim/churn/steps', { steps: 5, seed: 29 });
  await converged([a.page], 'the tab equals the sim once the worker watches again');
  assert.ok(Date.now() < next - 20_000, `converged ${Math.round((next - Date.now()) / 1000)} s before the tab's own retry`);
  assert.equal((await status()).phase, 'watching');
  await a.page.close();
});

test("a watch of the worker's that goes silent does not read as fresh data in the tab; when it breaks, the tab reconnects and shows why", async () => {
  const proxy = await silentProxy(sim.url);
  const page = await browser.context.newPage();
  try {
    await page.addInitScript(countIdleChunks);
    await page.goto(BLANK());
    // Keep-alives every 100 ms (a script URL of its own: a worker of its own).
    const r = await page.evaluate(connect, { scopes: [SCOPES[2]], client: { server: proxy.url }, workerUrl: '/plain/pkg/shared-worker.js?keepAliveMs=100' });
    assert.equal(r.host.kind, 'shared-worker');
    assert.ok(r.statuses[0].synced, JSON.stringify(r.statuses[0]));
    await page.evaluate(() => {
      window.__errors = [];
      window.__kw.infs[0].on('error', (e) => window.__errors.push({ reason: e.reason, message: e.message }));
    });
    const status = () => page.evaluate(() => window.__kw.infs[0].status);
    // The server's bookmarks reach the tab while the worker hears them.
    const first = (await status()).eventsApplied;
    await until(async () => (await status()).eventsApplied > first, 10_000, 'a relayed bookmark');
    // The worker's watch goes silent: the tab keeps hearing from the worker, but no event.
    proxy.silence();
    const quiet = await status();
    const chunks = await page.evaluate(() => window.__idleChunks);
    await until(() => page.evaluate((n) => window.__idleChunks >= n + 5, chunks), 10_000, 'keep-alives from the worker');
    const later = await status();
    assert.equal(later.phase, 'watching', JSON.stringify(later));
    assert.equal(later.eventsApplied, quiet.eventsApplied, 'a keep-alive is not an event');
    assert.equal(later.lastEventAt, quiet.lastEventAt, 'the data is as old as the worker\'s');
    // The connection breaks; the worker watches again, and the tab's watch
    // breaks with its error: it reconnects and shows it, as a page's
    // informer does for a dropped watch of its own (no error event).
    proxy.cut();
    await until(async () => {
      const s = await status();
      return s.reconnects >= 1 && /upstream: /.test(s.lastError?.message ?? '');
    }, 20_000, 'the tab reconnected and shows the upstream error');
    assert.deepEqual(await page.evaluate(() => window.__errors), [], 'a dropped watch is not an error event');
    // Live again: a change made now reaches the tab.
    const made = await fetch(`${sim.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-the-break' }, data: {} }),
    });
    assert.ok(made.ok, `create: ${made.status}`);
    const want = sorted(await simState('configmaps'));
    await until(async () => sorted(await page.evaluate(cacheOf, 0)) === want, 30_000, 'the tab equals the sim');
    await until(async () => (await status()).phase === 'watching', 20_000, 'the tab watches again');
  } finally {
    await page.close();
    proxy.stop();
  }
});

test('a 5xx upstream while a tab watches: the tab backs off with the error and tells its listeners once, then converges', async () => {
  const a = await tab({ scopes: SCOPES.slice(0, 1) });
  await converged([a.page], 'synced');
  await a.page.evaluate(() => {
    window.__errors = [];
    window.__phases = [];
    const inf = window.__kw.infs[0];
    inf.on('error', (e) => window.__errors.push({ reason: e.reason, code: e.code }));
    inf.on('status', (s) => window.__phases.push({ phase: s.phase, next: s.nextRetryAt !== undefined, reason: s.lastError?.reason }));
  });
  const status = () => a.page.evaluate(() => window.__kw.infs[0].status);
  const left = async () => (await sim.call('/sim/faults')).status500.count;
  // The worker's watch has carried the server's bookmarks (it is past its
  // first second: a drop then re-watches at once, as a long-lived watch's would).
  const first = (await status()).eventsApplied;
  await until(async () => (await status()).eventsApplied >= first + 2, 10_000, 'relayed bookmarks');
  try {
    await sim.call('/sim/faults', { status500: { count: 4 } });
    await sim.call('/sim/drop-watches', {});
    const told = await until(() => a.page.evaluate(() => window.__errors[0]), 30_000, 'an error event');
    assert.deepEqual([told.code, told.reason], [500, 'InternalError']);
    const phases = await a.page.evaluate(() => window.__phases);
    assert.ok(phases.some((p) => p.phase === 'backoff' && p.next && p.reason === 'InternalError'), JSON.stringify(phases));
    assert.match((await status()).lastError.message, /upstream: /);
    await until(async () => (await left()) === 0, 60_000, 'the worker met every 500');
  } finally {
    await sim.call('/sim/faults/clear', {});
  }
  await sim.call('/sim/churn/steps', { steps: 5, seed: 23 });
  await converged([a.page], 'the tab equals the sim once the worker watches again');
  assert.equal((await status()).phase, 'watching');
  // Told once per outage.
  assert.equal((await a.page.evaluate(() => window.__errors)).length, 1);
  await a.page.close();
});
