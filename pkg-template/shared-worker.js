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
import { sha256Hex } from './sha256.js';

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
/** How long a tab whose request ended here is waited for (beyond an informer's longest backoff). */
const RETURN_MS = 90_000;
/** Upstream errors that end the tabs' watches: retrying does not help. */
const REFUSED = [401, 403, 404];

/**
 * Whether an upstream error is an outage the tabs are told of once: not a
 * refusal (always answered) and not a 410 (the upstream lists again next).
 */
const isOutage = (err) => !REFUSED.includes(err?.code) && err?.code !== 410;
/**
 * Whether the scope's upstream error is a server out of reach, met since it
 * last watched (the status keeps its last error after a recovery): every
 * request of a tab then fails as a page's would, so the tab backs off, shows
 * `Network` and tells its `error` listeners, instead of waiting in `listing`.
 * An object the cache skipped also leaves an error without an HTTP status,
 * with its key: not an outage.
 */
const unreachable = (err, scope) => err?.reason === 'Network' && err.key == null && err.at >= scope.liveAt;
/** The tab's error text for an unreachable upstream (its own says `network error` already). */
const unreachableMessage = (err) => upstreamMessage(0, 'Network', String(err.message ?? '').replace(/^network error: /, ''));
/**
 * How often an open watch with nothing waiting to go gets a blank line: it
 * keeps the tab's watch within its idle limit and is not an event, so a
 * watch of this worker's that went silent does not read as fresh data in
 * the tabs. A `keepAliveMs` parameter in this script's URL sets it (tests).
 */
const KEEPALIVE_MS = Number(new URL(import.meta.url).searchParams.get('keepAliveMs')) || 30_000;
/**
 * How often each scope looks whether its upstream informer heard from the
 * server without an event to pass on (a bookmark): its tabs' watches then
 * get a bookmark, so their `lastEventAt` follows the worker's.
 */
const RELAY_MS = Math.min(1000, KEEPALIVE_MS);

const encoder = new TextEncoder();
/**
 * A lock this worker holds for as long as it lives, named in every `ready`:
 * a tab's request for it is granted only when the worker is gone (crashed or
 * ended), which is how tabs learn of it at once.
 */
const lifeLock = `kubewasm-worker:${crypto.randomUUID?.() ?? Math.random().toString(36).slice(2)}`;
const alive = globalThis.navigator?.locks
  ? new Promise((held) => {
    navigator.locks.request(lifeLock, () => {
      held(lifeLock);
      return new Promise(() => {});
    }).catch(() => held(undefined));
  })
  : Promise.resolve(undefined);
const ready = Promise.all([init(), alive]);
/** The identity hash this worker serves (its name's suffix, fixed by the first tab). */
let identity;
/** `{ client, factory, base }` once the first tab said hello. */
let host;
/** Connected tabs by port. */
const tabs = new Map();
/**
 * What a tab's error says of the worker's: `upstream: ` and the server's
 * message. The worker's status message starts with the code and reason the
 * tab's own error states again, so that part is left out.
 */
function upstreamMessage(code, reason, message) {
  const said = `API error: ${reason} (${code}): `;
  return `upstream: ${message.startsWith(said) ? message.slice(said.length) : message}`;
}

/** Scopes (one upstream informer each) by key. */
const scopes = new Map();
let tokenSeq = 0;
const tokenWaits = new Map();

