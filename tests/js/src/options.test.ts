// Client options as a client-go user reads them: a zero timeout is no
// timeout, a negative QPS turns throttling off, `namespace: ''` on a
// collection verb is every namespace, and a stopped informer is let go by
// its factory.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, InformerFactory, KubeError } from 'kubewasm';
import { server, sim, token, until } from './sim.js';

// The suites after this one expect the cluster scripts/with-sim.sh seeds.
after(() => sim('/sim/seed', { namespaces: 3, pods: 30, seed: 1 }));

const pods = (opts: object) => new KubeClient({ server, token, maxRetries: 0, ...opts }).resource({ version: 'v1', resource: 'pods' });
const invalid = (message: RegExp) => (e: unknown) => {
  assert.ok(e instanceof KubeError, `a KubeError, not ${String(e)}`);
  assert.equal(e.reason, 'Invalid', e.message);
  assert.match(e.message, message);
  return true;
};

test('timeoutMs: 0 and Infinity turn the request timeout off; a positive one still applies', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 1, pods: 3, seed: 11 });
  await sim('/sim/faults', { latencyMs: 300 });
  try {
    assert.equal((await pods({ timeoutMs: 0 }).list({})).items.length, 3);
    assert.equal((await pods({ timeoutMs: Infinity }).list({})).items.length, 3);
    await assert.rejects(pods({ timeoutMs: 100 }).list({}), (e: unknown) => e instanceof KubeError && e.reason === 'Timeout');
  } finally {
    await sim('/sim/faults/clear', {});
  }
  for (const bad of [-1, Number.NaN, '5']) {
    assert.throws(() => new KubeClient({ server, timeoutMs: bad as number }), invalid(/`timeoutMs`/));
  }
});

test('qps: a negative value or Infinity turns throttling off, 0 keeps the default; bad values are refused', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 2, seed: 12 });
  // Two requests at one every two seconds: the second waits for its token.
  const slow = pods({ qps: 0.5, burst: 1 });
  let t0 = Date.now();
  await slow.list({});
  await slow.list({});
  assert.ok(Date.now() - t0 >= 1_500, `throttled: ${Date.now() - t0} ms`);
  for (const qps of [-1, Infinity]) {
    const free = pods({ qps, burst: 1 });
    t0 = Date.now();
    for (let i = 0; i < 3; i++) await free.list({});
    assert.ok(Date.now() - t0 < 1_500, `qps ${qps} is not throttled: ${Date.now() - t0} ms`);
  }
  assert.equal((await pods({ qps: 0, burst: 0 }).list({})).items.length, 2, 'the defaults');
  for (const bad of [Number.NaN, 'fast']) {
    assert.throws(() => new KubeClient({ server, qps: bad as number }), invalid(/`qps` must be a number/));
  }
});

test('maxResponseBytes below 1024 is refused by its name, and a body over it names the option', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 5, seed: 13 });
  assert.throws(() => new KubeClient({ server, maxResponseBytes: 100 }), invalid(/option `maxResponseBytes` must be at least 1024/));
  await assert.rejects(pods({ maxResponseBytes: 2048 }).list({}), (e: unknown) => {
    assert.ok(e instanceof KubeError && e.reason === 'ResponseTooLarge', String(e));
    assert.match(e.message, /maxResponseBytes/);
    return true;
  });
});

test("namespace: '' lists and watches every namespace, as NamespaceAll; absent keeps the client's", async () => {
  await sim('/sim/seed', { namespaces: 2, pods: 8, seed: 14 });
  const all = await pods({}).list({});
  const spaces = [...new Set(all.items.map((p) => p.metadata.namespace))].sort();
  assert.equal(spaces.length, 2, 'the sim seeded two namespaces');
  const [mine, other] = spaces as [string, string];
  const rc = new KubeClient({ server, token }).resource({ version: 'v1', resource: 'pods', namespace: mine });
  const own = await rc.list({});
  assert.ok(own.items.length > 0 && own.items.every((p) => p.metadata.namespace === mine));
  const every = await rc.list({ namespace: '' });
  assert.equal(every.items.length, all.items.length);
  // A watch from that list sees a change in the other namespace.
  const w = rc.watch({ namespace: '', resourceVersion: every.resourceVersion });
  const next = w.next();
  await rc.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'everywhere', namespace: other }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
  const ev = await next;
  await w.return();
  await rc.delete('everywhere', other);
  assert.equal(ev.done, false);
  assert.equal(ev.value.type, 'ADDED');
  assert.equal(ev.value.object.metadata.namespace, other);
  // Deleting a collection across namespaces is refused before any request.
  await assert.rejects(rc.deleteCollection({ namespace: '' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});

test('a stopped informer is let go by its factory: asking again makes a new one that syncs and follows', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 4, seed: 15 });
  const client = new KubeClient({ server, token });
  const factory = new InformerFactory(client);
  try {
    const scope = { version: 'v1', resource: 'pods' };
    const first = factory.informer(scope);
    factory.start();
    assert.ok(await first.waitForSync());
    first.stop();
    assert.equal(first.status.phase, 'stopped');
    const again = factory.informer(scope);
    assert.ok(await again.waitForSync(), 'the new informer syncs');
    assert.equal(again.status.phase, 'watching');
    const [ns] = new Set(again.lister().list().map((p) => p.metadata.namespace));
    const rc = client.resource({ version: 'v1', resource: 'pods' });
    await rc.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'after-stop', namespace: ns }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    await until(() => again.lister().get('after-stop', ns) !== undefined);
    assert.equal(first.lister().get('after-stop', ns), undefined, 'the stopped one keeps its last cache');
    assert.equal(first.lister().list().length, 4);
    await rc.delete('after-stop', ns);
  } finally {
    factory.shutdown();
  }
});

