// Warm starts from IndexedDB in headless Chromium against the sim: a reload
// renders stored rows before any list completes and then converges on what
// changed while the page was closed; corrupted, foreign and over-quota
// storage each leave the page working, with a warning in the status.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, startSim, until } from './harness.mjs';

const PODS = 10_000;
let sim, browser;
const BLANK = () => `${sim.url}/version`;
const sorted = (o) => JSON.stringify(Object.entries(o).sort());

/**
 * In the page: a factory persisting under `name`, a pods informer whose
 * first diff renders table rows; records when rows first showed, the
 * informer's status then, and every diff.
 */
const openPods = async ({ name, intervalMs, identity, token, shape }) => {
  const t0 = performance.now();
  const m = await import('/plain/pkg/web/index.js');
  await m.default();
  const factory = new m.InformerFactory(new m.KubeClient({ server: location.origin, token }), { persist: { name, intervalMs, identity } });
  const shapes = {
    metadata: { metadataOnly: true },
    transform: { transform: ({ status, ...rest }) => rest },
  };
  const pods = factory.informer({ version: 'v1', resource: 'pods', ...shapes[shape] });
  const table = document.body.appendChild(document.createElement('table'));
  const w = (window.__kw = { m, factory, pods, diffs: [], firstRows: undefined });
  pods.subscribe((d) => {
    w.diffs.push({ added: d.added.length, updated: d.updated.length, removed: d.removed.length, phase: pods.status.phase });
    if (w.firstRows) return;
    const rows = pods.getSnapshot().slice(0, 50);
    table.replaceChildren(...rows.map((p) => {
      const tr = document.createElement('tr');
      tr.append(Object.assign(document.createElement('td'), { textContent: `${p.metadata.namespace}/${p.metadata.name}` }));
      return tr;
    }));
    w.firstRows = { at: performance.now(), ms: performance.now() - t0, rows: rows.length, status: pods.status };
  });
  factory.start();
  return { t0 };
};

/** In the page: when every list request of pods finished (resource timing; empty while none did). */
const listsFinishedAt = () => performance.getEntriesByType('resource')
  .filter((e) => /\/api\/v1\/pods\?/.test(e.name) && !/watch=/.test(e.name))
  .map((e) => e.responseEnd);

/** In the page: what the stored copy of the pods informer says (meta records of every informer). */
const storedMeta = (name) => new Promise((resolve, reject) => {
  const req = indexedDB.open(`kubewasm:${name}`);
  req.onerror = () => reject(req.error);
  req.onsuccess = () => {
    const db = req.result;
    if (!db.objectStoreNames.contains('meta')) { db.close(); resolve([]); return; }
    const store = db.transaction('meta').objectStore('meta');
    const [get, keys] = [store.getAll(), store.getAllKeys()];
    keys.onsuccess = () => { db.close(); resolve(get.result.map((m, i) => ({ ...m, key: keys.result[i] }))); };
    keys.onerror = () => reject(keys.error);
  };
});

const cacheState = (page) => page.evaluate(() => Object.fromEntries(window.__kw.pods.lister().list({}).map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion])));
const simPods = async () => (await sim.call('/sim/state?resource=pods')).items;

before(async () => {
  sim = await startSim(['--namespaces', '3', '--pods', String(PODS)]);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  sim?.stop();
});

