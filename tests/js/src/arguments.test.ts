// Arguments of the wrong type get a KubeError (reason `Invalid`) and the
// module keeps working. The glue's own conversion of a string parameter
// trusts its caller: a number there read outside the module's memory and
// poisoned it for good, so every later call failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import init, { KubeClient, InformerFactory, KubeError, WorkQueue, clearPersisted } from 'kubewasm';
import { server, sim, token, until } from './sim.js';

const invalid = (what: string) => (e: unknown) => {
  assert.ok(e instanceof KubeError, `${what}: expected a KubeError, got ${String(e)}`);
  assert.equal(e.reason, 'Invalid', `${what}: ${e.message}`);
  return true;
};
// What a careless caller passes where a string belongs.
const any = (v: unknown) => v as never;

test('every string argument refuses other types with KubeError Invalid, and the module keeps working', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 2, pods: 20, seed: 5 });
  const client = new KubeClient({ server, token });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    await pods.waitForSync();
    const lister = pods.lister();
    const rc = client.resource({ version: 'v1', resource: 'pods' });
    const queue = new WorkQueue();
    const [pod] = lister.list();
    assert.ok(pod, 'the sim has pods');
    const name = pod.metadata.name;
    const ns = pod.metadata.namespace ?? '';
    for (const v of [5, true, {}, [name], 1n]) {
      const calls: [string, () => unknown][] = [
        ['lister.get(name)', () => lister.get(any(v))],
        ['lister.get(name, namespace)', () => lister.get(name, any(v))],
        ['lister.byIndex(indexName)', () => lister.byIndex(any(v), ns)],
        ['lister.byIndex(indexName, value)', () => lister.byIndex('namespace', any(v))],
        ['resource.get(name)', () => rc.get(any(v))],
        ['resource.get(name, namespace)', () => rc.get(name, any(v))],
        ['resource.delete(name)', () => rc.delete(any(v), ns, {})],
        ['resource.delete(name, namespace)', () => rc.delete(name, any(v), {})],
        ['resource.patch(name)', () => rc.patch(any(v), ns, {}, 'merge', {})],
        ['resource.patch(name, namespace)', () => rc.patch(name, any(v), {}, 'merge', {})],
        ['resource.patch(kind)', () => rc.patch(name, ns, {}, any(v), {})],
        ['client.resourceFor(name)', () => client.resourceFor(any(v))],
        ['client.logs(namespace)', () => client.logs(any(v), name, {})],
        ['client.logs(namespace, pod)', () => client.logs(ns, any(v), {})],
        ['informer.on(event)', () => (pods.on as (event: unknown, f: () => void) => unknown)(v, () => {})],
        ['informer.addIndexer(name)', () => pods.addIndexer(any(v), () => [])],
        ['queue.add(key)', () => queue.add(any(v))],
        ['queue.addAfter(key)', () => queue.addAfter(any(v), 1)],
        ['queue.addRateLimited(key)', () => queue.addRateLimited(any(v))],
        ['queue.forget(key)', () => queue.forget(any(v))],
        ['queue.done(key)', () => queue.done(any(v))],
        ['queue.numRequeues(key)', () => queue.numRequeues(any(v))],
        ['clearPersisted(name)', () => clearPersisted(any(v))],
      ];
      // What returns a promise rejects (so `.catch` sees it); the rest throws.
      const promised = /^(resource\.|client\.resourceFor|clearPersisted)/;
      for (const [what, call] of calls) {
        if (!promised.test(what)) {
          assert.throws(call, invalid(`${what} given ${typeof v}`));
          continue;
        }
        let result: unknown;
        assert.doesNotThrow(() => (result = call()), `${what} given ${typeof v} throws`);
        await assert.rejects(result as Promise<unknown>, invalid(`${what} given ${typeof v}`));
      }
    }
    // A filter that is not an object (a selector string by itself, say) is
    // refused rather than read as no filter, which would match everything.
    for (const v of ['app=web', 5, true]) {
      assert.throws(() => lister.list(any(v)), invalid(`lister.list(${String(v)})`));
      assert.throws(() => pods.scoped(any(v)), invalid(`informer.scoped(${String(v)})`));
    }
    assert.equal(lister.list().length, pods.getSnapshot().length, 'no filter is everything');
    assert.equal(lister.list(any(null)).length, pods.getSnapshot().length);
    // Nothing was poisoned: reads, requests and the queue all still work.
    assert.equal(lister.get(name, ns)?.metadata.name, name);
    assert.equal(lister.byIndex('namespace', ns).length, lister.list({ namespace: ns }).length);
    assert.equal((await rc.get(name, ns)).metadata.name, name);
    queue.add('k');
    assert.equal(await queue.get(), 'k');
    queue.done('k');
    assert.equal(queue.numRequeues('k'), 0);
    // An absent namespace is no wrong type: for a namespaced pod in an
    // informer of every namespace it is the client's `Invalid` "needs a namespace".
    assert.throws(() => lister.get(name, null), (e: unknown) => invalid('lister.get(name, null)')(e) && /needs a namespace/.test((e as Error).message));
  } finally {
    factory.shutdown();
  }
});