test('a null labelSelector, which selects nothing, is refused by requests and informers rather than sent as none', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 3, seed: 16 });
  const rc = pods({});
  const none = null as unknown as string;
  await assert.rejects(rc.list({ labelSelector: none }), invalid(/`labelSelector` is null/));
  await assert.rejects(rc.deleteCollection({ namespace: 'ns-0', labelSelector: none, dryRun: true }), invalid(/`labelSelector` is null/));
  assert.throws(() => rc.watch({ labelSelector: none }), invalid(/`labelSelector` is null/));
  const factory = new InformerFactory(new KubeClient({ server, token }));
  try {
    assert.throws(() => factory.informer({ version: 'v1', resource: 'pods', labelSelector: none }), invalid(/`labelSelector` is null/));
  } finally {
    factory.shutdown();
  }
  assert.equal((await rc.list({})).items.length, 3, 'nothing was deleted');
});

test('a misspelt informer option is refused instead of ignored; what resourceFor returns spreads in', async () => {
  await sim('/sim/seed', { namespaces: 1, pods: 3, seed: 17 });
  const client = new KubeClient({ server, token });
  const factory = new InformerFactory(client);
  try {
    const typo = { version: 'v1', resource: 'pods', labelSelectr: 'app=web' } as { version: string; resource: string };
    assert.throws(() => factory.informer(typo), invalid(/unknown informer option `labelSelectr`/));
    // Absent is absent, written out or not.
    const informer = factory.informer({ ...(await client.resourceFor('pods')), labelSelector: undefined, extra: undefined } as { version: string });
    factory.start();
    assert.ok(await informer.waitForSync());
    assert.equal(informer.lister().list().length, 3);
  } finally {
    factory.shutdown();
  }
});

test('every member the typings declare for InformerOptions and ApiResourceInfo is one the informer knows', async () => {
  const dir = dirname(fileURLToPath(import.meta.resolve('kubewasm')));
  const dts = readFileSync(join(dir, 'web', 'kubewasm.d.ts'), 'utf8');
  const members = (name: string) => {
    const body = dts.match(new RegExp(`export interface ${name}\\b[^{]*\\{([\\s\\S]*?)\\n\\}`))?.[1] ?? '';
    return [...body.matchAll(/^\s+(\w+)\??:/gm)].map((m) => m[1]!);
  };
  const keys = [...members('InformerOptions'), ...members('ApiResourceInfo')];
  assert.ok(keys.includes('labelSelector') && keys.includes('shortNames') && keys.length > 20, keys.join());
  const factory = new InformerFactory(new KubeClient({ server, token }));
  try {
    for (const key of keys) {
      // A value no option takes: refused for what it is, never as unknown.
      try {
        factory.informer({ version: 'v1', resource: 'pods', [key]: Symbol('x') } as { version: string });
      } catch (e) {
        assert.doesNotMatch((e as Error).message, /unknown informer option/, key);
      }
    }
  } finally {
    factory.shutdown();
  }
});

test('resourceFor asks the server again for a name its cached discovery lacks (a CRD installed since), once, not within 10 s', async () => {
  let requests = 0;
  let installed = false;
  // The CRD appears in the aggregated discovery answer once "installed".
  const withCrd = async (input: string, init: RequestInit) => {
    requests++;
    const r = await fetch(input, init);
    if (!installed || !new URL(input).pathname.endsWith('/apis')) return r;
    const list = (await r.json()) as { items: unknown[] };
    list.items.push({ metadata: { name: 'demo2.example.com' }, versions: [{ version: 'v1', freshness: 'Current', resources: [{ resource: 'gadgets', singularResource: 'gadget', scope: 'Cluster', responseKind: { group: 'demo2.example.com', version: 'v1', kind: 'Gadget' }, verbs: ['get', 'list', 'watch'] }] }] });
    return new Response(JSON.stringify(list), { status: 200, headers: r.headers });
  };
  const client = new KubeClient({ server, token, fetch: withCrd });
  await client.resourceFor('pods');
  installed = true;
  requests = 0;
  // Within seconds of the last answer a miss is a miss (a typo in a loop asks nothing).
  await assert.rejects(client.resourceFor('gadget'), (e: unknown) => e instanceof KubeError && e.reason === 'NotFound');
  assert.equal(requests, 0);
  await new Promise((r) => setTimeout(r, 10_500));
  const found = await client.resourceFor('gadget');
  assert.deepEqual([found.group, found.resource, found.namespaced], ['demo2.example.com', 'gadgets', false]);
  assert.ok(requests > 0, 'discovery was asked again');
});
