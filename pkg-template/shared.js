// `kubewasm/shared`: one set of watches for every tab of an origin.
//
// The tab keeps its own informers, with every option the page API has
// (transforms, indexers, persistence, subscriptions), but their lists and
// watches go over a MessagePort to a SharedWorker (`shared-worker.js`) that
// holds one informer per scope for all tabs. Where that cannot work, the same
// objects are built on a direct client in the page, and `host` says why.
import init, { InformerFactory, KubeClient, KubeError, retryNow } from './web/index.js';
import { sha256Hex } from './sha256.js';

/** How long the worker may take to load the module and answer. */
const HANDSHAKE_MS = 15_000;
/** The worker pings every 15 s; a link that heard nothing for this long is re-established. */
const SILENT_MS = 50_000;
/** Client options that cannot cross to a worker: a function or an object only this page holds. */
const PAGE_ONLY = ['fetch', 'transport', 'tls'];
/** Client options the worker's client takes as they are. */
const PASSED = ['server', 'headers', 'credentials', 'timeoutMs', 'qps', 'burst', 'maxInFlight', 'maxRetries', 'maxResponseBytes', 'watchTransport', 'fetchWatchesPerOrigin'];

const abortError = () => Object.assign(new Error('the request was aborted'), { name: 'AbortError' });

/** SHA-256 (hex) of the server, the identity and the headers: the worker's name, never the token itself. */
async function identityHash(server, identity, headers) {
  const sorted = Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]).sort();
  return sha256Hex(`${server}\n${identity}\n${JSON.stringify(sorted)}`);
}

/** The server URL as the client resolves it (a path against the page, no trailing slash). */
function resolveServer(server) {
  const base = globalThis.location?.href;
  return new URL(server, base).href.replace(/\/+$/, '');
}

/**
 * The tab's end of the port: requests out, response heads and chunks in,
 * tokens on request. `reopen` starts the worker again and returns the new
 * port: when the worker is gone, and for a SharedWorker also when it falls
 * silent (a SharedWorker of the same name is the running one if it lives; a
 * dedicated Worker that is only slow keeps its caches and is greeted again).
 */
class Link {
  constructor(port, hello, clientOpts, reopen, reopenWhenSilent) {
    this.hello = hello;
    this.clientOpts = clientOpts;
    this.reopen = reopen;
    this.reopenWhenSilent = reopenWhenSilent;
    this.seq = 0;
    this.streams = new Map();
    this.heard = Date.now();
    this.rehello = false;
    this.closed = false;
    this.handshake = new Promise((resolve, reject) => {
      this.handshaken = { resolve, reject };
    });
    this.attach(port);
    this.watchdog = setInterval(() => {
      if (Date.now() - this.heard > SILENT_MS) this.reconnectLost('the shared worker stopped answering');
    }, SILENT_MS / 2);
  }

  /** Talk over `port` from now on, starting with a hello. */
  attach(port) {
    this.port = port;
    port.onmessage = (e) => this.onMessage(e.data);
    port.start?.();
    port.postMessage(this.hello);
  }

  onMessage(m) {
    this.heard = Date.now();
    const s = m && this.streams.get(m.id);
    switch (m?.t) {
      case 'ready':
        this.rehello = false;
        this.handshaken.resolve();
        this.watchLife(m.life);
        break;
      case 'refused':
        this.handshaken.reject(new Error(m.message));
        break;
      case 'head':
        s?.head(m.status, m.headers);
        break;
      case 'chunk':
        s?.chunk(new Uint8Array(m.data));
        break;
      case 'end':
        s?.end();
        break;
      case 'fail':
        s?.fail(new Error(`shared worker: ${m.message}`));
        // The worker had let this tab go (it stopped answering for a while):
        // say hello again, once (a failure of a request already given up on is stale).
        if (s && m.message === 'not connected' && !this.rehello) {
          this.rehello = true;
          this.port.postMessage(this.hello);
        }
        break;
      case 'token':
        this.answerToken(m.id);
        break;
      case 'warning': {
        const w = this.clientOpts.onWarning;
        if (typeof w === 'function') w(m.text);
        else if (w !== false) console.warn(`Warning: ${m.text}`);
        break;
      }
      case 'ping':
        this.port.postMessage({ t: 'pong' });
        break;
      // The worker's upstream informer watches again: informers that an
      // error sent into a backoff try now, not when their own timers end.
      case 'recovered':
        retryNow();
        break;
      default:
        break;
    }
  }

  /**
   * Ask for the lock the worker holds while it lives (`life`, from its
   * `ready`): granted only when the worker is gone, so the tab moves to a new
   * worker at once instead of after a silence. Released at once, so every tab
   * learns of it.
   */
  watchLife(life) {
    if (typeof life !== 'string' || !globalThis.navigator?.locks || this.watched === life) return;
    this.watched = life;
    // Shared: every waiting tab is granted it at once when the worker goes.
    navigator.locks.request(life, { mode: 'shared' }, () => {
      if (this.watched === life) this.reconnectLost('the shared worker is gone', true);
    }).catch(() => {});
  }

