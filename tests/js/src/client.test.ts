// KubeClient and ResourceClient against the simulated API server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { KubeClient, KubeError, isStatus, type KubeObject, type Transport } from 'kubewasm';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!server) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

const client = new KubeClient({ server, token });

test('CRUD round trip on a ConfigMap, with typed errors', async () => {
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const name = `js-client-${Date.now()}`;
  const created = (await cms.create({ metadata: { name }, data: { a: '1' } } as KubeObject, {})) as KubeObject & { data: Record<string, string> };
  assert.equal(created.metadata.name, name);
  assert.ok(created.metadata.resourceVersion);
  assert.ok(!Object.isFrozen(created), 'client results belong to the caller');

  // Get, edit in place, replace: the usual read-modify-write.
  const got = (await cms.get(name)) as KubeObject & { data: Record<string, string> };
  assert.equal(got.metadata.uid, created.metadata.uid);
  got.data.a = 'edited';
  const replaced = (await cms.replace(got, {})) as KubeObject & { data: Record<string, string> };
  assert.equal(replaced.data.a, 'edited');
  assert.notEqual(replaced.metadata.resourceVersion, created.metadata.resourceVersion);

  const patched = (await cms.patch(name, undefined, { data: { b: '2' } }, 'merge', {})) as KubeObject & { data: Record<string, string> };
  assert.deepEqual(patched.data, { a: 'edited', b: '2' });

  await assert.rejects(
    cms.create({ metadata: { name } } as KubeObject, {}),
    (e: unknown) => e instanceof KubeError && e.code === 409 && e.reason === 'AlreadyExists',
  );
  const stale = { ...created, data: { c: '3' } };
  await assert.rejects(cms.replace(stale as KubeObject, {}), (e: unknown) => e instanceof KubeError && e.reason === 'Conflict');

  // What the server would refuse is refused before a request.
  const invalid = (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && e.code === 0;
  await assert.rejects(cms.create(null as unknown as KubeObject, {}), invalid);
  await assert.rejects(cms.replace([] as unknown as KubeObject, {}), invalid);
  await assert.rejects(cms.patch(name, undefined, { op: 'add', path: '/data/x', value: '1' }, 'json', {}), invalid);
  await assert.rejects(cms.patch(name, undefined, [{ data: { b: '3' } }], 'merge', {}), invalid);
  assert.deepEqual((await cms.patch(name, undefined, [{ op: 'add', path: '/data/c', value: '3' }], 'json', {}) as KubeObject & { data: Record<string, string> }).data.c, '3');

  await cms.delete(name);
  await assert.rejects(cms.get(name), (e: unknown) => e instanceof KubeError && e.code === 404 && e.reason === 'NotFound');
});

test('a continue token the server has compacted away is 410 Expired with a token that lists the rest at the current state', async () => {
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const prefix = `js-expired-${Date.now()}`;
  const names = ['a', 'b', 'c', 'd'].map((s) => `${prefix}-${s}`);
  for (const name of names) await cms.create({ metadata: { name, labels: { set: prefix } } } as KubeObject, {});
  try {
    const first = await cms.list({ limit: 2, labelSelector: `set=${prefix}` });
    assert.deepEqual(first.items.map((o) => o.metadata.name), names.slice(0, 2));
    assert.ok(first.continue);
    const compacted = await fetch(new URL('/sim/compact', server), { method: 'POST', body: '{}' });
    assert.equal(compacted.status, 200);
    await cms.delete(names[2]!);
    let fresh: string | undefined;
    await assert.rejects(cms.list({ limit: 2, labelSelector: `set=${prefix}`, continue: first.continue }), (e: unknown) => {
      assert.ok(e instanceof KubeError);
      assert.equal(e.code, 410);
      assert.equal(e.reason, 'Expired');
      assert.ok(isStatus(e.status));
      fresh = e.status?.metadata?.continue;
      return true;
    });
    assert.ok(fresh, 'the Status carries a continue token');
    // client-go's pager lists from the start instead; a caller who accepts an inconsistent list goes on.
    const rest = await cms.list({ limit: 2, labelSelector: `set=${prefix}`, continue: fresh });
    assert.deepEqual(rest.items.map((o) => o.metadata.name), [names[3]]);
  } finally {
    for (const name of names) await cms.delete(name).catch(() => undefined);
  }
});

test('list pages with continue tokens and a label selector', async () => {
  const pods = client.resource({ version: 'v1', resource: 'pods' });
  const all = await pods.list({});
  assert.ok(all.items.length > 0);
  const first = await pods.list({ limit: 5 });
  assert.equal(first.items.length, Math.min(5, all.items.length));
  if (all.items.length > 5) {
    assert.ok(first.continue);
    const second = await pods.list({ limit: 5, continue: first.continue });
    assert.notEqual(second.items[0]?.metadata.name, first.items[0]?.metadata.name);
  }
  const web = await pods.list({ labelSelector: 'app=web' });
  assert.ok(web.items.every((p) => p.metadata.labels?.['app'] === 'web'));
  await assert.rejects(pods.list({ labelSelector: 'app in (' }), (e: unknown) => e instanceof KubeError && e.code === 400);
  // A workload's selector object lists what the same string does.
  const byObject = await pods.list({ labelSelector: { matchLabels: { app: 'web' } } });
  assert.deepEqual(byObject.items.map((p) => p.metadata.uid).sort(), web.items.map((p) => p.metadata.uid).sort());
  const exprs = await pods.list({ labelSelector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] } });
  assert.equal(exprs.items.length + web.items.length, all.items.length);
  await assert.rejects(pods.list({ labelSelector: { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['x'] }] } }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});

