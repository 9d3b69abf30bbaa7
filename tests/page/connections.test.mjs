// Browser-scale connections in headless Chromium against the sim over
// HTTP/1.1 (six connections per host for the whole profile): many informers
// in one page, two pages of one origin, the dashboard clicked through many
// kinds, and a hidden page letting its watches go.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, startSim, until } from './harness.mjs';

let sim, browser;
// A same-origin document that runs nothing of its own (the package is imported into it).
const BLANK = () => `${sim.url}/version`;
const openWatches = async () => (await sim.call('/sim/stats')).openWatches;

// Every kind the sim serves, then more scopes of configmaps: 20 informers, 20 watches.
const SCOPES = [
  { version: 'v1', resource: 'pods' }, { version: 'v1', resource: 'services' }, { version: 'v1', resource: 'configmaps' },
  { version: 'v1', resource: 'secrets' }, { version: 'v1', resource: 'namespaces' }, { version: 'v1', resource: 'nodes' },
  { version: 'v1', resource: 'events' }, { version: 'v1', resource: 'endpoints' }, { version: 'v1', resource: 'serviceaccounts' },
  { group: 'apps', version: 'v1', resource: 'deployments' }, { group: 'apps', version: 'v1', resource: 'replicasets' },
  { group: 'apps', version: 'v1', resource: 'statefulsets' }, { group: 'apps', version: 'v1', resource: 'daemonsets' },
  { group: 'demo.kubewasm.dev', version: 'v1', resource: 'widgets' },
  ...['a', 'b', 'c', 'd', 'e', 'f'].map((n) => ({ version: 'v1', resource: 'configmaps', namespace: `scope-${n}` })),
];

/** In the page: import the package, open one informer per scope, report how long the sync took. */
const openInformers = (scopes) => async (scopes) => {
  const m = await import('/plain/pkg/web/index.js');
  await m.default();
  const client = new m.KubeClient({ server: location.origin });
  const factory = new m.InformerFactory(client);
  const infs = scopes.map((s) => factory.informer(s));
  const t0 = performance.now();
  factory.start();
  await Promise.all(infs.map((i) => i.waitForSync()));
  const syncMs = performance.now() - t0;
  window.__kw = { m, client, factory, infs };
  // Every watch is open once each informer shows its transport.
  while (infs.some((i) => !i.status.transport)) await new Promise((r) => setTimeout(r, 20));
  return { syncMs, statuses: infs.map((i) => i.status) };
};

/** In the page: write one object into each scope and time until every informer has it. */
const writeEach = async (tag) => {
  const { client, infs } = window.__kw;
  const t0 = performance.now();
  const seen = infs.map((inf) => new Promise((resolve) => {
    const off = inf.on('add', (o) => {
      if (o.metadata.name === tag) {
        off();
        resolve(performance.now() - t0);
      }
    });
  }));
  await Promise.all(infs.map((inf, i) => {
    const { metadataOnly, ...s } = window.__scopes[i];
    const ns = s.resource === 'namespaces' || s.resource === 'nodes' ? undefined : (s.namespace ?? 'default');
    const kind = { pods: 'Pod', services: 'Service', configmaps: 'ConfigMap', secrets: 'Secret', namespaces: 'Namespace', nodes: 'Node', events: 'Event', endpoints: 'Endpoints', serviceaccounts: 'ServiceAccount', deployments: 'Deployment', replicasets: 'ReplicaSet', statefulsets: 'StatefulSet', daemonsets: 'DaemonSet', widgets: 'Widget' }[s.resource];
    const apiVersion = s.group ? `${s.group}/${s.version}` : s.version;
    return client.resource({ ...s, namespace: ns }).create({ apiVersion, kind, metadata: { name: tag, namespace: ns } });
  }));
  return Promise.all(seen);
};

before(async () => {
  sim = await startSim(['--namespaces', '3', '--pods', '60']);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  sim?.stop();
});

