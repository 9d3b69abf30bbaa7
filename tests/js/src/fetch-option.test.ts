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
