// Informer lifecycle through the package: reference counts with a grace
// period, and pausing while the page is hidden (forwarded with setVisible).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { spawnSync } from 'node:child_process';
import { KubeClient, InformerFactory, type Diff, type KubeObject } from 'kubewasm';

import { openWatches, server, sim, simState as simStateOf, token, until as untilDefault } from './sim.js';

const until = (cond: () => boolean | Promise<boolean>, ms = 15_000) => untilDefault(cond, ms);
const simState = async () =>
  Object.fromEntries(Object.entries(await simStateOf('configmaps')).filter(([k]) => k.startsWith('lifecycle/')));
const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
const cacheState = (objs: readonly KubeObject[]) => Object.fromEntries(objs.map((o) => [keyOf(o), o.metadata.resourceVersion ?? '']));
const sorted = (o: Record<string, string>) => JSON.stringify(Object.entries(o).sort());

/**
 * Note every delay given to the global setTimeout (the package's timers go
 * through it) until `globalThis.setTimeout = original` puts it back.
 */
const spyTimeouts = () => {
  const delays: number[] = [];
  const original = globalThis.setTimeout;
  globalThis.setTimeout = ((f: () => void, ms?: number, ...rest: unknown[]) => {
    delays.push(Number(ms));
    return original(f, ms, ...rest);
  }) as typeof setTimeout;
  return { delays, original };
};

const client = new KubeClient({ server, token });
const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'lifecycle' });

test('an informer stops watching a grace period after its last user lets go, and resumes when taken again', async () => {
  await sim('/sim/faults/clear', {});
  await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'lifecycle' }, data: { v: '1' } });
  const factory = new InformerFactory(client, { releaseGraceMs: 300 });
  try {
    const base = await openWatches();
    const opts = { version: 'v1', resource: 'configmaps', namespace: 'lifecycle' };
    const inf = factory.informer(opts);
    factory.start();
    await inf.waitForSync();
    await until(async () => (await openWatches()) === base + 1);
    const off = inf.subscribe(() => {});
    const offAdd = inf.on('add', () => {});
    inf.release();
    inf.release();
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(await openWatches(), base + 1, 'a subscription and a handler still hold it');
    off();
    offAdd();
    offAdd();
    // Taken again within the grace period: still live, the same cache.
    const again = factory.informer(opts);
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(await openWatches(), base + 1);
    assert.equal(again.status.phase, 'watching');
    again.release();
    await until(async () => (await openWatches()) === base);
    assert.equal(again.status.phase, 'paused');
    assert.equal(again.getSnapshot().length, 1, 'the cache is kept');
    // Changes made meanwhile arrive when it is taken again (from the last RV).
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: 'lifecycle' }, data: { v: '1' } });
    const third = factory.informer(opts);
    await until(() => third.lister().list({}).length === 2);
    assert.equal(third.status.relists, 0, 'resumed from the last resourceVersion without a list');
    assert.equal(await openWatches(), base + 1);
    third.release();
  } finally {
    factory.shutdown();
  }
});

test('an informer nobody holds past releasedCacheMs is dropped with its cache; its scope is then made anew', async () => {
  await sim('/sim/faults/clear', {});
  await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'evicted', namespace: 'lifecycle' }, data: { v: '1' } });
  const factory = new InformerFactory(client, { releaseGraceMs: 50, releasedCacheMs: 200 });
  try {
    const base = await openWatches();
    const opts = { version: 'v1', resource: 'configmaps', namespace: 'lifecycle' };
    const inf = factory.informer(opts);
    factory.start();
    await inf.waitForSync();
    const cached = inf.getSnapshot().length;
    assert.ok(cached > 0);
    inf.release();
    await until(() => inf.status.phase === 'paused');
    await until(() => inf.status.phase === 'stopped');
    await until(async () => (await openWatches()) <= base);
    // The dropped informer's old handle takes no new users: they would see
    // a cache that no longer follows the cluster.
    for (const use of [() => inf.subscribe(() => {}), () => inf.lister(), () => inf.on('add', () => {}), () => inf.scoped({})]) {
      assert.throws(use, (e: any) => e.name === 'KubeError' && e.reason === 'Invalid' && /releasedCacheMs/.test(e.message));
    }
    const next = factory.informer(opts);
    assert.notEqual(next.status.phase, 'stopped', 'a new informer for the scope');
    await next.waitForSync();
    assert.equal(next.getSnapshot().length, cached);
    assert.notEqual(next.getSnapshot()[0], inf.getSnapshot()[0], 'listed anew, not the dropped cache');
    // Held again in time, an informer is kept.
    next.release();
    await until(() => next.status.phase === 'paused');
    const held = factory.informer(opts);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(held.status.phase, 'watching');
    held.release();
  } finally {
    factory.shutdown();
  }
});