test('deleteCollection deletes what its selectors match, and nothing else', async () => {
  const ns = `js-dc-${Date.now()}`;
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: ns });
  for (const [n, tier] of [['a', 'x'], ['b', 'x'], ['c', 'y']]) {
    await cms.create({ metadata: { name: n, labels: { tier } } } as KubeObject, {});
  }
  const gone = await cms.deleteCollection({ labelSelector: { matchLabels: { tier: 'x' } } });
  assert.deepEqual(gone.items.map((o) => o.metadata.name).sort(), ['a', 'b']);
  assert.deepEqual((await cms.list({})).items.map((o) => o.metadata.name), ['c']);
  const dry = await cms.deleteCollection({ dryRun: true });
  assert.deepEqual(dry.items.map((o) => o.metadata.name), ['c']);
  assert.equal((await cms.list({})).items.length, 1, 'a dry run deletes nothing');
  // The API server deletes collections in one namespace only.
  await assert.rejects(client.resource({ version: 'v1', resource: 'configmaps' }).deleteCollection({}), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /namespace/.test(e.message));
});

test('a watch with sendInitialEvents starts with the current objects, then the end bookmark, then changes', async () => {
  const ns = `js-wl-${Date.now()}`;
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: ns });
  for (const n of ['a', 'b']) await cms.create({ metadata: { name: n } } as KubeObject, {});
  const seen: string[] = [];
  for await (const ev of cms.watch({ sendInitialEvents: true })) {
    if (ev.type === 'BOOKMARK') {
      if (ev.object.metadata.annotations?.['k8s.io/initial-events-end'] !== 'true') continue;
      seen.push('END');
      await cms.delete('a');
      continue;
    }
    seen.push(`${ev.type} ${ev.object.metadata.name}`);
    if (ev.type === 'DELETED') break;
  }
  assert.deepEqual([...seen.slice(0, 2).sort(), ...seen.slice(2)], ['ADDED a', 'ADDED b', 'END', 'DELETED a']);
});

