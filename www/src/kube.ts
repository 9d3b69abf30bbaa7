// The one place the dashboard touches the kubewasm package. Everything else
// imports from here, so a change in the package's API is absorbed in this file.
import init, { KubeError, WorkQueue } from 'kubewasm';
import type { Diff, Informer, InformerStatus, KubeObject, ListFilter } from 'kubewasm';
import { connectShared, type SharedHost } from 'kubewasm/shared';

export type { Diff, InformerStatus, KubeObject, SharedHost };
export { WorkQueue };

/** Where the API server is and how to authenticate (all optional: same origin, no token). */
export interface ConnectOptions {
  /** Base URL of the API server; '' means the page's own origin (the sim, `kubectl proxy --www`). */
  server: string;
  token?: string;
  /** Transparent REST retries of a failed GET (default 1). */
  maxRetries?: number;
}

/** One resource the server offers, from discovery. */
export interface ResourceInfo {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

/** A live list with the `useSyncExternalStore` contract: same array until something changed. */
export interface LiveView<T> {
  getSnapshot(): readonly T[];
  subscribe(listener: (diff: Diff) => void): () => void;
}

/** A malformed selector, with the character offset the server-side parser reports. */
export interface SelectorProblem {
  message: string;
  position?: number;
}

/** A started informer for one resource, plus its lister, seen through a typed lens. */
export interface Cache<T extends KubeObject = KubeObject> extends LiveView<T> {
  readonly info: ResourceInfo;
  readonly label: string;
  status(): InformerStatus;
  /** A filtered live view; throws `SelectorError` for a malformed selector. */
  view(filter: { namespace?: string; labelSelector?: string }): LiveView<T>;
  get(key: string): T | undefined;
  byIndex(index: string, value: string): T[];
  onAdd(h: (obj: T) => void): () => void;
  onUpdate(h: (oldObj: T, newObj: T) => void): () => void;
  onDelete(h: (obj: T) => void): () => void;
  onStatus(h: (s: InformerStatus) => void): () => void;
  cachedBytes(): number;
  /**
   * Let go of this use of the cache (each `connection.cache()` call is one).
   * The last one releases the informer, which stops watching after the
   * factory's grace period. Returns whether that was the last use.
   */
  release(): boolean;
}

/** Thrown by `Cache.view` for a selector the parser rejects. */
export class SelectorError extends Error {
  constructor(readonly problem: SelectorProblem) {
    super(problem.message);
  }
}

export interface Connection {
  readonly server: string;
  /** Where the informers' watches live: one SharedWorker for every tab, or this page. */
  readonly host: SharedHost;
  discover(): Promise<ResourceInfo[]>;
  cache<T extends KubeObject = KubeObject>(
    info: ResourceInfo,
    opts?: { indexers?: Record<string, (obj: T) => string[]> },
  ): Cache<T>;
  /** Delete an object through the API (used by the detail pane's button). */
  remove(info: ResourceInfo, namespace: string | undefined, name: string): Promise<void>;
  /** Bytes of the wasm linear memory (for the memory readout and the benchmark). */
  wasmBytes(): number;
}

/** The cache key of an object: `namespace/name`, or `name` when cluster-scoped. */
export const keyOf = (o: KubeObject): string =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;

export const resourceLabel = (r: ResourceInfo): string => (r.group ? `${r.resource}.${r.group}` : r.resource);

function problemOf(e: unknown): SelectorProblem | null {
  if (e instanceof KubeError && (e.reason === 'Invalid' || e.reason === 'BadRequest')) {
    return { message: e.message, position: e.position };
  }
  return null;
}

/** Load the wasm module and connect. */
export async function connect(opts: ConnectOptions): Promise<Connection> {
  const wasm = await init();
  // The client resolves '' against nothing; give it the page's origin explicitly.
  const server = (opts.server || globalThis.location.origin).replace(/\/+$/, '');
  // One transparent retry at most: past that, a failed watch or list surfaces
  // in the informer's own backoff, which the status shows ("reconnecting in
  // N s") instead of the REST layer retrying silently for many seconds.
  // Every tab of the dashboard shares one set of watches through a SharedWorker
  // (the page's own client does the rest: discovery, deletes). A resource the
  // user left stops watching 10 s later (sooner than the 30 s default: clicking
  // through kinds must not pile up watches on an HTTP/1.1 origin). Each kind's
  // cache is kept in IndexedDB (per server and identity), so a reload shows the
  // last rows at once while the watch catches up.
  const { client, factory, host } = await connectShared({
    client: { server, token: opts.token, maxRetries: opts.maxRetries ?? 1 },
    factory: { releaseGraceMs: 10_000, persist: { name: 'kubewasm-dashboard' } },
  });
  const caches = new Map<string, Cache<KubeObject>>();
  const uses = new Map<string, number>();

  function wrap<T extends KubeObject>(id: string, info: ResourceInfo, inf: Informer<T>): Cache<T> {
    const lister = inf.lister();
    return {
      release() {
        const n = (uses.get(id) ?? 1) - 1;
        if (n > 0) {
          uses.set(id, n);
          return false;
        }
        uses.delete(id);
        caches.delete(id);
        lister.free();
        inf.release();
        return true;
      },
      info,
      label: resourceLabel(info),
      status: () => inf.status,
      getSnapshot: () => inf.getSnapshot(),
      subscribe: (l) => inf.subscribe(l),
      view(filter) {
        const f: ListFilter = {};
        if (filter.namespace) f.namespace = filter.namespace;
        if (filter.labelSelector) f.labelSelector = filter.labelSelector;
        if (!f.namespace && !f.labelSelector) return { getSnapshot: () => inf.getSnapshot(), subscribe: (l) => inf.subscribe(l) };
        try {
          const v = inf.scoped(f);
          return { getSnapshot: () => v.getSnapshot(), subscribe: (l) => v.subscribe(l) };
        } catch (e) {
          const p = problemOf(e);
          if (p) throw new SelectorError(p);
          throw e;
        }
      },
      get(key) {
        const i = key.indexOf('/');
        return i < 0 ? lister.get(key) : lister.get(key.slice(i + 1), key.slice(0, i));
      },
      byIndex: (index, value) => lister.byIndex(index, value),
      onAdd: (h) => inf.on('add', h),
      onUpdate: (h) => inf.on('update', h),
      onDelete: (h) => inf.on('delete', h),
      onStatus: (h) => inf.on('status', h),
      cachedBytes: () => inf.cachedBytes,
    };
  }

  return {
    server,
    host,
    async discover() {
      // The package's discovery (aggregated, or the legacy documents on older
      // servers): keep each group's preferred version of what can be listed and watched.
      return (await client.discover())
        .filter((r) => r.preferred && r.verbs.includes('list') && r.verbs.includes('watch'))
        .map(({ group, version, resource, kind, namespaced, verbs }) => ({ group, version, resource, kind, namespaced, verbs }));
    },
    cache<T extends KubeObject>(info: ResourceInfo, opts?: { indexers?: Record<string, (obj: T) => string[]> }): Cache<T> {
      const id = `${info.group}/${info.version}/${info.resource}`;
      const have = caches.get(id);
      uses.set(id, (uses.get(id) ?? 0) + 1);
      if (have) return have as unknown as Cache<T>;
      const inf = factory.informer<T>({
        group: info.group || undefined,
        version: info.version,
        resource: info.resource,
        indexers: opts?.indexers,
      });
      inf.start();
      const c = wrap<T>(id, info, inf);
      caches.set(id, c as unknown as Cache<KubeObject>);
      return c;
    },
    async remove(info, namespace, name) {
      await client.resource({ group: info.group || undefined, version: info.version, resource: info.resource, namespaced: info.namespaced }).delete(name, namespace);
    },
    wasmBytes: () => wasm.memory.buffer.byteLength,
  };
}
