// Informers, listers and snapshots through the package, against the sim.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, InformerFactory, KubeError, retryNow, type KubeObject, type Diff } from 'kubewasm';

import { openWatches, server, sim, simState, token, until } from './sim.js';

const frame = () => new Promise((r) => setTimeout(r, 5));

const client = new KubeClient({ server, token });

test('an informer syncs 1,200 pods, coalesces diffs, keeps snapshot identity and follows changes', async () => {
  await sim('/sim/seed', { namespaces: 4, pods: 1200, seed: 11 });
  const watchesBefore = await openWatches();
  const factory = new InformerFactory(client);
  const pods = factory.informer({ version: 'v1', resource: 'pods' });
  const diffs: Diff[] = [];
  pods.subscribe((d) => diffs.push(d));
  factory.start();
  await pods.waitForSync();
  assert.ok(pods.hasSynced);
  await until(() => diffs.reduce((n, d) => n + d.added.length, 0) >= 1200);
  const expected = await simState();
  const added = new Set(diffs.flatMap((d) => d.added));
  assert.deepEqual([...added].sort(), Object.keys(expected).sort());
  // Diffs are coalesced per frame, so how many depends on how many frames the
  // sync spans on a loaded machine; one per object would be 1,200.
  assert.ok(diffs.length <= 60, `1,200 adds coalesced into ${diffs.length} diffs`);

  const snap1 = pods.getSnapshot();
  assert.equal(snap1.length, 1200);
  assert.equal(pods.getSnapshot(), snap1, 'same array while nothing changed');
  assert.ok(Object.isFrozen(snap1) && Object.isFrozen(snap1[0]));
  assert.equal(snap1.some((p) => 'managedFields' in (p.metadata as object)), false, 'managedFields stripped by default');

  // Members are parsed on first access, yet the object behaves as plain JSON.
  const first = snap1[0]! as KubeObject & { spec: { containers: unknown[] } };
  const fromServer = (await client
    .resource({ version: 'v1', resource: 'pods' })
    .get(first.metadata.name, first.metadata.namespace)) as Record<string, unknown> & { metadata: Record<string, unknown> };
  delete fromServer.metadata.managedFields;
  assert.deepEqual(JSON.parse(JSON.stringify(first)), fromServer, 'JSON.stringify sees every member');
  assert.deepEqual(structuredClone(first), fromServer, 'structuredClone copies every member');
  assert.deepEqual(Object.keys(first), Object.keys(fromServer));
  assert.deepEqual({ ...first }, fromServer, 'spread copies every member and nothing hidden');
  assert.equal(first.spec, first.spec, 'a member is parsed once and kept');
  assert.ok(Array.isArray(first.spec.containers));
  assert.throws(() => {
    (first as { kind?: string }).kind = 'x';
  }, TypeError);

  // A change produces one diff and a new snapshot array, with unchanged objects reused.
  const victim = snap1[0]!;
  const podsApi = client.resource({ version: 'v1', resource: 'pods' });
  await podsApi.delete(victim.metadata.name, victim.metadata.namespace);
  await until(() => diffs.some((d) => d.removed.includes(`${victim.metadata.namespace}/${victim.metadata.name}`)));
  const snap2 = pods.getSnapshot();
  assert.notEqual(snap2, snap1);
  assert.equal(snap2.length, 1199);
  assert.equal(snap2[0], snap1[1], 'unchanged objects keep their identity');

  // Lister and scoped views.
  const lister = pods.lister();
  const ns = snap2[0]!.metadata.namespace!;
  const inNs = lister.list({ namespace: ns });
  assert.ok(inNs.length > 0 && inNs.every((p) => p.metadata.namespace === ns));
  const web = lister.list({ namespace: ns, labelSelector: 'app=web' });
  assert.ok(web.every((p) => p.metadata.labels?.['app'] === 'web'));
  assert.equal(lister.get(inNs[0]!.metadata.name, ns), inNs[0]);
  assert.equal(lister.get('does-not-exist', ns), undefined);
  assert.equal(lister.byIndex('namespace', ns).length, inNs.length);
  assert.throws(() => lister.list({ labelSelector: 'app in (' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && e.position === 8);
  // A label index (asked for through the shared informer) answers the same.
  const expectWeb = inNs.filter((p) => p.metadata.labels?.['app'] === 'web').map((p) => p.metadata.name).sort();
  assert.ok(expectWeb.length > 0);
  factory.informer({ version: 'v1', resource: 'pods', labelIndexes: ['app'] });
  assert.deepEqual(lister.byIndex('label:app', 'web').map((p) => p.metadata.name).sort(), snap2.filter((p) => p.metadata.labels?.['app'] === 'web').map((p) => p.metadata.name).sort());
  const indexed = lister.list({ namespace: ns, labelSelector: 'app=web' }).map((p) => p.metadata.name).sort();
  assert.deepEqual(indexed, expectWeb);
  assert.deepEqual(
    lister.list({ labelSelector: 'app=web' }).map((p) => p.metadata.name).sort(),
    snap2.filter((p) => p.metadata.labels?.['app'] === 'web').map((p) => p.metadata.name).sort(),
  );
  assert.throws(
    () => factory.informer({ version: 'v1', resource: 'pods', labelIndexes: ['bad key!'] }),
    (e: unknown) => e instanceof KubeError && e.reason === 'Invalid',
  );
  const view = pods.scoped({ namespace: ns, labelSelector: 'app=web' });
  assert.equal(view.getSnapshot(), view.getSnapshot());
  assert.equal(view.getSnapshot().length, web.length);

  // Late handlers get the current state first; a throwing handler is isolated.
  const late: string[] = [];
  const errors: unknown[] = [];
  pods.on('error', (e) => errors.push(e));
  pods.on('add', () => {
    throw new Error('handler bug');
  });
  const off = pods.on('add', (p) => late.push(p.metadata.name));
  // Each handler replays from its own queue, so wait for both, in any order.
  await until(() => late.length >= 1199 && errors.length >= 1199);
  assert.ok(errors.length >= 1199 && errors.every((e) => (e as Error).message === 'handler bug'));
  off();

  // Status and stop: no watch remains at the server.
  const status = pods.status;
  assert.equal(status.phase, 'watching');
  assert.equal(status.cached, 1199);
  assert.ok(status.synced);
  factory.shutdown();
  await until(async () => (await openWatches()) <= watchesBefore);
  assert.equal(pods.status.phase, 'stopped');
  await frame();
});

test('every live scoped view keeps its array until its own objects change, however many views there are', async () => {
  // One view per namespace, as a dashboard with a card per namespace makes;
  // more views than the informer's cache of recent filters holds.
  await sim('/sim/seed', { namespaces: 40, pods: 400, seed: 12 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    const diffs: Diff[] = [];
    pods.subscribe((d) => diffs.push(d));
    factory.start();
    await pods.waitForSync();
    await until(() => diffs.reduce((n, d) => n + d.added.length, 0) >= 400);
    const namespaces = [...new Set(pods.getSnapshot().map((p) => p.metadata.namespace!))].sort();
    assert.ok(namespaces.length > 32, `${namespaces.length} namespaces`);
    const views = namespaces.map((namespace) => pods.scoped({ namespace }));
    const first = views.map((v) => v.getSnapshot());
    const second = views.map((v) => v.getSnapshot());
    assert.equal(second.filter((a, i) => a !== first[i]).length, 0, 'no view got a new array while nothing changed');
    // One pod changes: only its namespace's view gets a new array.
    const target = first[7]![0]!;
    const seen = diffs.length;
    await client
      .resource({ version: 'v1', resource: 'pods' })
      .patch(target.metadata.name, target.metadata.namespace, { metadata: { labels: { touched: 'yes' } } }, 'merge', {});
    await until(() => diffs.length > seen);
    const third = views.map((v) => v.getSnapshot());
    const changed = third.flatMap((a, i) => (a !== first[i] ? [namespaces[i]] : []));
    assert.deepEqual(changed, [target.metadata.namespace]);
    assert.equal(third[7]!.find((p) => p.metadata.name === target.metadata.name)?.metadata.labels?.['touched'], 'yes');
    for (const v of views) v.free();
  } finally {
    factory.shutdown();
  }
});

/** A narrow pod type, as an app would bring (e.g. from `kubernetes-types`). */
interface Pod extends KubeObject {
  spec: { containers: { name: string; image?: string }[] };
  status?: { phase?: string };
}

test('an informer by built-in kind caches the same resource, typed by its object type', async () => {
  const factory = new InformerFactory(client);
  const byKind = factory.informer<Pod>({ version: 'v1', kind: 'Pod', namespace: 'default' });
  // Handlers, snapshots and listers carry the type; wrong handler shapes do not compile.
  const images: string[] = [];
  const offUpdate = byKind.on('update', (oldPod, newPod) => images.push(oldPod.spec.containers[0]?.name ?? '', newPod.spec.containers[0]?.name ?? ''));
  const offStatus = byKind.on('status', (s) => void s.phase);
  // Type-level only (never run): these must not compile.
  const _wrongShapes = (): void => {
    // @ts-expect-error an add handler takes one object
    byKind.on('add', (_a: Pod, _b: Pod) => undefined);
    // @ts-expect-error unknown event
    byKind.on('nope', () => undefined);
  };
  void _wrongShapes;
  offUpdate();
  offStatus();
  factory.start();
  await byKind.waitForSync();
  const expected = Object.keys(await simState()).filter((k) => k.startsWith('default/')).sort();
  assert.deepEqual(byKind.getSnapshot().map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort(), expected);
  const first: Pod | undefined = byKind.lister().list({ namespace: 'default' })[0];
  assert.ok(first === undefined || Array.isArray(first.spec.containers));
  assert.throws(() => factory.informer({ version: 'v1', kind: 'Nope' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  factory.shutdown();
});

test('a malformed selector is a KubeError with the position', () => {
  const factory = new InformerFactory(client);
  assert.throws(
    () => factory.informer({ version: 'v1', resource: 'pods', labelSelector: 'app=web,,' }),
    (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && typeof e.position === 'number',
  );
});

test('cached objects with non-ASCII text materialize member by member', async () => {
  const name = `js-unicode-${Date.now()}`;
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const data = { 'grüße': 'héllo 😀 — ok', plain: 'x' };
  await cms.create({ metadata: { name, labels: { t: 'unicode' }, annotations: { note: '日本語' } }, data } as KubeObject, {});
  const factory = new InformerFactory(client);
  const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default', labelSelector: 't=unicode' });
  factory.start();
  await inf.waitForSync();
  const got = inf.lister().get(name, 'default') as (KubeObject & { data: Record<string, string> }) | undefined;
  assert.ok(got);
  assert.deepEqual(got.data, data);
  assert.equal(got.metadata.annotations?.note, '日本語');
  assert.equal(got.metadata.name, name);
  factory.shutdown();
  await cms.delete(name);
});

test('an object kept after its version left the cache still reads every member', async () => {
  const name = `js-kept-${Date.now()}`;
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const data = { a: 'first', 'ü': '😀' };
  // Members after the non-ASCII one: handed-over texts are cut by UTF-16 offsets.
  await cms.create({ metadata: { name, labels: { t: 'kept' } }, data, immutable: false } as KubeObject, {});
  const factory = new InformerFactory(client);
  const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default', labelSelector: 't=kept' });
  const olds: KubeObject[] = [];
  inf.on('update', (old) => olds.push(old)); // kept, nothing read
  factory.start();
  try {
    await inf.waitForSync();
    const first = inf.lister().get(name, 'default') as (KubeObject & { data: Record<string, string> }) | undefined;
    assert.ok(first);
    assert.equal(first.metadata.name, name); // metadata parsed while cached,
    assert.equal((first as KubeObject & { immutable?: boolean }).immutable, false); // and a member between unread ones
    const expected = JSON.parse(JSON.stringify(await cms.get(name))) as Record<string, unknown> & { metadata: Record<string, unknown> };
    delete expected.metadata.managedFields;
    // Replace the version, then delete the object: the version `first` came
    // from is released by the cache while JS still holds the object.
    await cms.patch(name, undefined, { data: { a: 'second' } }, 'merge');
    await until(() => (inf.lister().get(name, 'default') as { data?: Record<string, string> } | undefined)?.data?.a === 'second');
    await cms.delete(name);
    await until(() => inf.lister().get(name, 'default') === undefined);
    assert.deepEqual(first.data, data, 'unread members are handed over when the version is released');
    assert.equal(first.kind, 'ConfigMap', 'a member after a non-ASCII one and a read one');
    assert.deepEqual(JSON.parse(JSON.stringify(first)), expected);
    assert.equal(olds.length, 1);
    assert.equal(olds[0], first, 'the update handler got the same object for the old version');
    assert.deepEqual((olds[0] as KubeObject & { data: unknown }).data, data);
  } finally {
    factory.shutdown(); // a failed assertion must not leave the watch open
  }
});

test('3,000 kept versions that left the cache, none read before, still read every member', async () => {
  await sim('/sim/seed', { namespaces: 4, pods: 1200, seed: 11 });
  const factory = new InformerFactory(client);
  const pods = factory.informer<Pod>({ version: 'v1', resource: 'pods' });
  const held: Pod[] = [];
  pods.on('update', (old) => held.push(old)); // kept, nothing read
  factory.start();
  try {
    await pods.waitForSync();
    await sim('/sim/flood', { resource: 'pods', events: 3000, wait: true });
    await until(() => held.length >= 3000);
    // Each kept version left the cache unread: its objects got their text then.
    let bytes = 0;
    for (const p of held) {
      assert.equal(p.kind, 'Pod');
      assert.ok(Array.isArray(p.spec.containers) && p.spec.containers.length > 0, JSON.stringify(p.spec));
      assert.equal(typeof p.status, 'object');
      bytes += JSON.stringify(p).length;
    }
    assert.ok(bytes > 6 << 20, `${bytes} bytes kept`);
  } finally {
    factory.shutdown();
  }
});

test('metadata read by a handler equals JSON.parse of the object, and one handler cannot change it for another', async () => {
  const name = `js-meta-${Date.now()}`;
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const owner = { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: '1234', controller: true };
  await cms.create(
    {
      metadata: { name, labels: { t: 'meta', 'app.kubernetes.io/name': 'x' }, annotations: { note: 'a "quoted" \\ note', empty: '' }, ownerReferences: [owner] },
      data: { a: '1' },
    } as KubeObject,
    {},
  );
  const expected = JSON.parse(JSON.stringify(await cms.get(name))) as Record<string, unknown> & { metadata: Record<string, unknown> };
  delete expected.metadata.managedFields;
  const factory = new InformerFactory(client);
  const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default', labelSelector: 't=meta' });
  type Meta = Record<string, unknown> & { labels: Record<string, string>; annotations: Record<string, string>; ownerReferences: Array<Record<string, unknown>> };
  const seen: Array<{ obj: KubeObject; name: unknown; rv: unknown; text: string; threw: string[] }> = [];
  const reader = (obj: KubeObject) => {
    const meta = obj.metadata as Meta;
    // The fields the cache knew first, then everything else.
    const entry = { obj, name: meta.name, rv: meta.resourceVersion, text: '', threw: [] as string[] };
    const attempt = (what: string, f: () => void) => {
      try {
        f();
      } catch (e) {
        if (e instanceof TypeError) entry.threw.push(what);
      }
    };
    attempt('name', () => { meta.name = 'changed'; });
    attempt('uid', () => { delete meta.uid; });
    attempt('new member', () => { meta.extra = 1; });
    attempt('label', () => { meta.labels.t = 'changed'; });
    attempt('annotation', () => { meta.annotations.note = 'changed'; });
    attempt('owner', () => { meta.ownerReferences[0]!.name = 'changed'; });
    attempt('owner list', () => { meta.ownerReferences.push(owner); });
    entry.text = JSON.stringify(meta);
    seen.push(entry);
  };
  // Two handlers of one informer share each object version.
  inf.on('add', reader);
  inf.on('add', reader);
  factory.start();
  try {
    await inf.waitForSync();
    await until(() => seen.length === 2);
    const em = expected.metadata;
    for (const s of seen) {
      assert.equal(s.obj, seen[0]!.obj, 'one object per version');
      assert.equal(s.name, name);
      assert.equal(s.rv, em.resourceVersion);
      assert.equal(s.text, JSON.stringify(em), 'same members, order and values as JSON.parse');
      assert.deepEqual(s.threw, ['name', 'uid', 'new member', 'label', 'annotation', 'owner', 'owner list'], 'every change refused');
    }
    const got = seen[0]!.obj as KubeObject & { metadata: Meta };
    const meta = got.metadata;
    assert.equal(got.metadata, meta, 'metadata is built once');
    assert.equal(meta.labels, meta.labels, 'a member is parsed once and kept');
    assert.deepEqual(Object.keys(meta), Object.keys(em));
    assert.deepEqual({ ...meta }, em, 'spread');
    assert.deepEqual(structuredClone(meta), em, 'structuredClone');
    assert.deepEqual(JSON.parse(JSON.stringify(got)), expected, 'the whole object');
    assert.deepEqual(structuredClone(got), expected);
    assert.equal(meta.annotations.note, 'a "quoted" \\ note');
    assert.equal(Object.getPrototypeOf(meta), Object.prototype);
    assert.ok('labels' in meta && !('managedFields' in meta));
    // The cache still holds the object as the server sent it.
    assert.deepEqual(JSON.parse(JSON.stringify(inf.lister().get(name, 'default'))), expected, 'the cached version');
  } finally {
    factory.shutdown();
    await cms.delete(name);
  }
});

test('1,000 events inside one frame reach subscribers as one diff with exactly their keys', async () => {
  // Frames are driven by hand: the package schedules its flush with
  // `requestAnimationFrame` when the host has one, so nothing is delivered
  // until the test runs the pending frame callbacks.
  const pending: (() => void)[] = [];
  const g = globalThis as { requestAnimationFrame?: (cb: () => void) => number };
  const before = g.requestAnimationFrame;
  g.requestAnimationFrame = (cb) => pending.push(cb);
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    await pods.waitForSync();
    const runFrames = () => pending.splice(0).forEach((cb) => cb());
    runFrames();
    const diffs: Diff[] = [];
    pods.subscribe((d) => diffs.push(d));
    const updated = new Set<string>();
    let events = 0;
    pods.on('update', (_old, obj) => {
      events++;
      updated.add(`${obj.metadata.namespace}/${obj.metadata.name}`);
    });
    const cached = pods.getSnapshot().length;
    assert.ok(cached > 0);
    await sim('/sim/flood', { resource: 'pods', events: 1000, wait: true });
    await until(() => events >= 1000);
    await until(async () => pods.status.eventsApplied >= 1000);
    assert.equal(diffs.length, 0, 'nothing is delivered before the frame');
    const snapBefore = pods.getSnapshot();
    runFrames();
    assert.equal(diffs.length, 1, 'one diff per frame');
    const d = diffs[0]!;
    assert.deepEqual([...d.updated].sort(), [...updated].sort());
    assert.deepEqual(d.added, []);
    assert.deepEqual(d.removed, []);
    assert.notEqual(pods.getSnapshot(), snapBefore, 'a new snapshot after the diff');
    runFrames();
    assert.equal(diffs.length, 1, 'no empty diffs');
  } finally {
    factory.shutdown();
    if (before) g.requestAnimationFrame = before;
    else delete g.requestAnimationFrame;
  }
});

test('a relist reaches subscribers as one diff: never the union of what it replaced and what it listed', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 2, pods: 1500, seed: 31 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    await pods.waitForSync();
    const shown = new Set(pods.getSnapshot().map((o) => `${o.metadata.namespace}/${o.metadata.name}`));
    let largest = shown.size;
    const diffs: Diff[] = [];
    pods.subscribe((d) => {
      diffs.push(d);
      for (const k of d.added) shown.add(k);
      for (const k of d.removed) shown.delete(k);
      largest = Math.max(largest, shown.size);
    });
    // The re-watch is held back while every pod is replaced and the history
    // compacted, so the informer lists again: 1,500 new pods, 1,500 gone.
    // Snapshots first read meanwhile (a view nobody read before, with a
    // selector of its own) agree with the diffs: never the union either.
    let probes = 0;
    let largestSnapshot = 0;
    const probe = setInterval(() => {
      const view = pods.scoped({ labelSelector: `probe notin (p${probes++})` });
      largestSnapshot = Math.max(largestSnapshot, view.getSnapshot().length);
      view.free();
    }, 1);
    try {
      await sim('/sim/faults', { latencyMs: 1000 });
      await sim('/sim/drop-watches', {});
      await sim('/sim/seed', { namespaces: 2, pods: 1500, seed: 32 });
      await sim('/sim/compact', {});
      await until(() => pods.status.relists > 0, 15_000);
      await sim('/sim/faults/clear', {});
      const want = Object.keys(await simState()).sort();
      await until(() => shown.size === want.length && want.every((k) => shown.has(k)), 30_000);
    } finally {
      clearInterval(probe);
    }
    assert.ok(largest <= 1500, `a diff showed ${largest} pods of a 1,500-pod cluster`);
    assert.ok(probes > 100, `${probes} snapshots read`);
    assert.ok(largestSnapshot <= 1500, `a snapshot showed ${largestSnapshot} pods of a 1,500-pod cluster`);
    assert.ok(diffs.some((d) => d.removed.length === 1500 && d.added.length >= 1400), 'one diff swapped the population');
  } finally {
    factory.shutdown();
  }
});

test('a request that never reached a server shows in status.lastError with the reason a thrown KubeError has', async () => {
  // Nothing listens on port 1: every connection is refused.
  const nowhere = new KubeClient({ server: 'http://127.0.0.1:1', maxRetries: 0 });
  const thrown: unknown = await nowhere.resource({ version: 'v1', resource: 'pods' }).list({}).catch((e: unknown) => e);
  assert.ok(thrown instanceof KubeError, String(thrown));
  assert.equal(thrown.reason, 'Network');
  // With the default retries too: the reflector, not the client, retries its
  // list, so the status shows the failure at once (the wait below is 10 s,
  // the client's own retries would take about 17).
  const factory = new InformerFactory(new KubeClient({ server: 'http://127.0.0.1:1' }));
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    const errors: unknown[] = [];
    pods.on('error', (e) => void errors.push(e));
    const started = Date.now();
    factory.start();
    await until(() => pods.status.lastError !== undefined);
    // The failed list reaches error listeners too (client-go's watch error handler).
    await until(() => errors.length > 0);
    assert.ok(errors[0] instanceof KubeError && errors[0].reason === 'Network', String(errors[0]));
    assert.equal(pods.status.lastError?.reason, 'Network');
    assert.equal(pods.status.lastError?.code, 0);
    // Its time, so a UI can tell an old error from a current one.
    const at = pods.status.lastError?.at ?? 0;
    assert.ok(at >= started - 1 && at <= Date.now(), `${at} not within the test`);
  } finally {
    factory.shutdown();
  }
});

test('with no error listener, a failing list or watch warns on the console once until the informer watches again', async () => {
  const warned: unknown[][] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warned.push(args);
  const factory = new InformerFactory(client);
  try {
    await sim('/sim/faults', { status500: { count: 3 } });
    const pods = factory.informer({ version: 'v1', resource: 'pods', namespace: 'default' });
    // The same failures with a listener: told to it, not to the console.
    const heard: unknown[] = [];
    const services = factory.informer({ version: 'v1', resource: 'services', namespace: 'default' });
    services.on('error', (e) => void heard.push(e));
    factory.start();
    assert.ok(await factory.waitForSync());
    assert.ok(pods.status.lastError !== undefined && heard.length > 0, 'both informers failed before they synced');
    const mine = warned.filter((w) => String(w[0]).includes('v1/pods in "default"'));
    assert.equal(mine.length, 1, `one warning for the pods informer: ${JSON.stringify(warned.map((w) => String(w[0])))}`);
    assert.ok(mine[0]![1] instanceof KubeError && mine[0]![1].code === 500, String(mine[0]![1]));
    assert.equal(warned.filter((w) => String(w[0]).includes('services')).length, 0, 'an informer with an error listener does not warn');
    // Once it has watched, a new failure warns again: the watches are
    // dropped and their next requests refused.
    // `watching` begins when the list is in; `transport` once a watch is open.
    await until(() => pods.status.transport !== undefined && services.status.transport !== undefined);
    await sim('/sim/faults', { status500: { count: 4 } });
    await sim('/sim/drop-watches', {});
    const pending = () => warned.filter((w) => String(w[0]).includes('v1/pods in "default"')).length;
    await until(() => pending() === 2);
    assert.equal(warned.filter((w) => String(w[0]).includes('services')).length, 0);
  } finally {
    factory.shutdown();
    console.warn = warn;
    await sim('/sim/faults/clear', {});
  }
});

test('a diff carries every key as one string, a name with a newline in it too', async () => {
  await sim('/sim/seed', { namespaces: 2, pods: 6, seed: 21 });
  // A server that does not validate names (the API server refuses this one).
  const odd = async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const r = await fetch(input, init);
    if (String(input).includes('watch=true') || !r.ok) return r;
    const list = (await r.json()) as { items?: { metadata: { name: string } }[] };
    if (list.items?.[0]) list.items[0].metadata.name = 'line\nbreak';
    return new Response(JSON.stringify(list), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const factory = new InformerFactory(new KubeClient({ server, token, fetch: odd }));
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    const added: string[] = [];
    pods.subscribe((d) => void added.push(...d.added));
    factory.start();
    assert.ok(await pods.waitForSync());
    await until(() => added.length >= 6);
    assert.equal(added.length, 6, JSON.stringify(added));
    assert.equal(added.filter((k) => k.endsWith('/line\nbreak')).length, 1, JSON.stringify(added));
    assert.deepEqual([...added].sort(), pods.getSnapshot().map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort());
  } finally {
    factory.shutdown();
  }
});

test('an informer whose lists succeed and whose watches are refused warns once, not at every relist', async () => {
  const warned: unknown[][] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warned.push(args);
  let refused = 0;
  // RBAC that allows list but not watch, as a proxy or a Role can.
  const noWatch = (input: RequestInfo | URL, init: RequestInit = {}) => {
    if (String(input).includes('watch=true')) {
      refused++;
      const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'pods is forbidden: cannot watch' };
      return Promise.resolve(new Response(JSON.stringify(status), { status: 403, headers: { 'content-type': 'application/json' } }));
    }
    return fetch(input, init);
  };
  const factory = new InformerFactory(new KubeClient({ server, token, fetch: noWatch }));
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods', namespace: 'default', backoff: { initialMs: 10, capMs: 40 } });
    factory.start();
    await until(() => refused >= 3 && pods.status.relists >= 2);
    const mine = warned.filter((w) => String(w[0]).includes('v1/pods in "default"'));
    assert.equal(mine.length, 1, `${refused} refused watches, warnings: ${JSON.stringify(warned.map((w) => String(w[0])))}`);
    assert.ok(mine[0]![1] instanceof KubeError && mine[0]![1].code === 403, String(mine[0]![1]));
  } finally {
    factory.shutdown();
    console.warn = warn;
  }
});

test('a server that answers the list with 429 and Retry-After shows in status and error listeners while the informer waits', async () => {
  await sim('/sim/faults', { status429: { count: 2, retryAfterSeconds: 1 } });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods', namespace: 'default' });
    const errors: unknown[] = [];
    pods.on('error', (e) => void errors.push(e));
    const waits: { reason: string | undefined; code: number | undefined; wait: number }[] = [];
    pods.on('status', (s) => {
      if (s.phase === 'backoff') waits.push({ reason: s.lastError?.reason, code: s.lastError?.code, wait: (s.nextRetryAt ?? 0) - (s.lastError?.at ?? 0) });
    });
    const started = Date.now();
    factory.start();
    await until(() => waits.length > 0);
    assert.equal(waits[0]!.reason, 'TooManyRequests');
    assert.equal(waits[0]!.code, 429);
    assert.ok(waits[0]!.wait >= 990, `the next try waits the second the server asked for (${waits[0]!.wait} ms)`);
    await until(() => errors.length > 0);
    assert.ok(errors[0] instanceof KubeError && errors[0].reason === 'TooManyRequests', String(errors[0]));
    assert.ok(await pods.waitForSync());
    assert.ok(Date.now() - started >= 2000, 'two waits of a second each');
  } finally {
    factory.shutdown();
    await sim('/sim/faults/clear', {});
  }
});