test('a reload renders 10,000 stored pods before any list completes, then equals the sim after changes, deletions and a compaction', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(BLANK());
    await page.evaluate(openPods, { name: 'warm', intervalMs: 100 });
    await page.evaluate(() => window.__kw.pods.waitForSync());
    assert.equal((await page.evaluate(() => window.__kw.firstRows.status)).phase !== 'stored', true, 'a cold start lists');
    // Every pod and the resourceVersion are stored (written in bounded batches).
    await until(async () => (await page.evaluate(storedMeta, 'warm')).some((m) => m.count === PODS), 20_000, 'the stored copy');
    await page.evaluate(() => window.__kw.factory.shutdown());

    // While the page is away: changes, deletions, and a compaction that expires the stored RV.
    await page.goto('about:blank');
    await sim.call('/sim/churn/steps', { steps: 200, seed: 11 });
    const victims = Object.keys(await simPods()).slice(0, 5);
    for (const k of victims) {
      const [ns, n] = k.split('/');
      const r = await fetch(`${sim.url}/api/v1/namespaces/${ns}/pods/${n}`, { method: 'DELETE' });
      assert.ok(r.ok);
    }
    await sim.call('/sim/compact', {});

    await page.goto(BLANK());
    await page.evaluate(openPods, { name: 'warm', intervalMs: 100 });
    await until(() => page.evaluate(() => window.__kw.firstRows), 10_000, 'the first rows');
    const first = await page.evaluate(() => window.__kw.firstRows);
    const listsBefore = await page.evaluate(listsFinishedAt);
    assert.equal(first.rows, 50);
    assert.equal(first.status.phase, 'stored', 'the rows came from storage');
    assert.ok(first.status.storedAt > 0 && first.status.storedAt <= Date.now(), 'and say since when');
    assert.ok(listsBefore.every((end) => end > first.at), `rows at ${first.at.toFixed(0)} ms, lists done at ${listsBefore}`);
    console.log(`# first rows from IndexedDB after ${first.ms.toFixed(0)} ms (${PODS} pods)`);

    // The stored RV expired: a relist brings the cache to the sim's state, as one diff.
    const want = await simPods();
    await until(async () => sorted(await cacheState(page)) === sorted(want), 20_000, 'the cache equals the sim');
    await until(() => page.evaluate(() => window.__kw.pods.status.phase === 'watching'), 5_000, 'live');
    const lists = await page.evaluate(listsFinishedAt);
    assert.ok(lists.length >= 1 && lists.every((end) => end > first.at), 'relisted after the first rows');
    await new Promise((r) => setTimeout(r, 500));
    const diffs = await page.evaluate(() => window.__kw.diffs);
    assert.equal(diffs.length, 2, `the stored copy, then one diff of what changed: ${JSON.stringify(diffs)}`);
    assert.equal(diffs[0].added, PODS);
    assert.ok(diffs[1].removed >= 5 && diffs[1].updated > 0, JSON.stringify(diffs[1]));
    const status = await page.evaluate(() => window.__kw.pods.status);
    assert.equal(status.storedAt, undefined, 'live, no longer stored');
    assert.deepEqual(status.persistence, { enabled: true });
  } finally {
    await page.evaluate(() => window.__kw?.factory.clearPersisted()).catch(() => {});
    await page.close();
  }
});

