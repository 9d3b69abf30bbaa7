// The Node entry's node:http/node:https transport: TLS options against the sim
// behind a TLS proxy with certificates made at test time, back-pressure on a
// watch nobody reads, cancellation, and the `transport` option.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient, InformerFactory, KubeError, nodeTransport, type Transport, type TransportRequest, type TransportResponse, type KubeObject, type WatchEvent } from 'kubewasm';
import { sim as control, until } from './sim.js';
import { makePki, tlsProxy } from './support/tls.js';

const sim = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!sim) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const pki = makePki();
const proxy = await tlsProxy(sim, pki.server);
const mtls = await tlsProxy(sim, pki.server, pki.ca.cert);
const named = await tlsProxy(sim, pki.named);
after(async () => {
  await Promise.all([proxy.close(), mtls.close(), named.close()]);
  pki.cleanup();
});

const pods = (c: KubeClient) => c.resource({ version: 'v1', resource: 'pods' });

async function rejects(p: Promise<unknown>, reason: string, message: RegExp): Promise<KubeError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof KubeError, `a KubeError, not ${e}`);
    assert.equal(e.reason, reason, e.message);
    assert.match(e.message, message);
    return e;
  }
  assert.fail('expected a rejection');
}

test('https with a CA bundle: list, and an informer that follows a change over the TLS stream', async () => {
  const client = new KubeClient({ server: proxy.url, token, tls: { ca: pki.ca.cert } });
  const list = await pods(client).list({});
  assert.ok(list.items.length > 0);
  // A bundle with a certificate that does not parse: skipped, the others trusted (Go's AppendCertsFromPEM).
  const bundle = `${pki.ca.cert.replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!')}\n${pki.ca.cert}`;
  assert.ok((await pods(new KubeClient({ server: proxy.url, token, tls: { ca: bundle } })).list({ limit: 1 })).items.length > 0);
  const factory = new InformerFactory(client);
  const cms = factory.informer({ version: 'v1', resource: 'configmaps', namespace: 'default' });
  factory.start();
  await cms.waitForSync();
  const name = `tls-${Date.now()}`;
  await client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' }).create({ metadata: { name } } as KubeObject, {});
  await until(() => cms.lister().get(name, 'default') !== undefined);
  factory.shutdown();
  assert.ok(proxy.handshakes.length >= 2, 'list and watch went through the TLS proxy');
});

test('an untrusted server certificate fails at once as Invalid, without retries', async () => {
  const before = proxy.connections();
  const t0 = Date.now();
  await rejects(pods(new KubeClient({ server: proxy.url, token })).list({}), 'Invalid', /^TLS: .*(self-signed|local issuer|unable to verify)/i);
  await rejects(pods(new KubeClient({ server: proxy.url, token, tls: { ca: pki.otherCa.cert } })).list({}), 'Invalid', /^TLS: /);
  assert.equal(proxy.connections() - before, 2, 'one connection per request: not retried');
  assert.ok(Date.now() - t0 < 5_000);
  // The host's own fetch (Node's, Deno's, Bun's) tells of the certificate too: not retried either.
  const viaFetch = proxy.connections();
  await rejects(pods(new KubeClient({ server: proxy.url, token, transport: 'fetch' })).list({}), 'Invalid', /^TLS: .*(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|DEPTH_ZERO_SELF_SIGNED_CERT|invalid peer certificate)/);
  assert.equal(proxy.connections() - viaFetch, 1, 'the fetch transport did not retry');
});

test('insecureSkipTlsVerify accepts the untrusted certificate', async () => {
  const list = await pods(new KubeClient({ server: proxy.url, token, tls: { insecureSkipTlsVerify: true } })).list({});
  assert.ok(list.items.length > 0);
});

test('serverName: SNI and verification use it instead of the URL host', async () => {
  await rejects(pods(new KubeClient({ server: named.url, token, tls: { ca: pki.ca.cert } })).list({}), 'Invalid', /ERR_TLS_CERT_ALTNAME_INVALID|altnames/);
  const list = await pods(new KubeClient({ server: named.url, token, tls: { ca: pki.ca.cert, serverName: 'sim.kubewasm.test' } })).list({});
  assert.ok(list.items.length > 0);
  assert.equal(named.handshakes.at(-1)?.servername, 'sim.kubewasm.test');
});

test('client certificates: required by the server, sent from cert and key; without a trusted one no handshake completes', async () => {
  const ok = new KubeClient({ server: mtls.url, token, tls: { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key } });
  assert.ok((await pods(ok).list({})).items.length > 0);
  assert.equal(mtls.handshakes.at(-1)?.clientCn, 'alice');

  // The server's alert and its closing the connection race: the client reads
  // either the TLS alert (Invalid: not retried) or a reset (Network).
  const before = mtls.handshakes.length;
  for (const extra of [{}, { cert: pki.stranger.cert, key: pki.stranger.key }]) {
    try {
      await pods(new KubeClient({ server: mtls.url, token, maxRetries: 0, tls: { ca: pki.ca.cert, ...extra } })).list({});
      assert.fail('expected a rejection');
    } catch (e) {
      assert.ok(e instanceof KubeError, `a KubeError, not ${e}`);
      assert.ok(['Invalid', 'Network'].includes(e.reason), e.message);
      if (e.reason === 'Invalid') assert.match(e.message, /TLS: .*certificate/i);
    }
  }
  assert.equal(mtls.handshakes.length, before, 'no handshake completed without a trusted client certificate');
});