test('releasedCacheMs: Infinity keeps a released cache, and a delay past a timer\'s range is waited in steps', async () => {
  await sim('/sim/faults/clear', {});
  const opts = { version: 'v1', resource: 'configmaps', namespace: 'lifecycle' };
  for (const keep of [Infinity, 1e12]) {
    const factory = new InformerFactory(client, { releaseGraceMs: 20, releasedCacheMs: keep });
    const { delays, original } = spyTimeouts();
    try {
      const inf = factory.informer(opts);
      factory.start();
      await inf.waitForSync();
      inf.release();
      await until(() => inf.status.phase === 'paused');
      // Hosts fire a delay above 2^31 - 1 ms at once: it must not reach them.
      if (keep === Infinity) {
        assert.ok(!delays.some((d) => d > 2 ** 31 - 1), `timers asked for: ${JSON.stringify(delays)}`);
      } else {
        await until(() => delays.includes(2 ** 31 - 1));
        assert.ok(!delays.some((d) => d > 2 ** 31 - 1), `timers asked for: ${JSON.stringify(delays)}`);
      }
      // Let a timer that fired at once (hosts make it 1 ms) have run: the
      // cache is still there.
      await new Promise((r) => original(r, 20));
      assert.equal(inf.status.phase, 'paused', `releasedCacheMs: ${keep}`);
      assert.doesNotThrow(() => inf.lister());
    } finally {
      globalThis.setTimeout = original;
      factory.shutdown();
    }
  }
});

test('a freed factory stops what nobody holds at once, and what is still held once it is let go', async () => {
  await sim('/sim/faults/clear', {});
  await until(async () => (await openWatches()) === 0);
  const opts = { version: 'v1', resource: 'configmaps', namespace: 'lifecycle' };
  const factory = new InformerFactory(client, { releaseGraceMs: 100 });
  const released = factory.informer({ ...opts, labelSelector: 'a=b' });
  const held = factory.informer(opts);
  factory.start();
  await Promise.all([released.waitForSync(), held.waitForSync()]);
  await until(async () => (await openWatches()) === 2);
  released.release();
  factory.free();
  // Nobody can ask the freed factory for it again: stopped now, not after the grace period.
  assert.equal(released.status.phase, 'stopped');
  assert.equal(held.status.phase, 'watching', 'a held informer keeps watching');
  // Its handle freed too, nothing reaches the informer but its grace period:
  // that still closes the watch (it kept watching for the life of the process).
  held.free();
  await until(async () => (await openWatches()) === 0);
});

test('a subscription, a handler or a registration is all an app need keep: with its handle and factory collected they go on being called', async () => {
  await sim('/sim/faults/clear', {});
  await until(async () => (await openWatches()) === 0);
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  let collected = 0;
  const registry = new FinalizationRegistry(() => void collected++);
  const seen = { diffs: 0, adds: 0, statuses: 0, registered: 0 };
  // Only the unsubscribe functions are kept (and calling them is optional).
  const offs = (() => {
    const factory = new InformerFactory(client, { releaseGraceMs: 100 });
    const cms = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'lifecycle' });
    registry.register(factory, 'factory');
    registry.register(cms, 'handle');
    // Another informer, held by nothing but a registration.
    const registered = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'lifecycle', labelSelector: 'kept=yes' });
    registry.register(registered, 'registered');
    const reg = registered.addEventHandler({ add: () => void seen.registered++ });
    const off = [cms.subscribe(() => void seen.diffs++), cms.on('add', () => void seen.adds++), cms.on('status', () => void seen.statuses++), () => reg.remove()];
    factory.start();
    return off;
  })();
  await until(() => seen.diffs > 0);
  await until(async () => {
    gc();
    await new Promise((r) => setTimeout(r, 10));
    return collected === 3;
  });
  const before = { ...seen };
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'lifecycle' });
  await cms.create({ metadata: { name: 'lifecycle-kept-by-listeners', labels: { kept: 'yes' } } } as KubeObject);
  try {
    await until(() => seen.adds > before.adds && seen.diffs > before.diffs && seen.registered > before.registered);
    assert.equal(await openWatches(), 2);
  } finally {
    await cms.delete('lifecycle-kept-by-listeners');
  }
  // The last listener gone, nothing holds it: its grace period closes the watch.
  for (const off of offs) off();
  await until(async () => (await openWatches()) === 0);
});