test('runWorkers takes a whole number of workers from 1 to 10,000 and a function', async () => {
  const queue = new WorkQueue();
  for (const n of [-1, 0, 1.5, 10_001, Number.NaN, Infinity, '2', undefined]) {
    assert.throws(() => queue.runWorkers(any(n), async () => {}), invalid(`runWorkers(${String(n)})`));
  }
  assert.throws(() => queue.runWorkers(1, any('not a function')), invalid('runWorkers(1, string)'));
  const seen: string[] = [];
  const pool = queue.runWorkers(3, async (key) => {
    seen.push(key);
  });
  assert.equal(pool.running, 3);
  queue.add('a');
  await until(() => seen.includes('a'));
  await pool.stop();
});

test('addAfter adds at once for a delay of zero or less and refuses one that is not a finite number', async () => {
  const queue = new WorkQueue();
  for (const d of [Infinity, -Infinity, Number.NaN, '5', undefined]) {
    assert.throws(() => queue.addAfter('k', any(d)), invalid(`addAfter('k', ${String(d)})`));
  }
  assert.equal(queue.len, 0, 'nothing was added by a refused call');
  queue.addAfter('past', -5);
  assert.equal(queue.len, 1, 'a negative delay adds now, as client-go does');
  assert.equal(await queue.get(), 'past');
  queue.done('past');
  queue.shutdown();
});

test("the Node entry's default export is init, already done", async () => {
  const exports = await init();
  assert.ok(exports.memory instanceof WebAssembly.Memory);
  assert.equal(await init(), exports, 'the same instance every time');
});

test('a server that is not an http(s) URL is refused when the client is made; a path is kept for the host to resolve', () => {
  for (const bad of ['http://[::1', 'ftp://example.com', 'http://exa mple.com', 'localhost:8001', 'k8s.example.com']) {
    assert.throws(() => new KubeClient({ server: bad }), invalid(`server ${bad}`));
  }
  for (const good of ['http://[::1]:8001', 'https://example.com/prefix', '/k8s', '/proxy/https://k8s.example']) {
    assert.doesNotThrow(() => new KubeClient({ server: good }), good);
  }
});

