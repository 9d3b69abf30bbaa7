// The typings take the object types users bring, without casts: kubernetes-types' objects (interfaces: no index
// signature, `metadata` and its `name` optional, literal `apiVersion` and `kind`), an interface of one's own,
// client-node's models (classes whose timestamps are `Date`s), and the `T & KubeObject` form; wrong things are
// still refused (`@ts-expect-error`). The type check (`tsc` runs before the tests) is most of this file; the tests
// make the same calls against the sim, so the typings promise nothing the runtime does not do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Pod } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Scale } from 'kubernetes-types/autoscaling/v1.js';
import type { DeleteOptions as K8sDeleteOptions, LabelSelector } from 'kubernetes-types/meta/v1.js';
import {
  InformerFactory,
  KubeClient,
  KubeError,
  keyOf,
  type EventHandlers,
  type IndexFunc,
  type Informer,
  type InformerOptions,
  type KubeObject,
  type Lister,
  type ScopedView,
} from 'kubewasm';
import { server, token } from './sim.js';

/** `true` only when `A` and `B` are the same type. */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
/** Compiles only when given `true` as its type argument (an `Equal` that holds). */
const same = <T extends true>(_: T): void => undefined;

/** An object type of one's own, as for a custom resource: no index signature, `metadata` required. */
interface Widget {
  apiVersion: 'example.com/v1';
  kind: 'Widget';
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec: { size: number };
}

/** The shape of @kubernetes/client-node's models: classes, every member optional, timestamps as `Date`. */
declare class V1ObjectMetaShape {
  'name'?: string;
  'namespace'?: string;
  'generateName'?: string;
  'labels'?: { [key: string]: string };
  'creationTimestamp'?: Date;
  'deletionTimestamp'?: Date;
  'ownerReferences'?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
}
declare class V1ConfigMapShape {
  'apiVersion'?: string;
  'kind'?: string;
  'metadata'?: V1ObjectMetaShape;
  'data'?: { [key: string]: string };
}