test('waitForSync resolves true once synced, and false when the informers stop first', async () => {
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    assert.equal(await pods.waitForSync(), true);
    assert.equal(await factory.waitForSync(), true);
  } finally {
    factory.shutdown();
  }
  // A server that refuses every connection: nothing ever syncs.
  const never = new InformerFactory(new KubeClient({ server: 'http://127.0.0.1:1', maxRetries: 0 }));
  const pods = never.informer({ version: 'v1', resource: 'pods' });
  never.start();
  const [fromFactory, fromInformer] = [never.waitForSync(), pods.waitForSync()];
  never.shutdown();
  assert.equal(await fromFactory, false);
  assert.equal(await fromInformer, false);
});

test("a lister's field selectors select what the server's do, a metadata.namespace= one through the namespace index", async () => {
  await sim('/sim/seed', { namespaces: 3, pods: 90, seed: 8 });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    assert.ok(await pods.waitForSync());
    const api = client.resource({ version: 'v1', resource: 'pods' });
    const names = (objs: readonly KubeObject[]) => objs.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();
    const [first] = pods.lister().list({});
    const ns = first!.metadata.namespace!;
    for (const fieldSelector of [
      'status.phase=Running',
      'status.phase!=Running',
      `metadata.namespace=${ns}`,
      `metadata.namespace=${ns},status.phase=Running`,
      `metadata.namespace!=${ns}`,
      `metadata.name=${first!.metadata.name}`,
      `spec.nodeName=${(first as KubeObject & { spec: { nodeName?: string } }).spec.nodeName ?? ''}`,
    ]) {
      const fromServer = (await api.list({ fieldSelector })).items;
      assert.deepEqual(names(pods.lister().list({ fieldSelector })), names(fromServer), fieldSelector);
      assert.deepEqual(names(pods.scoped({ fieldSelector }).getSnapshot()), names(fromServer), `scoped ${fieldSelector}`);
    }
    // A namespace from the filter and another from the selector: nothing.
    const other = pods.lister().list({}).find((o) => o.metadata.namespace !== ns)!.metadata.namespace!;
    assert.deepEqual(pods.lister().list({ namespace: other, fieldSelector: `metadata.namespace=${ns}` }), []);
  } finally {
    factory.shutdown();
  }
});

