// A misspelt option is refused, not ignored: `tokne` would send no token,
// `namepsace` would list every namespace and `dryrun` would write for real.
// Each options object's allowlist is exactly what its typings declare.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, InformerFactory, KubeError, WorkQueue, loadKubeconfig, nodeTransport } from 'kubewasm';
import { server, sim, token } from './sim.js';

after(() => sim('/sim/seed', { namespaces: 3, pods: 30, seed: 1 }));

const client = new KubeClient({ server, token, maxRetries: 0 });
const pods = client.resource({ version: 'v1', resource: 'pods' });
const cms = client.resource({ version: 'v1', resource: 'configmaps' });

/** What `call` threw or rejected with (it must do one or the other). */
async function failure(call: () => unknown): Promise<KubeError> {
  let thrown: unknown;
  try {
    await call();
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown instanceof KubeError, `a KubeError, not ${String(thrown)}`);
  return thrown;
}

/** The refusal of the unknown option `key`: the known ones it lists, and the one it suggests. */
async function refusal(call: () => unknown, key: string): Promise<{ known: string[]; meant: string | undefined }> {
  const e = await failure(call);
  assert.equal(e.reason, 'Invalid', e.message);
  const m = new RegExp(`unknown \\w+ option \`${key}\` \\((?:did you mean \`(\\w+)\`\\? )?known: ([^)]*)\\)`).exec(e.message);
  assert.ok(m, e.message);
  return { meant: m[1], known: m[2]!.split(', ') };
}

const any = <T = never>(v: object) => v as T;

test('an unknown option of any size is refused at once, its name cut short in the message', async () => {
  const huge = 'x'.repeat(20_000_000);
  const t0 = Date.now();
  const e = await failure(() => pods.list(any({ [huge]: 1 })));
  assert.equal(e.reason, 'Invalid', e.message);
  assert.ok(e.message.length < 1_000, `a message of ${e.message.length} characters`);
  assert.match(e.message, /unknown \w+ option `x{64}…` \(known: /);
  assert.ok(Date.now() - t0 < 5_000, `${Date.now() - t0} ms`);
  // The client still works.
  assert.ok(Array.isArray((await pods.list({})).items));
});

test('misspelt options are refused with the option meant, before anything is sent', async () => {
  await sim('/sim/seed', { namespaces: 2, pods: 4, seed: 41 });
  const cases: [string, () => unknown, string, string][] = [
    ['client', () => new KubeClient(any({ server, tokne: 's3cret' })), 'tokne', 'token'],
    ['client', () => new KubeClient(any({ server, timeout: 5 })), 'timeout', 'timeoutMs'],
    ['resource', () => client.resource(any({ version: 'v1', resource: 'pods', namespce: 'ns-0' })), 'namespce', 'namespace'],
    ['list', () => pods.list(any({ namepsace: 'ns-0' })), 'namepsace', 'namespace'],
    ['list', () => pods.list(any({ lableSelector: 'app=web' })), 'lableSelector', 'labelSelector'],
    ['get', () => pods.get('p', 'ns-0', any({ subResource: 'status' })), 'subResource', 'subresource'],
    ['watch', () => pods.watch(any({ resourceVerison: '1' })), 'resourceVerison', 'resourceVersion'],
    ['replace', () => cms.replace({ metadata: { name: 'x', namespace: 'default' } }, any({ fieldManger: 'me' })), 'fieldManger', 'fieldManager'],
    ['patch', () => cms.patch('x', 'default', {}, 'merge', any({ dryrun: true })), 'dryrun', 'dryRun'],
    ['delete', () => cms.delete('x', 'default', any({ gracePeriod: 0 })), 'gracePeriod', 'gracePeriodSeconds'],
    ['delete', () => cms.delete('x', 'default', any({ preconditions: { UID: 'u' } })), 'UID', 'uid'],
    ['deleteCollection', () => cms.deleteCollection(any({ namespace: 'default', fieldselector: 'a=b' })), 'fieldselector', 'fieldSelector'],
    ['logs', () => client.logs('ns-0', 'p', any({ tail: 3 })), 'tail', 'tailLines'],
    ['WorkQueue', () => new WorkQueue(any({ baseDelay: 1 })), 'baseDelay', 'baseDelayMs'],
    ['runWorkers', () => new WorkQueue().runWorkers(1, () => {}, any({ onerror: () => {} })), 'onerror', 'onError'],
    ['factory', () => new InformerFactory(client, any({ releaseGrace: 0 })), 'releaseGrace', 'releaseGraceMs'],
    ['persist', () => new InformerFactory(client, any({ persist: { name: 'x', interval: 5 } })), 'interval', 'intervalMs'],
  ];
  for (const [what, call, key, meant] of cases) {
    const got = await refusal(call, key);
    assert.equal(got.meant, meant, what);
  }
  // Nothing like any option: no suggestion, the list only.
  assert.equal((await refusal(() => new KubeClient(any({ server, colour: 'blue' })), 'colour')).meant, undefined);
});

test('create with a misspelt dryRun creates nothing', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 1, seed: 42 });
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typo-dry-run', namespace: 'default' }, data: { a: '1' } };
  assert.match((await failure(() => cms.create(obj, any({ dryrun: true })))).message, /`dryrun` \(did you mean `dryRun`\?/);
  const e = await failure(() => cms.get('typo-dry-run', 'default'));
  assert.equal(e.code, 404, 'not created');
  // Spelt right, it is a dry run indeed.
  await cms.create(obj, { dryRun: true });
  assert.equal((await failure(() => cms.get('typo-dry-run', 'default'))).code, 404);
});