test('TLS material that cannot be loaded, and tls beside a fetch transport, are Invalid at construction', () => {
  assert.throws(() => new KubeClient({ server: proxy.url, tls: { cert: pki.client.cert, key: 'not a key' } }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /tls/.test(e.message));
  assert.throws(() => new KubeClient({ server: proxy.url, tls: { cert: pki.client.cert, key: pki.stranger.key } }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
  // A CA that holds no readable PEM certificate (client-go: "unable to load root certificates").
  const damaged = pki.ca.cert.replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!');
  for (const ca of ['garbage', new TextEncoder().encode('garbage'), damaged, [damaged, 'garbage']]) {
    assert.throws(() => new KubeClient({ server: proxy.url, tls: { ca } }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /CA/.test(e.message), String(ca));
  }
  assert.throws(() => new KubeClient({ server: sim, transport: 'fetch', tls: { ca: pki.ca.cert } }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /Node transport/.test(e.message));
  assert.throws(() => new KubeClient({ server: sim, transport: 'carrier-pigeon' as 'fetch' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});

test("transport: 'fetch' still works in Node, and a custom transport sees every request", async () => {
  // Its own cluster: files run in another order under other runtimes.
  await control('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  assert.ok((await pods(new KubeClient({ server: sim, token, transport: 'fetch' })).list({})).items.length > 0);
  const inner = nodeTransport();
  const seen: TransportRequest[] = [];
  const counting: Transport = { request: (req) => (seen.push(req), inner.request(req)) };
  const client = new KubeClient({ server: sim, token, transport: counting });
  const list = await pods(client).list({ limit: 5 });
  assert.equal(list.items.length, 5);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.method, 'GET');
  assert.match(seen[0]!.url, /\/api\/v1\/pods\?limit=5$/);
  assert.equal(seen[0]!.headers.Authorization, `Bearer ${token}`);
  assert.equal(seen[0]!.watch, false);
  assert.equal(seen[0]!.credentials, 'same-origin');
  inner.close();
});

test("an informer's status names what carries its watch: node, fetch, a custom transport's name, or custom", async () => {
  await control('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  const inner = nodeTransport();
  const relay: Transport = { request: (req) => inner.request(req) };
  const named: Transport = { name: 'relay', request: (req) => inner.request(req) };
  const carriers: unknown[] = [];
  for (const opts of [{}, { transport: 'fetch' as const }, { transport: relay }, { transport: named }]) {
    const factory = new InformerFactory(new KubeClient({ server: sim, token, ...opts }));
    const inf = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    await inf.waitForSync();
    await until(() => inf.status.transport !== undefined);
    carriers.push([inf.status.transport, inf.status.transportReason]);
    factory.shutdown();
  }
  inner.close();
  assert.deepEqual(carriers, [
    ['node', 'not-limited'],
    ['fetch', 'not-limited'],
    ['custom', 'not-limited'],
    ['relay', 'not-limited'],
  ]);
});

/** A server whose watch streams events as fast as the client takes them, counting the bytes the socket accepted. */
async function endlessWatch(opts: { dropAfter?: number } = {}) {
  const state = { written: 0, events: 0, open: 0, closed: 0 };
  const pad = 'x'.repeat(1000);
  const srv = http.createServer((req, res) => {
    state.open++;
    res.writeHead(200, { 'content-type': 'application/json' });
    let stopped = false;
    const deadline = Date.now() + 20_000; // bounded, whatever the client does
    req.on('close', () => { stopped = true; state.closed++; });
    const pump = () => {
      while (!stopped && Date.now() < deadline) {
        state.events++;
        const line = `${JSON.stringify({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${state.events}`, namespace: 'default', resourceVersion: String(state.events), annotations: { pad } } } })}\n`;
        state.written += line.length;
        if (opts.dropAfter !== undefined && state.events > opts.dropAfter) {
          // Once the client has the headers and some events: drop the connection mid-body.
          setTimeout(() => res.socket?.destroy(), 300);
          return;
        }
        if (!res.write(line)) return void res.once('drain', pump);
      }
      if (!stopped) res.end();
    };
    pump();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return { url, state, close: () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }) };
}

test('back-pressure: a watch nobody reads stops its socket; return() closes the connection', async () => {
  const s = await endlessWatch();
  try {
    const it = pods(new KubeClient({ server: s.url })).watch({});
    const first = await it.next();
    assert.equal(first.done, false);
    // Unread: the JS queue fills, the socket pauses, the kernel buffers fill, the server's writes stop.
    let last = -1;
    await until(async () => {
      const now = s.state.written;
      const stalled = now === last;
      last = now;
      await sleep(300);
      return stalled;
    });
    assert.ok(s.state.written < 32 * 1024 * 1024, `server got ${s.state.written} bytes out while nobody read`);
    // Reading resumes the stream, every event intact and in order (the
    // queued chunks reach wasm joined in one reused buffer).
    const before = s.state.written;
    const rv = (r: IteratorResult<WatchEvent<KubeObject>>) => Number(r.done ? NaN : r.value.object.metadata.resourceVersion);
    const from = rv(first);
    for (let i = 1; i <= 2000; i++) assert.equal(rv(await it.next()), from + i);
    await until(() => s.state.written > before);
    await it.return!();
    await until(() => s.state.closed === 1);
  } finally {
    await s.close();
  }
});

test('a connection lost mid-body ends the watch with a Network error', async () => {
  const s = await endlessWatch({ dropAfter: 3 });
  try {
    const it = pods(new KubeClient({ server: s.url })).watch({});
    const err = await (async () => {
      try {
        for (;;) if ((await it.next()).done) return undefined;
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof KubeError, `a KubeError, not ${err}`);
    assert.equal(err.reason, 'Network');
    assert.equal(s.state.open, 1, 'one connection: the watch was established, then lost');
  } finally {
    await s.close();
  }
});

test('dropping a request before its headers arrive aborts it', async () => {
  // A server that never answers: the request's timeout drops the send, which must close the connection.
  let closed = 0;
  const srv = http.createServer((req) => { req.on('close', () => { closed++; }); });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    await rejects(pods(new KubeClient({ server: url, timeoutMs: 200, maxRetries: 0 })).list({}), 'Timeout', /200ms/);
    await until(() => closed === 1);
  } finally {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
});

/** A transport answering every request with `reply` and counting the calls. */
function scripted(reply: (req: TransportRequest) => Promise<TransportResponse> | TransportResponse) {
  const calls: TransportRequest[] = [];
  const transport: Transport = { request: async (req) => (calls.push(req), reply(req)) };
  return { calls, transport };
}
const chunks = (...parts: (string | Uint8Array | null | Promise<Uint8Array | null>)[]) => {
  const queue = [...parts];
  return () => {
    const p = queue.shift() ?? null;
    return typeof p === 'string' ? new TextEncoder().encode(p) : p;
  };
};

test('the Transport protocol: chunks sync or promised and split anywhere, headers in any case, failures typed', async () => {
  const pod = (n: number) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${n}`, namespace: 'default', resourceVersion: String(n) } });
  const body = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[${pod(1)},${pod(2)}]}`;
  const cut = body.indexOf('"p2"') + 2;
  const ok = scripted(() => ({
    status: 200,
    headers: { 'Content-Type': 'application/json', 'x-multi': ['a', 'b'] },
    read: chunks(body.slice(0, 10), Promise.resolve(new TextEncoder().encode(body.slice(10, cut))), body.slice(cut), null),
  }));
  const list = await pods(new KubeClient({ server: 'http://scripted.invalid', transport: ok.transport })).list({});
  assert.deepEqual(list.items.map((p) => p.metadata.name), ['p1', 'p2']);
  assert.equal(list.resourceVersion, '7');
  assert.equal(ok.calls[0]!.signal.aborted, false);

  const typed = async (reply: Parameters<typeof scripted>[0], reason: string, message: RegExp, calls: number) => {
    const s = scripted(reply);
    await rejects(pods(new KubeClient({ server: 'http://scripted.invalid', transport: s.transport, maxRetries: 2 })).list({}), reason, message);
    assert.equal(s.calls.length, calls, `${reason} ${message}: ${s.calls.length} calls`);
  };
  await typed(() => ({ status: Number.NaN, headers: {}, read: chunks(null) }), 'Network', /no valid `status`/, 3);
  await typed(() => ({ status: 200, headers: {}, read: () => 'text' as unknown as Uint8Array }), 'Network', /not a Uint8Array/, 3);
  await typed(() => ({ status: 200, headers: {} }) as TransportResponse, 'Network', /no `read` method/, 3);
  await typed(() => Promise.reject(Object.assign(new Error('bad certificate'), { retryable: false })), 'Invalid', /bad certificate/, 1);
  await typed(() => Promise.reject(Object.assign(new Error('gone'), { code: 'ECONNREFUSED' })), 'Network', /gone \(ECONNREFUSED\)/, 3);
  await typed(() => Promise.reject(Object.assign(new Error('stop'), { name: 'AbortError' })), 'Aborted', /abort/i, 1);
  await typed(() => ({ status: 200, headers: {}, read: chunks('{"items":[', Promise.reject(new Error('reset mid-body'))) }), 'Network', /reset mid-body/, 3);
});
