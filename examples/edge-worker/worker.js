// kubewasm in workerd (the Cloudflare Workers runtime): a Durable Object keeps
// informers alive and answers read queries from their listers, so requests
// never reach the API server. The stateless entry point authenticates every
// request (a shared secret), allows only reads, bounds what it parses, and
// forwards the rest to the one Durable Object instance.
import { initSync, KubeClient, InformerFactory, KubeError } from './pkg/web/index.js';
import wasmModule from './pkg/web/kubewasm_bg.wasm';

// Longest query string accepted (a label selector is the only long one).
const MAX_QUERY = 1024;
// Longest path accepted: `/pods/{namespace}/{name}` with names of at most 253 characters.
const MAX_PATH = 600;
// Shortest EDGE_SECRET the worker serves with: a guessable secret protects nothing.
const MIN_SECRET = 16;

const json = (body, status = 200, headers = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const encoder = new TextEncoder();
const sha256 = (s) => crypto.subtle.digest('SHA-256', encoder.encode(s));

/**
 * Whether `given` equals `expected`, in time that does not depend on where
 * they differ: both are hashed first, so the compared buffers always have
 * the same length (timingSafeEqual requires it) and the secret's length
 * does not leak either.
 */
async function sameSecret(given, expected) {
  const [a, b] = await Promise.all([sha256(given), sha256(expected)]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/** The bearer credential of a request, or '' (compared all the same, so absence takes no shortcut). */
function bearer(request) {
  const m = /^Bearer +(.+)$/i.exec(request.headers.get('authorization') ?? '');
  return m ? m[1].trim() : '';
}

/**
 * What the worker says about an error: the reason and code only. Messages
 * can carry the API server's address, URLs with queries, or whatever a
 * transform threw; the operator reads them in the worker's logs instead.
 */
function publicError(e) {
  if (!e) return undefined;
  const reason = typeof e.reason === 'string' && /^[A-Za-z]{1,64}$/.test(e.reason) ? e.reason : 'Error';
  return { reason, code: Number.isInteger(e.code) ? e.code : undefined };
}

/** The informer status fields a caller may see (a copy: new fields are not exposed by accident). */
function publicStatus(s) {
  return {
    phase: s.phase,
    synced: s.synced,
    cached: s.cached,
    listed: s.listed,
    relists: s.relists,
    reconnects: s.reconnects,
    eventsApplied: s.eventsApplied,
    lastEventAt: s.lastEventAt,
    lastError: publicError(s.lastError),
  };
}

/**
 * A path's segments, percent-decoded (a client may encode any character of
 * a name); `null` when one is not valid percent-encoded UTF-8.
 */
function segments(pathname) {
  try {
    return pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return null;
  }
}

export class ClusterCache {
  constructor(state, env) {
    this.env = env;
    initSync({ module: wasmModule });
    try {
      this.start(env);
    } catch (e) {
      // A bad API_SERVER or option: every answer says the worker is not
      // configured (the reason goes to the operator's log, not to callers).
      console.error('kubewasm edge worker: cannot start the cache:', e);
      this.factory?.shutdown();
      this.misconfigured = true;
    }
  }

  start(env) {
    // Edge runtimes allow six connections waiting for headers: queue the rest.
    const client = new KubeClient({ server: env.API_SERVER, token: env.API_TOKEN || undefined, maxInFlight: Number(env.MAX_IN_FLIGHT || 6) });
    this.factory = new InformerFactory(client);
    // The 128 MB isolate limit: strip managedFields (the default) and keep
    // only metadata for informers that do not need specs.
    this.pods = this.factory.informer({ version: 'v1', resource: 'pods', stripManagedFields: true });
    const extra = Number(env.EXTRA_INFORMERS || 0);
    this.extras = [];
    const others = ['services', 'configmaps', 'secrets', 'nodes', 'namespaces', 'events', 'endpoints', 'serviceaccounts'];
    for (let i = 0; i < extra; i++) {
      const resource = others[i % others.length];
      this.extras.push(this.factory.informer(i < others.length ? { version: 'v1', resource, metadataOnly: true }
        : { group: 'apps', version: 'v1', resource: i % 2 ? 'deployments' : 'replicasets', metadataOnly: true }));
    }
    this.factory.start();
  }

  async fetch(request) {
    try {
      return this.answer(new URL(request.url));
    } catch (e) {
      console.error('kubewasm edge worker:', e);
      return json({ error: 'internal error' }, 500);
    }
  }

  answer(url) {
    if (this.misconfigured) return json({ error: 'the worker is not configured' }, 503);
    const parts = segments(url.pathname);
    if (!parts) return json({ error: 'the path is not valid percent-encoded UTF-8' }, 400);
    if (parts[0] === 'status' && parts.length === 1) {
      const all = [this.pods, ...this.extras];
      return json({ synced: all.every((i) => i.hasSynced), pods: publicStatus(this.pods.status), informers: all.length });
    }
    if (parts[0] === 'pods' && (parts.length === 1 || parts.length === 3)) {
      // An unsynced cache would answer "no pods" or 404 for pods that exist.
      if (!this.pods.hasSynced) return json({ error: 'the cache is still syncing' }, 503, { 'retry-after': '1' });
      // Answers come from the cache even while it cannot reach the API
      // server: say whether it is live, so a caller can tell stale data.
      const live = { 'x-cache-phase': this.pods.status.phase };
      if (parts.length === 3) {
        const pod = this.pods.lister().get(parts[2], parts[1]);
        return pod ? json(pod, 200, live) : json({ error: 'not found' }, 404, live);
      }
      try {
        const items = this.pods.lister().list({
          namespace: url.searchParams.get('namespace') || undefined,
          labelSelector: url.searchParams.get('labelSelector') || undefined,
        });
        return json({ items: items.map((p) => ({ namespace: p.metadata.namespace, name: p.metadata.name, resourceVersion: p.metadata.resourceVersion })) }, 200, live);
      } catch (e) {
        // A malformed selector: the parser's message is about the caller's own input.
        if (e instanceof KubeError && (e.reason === 'Invalid' || e.reason === 'BadRequest')) {
          return json({ error: String(e.message).slice(0, 300), position: e.position }, 400);
        }
        throw e;
      }
    }
    return json({ error: 'try /status, /pods?namespace=&labelSelector=, /pods/{namespace}/{name}' }, 404);
  }
}

export default {
  async fetch(request, env) {
    try {
      // Trimmed like the credential: a secret stored with a trailing newline
      // (as `echo` writes one) must not lock everyone out.
      const secret = (env.EDGE_SECRET ?? '').trim();
      if (secret.length < MIN_SECRET) {
        // Fail closed: without a real secret, nobody is let in.
        console.error(`kubewasm edge worker: EDGE_SECRET is missing or shorter than ${MIN_SECRET} characters`);
        return json({ error: 'the worker is not configured' }, 503);
      }
      if (!(await sameSecret(bearer(request), secret))) {
        return json({ error: 'unauthorized' }, 401, { 'www-authenticate': 'Bearer realm="kubewasm-edge"' });
      }
      // Reads only: the cache answers queries, it never writes to the cluster.
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return json({ error: 'method not allowed: this worker only reads' }, 405, { allow: 'GET, HEAD' });
      }
      const url = new URL(request.url);
      if (url.search.length > MAX_QUERY) return json({ error: `the query is longer than ${MAX_QUERY} characters` }, 400);
      if (url.pathname.length > MAX_PATH) return json({ error: `the path is longer than ${MAX_PATH} characters` }, 400);
      const stub = env.CACHE.get(env.CACHE.idFromName('cluster'));
      // A fresh request: the caller's headers (the secret among them) stay here.
      return await stub.fetch(new Request(url, { method: request.method }));
    } catch (e) {
      console.error('kubewasm edge worker:', e);
      return json({ error: 'internal error' }, 500);
    }
  },
};