test('writes reach the status subresource with the subresource option; a write to the object keeps its status', async () => {
  const [pod] = (await client.resource({ version: 'v1', resource: 'pods' }).list({ limit: 1 })).items;
  assert.ok(pod?.metadata.namespace, 'the sim has pods');
  const pods = client.resource({ version: 'v1', resource: 'pods', namespace: pod.metadata.namespace });
  const name = pod.metadata.name;
  type WithStatus = KubeObject & { status?: { phase?: string; message?: string } };
  // A merge patch of the object itself: the server keeps the status as it was.
  const before = (await pods.get(name)) as WithStatus;
  const ignored = (await pods.patch(name, undefined, { status: { message: 'from the object' } }, 'merge', {})) as WithStatus;
  assert.equal(ignored.status?.message, before.status?.message);
  const patched = (await pods.patch(name, undefined, { status: { message: 'from status' } }, 'merge', { subresource: 'status' })) as WithStatus;
  assert.equal(patched.status?.message, 'from status');
  // Read-modify-write of the status (client-go's UpdateStatus).
  const got = (await pods.get(name)) as WithStatus;
  const replaced = (await pods.replace({ ...got, status: { ...got.status, message: 'replaced' } } as KubeObject, { subresource: 'status' })) as WithStatus;
  assert.equal(replaced.status?.message, 'replaced');
  assert.equal(((await pods.get(name)) as WithStatus).status?.message, 'replaced');
  // Reading the status subresource (client-go's Get with "status").
  assert.equal(((await pods.get(name, undefined, { subresource: 'status' })) as WithStatus).status?.message, 'replaced');
  // client-go's GetOptions.ResourceVersion: '0' is any version the server has at hand.
  assert.equal((await pods.get(name, undefined, { resourceVersion: '0' })).metadata.name, name);
  await assert.rejects(pods.get(name, undefined, { resourceVersion: 0 as unknown as string }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  await assert.rejects(pods.get(name, undefined, { subresource: 'a/b' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  await assert.rejects(async () => pods.create({ metadata: { name: 'x' } } as KubeObject, { subresource: 'status' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  await assert.rejects(async () => pods.patch(name, undefined, {}, 'merge', { subresource: 'a/b' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});

test('list and watch take a namespace per call, and refuse a limit they would misread', async () => {
  const pods = client.resource({ version: 'v1', resource: 'pods' });
  const all = await pods.list({});
  const namespaces = [...new Set(all.items.map((p) => p.metadata.namespace))];
  assert.ok(namespaces.length > 1, 'the sim seeds several namespaces');
  const ns = namespaces[0]!;
  const inNs = await pods.list({ namespace: ns });
  assert.equal(inNs.items.length, all.items.filter((p) => p.metadata.namespace === ns).length);
  assert.ok(inNs.items.every((p) => p.metadata.namespace === ns));
  // A watch from the list's version replays nothing; one from "0" starts with the namespace's pods.
  const seen = new Set<string | undefined>();
  let events = 0;
  for await (const ev of pods.watch({ namespace: ns, resourceVersion: '0', timeoutSeconds: 1 })) {
    if (ev.type === 'BOOKMARK') continue;
    seen.add(ev.object.metadata.namespace);
    if (++events === inNs.items.length) break;
  }
  assert.equal(events, inNs.items.length);
  assert.deepEqual([...seen], [ns]);
  await assert.rejects(pods.list({ namespace: 'a/b' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  // Read as 0, -1 would mean "no limit"; a fraction would be cut.
  for (const limit of [-1, 2.5, Number.NaN]) {
    await assert.rejects(
      (async () => pods.list({ limit }))(),
      (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /limit/.test(e.message),
    );
  }
});

test('create takes generateName without a name; a server error carries its typed Status', async () => {
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const made = await cms.create({ metadata: { generateName: 'gen-' }, data: { a: '1' } });
  assert.match(made.metadata.name, /^gen-.+/);
  try {
    await cms.create({ metadata: { name: made.metadata.name } });
    assert.fail('a second create of the name');
  } catch (e) {
    assert.ok(e instanceof KubeError);
    // Typed as Status: no cast.
    assert.equal(e.status?.reason, 'AlreadyExists');
    assert.equal(e.status?.details?.name, made.metadata.name);
    // A Status as the server sent it, which isStatus knows.
    assert.equal(e.status?.kind, 'Status');
    assert.equal(e.status?.apiVersion, 'v1');
    assert.ok(isStatus(e.status));
  }
  await cms.delete(made.metadata.name);
  // The input type still checks the members it names.
  // @ts-expect-error apiVersion is a string
  void (() => cms.create({ apiVersion: 5, metadata: { generateName: 'x-' } }));
  // @ts-expect-error labels map to strings
  void (() => cms.create({ metadata: { generateName: 'x-', labels: 7 } }));
});

test('watch is an async iterable and break aborts the request', async () => {
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  const start = await cms.list({});
  const name = `js-watch-${Date.now()}`;
  const seen: string[] = [];
  const watching = (async () => {
    for await (const ev of cms.watch({ resourceVersion: start.resourceVersion })) {
      if (ev.type === 'BOOKMARK' || ev.object.metadata.name !== name) continue;
      seen.push(ev.type);
      if (ev.type === 'DELETED') break;
    }
  })();
  await cms.create({ metadata: { name } } as KubeObject, {});
  await cms.patch(name, undefined, { data: { x: 'y' } }, 'merge', {});
  await cms.delete(name);
  await watching;
  assert.deepEqual(seen, ['ADDED', 'MODIFIED', 'DELETED']);
  // The sim closes its side once our fetch is aborted.
  const stats = async () => (await (await fetch(`${server}/sim/stats`)).json()) as { openWatches: number };
  for (let i = 0; i < 50 && (await stats()).openWatches > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal((await stats()).openWatches, 0);
});

test('return() while a next() waits ends that next() and closes the watch', async () => {
  const stats = async () => (await (await fetch(`${server}/sim/stats`)).json()) as { openWatches: number };
  const quiet = client.resource({ version: 'v1', resource: 'configmaps', namespace: `quiet-${Date.now()}` });
  const { resourceVersion } = await quiet.list({});
  const before = (await stats()).openWatches;
  const it = quiet.watch({ resourceVersion });
  const pending = it.next();
  for (let i = 0; i < 50 && (await stats()).openWatches <= before; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal((await stats()).openWatches, before + 1, 'the watch is open and quiet');
  await it.return();
  const settled = await Promise.race([pending, new Promise((r) => setTimeout(() => r('still pending after 5 s'), 5000))]);
  assert.deepEqual(settled, { value: undefined, done: true });
  for (let i = 0; i < 50 && (await stats()).openWatches > before; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal((await stats()).openWatches, before, 'its request was aborted');
});

test('next() calls that do not wait for each other get one event each, in order', async () => {
  const ns = `concurrent-${Date.now()}`;
  const cms = client.resource({ version: 'v1', resource: 'configmaps', namespace: ns });
  const { resourceVersion } = await cms.list({});
  const it = cms.watch({ resourceVersion });
  try {
    const names = ['a', 'b', 'c'];
    const three = Promise.all([it.next(), it.next(), it.next()]);
    for (const name of names) await cms.create({ metadata: { name } } as KubeObject, {});
    const got = (await three).map((r) => (r.done || r.value.type === 'BOOKMARK' ? null : r.value.object.metadata.name));
    assert.deepEqual(got, names);
  } finally {
    await it.return();
  }
});

test('a bad server URL is a KubeError, and the module keeps working', () => {
  assert.throws(() => new KubeClient({ server: 'not a url' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  assert.ok(new KubeClient({ server: 'http://127.0.0.1:1' }));
});

test('discovery lists every resource and resolves names as kubectl does', async () => {
  const all = await client.discover();
  const pods = all.find((r) => r.resource === 'pods' && r.group === '');
  assert.ok(pods && pods.kind === 'Pod' && pods.namespaced && pods.verbs.includes('watch'));
  const widgets = all.find((r) => r.resource === 'widgets');
  assert.ok(widgets, 'the CRD is discovered');
  assert.equal(widgets.kind, 'Widget');
  assert.equal(widgets.group, 'demo.kubewasm.dev');
  assert.equal(await client.discover().then((a) => a.length), all.length, 'cached result');

  for (const [typed, expect] of [['po', 'pods'], ['Deployment', 'deployments'], ['deployments.apps', 'deployments'], ['wd', 'widgets'], ['Widget', 'widgets']] as const) {
    assert.equal((await client.resourceFor(typed)).resource, expect, typed);
  }
  await assert.rejects(client.resourceFor('nonesuch'), (e: unknown) => e instanceof KubeError && e.code === 404 && e.reason === 'NotFound');
  client.invalidateDiscovery();

  // `kind` in place of `resource`: built-in kinds directly, CRDs through resourceFor.
  const deploys = await client.resource({ group: 'apps', version: 'v1', kind: 'Deployment' }).list({});
  assert.ok(deploys.items.every((d) => d.kind === undefined || d.kind === 'Deployment'));
  assert.throws(
    () => client.resource({ group: widgets.group, version: widgets.version, kind: 'Widget' }),
    (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /resourceFor/.test(e.message),
  );
  const w = await client.resourceFor('Widget');
  const listed = await client.resource({ group: w.group, version: w.version, resource: w.resource }).list({});
  assert.ok(Array.isArray(listed.items));
});

test("a transport's chunks made in another realm (jsdom's globals under a test runner) are read, views at an offset too", async () => {
  const body = '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","namespace":"n","resourceVersion":"5"}}]}';
  // A Uint8Array of another realm fails `instanceof Uint8Array` here; this one also views its buffer from an offset.
  const foreign = vm.runInNewContext('(text) => { const all = new TextEncoder().encode("xx" + text); return new Uint8Array(all.buffer, 2, all.length - 2); }', { TextEncoder }) as (t: string) => Uint8Array;
  const chunk = foreign(body);
  assert.ok(!(chunk instanceof Uint8Array), 'the chunk is from another realm');
  let sent = false;
  const transport: Transport = { request: async () => ({ status: 200, headers: {}, read: () => (sent ? null : ((sent = true), chunk)) }) };
  const list = await new KubeClient({ server: 'http://scripted.invalid', transport }).resource({ version: 'v1', resource: 'pods' }).list({});
  assert.deepEqual(list.items.map((p) => p.metadata.name), ['a']);
});