test('an index function may return undefined, null or one string; indexValues lists what an index holds', async () => {
  await sim('/sim/seed', { namespaces: 3, pods: 60, seed: 5 });
  const factory = new InformerFactory(client);
  const pods = factory.informer({
    version: 'v1',
    resource: 'pods',
    indexers: {
      // Only pods labelled app=web are indexed; the others stay cached.
      web: (o) => (o.metadata.labels?.['app'] === 'web' ? o.metadata.name : undefined),
      tier: (o) => o.metadata.labels?.['tier'] ?? null,
      ns: (o) => [o.metadata.namespace ?? ''],
    },
  });
  const errors: unknown[] = [];
  pods.on('error', (e) => errors.push(e));
  factory.start();
  await pods.waitForSync();
  const all = pods.getSnapshot();
  const state = Object.keys(await simState('pods'));
  assert.equal(all.length, state.length, 'every pod cached');
  assert.equal(pods.status.skipped, 0);
  assert.deepEqual(errors, []);
  const lister = pods.lister();
  const web = all.filter((p) => p.metadata.labels?.['app'] === 'web');
  assert.ok(web.length > 0 && web.length < all.length);
  assert.deepEqual(lister.indexValues('web').sort(), web.map((p) => p.metadata.name).sort());
  const first = web[0]!;
  assert.deepEqual(lister.byIndex('web', first.metadata.name), [first]);
  const tiers = new Set(all.flatMap((p) => (p.metadata.labels?.['tier'] ? [p.metadata.labels['tier']] : [])));
  assert.deepEqual(lister.indexValues('tier').sort(), [...tiers].sort());
  assert.deepEqual(lister.indexValues('ns').sort(), [...new Set(all.map((p) => p.metadata.namespace))].sort());
  assert.deepEqual(lister.indexValues('namespace').sort(), lister.indexValues('ns').sort());
  assert.throws(() => lister.indexValues('nope'), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  // Anything else is still an error that skips the object.
  const bad = factory.informer({ version: 'v1', resource: 'pods', labelSelector: 'app=web', indexers: { n: () => 5 as unknown as string } });
  const badErrors: unknown[] = [];
  bad.on('error', (e) => badErrors.push(e));
  factory.start();
  await bad.waitForSync();
  assert.equal(bad.getSnapshot().length, 0);
  assert.ok(badErrors.length > 0 && badErrors.every((e) => e instanceof KubeError && /array of strings, a string/.test(e.message)), String(badErrors[0]));
  lister.free();
  factory.shutdown();
});

test('status.stalled: a watch quiet for longer than its own watchdog allows says the host stopped running it', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 5, seed: 3 });
  const factory = new InformerFactory(client);
  const pods = factory.informer({ version: 'v1', resource: 'pods' });
  factory.start();
  await pods.waitForSync();
  await until(() => pods.status.phase === 'watching');
  assert.equal(pods.status.stalled, undefined);
  // Read as if the host had run nothing for 3 minutes (the watchdog allows 90 s, plus a minute).
  const realNow = Date.now;
  Date.now = () => realNow() + 180_000;
  let later;
  try {
    later = pods.status;
  } finally {
    Date.now = realNow;
  }
  factory.shutdown();
  assert.equal(later.stalled, true, JSON.stringify(later));
  assert.match(later.warning ?? '', /stopped running this informer/);
  assert.equal(later.phase, 'watching');
});

