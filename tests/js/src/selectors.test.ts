// API label selectors (a Deployment's `spec.selector`) given to listers,
// scoped views and informers directly, against the sim.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, InformerFactory, KubeError, type KubeObject, type LabelSelectorObject } from 'kubewasm';

import { server, sim, token } from './sim.js';

type Deployment = KubeObject & { spec: { selector: LabelSelectorObject } };

const client = new KubeClient({ server, token });
const names = (objs: readonly KubeObject[]) => objs.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

test("a Deployment's spec.selector lists its pods, with client-go's null/empty/operator rules", async () => {
  await sim('/sim/seed', { namespaces: 2, pods: 60, seed: 18 });
  const factory = new InformerFactory(client);
  const pods = factory.informer({ version: 'v1', resource: 'pods' });
  const deployments = factory.informer<Deployment>({ group: 'apps', version: 'v1', resource: 'deployments' });
  factory.start();
  await Promise.all([pods.waitForSync(), deployments.waitForSync()]);
  const all = pods.getSnapshot();
  const lister = pods.lister();

  const ds = deployments.getSnapshot();
  assert.ok(ds.length > 0);
  let matched = 0;
  for (const d of ds) {
    const want = all.filter(
      (p) =>
        p.metadata.namespace === d.metadata.namespace &&
        Object.entries(d.spec.selector.matchLabels ?? {}).every(([k, v]) => p.metadata.labels?.[k] === v),
    );
    const got = lister.list({ namespace: d.metadata.namespace, labelSelector: d.spec.selector });
    assert.deepEqual(names(got), names(want), d.metadata.name);
    assert.deepEqual(names(pods.scoped({ namespace: d.metadata.namespace, labelSelector: d.spec.selector }).getSnapshot()), names(want));
    matched += got.length;
  }
  assert.ok(matched > 0, 'the seeded deployments own pods');

  // Every operator, and the string form of the same selector agrees.
  const app = all[0]!.metadata.labels!['app']!;
  const exprs: Array<[LabelSelectorObject, string]> = [
    [{ matchExpressions: [{ key: 'app', operator: 'In', values: [app, 'nope'] }] }, `app in (${app},nope)`],
    [{ matchExpressions: [{ key: 'app', operator: 'NotIn', values: [app] }] }, `app notin (${app})`],
    [{ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, 'tier'],
    [{ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, '!tier'],
    [{ matchLabels: { app }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, `app=${app},tier`],
  ];
  for (const [obj, str] of exprs) {
    assert.deepEqual(names(lister.list({ labelSelector: obj })), names(lister.list({ labelSelector: str })), str);
  }
  assert.ok(lister.list({ labelSelector: exprs[0]![0] }).length > 0);

  // Empty matches everything, null nothing, undefined is no filter.
  assert.equal(lister.list({ labelSelector: {} }).length, all.length);
  assert.equal(lister.list({ labelSelector: { matchLabels: {}, matchExpressions: [] } }).length, all.length);
  assert.equal(lister.list({ labelSelector: undefined }).length, all.length);
  assert.deepEqual(lister.list({ labelSelector: null }), []);
  assert.deepEqual(pods.scoped({ labelSelector: null }).getSnapshot(), []);

  // Bad operators and values throw `Invalid` with the requirement's index.
  const invalid = (position: number) => (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && e.position === position;
  assert.throws(() => lister.list({ labelSelector: { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['x'] }] } }), invalid(0));
  assert.throws(
    () => lister.list({ labelSelector: { matchLabels: { app }, matchExpressions: [{ key: 'app', operator: 'In', values: [] }] } }),
    invalid(1),
  );
  assert.throws(() => lister.list({ labelSelector: { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['x'] }] } }), invalid(0));
  assert.throws(() => lister.list({ labelSelector: { matchLabels: { 'bad key': 'x' } } }), invalid(0));
  assert.throws(() => lister.list({ labelSelector: 42 as unknown as string }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');

  // An informer takes the object too: the server filters by its string form.
  const d = ds[0]!;
  const owned = factory.informer({ version: 'v1', resource: 'pods', namespace: d.metadata.namespace, labelSelector: d.spec.selector });
  owned.start();
  await owned.waitForSync();
  assert.deepEqual(names(owned.getSnapshot()), names(lister.list({ namespace: d.metadata.namespace, labelSelector: d.spec.selector })));
  factory.shutdown();
});

test('> and < in a label selector: the lister, a scoped view and the server agree', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 5, seed: 19 });
  const ns = 'default';
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: ns });
  const gens = ['1', '2', '10', '007', 'x'];
  for (const [i, gen] of gens.entries()) {
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `gen-${i}`, namespace: ns, labels: { gen } } }, {});
  }
  const factory = new InformerFactory(client);
  try {
    const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: ns });
    factory.start();
    await inf.waitForSync();
    const cases: [string, string[]][] = [
      ['gen>1', ['2', '10', '007']],
      ['gen<7', ['1', '2']],
      ['gen>1,gen<10', ['2', '007']],
    ];
    for (const [selector, want] of cases) {
      const gensOf = (objs: readonly KubeObject[]) => objs.map((o) => o.metadata.labels?.gen ?? '').sort();
      assert.deepEqual(gensOf(inf.lister().list({ labelSelector: selector })), [...want].sort(), `lister ${selector}`);
      assert.deepEqual(gensOf(inf.scoped({ labelSelector: selector }).getSnapshot()), [...want].sort(), `scoped ${selector}`);
      const { items } = await cms.list({ labelSelector: selector });
      assert.deepEqual(gensOf(items), [...want].sort(), `server ${selector}`);
    }
    assert.throws(
      () => inf.lister().list({ labelSelector: 'gen>=1' }),
      (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /'>=' is not a label selector operator/.test(e.message),
    );
  } finally {
    factory.shutdown();
    for (const i of gens.keys()) await cms.delete(`gen-${i}`, ns, {});
    // Leave the cluster the harness started with for files that do not seed.
    await sim('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  }
});
