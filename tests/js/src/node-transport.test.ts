// The Node entry's node:http/node:https transport: TLS options against the sim
// behind a TLS proxy with certificates made at test time, compressed responses
// and redirects from a gateway in front of the sim, back-pressure on a watch
// nobody reads, cancellation, and the `transport` option.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as https from 'node:https';
import * as zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { KubeClient, InformerFactory, KubeError, nodeTransport, type NodeTransport, type Transport, type TransportRequest, type TransportResponse, type KubeObject, type WatchEvent } from 'kubewasm';
import { sim as control, simState, until } from './sim.js';
import { makePki, tlsProxy, type KeyPair } from './support/tls.js';

const sim = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!sim) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Coding = 'gzip' | 'x-gzip' | 'deflate' | 'deflate-raw' | 'br';
/**
 * Compressors by coding; `deflate-raw` is sent as `deflate` without the zlib wrapper, as some servers send it. Brotli
 * at a web server's quality, not the library's default (11), which is too slow to fill a socket.
 */
const compressor = (c: Coding): zlib.Gzip | zlib.Deflate | zlib.DeflateRaw | zlib.BrotliCompress =>
  c === 'br' ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }) : c === 'deflate' ? zlib.createDeflate() : c === 'deflate-raw' ? zlib.createDeflateRaw() : zlib.createGzip();

/** A request as the gateway saw it. */
interface Seen {
  method: string;
  path: string;
  host?: string | undefined;
  authorization?: string | undefined;
  acceptEncoding?: string | undefined;
  contentType?: string | undefined;
  body: string;
  /** The Content-Encoding of the sim's answer to a forwarded request. */
  upstreamEncoding?: string | undefined;
}

/** Where `/r/<status>/<to>/…` sends `/…`: `rel` a path-only Location, any other name this map's origin (set once the servers listen). */
const targets: Record<string, string> = { rel: '' };

/**
 * An API gateway in front of the sim. `/up/…` passes to the sim's `/…`; `/z/<coding>/…` too, the response compressed
 * (flushed per chunk: a watch's events arrive one by one); `/r/<status>/<to>/…` redirects to `/…` on `targets[to]`;
 * `/loop/<n>/…` redirects to `/loop/<n+1>/…`; `/bare` is a 302 without a Location; `/echo` answers with the request
 * it got; `/hang` never answers. It records every request.
 */
async function gateway(cert?: KeyPair) {
  const seen: Seen[] = [];
  let hung = 0;
  const forward = (req: http.IncomingMessage, entry: Seen, path: string, body: Buffer, res: http.ServerResponse, coding?: Coding) => {
    const target = new URL(path, sim);
    const headers = { ...req.headers, host: target.host };
    // A gateway that compresses asks for the plain body, else the sim's gzip would be compressed again.
    if (coding) delete headers['accept-encoding'];
    const up = http.request(target, { method: req.method!, headers }, (ur) => {
      entry.upstreamEncoding = ur.headers['content-encoding'];
      const headers = { ...ur.headers };
      if (!coding) {
        res.writeHead(ur.statusCode!, headers);
        ur.pipe(res);
        return;
      }
      delete headers['content-length'];
      res.writeHead(ur.statusCode!, { ...headers, 'content-encoding': coding === 'deflate-raw' ? 'deflate' : coding });
      const z = compressor(coding);
      z.pipe(res);
      ur.on('data', (chunk: Buffer) => {
        z.write(chunk);
        z.flush();
      });
      ur.on('end', () => z.end());
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    up.end(body);
  };
  const handle = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => {
    const path = req.url!;
    const h = req.headers;
    const entry: Seen = { method: req.method!, path, host: h.host, authorization: h.authorization, acceptEncoding: h['accept-encoding'], contentType: h['content-type'], body: body.toString() };
    seen.push(entry);
    let m: RegExpExecArray | null;
    if ((m = /^\/up(\/.*)$/.exec(path))) return forward(req, entry, m[1]!, body, res);
    if ((m = /^\/z\/([a-z-]+)(\/.*)$/.exec(path))) return forward(req, entry, m[2]!, body, res, m[1] as Coding);
    if ((m = /^\/r\/(\d{3})\/(\w+)(\/.*)$/.exec(path))) return void res.writeHead(Number(m[1]), { location: `${targets[m[2]!]}${m[3]}` }).end();
    if ((m = /^\/loop\/(\d+)(.*)$/.exec(path))) return void res.writeHead(302, { location: `/loop/${Number(m[1]) + 1}${m[2]}` }).end();
    if (path.startsWith('/bare')) return void res.writeHead(302).end();
    if (path.startsWith('/echo')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen.at(-1)));
    if (path.startsWith('/hang')) return void req.socket.on('close', () => { hung++; });
    res.writeHead(404).end();
  };
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(parts)));
  };
  const srv = cert ? https.createServer({ cert: cert.cert, key: cert.key }, listener) : http.createServer(listener);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  return {
    url: `${cert ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    seen,
    hung: () => hung,
    close: () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }),
  };
}

const pki = makePki();
const proxy = await tlsProxy(sim, pki.server);
const mtls = await tlsProxy(sim, pki.server, pki.ca.cert);
const named = await tlsProxy(sim, pki.named);
const gw = await gateway();
const tlsGw = await gateway(pki.server);
Object.assign(targets, { abs: gw.url, other: `http://localhost:${gw.port}`, tls: proxy.url, plain: gw.url });
after(async () => {
  await Promise.all([proxy.close(), mtls.close(), named.close(), gw.close(), tlsGw.close()]);
  pki.cleanup();
});

const pods = (c: KubeClient) => c.resource({ version: 'v1', resource: 'pods' });
const configmaps = (c: KubeClient) => c.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });
const cacheState = (objs: readonly KubeObject[]) =>
  Object.fromEntries(objs.map((o) => [`${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`, o.metadata.resourceVersion ?? '']));