const client = new KubeClient({ server, token });
const ns = 'default';
const unique = (prefix: string) => `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

/** A ConfigMap as app code builds one: typed as kubernetes-types declares it. */
function configMap(name: string, data: Record<string, string> = {}): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

test('create and replace take kubernetes-types objects held in typed variables, with or without & KubeObject', async () => {
  // With `& KubeObject`: metadata and its name typed as present in what comes back.
  const cms = client.resource<ConfigMap & KubeObject>({ version: 'v1', resource: 'configmaps', namespace: ns });
  const name = unique('typed-cm');
  const made = await cms.create(configMap(name, { a: '1' }));
  same<Equal<typeof made, ConfigMap & KubeObject>>(true);
  const madeName: string = made.metadata.name;
  assert.equal(madeName, name);
  const replaced = await cms.replace(configMap(name, { a: '2' }));
  assert.equal(replaced.data?.a, '2');
  // What came back goes back in; a literal checks the members it names.
  assert.equal((await cms.replace({ ...replaced, data: { a: '3' } })).data?.a, '3');
  await cms.create({ metadata: { generateName: 'typed-cm-' }, data: { a: '1' } });
  // @ts-expect-error data maps to strings
  void (() => cms.create({ metadata: { generateName: 'x-' }, data: { a: 1 } }));

  // Plain `ConfigMap`: no `& KubeObject` needed.
  const plain = client.resource<ConfigMap>({ version: 'v1', resource: 'configmaps', namespace: ns });
  const got = await plain.get(name);
  same<Equal<typeof got, ConfigMap>>(true);
  assert.equal(keyOf(got), `${ns}/${name}`);
  const again = await plain.replace({ ...got, data: { a: '4' } });
  assert.equal(again.data?.a, '4');
  const listed = await plain.list({ namespace: ns });
  same<Equal<typeof listed.items, ConfigMap[]>>(true);
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [] } };
  // @ts-expect-error a Pod is no ConfigMap (kubernetes-types' kind is a literal)
  void (() => plain.replace(pod));
  // @ts-expect-error a Pod is no ConfigMap
  void (() => cms.create(pod));
  // @ts-expect-error not an object
  void (() => plain.create(42));
  // @ts-expect-error not an object
  void (() => cms.replace('name'));
  await plain.delete(name);
});

test('client.resource<Pod>() with kubernetes-types Pod: create, replace, keyOf and delete options as it types them', async () => {
  const pods = client.resource<Pod>({ version: 'v1', resource: 'pods', namespace: ns });
  const name = unique('typed-pod');
  const draft: Pod = { metadata: { name, labels: { app: 'typed' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  const made = await pods.create(draft);
  same<Equal<typeof made, Pod>>(true);
  assert.equal(keyOf(made), `${ns}/${name}`);
  const withImage = structuredClone(made);
  withImage.spec!.containers[0]!.image = 'j';
  assert.equal((await pods.replace(withImage)).spec?.containers[0]?.image, 'j');
  // A literal without a name, left to the server.
  const generated = await pods.create({ metadata: { generateName: 'typed-pod-' }, spec: { containers: [{ name: 'c' }] } });
  // @ts-expect-error labels map to strings
  void (() => pods.create({ metadata: { generateName: 'x-', labels: 7 }, spec: { containers: [] } }));
  // @ts-expect-error a container has a name
  void (() => pods.create({ metadata: { generateName: 'x-' }, spec: { containers: [{ image: 'i' }] } }));

  // kubernetes-types' DeleteOptions, dryRun as a string array.
  const dry: K8sDeleteOptions = { apiVersion: 'v1', kind: 'DeleteOptions', dryRun: ['All'], propagationPolicy: 'Background' };
  await pods.delete(name, ns, dry);
  assert.equal(keyOf(await pods.get(name)), `${ns}/${name}`, 'a dry run deletes nothing');
  const asConst = { dryRun: ['All'] } as const;
  await pods.delete(name, ns, asConst);
  // @ts-expect-error dryRun is true or ['All'], not a string
  void (() => pods.delete(name, ns, { dryRun: 'All' }));
  // Typed as kubernetes-types types them; the runtime refuses what the API would not take.
  for (const opts of [{ dryRun: ['all'] }, { propagationPolicy: 'Sometimes' }] satisfies K8sDeleteOptions[]) {
    await assert.rejects(pods.delete(name, ns, opts), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  }
  await pods.delete(name, ns, { gracePeriodSeconds: 0 });
  await pods.delete(keyOf(generated).split('/')[1]!, ns, { gracePeriodSeconds: 0 });
});

test('an interface of your own is a resource type; a value of another type is refused', async () => {
  const widgets = client.resource<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets', namespace: ns });
  const w: Widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } };
  void (() => widgets.create(w));
  void (() => widgets.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { generateName: 'w-' }, spec: { size: 1 } }));
  void (() => widgets.replace(w));
  // @ts-expect-error a Widget has a spec
  void (() => widgets.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }));
  // @ts-expect-error a ConfigMap is no Widget
  void (() => widgets.create(configMap('c')));
  // @ts-expect-error size is a number
  void (() => widgets.replace({ ...w, spec: { size: '1' } }));
  const factory = new InformerFactory(client);
  const informer: Informer<Widget> = factory.informer<Widget>({ group: 'example.com', version: 'v1', resource: 'widgets' });
  informer.on('add', (o) => void o.spec.size);
  factory.shutdown();
  assert.ok(true);
});

test('an untyped client takes literals with any members, kubernetes-types objects and client-node models', async () => {
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: ns });
  const name = unique('untyped-cm');
  const made = await cms.create({ metadata: { name, finalizers: [] }, data: { a: '1' }, immutable: false });
  same<Equal<typeof made, KubeObject>>(true);
  await cms.replace({ ...made, data: { a: '2' } });
  // @ts-expect-error apiVersion is a string
  void (() => cms.create({ apiVersion: 5, metadata: { generateName: 'x-' } }));
  // @ts-expect-error labels map to strings
  void (() => cms.replace({ metadata: { name, labels: 7 } }));

  await cms.replace(configMap(name, { a: '3' }));
  const model = new (class implements V1ConfigMapShape {
    apiVersion = 'v1';
    kind = 'ConfigMap';
    metadata: V1ObjectMetaShape = { name, namespace: ns, creationTimestamp: new Date(0) };
    data = { a: '4' };
  })();
  const fromModel = await cms.replace(model);
  assert.deepEqual(fromModel.data, { a: '4' });
  const unnamed: V1ConfigMapShape = { data: {} };
  await assert.rejects(cms.replace(unnamed), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /metadata\.name/.test(e.message));
  assert.throws(() => keyOf(unnamed), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  assert.throws(() => keyOf({}), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  assert.equal(keyOf(model), `${ns}/${name}`);
  // @ts-expect-error not an object
  void (() => keyOf(42));
  await cms.delete(name);
});

test('informers, listers, views, handlers, indexers and hooks take kubernetes-types Pod', async () => {
  const factory = new InformerFactory(client);
  const byApp: IndexFunc<Pod> = (p) => p.metadata?.labels?.app;
  const opts: InformerOptions<Pod> = {
    version: 'v1',
    resource: 'pods',
    indexers: { byApp },
    transform: (p) => ({ ...p, status: {} }),
  };
  const pods = factory.informer<Pod>(opts);
  const seen: string[] = [];
  pods.on('add', (p: Pod) => seen.push(keyOf(p)));
  pods.on('update', (_old, p) => void p.spec?.containers);
  const handlers: EventHandlers<Pod> = { delete: (p: Pod, unknown: boolean) => void [p.metadata?.name, unknown] };
  pods.addEventHandler(handlers);
  factory.start();
  assert.ok(await pods.waitForSync({ timeoutMs: 10_000 }));
  const lister: Lister<Pod> = pods.lister();
  const all: Pod[] = lister.list();
  assert.ok(all.length > 0);
  assert.ok(seen.length > 0);
  assert.ok(all.every((p) => p.status !== undefined && Object.keys(p.status).length === 0), 'transformed');
  const first = all[0]!;
  assert.equal(lister.get(first.metadata!.name!, first.metadata?.namespace)?.metadata?.uid, first.metadata?.uid);
  // A kubernetes-types LabelSelector wherever a selector goes.
  const selector: LabelSelector = { matchExpressions: [{ key: 'no-such-label', operator: 'DoesNotExist' }] };
  assert.equal(lister.list({ labelSelector: selector }).length, all.length);
  const view: ScopedView<Pod> = pods.scoped({ labelSelector: selector });
  assert.equal(view.getSnapshot().length, all.length);
  const listed = await client.resource<Pod>({ version: 'v1', resource: 'pods' }).list({ labelSelector: selector });
  assert.ok(listed.items.length > 0);
  const deployment: Deployment = { spec: { selector, template: {} } };
  assert.equal(lister.list({ labelSelector: deployment.spec!.selector }).length, all.length);
  factory.shutdown();

  // The React hooks, type-checked only (React is not a dependency of these tests).
  const hooks = null as unknown as typeof import('kubewasm/react');
  void (() => {
    const informer: Informer<Pod> = hooks.useInformer<Pod>(factory, { version: 'v1', resource: 'pods', labelSelector: selector });
    const list: readonly Pod[] = hooks.useList(informer, { labelSelector: selector });
    const one: Pod | undefined = hooks.useObject(informer, 'default', 'p');
    return [list, one];
  });
});

test('a watch always has return(), typed as present', async () => {
  const pods = client.resource<Pod>({ version: 'v1', resource: 'pods' });
  const w = pods.watch({ sendInitialEvents: true });
  const first = await w.next();
  if (!first.done && first.value.type !== 'BOOKMARK') {
    const p: Pod = first.value.object;
    assert.ok(p.metadata?.name);
  }
  assert.deepEqual(await w.return(), { value: undefined, done: true });
});

test("a subresource other than 'status' is typed as its own object, not the resource's", async () => {
  const deployments = client.resource<Deployment>({ group: 'apps', version: 'v1', resource: 'deployments', namespace: ns });
  const name = unique('typed-deploy');
  const selector = { matchLabels: { app: name } };
  await deployments.create({
    metadata: { name },
    spec: { replicas: 1, selector, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  });
  try {
    const scale = await deployments.get(name, ns, { subresource: 'scale' });
    same<Equal<typeof scale, KubeObject>>(true);
    assert.equal(scale.kind, 'Scale');
    const typed = await deployments.get<Scale>(name, ns, { subresource: 'scale' });
    same<Equal<typeof typed, Scale>>(true);
    assert.equal(typed.spec?.replicas, 1);
    // Typed as what was written: here a Scale. (No resourceVersion: the sim's rollouts move the deployment's.)
    const next: Scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas: 2 } };
    const written = await deployments.replace(next, { subresource: 'scale' });
    same<Equal<typeof written, Scale>>(true);
    assert.equal(written.spec?.replicas, 2);
    const literal = await deployments.replace<Scale>({ metadata: { name }, spec: { replicas: 2 } }, { subresource: 'scale' });
    same<Equal<typeof literal, Scale>>(true);
    // @ts-expect-error a Scale's replicas is a number
    void (() => deployments.replace<Scale>({ metadata: { name }, spec: { replicas: '2' } }, { subresource: 'scale' }));
    const patched = await deployments.patch<Scale>(name, ns, { spec: { replicas: 3 } }, 'merge', { subresource: 'scale' });
    assert.equal(patched.spec?.replicas, 3);
    const untypedPatch = await deployments.patch(name, ns, { spec: { replicas: 3 } }, 'merge', { subresource: 'scale' });
    same<Equal<typeof untypedPatch, KubeObject>>(true);
    // `status`, no subresource, and options typed only as `GetOptions` give the resource's type.
    const status = await deployments.get(name, ns, { subresource: 'status' });
    same<Equal<typeof status, Deployment>>(true);
    const plain = await deployments.get(name, ns, { signal: AbortSignal.timeout(10_000) });
    same<Equal<typeof plain, Deployment>>(true);
    assert.equal(plain.spec?.replicas, 3);
    const statusPatch = await deployments.patch(name, ns, { status: {} }, 'merge', { subresource: 'status' });
    same<Equal<typeof statusPatch, Deployment>>(true);
    const statusWrite = await deployments.replace({ metadata: { name }, status: plain.status ?? {} }, { subresource: 'status' });
    same<Equal<typeof statusWrite, Deployment>>(true);
  } finally {
    await deployments.delete(name);
  }
});
