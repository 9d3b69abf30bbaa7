// kubewasm in workerd (the Cloudflare Workers runtime): a Durable Object keeps
// informers alive and answers read queries from their listers, so requests
// never reach the API server. The stateless entry point forwards every
// request to the one Durable Object instance.
import { initSync, KubeClient, InformerFactory, KubeError } from './pkg/web/index.js';
import wasmModule from './pkg/web/kubewasm_bg.wasm';

const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

export class ClusterCache {
  constructor(state, env) {
    this.env = env;
    initSync({ module: wasmModule });
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
    const url = new URL(request.url);
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] === 'status') {
      const all = [this.pods, ...this.extras];
      return json({ synced: all.every((i) => i.hasSynced), pods: this.pods.status, informers: all.length });
    }
    if (parts[0] === 'pods' && parts.length === 1) {
      try {
        const items = this.pods.lister().list({
          namespace: url.searchParams.get('namespace') || undefined,
          labelSelector: url.searchParams.get('labelSelector') || undefined,
        });
        return json({ items: items.map((p) => ({ namespace: p.metadata.namespace, name: p.metadata.name, resourceVersion: p.metadata.resourceVersion })) });
      } catch (e) {
        if (e instanceof KubeError) return json({ error: e.message, position: e.position }, 400);
        throw e;
      }
    }
    if (parts[0] === 'pods' && parts.length === 3) {
      const pod = this.pods.lister().get(parts[1], parts[2]);
      return pod ? json(pod) : json({ error: 'not found' }, 404);
    }
    return json({ error: 'try /status, /pods?namespace=&labelSelector=, /pods/{namespace}/{name}' }, 404);
  }
}

export default {
  fetch(request, env) {
    const stub = env.CACHE.get(env.CACHE.idFromName('cluster'));
    return stub.fetch(request);
  },
};
