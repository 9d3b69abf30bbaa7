// Deadlines and cancellation as a client-go user expects them: `timeoutMs`
// bounds a whole call, retries and their waits included; a server that is
// down is reported at once; a call takes an AbortSignal; and waitForSync
// can give up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient, InformerFactory, KubeError, type Transport, type TransportRequest, type TransportResponse } from 'kubewasm';
import { server, token, until } from './sim.js';

const configMaps = (client: KubeClient) => client.resource({ version: 'v1', resource: 'configmaps', namespace: 'default' });

/** `p`, or a failure once `ms` pass without it settling (so a regression fails fast instead of hanging). */
const within = async <T>(p: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
};

/** What `p` rejects with, as a KubeError. */
const rejection = async (p: Promise<unknown>): Promise<KubeError> => {
  const e = await p.then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  assert.ok(e instanceof KubeError, `a KubeError, not ${String(e)}`);
  return e;
};

/** A local HTTP server; `handle` answers (or never answers) each request. */
const local = async (handle: http.RequestListener) => {
  const srv = http.createServer(handle);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    close: async () => {
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
    },
  };
};

/** A transport that fails every request with a network error carrying no code (what a browser's fetch gives). */
const opaqueFailures = () => {
  const calls: TransportRequest[] = [];
  const transport: Transport = {
    request: async (req: TransportRequest): Promise<TransportResponse> => {
      calls.push(req);
      throw new TypeError('Failed to fetch');
    },
  };
  return { calls, transport };
};

/** A URL on a port nobody listens on (not port 1, which `fetch` refuses to use at all). */
const nobodyHome = async () => {
  const srv = await local(() => {});
  await srv.close();
  return srv.url;
};

test('a server that refuses connections fails a read at once, over the Node transport and over fetch', async () => {
  const url = await nobodyHome();
  for (const transport of ['node', 'fetch'] as const) {
    const client = new KubeClient({ server: url, timeoutMs: 1000, transport });
    const began = Date.now();
    const e = await within(rejection(configMaps(client).get('x')), 3000, transport);
    assert.equal(e.reason, 'Network', `${transport}: ${e.message}`);
    assert.match(e.message, /ECONNREFUSED|Connection ?refused/i, transport);
    // The transport's own error is the cause (Node's `fetch` nests the socket's under its own).
    const cause = e.cause as { code?: string; cause?: { code?: string } } | undefined;
    assert.ok(cause instanceof Error, `${transport}: a cause`);
    if (process.versions.node && !('Deno' in globalThis) && !('Bun' in globalThis)) {
      assert.equal(cause.code ?? cause.cause?.code, 'ECONNREFUSED', transport);
    }
    assert.ok(Date.now() - began < 1000, `${transport}: failed after ${Date.now() - began} ms`);
  }
  // A port `fetch` refuses to use is never connected to either.
  const client = new KubeClient({ server: 'http://127.0.0.1:1', timeoutMs: 1000, transport: 'fetch' });
  const began = Date.now();
  const e = await within(rejection(configMaps(client).get('x')), 3000, 'port 1');
  assert.equal(e.reason, 'Network', e.message);
  assert.ok(Date.now() - began < 1000, `port 1: failed after ${Date.now() - began} ms`);
});

test('timeoutMs bounds a read with its retries: 503s without Retry-After end with the 503 before the time is up', async () => {
  let requests = 0;
  const srv = await local((_req, res) => {
    requests++;
    res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', message: 'busy', code: 503 }));
  });
  try {
    const client = new KubeClient({ server: srv.url, timeoutMs: 1000 });
    const began = Date.now();
    const e = await within(rejection(configMaps(client).get('x')), 5000, 'the read');
    const took = Date.now() - began;
    assert.equal(e.code, 503, e.message);
    assert.ok(took < 1000, `failed after ${took} ms`);
    assert.ok(requests >= 2 && requests <= 4, `${requests} requests: retried, not ten times`);
  } finally {
    await srv.close();
  }
});

test('network errors a transport cannot explain are retried, within timeoutMs', async () => {
  const s = opaqueFailures();
  const client = new KubeClient({ server: 'http://opaque.invalid', transport: s.transport, timeoutMs: 1000 });
  const began = Date.now();
  const e = await within(rejection(configMaps(client).list({})), 5000, 'the list');
  assert.equal(e.reason, 'Network', e.message);
  assert.ok(Date.now() - began < 1000, `failed after ${Date.now() - began} ms`);
  assert.ok(s.calls.length >= 2 && s.calls.length < 11, `${s.calls.length} tries`);
});