// First, while the sim holds what it was seeded with: it comes back (the same seed)
// at the same resourceVersions, as a restarted API server does.
test("14 informers through a 10 s outage: on the server's return WebSocket carries the watches over the budget, and the origin still answers a fetch", async () => {
  const page = await browser.context.newPage();
  const scopes = SCOPES.slice(0, 14);
  try {
    await page.goto(BLANK());
    await page.evaluate((s) => (window.__scopes = s), scopes);
    // The server goes the moment the lists are in, while watches are still opening.
    await page.evaluate(async (scopes) => {
      const m = await import('/plain/pkg/web/index.js');
      await m.default();
      const client = new m.KubeClient({ server: location.origin });
      const factory = new m.InformerFactory(client);
      const infs = scopes.map((s) => factory.informer(s));
      window.__kw = { m, client, factory, infs };
      window.__errors = infs.map(() => 0);
      infs.forEach((inf, i) => inf.on('error', () => window.__errors[i]++));
      factory.start();
      await Promise.all(infs.map((i) => i.waitForSync()));
    }, scopes);
    const port = Number(new URL(sim.url).port);
    await sim.stop();
    const t0 = Date.now();
    // Each watch fails at least twice, WebSocket and fetch alike, and ten seconds pass.
    await until(async () => Date.now() - t0 > 10_000 && (await page.evaluate(() => window.__errors.every((n) => n >= 2))), 40_000, 'every informer failed twice');
    sim = await startSim(['--namespaces', '3', '--pods', '60'], { port });
    // Every watch open at the server too: a status reads `watching` while a dropped watch is opened again.
    await until(async () => (await page.evaluate(() => window.__kw.infs.every((i) => i.status.phase === 'watching' && i.status.transport))) && (await openWatches()) === scopes.length, 30_000, 'every informer watching again')
      .catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify(await page.evaluate(() => window.__kw.infs.map((i) => [i.status.phase, i.status.transport, i.status.transportReason, i.status.lastError?.reason, i.status.lastError?.message?.slice(0, 80)])))}`); });
    const transports = await page.evaluate(() => window.__kw.infs.map((i) => i.status.transport));
    assert.ok(transports.filter((t) => t === 'fetch').length <= 4, `at most 4 fetch watches hold the origin's connections: ${transports}`);
    // A request of the page's own gets a connection: not every one is held by a watch.
    const answered = await page.evaluate(async () => {
      const c = new AbortController();
      const timer = setTimeout(() => c.abort(), 5_000);
      try {
        return (await fetch('/version', { signal: c.signal })).status;
      } catch (e) {
        return String(e);
      } finally {
        clearTimeout(timer);
      }
    });
    assert.equal(answered, 200);
    const ms = await page.evaluate(writeEach, 'after-outage');
    assert.ok(Math.max(...ms) < 2_000, `every write seen within 2 s: ${ms.map((x) => x.toFixed(0))}`);
  } finally {
    await page.evaluate(() => window.__kw?.factory.shutdown()).catch(() => {});
    await page.close();
  }
});

test('one page with 20 informers: all sync within 5 s and see a write to each within 1 s', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(BLANK());
    await page.evaluate((s) => (window.__scopes = s), SCOPES);
    const { syncMs, statuses } = await page.evaluate(openInformers(), SCOPES);
    assert.ok(syncMs < 5_000, `synced in ${syncMs} ms`);
    const fetches = statuses.filter((s) => s.transport === 'fetch');
    const sockets = statuses.filter((s) => s.transport === 'websocket');
    assert.ok(fetches.length <= 4, `at most 4 fetch watches: ${statuses.map((s) => s.transport)}`);
    assert.equal(fetches.length + sockets.length, 20);
    assert.ok(sockets.every((s) => s.transportReason === 'over-budget' && /WebSocket/.test(s.warning ?? '')), 'the budget says why');
    const ms = await page.evaluate(writeEach, 'written-1');
    assert.ok(Math.max(...ms) < 1_000, `every write seen within 1 s: ${ms.map((x) => x.toFixed(0))}`);
  } finally {
    await page.evaluate(() => window.__kw?.factory.shutdown()).catch(() => {});
    await page.close();
  }
});

