// React hooks over kubewasm informers (`kubewasm/react`). The hooks only call
// methods of the objects they are given, so they work with the `web`,
// `bundler` and `node` builds alike; React is an optional peer dependency.
//
// Handles, views and listers hold their informer (reference counting), so
// nothing that holds is created during render, where React may discard the
// result (StrictMode renders twice) and never run a cleanup. Render looks up
// a shared entry; only a committed effect counts as a user. An entry whose
// last user left is freed on the next macrotask unless a user came back by
// then: StrictMode's unmount-and-remount keeps the same handle and never
// opens a second watch, and the informer's own grace period covers the rest.
import { useCallback, useEffect, useReducer, useSyncExternalStore } from 'react';

/** How long an entry nobody mounted may live (a render React discarded). */
const UNUSED_MS = 1000;

/**
 * What the hooks render on the server and while hydrating: informers start
 * only in effects, which never run on the server, so the server always
 * renders an empty cache. React requires hydration to render the same, even
 * when the client's cache already holds objects (a warm start, a factory
 * shared with an earlier root); the live snapshot follows right after.
 */
const SERVER_LIST = Object.freeze([]);
const serverList = () => SERVER_LIST;
const serverObject = () => undefined;

/** Shared, reference-counted values by key, freed soon after their last user. */
class Pool {
  /** `stale(value)`: a value that can no longer serve (a mount replaces it with a new one). */
  constructor(create, dispose, stale = () => false) {
    this.entries = new Map();
    this.create = create;
    this.dispose = dispose;
    this.stale = stale;
  }

  /** The entry for `key` (created when missing); does not count as a user. */
  peek(key, arg) {
    let e = this.entries.get(key);
    if (!e) {
      e = { key, value: this.create(arg), users: 0, timer: undefined };
      this.entries.set(key, e);
      this.sweep(e, UNUSED_MS);
    }
    return e;
  }

  /**
   * Count a user (from a committed effect); returns what `release` needs. A
   * mount replaces a stale value (a render does not: an informer the app
   * stopped stays stopped while its components stay mounted).
   */
  retain(key, arg) {
    const old = this.entries.get(key);
    if (old && this.stale(old.value)) {
      // Its users still release `old`, which is no longer the pool's: freed once, here.
      clearTimeout(old.timer);
      this.entries.delete(key);
      this.dispose(old.value);
    }
    const e = this.peek(key, arg);
    e.users += 1;
    clearTimeout(e.timer);
    e.timer = undefined;
    return e;
  }

  release(e) {
    e.users -= 1;
    if (e.users === 0) this.sweep(e, 0);
  }

  sweep(e, ms) {
    clearTimeout(e.timer);
    e.timer = setTimeout(() => {
      e.timer = undefined;
      if (e.users === 0 && this.entries.get(e.key) === e) {
        this.entries.delete(e.key);
        this.dispose(e.value);
      }
    }, ms);
  }
}

/** Per factory: one informer handle per options. */
const handles = new WeakMap();
/**
 * Per factory: the first options seen for each key. An entry freed after its
 * last unmount is made again on the next mount, whose inline `transform` or
 * index functions are new objects: asking the factory with those would be an
 * `OptionsConflict` while the factory still holds the informer.
 */
const firstOptions = new WeakMap();

function optionsFor(factory, key, opts) {
  let byKey = firstOptions.get(factory);
  if (!byKey) {
    byKey = new Map();
    firstOptions.set(factory, byKey);
  }
  let first = byKey.get(key);
  if (first === undefined) {
    first = opts;
    byKey.set(key, first);
  }
  return first;
}
/** Per informer handle: scoped views by filter, and one lister. */
const views = new WeakMap();
const listers = new WeakMap();

/** Options as a key: every member but functions (the factory takes those from the first caller). */
function optionsKey(opts) {
  const plain = {};
  for (const k of Object.keys(opts ?? {}).sort()) {
    const v = opts[k];
    if (typeof v === 'function') continue;
    if (k === 'indexers' && v && typeof v === 'object') {
      plain[k] = Object.keys(v).sort();
      continue;
    }
    plain[k] = v;
  }
  return JSON.stringify(plain);
}

function poolOf(map, owner, create, dispose, stale) {
  let pool = map.get(owner);
  if (!pool) {
    pool = new Pool(create, dispose, stale);
    map.set(owner, pool);
  }
  return pool;
}