test("dryRun is true or the API's ['All'], and a boolean option of another type is refused, never read as false", async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 1, seed: 44 });
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry-all', namespace: 'default' }, data: { a: '1' } };
  await cms.create(obj, { dryRun: ['All'] });
  assert.equal((await failure(() => cms.get('dry-all', 'default'))).code, 404, "['All'] is a dry run");
  for (const dryRun of ['All', 'true', 1, {}, ['all'], ['All', 'All']]) {
    const e = await failure(() => cms.create(obj, any({ dryRun })));
    assert.equal(e.reason, 'Invalid', `${JSON.stringify(dryRun)}: ${e.message}`);
    assert.match(e.message, /dryRun/);
  }
  assert.equal((await failure(() => cms.get('dry-all', 'default'))).code, 404, 'nothing was written');
  await cms.create(obj);
  for (const dryRun of ['All', 1]) {
    assert.equal((await failure(() => cms.delete('dry-all', 'default', any({ dryRun })))).reason, 'Invalid');
  }
  await cms.delete('dry-all', 'default', { dryRun: ['All'] });
  assert.ok(await cms.get('dry-all', 'default'), 'a dry-run delete leaves the object');
  // A kubernetes-types V1DeleteOptions, type members and all.
  await cms.delete('dry-all', 'default', { apiVersion: 'v1', kind: 'DeleteOptions', dryRun: ['All'], propagationPolicy: 'Background' });
  assert.ok(await cms.get('dry-all', 'default'), 'still a dry run');
  assert.equal((await failure(() => cms.delete('dry-all', 'default', { apiVersion: 'v1', kind: 'ConfigMap' }))).reason, 'Invalid');
  assert.equal((await failure(() => cms.delete('dry-all', 'default', { apiVersion: 'apps/v1' }))).reason, 'Invalid');
  await cms.delete('dry-all', 'default');
  const refused = [
    () => cms.patch('dry-all', 'default', obj, 'apply', any({ fieldManager: 'me', force: 'yes' })),
    () => client.logs('ns-0', 'p', any({ follow: 'false' })),
    () => client.logs('ns-0', 'p', any({ timestamps: 1 })),
    () => pods.watch(any({ allowWatchBookmarks: 'true' })),
    () => new WorkQueue(any({ timings: 'no' })),
  ];
  for (const call of refused) {
    const e = await failure(call);
    assert.equal(e.reason, 'Invalid', e.message);
    assert.match(e.message, /must be a boolean/);
  }
});

test('a waitForSync timeout of 0 is no limit, as the client reads timeoutMs', async () => {
  const factory = new InformerFactory(client);
  try {
    const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default' });
    factory.start();
    assert.equal(await inf.waitForSync({ timeoutMs: 0 }), true);
    assert.equal(await factory.waitForSync({ timeoutMs: 0 }), true);
  } finally {
    factory.shutdown();
  }
});

test('connectShared refuses unknown options too', async () => {
  const { connectShared } = await import('kubewasm/shared');
  const e = await failure(() => connectShared(any({ client: { server, token }, hots: 'page' })));
  assert.equal(e.reason, 'Invalid');
  assert.match(e.message, /unknown connectShared option `hots` \(known: client, factory, host, workerUrl, identity\)/);
  const c = await connectShared({ client: { server, token }, host: 'page' });
  assert.equal(c.host.kind, 'page');
  c.close();
});

test('informer-side option objects refuse unknown keys too: filters, handlers, backoff, indexers stay', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 2, seed: 43 });
  const factory = new InformerFactory(client);
  try {
    const inf = factory.informer({ version: 'v1', resource: 'pods' });
    assert.equal((await refusal(() => inf.lister().list(any({ labelselector: 'a=b' })), 'labelselector')).meant, 'labelSelector');
    assert.equal((await refusal(() => inf.scoped(any({ namesapce: 'default' })), 'namesapce')).meant, 'namespace');
    assert.equal((await refusal(() => inf.addEventHandler({}, any({ resync: 1000 })), 'resync')).meant, 'resyncMs');
    const backoff = any<{ initialMs: number }>({ initial: 1 });
    assert.equal((await refusal(() => factory.informer({ version: 'v1', resource: 'pods', namespace: 'x', backoff }), 'initial')).meant, 'initialMs');
  } finally {
    factory.shutdown();
  }
});

