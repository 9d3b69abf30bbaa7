// The host of `kubewasm/shared`: one client, one informer factory and one set
// of watches for every tab of an origin that connects with the same server and
// identity (SharedWorkers are per script URL and name, and the name carries a
// hash of both, so two identities never share this worker).
//
// Each tab runs its own informers over a transport that sends their list and
// watch requests here. This worker answers them from one informer per scope,
// the way the API server's watch cache does: a list is the current contents,
// a watch streams every change from the point a list or bookmark named. Those
// points are this worker's own sequence numbers, so a resume is exact and
// needs no comparison of the server's resourceVersions, which are opaque. A
// tab that asks for a point this worker cannot serve gets 410 Expired and
// lists again, from here.
import init, { InformerFactory, KubeClient } from './web/index.js';

/** Events kept for resuming watches, by count and by bytes of their lines. */
const RING_EVENTS = 1024;
const RING_BYTES = 8 << 20;
/** Bytes one watch may have queued for a tab that does not read before it is ended with 410. */
const MAX_QUEUED_BYTES = 8 << 20;
/** Chunks in flight to a tab before it acknowledges reading them. */
const CREDIT = 8;
/** Lines are sent in chunks of about this many bytes. */
const CHUNK_BYTES = 64 << 10;
/** A tab that answered no ping for this long is gone (where Web Locks cannot tell). */
const PING_MS = 15_000;
const DEAD_MS = 45_000;
/** How long a token request may wait for one tab before the next is asked. */
const TOKEN_WAIT_MS = 10_000;
/**
 * How long a scope no tab uses is kept: long enough for a tab's list to be
 * followed by its watch, or a watch by the next. Each tab's informers keep
 * their own grace period before they let go.
 */
const LINGER_MS = 1000;
/** Upstream errors that end the tabs' watches: retrying does not help. */
const REFUSED = [401, 403, 404];
/** How often an open watch gets a bookmark naming the current point. */
const BOOKMARK_MS = 60_000;

const encoder = new TextEncoder();
const ready = init();
/** The identity hash this worker serves (its name's suffix, fixed by the first tab). */
let identity;
/** `{ client, factory, base }` once the first tab said hello. */
let host;
/** Connected tabs by port. */
const tabs = new Map();
/** Scopes (one upstream informer each) by key. */
const scopes = new Map();
let tokenSeq = 0;
const tokenWaits = new Map();

