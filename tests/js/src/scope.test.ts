// One resource handle behind ResourceClient: the scope rules the Rust API
// applies (api::Api), the (name, namespace?) order of every verb and of the
// lister, what delete resolves with, and the factory refusing a scope asked
// for again with other cache options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InformerFactory, KubeClient, KubeError, isStatus, type KubeObject, type Status } from 'kubewasm';

import { server, sim, token, until } from './sim.js';

const client = new KubeClient({ server, token });
const invalid = (needle: RegExp) => (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && e.code === 0 && needle.test(e.message);
const unique = (p: string) => `${p}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

test('a namespaced resource needs a namespace for named verbs and create, as from Rust', async () => {
  // Its own cluster: files run in another order under other runtimes.
  await sim('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  const pods = client.resource({ version: 'v1', resource: 'pods' });
  const needsNs = invalid(/pods is namespaced: .* needs a namespace/);
  await assert.rejects(pods.get('p1'), needsNs);
  await assert.rejects(pods.delete('p1'), needsNs);
  await assert.rejects(pods.patch('p1', undefined, {}, 'merge'), needsNs);
  await assert.rejects(pods.create({ metadata: { name: 'p1' } }), invalid(/create needs a namespace/));
  await assert.rejects(pods.replace({ metadata: { name: 'p1' } }), needsNs);
  // An empty name would address the collection; a name is one path segment.
  await assert.rejects(pods.delete('', 'default'), invalid(/name must not be empty/));
  await assert.rejects(pods.get('a/b', 'default'), invalid(/invalid name/));
  // Across all namespaces, the collection verbs work.
  const all = await pods.list({});
  const victim = all.items[0]!;
  assert.ok(new Set(all.items.map((p) => p.metadata.namespace)).size > 1, 'pods of several namespaces');
  // The namespace per call, else the client's (the object's for create/replace).
  const got = await pods.get(victim.metadata.name, victim.metadata.namespace);
  assert.equal(got.metadata.uid, victim.metadata.uid);
  const elsewhere = client.resource({ version: 'v1', resource: 'pods', namespace: 'not-there' });
  assert.equal((await elsewhere.get(victim.metadata.name, victim.metadata.namespace)).metadata.uid, victim.metadata.uid);
  await assert.rejects(elsewhere.get(victim.metadata.name), (e: unknown) => e instanceof KubeError && e.code === 404);
});

test('a cluster-scoped resource ignores the namespace, as from Rust', async () => {
  const nodes = client.resource({ version: 'v1', resource: 'nodes', namespace: 'ignored' });
  const list = await nodes.list({});
  assert.ok(list.items.length > 0);
  const name = list.items[0]!.metadata.name;
  assert.equal((await nodes.get(name)).metadata.name, name);
  assert.equal((await nodes.get(name, 'also-ignored')).metadata.name, name);
  // So do the lister and views of a cluster-scoped informer.
  const factory = new InformerFactory(client);
  try {
    const informer = factory.informer({ version: 'v1', resource: 'nodes' });
    factory.start();
    await informer.waitForSync();
    const lister = informer.lister();
    assert.equal(lister.get(name, 'ignored')?.metadata.name, name);
    assert.equal(lister.list({ namespace: 'ignored' }).length, list.items.length);
    assert.equal(informer.scoped({ namespace: 'ignored' }).getSnapshot().length, list.items.length);
  } finally {
    factory.shutdown();
  }
  // A custom resource's scope comes from `namespaced` (what resourceFor returns).
  const w = await client.resourceFor('Widget');
  const widgets = client.resource({ ...w, namespace: 'default' });
  assert.ok(Array.isArray((await widgets.list({})).items));
  const bare = client.resource({ group: w.group, version: w.version, resource: w.resource, namespaced: true });
  await assert.rejects(bare.get('x'), invalid(/widgets is namespaced/));
});

test('delete resolves with a Status when deleted at once, with the object for pods', async () => {
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const name = unique('scope-cm');
  const created = await cms.create({ metadata: { name }, data: { a: '1' } } as KubeObject);
  // A dry run deletes nothing; a bad option is refused before any request.
  await cms.delete(name, undefined, { dryRun: true });
  assert.equal((await cms.get(name)).metadata.uid, created.metadata.uid, 'a dry run deletes nothing');
  await assert.rejects(cms.delete(name, undefined, { propagationPolicy: 'Sideways' as 'Orphan' }), invalid(/propagationPolicy/));
  // Preconditions: a stale resourceVersion or another uid deletes nothing.
  const conflict = (what: RegExp) => (e: unknown) => e instanceof KubeError && e.code === 409 && e.reason === 'Conflict' && what.test(e.message);
  await cms.replace({ ...created, data: { a: '2' } } as KubeObject);
  await assert.rejects(cms.delete(name, undefined, { preconditions: { resourceVersion: created.metadata.resourceVersion } }), conflict(/modified/));
  await assert.rejects(cms.delete(name, undefined, { preconditions: { uid: 'someone-else' } }), conflict(/UID in precondition/));
  assert.equal((await cms.get(name)).metadata.uid, created.metadata.uid, 'a failed precondition deletes nothing');
  await assert.rejects(cms.delete(name, undefined, { preconditions: 'x' as unknown as { uid: string } }), invalid(/preconditions/));
  const current = await cms.get(name);
  const gone = await cms.delete(name, undefined, {
    propagationPolicy: 'Background',
    gracePeriodSeconds: 0,
    preconditions: { uid: current.metadata.uid, resourceVersion: current.metadata.resourceVersion },
  });
  if (!isStatus(gone)) throw new Error(`a configmap deleted at once answers a Status, not ${JSON.stringify(gone)}`);
  const status: Status = gone;
  assert.equal(status.status, 'Success');
  assert.equal(status.details?.name, name);
  assert.equal(status.details?.uid, created.metadata.uid);

  const pods = client.resource({ version: 'v1', resource: 'pods' });
  const pod = unique('scope-pod');
  await pods.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: pod, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
  const last = await pods.delete(pod, 'default');
  assert.ok(!isStatus(last), 'a pod deletion answers the pod');
  if (!isStatus(last)) assert.equal(last.metadata.name, pod);
  await assert.rejects(pods.delete(pod, 'default'), (e: unknown) => e instanceof KubeError && e.code === 404);
});

test('the lister takes (name, namespace?) like the client', async () => {
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    const nodes = factory.informer({ version: 'v1', resource: 'nodes' });
    factory.start();
    await factory.waitForSync();
    const p = pods.lister().list({})[0]!;
    assert.equal(pods.lister().get(p.metadata.name, p.metadata.namespace)?.metadata.uid, p.metadata.uid);
    assert.throws(
      () => pods.lister().get(p.metadata.name),
      (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /pods is namespaced: get .* needs a namespace/.test(e.message),
      'a namespaced object needs its namespace when the informer watches every namespace, as ResourceClient.get does',
    );
    assert.equal(pods.lister().get(p.metadata.namespace!, p.metadata.name), undefined, 'the reverse order finds nothing');
    const n = nodes.lister().list({})[0]!;
    assert.equal(nodes.lister().get(n.metadata.name)?.metadata.name, n.metadata.name);
  } finally {
    factory.shutdown();
  }
});

test("a lister's get without a namespace looks in the informer's one namespace; list and byIndex keep their scope", async () => {
  const factory = new InformerFactory(client);
  try {
    const p = (await client.resource({ version: 'v1', resource: 'pods' }).list({ limit: 1 })).items[0]!;
    const ns = p.metadata.namespace!;
    const inNs = factory.informer({ version: 'v1', resource: 'pods', namespace: ns });
    factory.start();
    await factory.waitForSync();
    const lister = inNs.lister();
    assert.equal(lister.get(p.metadata.name)?.metadata.uid, p.metadata.uid, 'the informer is scoped to one namespace');
    assert.equal(lister.get(p.metadata.name, ns)?.metadata.uid, p.metadata.uid);
    assert.equal(lister.get(p.metadata.name, 'elsewhere'), undefined, 'another namespace is not cached here');
    assert.ok(lister.list({}).every((o) => o.metadata.namespace === ns));
    assert.equal(lister.list({ namespace: 'elsewhere' }).length, 0);
    assert.equal(lister.byIndex('namespace', ns).length, lister.list({}).length);
  } finally {
    factory.shutdown();
  }
});

test('asking again for a scope with other cache options is an OptionsConflict error', async () => {
  const factory = new InformerFactory(client);
  try {
    const keep = (o: KubeObject) => o;
    const byName = (o: KubeObject) => [o.metadata.name];
    const base = { version: 'v1', resource: 'configmaps', namespace: 'default' };
    const inf = factory.informer({ ...base, transform: keep, indexers: { byName } });
    const conflict = (option: string) => (e: unknown) =>
      e instanceof KubeError && e.reason === 'OptionsConflict' && e.message.includes(`\`${option}\``) && e.message.includes('v1/configmaps in "default"');
    assert.throws(() => factory.informer({ ...base, indexers: { byName } }), conflict('transform'));
    assert.throws(() => factory.informer({ ...base, transform: (o: KubeObject) => o, indexers: { byName } }), conflict('transform'));
    assert.throws(() => factory.informer({ ...base, transform: keep, resyncMs: 1000 }), conflict('resyncMs'));
    assert.throws(() => factory.informer({ ...base, transform: keep, metadataOnly: true }), conflict('metadataOnly'));
    assert.throws(() => factory.informer({ ...base, transform: keep, indexers: { byName: (o: KubeObject) => [o.metadata.name] } }), conflict('indexers'));
    // The same functions: the same informer; a new index name is added to it.
    const byNs = (o: KubeObject) => [o.metadata.namespace ?? ''];
    const again = factory.informer({ ...base, transform: keep, indexers: { byNs } });
    factory.start();
    await again.waitForSync();
    const first = inf.lister().list({})[0];
    if (first) assert.deepEqual(again.lister().byIndex('byName', first.metadata.name).map((o) => o.metadata.uid), [first.metadata.uid]);
    await until(() => inf.lister().byIndex('byNs', 'default').length === inf.lister().list({}).length);
    // Another selector is another informer, whatever its options.
    assert.ok(factory.informer({ ...base, labelSelector: 'a=b', resyncMs: 1000 }));
    // A default written out is the default: the same informer, both ways round.
    const plain = { version: 'v1', resource: 'configmaps', namespace: 'kube-system' };
    factory.informer(plain);
    const spelled = { ...plain, maxBacklog: 1024, backoff: { initialMs: 800, capMs: 30_000 }, resyncMs: 0, queue: 'delta' as const };
    assert.doesNotThrow(() => factory.informer(spelled));
    const other = { ...plain, labelSelector: 'x=y' };
    factory.informer({ ...other, ...spelled });
    assert.doesNotThrow(() => factory.informer(other));
    assert.throws(() => factory.informer({ ...other, maxBacklog: 1023 }), (e: unknown) => e instanceof KubeError && e.reason === 'OptionsConflict' && e.message.includes('`maxBacklog`'));
  } finally {
    factory.shutdown();
  }
});

