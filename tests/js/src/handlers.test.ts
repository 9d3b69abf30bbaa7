// Handler delivery through the package: one order per informer, waitForSync
// that waits for handlers, registrations, failures with their key, bounded views.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, InformerFactory, KubeError, type KubeObject } from 'kubewasm';
import { server, sim, simState, token, until as untilDefault } from './sim.js';

const until = (cond: () => boolean | Promise<boolean>, ms = 15_000) => untilDefault(cond, ms);
const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`.replace(/^\//, '');
const cacheState = (objs: readonly KubeObject[]) =>
  Object.fromEntries(objs.map((o) => [keyOf(o), o.metadata.resourceVersion ?? '']));

const client = new KubeClient({ server, token });

test('waitForSync resolves only after every handler has the initial list', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 3, pods: 2000, seed: 21 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    // Adds say whether the object came with the initial list (client-go's isInInitialList).
    const initialFlags = { on: new Map<string, boolean>(), reg: new Map<string, boolean>(), late: new Map<string, boolean>() };
    const viaOn = new Set<string>();
    pods.on('add', (o, initial) => { viaOn.add(keyOf(o)); initialFlags.on.set(keyOf(o), initial); });
    const viaReg = new Set<string>();
    const reg = pods.addEventHandler({ add: (o, initial) => { viaReg.add(keyOf(o)); initialFlags.reg.set(keyOf(o), initial); } });
    assert.equal(reg.hasSynced, false);
    factory.start();
    await pods.waitForSync();
    assert.equal(viaOn.size, 2000, 'on() handler has every object when waitForSync resolves');
    assert.equal(viaReg.size, 2000, 'addEventHandler registration too');
    assert.equal(reg.hasSynced, true);
    assert.notEqual(pods.status.phase, 'listing');
    // A registration made now replays the cache and syncs on its own.
    const late = new Set<string>();
    const lateReg = pods.addEventHandler({ add: (o) => late.add(keyOf(o)) });
    assert.equal(await lateReg.waitForSync(), true);
    assert.equal(late.size, 2000);
    // So does a late on('add'), and informer.waitForSync() waits for it.
    const lateOn = new Set<string>();
    pods.on('add', (o, initial) => { lateOn.add(keyOf(o)); initialFlags.late.set(keyOf(o), initial); });
    await pods.waitForSync();
    assert.equal(lateOn.size, 2000);
    for (const [via, flags] of Object.entries(initialFlags)) {
      assert.equal(flags.size, 2000, via);
      assert.ok([...flags.values()].every((f) => f === true), `${via}: the first list's adds are flagged initial`);
    }
    // An object created now is not.
    const namespace = pods.getSnapshot()[0]!.metadata.namespace!;
    const created = await client.resource({ version: 'v1', resource: 'pods', namespace }).create(
      { metadata: { name: 'made-after-sync' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as KubeObject,
      {},
    );
    const key = keyOf(created);
    await until(() => initialFlags.on.has(key) && initialFlags.reg.has(key) && initialFlags.late.has(key));
    assert.deepEqual([initialFlags.on.get(key), initialFlags.reg.get(key), initialFlags.late.get(key)], [false, false, false]);
    lateReg.remove();
    assert.equal(lateReg.isRemoved, true);
    assert.equal(await lateReg.waitForSync(), true, 'synced before it was removed');
    assert.throws(() => pods.addEventHandler({}), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  } finally {
    factory.shutdown();
  }
});

test('a Map built from separate add/update/delete handlers equals the cache and the sim under churn and faults', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 3, pods: 2000, seed: 22 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    const mine = new Map<string, string>();
    pods.on('add', (o) => mine.set(keyOf(o), o.metadata.resourceVersion!));
    pods.on('update', (_old, o) => mine.set(keyOf(o), o.metadata.resourceVersion!));
    pods.on('delete', (o) => {
      if (o) mine.delete(keyOf(o));
    });
    const viaReg = new Map<string, string>();
    pods.addEventHandler({
      add: (o) => viaReg.set(keyOf(o), o.metadata.resourceVersion!),
      update: (_old, o) => viaReg.set(keyOf(o), o.metadata.resourceVersion!),
      delete: (o) => {
        if (o) viaReg.delete(keyOf(o));
      },
    });
    factory.start();
    await pods.waitForSync();
    assert.deepEqual(Object.fromEntries(mine), cacheState(pods.getSnapshot()), 'at waitForSync');
    await sim('/sim/faults', { dropWatchesAfterEvents: 3, status429: { count: 2, retryAfterSeconds: 1 }, status500: { count: 2 }, splitChunks: true, seed: 5 });
    for (let round = 0; round < 4; round++) {
      await sim('/sim/churn/steps', { steps: 150, seed: 100 + round });
      if (round === 1) await sim('/sim/compact', {});
      await sim('/sim/drop-watches', {});
    }
    await sim('/sim/faults/clear', {});
    await sim('/sim/churn/steps', { steps: 20, seed: 999 });
    const want = await simState();
    await until(() => {
      const cache = cacheState(pods.getSnapshot());
      return (
        JSON.stringify(Object.fromEntries([...mine].sort())) === JSON.stringify(Object.fromEntries(Object.entries(want).sort())) &&
        JSON.stringify(Object.fromEntries(Object.entries(cache).sort())) === JSON.stringify(Object.fromEntries(Object.entries(want).sort())) &&
        JSON.stringify(Object.fromEntries([...viaReg].sort())) === JSON.stringify(Object.fromEntries(Object.entries(want).sort()))
      );
    }, 30_000);
  } finally {
    factory.shutdown();
  }
});

