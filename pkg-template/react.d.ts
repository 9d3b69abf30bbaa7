// Typings of `kubewasm/react`: React hooks over kubewasm informers.
import type { Informer, InformerFactory, InformerOptions, KubeObject, ListFilter } from './web/index.js';

/**
 * The factory's informer for `opts`, started and held while the component is
 * mounted (the same handle for every component asking for the same options;
 * StrictMode's double mount opens no second watch). Unmounting releases it:
 * the informer stops watching after the factory's `releaseGraceMs` unless
 * something else holds it. Functions in `opts` are the first caller's (later mounts' inline ones are not compared).
 */
export declare function useInformer<T extends object = KubeObject>(factory: InformerFactory, opts: InformerOptions<T>): Informer<T>;

/**
 * The informer's objects matching `filter`, sorted by namespace and name;
 * re-renders at most once per animation frame, only when something changed.
 * The array and unchanged objects keep their identity. Throws `KubeError`
 * for a malformed selector. On the server and while hydrating, an empty
 * array (the server never starts informers); the cache's objects follow.
 */
export declare function useList<T extends object = KubeObject>(informer: Informer<T>, filter?: ListFilter): readonly T[];

/**
 * One cached object, or `undefined` while it is absent (`namespace` is
 * `null` or `undefined` for a cluster-scoped object); re-renders when it changes.
 * Without a namespace (`''`, `null` or `undefined`, e.g. a route parameter
 * still loading), a namespaced object is looked up in the informer's
 * namespace, and is `undefined` on an informer of every namespace (where
 * `Lister.get` throws). `undefined` on the server and while hydrating.
 */
export declare function useObject<T extends object = KubeObject>(informer: Informer<T>, namespace: string | null | undefined, name: string): T | undefined;