test('a retry cut short by timeoutMs fails with Timeout, naming what the try before met', async () => {
  let requests = 0;
  const srv = await local((_req, res) => {
    // The first answer asks for a retry, the next never comes.
    if (++requests === 1) res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
  });
  try {
    const client = new KubeClient({ server: srv.url, timeoutMs: 800 });
    const began = Date.now();
    const e = await within(rejection(configMaps(client).get('x')), 5000, 'the read');
    const took = Date.now() - began;
    assert.equal(e.reason, 'Timeout', e.message);
    assert.match(e.message, /within 800ms, retries included \(1 retry; the try before: .*503/);
    assert.match(e.message, /503/);
    assert.ok(took >= 700 && took < 1500, `timed out after ${took} ms`);
    assert.equal(requests, 2);
  } finally {
    await srv.close();
  }
});

test('signal: an aborted one rejects every one-shot call at once, without a request', async () => {
  const s = opaqueFailures();
  const cms = configMaps(new KubeClient({ server: 'http://opaque.invalid', transport: s.transport }));
  const reason = new Error('the user left');
  const signal = AbortSignal.abort(reason);
  const cm = { metadata: { name: 'x', namespace: 'default' } };
  const calls: [string, () => Promise<unknown>][] = [
    ['get', () => cms.get('x', null, { signal })],
    ['list', () => cms.list({ signal })],
    ['create', () => cms.create(cm, { signal })],
    ['replace', () => cms.replace(cm, { signal })],
    ['patch', () => cms.patch('x', null, { data: {} }, 'merge', { signal })],
    ['delete', () => cms.delete('x', null, { signal })],
    ['deleteCollection', () => cms.deleteCollection({ signal })],
  ];
  for (const [verb, call] of calls) {
    const e = await within(rejection(call()), 1000, verb);
    assert.equal(e.reason, 'Aborted', `${verb}: ${e.message}`);
    assert.match(e.message, /aborted.*the user left/, verb);
    assert.equal((e as { cause?: unknown }).cause, reason, verb);
  }
  assert.equal(s.calls.length, 0, 'no request was made');
  await assert.rejects(cms.list({ signal: 'soon' as unknown as AbortSignal }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /`signal`/.test(e.message));
});

test('signal: aborting cancels the request in flight, and a wait before a retry', async () => {
  let closed = 0;
  const srv = await local((req) => void req.on('close', () => void closed++));
  try {
    const ac = new AbortController();
    const pending = configMaps(new KubeClient({ server: srv.url })).get('x', null, { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    const began = Date.now();
    const e = await within(rejection(pending), 2000, 'the aborted get');
    assert.equal(e.reason, 'Aborted', e.message);
    assert.ok(Date.now() - began < 1000);
    await until(() => closed === 1, 2000);
  } finally {
    await srv.close();
  }
  // Between retries (a transport whose failures are retried): no try after the abort.
  const s = opaqueFailures();
  const ac = new AbortController();
  const pending = configMaps(new KubeClient({ server: 'http://opaque.invalid', transport: s.transport, timeoutMs: 0 })).list({ signal: ac.signal });
  await until(() => s.calls.length >= 2, 2000);
  ac.abort();
  const e = await within(rejection(pending), 1000, 'the aborted list');
  assert.equal(e.reason, 'Aborted', e.message);
  const tries = s.calls.length;
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(s.calls.length, tries, 'no retry after the abort');
  // A signal that never aborts changes nothing.
  const ok = await configMaps(new KubeClient({ server, token })).list({ signal: new AbortController().signal });
  assert.ok(Array.isArray(ok.items));
});

test('waitForSync({ timeoutMs, signal }) resolves false when it gives up; the informer keeps trying', async () => {
  const factory = new InformerFactory(new KubeClient({ server: 'http://127.0.0.1:1' }));
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    factory.start();
    let began = Date.now();
    assert.equal(await within(pods.waitForSync({ timeoutMs: 300 }), 3000, 'informer timeout'), false);
    assert.ok(Date.now() - began >= 250, 'waited for the time given');
    began = Date.now();
    assert.equal(await within(factory.waitForSync({ timeoutMs: 300 }), 3000, 'factory timeout'), false);
    assert.ok(Date.now() - began >= 250);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    assert.equal(await within(pods.waitForSync({ signal: ac.signal }), 3000, 'informer signal'), false);
    assert.equal(await within(factory.waitForSync({ signal: AbortSignal.abort() }), 3000, 'factory aborted'), false);
    const reg = pods.addEventHandler({ add: () => {} });
    assert.equal(await within(reg.waitForSync({ timeoutMs: 50 }), 3000, 'registration timeout'), false);
    assert.notEqual(pods.status.phase, 'stopped', 'the informer keeps running');
  } finally {
    factory.shutdown();
  }
  // Synced in time: true.
  const synced = new InformerFactory(new KubeClient({ server, token }));
  try {
    const pods = synced.informer({ version: 'v1', resource: 'pods' });
    synced.start();
    assert.equal(await pods.waitForSync({ timeoutMs: 20_000, signal: new AbortController().signal }), true);
    assert.equal(await synced.waitForSync({ timeoutMs: Infinity }), true);
  } finally {
    synced.shutdown();
  }
});

test('waitForSync refuses what it would otherwise ignore: an unknown option, or a number for a timeout', async () => {
  const factory = new InformerFactory(new KubeClient({ server: 'http://127.0.0.1:1' }));
  try {
    const pods = factory.informer({ version: 'v1', resource: 'pods' });
    const invalid = (name: RegExp) => (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && name.test(e.message);
    await assert.rejects(pods.waitForSync({ timeout: 5 } as never), invalid(/`timeout`/));
    await assert.rejects(factory.waitForSync({ timeoutMs: 5, sigal: null, abortSignal: 1 } as never), invalid(/`abortSignal`/));
    await assert.rejects(pods.waitForSync(5000 as never), invalid(/options object/));
    await assert.rejects(factory.waitForSync({ timeoutMs: -1 }), invalid(/`timeoutMs`/));
    await assert.rejects(pods.waitForSync({ signal: {} as AbortSignal }), invalid(/`signal`/));
  } finally {
    factory.shutdown();
  }
});

/** A server that answers every request with `lines` and then keeps the response open; counts closed requests. */
const streaming = async (lines: string[]) => {
  const seen = { requests: 0, closed: 0 };
  const srv = await local((req, res) => {
    seen.requests++;
    req.on('close', () => void seen.closed++);
    res.writeHead(200, { 'content-type': 'application/json' });
    for (const l of lines) res.write(`${l}\n`);
  });
  return { ...srv, seen };
};

const event = (rv: number) => JSON.stringify({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${rv}`, namespace: 'default', resourceVersion: String(rv) } } });

/** An AbortSignal that counts the `abort` listeners on it. */
const counted = () => {
  const ac = new AbortController();
  const listening = { added: 0, removed: 0 };
  const signal = {
    get aborted() {
      return ac.signal.aborted;
    },
    get reason() {
      return ac.signal.reason as unknown;
    },
    addEventListener: (t: string, f: () => void, o?: AddEventListenerOptions) => {
      listening.added++;
      ac.signal.addEventListener(t, f, o);
    },
    removeEventListener: (t: string, f: () => void) => {
      listening.removed++;
      ac.signal.removeEventListener(t, f);
    },
  } as unknown as AbortSignal;
  return { signal, abort: (r?: unknown) => ac.abort(r), listening };
};

for (const transport of ['node', 'fetch'] as const) {
  test(`signal: a watch and a log end when it aborts, their requests with them (${transport})`, async () => {
    const srv = await streaming([event(1), event(2)]);
    try {
      const client = new KubeClient({ server: srv.url, transport });
      const reason = new Error('navigated away');
      for (const [what, open] of [
        ['watch', (signal: AbortSignal) => configMaps(client).watch({ signal })],
        ['logs', (signal: AbortSignal) => client.logs('default', 'p', { signal })],
      ] as const) {
        const before = srv.seen.requests;
        const s = counted();
        const it = open(s.signal);
        assert.equal((await it.next()).done, false, what);
        assert.equal((await it.next()).done, false, what);
        // The third read waits on the open response until the signal aborts.
        const pending = it.next();
        setTimeout(() => s.abort(reason), 50);
        const e = await within(rejection(pending), 2000, `${what}: the read pending at the abort`);
        assert.equal(e.reason, 'Aborted', e.message);
        assert.equal((e as { cause?: unknown }).cause, reason, what);
        assert.deepEqual(await it.next(), { value: undefined, done: true }, `${what}: ended for good`);
        await until(() => srv.seen.closed === srv.seen.requests, 2000);
        assert.equal(srv.seen.requests, before + 1, `${what}: one request`);
        // Each read listened while it waited, and stopped listening when it ended.
        assert.ok(s.listening.added >= 1, `${what}: ${JSON.stringify(s.listening)}`);
        assert.equal(s.listening.removed, s.listening.added, `${what}: no listener left on the signal`);
      }
    } finally {
      await srv.close();
    }
  });
}

test('signal: an aborted one ends a watch, a log and discovery before any request; return() stays quiet', async () => {
  const s = opaqueFailures();
  const client = new KubeClient({ server: 'http://opaque.invalid', transport: s.transport });
  const reason = new Error('not needed');
  const signal = AbortSignal.abort(reason);
  const reads: [string, () => Promise<unknown>][] = [
    ['watch', () => configMaps(client).watch({ signal }).next()],
    ['logs', () => client.logs('default', 'p', { signal }).next()],
    ['logs().readable()', () => client.logs('default', 'p', { signal }).readable().getReader().read()],
    ['discover', () => client.discover({ signal })],
    ['resourceFor', () => client.resourceFor('pods', { signal })],
  ];
  for (const [what, read] of reads) {
    const e = await within(rejection(read()), 1000, what);
    assert.equal(e.reason, 'Aborted', `${what}: ${e.message}`);
    assert.equal((e as { cause?: unknown }).cause, reason, what);
  }
  assert.equal(s.calls.length, 0, 'no request was made');
  // return() before the signal aborts: done, not an error, and nothing is sent.
  const ac = new AbortController();
  const w = configMaps(client).watch({ signal: ac.signal });
  assert.deepEqual(await w.return(), { value: undefined, done: true });
  ac.abort();
  assert.deepEqual(await w.next(), { value: undefined, done: true });
  assert.equal(s.calls.length, 0);
  assert.throws(() => configMaps(client).watch({ signal: 'soon' as unknown as AbortSignal }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /`signal`/.test(e.message));
});

test('signal: aborting a discovery call leaves the request it shares to the other callers', async () => {
  // In front of the sim: requests wait until released.
  const held: (() => void)[] = [];
  let open = false;
  const srv = await local((req, res) => {
    const forward = async () => {
      const r = await fetch(server + req.url, { headers: { authorization: `Bearer ${token}`, accept: req.headers.accept ?? '*/*' } });
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await r.arrayBuffer()));
    };
    if (open) void forward();
    else held.push(() => void forward());
  });
  try {
    const client = new KubeClient({ server: srv.url });
    const ac = new AbortController();
    const mine = client.resourceFor('pods', { signal: ac.signal });
    const theirs = client.resourceFor('po');
    await until(() => held.length > 0, 2000);
    ac.abort();
    assert.equal((await within(rejection(mine), 1000, 'the aborted call')).reason, 'Aborted');
    open = true;
    held.splice(0).forEach((go) => go());
    assert.equal((await within(theirs, 5000, 'the other call')).resource, 'pods');
  } finally {
    await srv.close();
  }
});

test('discovery: timeoutMs bounds the whole call, and an aborted call that nobody else waits on closes its request', async () => {
  let closed = 0;
  let opened = 0;
  const srv = await local((req) => {
    opened++;
    req.on('close', () => void closed++);
  });
  try {
    const began = Date.now();
    const e = await within(rejection(new KubeClient({ server: srv.url, timeoutMs: 500 }).discover()), 3000, 'discover with a timeout');
    assert.equal(e.reason, 'Timeout', e.message);
    assert.ok(Date.now() - began < 900, `one timeout for the call, not one per document: ${Date.now() - began} ms`);
    await until(() => closed === opened, 2000);
    const client = new KubeClient({ server: srv.url, timeoutMs: 0 });
    const before = opened;
    const aborted = await within(rejection(client.resourceFor('pods', { signal: AbortSignal.timeout(100) })), 2000, 'the aborted call');
    assert.equal(aborted.reason, 'Aborted', aborted.message);
    await until(() => opened > before && closed === opened, 2000);
  } finally {
    await srv.close();
  }
});
