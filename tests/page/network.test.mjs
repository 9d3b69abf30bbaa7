// The browser's network going away and coming back (Playwright's offline
// emulation, which fires `offline` and `online` and fails the page's new
// requests, the sim's included): an informer backing off retries at the
// `online` instead of waiting out its backoff, and a watch that was open
// meanwhile is opened again from its resourceVersion, as one that died
// without a word while a laptop slept would need.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, startSim, until } from './harness.mjs';

let sim, browser;

before(async () => {
  sim = await startSim(['--namespaces', '3', '--pods', '30']);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await sim?.stop();
});

/** In the page: a configmaps informer of `default`, synced and watching; adds recorded with when (epoch ms). */
const openConfigMaps = async (backoff) => {
  const m = await import('/plain/pkg/web/index.js');
  await m.default();
  const factory = new m.InformerFactory(new m.KubeClient({ server: location.origin }));
  const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default', backoff });
  const w = (window.__kw = { factory, inf, added: [] });
  inf.on('add', (o) => w.added.push({ name: o.metadata.name, at: Date.now() }));
  factory.start();
  await inf.waitForSync();
  while (!inf.status.transport) await new Promise((r) => setTimeout(r, 20));
};

/** In the page: when the informer got an add of `name` (epoch ms), once it is watching again. */
const seenWatching = (name) => {
  const { inf, added } = window.__kw;
  const s = inf.status;
  const a = added.find((x) => x.name === name);
  return a && s.phase === 'watching' && s.synced ? { at: a.at, status: s } : null;
};

const status = (page) => page.evaluate(() => window.__kw.inf.status);

async function createConfigMap(name) {
  const r = await fetch(`${sim.url}/api/v1/namespaces/default/configmaps`, {
    method: 'POST',
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } }),
  });
  assert.equal(r.status, 201);
}

async function goOffline(page) {
  await browser.context.setOffline(true);
  await until(() => page.evaluate(() => navigator.onLine === false), 5_000, 'the page offline');
}

/**
 * A same-origin front for the sim (static files and API) whose `freeze()`
 * makes every watch open at that moment go silent, its connection kept: a
 * watch that died without a word. Records each request's URL.
 */
async function startFreezingProxy(apiUrl) {
  const { createServer, request } = await import('node:http');
  const requests = [];
  const watches = new Set();
  const server = createServer((req, res) => {
    requests.push(req.url);
    const up = request(apiUrl + req.url, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      const w = { frozen: false };
      if (/[?&]watch=(1|true)\b/.test(req.url)) watches.add(w);
      r.on('data', (d) => w.frozen || res.write(d));
      r.on('end', () => w.frozen || res.end());
      r.on('close', () => r.complete || w.frozen || res.destroy());
      res.on('close', () => {
        watches.delete(w);
        up.destroy();
      });
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    freeze: () => watches.forEach((w) => (w.frozen = true)),
    openWatches: () => watches.size,
    stop: () => { server.closeAllConnections(); server.close(); },
  };
}

test('an informer backing off while offline retries at the online event, well before its nextRetryAt, from its resourceVersion', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(`${sim.url}/version`);
    // A long first step (20 to 40 s with jitter) stands for the wait a long outage grows.
    await page.evaluate(openConfigMaps, { initialMs: 20_000, capMs: 60_000 });
    // A watch that has heard from the server (a bookmark) is opened again when it breaks, not relisted.
    await until(async () => (await status(page)).eventsApplied > 0, 5_000, 'a bookmark');
    await goOffline(page);
    // The watch breaks while the page cannot reach the server: its re-watch fails, and the informer backs off.
    await sim.call('/sim/drop-watches', {});
    const backoff = await until(async () => {
      const s = await status(page);
      return s.phase === 'backoff' && s.nextRetryAt - (await page.evaluate(() => Date.now())) > 15_000 && s;
    }, 10_000, 'the informer backing off');
    await createConfigMap('written-offline');
    await browser.context.setOffline(false);
    const seen = await until(() => page.evaluate(seenWatching, 'written-offline'), 10_000, 'the write seen after online')
      .catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify(await status(page))}`); });
    assert.ok(seen.at < backoff.nextRetryAt - 10_000,
      `seen ${backoff.nextRetryAt - seen.at} ms before the retry the backoff had set`);
    assert.equal(seen.status.relists, 0, 'watched again from the last resourceVersion, no list');
    assert.ok(seen.status.reconnects > backoff.reconnects);
  } finally {
    await browser.context.setOffline(false);
    await page.evaluate(() => window.__kw?.factory.shutdown()).catch(() => {});
    await page.close();
  }
});

test('a watch open across offline and online is presumed dead and opened again at once from its resourceVersion', async () => {
  const proxy = await startFreezingProxy(sim.url);
  const page = await browser.context.newPage();
  try {
    await page.goto(`${proxy.url}/version`);
    await page.evaluate(openConfigMaps, undefined);
    const opened = await status(page);
    assert.equal(proxy.openWatches(), 1, 'one watch open');
    await goOffline(page);
    // The laptop sleeps: the connection dies and nothing says so.
    proxy.freeze();
    const sent = proxy.requests.length;
    await createConfigMap('written-asleep');
    assert.equal((await status(page)).phase, 'watching', 'a silent watch reads as watching');
    await browser.context.setOffline(false);
    // Far within the 90 s idle limit that would otherwise find it.
    const seen = await until(() => page.evaluate(seenWatching, 'written-asleep'), 10_000, 'the write seen after online')
      .catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify(await status(page))}`); });
    assert.equal(seen.status.relists, opened.relists, 'no list');
    assert.equal(seen.status.reconnects, opened.reconnects + 1, 'one watch opened again');
    const rv = (url) => Number(new URL(url, proxy.url).searchParams.get('resourceVersion'));
    const first = proxy.requests.slice(0, sent).find((u) => /[?&]watch=(1|true)\b/.test(u));
    const since = proxy.requests.slice(sent);
    assert.equal(since.length, 1, `one request since: ${since}`);
    assert.match(since[0], /[?&]watch=(1|true)\b/);
    assert.ok(rv(since[0]) >= rv(first) && rv(first) > 0, `from the last resourceVersion: ${first} then ${since[0]}`);
  } finally {
    await browser.context.setOffline(false);
    await page.evaluate(() => window.__kw?.factory.shutdown()).catch(() => {});
    await page.close();
    proxy.stop();
  }
});