test('an index name given another function is an OptionsConflict ("indexer conflict") through addIndexer and the factory alike', async () => {
  const factory = new InformerFactory(client);
  try {
    const byName = (o: KubeObject) => [o.metadata.name];
    const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'kube-public' });
    inf.addIndexer('byName', byName);
    assert.doesNotThrow(() => inf.addIndexer('byName', byName), 'the same function again is the index there');
    const conflict = (e: unknown) => e instanceof KubeError && e.reason === 'OptionsConflict' && /indexer conflict/.test(e.message) && /byName/.test(e.message);
    assert.throws(() => inf.addIndexer('byName', (o: KubeObject) => [o.metadata.name]), conflict);
    const viaFactory = (e: unknown) => e instanceof KubeError && e.reason === 'OptionsConflict' && /indexer conflict/.test(e.message);
    assert.throws(
      () => factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'kube-public', indexers: { byName: (o: KubeObject) => [o.metadata.uid ?? ''] } }),
      viaFactory,
    );
  } finally {
    factory.shutdown();
  }
});

test('a 404 to a list or watch names the resource and path; a built-in kind in another group names the group', async () => {
  // `deployments` with the group left off: the server's message names nothing.
  const wrong = client.resource({ version: 'v1', resource: 'deployments' });
  const e = await wrong.list({}).then(
    () => assert.fail('listed'),
    (e: unknown) => e as KubeError,
  );
  assert.equal(e.code, 404);
  assert.match(e.message, /\(list deployments: GET \/api\/v1\/deployments\)$/);
  // The note is the error's: its `status` is the Status the server sent.
  const sent = (await (await fetch(`${server}/api/v1/deployments`, { headers: token ? { authorization: `Bearer ${token}` } : {} })).json()) as Status;
  assert.ok(sent.message);
  assert.equal(e.status?.message, sent.message);
  assert.equal(e.message, `API error: NotFound (404): ${sent.message} (list deployments: GET /api/v1/deployments)`);
  const factory = new InformerFactory(client);
  try {
    const inf = factory.informer({ version: 'v1', resource: 'deployments', namespace: 'default' });
    factory.start();
    await until(() => inf.status.lastError !== undefined);
    assert.match(inf.status.lastError!.message, /\(list deployments: GET \/api\/v1\/namespaces\/default\/deployments\)/);
    assert.throws(
      () => factory.informer({ version: 'v1', kind: 'Deployment' }),
      invalid(/"Deployment" is not in "v1": the built-in kind is in \{ group: 'apps', version: 'v1' \}/),
    );
    assert.throws(() => factory.informer({ version: 'v1', kind: 'Widget' }), invalid(/not a built-in kind: resolve it with `await client.resourceFor\("Widget"\)`/));
    // A kind and a resource that disagree: refused, not one of them silently used.
    const disagree = invalid(/`kind` "Pod" and `resource` "services" disagree: "services" holds "Service"/);
    assert.throws(() => client.resource({ version: 'v1', kind: 'Pod', resource: 'services' }), disagree);
    assert.throws(() => factory.informer({ version: 'v1', kind: 'Pod', resource: 'services' }), disagree);
    // resourceFor's answer spread in agrees with itself.
    assert.ok((await client.resource({ ...(await client.resourceFor('svc')), namespace: 'default' }).list({})).items);
  } finally {
    factory.shutdown();
  }
});
