// A user-supplied `fetch` carries every request, watches included, and its
// failures get the same error typing as the built-in transports'.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, InformerFactory, KubeError } from 'kubewasm';

import { server, token } from './sim.js';

test('the fetch option sees every request with its headers and can add its own', async () => {
  const seen: { url: string; method: string; auth: string | null; watch: boolean }[] = [];
  const traced = async (input: string, init: RequestInit) => {
    const headers = new Headers(init.headers);
    headers.set('X-Trace-Id', 'trace-1');
    seen.push({ url: input, method: init.method ?? 'GET', auth: headers.get('authorization'), watch: input.includes('watch=') });
    assert.ok(init.signal instanceof AbortSignal);
    return fetch(input, { ...init, headers });
  };
  const client = new KubeClient({ server, token, fetch: traced });
  const factory = new InformerFactory(client);
  const pods = factory.informer({ version: 'v1', resource: 'pods' });
  factory.start();
  await pods.waitForSync();
  assert.ok(pods.getSnapshot().length > 0);
  const created = await client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' }).create({ metadata: { name: `byo-fetch-${Date.now()}` } }, {});
  const start = Date.now();
  // The request is seen before its answer; the status names the transport once the watch is open.
  while (!(seen.some((r) => r.watch) && pods.status.transport) && Date.now() - start < 10_000) await new Promise((r) => setTimeout(r, 20));
  const transport = pods.status.transport;
  factory.shutdown();
  assert.ok(seen.some((r) => r.method === 'GET' && r.url.includes('/api/v1/pods') && !r.watch), 'the list');
  assert.ok(seen.some((r) => r.watch), 'the watch');
  assert.ok(seen.some((r) => r.method === 'POST' && r.url.endsWith('/namespaces/default/configmaps')), 'the create');
  assert.ok(seen.every((r) => r.auth === `Bearer ${token}`));
  assert.equal(transport, 'fetch');
  await client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' }).delete(created.metadata.name);
});

test("the fetch option's failures and bad answers are typed errors", async () => {
  const refusing = new KubeClient({ server, token, maxRetries: 0, fetch: async () => { throw new TypeError('blocked by policy'); } });
  await assert.rejects(refusing.resource({ version: 'v1', resource: 'pods' }).list({}), (e: unknown) => e instanceof KubeError && e.reason === 'Network' && e.message.includes('blocked by policy'));
  const notResponse = new KubeClient({ server, token, maxRetries: 0, fetch: async () => ({ hello: 'world' }) as unknown as Response });
  await assert.rejects(notResponse.resource({ version: 'v1', resource: 'pods' }).list({}), (e: unknown) => e instanceof KubeError && e.message.includes('not a Response'));
  // A hand-made Response works, status and headers included.
  const canned = new KubeClient({
    server,
    fetch: async () => new Response(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'no' }), { status: 403, headers: { 'content-type': 'application/json' } }),
  });
  await assert.rejects(canned.resource({ version: 'v1', resource: 'pods' }).list({}), (e: unknown) => e instanceof KubeError && e.code === 403 && e.reason === 'Forbidden');
  assert.throws(() => new KubeClient({ server, fetch: fetch, transport: 'node' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  assert.throws(() => new KubeClient({ server, fetch: 'fetch' as unknown as typeof fetch }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});

// A body that is not a byte stream (what a polyfill or a wrapping `fetch`
// may return), handed over seven bytes at a time.
function rechunked(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let pending: Uint8Array = new Uint8Array(0);
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      if (pending.length === 0) {
        const r = await reader.read();
        if (r.done) return c.close();
        pending = r.value;
      }
      c.enqueue(pending.slice(0, 7));
      pending = pending.subarray(7);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

test('byte-stream bodies are read into a buffer given to the reader; other bodies with a default reader', async () => {
  const pods = { version: 'v1', resource: 'pods' };
  const modes: (string | undefined)[] = [];
  const getReader = ReadableStream.prototype.getReader;
  // The readers handed out (a BYOB reader of a body that is not a byte stream throws instead).
  ReadableStream.prototype.getReader = function (this: ReadableStream, opts?: { mode?: 'byob' }) {
    const reader = getReader.call(this, opts as never);
    modes.push(opts?.mode);
    return reader;
  } as typeof getReader;
  let direct: string[];
  try {
    const list = await new KubeClient({ server, token, transport: 'fetch' }).resource(pods).list({});
    direct = list.items.map((p) => p.metadata.name!).sort();
  } finally {
    ReadableStream.prototype.getReader = getReader;
  }
  assert.ok(direct.length > 0);
  assert.ok(modes.includes('byob'), `a BYOB reader for the global fetch's body (readers asked for: ${modes.join(', ')})`);

  const wrapping = async (input: string, init: RequestInit) => {
    const res = await fetch(input, init);
    return { status: res.status, headers: res.headers, body: res.body && rechunked(res.body) } as unknown as Response;
  };
  const client = new KubeClient({ server, token, fetch: wrapping });
  const listed = await client.resource(pods).list({});
  assert.deepEqual(listed.items.map((p) => p.metadata.name!).sort(), direct);
  // A watch over such a body: an informer follows a change.
  const factory = new InformerFactory(client);
  const cms = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  factory.start();
  await cms.waitForSync();
  const name = `rechunked-${Date.now()}`;
  const configmaps = client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  await configmaps.create({ metadata: { name } }, {});
  const start = Date.now();
  while (cms.lister().get(name, 'default') === undefined && Date.now() - start < 10_000) await new Promise((r) => setTimeout(r, 20));
  factory.shutdown();
  assert.ok(cms.lister().get(name, 'default') !== undefined, 'the watch over a rechunked body delivered the new configmap');
  await configmaps.delete(name);
});