test('an object the cache cannot apply reaches error listeners with its key and the rest syncs', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 2, pods: 50, seed: 23 });
  const factory = new InformerFactory(client);
  try {
    const victim = (await client.resource({ version: 'v1', resource: 'pods' }).list()).items[7]!;
    const victimKey = keyOf(victim);
    let throwing = true;
    const pods = factory.informer({
      version: 'v1',
      resource: 'pods',
      indexers: {
        byName: (o) => {
          if (throwing && keyOf(o) === victimKey) throw new Error('index function threw');
          return [o.metadata.name ?? ''];
        },
      },
    });
    const errors: KubeError[] = [];
    pods.on('error', (e) => errors.push(e as KubeError));
    factory.start();
    await pods.waitForSync();
    assert.equal(pods.getSnapshot().length, 49, 'the rest syncs');
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof KubeError);
    assert.equal(errors[0]!.key, victimKey);
    assert.equal(errors[0]!.reason, 'IndexFailed');
    assert.equal(pods.status.skipped, 1);
    assert.equal(pods.status.lastError?.key, victimKey);
    // Once the function works, a change to the object is cached.
    throwing = false;
    const ns = victim.metadata.namespace!;
    await client
      .resource({ version: 'v1', resource: 'pods', namespace: ns })
      .patch(victim.metadata.name!, undefined, { metadata: { labels: { touched: 'yes' } } }, 'merge');
    await until(() => pods.lister().get(victim.metadata.name!, ns) !== undefined);
  } finally {
    factory.shutdown();
  }
});

test('snapshots are shared per selector among the recent selectors; a live view keeps its own', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 2, pods: 40, seed: 24 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    await pods.waitForSync();
    const first = pods.scoped({ labelSelector: 'app' });
    const snap = first.getSnapshot();
    assert.equal(pods.scoped({ labelSelector: 'app' }).getSnapshot(), snap, 'same selector, same array');
    for (let i = 0; i < 20; i++) pods.scoped({ labelSelector: `k${i}` }).getSnapshot();
    assert.equal(first.getSnapshot(), snap, 'still cached among the recent selectors');
    for (let i = 0; i < 1000; i++) pods.scoped({ labelSelector: `x${i}` }).getSnapshot();
    assert.notEqual(pods.scoped({ labelSelector: 'app' }).getSnapshot(), snap, 'a new view of an old selector builds anew');
    assert.equal(first.getSnapshot(), snap, 'a live view keeps its own array');

    // A change elsewhere in the informer keeps a view's array; one inside it does not.
    const [a, b] = [...new Set(pods.getSnapshot().map((p) => p.metadata.namespace ?? ''))];
    assert.ok(a && b, 'two namespaces');
    const inA = pods.scoped({ namespace: a });
    const inB = pods.scoped({ namespace: b });
    const [snapA, snapB] = [inA.getSnapshot(), inB.getSnapshot()];
    const diffs: number[] = [];
    pods.subscribe((d) => diffs.push(d.version));
    const rc = client.resource({ version: 'v1', resource: 'pods', namespace: a });
    await rc.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'scoped-probe', namespace: a } }, {});
    try {
      await until(() => pods.lister().get('scoped-probe', a) !== undefined && diffs.length > 0);
      assert.equal(inB.getSnapshot(), snapB, `nothing changed in ${b}: the same array`);
      assert.notEqual(inA.getSnapshot(), snapA, `${a} gained a pod: a new array`);
      assert.equal(inA.getSnapshot().length, snapA.length + 1);
    } finally {
      await rc.delete('scoped-probe', a, {});
    }
  } finally {
    factory.shutdown();
  }
});