test('two pages of the same origin with 10 informers each, metadata-only ones among them, are both fully live', async () => {
  const pages = [await browser.context.newPage(), await browser.context.newPage()];
  try {
    // Two metadata-only informers a page: their watches count in the budget too.
    const halves = [SCOPES.slice(0, 10), SCOPES.slice(10)].map((h) => h.map((s, j) => (j >= 8 ? { ...s, metadataOnly: true } : s)));
    await Promise.all(pages.map((p) => p.goto(BLANK())));
    for (const [i, p] of pages.entries()) await p.evaluate((s) => (window.__scopes = s), halves[i]);
    const synced = await Promise.all(pages.map((p, i) => p.evaluate(openInformers(), halves[i])));
    for (const s of synced) assert.ok(s.syncMs < 5_000, `synced in ${s.syncMs} ms`);
    // The budget is shared by the tabs: at most 4 fetch watches in both pages together.
    const fetches = synced.flatMap((s) => s.statuses).filter((s) => s.transport === 'fetch').length;
    assert.ok(fetches <= 4, `${fetches} fetch watches across both pages`);
    const ms = await Promise.all(pages.map((p, i) => p.evaluate(writeEach, `two-pages-${i}`)));
    for (const m of ms) assert.ok(Math.max(...m) < 1_000, `every write seen within 1 s: ${m.map((x) => x.toFixed(0))}`);
    // Over WebSocket a metadata-only informer gets whole objects, and cuts them down.
    for (const [i, p] of pages.entries()) {
      const kinds = await p.evaluate((tag) => window.__kw.infs.slice(8).map((inf) => inf.lister().list().find((o) => o.metadata.name === tag)?.kind), `two-pages-${i}`);
      assert.deepEqual(kinds, ['PartialObjectMetadata', 'PartialObjectMetadata']);
    }
    const reasons = synced.flatMap((s) => s.statuses.slice(8).map((st) => `${st.transport}/${st.transportReason}`));
    assert.ok(reasons.some((r) => r === 'websocket/over-budget'), `a metadata-only watch past the budget: ${reasons}`);
  } finally {
    for (const p of pages) {
      await p.evaluate(() => window.__kw?.factory.shutdown()).catch(() => {});
      await p.close();
    }
  }
});

test('a hidden page closes its watches after the delay and catches up with one diff when shown', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(BLANK());
    await until(async () => (await openWatches()) === 0, 15_000, 'no watch left from earlier tests');
    const base = await openWatches();
    await page.evaluate(async () => {
      // The page's visibility, controlled by the test.
      let hidden = false;
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
      window.__setHidden = (h) => {
        hidden = h;
        document.dispatchEvent(new Event('visibilitychange'));
      };
      const m = await import('/plain/pkg/web/index.js');
      await m.default();
      const factory = new m.InformerFactory(new m.KubeClient({ server: location.origin }), { hiddenPauseMs: 500 });
      const pods = factory.informer({ version: 'v1', resource: 'pods' });
      factory.start();
      await pods.waitForSync();
      window.__diffs = [];
      pods.subscribe((d) => window.__diffs.push(d));
      window.__kw = { factory, pods };
    });
    await until(async () => (await openWatches()) === base + 1, 5_000, 'the watch is open').catch(async (e) => {
      throw new Error(`${e.message}: ${await openWatches()} open, status ${await page.evaluate(() => JSON.stringify(window.__kw.pods.status))}`);
    });
    await page.evaluate(() => window.__setHidden(true));
    await until(async () => (await openWatches()) === base, 5_000, 'the hidden page closed its watch').catch(async (e) => {
      throw new Error(`${e.message}: ${await openWatches()} open, status ${await page.evaluate(() => JSON.stringify(window.__kw.pods.status))}`);
    });
    // Changes, deletions and a compaction while hidden.
    await sim.call('/sim/churn/steps', { steps: 40, seed: 7 });
    await sim.call('/sim/compact', {});
    await page.evaluate(() => (window.__diffs.length = 0));
    await page.evaluate(() => window.__setHidden(false));
    const want = (await sim.call('/sim/state?resource=pods')).items;
    const cacheState = () => page.evaluate(() => Object.fromEntries(window.__kw.pods.lister().list({}).map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion])));
    const sorted = (o) => JSON.stringify(Object.entries(o).sort());
    await until(async () => sorted(await cacheState()) === sorted(want), 10_000, 'the cache equals the sim');
    await until(() => page.evaluate(() => window.__diffs.length > 0), 5_000, 'a diff');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await page.evaluate(() => window.__diffs.length), 1, 'one diff for everything that changed');
    assert.equal(await openWatches(), base + 1, 'watching again');
  } finally {
    await page.evaluate(() => window.__kw?.factory.shutdown()).catch(() => {});
    await page.close();
  }
});