test('an informer released without ever starting (a server render) leaves nothing that keeps Node running', () => {
  // The grace period runs on a timer that does not hold the process: a
  // script that rendered and let go ends at once.
  const entry = JSON.stringify(import.meta.resolve('kubewasm'));
  const code = `import(${entry}).then((m) => {
    const factory = new m.InformerFactory(new m.KubeClient({ server: 'http://127.0.0.1:9' }), { releaseGraceMs: 60000 });
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    pods.release();
    // Kept, so no collection ends its grace period early.
    globalThis.kept = [factory, pods];
    console.log('released');
  })`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 20_000 });
  assert.match(r.stdout, /released/, r.stderr);
  assert.equal(r.signal, null, 'the process ended by itself, before the 20 s deadline (the grace period is 60 s)');
  assert.equal(r.status, 0, r.stderr);
});

test('after shutdown, releasing or freeing an informer starts no grace period (no timer keeps Node alive)', async () => {
  await sim('/sim/faults/clear', {});
  const GRACE = 123_457;
  const factory = new InformerFactory(client, { releaseGraceMs: GRACE });
  const opts = { version: 'v1', resource: 'configmaps', namespace: 'lifecycle' };
  const released = factory.informer(opts);
  const freed = factory.informer({ ...opts, labelSelector: 'x=y' });
  factory.start();
  await Promise.all([released.waitForSync(), freed.waitForSync()]);
  factory.shutdown();
  const { delays, original } = spyTimeouts();
  try {
    released.release();
    freed.free();
    // A grace period starts on the executor's next turn: let it run a few.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  } finally {
    globalThis.setTimeout = original;
  }
  assert.ok(!delays.includes(GRACE), `timers asked for: ${JSON.stringify(delays)}`);
});

test('hidden past the delay, informers close their watches; visible again, one diff brings the cache to the sim', async () => {
  await sim('/sim/faults/clear', {});
  for (const n of ['c', 'd', 'e']) {
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: 'lifecycle' }, data: { v: '1' } }).catch(() => {});
  }
  const factory = new InformerFactory(client, { hiddenPauseMs: 200 });
  try {
    // The sim counts every watch: let an earlier test's finish closing, so
    // the count is this informer's alone.
    await until(async () => (await openWatches()) === 0);
    const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'lifecycle' });
    factory.start();
    await inf.waitForSync();
    const diffs: Diff[] = [];
    inf.subscribe((d) => diffs.push(d));
    await until(async () => (await openWatches()) === 1);
    factory.setVisible(false);
    await until(async () => (await openWatches()) === 0);
    assert.equal(inf.status.phase, 'paused');
    // Meanwhile: an update, a deletion, a creation, and a compaction.
    await cms.patch('c', undefined, { data: { v: '2' } }, 'merge');
    await cms.delete('d');
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f', namespace: 'lifecycle' }, data: { v: '1' } });
    await sim('/sim/compact', {});
    diffs.length = 0;
    factory.setVisible(true);
    const want = await simState();
    await until(() => sorted(cacheState(inf.lister().list({}))) === sorted(want));
    await until(() => diffs.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(diffs.length, 1, `one diff for the catch-up, got ${JSON.stringify(diffs)}`);
    const d = diffs[0]!;
    assert.ok(d.updated.includes('lifecycle/c'));
    assert.ok(d.removed.includes('lifecycle/d'));
    assert.ok(d.added.includes('lifecycle/f'));
    assert.equal(await openWatches(), 1);
  } finally {
    factory.shutdown();
  }
});

test('persist where there is no IndexedDB (Node): a warning, no copy, and the informer works as usual', async () => {
  const factory = new InformerFactory(client, { persist: { name: 'node-test', intervalMs: 50 } });
  try {
    const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'lifecycle' });
    // Off from the start, and it says why.
    assert.equal(inf.status.persistence?.enabled, false);
    assert.match(inf.status.persistence?.warning ?? '', /IndexedDB is not available/);
    factory.start();
    await inf.waitForSync();
    assert.notEqual(inf.status.phase, 'stored');
    assert.equal(inf.status.persistence?.enabled, false);
    // Nothing tried to read a copy either: the reason is still the first one.
    assert.match(inf.status.persistence?.warning ?? '', /IndexedDB is not available/);
    assert.equal(sorted(cacheState(inf.getSnapshot())), sorted(await simState()));
    await factory.clearPersisted();
  } finally {
    factory.shutdown();
  }
  // A token provider without an identity could mix users' copies: refused.
  assert.throws(
    () => new InformerFactory(new KubeClient({ server, tokenProvider: () => token ?? '' }), { persist: { name: 'node-test' } }),
    (e: unknown) => e instanceof Error && /identity/.test(e.message),
  );
});