/** An informer on every configmap through `client` syncs to the sim's state and then sees a write made directly. */
async function followsTheSim(client: KubeClient, label: string) {
  const factory = new InformerFactory(client);
  const cms = factory.informer({ version: 'v1', resource: 'configmaps' });
  factory.start();
  try {
    await cms.waitForSync();
    assert.deepEqual(cacheState(cms.getSnapshot()), await simState('configmaps'), label);
    const name = `later-${label.replace(/[^a-z0-9]+/g, '-')}-${Date.now()}`;
    await configmaps(new KubeClient({ server: sim!, token })).create({ metadata: { name } } as KubeObject, {});
    await until(() => cms.lister().get(name, 'default') !== undefined);
  } finally {
    factory.shutdown();
  }
}

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

test('compressed responses (gzip, x-gzip, deflate zlib-wrapped and raw, br): lists, watches and errors are decoded', async () => {
  await control('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  for (const coding of ['gzip', 'x-gzip', 'deflate', 'deflate-raw', 'br'] as const) {
    const client = new KubeClient({ server: `${gw.url}/z/${coding}`, token });
    const before = gw.seen.length;
    await followsTheSim(client, coding);
    const through = gw.seen.slice(before).filter((r) => r.path.startsWith(`/z/${coding}/`));
    assert.ok(through.some((r) => !r.path.includes('watch=')) && through.some((r) => r.path.includes('watch=')), `${coding}: list and watch went through the gateway`);
    // A Status body, compressed.
    await rejects(configmaps(client).get('no-such-configmap'), 'NotFound', /no-such-configmap/);
  }
  // An encoding the transport cannot read: a clear error at once, not retried.
  const s = http.createServer((_req, res) => void res.writeHead(200, { 'content-encoding': 'zstd' }).end('(°_°)'));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  try {
    await rejects(pods(new KubeClient({ server: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, maxRetries: 2 })).list({}), 'Invalid', /Content-Encoding "zstd"/);
  } finally {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

test('Accept-Encoding: gzip on lists and other requests, none on watches, a caller\'s own kept', async () => {
  const before = gw.seen.length;
  await followsTheSim(new KubeClient({ server: `${gw.url}/up`, token }), 'accept-encoding');
  const seen = gw.seen.slice(before).filter((r) => r.path.startsWith('/up/api/v1/configmaps'));
  assert.ok(seen.length >= 2);
  for (const r of seen) assert.equal(r.acceptEncoding, r.path.includes('watch=') ? undefined : 'gzip', r.path);
  await pods(new KubeClient({ server: `${gw.url}/up`, token, headers: { 'Accept-Encoding': 'identity' } })).list({ limit: 1 });
  assert.equal(gw.seen.at(-1)?.acceptEncoding, 'identity');
});

test('a list over 128 KiB comes gzipped from the sim and decodes to the items of the uncompressed list', async () => {
  // 300 pods of ~2.5 KB: a list of about 750 KB, which the sim (as the API server) gzips for a client that asks.
  await control('/sim/seed', { namespaces: 3, pods: 300, seed: 1 });
  try {
    const before = gw.seen.length;
    const gzipped = await pods(new KubeClient({ server: `${gw.url}/up`, token })).list({});
    const plain = await pods(new KubeClient({ server: `${gw.url}/up`, token, headers: { 'Accept-Encoding': 'identity' } })).list({});
    const lists = gw.seen.slice(before).filter((r) => r.path.startsWith('/up/api/v1/pods'));
    assert.deepEqual(
      lists.map((r) => [r.acceptEncoding, r.upstreamEncoding]),
      [['gzip', 'gzip'], ['identity', undefined]],
    );
    assert.equal(gzipped.items.length, 300);
    assert.deepEqual(gzipped, plain);
    // A small answer is not compressed, asked or not.
    await pods(new KubeClient({ server: `${gw.url}/up`, token })).list({ limit: 5 });
    assert.deepEqual([gw.seen.at(-1)?.acceptEncoding, gw.seen.at(-1)?.upstreamEncoding], ['gzip', undefined]);
  } finally {
    await control('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  }
});

/** One exchange over `t`, its body read to the end. */
async function exchange(t: NodeTransport, url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}) {
  const res = await t.request({
    method: init.method ?? 'GET',
    url,
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: new TextEncoder().encode(init.body) }),
    watch: false,
    credentials: 'same-origin',
    signal: new AbortController().signal,
  });
  const parts: Uint8Array[] = [];
  for (let c = await res.read(); c !== null; c = await res.read()) parts.push(c.slice());
  return { status: res.status, text: Buffer.concat(parts).toString() };
}

test('redirects: 301/302/303 turn a POST into a GET without its body, 307/308 keep both; credentials stay on the host', async () => {
  const t = nodeTransport();
  try {
    for (const code of [301, 302, 303, 307, 308]) {
      for (const to of ['rel', 'abs', 'other']) {
        const r = await exchange(t, `${gw.url}/r/${code}/${to}/echo`, {
          method: 'POST',
          body: '{"x":1}',
          headers: { Authorization: 'Bearer secret', 'Content-Type': 'application/json' },
        });
        const label = `${code} ${to}`;
        assert.equal(r.status, 200, label);
        const got = JSON.parse(r.text) as Seen;
        const keeps = code >= 307;
        assert.equal(got.method, keeps ? 'POST' : 'GET', label);
        assert.equal(got.body, keeps ? '{"x":1}' : '', label);
        assert.equal(got.contentType, keeps ? 'application/json' : undefined, label);
        assert.equal(got.host, `${to === 'other' ? 'localhost' : '127.0.0.1'}:${gw.port}`, label);
        assert.equal(got.authorization, to === 'other' ? undefined : 'Bearer secret', label);
      }
    }
    // A GET stays a GET, with its credentials, through a 303.
    const got = JSON.parse((await exchange(t, `${gw.url}/r/303/abs/echo`, { headers: { Authorization: 'Bearer secret' } })).text) as Seen;
    assert.deepEqual([got.method, got.authorization], ['GET', 'Bearer secret']);
  } finally {
    t.close();
  }
});

test('redirects: informers follow them for lists and watches, over http and on to https with the TLS options', async () => {
  await control('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  for (const [server, extra] of [[`${gw.url}/r/307/rel/up`, {}], [`${gw.url}/r/308/abs/up`, {}], [`${gw.url}/r/302/tls`, { tls: { ca: pki.ca.cert } }]] as const) {
    const before = gw.seen.length;
    await followsTheSim(new KubeClient({ server, token, ...extra }), server);
    const redirected = gw.seen.slice(before).filter((r) => r.path.startsWith('/r/'));
    assert.ok(redirected.some((r) => r.path.includes('watch=')), `${server}: the watch was redirected too`);
  }
  // To another host the token is not sent: the sim refuses the request.
  const before = gw.seen.length;
  await rejects(pods(new KubeClient({ server: `${gw.url}/r/307/other/up`, token, maxRetries: 0 })).list({}), 'Unauthorized', /./);
  const arrived = gw.seen.slice(before).filter((r) => r.path.startsWith('/up/'));
  assert.deepEqual(arrived.map((r) => [r.host, r.authorization]), [[`localhost:${gw.port}`, undefined]]);
});

test('redirects that cannot be followed fail at once with a clear error; timeouts still hold across hops', async () => {
  const before = gw.seen.length;
  await rejects(pods(new KubeClient({ server: `${gw.url}/loop/0`, token })).list({}), 'Invalid', /stopped after 10 redirects, the last to \/loop\/11\/api\/v1\/pods/);
  assert.equal(gw.seen.slice(before).filter((r) => r.path.startsWith('/loop/')).length, 11, 'ten redirects followed, the request not retried');
  await rejects(pods(new KubeClient({ server: `${gw.url}/bare`, token })).list({}), 'Invalid', /302 redirect from .*\/bare\/api\/v1\/pods without a Location/);
  await rejects(pods(new KubeClient({ server: `${tlsGw.url}/r/307/plain/up`, token, tls: { ca: pki.ca.cert } })).list({}), 'Invalid', /from https to plain http/);
  const hung = gw.hung();
  await rejects(pods(new KubeClient({ server: `${gw.url}/r/307/rel/hang`, token, timeoutMs: 300, maxRetries: 0 })).list({}), 'Timeout', /300ms/);
  await until(() => gw.hung() === hung + 1);
});

/**
 * A server whose watch streams events as fast as the client takes them, counting the bytes the socket accepted;
 * with `coding`, compressed (each event flushed) with random padding, so the compressed stream fills buffers as fast.
 */
async function endlessWatch(opts: { dropAfter?: number; coding?: 'gzip' | 'br' } = {}) {
  const state = { written: 0, events: 0, open: 0, closed: 0 };
  const srv = http.createServer((req, res) => {
    state.open++;
    res.writeHead(200, { 'content-type': 'application/json', ...(opts.coding ? { 'content-encoding': opts.coding } : {}) });
    const z = opts.coding ? compressor(opts.coding) : undefined;
    if (z) {
      z.on('data', (c: Buffer) => {
        state.written += c.length;
        if (!res.write(c)) z.pause();
      });
      res.on('drain', () => z.resume());
    }
    const out = z ?? res;
    let stopped = false;
    const deadline = Date.now() + 20_000; // bounded, whatever the client does
    req.on('close', () => { stopped = true; state.closed++; z?.destroy(); });
    const pump = () => {
      while (!stopped && Date.now() < deadline) {
        state.events++;
        const pad = z ? randomBytes(500).toString('hex') : 'x'.repeat(1000);
        const line = `${JSON.stringify({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${state.events}`, namespace: 'default', resourceVersion: String(state.events), annotations: { pad } } } })}\n`;
        if (!z) state.written += line.length;
        if (opts.dropAfter !== undefined && state.events > opts.dropAfter) {
          // Once the client has the headers and some events: drop the connection mid-body.
          setTimeout(() => res.socket?.destroy(), 300);
          return;
        }
        const more = out.write(line);
        z?.flush();
        if (!more) return void out.once('drain', pump);
      }
      if (!stopped) out.end();
    };
    pump();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return { url, state, close: () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }) };
}

for (const coding of [undefined, 'gzip', 'br'] as const) {
  test(`back-pressure${coding ? ` through ${coding}` : ''}: a watch nobody reads stops its socket; return() closes the connection`, async () => {
    const s = await endlessWatch({ ...(coding ? { coding } : {}) });
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
      // queued chunks reach wasm joined in one reused buffer). Read until the
      // server writes again: how much the kernel buffers first depends on
      // the event size, compressed or not.
      const before = s.state.written;
      const rv = (r: IteratorResult<WatchEvent<KubeObject>>) => Number(r.done ? NaN : r.value.object.metadata.resourceVersion);
      const from = rv(first);
      for (let i = 1; i <= 2000 || s.state.written === before; i++) assert.equal(rv(await it.next()), from + i);
      await it.return();
      await until(() => s.state.closed === 1);
    } finally {
      await s.close();
    }
  });
}

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
  // No connection made (refused, a name that does not resolve): reported at once, as client-go does; one lost is retried.
  await typed(() => Promise.reject(Object.assign(new Error('gone'), { code: 'ECONNREFUSED' })), 'Network', /gone \(ECONNREFUSED\)/, 1);
  await typed(() => Promise.reject(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' })), 'Network', /ENOTFOUND/, 1);
  await typed(() => Promise.reject(Object.assign(new Error('lost'), { code: 'ECONNRESET' })), 'Network', /lost \(ECONNRESET\)/, 3);
  await typed(() => Promise.reject(Object.assign(new Error('stop'), { name: 'AbortError' })), 'Aborted', /abort/i, 1);
  await typed(() => ({ status: 200, headers: {}, read: chunks('{"items":[', Promise.reject(new Error('reset mid-body'))) }), 'Network', /reset mid-body/, 3);
});