  async answerToken(id) {
    let token;
    try {
      const p = this.clientOpts.tokenProvider;
      token = p ? await p() : this.clientOpts.token;
    } catch (e) {
      console.warn('kubewasm: tokenProvider failed for the shared worker', e);
    }
    this.port.postMessage({ t: 'token', id, token: typeof token === 'string' ? token : undefined });
  }

  /**
   * Every open request fails (the reflectors retry), and the next ones go
   * over a new port: to the worker again if it still runs, else to a new one
   * (a port to a worker that died never answers).
   */
  reconnectLost(why, gone = false) {
    if (this.closed) return;
    this.heard = Date.now();
    for (const s of [...this.streams.values()]) s.fail(new Error(why));
    const old = this.port;
    let port;
    try {
      if (gone || this.reopenWhenSilent) port = this.reopen?.();
    } catch (e) {
      console.warn('kubewasm: cannot start the shared worker again', e);
    }
    if (!port) {
      old.postMessage(this.hello);
      return;
    }
    // A worker that still runs lets the old connection go.
    old.onmessage = null;
    old.postMessage({ t: 'bye' });
    old.close();
    this.attach(port);
  }

  /** A `Transport` for the tab's client. */
  transport() {
    return {
      name: 'worker',
      request: (req) => new Promise((resolve, reject) => {
        if (req.signal.aborted) {
          reject(abortError());
          return;
        }
        if (this.closed) {
          // A port that was closed never answers: say so instead of waiting
          // for the request timeout (an informer made from the connection's
          // factory after `close()`, say by a component mounting again).
          reject(Object.assign(new Error('kubewasm/shared: this connection was closed; connect again'), { retryable: false }));
          return;
        }
        const id = ++this.seq;
        const s = new Stream(this, id, resolve, reject);
        this.streams.set(id, s);
        const accept = Object.entries(req.headers).find(([k]) => k.toLowerCase() === 'accept')?.[1];
        this.port.postMessage({ t: 'req', id, method: req.method, url: req.url, headers: accept ? { accept } : {}, watch: req.watch });
        req.signal.addEventListener('abort', () => {
          if (!this.streams.has(id)) return;
          this.port.postMessage({ t: 'abort', id });
          s.fail(abortError());
        }, { once: true });
      }),
    };
  }

  close() {
    this.closed = true;
    clearInterval(this.watchdog);
    for (const s of [...this.streams.values()]) s.fail(abortError());
    this.port.postMessage({ t: 'bye' });
    this.port.close();
  }
}

/** One response coming over the port. */
class Stream {
  constructor(link, id, resolve, reject) {
    this.link = link;
    this.id = id;
    this.resolve = resolve;
    this.reject = reject;
    this.chunks = [];
    this.waiter = undefined;
    this.done = false;
    this.error = undefined;
  }

  head(status, headers) {
    this.resolve({ status, headers, read: () => this.read() });
  }

  chunk(bytes) {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      this.link.port.postMessage({ t: 'ack', id: this.id });
      w.resolve(bytes);
    } else this.chunks.push(bytes);
  }

  end() {
    this.done = true;
    this.link.streams.delete(this.id);
    this.waiter?.resolve(null);
    this.waiter = undefined;
  }

  fail(err) {
    if (this.done) return;
    this.done = true;
    this.error = err;
    this.link.streams.delete(this.id);
    this.reject(err);
    this.waiter?.reject(err);
    this.waiter = undefined;
  }

  /** The next chunk; reading it is what lets the worker send more. */
  read() {
    if (this.chunks.length) {
      this.link.port.postMessage({ t: 'ack', id: this.id });
      return this.chunks.shift();
    }
    if (this.error) return Promise.reject(this.error);
    if (this.done) return null;
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }
}

/** Hold a lock for as long as this page lives; the worker learns of the page's end when it is granted there. */
async function holdLock(name) {
  if (!globalThis.navigator?.locks) return { name: undefined, release() {} };
  let release;
  const held = new Promise((r) => {
    release = r;
  });
  await new Promise((granted) => {
    navigator.locks.request(name, () => {
      granted();
      return held;
    }).catch(() => granted());
  });
  return { name, release };
}

/**
 * Start the host. The URLs are written out (not passed in a variable) so that
 * bundlers such as Vite find the worker script and bundle it with the module.
 */
function startWorker(kind, url, name) {
  if (kind === 'shared-worker') {
    const w = url
      ? new SharedWorker(url, { type: 'module', name })
      : new SharedWorker(new URL('./shared-worker.js', import.meta.url), { type: 'module', name });
    return { port: w.port, target: w };
  }
  const w = url
    ? new Worker(url, { type: 'module', name })
    : new Worker(new URL('./shared-worker.js', import.meta.url), { type: 'module', name });
  const ch = new MessageChannel();
  w.postMessage({ t: 'connect' }, [ch.port2]);
  return { port: ch.port1, target: w, terminate: () => w.terminate() };
}

/**
 * A client and an informer factory whose informers share one set of watches
 * with every other tab of this origin that connects with the same server
 * and identity (see the README's "One cache for every tab").
 */