test("a SharedWorker's watch open across offline and online is opened again too (workers get no events: it reads navigator.onLine)", async () => {
  const proxy = await startFreezingProxy(sim.url);
  const page = await browser.context.newPage();
  try {
    await page.goto(`${proxy.url}/version`);
    const host = await page.evaluate(async () => {
      const s = await import('/plain/pkg/shared.js');
      const conn = await s.connectShared({ client: { server: location.origin } });
      const inf = conn.factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default' });
      const w = (window.__kw = { factory: conn.factory, conn, inf, added: [] });
      inf.on('add', (o) => w.added.push({ name: o.metadata.name, at: Date.now() }));
      conn.factory.start();
      await inf.waitForSync();
      return conn.host;
    });
    assert.equal(host.kind, 'shared-worker');
    await until(() => proxy.openWatches() === 1, 5_000, "the worker's watch");
    const opened = await status(page);
    await goOffline(page);
    // The worker heard three more bookmarks (about a second apart) while
    // offline: its once-a-second look at navigator.onLine has seen it.
    await until(async () => (await status(page)).eventsApplied >= opened.eventsApplied + 3, 10_000, 'bookmarks while offline');
    proxy.freeze();
    const sent = proxy.requests.length;
    await createConfigMap('written-asleep-shared');
    await browser.context.setOffline(false);
    const seen = await until(() => page.evaluate(seenWatching, 'written-asleep-shared'), 10_000, 'the write seen after online')
      .catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify(await status(page))}`); });
    assert.ok(seen);
    const since = proxy.requests.slice(sent);
    assert.equal(since.length, 1, `the worker opened one watch again, and listed nothing: ${since}`);
    assert.match(since[0], /[?&]watch=(1|true)\b/);
  } finally {
    await browser.context.setOffline(false);
    await page.evaluate(() => window.__kw?.conn?.close()).catch(() => {});
    await page.close();
    proxy.stop();
  }
});

test("a worker reads navigator.onLine only while an informer runs: not before, not after the last stopped, again when one starts", async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(`${sim.url}/version`);
    const reads = await page.evaluate(async () => {
      // A module worker that counts its reads of navigator.onLine.
      const code = `
        let reads = 0;
        const own = Object.getOwnPropertyDescriptor(WorkerNavigator.prototype, 'onLine');
        Object.defineProperty(navigator, 'onLine', { configurable: true, get() { reads += 1; return own.get.call(navigator); } });
        const m = await import(${JSON.stringify(`${location.origin}/plain/pkg/web/index.js`)});
        await m.default();
        let factory;
        onmessage = async (e) => {
          try {
            if (e.data === 'start') {
              factory = new m.InformerFactory(new m.KubeClient({ server: location.origin }));
              const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default' });
              factory.start();
              await inf.waitForSync();
            }
            if (e.data === 'stop') factory.shutdown();
            postMessage({ reads });
          } catch (err) {
            postMessage({ error: String(err) });
          }
        };
        postMessage({ reads });`;
      const url = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
      const worker = new Worker(url, { type: 'module' });
      const next = () => new Promise((resolve, reject) => {
        worker.onmessage = (e) => (e.data.error ? reject(new Error(e.data.error)) : resolve(e.data.reads));
        worker.onerror = (e) => reject(new Error(e.message || 'the worker failed'));
      });
      const ask = (what) => {
        const answer = next();
        worker.postMessage(what);
        return answer;
      };
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      const seen = { loaded: await next() };
      await sleep(2500);
      seen.idle = await ask('read');
      await ask('start');
      seen.started = await ask('read');
      await sleep(3500);
      seen.running = await ask('read');
      await ask('stop');
      await sleep(200);
      seen.stopped = await ask('read');
      await sleep(3000);
      seen.stoppedLater = await ask('read');
      await ask('start');
      await sleep(3500);
      seen.restarted = await ask('read');
      await ask('stop');
      worker.terminate();
      URL.revokeObjectURL(url);
      return seen;
    });
    const shown = JSON.stringify(reads);
    assert.equal(reads.idle, reads.loaded, `no look while no informer runs: ${shown}`);
    assert.ok(reads.running - reads.started >= 3, `about one look a second while one runs: ${shown}`);
    assert.equal(reads.stoppedLater, reads.stopped, `none after the last stopped: ${shown}`);
    assert.ok(reads.restarted - reads.stoppedLater >= 3, `looks again once one starts: ${shown}`);
  } finally {
    await page.close();
  }
});