const keyOf = (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
const statusBody = (code, reason, message) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

/**
 * Digests (never the tokens) of the tokens the server answered 401 to
 * lately (the last handed out when an upstream request met a 401): a tab
 * still answering with one, its provider not yet rotated, is used only when
 * no other tab has a token.
 */
const refusedTokens = new Set();
let lastDigest;

function tokenRefused() {
  if (lastDigest === undefined) return;
  refusedTokens.delete(lastDigest);
  refusedTokens.add(lastDigest);
  if (refusedTokens.size > 16) refusedTokens.delete(refusedTokens.values().next().value);
}

/** A fresh bearer token from one of the connected tabs (the most recently heard from first). */
async function tokenFromTabs() {
  const order = [...tabs.values()].filter((t) => t.auth).sort((a, b) => b.seen - a.seen);
  let refused;
  for (const tab of order) {
    const id = ++tokenSeq;
    const answer = new Promise((resolve) => {
      tokenWaits.set(id, resolve);
      setTimeout(() => resolve(undefined), TOKEN_WAIT_MS);
    });
    tab.port.postMessage({ t: 'token', id });
    const got = await answer;
    tokenWaits.delete(id);
    if (typeof got !== 'string') continue;
    const digest = await sha256Hex(got);
    if (!refusedTokens.has(digest)) {
      lastDigest = digest;
      return got;
    }
    refused ??= { got, digest };
  }
  if (refused !== undefined) {
    lastDigest = refused.digest;
    return refused.got;
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
  // Scopes linger themselves (LINGER_MS); a released informer then stops at
  // once, and its cache goes a minute later (tabs switching between many
  // scopes would otherwise grow the worker for as long as any tab is open).
  const factory = new InformerFactory(client, { releaseGraceMs: 0, releasedCacheMs: 60_000 });
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
    port.postMessage({ t: 'ready', life: await alive });
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
  for (const scope of scopes.values()) {
    scope.told.delete(tab);
    scope.returned(tab);
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
    /** The upstream informer's phase and relists, from its status events. */
    this.phase = 'idle';
    this.relists = 0;
    this.reconnects = 0;
    /** When the last upstream error seen happened, and the one that ended a watch still reopening. */
    this.errorAt = 0;
    this.refusedAt = 0;
    /** Whether the upstream informer backed off since it last watched. */
    this.failed = false;
    this.broken = undefined;
    /** A break to tell the tabs once the watch opened after it has heard from the server. */
    this.pendingBreak = undefined;
    /** The upstream's last contact with the server the tabs were given, and when an event last went to them. */
    this.relayed = 0;
    this.recordedAt = 0;
    this.relay = setInterval(() => this.relayBookmark(), RELAY_MS);
    /** Whether the upstream informer is watching (else requests and bookmarks wait). */
    this.live = true;
    /** When it last started watching (wall-clock ms; errors before it are over). */
    this.liveAt = 0;
    /** Requests waiting for the upstream informer to watch again. */
    this.waiting = [];
    /**
     * Tabs already given the upstream error since it last watched: their
     * next requests wait instead, so they carry on the moment it recovers.
     */
    this.told = new Set();
    /** Tabs expected back, with the timer that gives up on each. */
    this.expected = new Map();
    this.reg = this.informer.addEventHandler({
      add: (o) => this.record('ADDED', o),
      update: (_, o) => this.record('MODIFIED', o),
      delete: (o) => this.record('DELETED', o),
    });
    /** Whether the first sync is over: `synced`, or the informer stopped first. */
    this.settled = false;
    this.ready = this.reg.waitForSync().then((ok) => {
      this.synced = ok;
      this.settled = true;
      this.floor = this.seq;
      return ok;
    });
    this.offStatus = this.informer.on('status', (s) => this.upstream(s));
    this.informer.start();
  }

  /** A bookmark to every watch when the upstream heard from the server and no event said so. */
  relayBookmark() {
    if (!this.live || !this.synced || !this.watches.size) return;
    const at = this.informer.status.lastEventAt ?? 0;
    const pending = this.pendingBreak;
    if (pending && at > pending.at) {
      this.pendingBreak = undefined;
      this.breakWatches(pending.err);
      return;
    }
    if (at <= this.relayed) return;
    this.relayed = at;
    if (this.recordedAt >= at) return;
    for (const w of this.watches) {
      w.poke = true;
      w.push('');
    }
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
    this.recordedAt = Date.now();
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
   * What the upstream informer goes through, the tabs see in their own
   * informers' status, without waiting out backoffs of their own:
   * - the server refusing the scope (401, 403, 404) ends their watches with
   *   its error;
   * - a relist (after 410) ends their watches with 410, and their lists are
   *   answered once the upstream one is done: they show "listing" meanwhile
   *   and get one diff of what changed;
   * - a server out of reach drops their watches, and every request of theirs
   *   fails as a page's would while it lasts (they back off on their own);
   * - a failing watch ends their watches with its error (they back off and
   *   show the upstream error); the next request of each tab is answered
   *   with the error once per outage (its informer tells its `error`
   *   listeners and backs off until the worker's next try), later ones wait
   *   until upstream watches again, and are answered the moment it does;
   * - a watch that broke and was opened again at once (a connection that
   *   died silently and met its idle limit, or dropped mid-stream) breaks
   *   theirs with its error: they reconnect and show it, as a page's
   *   informer does for its own dropped watch (no `error` event).
   * Meanwhile no bookmark is sent, so their `lastEventAt` shows how old
   * their data is.
   */
  upstream(s) {
    const was = this.phase;
    const relisted = s.relists > this.relists;
    const reconnected = s.reconnects > this.reconnects;
    this.phase = s.phase;
    this.relists = s.relists;
    this.reconnects = s.reconnects;
    this.live = s.phase === 'watching';
    if (this.live) {
      // An error while watching ended the watch; the informer opening the
      // next one at once (no backoff) reads `watching` again with one more
      // reconnect: only then is it a break to tell (a failing reopen backs
      // off, and is told as any failure is).
      const err = s.lastError;
      const fresh = err && err.key == null && err.at > this.errorAt;
      if (fresh) this.errorAt = err.at;
      if (fresh && was === 'watching') this.broken = err;
      else if (this.broken && was === 'watching' && reconnected) {
        // Told once the new watch has heard from the server: one that meets
        // a 410 instead relists, and the tabs list again with it.
        this.pendingBreak = { err: this.broken, at: Date.now() };
        this.broken = undefined;
      }
      this.liveAt = Date.now();
      this.told.clear();
      for (const wake of this.waiting.splice(0)) wake();
      // Tabs an error sent into their own backoff try again now, rather than
      // when their timers end (up to a minute after the worker recovered).
      if (this.failed) {
        this.failed = false;
        for (const t of tabs.values()) t.port.postMessage({ t: 'recovered' });
      }
      return;
    }
    // A failure since it last watched (not the pause after a watch the
    // server ended early, which carries no new error).
    if (s.phase === 'backoff' && s.lastError && s.lastError.at > this.liveAt) this.failed = true;
    this.broken = undefined;
    this.pendingBreak = undefined;
    if (s.phase === 'backoff' && s.lastError?.code === 401 && s.lastError.at > this.refusedAt) {
      this.refusedAt = s.lastError.at;
      tokenRefused();
    }
    if (!this.synced) return;
    const err = s.lastError;
    // Waiting requests look again: a failure is theirs to tell (see `serve`).
    if (s.phase === 'backoff' && was !== 'backoff') for (const wake of this.waiting.splice(0)) wake();
    if (s.phase === 'backoff' && REFUSED.includes(err?.code)) this.failWatches(err.code, err.reason, err.message);
    else if (s.phase === 'listing' && relisted) this.failWatches(410, 'Expired', 'the shared cache is listing again');
    // A server out of reach drops the tabs' watches as it dropped the
    // worker's; a failing one tells its tabs once.
    else if (s.phase === 'backoff' && was === 'watching' && unreachable(err, this)) this.dropWatches(unreachableMessage(err));
    else if (s.phase === 'backoff' && was === 'watching') this.failWatches(err?.code || 503, (err?.code && err.reason) || 'ServiceUnavailable', err?.message ?? 'the watch failed');
  }

  failWatches(code, reason, message) {
    for (const w of [...this.watches]) w.fail(code, reason, upstreamMessage(code, reason, message));
  }

  /** The upstream watch broke (and watches again): each tab's watch breaks with its error, and reconnects. */
  breakWatches(err) {
    this.dropWatches(err.reason === 'Network' ? unreachableMessage(err) : upstreamMessage(err.code, err.reason, String(err.message ?? '')));
  }

  /** The server cannot be reached: every watch ends as its connection would. */
  dropWatches(message) {
    for (const w of [...this.watches]) w.drop(message);
  }

  /** Resolves once the upstream informer watches again (or after `ms`, to look again). */
  untilLive(ms) {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        const i = this.waiting.indexOf(done);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiting.push(done);
    });
  }

  use() {
    this.users += 1;
    clearTimeout(this.linger);
    this.linger = undefined;
  }

  /**
   * Keep the scope for a tab whose request ended here until it comes back
   * (at most RETURN_MS, longer than an informer's longest backoff): without
   * it, the upstream informer could be let go during every gap between a
   * tab's requests, and never get as far as a relist.
   */
  expect(tab) {
    if (this.expected.has(tab)) return;
    this.use();
    this.expected.set(tab, setTimeout(() => this.returned(tab), RETURN_MS));
  }

  /** The tab came back (or is gone): its expectation no longer holds the scope. */
  returned(tab) {
    const timer = this.expected.get(tab);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.expected.delete(tab);
    this.unuse();
  }

  unuse() {
    this.users -= 1;
    if (this.users > 0) return;
    this.linger = setTimeout(() => {
      if (this.users > 0 || scopes.get(this.key) !== this) return;
      scopes.delete(this.key);
      clearInterval(this.relay);
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

  /** Answer with an API `Status` (the request was not served); `retryAfter`: seconds, as a server asking to wait says. */
  error(code, reason, message, retryAfter) {
    this.head(code, retryAfter ? { 'content-type': 'application/json', 'retry-after': String(retryAfter) } : undefined);
    this.push(statusBody(code, reason, message));
    this.end();
  }

  /** A blank line (skipped by the tab's reader, not an event) for a watch with nothing waiting to go. */
  keepAlive() {
    if (this.closed || this.ending || this.pending || this.flushing || this.queue.length) return;
    this.queue.push('\n');
    this.queued += 1;
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

  /**
   * End as a connection the server dropped: the tab's request fails with a
   * network error, as the worker's own did (an unreachable server reads the
   * same in a tab as in a page).
   */
  drop(message) {
    if (this.closed) return;
    this.tab.port.postMessage({ t: 'fail', id: this.id, message });
    this.close(true);
  }

  finish() {
    if (this.closed) return;
    this.tab.port.postMessage({ t: 'end', id: this.id });
    // Ended here (a list answered, a watch timed out or failed): the tab's
    // informer comes back with its next request, maybe after a backoff.
    this.close(true);
  }

  /** `returning`: the tab is expected back for this scope (else it let go). */
  close(returning = false) {
    if (this.closed) return;
    this.closed = true;
    // Timeouts and intervals share one id space: clearTimeout clears either.
    for (const t of this.timers) clearTimeout(t);
    this.tab.reqs.delete(this.id);
    this.scope?.watches.delete(this);
    if (returning && tabs.get(this.tab.port) === this.tab) this.scope?.expect(this.tab);
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
    new Reply(tab, m.id).error(404, 'NotFound', `the shared cache serves informers' lists and watches, not ${m.method} ${url?.pathname ?? m.url}`);
    return;
  }
  let scope = scopes.get(where.key);
  if (!scope) {
    try {
      scope = new Scope(where.key, where.opts);
    } catch (e) {
      // The client refused the scope (a KubeError carries code and reason).
      new Reply(tab, m.id).error(e?.code >= 400 ? e.code : 400, e?.reason ?? 'BadRequest', String(e?.message ?? e));
      return;
    }
    scopes.set(where.key, scope);
  }
  const r = new Reply(tab, m.id, scope);
  scope.returned(tab);
  const q = url.searchParams;
  const watch = q.get('watch') === 'true' || q.get('watch') === '1';
  // Answer once the upstream informer has synced and is watching: before
  // that, nothing (the tab's informer keeps what it has and shows what it
  // waits for), or the server's error while it backs off (a server out of
  // reach every time, as a page meets it; otherwise before the first sync
  // any error, later a refusal, which retrying does not cure, and any other
  // error once per outage for each tab).
  for (;;) {
    if (r.closed) return;
    if (scope.synced && scope.live) break;
    if (scope.settled && !scope.synced) {
      r.error(503, 'ServiceUnavailable', 'the shared cache stopped serving this scope');
      return;
    }
    const { phase, lastError: err } = scope.informer.status;
    // Once synced, a tab is told of a failing upstream once per outage (its
    // status shows the error), then its requests wait: the relist after a
    // compaction has no watch of the tab's to end, and an informer opened
    // during an outage would otherwise show only that it is listing.
    if (phase === 'backoff' && unreachable(err, scope)) {
      r.drop(unreachableMessage(err));
      return;
    }
    const tell = scope.synced && isOutage(err) && !scope.told.has(tab);
    if (phase === 'backoff' && err && (!scope.synced || tell || REFUSED.includes(err.code))) {
      if (tell) scope.told.add(tab);
      // A list answered so asks the tab to wait until the worker's next try
      // (its informer shows `backoff` until then); a watch is not, as its
      // informer would then only note the error, not tell its listeners.
      const next = scope.informer.status.nextRetryAt;
      const retryAfter = !watch && !REFUSED.includes(err.code) && next > Date.now() ? Math.ceil((next - Date.now()) / 1000) : undefined;
      // Another failure without a response (a timeout, say) reaches the tab
      // as a 503, with the upstream reason in the text.
      r.error(err.code || 503, (err.code && err.reason) || 'ServiceUnavailable', upstreamMessage(err.code, err.reason, err.message), retryAfter);
      return;
    }
    // (`ready` only before the sync: once resolved it would not wait at all.)
    await (scope.synced ? scope.untilLive(1000) : Promise.race([scope.ready, scope.untilLive(250)]));
  }
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
  const idle = setInterval(() => r.keepAlive(), KEEPALIVE_MS);
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