test('retryNow() makes an informer waiting out a backoff try again at once', async () => {
  // A port nobody listens on: every list fails with a Network error.
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const factory = new InformerFactory(new KubeClient({ server: `http://127.0.0.1:${port}` }));
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods', backoff: { initialMs: 60_000, capMs: 600_000 } });
    const attempts: number[] = [];
    pods.on('error', () => attempts.push(Date.now()));
    factory.start();
    await until(() => attempts.length === 1 && pods.status.phase === 'backoff');
    const next = pods.status.nextRetryAt!;
    assert.ok(next - Date.now() > 30_000, `the first step waits ${next - Date.now()} ms`);
    retryNow();
    await until(() => attempts.length === 2);
    assert.ok(Date.now() < next - 30_000, 'tried at the call, not at the deadline');
    // Failing again, it waits the first step again (60-120 s here, with jitter), not the second.
    await until(() => pods.status.phase === 'backoff' && pods.status.nextRetryAt !== next);
    const wait = pods.status.nextRetryAt! - Date.now();
    assert.ok(wait > 30_000 && wait <= 120_000, `the next wait is ${wait} ms`);
  } finally {
    factory.shutdown();
  }
});

test('the snapshot, patched from diff to diff, is always the cache in namespace-then-name order', async () => {
  // A few pods stay for the tests after this one (pod logs).
  await sim('/sim/seed', { namespaces: 1, pods: 3, seed: 12 });
  const api = client.resource({ version: 'v1', resource: 'configmaps' });
  // Namespaces and names whose keys sort otherwise as strings ('a-b/…' before 'a/…').
  const namespaces = ['a', 'a-b', 'b'];
  // What an earlier run (another runtime, the same sim) left.
  const clear = () => Promise.all(namespaces.map((namespace) => api.deleteCollection({ namespace, labelSelector: 'snapshot=patched' })));
  await clear();
  const factory = new InformerFactory(client);
  const cms = factory.informer({ version: 'v1', resource: 'configmaps', labelSelector: 'snapshot=patched' });
  // The keys diffs named since the step began: a step reads the snapshot
  // once every key it wrote has been in a diff (no change left pending).
  const told = new Set<string>();
  cms.subscribe((d) => [...d.added, ...d.updated, ...d.removed].forEach((k) => told.add(k)));
  factory.start();
  await cms.waitForSync();
  const names = ['x', 'x-1', 'y', 'z'];
  const live = new Map<string, number>();
  const expectSnapshot = () => {
    const snap = cms.getSnapshot();
    const order = [...snap].map((o) => [o.metadata.namespace!, o.metadata.name] as const);
    const sorted = [...order].sort((p, q) => (p[0] === q[0] ? (p[1] < q[1] ? -1 : p[1] > q[1] ? 1 : 0) : p[0] < q[0] ? -1 : 1));
    assert.deepEqual(order, sorted, 'namespace, then name');
    // Every object is the cached version itself.
    const lister = cms.lister();
    for (const o of snap) assert.equal(o, lister.get(o.metadata.name, o.metadata.namespace), `${o.metadata.namespace}/${o.metadata.name}`);
    assert.deepEqual(new Set(order.map(([ns, n]) => `${ns}/${n}`)), new Set(live.keys()));
    assert.ok(Object.isFrozen(snap));
    // Scoped views, patched from their own last read: the informer's snapshot filtered.
    for (const [view, keep] of views) {
      const got = view.getSnapshot();
      assert.deepEqual(got, snap.filter(keep));
      assert.ok(got.every((o, i) => o === snap.filter(keep)[i]), 'the same objects');
      assert.ok(Object.isFrozen(got));
    }
    return snap;
  };
  const views = [
    [cms.scoped({ namespace: 'a' }), (o: KubeObject) => o.metadata.namespace === 'a'],
    [cms.scoped({ fieldSelector: 'metadata.name!=y' }), (o: KubeObject) => o.metadata.name !== 'y'],
  ] as const;
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let before = expectSnapshot();
  for (let step = 0; step < 40; step++) {
    // One to four writes to distinct keys per step (two to one key could
    // cancel out, and no diff would come), then the next diff; every fifth step
    // empties a namespace, the one after fills it again (several keys
    // inserted at one position of the array).
    const burst = step % 5 === 3 || step % 5 === 4 ? namespaces[(step / 5) % namespaces.length | 0]! : undefined;
    const plan: [string, string][] = burst
      ? names.filter((n) => live.has(`${burst}/${n}`) === (step % 5 === 3)).map((n) => [burst, n])
      : [...new Map(Array.from({ length: 1 + random(4) }, () => [namespaces[random(namespaces.length)]!, names[random(names.length)]!] as [string, string]).map((p) => [p.join('/'), p])).values()];
    const writes = plan.length;
    told.clear();
    for (const [ns, name] of plan) {
      const key = `${ns}/${name}`;
      if (!live.has(key)) {
        await api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { snapshot: 'patched' } }, data: { n: '0' } });
        live.set(key, 0);
      } else if (burst || random(2) === 0) {
        await api.delete(name, ns);
        live.delete(key);
      } else {
        const n = live.get(key)! + 1;
        await api.patch(name, ns, { data: { n: String(n) } }, 'merge');
        live.set(key, n);
      }
    }
    if (writes === 0) continue;
    await until(() => plan.every((p) => told.has(p.join('/'))) && cms.lister().list().length === live.size && cms.lister().list().every((o) => live.get(`${o.metadata.namespace}/${o.metadata.name}`) === Number((o as { data?: { n?: string } }).data?.n)));
    const snap = expectSnapshot();
    // Objects that did not change keep their identity.
    const kept = before.filter((o) => snap.includes(o)).length;
    assert.ok(kept >= before.length - writes * 2, `step ${step}: ${kept} of ${before.length} kept`);
    before = snap;
  }
  factory.shutdown();
  await clear();
});