test('whatever a callback throws becomes the text of a KubeError, and the module keeps working', async () => {
  for (const thrown of [undefined, null, true, 42, {}, 'text']) {
    for (const tokenProvider of [
      () => {
        throw thrown;
      },
      () => Promise.reject(thrown),
    ]) {
      const c = new KubeClient({ server, tokenProvider });
      const err: unknown = await c.resource({ version: 'v1', resource: 'pods' }).list({}).catch((e: unknown) => e);
      assert.ok(err instanceof KubeError, `${String(thrown)}: ${String(err)}`);
      assert.match(err.message, /^getting credentials: tokenProvider (threw|rejected): /);
      assert.equal(err.reason, 'Credentials', err.message);
      if (thrown !== undefined && typeof thrown !== 'object') assert.ok(err.message.includes(String(thrown)), err.message);
      // What the provider threw is the error's cause (an `undefined` one leaves none to give).
      if (thrown !== undefined) assert.equal(err.cause, thrown);
    }
  }
  // A transform that throws a number: the object is skipped with its key.
  await sim('/sim/seed', { namespaces: 1, pods: 3, seed: 6 });
  const factory = new InformerFactory(new KubeClient({ server, token }));
  try {
    const pods = factory.informer({
      version: 'v1',
      resource: 'pods',
      transform: () => {
        throw 42;
      },
    });
    const errors: KubeError[] = [];
    pods.on('error', (e) => errors.push(e as KubeError));
    factory.start();
    await until(() => errors.length >= 3);
    assert.match(errors[0]!.message, /transform threw: 42/);
    assert.ok(errors[0]!.key, 'the object is named');
  } finally {
    factory.shutdown();
    // Leave the cluster the harness started with for files that do not seed.
    await sim('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  }
  assert.equal(new WorkQueue().len, 0, 'the module still works');
});

test('a tokenProvider that fails is a Credentials error, not a bad config, and an informer retries it under its backoff', async () => {
  let calls = 0;
  const client = new KubeClient({
    server,
    tokenProvider: async () => {
      calls += 1;
      if (calls <= 2) throw new Error('identity provider unavailable');
      return token ?? '';
    },
  });
  const factory = new InformerFactory(client);
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods', backoff: { initialMs: 50, capMs: 100 } });
    const errors: KubeError[] = [];
    pods.on('error', (e) => errors.push(e as KubeError));
    factory.start();
    await pods.waitForSync();
    assert.equal(errors.length, 2, errors.map((e) => e.message).join('; '));
    for (const e of errors) {
      assert.equal(e.reason, 'Credentials', e.message);
      assert.equal(e.code, 0);
      assert.equal(e.message, 'getting credentials: tokenProvider rejected: identity provider unavailable');
    }
    assert.ok(pods.status.cached > 0, 'listed once the provider answered');
  } finally {
    factory.shutdown();
  }
});

test('free() twice does nothing; a freed object refuses use with KubeError Invalid, and the module keeps working', async () => {
  const queue = new WorkQueue();
  queue.add('a');
  queue.free();
  assert.doesNotThrow(() => queue.free(), 'a second free() is a no-op');
  assert.throws(() => queue.add('b'), (e: unknown) => invalid('add after free')(e) && /freed/.test((e as Error).message));
  const client = new KubeClient({ server, token });
  const rc = client.resource({ version: 'v1', resource: 'pods' });
  client.free();
  client.free();
  // The resource client holds its own reference: it outlives the freed KubeClient.
  assert.ok((await rc.list({ limit: 1 })).items.length <= 1);
  const again = new WorkQueue();
  again.add('x');
  assert.equal(again.len, 1);
});

test('an index needs a name, in addIndexer and in the indexers option', () => {
  const factory = new InformerFactory(new KubeClient({ server, token }));
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    assert.throws(() => pods.addIndexer('', () => []), invalid('addIndexer("")'));
    assert.throws(() => factory.informer({ version: 'v1', resource: 'configmaps', indexers: { '': () => [] } }), invalid('indexers: { "": … }'));
    pods.addIndexer('byNode', () => []);
  } finally {
    factory.shutdown();
  }
});

test('a class argument of the wrong type is a KubeError Invalid too', () => {
  for (const v of [null, undefined, {}, 'http://x', new WorkQueue()]) {
    assert.throws(() => new InformerFactory(any(v)), (e: unknown) => invalid(`new InformerFactory(${String(v)})`)(e) && /KubeClient/.test((e as Error).message));
  }
  assert.ok(new InformerFactory(new KubeClient({ server, token })));
  // One made by a second copy of the package (two versions installed) says so.
  const fromAnotherCopy = new (class KubeClient {})();
  assert.throws(() => new InformerFactory(any(fromAnotherCopy)), (e: unknown) => invalid('another copy')(e) && /another copy/.test((e as Error).message));
});