test("the Node entry's KubeClient takes what loadKubeconfig returns, but not a namespace by itself", async () => {
  // `context` and `namespace` come together from loadKubeconfig.
  const c = new KubeClient(any({ server, token, context: 'sim', namespace: 'ns-0' }));
  assert.ok((await c.resource({ version: 'v1', resource: 'pods' }).list({})).items.length >= 0);
  // The namespace taken out, or the context set to undefined: still the kubeconfig's options.
  const { namespace: _ns, ...withoutNamespace } = { server, token, context: 'sim', namespace: 'ns-0' };
  assert.ok(new KubeClient(any(withoutNamespace)));
  assert.ok(new KubeClient(any({ server, token, context: undefined, namespace: 'ns-0' })));
  assert.equal((await refusal(() => new KubeClient(any({ server, namespace: 'ns-0' })), 'namespace')).known.includes('namespace'), false);
});

test('TLS and loadKubeconfig options refuse unknown keys too', async () => {
  const tlsTypo = await failure(() => new KubeClient(any({ server, tls: { insecureSkipTLSVerify: true } })));
  assert.equal(tlsTypo.reason, 'Invalid');
  assert.match(tlsTypo.message, /unknown tls option `insecureSkipTLSVerify` \(did you mean `insecureSkipTlsVerify`\? known: ca, cert, key, serverName, insecureSkipTlsVerify\)/);
  assert.throws(() => nodeTransport(any({ tsl: {} })), /unknown nodeTransport option `tsl`/);
  // Absent-valued keys are no settings.
  assert.ok(nodeTransport({ tls: { serverName: undefined } }));
  const kc = await failure(() => loadKubeconfig(any({ path: ['/nowhere'] })));
  assert.equal(kc.reason, 'Invalid');
  assert.match(kc.message, /unknown loadKubeconfig option `path` \(known: paths, context\)/);
});

// `signal` (an AbortSignal) is taken by the one-shot requests' options.
const REQUEST_OPTIONS = new Set(['GetOptions', 'ListOptions', 'WriteOptions', 'DeleteOptions', 'DeleteCollectionOptions']);

test('every allowlist is exactly the members its typings declare', async () => {
  const dir = dirname(fileURLToPath(import.meta.resolve('kubewasm')));
  const dts = readFileSync(join(dir, 'web', 'kubewasm.d.ts'), 'utf8');
  const members = (name: string): string[] => {
    const m = new RegExp(`export interface ${name}\\b([^{]*)\\{([\\s\\S]*?)\\n\\}`).exec(dts);
    assert.ok(m, `interface ${name} in the typings`);
    const own = [...m[2]!.matchAll(/^\s+(\w+)\??:/gm)].map((x) => x[1]!);
    const base = /extends (\w+)/.exec(m[1]!.replace(/<.*>/, ''))?.[1]; // not a type parameter's bound
    return base ? [...own, ...members(base)] : own;
  };
  const key = 'zzUnknownOption';
  const factory = new InformerFactory(client);
  const inf = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const objects: [string, string[], () => unknown][] = [
    ['ClientOptions', [], () => new KubeClient(any({ server, [key]: 1 }))],
    ['ResourceRef', members('ApiResourceInfo'), () => client.resource(any({ version: 'v1', resource: 'pods', [key]: 1 }))],
    ['GetOptions', [], () => pods.get('p', 'ns-0', any({ [key]: 1 }))],
    ['ListOptions', [], () => pods.list(any({ [key]: 1 }))],
    ['WatchOptions', [], () => pods.watch(any({ [key]: 1 }))],
    ['WriteOptions', [], () => cms.create({ metadata: { namespace: 'default' } }, any({ [key]: 1 }))],
    ['DeleteOptions', [], () => cms.delete('x', 'default', any({ [key]: 1 }))],
    ['DeleteCollectionOptions', [], () => cms.deleteCollection(any({ [key]: 1 }))],
    ['LogOptions', [], () => client.logs('ns-0', 'p', any({ [key]: 1 }))],
    ['DiscoveryOptions', [], () => client.discover(any({ [key]: 1 }))],
    ['DiscoveryOptions', [], () => client.resourceFor('pods', any({ [key]: 1 }))],
    ['WorkQueueOptions', [], () => new WorkQueue(any({ [key]: 1 }))],
    ['RunWorkersOptions', [], () => new WorkQueue().runWorkers(1, () => {}, any({ [key]: 1 }))],
    ['InformerFactoryOptions', [], () => new InformerFactory(client, any({ [key]: 1 }))],
    ['InformerOptions', members('ApiResourceInfo'), () => factory.informer(any({ version: 'v1', resource: 'pods', [key]: 1 }))],
    ['HandlerOptions', [], () => inf.addEventHandler({}, any({ [key]: 1 }))],
    ['ListFilter', [], () => inf.lister().list(any({ [key]: 1 }))],
  ];
  try {
    for (const [name, also, call] of objects) {
      const typed = new Set([...members(name), ...also]);
      if (REQUEST_OPTIONS.has(name)) typed.add('signal');
      const { known } = await refusal(call, key);
      assert.deepEqual([...known].sort(), [...typed].sort(), name);
    }
  } finally {
    factory.shutdown();
  }
});