export async function connectShared(opts) {
  await init();
  // A misspelt `host` or `identity` would be ignored: refused, as the
  // package's other option objects are (`client` and `factory` are checked
  // by the client and the factory themselves).
  const known = ['client', 'factory', 'host', 'workerUrl', 'identity'];
  for (const k of Object.keys(opts ?? {})) {
    if (!known.includes(k) && opts[k] !== undefined && opts[k] !== null) {
      const meant = known.find((n) => n.toLowerCase() === k.toLowerCase());
      throw new KubeError(`unknown connectShared option \`${k.length > 64 ? `${k.slice(0, 64)}…` : k}\` (${meant ? `did you mean \`${meant}\`? ` : ''}known: ${known.join(', ')})`, 0, 'Invalid');
    }
  }
  const clientOpts = { ...(opts?.client ?? {}) };
  const factoryOpts = { ...(opts?.factory ?? {}) };
  // The page's own client: everything that is not an informer's list or watch.
  const client = new KubeClient(clientOpts);
  const server = resolveServer(clientOpts.server);
  const want = opts?.host ?? 'auto';
  const inPage = (reason) => ({
    client,
    factory: new InformerFactory(client, { ...factoryOpts, host: { kind: 'page', reason } }),
    host: { kind: 'page', reason },
    close() {
      this.factory.shutdown();
    },
  });
  if (want === 'page') return inPage('configured');
  const pageOnly = PAGE_ONLY.filter((k) => clientOpts[k] !== undefined && !(k === 'transport' && clientOpts[k] === 'fetch'));
  const problem = pageOnly.length ? `the client's ${pageOnly.join(', ')} cannot be used from a worker`
    : typeof clientOpts.tokenProvider === 'function' && opts?.identity === undefined ? 'an `identity` is required with a tokenProvider'
      : !globalThis.crypto?.subtle ? 'this page is not a secure context (no crypto.subtle to hash the identity with)'
        : want !== 'worker' && typeof SharedWorker !== 'function' ? 'this browser has no SharedWorker'
          : want === 'worker' && typeof Worker !== 'function' ? 'this environment has no Worker'
            : undefined;
  if (problem) {
    if (want !== 'auto') throw new KubeError(`kubewasm/shared: ${problem}`, 0, 'Invalid');
    return inPage(problem);
  }
  const kind = want === 'auto' ? 'shared-worker' : want;
  const identity = await identityHash(server, opts?.identity ?? clientOpts.token ?? '', clientOpts.headers);
  const passed = Object.fromEntries(PASSED.filter((k) => clientOpts[k] !== undefined).map((k) => [k, clientOpts[k]]));
  passed.server = server;
  const lock = await holdLock(`kubewasm-tab:${identity}:${crypto.randomUUID?.() ?? Math.random().toString(36).slice(2)}`);
  let worker;
  let link;
  const reopen = () => {
    worker?.terminate?.();
    worker = startWorker(kind, opts?.workerUrl, `kubewasm:${identity}`);
    return worker.port;
  };
  try {
    worker = startWorker(kind, opts?.workerUrl, `kubewasm:${identity}`);
    const hello = {
      t: 'hello',
      identity,
      base: server,
      client: passed,
      auth: clientOpts.token !== undefined || typeof clientOpts.tokenProvider === 'function',
      lock: lock.name,
    };
    link = new Link(worker.port, hello, clientOpts, reopen, kind === 'shared-worker');
    const failed = new Promise((_, reject) => {
      worker.target.addEventListener('error', (e) => reject(new Error(e.message || 'the worker script failed to load')), { once: true });
      setTimeout(() => reject(new Error(`no answer in ${HANDSHAKE_MS / 1000} s`)), HANDSHAKE_MS);
    });
    await Promise.race([link.handshake, failed]);
  } catch (e) {
    link?.close();
    worker?.terminate?.();
    lock.release();
    if (want !== 'auto') throw new KubeError(`kubewasm/shared: the ${kind} did not start: ${e.message}`, 0, 'Invalid');
    return inPage(`the ${kind} did not start: ${e.message}`);
  }
  // The tab's informers talk only to the worker: it retries for them, and it
  // is not rate-limited like a server.
  const viaWorker = new KubeClient({
    server,
    transport: link.transport(),
    maxRetries: 0,
    qps: 1000,
    burst: 1000,
    timeoutMs: clientOpts.timeoutMs,
    maxResponseBytes: clientOpts.maxResponseBytes,
    onWarning: false,
  });
  if (factoryOpts.persist && factoryOpts.persist.identity === undefined) {
    // Stored copies are per identity as well; the hash names it without the token.
    factoryOpts.persist = { ...factoryOpts.persist, identity };
  }
  const host = { kind, reason: kind === want ? 'configured' : 'available' };
  const factory = new InformerFactory(viaWorker, { ...factoryOpts, host });
  const onHide = (e) => {
    if (!e.persisted) link.close();
  };
  globalThis.addEventListener?.('pagehide', onHide);
  return {
    client,
    factory,
    host,
    close() {
      globalThis.removeEventListener?.('pagehide', onHide);
      factory.shutdown();
      link.close();
      worker.terminate?.();
      lock.release();
    },
  };
}