test('resyncMs delivers every cached object again to update handlers, old and new the same object', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 1, pods: 5, seed: 31 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods', resyncMs: 1000 });
    const viaOn = new Map<string, number>();
    pods.on('update', (oldObj, newObj) => {
      if (oldObj === newObj) viaOn.set(keyOf(newObj), (viaOn.get(keyOf(newObj)) ?? 0) + 1);
    });
    const viaReg = new Set<string>();
    pods.addEventHandler({ update: (oldObj, newObj) => void (oldObj === newObj && viaReg.add(keyOf(newObj))) });
    // A registration's own period (client-go's AddEventHandlerWithResyncPeriod): none, or a longer one.
    let none = 0;
    pods.addEventHandler({ update: (oldObj, newObj) => void (oldObj === newObj && none++) }, { resyncMs: 0 });
    const slower = new Map<string, number>();
    pods.addEventHandler({
      update: (oldObj, newObj) => {
        if (oldObj === newObj) slower.set(keyOf(newObj), (slower.get(keyOf(newObj)) ?? 0) + 1);
      },
    }, { resyncMs: 3000 });
    assert.throws(() => pods.addEventHandler({ add() {} }, { resync: 5 } as never), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
    assert.throws(() => pods.addEventHandler({ add() {} }, { resyncMs: -1 }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
    factory.start();
    await pods.waitForSync();
    // Twice for every object through on(), so it is periodic, not a one-off.
    await until(() => viaOn.size === 5 && [...viaOn.values()].every((n) => n >= 2) && viaReg.size === 5);
    assert.deepEqual(new Set(viaOn.keys()), new Set(pods.getSnapshot().map(keyOf)));
    // The 3 s registration: every object, less often than the 1 s ones.
    await until(() => slower.size === 5 && [...viaOn.values()].every((n) => n >= 4));
    const onCounts = Object.fromEntries(viaOn);
    for (const [k, n] of slower) assert.ok(n * 2 <= onCounts[k]!, `${k}: ${n} resyncs at 3 s, ${onCounts[k]} at 1 s`);
    assert.equal(none, 0, 'a registration with resyncMs 0 is not resynced');
  } finally {
    factory.shutdown();
  }
});

test('an async handler that rejects is reported to error listeners, and the other handlers go on', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 1, pods: 5, seed: 32 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    const errors: string[] = [];
    pods.on('error', (e) => errors.push(e instanceof Error ? e.message : String(e)));
    pods.on('add', async (o) => {
      await null;
      throw new Error(`async add ${keyOf(o)}`);
    });
    pods.addEventHandler({ add: () => Promise.reject(new Error('registration add')) });
    pods.subscribe(async () => {
      throw new Error('async subscriber');
    });
    pods.on('status', async () => {
      throw new Error('async status listener');
    });
    // An error listener's own rejection goes to the console, not unhandled.
    pods.on('error', async () => {
      throw new Error('async error listener');
    });
    const seen = new Set<string>();
    pods.on('add', (o) => seen.add(keyOf(o)));
    factory.start();
    await pods.waitForSync();
    // Left unhandled, any of these rejections fails this test file.
    const count = (f: (m: string) => boolean) => errors.filter(f).length;
    await until(
      () =>
        count((m) => m.startsWith('async add ')) === 5 &&
        count((m) => m === 'registration add') === 5 &&
        errors.includes('async subscriber') &&
        errors.includes('async status listener'),
    );
    assert.equal(seen.size, 5, 'the plain handler saw every object');
    assert.equal(errors.filter((m) => m.startsWith('async add ')).length, 5);
    assert.equal(errors.filter((m) => m === 'registration add').length, 5);
    assert.ok(errors.includes('async subscriber'), errors.join('; '));
    assert.ok(errors.includes('async status listener'), errors.join('; '));
  } finally {
    factory.shutdown();
  }
});

test('a delete seen on the watch is final; one a relist infers says its final state is unknown', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 2, pods: 40, seed: 31 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    const deletes: [string, boolean][] = [];
    pods.on('delete', (o, finalStateUnknown) => void deletes.push([keyOf(o), finalStateUnknown]));
    const viaReg: boolean[] = [];
    pods.addEventHandler({ delete: (_o, unknown) => void viaReg.push(unknown) });
    factory.start();
    await pods.waitForSync();
    // Seen on the watch.
    const victim = pods.getSnapshot()[0]!;
    await client.resource({ version: 'v1', resource: 'pods' }).delete(victim.metadata.name, victim.metadata.namespace);
    await until(() => deletes.length === 1);
    assert.deepEqual(deletes, [[keyOf(victim), false]]);
    // Missed: the watch is down (every API request fails) while pods go, and the
    // history is compacted, so the informer relists and infers the deletes.
    // From the store: the snapshot follows at the next frame, and may still hold the victim.
    const lister = pods.lister();
    const before = new Set(lister.list({}).map(keyOf));
    lister.free();
    assert.ok(!before.has(keyOf(victim)));
    await sim('/sim/faults', { status500: 100000 });
    await sim('/sim/drop-watches', {});
    await sim('/sim/churn/steps', { steps: 60, seed: 32 });
    await sim('/sim/compact', {});
    await sim('/sim/faults/clear', {});
    const want = await simState();
    const gone = [...before].filter((k) => !(k in want)).sort();
    assert.ok(gone.length > 0, 'the churn deleted some pods');
    await until(() => JSON.stringify(Object.keys(cacheState(pods.getSnapshot())).sort()) === JSON.stringify(Object.keys(want).sort()), 30_000);
    await until(() => deletes.length === 1 + gone.length);
    assert.deepEqual(deletes.slice(1).map(([k]) => k).sort(), gone);
    assert.ok(deletes.slice(1).every(([, unknown]) => unknown), JSON.stringify(deletes));
    assert.deepEqual(viaReg, [false, ...gone.map(() => true)]);
  } finally {
    await sim('/sim/faults/clear', {});
    factory.shutdown();
  }
});