test('under steady churn the stored copy keeps up, stays readable through adds and deletions, and a reload starts from it without losing a change', async () => {
  // Enough pods that the buckets changed between two writes hold more
  // objects than one write carries: some change is always left unwritten.
  const CHURN_PODS = 12_000;
  const PER_SEC = 500;
  const busy = await startSim(['--namespaces', '3', '--pods', String(CHURN_PODS), '--churn-per-sec', String(PER_SEC)]);
  const page = await browser.context.newPage();
  const blank = `${busy.url}/version`;
  const stored = async () => (await page.evaluate(storedMeta, 'churn')).find((m) => m.rv);
  let release;
  try {
    await page.goto(blank);
    await page.evaluate(openPods, { name: 'churn', intervalMs: 100 });
    await page.evaluate(() => window.__kw.pods.waitForSync());
    // The stored version advances while changes never stop, and each batch
    // between versions keeps the stored count right: pods come and go.
    const first = await until(stored, 20_000, 'a resourceVersion stored under churn');
    const seen = new Set([first.rv]);
    const counts = new Set([first.count]);
    let last;
    await until(async () => {
      last = await stored();
      seen.add(last.rv);
      counts.add(last.count);
      return seen.size >= 5 && counts.size >= 2;
    }, 30_000, 'five stored versions and a changed count');
    const server = (await busy.call('/sim/stats')).resourceVersion;
    console.log(`# under ${PER_SEC} changes/s (${CHURN_PODS} pods): stored rv ${Number(server) - Number(last.rv)} events and ${Date.now() - last.savedAt} ms behind the server; counts ${[...counts].join(', ')}`);

    // A reload while the churn goes on: it starts from the stored copy and
    // watches from its version (no list), replaying what came later. The
    // watch is held until the stored rows were seen: against a local server
    // it would otherwise confirm them before the first render.
    const held = new Promise((r) => (release = r));
    await page.route(/\/api\/v1\/pods\?.*watch=/, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(blank);
    await page.evaluate(openPods, { name: 'churn', intervalMs: 100 });
    await until(() => page.evaluate(() => window.__kw.firstRows), 10_000, 'the first rows');
    const shown = await page.evaluate(() => window.__kw.firstRows.status);
    release();
    assert.equal(shown.phase, 'stored', `the rows came from storage: ${JSON.stringify(shown)}`);
    assert.ok(shown.storedAt > 0 && shown.storedAt <= Date.now(), JSON.stringify(shown));
    await until(() => page.evaluate(() => window.__kw.pods.status.phase === 'watching'), 20_000, 'live');
    await busy.call('/sim/churn', { perSec: 0 });
    const want = (await busy.call('/sim/state?resource=pods')).items;
    await until(async () => sorted(await cacheState(page)) === sorted(want), 20_000, 'the cache equals the server, resourceVersions too')
      .catch(async (e) => {
        const have = await cacheState(page);
        const diff = Object.keys({ ...have, ...want }).filter((k) => have[k] !== want[k]);
        throw new Error(`${e.message}: ${diff.length} keys differ, e.g. ${diff.slice(0, 3).map((k) => `${k}: ${have[k]} vs ${want[k]}`)}`);
      });
    assert.deepEqual(await page.evaluate(listsFinishedAt), [], 'caught up by watching from the stored version, not by a list');
    const status = await page.evaluate(() => window.__kw.pods.status);
    assert.deepEqual(status.persistence, { enabled: true }, 'no copy was discarded');
  } finally {
    release?.();
    await page.evaluate(() => window.__kw?.factory.clearPersisted()).catch(() => {});
    await page.close();
    await busy.stop();
  }
});

test("copies are kept per identity, under a hash: one user never starts from another's copy", async () => {
  const page = await browser.context.newPage();
  const start = async (who) => {
    await page.goto(BLANK());
    await page.evaluate(openPods, { name: 'ids', intervalMs: 100, ...who });
    await until(() => page.evaluate(() => window.__kw.firstRows), 20_000, 'rows');
    return (await page.evaluate(() => window.__kw.firstRows.status)).phase;
  };
  const stored = () => page.evaluate(storedMeta, 'ids');
  try {
    assert.notEqual(await start({ token: 'alice-token' }), 'stored', 'nothing stored yet');
    await until(async () => (await stored()).length === 1, 20_000, "alice's copy");
    await page.evaluate(() => window.__kw.factory.shutdown());
    assert.notEqual(await start({ token: 'bob-token' }), 'stored', "bob does not start from alice's copy");
    await until(async () => (await stored()).length === 2, 20_000, "bob's copy beside it");
    await page.evaluate(() => window.__kw.factory.shutdown());
    assert.equal(await start({ token: 'alice-token' }), 'stored', 'alice starts warm');
    await page.evaluate(() => window.__kw.factory.shutdown());
    // An explicit identity is one more user; the same one again starts warm.
    assert.notEqual(await start({ identity: 'carol' }), 'stored');
    await until(async () => (await stored()).length === 3, 20_000, "carol's copy");
    await page.evaluate(() => window.__kw.factory.shutdown());
    assert.equal(await start({ identity: 'carol' }), 'stored');
    // Neither a token nor an identity is written anywhere in the database.
    const everything = await page.evaluate(() => new Promise((resolve) => {
      const req = indexedDB.open('kubewasm:ids');
      req.onsuccess = () => {
        const tx = req.result.transaction(['meta', 'objects']);
        const keys = tx.objectStore('meta').getAllKeys();
        const metas = tx.objectStore('meta').getAll();
        const objKeys = tx.objectStore('objects').getAllKeys();
        tx.oncomplete = () => { req.result.close(); resolve(JSON.stringify([keys.result, metas.result, objKeys.result])); };
      };
    }));
    for (const secret of ['alice', 'bob', 'carol']) assert.ok(!everything.includes(secret), `${secret} is not stored`);
    // A token provider needs an explicit identity.
    const err = await page.evaluate(() => {
      try {
        new window.__kw.m.InformerFactory(new window.__kw.m.KubeClient({ server: location.origin, tokenProvider: () => 't' }), { persist: { name: 'ids' } });
        return null;
      } catch (e) {
        return { reason: e.reason, message: e.message };
      }
    });
    assert.equal(err?.reason, 'Invalid');
    assert.match(err.message, /identity/);
  } finally {
    await page.evaluate(() => window.__kw?.factory.clearPersisted()).catch(() => {});
    await page.close();
  }
});

test('a copy is read only into a cache of its shape: metadata-only and full copies are kept apart, a changed transform replaces its copy', async () => {
  const page = await browser.context.newPage();
  const start = async (shape) => {
    await page.goto(BLANK());
    await page.evaluate(openPods, { name: 'shapes', intervalMs: 100, shape });
    await until(() => page.evaluate(() => window.__kw.firstRows), 20_000, 'rows');
    await page.evaluate(() => window.__kw.pods.waitForSync());
    const first = await page.evaluate(() => {
      const [p] = window.__kw.pods.getSnapshot();
      return { kind: p.kind, spec: p.spec !== undefined, status: p.status !== undefined };
    });
    return { warm: (await page.evaluate(() => window.__kw.firstRows.status)).phase === 'stored', ...first };
  };
  const stored = () => page.evaluate(storedMeta, 'shapes');
  const stop = () => page.evaluate(() => window.__kw.factory.shutdown());
  try {
    assert.deepEqual(await start('metadata'), { warm: false, kind: 'PartialObjectMetadata', spec: false, status: false });
    await until(async () => (await stored()).length === 1, 20_000, 'the metadata-only copy');
    await stop();
    assert.deepEqual(await start(undefined), { warm: false, kind: 'Pod', spec: true, status: true }, 'a full cache does not start from a metadata-only copy');
    await until(async () => (await stored()).length === 2, 20_000, 'the plain copy beside it');
    await stop();
    assert.deepEqual(await start('transform'), { warm: false, kind: 'Pod', spec: true, status: false }, 'a transformed cache does not start from the plain copy');
    // A transform known by other source text (a new deploy's) replaces the
    // copy written without it: copies do not pile up with every deploy.
    const transformed = (all) => all.filter((m) => m.key.includes('|transform:'));
    await until(async () => transformed(await stored()).length === 1, 20_000, 'the transformed copy');
    await until(async () => (await stored()).length === 2, 20_000, 'the plain copy swept');
    await stop();
    assert.deepEqual(await start('metadata'), { warm: true, kind: 'PartialObjectMetadata', spec: false, status: false }, 'each starts warm from its own');
    await stop();
    assert.deepEqual(await start('transform'), { warm: true, kind: 'Pod', spec: true, status: false });
    await stop();
    assert.deepEqual(await start(undefined), { warm: false, kind: 'Pod', spec: true, status: true }, 'the swept copy is gone');
  } finally {
    await page.evaluate(() => window.__kw?.factory.clearPersisted()).catch(() => {});
    await page.close();
  }
});

test('two tabs persisting one copy: one writes at a time, the other takes over when it closes', async () => {
  const pages = [await browser.context.newPage(), await browser.context.newPage()];
  const heldLocks = (page) => page.evaluate(async () => (await navigator.locks.query()).held.filter((l) => l.name.startsWith('kubewasm:tabs|')).length);
  try {
    for (const p of pages) {
      await p.goto(BLANK());
      await p.evaluate(openPods, { name: 'tabs', intervalMs: 100 });
      await p.evaluate(() => window.__kw.pods.waitForSync());
    }
    await until(async () => (await pages[0].evaluate(storedMeta, 'tabs')).length === 1, 20_000, 'a stored copy');
    assert.equal(await heldLocks(pages[1]), 1, 'one writer for the copy');
    // Whichever tab writes, close the first: the other one writes from then on.
    await pages[0].close();
    await sim.call('/sim/churn/steps', { steps: 50, seed: 5 });
    const want = await simPods();
    await until(async () => sorted(await cacheState(pages[1])) === sorted(want), 20_000, 'the remaining tab is current');
    await until(async () => (await heldLocks(pages[1])) === 1, 5_000, 'the remaining tab writes');
    const rv = (await sim.call('/sim/stats')).resourceVersion;
    await until(async () => (await pages[1].evaluate(storedMeta, 'tabs')).some((m) => Number(m.rv) >= Number(rv) && m.count === Object.keys(want).length), 20_000, 'the copy caught up');
    // The copy is whole: a new tab starts from it and matches the sim.
    await pages[1].goto(BLANK());
    await pages[1].evaluate(openPods, { name: 'tabs', intervalMs: 100 });
    await until(() => pages[1].evaluate(() => window.__kw.firstRows), 20_000, 'rows');
    assert.equal((await pages[1].evaluate(() => window.__kw.firstRows.status)).phase, 'stored');
    assert.equal(sorted(await cacheState(pages[1])), sorted(want), 'the stored copy equals the sim');
  } finally {
    await pages[1].evaluate(() => window.__kw?.factory.clearPersisted()).catch(() => {});
    for (const p of pages) await p.close().catch(() => {});
  }
});

test('clearPersisted in one tab stops every other tab persisting under the name, one that shut down and started again too: a logout stays a logout', async () => {
  const pages = [await browser.context.newPage(), await browser.context.newPage()];
  const exists = (page) => page.evaluate(async () => (await indexedDB.databases()).some((d) => d.name === 'kubewasm:logout'));
  try {
    for (const p of pages) {
      await p.goto(BLANK());
      await p.evaluate(openPods, { name: 'logout', intervalMs: 100 });
      await p.evaluate(() => window.__kw.pods.waitForSync());
    }
    await until(async () => (await pages[0].evaluate(storedMeta, 'logout')).length === 1, 20_000, 'a stored copy');
    // The other tab shuts its factory down and uses it again (a route
    // change): it still hears of the clear.
    await pages[1].evaluate(async () => {
      const w = window.__kw;
      w.factory.shutdown();
      w.pods = w.factory.informer({ version: 'v1', resource: 'pods' });
      w.factory.start();
      await w.pods.waitForSync();
    });
    await pages[0].evaluate(() => window.__kw.factory.clearPersisted());
    // Changes keep coming to the other tab, which would write within 100 ms.
    await sim.call('/sim/churn/steps', { steps: 20, seed: 9 });
    const other = () => pages[1].evaluate(() => window.__kw.pods.status.persistence);
    await until(async () => (await other()).enabled === false, 5_000, 'the other tab stopped persisting');
    assert.match((await other()).warning ?? '', /another tab cleared/);
    const want = await simPods();
    await until(async () => sorted(await cacheState(pages[1])) === sorted(want), 20_000, 'the other tab stays live');
    // Stopped writing, and a write that crossed the clear deleted too.
    await until(async () => !(await exists(pages[1])), 5_000, 'no copy was written back');
  } finally {
    for (const p of pages) await p.close().catch(() => {});
  }
});

test('a corrupted copy, a foreign database and other schemas each leave the page working, with the warning shown', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(BLANK());
    // A copy to corrupt: written by a first run.
    await page.evaluate(openPods, { name: 'corrupt', intervalMs: 100 });
    await until(async () => (await page.evaluate(storedMeta, 'corrupt')).some((m) => m.count > 0), 20_000, 'a stored copy');
    await page.evaluate(() => window.__kw.factory.shutdown());
    await page.goto(BLANK());
    await page.evaluate(() => new Promise((resolve, reject) => {
      const req = indexedDB.open('kubewasm:corrupt');
      req.onsuccess = () => {
        const db = req.result;
        const tx = db.transaction('objects', 'readwrite');
        const store = tx.objectStore('objects');
        const cursor = store.openCursor();
        cursor.onsuccess = () => {
          // Same layout, bytes that are not JSON.
          const part = cursor.result?.value;
          if (part) cursor.result.update({ ...part, bytes: part.bytes.fill(0x7b) });
        };
        tx.oncomplete = () => { db.close(); resolve(); };
        tx.onerror = () => reject(tx.error);
      };
      req.onerror = () => reject(req.error);
    }));
    // A database of the same name that someone else made; one of an older
    // layout; one of a newer version than this build knows.
    const makeDb = ([name, version, stores]) => new Promise((resolve, reject) => {
      const req = indexedDB.open(name, version);
      req.onupgradeneeded = () => stores.forEach((s) => req.result.createObjectStore(s));
      req.onsuccess = () => { req.result.close(); resolve(); };
      req.onerror = () => reject(req.error);
    });
    // A copy whose first bucket holds its first object in every entry: as
    // many entries as the stored count says, far fewer objects.
    await page.evaluate(openPods, { name: 'dupes', intervalMs: 100 });
    await until(async () => (await page.evaluate(storedMeta, 'dupes')).some((m) => m.count > 0), 20_000, 'a stored copy to repeat');
    await page.evaluate(() => window.__kw.factory.shutdown());
    await page.goto(BLANK());
    await page.evaluate(() => new Promise((resolve, reject) => {
      const req = indexedDB.open('kubewasm:dupes');
      req.onsuccess = () => {
        const db = req.result;
        const tx = db.transaction('objects', 'readwrite');
        const cursor = tx.objectStore('objects').openCursor();
        cursor.onsuccess = () => {
          const part = cursor.result?.value;
          if (!part) return;
          const first = part.bytes.slice(0, part.ends[0]);
          const bytes = new Uint8Array(first.length * part.ends.length);
          for (let i = 0; i < part.ends.length; i++) bytes.set(first, i * first.length);
          cursor.result.update({ bytes, ends: part.ends.map((_, i) => (i + 1) * first.length) });
        };
        tx.oncomplete = () => { db.close(); resolve(); };
        tx.onerror = () => reject(tx.error);
      };
      req.onerror = () => reject(req.error);
    }));
    await page.evaluate(makeDb, ['kubewasm:foreign', 1, ['somethingElse']]);
    await page.evaluate(makeDb, ['kubewasm:old', 1, ['meta', 'objects']]);
    await page.evaluate(makeDb, ['kubewasm:newer', 1000, ['meta', 'objects']]);
    const cases = [['corrupt', /discarded: an object is not valid/], ['dupes', /discarded: an object is stored twice/], ['foreign', /not written by kubewasm/], ['old', /older schema/], ['newer', /unknown newer schema/]];
    for (const [name, warning] of cases) {
      await page.goto(BLANK());
      await page.evaluate(openPods, { name, intervalMs: 100 });
      await page.evaluate(() => window.__kw.pods.waitForSync());
      const status = await page.evaluate(() => window.__kw.pods.status);
      assert.match(status.persistence?.warning ?? '', warning, `${name}: ${JSON.stringify(status)}`);
      assert.notEqual((await page.evaluate(() => window.__kw.firstRows.status)).phase, 'stored', `${name}: a cold start`);
      assert.equal(sorted(await cacheState(page)), sorted(await simPods()), `${name}: the cache equals the sim`);
      // Persisting again: the next start is warm.
      await until(async () => (await page.evaluate(storedMeta, name)).some((m) => m.count > 0), 20_000, `${name}: stored again`);
      await page.evaluate(() => window.__kw.factory.clearPersisted());
    }
  } finally {
    await page.close();
  }
});