const release = (h) => h.release();
const free = (v) => v.free();

// A stopped informer (its factory shut down, or dropped it) never watches
// again: the factory makes a new one for the same options.
const stopped = (h) => h.status.phase === 'stopped';

function handlePool(factory) {
  return poolOf(handles, factory, (opts) => factory.informer(opts), release, stopped);
}

/**
 * The factory's informer for `opts`, started and held while the component is
 * mounted; the same handle for every component asking for the same options.
 * Unmounting releases it: the informer stops watching after the factory's
 * `releaseGraceMs` unless something else holds it. Functions in `opts`
 * (`transform`, `indexers`) are the first caller's for as long as the factory
 * lives: later callers' functions, inline in a component and new at every
 * mount, are not compared (the factory itself would refuse a different one).
 */
export function useInformer(factory, opts) {
  const key = optionsKey(opts);
  const pool = handlePool(factory);
  const first = optionsFor(factory, key, opts);
  const handle = pool.peek(key, first).value;
  const [, renew] = useReducer((n) => n + 1, 0);
  useEffect(() => {
    const e = pool.retain(key, first);
    e.value.start();
    // The handle this render returned stopped since (StrictMode runs an
    // effect cleanup that shuts the factory down, then mounts again): the
    // pool holds a new one; render again with it.
    if (e.value !== handle) renew();
    return () => pool.release(e);
    // `opts` is represented by `key`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [pool, key, handle]);
  return handle;
}

/** A value from a pool per informer, held while the component is mounted. */
function usePooled(map, informer, key, arg, create) {
  const pool = poolOf(map, informer, create, free);
  const value = pool.peek(key, arg).value;
  useEffect(() => {
    const e = pool.retain(key, arg);
    return () => pool.release(e);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [pool, key]);
  return value;
}

/**
 * The informer's objects in `namespace` matching `labelSelector` (and
 * `fieldSelector`), sorted by namespace and name. Re-renders at most once per
 * animation frame, and only when the informer changed; the array and the
 * objects in it keep their identity while unchanged. Throws `KubeError` for a
 * malformed selector. Empty on the server and while hydrating.
 */
export function useList(informer, filter = {}) {
  const f = {
    namespace: filter.namespace ?? undefined,
    // `null` stays: a null selector matches nothing (client-go's
    // LabelSelectorAsSelector), where an absent one matches everything.
    labelSelector: filter.labelSelector,
    fieldSelector: filter.fieldSelector ?? undefined,
  };
  const key = JSON.stringify(f);
  const view = usePooled(views, informer, key, f, (arg) => informer.scoped(arg));
  const subscribe = useCallback((onChange) => informer.subscribe(onChange), [informer]);
  return useSyncExternalStore(subscribe, () => view.getSnapshot(), serverList);
}

/**
 * Listers whose `get` without a namespace threw `Invalid`: a namespaced
 * resource on an informer of every namespace, where no name alone can match.
 */
const needNamespace = new WeakSet();

/**
 * `lister.get`, except that a namespaced object asked for without a namespace
 * on an informer of every namespace is absent rather than an error: the
 * namespace is often a route parameter still loading, and a throw in
 * `getSnapshot` would take the component tree down.
 */
function getObject(lister, namespace, name) {
  if (namespace) return lister.get(name, namespace);
  if (needNamespace.has(lister)) return undefined;
  try {
    return lister.get(name);
  } catch (e) {
    // A name that is not a string is `Invalid` too, and stays an error.
    if (e?.reason !== 'Invalid' || typeof name !== 'string') throw e;
    needNamespace.add(lister);
    return undefined;
  }
}

/**
 * One cached object (`namespace` is `null` or `undefined` for a cluster-scoped
 * one), or `undefined` while it is absent; re-renders when it changes.
 * Without a namespace, a namespaced object is looked up in the informer's
 * namespace, and is `undefined` on an informer of every namespace.
 * `undefined` on the server and while hydrating.
 */
export function useObject(informer, namespace, name) {
  const lister = usePooled(listers, informer, '', undefined, () => informer.lister());
  const subscribe = useCallback((onChange) => informer.subscribe(onChange), [informer]);
  const read = () => getObject(lister, namespace, name);
  return useSyncExternalStore(subscribe, read, serverObject);
}