const keyOf = (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
const statusBody = (code, reason, message) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

/** A fresh bearer token from one of the connected tabs (the most recently heard from first). */
async function tokenFromTabs() {
  const order = [...tabs.values()].filter((t) => t.auth).sort((a, b) => b.seen - a.seen);
  for (const tab of order) {
    const id = ++tokenSeq;
    const answer = new Promise((resolve) => {
      tokenWaits.set(id, resolve);
      setTimeout(() => resolve(undefined), TOKEN_WAIT_MS);
    });
    tab.port.postMessage({ t: 'token', id });
    const got = await answer;
    tokenWaits.delete(id);
    if (typeof got === 'string') return got;
  }
  throw new Error('no connected tab provided a token');
}

function start(hello) {
  const opts = { ...hello.client };
  if (hello.auth) opts.tokenProvider = tokenFromTabs;
  // Warnings reach every tab, which shows them the way its own client would.
  opts.onWarning = (text) => {
    for (const t of tabs.values()) t.port.postMessage({ t: 'warning', text });
  };
  const client = new KubeClient(opts);
  // Scopes linger themselves (LINGER_MS); a released informer then stops at once.
  const factory = new InformerFactory(client, { releaseGraceMs: 0 });
  factory.start();
  host = { client, factory, base: hello.base };
}

/** A port's messages. */
async function onMessage(port, m) {
  if (!m || typeof m !== 'object') return;
  let tab = tabs.get(port);
  if (m.t === 'hello') {
    await ready;
    if (identity === undefined) identity = m.identity;
    if (m.identity !== identity || (self.name && self.name !== `kubewasm:${m.identity}`)) {
      port.postMessage({ t: 'refused', message: 'this shared cache serves another server or identity' });
      return;
    }
    // A tab saying hello again (after this worker let it go) starts afresh.
    dropTab(port);
    if (!host) start(m);
    else if (m.base !== host.base) {
      port.postMessage({ t: 'refused', message: `this shared cache serves ${host.base}` });
      return;
    }
    tab = { port, auth: m.auth, seen: Date.now(), reqs: new Map() };
    tabs.set(port, tab);
    if (m.lock && globalThis.navigator?.locks) {
      // Granted only once the tab's own lock on this name is gone: the tab closed or crashed.
      navigator.locks.request(m.lock, () => dropTab(port)).catch(() => {});
    }
    port.postMessage({ t: 'ready' });
    return;
  }
  if (!tab) {
    if (m.t === 'req') port.postMessage({ t: 'fail', id: m.id, message: 'not connected' });
    return;
  }
  tab.seen = Date.now();
  switch (m.t) {
    case 'req':
      serve(tab, m);
      break;
    case 'ack':
      tab.reqs.get(m.id)?.ack();
      break;
    case 'abort':
      tab.reqs.get(m.id)?.close();
      break;
    case 'token':
      tokenWaits.get(m.id)?.(typeof m.token === 'string' ? m.token : undefined);
      break;
    case 'bye':
      dropTab(port);
      break;
    default:
      break;
  }
}

/** Let a tab go; a tab that is still there (it stopped answering for a while) is told, and says hello again. */
function dropTab(port) {
  const tab = tabs.get(port);
  if (!tab) return;
  tabs.delete(port);
  for (const r of [...tab.reqs.values()]) {
    port.postMessage({ t: 'fail', id: r.id, message: 'not connected' });
    r.close();
  }
}

/** A GET of a collection under the client's server: the scope it names, or `undefined`. */
function scopeOf(url, accept) {
  if (!url.href.startsWith(host.base)) return undefined;
  const path = url.pathname.slice(new URL(host.base).pathname.replace(/\/$/, '').length);
  const seg = path.split('/').filter(Boolean).map(decodeURIComponent);
  let group = '';
  let version;
  let rest;
  if (seg[0] === 'api' && seg.length >= 2) [version, rest] = [seg[1], seg.slice(2)];
  else if (seg[0] === 'apis' && seg.length >= 3) [group, version, rest] = [seg[1], seg[2], seg.slice(3)];
  else return undefined;
  let namespace;
  let resource;
  if (rest.length === 1) resource = rest[0];
  else if (rest.length === 3 && rest[0] === 'namespaces') [namespace, resource] = [rest[1], rest[2]];
  else return undefined;
  const q = url.searchParams;
  const opts = { group: group || undefined, version, resource, namespace };
  if (q.get('labelSelector')) opts.labelSelector = q.get('labelSelector');
  if (q.get('fieldSelector')) opts.fieldSelector = q.get('fieldSelector');
  if (/as=PartialObjectMetadata/.test(accept ?? '')) opts.metadataOnly = true;
  // Each tab's informer applies its own transform; the shared copy keeps what the server sent.
  opts.stripManagedFields = false;
  const key = JSON.stringify([group, version, resource, namespace ?? '', opts.labelSelector ?? '', opts.fieldSelector ?? '', !!opts.metadataOnly]);
  return { key, opts };
}

/** One upstream informer and the change log tabs list and watch from. */
class Scope {
  constructor(key, opts) {
    this.key = key;
    this.epoch = Math.random().toString(36).slice(2, 10);
    this.informer = host.factory.informer(opts);
    this.kind = undefined;
    this.objects = new Map();
    this.seq = 0;
    this.ring = [];
    this.ringBytes = 0;
    /** The oldest point a watch can resume from (events after it are all in the ring). */
    this.floor = Infinity;
    this.watches = new Set();
    this.users = 0;
    this.linger = undefined;
    this.synced = false;
    /** Whether the upstream informer is watching (else bookmarks wait). */
    this.live = true;
    this.reg = this.informer.addEventHandler({
      add: (o) => this.record('ADDED', o),
      update: (_, o) => this.record('MODIFIED', o),
      delete: (o) => this.record('DELETED', o),
    });
    this.ready = this.reg.waitForSync().then((ok) => {
      this.synced = ok;
      this.floor = this.seq;
      return ok;
    });
    this.offStatus = this.informer.on('status', (s) => this.upstream(s));
    this.informer.start();
  }

  /** The point after the last recorded event, as a resourceVersion tabs pass back. */
  token() {
    return `kw.${this.epoch}.${this.seq}`;
  }

  /** The sequence number a resourceVersion names, or `undefined` when it is not one of this scope's. */
  pointOf(rv) {
    const m = /^kw\.([a-z0-9]+)\.(\d+)$/.exec(rv ?? '');
    return m && m[1] === this.epoch ? Number(m[2]) : undefined;
  }

  record(type, obj) {
    this.kind ??= obj.kind;
    if (type === 'DELETED') this.objects.delete(keyOf(obj));
    else this.objects.set(keyOf(obj), obj);
    this.seq += 1;
    if (!this.synced) return;
    const line = `{"type":"${type}","object":${JSON.stringify(obj)}}\n`;
    const ev = { seq: this.seq, line };
    this.ring.push(ev);
    this.ringBytes += line.length;
    while (this.ring.length > RING_EVENTS || this.ringBytes > RING_BYTES) {
      const gone = this.ring.shift();
      this.ringBytes -= gone.line.length;
      this.floor = gone.seq;
    }
    for (const w of this.watches) w.push(line);
  }

  /**
   * The server refusing this scope (401, 403, 404) ends the tabs' watches
   * with its error, so their informers report it. Anything else the upstream
   * informer retries (or relists, after 410) by itself: the tabs' watches
   * stay open and carry on when it recovers, without waiting out a backoff of
   * their own; meanwhile no bookmark is sent, so their `lastEventAt` shows
   * how old their data is.
   */
  upstream(s) {
    this.live = s.phase === 'watching';
    if (s.phase !== 'backoff' || !REFUSED.includes(s.lastError?.code)) return;
    const { code, reason, message } = s.lastError;
    for (const w of [...this.watches]) w.fail(code, reason, `upstream: ${message}`);
  }

  /** An error to answer a list with while the upstream informer has not synced and is backing off. */
  failure() {
    const s = this.informer.status;
    if (s.synced || s.phase !== 'backoff' || !s.lastError) return undefined;
    return s.lastError;
  }

  use() {
    this.users += 1;
    clearTimeout(this.linger);
    this.linger = undefined;
  }

  unuse() {
    this.users -= 1;
    if (this.users > 0) return;
    this.linger = setTimeout(() => {
      if (this.users > 0 || scopes.get(this.key) !== this) return;
      scopes.delete(this.key);
      this.offStatus();
      this.reg.remove();
      this.informer.release();
    }, LINGER_MS);
  }

  /**
   * The list body at the current point: the objects are taken now, their
   * text is made as the tab reads.
   */
  listChunks() {
    const objects = [...this.objects.values()];
    const head = `{"kind":${JSON.stringify(`${this.kind ?? ''}List`)},"apiVersion":"v1","metadata":{"resourceVersion":"${this.token()}"},"items":[`;
    return (function* chunks() {
      let buf = head;
      for (let i = 0; i < objects.length; i++) {
        buf += (i ? ',' : '') + JSON.stringify(objects[i]);
        if (buf.length >= CHUNK_BYTES) {
          yield buf;
          buf = '';
        }
      }
      yield `${buf}]}`;
    })();
  }

  /** Every object as an ADDED event at the current point, then (for a watch-list) the bookmark ending them. */
  initialEvents(endBookmark) {
    const objects = [...this.objects.values()];
    const end = endBookmark ? this.bookmark({ 'k8s.io/initial-events-end': 'true' }) : '';
    return (function* events() {
      let buf = '';
      for (const o of objects) {
        buf += `{"type":"ADDED","object":${JSON.stringify(o)}}\n`;
        if (buf.length >= CHUNK_BYTES) {
          yield buf;
          buf = '';
        }
      }
      if (buf || end) yield buf + end;
    })();
  }

  /** A BOOKMARK naming the current point. */
  bookmark(annotations) {
    const metadata = annotations ? { resourceVersion: this.token(), annotations } : { resourceVersion: this.token() };
    return `{"type":"BOOKMARK","object":{"kind":${JSON.stringify(this.kind ?? '')},"apiVersion":"v1","metadata":${JSON.stringify(metadata)}}}\n`;
  }
}

/** One request of a tab: its response head, then body chunks paced by the tab's acknowledgements. */
class Reply {
  constructor(tab, id, scope) {
    this.tab = tab;
    this.id = id;
    this.scope = scope;
    this.credit = CREDIT;
    /** Chunks ready to go, and text waiting for this turn's flush. */
    this.queue = [];
    this.pending = '';
    this.queued = 0;
    /** A generator of further chunks, pulled only as the tab reads (a list). */
    this.source = undefined;
    /** Appended to every flushed chunk of a watch (a bookmark naming the point after it). */
    this.marker = undefined;
    this.poke = false;
    this.flushing = false;
    this.ending = false;
    this.closed = false;
    this.timers = [];
    tab.reqs.set(id, this);
    scope?.use();
  }

  head(status, headers = { 'content-type': 'application/json' }) {
    this.tab.port.postMessage({ t: 'head', id: this.id, status, headers });
  }

  /** Queue text for this turn's chunk; a watch whose tab stops reading is ended with 410 past a bound. */
  push(text) {
    if (this.closed || this.ending) return;
    this.pending += text;
    this.queued += text.length;
    if (this.queued > MAX_QUEUED_BYTES) {
      this.fail(410, 'Expired', 'the tab fell too far behind this watch');
      return;
    }
    if (!this.flushing) {
      this.flushing = true;
      // One flush per turn of the event loop: the events of one burst travel together.
      setTimeout(() => this.flush(), 0);
    }
  }

  flush() {
    this.flushing = false;
    if (this.closed || (!this.pending && !this.poke)) return;
    const text = this.pending + (this.marker ? this.marker() : '');
    this.pending = '';
    this.poke = false;
    // Cut at line ends: a cut inside a line could split a UTF-16 surrogate pair.
    let rest = text;
    while (rest.length > CHUNK_BYTES) {
      const cut = rest.lastIndexOf('\n', CHUNK_BYTES);
      const at = cut > 0 ? cut : rest.indexOf('\n', CHUNK_BYTES);
      if (at < 0 || at === rest.length - 1) break;
      this.queue.push(rest.slice(0, at + 1));
      rest = rest.slice(at + 1);
    }
    this.queue.push(rest);
    this.send();
  }

  send() {
    while (this.credit > 0 && !this.closed) {
      // What the source holds comes before anything recorded after it was taken.
      let text;
      if (this.source) {
        const next = this.source.next();
        if (next.done) this.source = undefined;
        else text = next.value;
      }
      if (text === undefined && !this.source) {
        text = this.queue.shift();
        if (text !== undefined) this.queued -= text.length;
      }
      if (text === undefined) break;
      const bytes = encoder.encode(text);
      this.credit -= 1;
      this.tab.port.postMessage({ t: 'chunk', id: this.id, data: bytes.buffer }, [bytes.buffer]);
    }
    if (this.ending && !this.queue.length && !this.pending && !this.source) this.finish();
  }

  ack() {
    this.credit += 1;
    this.send();
  }

  /** End once everything queued has gone out. */
  end() {
    this.ending = true;
    this.send();
  }

  /** End with an error event (the API server's way to fail a watch that already answered 200). */
  fail(code, reason, message) {
    if (this.closed) return;
    this.pending = '';
    this.source = undefined;
    this.queue = [`{"type":"ERROR","object":${statusBody(code, reason, message)}}\n`];
    this.queued = 0;
    this.end();
  }

  finish() {
    if (this.closed) return;
    this.tab.port.postMessage({ t: 'end', id: this.id });
    this.close();
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    // Timeouts and intervals share one id space: clearTimeout clears either.
    for (const t of this.timers) clearTimeout(t);
    this.tab.reqs.delete(this.id);
    this.scope?.watches.delete(this);
    this.scope?.unuse();
  }
}

async function serve(tab, m) {
  let url;
  try {
    url = new URL(m.url);
  } catch {
    url = undefined;
  }
  const where = m.method === 'GET' && url ? scopeOf(url, m.headers?.accept ?? m.headers?.Accept) : undefined;
  if (!where) {
    const r = new Reply(tab, m.id);
    r.head(404);
    r.push(statusBody(404, 'NotFound', `the shared cache serves informers' lists and watches, not ${m.method} ${url?.pathname ?? m.url}`));
    r.end();
    return;
  }
  let scope = scopes.get(where.key);
  if (!scope) {
    try {
      scope = new Scope(where.key, where.opts);
    } catch (e) {
      // The client refused the scope (a KubeError carries code and reason).
      const r = new Reply(tab, m.id);
      const code = e?.code >= 400 ? e.code : 400;
      r.head(code);
      r.push(statusBody(code, e?.reason ?? 'BadRequest', String(e?.message ?? e)));
      r.end();
      return;
    }
    scopes.set(where.key, scope);
  }
  const r = new Reply(tab, m.id, scope);
  const q = url.searchParams;
  const watch = q.get('watch') === 'true' || q.get('watch') === '1';
  // Wait for the upstream informer's first sync, or answer with its error.
  for (;;) {
    if (scope.synced || r.closed) break;
    const err = scope.failure();
    if (err) {
      r.head(err.code || 500);
      r.push(statusBody(err.code || 500, err.reason || 'InternalError', `upstream: ${err.message}`));
      r.end();
      return;
    }
    await Promise.race([scope.ready, new Promise((res) => setTimeout(res, 250))]);
  }
  if (r.closed) return;
  if (!watch) {
    r.head(200);
    r.source = scope.listChunks();
    r.end();
    return;
  }
  const rv = q.get('resourceVersion') ?? '';
  r.head(200);
  if (q.get('sendInitialEvents') === 'true') r.source = scope.initialEvents(true);
  else if (rv === '' || rv === '0') r.source = scope.initialEvents(false);
  else {
    const at = scope.pointOf(rv);
    if (at === undefined || at < scope.floor || at > scope.seq) {
      r.fail(410, 'Expired', `too old resource version: ${rv}`);
      return;
    }
    for (const ev of scope.ring) if (ev.seq > at) r.push(ev.line);
  }
  scope.watches.add(r);
  // Each flush ends with a bookmark naming the point after it, so a tab resumes exactly where it stopped.
  r.marker = () => scope.bookmark();
  const idle = setInterval(() => {
    if (!scope.live) return;
    r.poke = true;
    r.push('');
  }, BOOKMARK_MS);
  r.timers.push(idle);
  r.send();
  const timeout = Number(q.get('timeoutSeconds'));
  if (timeout > 0) r.timers.push(setTimeout(() => r.end(), timeout * 1000));
}

/** Tabs that stopped answering pings are gone. */
setInterval(() => {
  const now = Date.now();
  for (const [port, tab] of tabs) {
    if (now - tab.seen > DEAD_MS) dropTab(port);
    else port.postMessage({ t: 'ping' });
  }
}, PING_MS);

function listen(port) {
  port.onmessage = (e) => {
    onMessage(port, e.data).catch((err) => console.error('kubewasm shared worker:', err));
  };
  port.start?.();
}

if (typeof SharedWorkerGlobalScope === 'function' && self instanceof SharedWorkerGlobalScope) {
  self.onconnect = (e) => listen(e.ports[0]);
} else {
  // A dedicated Worker: the page hands over one port.
  self.onmessage = (e) => {
    if (e.data?.t === 'connect' && e.ports[0]) listen(e.ports[0]);
  };
}