test('a quota error turns persistence off with a warning; the informer stays live', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(BLANK());
    await page.evaluate(() => {
      IDBObjectStore.prototype.put = function () {
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      };
    });
    await page.evaluate(openPods, { name: 'quota', intervalMs: 100 });
    await page.evaluate(() => window.__kw.pods.waitForSync());
    await until(() => page.evaluate(() => window.__kw.pods.status.persistence?.enabled === false), 5_000, 'persistence off');
    const status = await page.evaluate(() => window.__kw.pods.status);
    assert.match(status.persistence.warning, /quota/);
    const r = await fetch(`${sim.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'after-quota', namespace: 'default' } }) });
    assert.equal(r.status, 201);
    await until(() => page.evaluate(() => window.__kw.pods.lister().get('after-quota', 'default') !== undefined), 10_000, 'still live').catch(async (e) => {
      throw new Error(`${e.message}: ${await page.evaluate(() => JSON.stringify(window.__kw.pods.status))}`);
    });
    assert.equal(await page.evaluate(() => window.__kw.pods.status.phase), 'watching');
  } finally {
    await page.evaluate(() => window.__kw?.factory.shutdown()).catch(() => {});
    await page.close();
  }
});

test('where IndexedDB is denied (an opaque origin), persistence says it is off from the first read; the informer lists', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(BLANK());
    // What Chromium does in a sandboxed frame without allow-same-origin.
    await page.evaluate(() => {
      IDBFactory.prototype.open = function () {
        throw new DOMException('Access to the IndexedDB API is denied in this context.', 'SecurityError');
      };
    });
    // No write is due for a minute: the read alone has to tell.
    await page.evaluate(openPods, { name: 'denied', intervalMs: 60_000 });
    assert.equal(await page.evaluate(() => window.__kw.pods.waitForSync()), true);
    const status = await page.evaluate(() => window.__kw.pods.status);
    assert.equal(status.persistence?.enabled, false, JSON.stringify(status));
    assert.match(status.persistence.warning, /SecurityError|denied/);
    assert.equal(status.phase, 'watching');
    assert.ok(await page.evaluate(() => window.__kw.pods.lister().list().length) > 0);
  } finally {
    await page.evaluate(() => window.__kw?.factory.shutdown()).catch(() => {});
    await page.close();
  }
});

test('copies of scopes that come and go are bounded: past maxCopies the least recently written go', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(BLANK());
    const scopes = ['a', 'b', 'c', 'd', 'e'];
    for (const [i, t] of scopes.entries()) {
      await page.evaluate(async (t) => {
        const m = await import('/plain/pkg/web/index.js');
        await m.default();
        window.__f ??= new m.InformerFactory(new m.KubeClient({ server: location.origin }), { persist: { name: 'bounded', intervalMs: 50, maxCopies: 3 } });
        window.__inf = window.__f.informer({ version: 'v1', resource: 'namespaces', labelSelector: `route=${t}` });
        window.__f.start();
        await window.__inf.waitForSync();
      }, t);
      // Each scope's copy is written before the next route, which drops this one's informer.
      await until(async () => (await page.evaluate(storedMeta, 'bounded')).some((m) => m.key.includes(`route=${t}`)), 10_000, `copy of ${t}`);
      await page.evaluate(() => window.__inf.stop());
      const count = (await page.evaluate(storedMeta, 'bounded')).length;
      assert.ok(count <= 3, `after ${i + 1} scopes, ${count} copies`);
    }
    const kept = (await page.evaluate(storedMeta, 'bounded')).map((m) => m.key);
    assert.equal(kept.length, 3, kept.join());
    for (const t of ['c', 'd', 'e']) assert.ok(kept.some((k) => k.includes(`route=${t}`)), `${t} kept: ${kept}`);
  } finally {
    await page.evaluate(() => window.__f?.shutdown()).catch(() => {});
    await page.close();
  }
});

test('the dashboard persists by default: a reload shows stored rows, says so, then goes live', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(`${sim.url}/#pods`);
    const synced = () => page.evaluate(() => window.kubewasmDashboard?.ready && window.kubewasmDashboard.status('pods')?.synced);
    await until(synced, 20_000, 'the dashboard is up');
    const count = Object.keys(await simPods()).length;
    await until(async () => (await page.evaluate(storedMeta, 'kubewasm-dashboard')).some((m) => m.count === count), 20_000, 'the stored copy');
    // Expire the stored RV so the copy stays unconfirmed while the informer backs off and relists.
    await page.goto('about:blank');
    await sim.call('/sim/churn/steps', { steps: 20, seed: 3 });
    await sim.call('/sim/compact', {});
    await page.goto(`${sim.url}/#pods`);
    // Rows while the informer says its data is stored: they came from IndexedDB.
    await until(() => page.evaluate(() => window.kubewasmDashboard?.ready && window.kubewasmDashboard.status('pods')?.phase === 'stored'
      && window.kubewasmDashboard.rows() > 0), 10_000, 'stored rows');
    await until(async () => /stored copy from/.test(await page.locator('#status').textContent()), 5_000, 'the pill says the rows are stored');
    await until(() => page.evaluate(() => window.kubewasmDashboard.status('pods').phase === 'watching'), 20_000, 'live');
    const want = await simPods();
    await until(async () => sorted(await page.evaluate(() => window.kubewasmDashboard.state('pods'))) === sorted(want), 20_000, 'the dashboard equals the sim');
    await until(async () => !/stored/.test(await page.locator('#status').textContent()), 5_000, 'the pill no longer says stored');
  } finally {
    await page.evaluate(() => window.kubewasmDashboard?.current()?.release?.()).catch(() => {});
    await page.close();
  }
});

test('a restored copy the server has not confirmed is not written back: an offline visit keeps its date', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(BLANK());
    await page.evaluate(openPods, { name: 'offline-age', intervalMs: 100 });
    const written = async () => (await page.evaluate(storedMeta, 'offline-age')).find((m) => m.rv);
    const first = await until(written, 30_000, 'a complete copy written');
    await page.evaluate(() => window.__kw.factory.shutdown());
    const args = ['--namespaces', '3', '--pods', String(PODS)];
    const port = Number(new URL(sim.url).port);
    await sim.stop();
    // Offline: the copy is shown, and it stays what it was, dated as it was.
    await page.evaluate(openPods, { name: 'offline-age', intervalMs: 100 });
    const shown = await until(() => page.evaluate(() => window.__kw.firstRows?.status), 20_000, 'the stored rows');
    assert.equal(shown.phase, 'stored');
    assert.equal(shown.storedAt, first.savedAt);
    await new Promise((r) => setTimeout(r, 1_500)); // fifteen write intervals
    await page.evaluate(() => window.__kw.factory.shutdown());
    assert.equal((await written()).savedAt, first.savedAt, 'not written back while unconfirmed');
    sim = await startSim(args, { port });
  } finally {
    await page.close();
  }
});