test('the dashboard clicked through 12 kinds: each view is live within 2 s, and released kinds stop watching', async () => {
  const page = await browser.context.newPage();
  const samples = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      samples.push({ at: Date.now(), open: await openWatches() });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    const base = await openWatches();
    await page.goto(`${sim.url}/#pods`);
    await until(() => page.evaluate(() => window.kubewasmDashboard?.ready && window.kubewasmDashboard.status('pods')?.synced), 10_000, 'the dashboard is up');
    const labels = (await page.locator('#resource option').allTextContents()).filter((l) => !/^(pods|namespaces) /.test(l)).slice(0, 12);
    assert.equal(labels.length, 12);
    const GRACE_MS = 10_000; // the dashboard's releaseGraceMs
    const visited = [];
    for (const text of labels) {
      const label = text.split(' ')[0];
      const value = await page.locator('#resource option', { hasText: text }).getAttribute('value');
      const t0 = Date.now();
      await page.selectOption('#resource', value);
      visited.push({ label, at: t0 });
      // Live: a new object of this kind shows up in the view within 2 s of its write.
      const info = await page.evaluate(() => window.kubewasmDashboard.current().info);
      const ns = info.namespaced ? 'default' : undefined;
      const name = `live-${label}`;
      const prefix = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
      const path = ns ? `${prefix}/namespaces/${ns}/${info.resource}` : `${prefix}/${info.resource}`;
      const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
      await until(() => page.evaluate(() => window.kubewasmDashboard.current().status().synced), 5_000, `${label} synced`);
      const w0 = Date.now();
      const r = await fetch(sim.url + path, { method: 'POST', body: JSON.stringify({ apiVersion, kind: info.kind, metadata: { name, namespace: ns } }) });
      assert.ok(r.ok, `create ${label}: ${r.status}`);
      const key = ns ? `${ns}/${name}` : name;
      await until(() => page.evaluate((k) => k in window.kubewasmDashboard.state(window.kubewasmDashboard.current().label), key), 2_000, `${label} live`);
      assert.ok(Date.now() - w0 < 2_000);
    }
    // Once the grace period has passed, only what is on screen keeps watching.
    await new Promise((r) => setTimeout(r, GRACE_MS + 3_000));
    const onScreen = await page.evaluate(() => window.kubewasmDashboard.openLabels?.() ?? []);
    const settled = await openWatches();
    sampling = false;
    await sampler;
    assert.ok(settled - base <= 3, `after the grace period ${settled - base} watches stay open (${onScreen})`);
    // At no time more watches than the views on screen plus those still in their grace period.
    for (const s of samples) {
      const inGrace = visited.filter((v, i) => {
        const left = visited[i + 1]?.at ?? Infinity;
        return s.at < left + GRACE_MS + 2_000 && v.at <= s.at;
      }).length;
      assert.ok(s.open - base <= 2 + inGrace + 1, `${s.open - base} watches at ${s.at} with ${inGrace} kinds in view or grace`);
    }
  } finally {
    sampling = false;
    await sampler;
    await page.close();
  }
});

test('1,500 watches broken off while an informer holds the first slot leave the page heap as it was', async () => {
  const page = await browser.context.newPage();
  await page.goto(BLANK());
  await page.evaluate(async () => {
    const m = await import('/plain/pkg/web/index.js');
    await m.default();
    const client = new m.KubeClient({ server: location.origin });
    const factory = new m.InformerFactory(client);
    const inf = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    await inf.waitForSync();
    while (!inf.status.transport) await new Promise((r) => setTimeout(r, 20));
    // Each watch asks for the first slot (taken), then gets the second.
    const pods = client.resource({ version: 'v1', resource: 'pods' });
    window.__cycle = async (n) => {
      for (let i = 0; i < n; i++) for await (const _ of pods.watch({})) break;
    };
    window.__kw = { factory, inf };
  });
  const cdp = await page.context().newCDPSession(page);
  const heap = async () => {
    for (let i = 0; i < 3; i++) await cdp.send('HeapProfiler.collectGarbage');
    return (await cdp.send('Runtime.getHeapUsage')).usedSize;
  };
  await page.evaluate(() => window.__cycle(300));
  const before = await heap();
  await page.evaluate(() => window.__cycle(1500));
  const grown = (await heap()) - before;
  // Two closures kept per refused lock request were ~380 bytes a watch.
  assert.ok(grown < 150_000, `the heap grew ${grown} bytes over 1,500 watches`);
  await page.close();
});
