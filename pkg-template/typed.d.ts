// Generic declarations of the classes wasm-bindgen generates in
// `kubewasm.d.ts`: the same runtime classes, typed by the object type `T` an
// informer or resource client holds (bring precise types such as the
// `kubernetes-types` package). `index.d.ts` exports these names explicitly,
// which takes precedence over the generated ones re-exported with `export *`.
// The checks at the end fail type-checking (the package's tests run
// with `skipLibCheck: false`) if the generated classes gain a member these
// declarations lack.
import type {
  ApiResourceInfo,
  ClientOptions,
  DeleteCollectionOptions,
  DeleteOptions,
  Diff,
  DiscoveryOptions,
  EventHandlers,
  EventRegistration,
  GetOptions,
  HandlerOptions,
  IndexFunc,
  InformerFactoryOptions,
  InformerOptions,
  InformerStatus,
  KubeObject,
  ListFilter,
  ListOptions,
  ListResult,
  LogOptions,
  NewObject,
  LogStream,
  ObjectInput,
  PatchKind,
  ReconcileResult,
  ResourceRef,
  RunWorkersOptions,
  Status,
  SyncWaitOptions,
  WatchCarrier,
  WatchEvent,
  WatchOptions,
  WorkerPoolHandle,
  WorkQueueMetrics,
  WorkQueueOptions,
  WriteOptions,
  Informer as GeneratedInformer,
  InformerFactory as GeneratedInformerFactory,
  KubeClient as GeneratedKubeClient,
  Lister as GeneratedLister,
  ResourceClient as GeneratedResourceClient,
  ScopedView as GeneratedScopedView,
  WorkQueue as GeneratedWorkQueue,
} from './kubewasm.js';

/** Handlers by informer event. */
export interface InformerHandlers<T> {
  /**
   * An object appeared (or, for a handler added late, was already cached). `isInInitialList` is true for the
   * objects of the first list and for the cache replayed to a handler added late (client-go's `OnAdd`).
   */
  add: (obj: T, isInInitialList: boolean) => void;
  /** An object changed: the cached old version, then the new one. */
  update: (oldObj: T, newObj: T) => void;
  /**
   * An object went away: its last known version (only `metadata.namespace` and `name` when the cache never had it).
   * `finalStateUnknown` is true when the delete was not seen but inferred, because a relist no longer had the object
   * (client-go's `DeletedFinalStateUnknown`): the object may be stale.
   */
  delete: (obj: T, finalStateUnknown: boolean) => void;
  /**
   * A handler threw, an object could not be cached (the error has its
   * `key`), a list failed or the server refused a watch (the informer
   * backs off and lists again, as `status` shows; client-go's watch error
   * handler), or the server could not be reached (`Network`: the informer
   * backs off and tries again, at each attempt).
   */
  error: (err: unknown) => void;
  /** The informer's status changed. */
  status: (status: InformerStatus) => void;
}

/** The REST client: configuration shared by every resource client. */
export declare class KubeClient {
  /** Create a client. Throws `KubeError` (reason `Invalid`) on bad options. */
  constructor(opts: ClientOptions);
  free(): void;
  [Symbol.dispose](): void;
  /** A client for one resource (any group/version/resource or built-in kind, CRDs included), in `r.namespace` or across all namespaces. */
  resource<T extends object = KubeObject>(r: ResourceRef): ResourceClient<T>;
  /** Every resource the server offers, every served version; cached for five minutes. `signal` stops this call's wait. */
  discover(opts?: DiscoveryOptions): Promise<ApiResourceInfo[]>;
  /** Resolve a plural, singular, short name or kind (optionally `.group`-qualified) as kubectl does. `signal` stops this call's wait. */
  resourceFor(name: string, opts?: DiscoveryOptions): Promise<ApiResourceInfo>;
  /** Forget cached discovery (after installing a CRD, say). */
  invalidateDiscovery(): void;
  /**
   * A container's log line by line (`for await`, or `.readable()` for a `ReadableStream<string>`); sent on
   * the first read, aborted by `break`, `return()`, cancelling or the options' `signal` (which rejects the
   * pending read with `Aborted`). Throws `KubeError` (`Invalid`) on bad options.
   */
  logs(namespace: string, pod: string, opts?: LogOptions): LogStream;
}

/**
 * CRUD and watch on one resource. Objects are plain JSON objects owned by the
 * caller. Verbs on one object take `(name, namespace?)` first: the namespace
 * given there wins over the client's. A namespaced resource needs one of them
 * (else the call rejects with a `KubeError`, reason `Invalid`); a
 * cluster-scoped resource ignores both.
 */
export declare class ResourceClient<T extends object = KubeObject> {
  private constructor();
  free(): void;
  [Symbol.dispose](): void;
  /** Get one object by name: a cluster-scoped one, or in the client's namespace. */
  get(name: string): Promise<T>;
  /** Get one object's `status` subresource by name in `namespace` (the client's when `null` or `undefined`): a `T`. */
  get(name: string, namespace: string | null | undefined, opts: GetOptions & { subresource: 'status' }): Promise<T>;
  /**
   * Get another subresource of one object, e.g. `'scale'`, whose object is not a `T` (an `autoscaling/v1`
   * `Scale`): a `KubeObject`, or the type given as `S` (`get<Scale>(...)`).
   */
  get<S extends object = KubeObject>(name: string, namespace: string | null | undefined, opts: GetOptions & { subresource: string }): Promise<S>;
  /**
   * Get one object by name in `namespace` (the client's when `null` or `undefined`). Options whose `subresource`
   * is only known as a `string` are typed as reading the object.
   */
  get(name: string, namespace: string | null | undefined, opts?: GetOptions): Promise<T>;
  /** List one page (or everything when no `limit` is given). */
  list(opts?: ListOptions): Promise<ListResult<T>>;
  /**
   * Create an object, in `metadata.namespace` or the client's: an object literal (whose name may be left to the
   * server through `metadata.generateName`) or a value typed `T` as `kubernetes-types` declares it.
   */
  create(obj: NewObject<T> | ObjectInput<T>, opts?: WriteOptions): Promise<T>;
  /** Replace the object's `status` subresource (client-go's `UpdateStatus`). */
  replace(obj: T | ObjectInput<T>, opts: WriteOptions & { subresource: 'status' }): Promise<T>;
  /**
   * Replace another subresource, e.g. `'scale'`: the object written and returned is that subresource's (an
   * `autoscaling/v1` `Scale`), typed as given (`S`, by default what `obj` is).
   */
  replace<S extends object = KubeObject>(obj: S | ObjectInput<S>, opts: WriteOptions & { subresource: string }): Promise<S>;
  /**
   * Replace the object named by `metadata.name`, in `metadata.namespace` or the client's (optimistic concurrency
   * through `metadata.resourceVersion`). Options whose `subresource` is only known as a `string` are typed as
   * writing the object.
   */
  replace(obj: T | ObjectInput<T>, opts?: WriteOptions): Promise<T>;
  /** Patch an object's `status` subresource, in `namespace` or the client's. */
  patch(name: string, namespace: string | null | undefined, patch: object, kind: PatchKind, opts: WriteOptions & { subresource: 'status' }): Promise<T>;
  /**
   * Patch another subresource, e.g. `'scale'`, whose object is not a `T` (an `autoscaling/v1` `Scale`): a
   * `KubeObject`, or the type given as `S`.
   */
  patch<S extends object = KubeObject>(name: string, namespace: string | null | undefined, patch: object, kind: PatchKind, opts: WriteOptions & { subresource: string }): Promise<S>;
  /**
   * Patch an object, in `namespace` or the client's: `merge`, `strategic`, `json` (a JSON Patch array) or `apply`
   * (server-side apply; needs `fieldManager`). Options whose `subresource` is only known as a `string` are typed
   * as patching the object.
   */
  patch(name: string, namespace: string | null | undefined, patch: object, kind: PatchKind, opts?: WriteOptions): Promise<T>;
  /**
   * Delete an object, in `namespace` or the client's. Resolves with the object
   * while its deletion is pending or as the server returned it (pods,
   * persistent volumes and claims, namespaces), or with a `Status` when it was
   * deleted at once: tell them apart with `isStatus`.
   */
  delete(name: string): Promise<T | Status>;
  delete(name: string, namespace: string | null | undefined, opts?: DeleteOptions): Promise<T | Status>;
  /**
   * Delete every object matching the selectors, in the options' `namespace`
   * or the client's (a namespaced resource needs one: the API server deletes
   * collections in one namespace only): client-go's `DeleteCollection`.
   * Resolves with what the server deleted, as a list.
   */
  deleteCollection(opts?: DeleteCollectionOptions): Promise<ListResult<T>>;
  /**
   * Watch changes as an async iterable of events; breaking out of the loop aborts the request, and so does the
   * options' `signal` (the pending `next()` then rejects with `Aborted`).
   */
  watch(opts?: WatchOptions): AsyncIterableIterator<WatchEvent<T>> & {
    /** What carries the watch, once the first event was asked for. */
    readonly transport: WatchCarrier | undefined;
    /** End the watch: the request is aborted and a pending `next()` resolves `done` (always present, unlike an `AsyncIterator`'s). */
    return(): Promise<IteratorResult<WatchEvent<T>, undefined>>;
  };
}

/** Shares one informer per identical options. */
export declare class InformerFactory {
  /**
   * A factory over a client. Informers stop watching `releaseGraceMs` after
   * their last handle, subscription and handler are released, and (in a page)
   * while the page has been hidden for `hiddenPauseMs`.
   */
  constructor(client: KubeClient, opts?: InformerFactoryOptions);
  /** Forward the page's visibility (from a worker, which has no `document`). */
  setVisible(visible: boolean): void;
  free(): void;
  [Symbol.dispose](): void;
  /**
   * The informer for these options: one per resource, namespace and
   * selectors, shared by every caller. Asking again for a scope with a
   * different `transform`, `resyncMs`, `backoff`, `maxBacklog`,
   * `stripManagedFields` or `metadataOnly`, or an `indexers` name bound to
   * another function, throws a `KubeError` with reason `OptionsConflict`
   * (functions compare by identity: define them once, outside components).
   * `indexers` under new names and `labelIndexes` are added to the shared
   * informer.
   */
  informer<T extends object = KubeObject>(opts: InformerOptions<T>): Informer<T>;
  /** Start every informer (and those created later). */
  start(): void;
  /**
   * Resolves `true` when every informer the factory holds now has synced, or `false` once one stops first, or
   * `opts.signal` aborts, or `opts.timeoutMs` passes (client-go's `WaitForCacheSync`). An informer stopped before
   * the call is no longer the factory's.
   */
  waitForSync(opts?: SyncWaitOptions): Promise<boolean>;
  /** Stop every informer and let go of them: the factory can be used again, and makes new ones. */
  shutdown(): void;
  /**
   * Stop writing to IndexedDB and delete every copy stored under the
   * `persist` name (every server and identity), e.g. at logout.
   */
  clearPersisted(): Promise<void>;
}

/** A live, indexed cache of one resource. */
export declare class Informer<T extends object = KubeObject> {
  private constructor();
  free(): void;
  [Symbol.dispose](): void;
  /** Start listing and watching (idempotent). */
  start(): void;
  /**
   * Stop for good: the watch is aborted and no timer or task remains. The factory lets go of it: asking for
   * the same scope again makes a new informer, while this handle keeps the stopped one and its last cache.
   */
  stop(): void;
  /**
   * Let go of this handle (also `free()` and `using`). Once every handle,
   * subscription and handler is released, the informer stops watching after
   * the factory's `releaseGraceMs` and keeps its cache for `releasedCacheMs`:
   * getting it again from the factory meanwhile resumes it from its last
   * resourceVersion. After that it is dropped, and this handle throws when
   * asked for a new subscription, handler, view or lister.
   */
  release(): void;
  /**
   * Listen for an event; returns an unsubscribe function. All `add`,
   * `update` and `delete` handlers of an informer share one queue, so they
   * observe changes in the order the cache applied them. An `add` handler
   * registered after start first receives every cached object. A handler
   * that throws is reported to `error` listeners (or the console) and does
   * not affect the others; `error` listeners also get a `KubeError` with
   * the object's `key` for every object the cache could not apply.
   */
  on<E extends keyof InformerHandlers<T>>(event: E, handler: InformerHandlers<T>[E]): () => void;
  /**
   * Register handlers as one listener (client-go's `AddEventHandler`): they
   * observe changes in the order the cache applied them; registered after
   * start, they first receive every cached object as adds.
   */
  addEventHandler(handlers: EventHandlers<T>, options?: HandlerOptions): EventRegistration;
  /** Receive coalesced diffs, at most one per animation frame; returns an unsubscribe function. */
  subscribe(listener: (diff: Diff) => void): () => void;
  /** Every cached object, sorted by namespace and name; the same array until a diff was delivered. */
  getSnapshot(): readonly T[];
  /** A filtered view with the same snapshot contract; throws `KubeError` for a malformed selector. */
  scoped(filter: ListFilter): ScopedView<T>;
  /** A lister over the cache. */
  lister(): Lister<T>;
  /**
   * Add an index: `f(obj)` returns the values the object is listed under. The same name with the same function again
   * does nothing; with another function it throws `KubeError` with reason `OptionsConflict` (client-go's indexer
   * conflict), as the factory's `indexers` option does.
   */
  addIndexer(name: string, f: IndexFunc<T>): void;
  /**
   * Resolves `true` once the initial list is cached and every handler
   * registered before the call has received it, or `false` once the informer
   * stops first, or `opts.signal` aborts, or `opts.timeoutMs` passes (the
   * informer keeps running). A handler registered later gets the cache as
   * adds; wait on its own registration.
   */
  waitForSync(opts?: SyncWaitOptions): Promise<boolean>;
  /** Whether the initial list has reached the cache. */
  readonly hasSynced: boolean;
  /** Current status. */
  readonly status: InformerStatus;
  /** Approximate bytes the cached objects hold in wasm memory. */
  readonly cachedBytes: number;
}

/** Read-only queries on an informer's cache. */
export declare class Lister<T extends object = KubeObject> {
  private constructor();
  free(): void;
  [Symbol.dispose](): void;
  /**
   * Objects matching the filter (indexes are used for namespaces and indexed labels), in no particular order,
   * as client-go's listers: sort them, or use `getSnapshot()` (namespace, then name) for a stable order.
   */
  list(filter?: ListFilter): T[];
  /**
   * The cached object `name`; `undefined` when absent. For a namespaced resource, in the informer's namespace when it
   * watches one; an informer of every namespace throws `KubeError` (reason `Invalid`), as `ResourceClient.get` does.
   */
  get(name: string): T | undefined;
  /**
   * The cached object `name` in `namespace`; `undefined` when absent. The order of `ResourceClient.get` and
   * client-node's `ObjectCache.get`. A cluster-scoped resource ignores the namespace. For a namespaced one, no
   * namespace (`''`, `null` or `undefined`) looks in the informer's single namespace, and throws `KubeError`
   * (reason `Invalid`) on an informer of every namespace.
   */
  get(name: string, namespace: string | null | undefined): T | undefined;
  /** Objects listed under `value` in the index `indexName` (`namespace` is built in). */
  byIndex(indexName: string, value: string): T[];
  /** The values `indexName` lists at least one object under (client-go's `ListIndexFuncValues`). */
  indexValues(indexName: string): string[];
}

/** A filtered live view (see `Informer.scoped`). */
export declare class ScopedView<T extends object = KubeObject> {
  private constructor();
  free(): void;
  [Symbol.dispose](): void;
  /** The matching objects; the same array until one of them changes, or an object enters or leaves the view. */
  getSnapshot(): readonly T[];
  /** Receive the informer's diffs (unfiltered keys; re-read the snapshot). */
  subscribe(listener: (diff: Diff) => void): () => void;
}

/**
 * A rate-limited work queue of string keys (client-go's rate-limiting queue):
 * duplicates collapse, a key is never handed to two workers at once, and a
 * key added while being processed is processed again after `done`.
 */
export declare class WorkQueue {
  /** Create a queue (client-go's default limiter unless told otherwise). Throws `KubeError` (reason `Invalid`) on bad options. */
  constructor(opts?: WorkQueueOptions);
  free(): void;
  [Symbol.dispose](): void;
  /** Add a key now (ignored after shutdown). */
  add(key: string): void;
  /**
   * Add a key once `delayMs` has passed; an earlier pending add wins. A delay of zero or less adds it now; one that is
   * not a finite number throws `KubeError` (reason `Invalid`). A pending delayed add is a timer: in Node it keeps the
   * process running until it fires or the queue is shut down.
   */
  addAfter(key: string, delayMs: number): void;
  /** Add a key after its rate-limited backoff; returns the delay in ms. */
  addRateLimited(key: string): number;
  /** Clear a key's retry history (call after it succeeded). */
  forget(key: string): void;
  /** How many times the key has been requeued with backoff since its last `forget`. */
  numRequeues(key: string): number;
  /** The next key, or `undefined` once the queue is shut down and empty. Every key received must be passed to `done`. */
  get(): Promise<string | undefined>;
  /** Mark a key as finished processing. */
  done(key: string): void;
  /** Stop accepting keys; pending `get`s resolve with `undefined` once the queue is empty. */
  shutdown(): void;
  /**
   * Shut down and resolve once every key already taken is done (client-go's `ShutDownWithDrain`); while `runWorkers`
   * workers serve the queue, once they have also done every key still queued and exited (their pools' `running` is 0).
   */
  shutdownWithDrain(): Promise<void>;
  /** A snapshot of the queue's metrics. */
  metrics(): WorkQueueMetrics;
  /**
   * Run `n` concurrent workers: each takes a key, awaits `reconcile(key)` and
   * then forgets it (success), requeues it with backoff (throw/reject or
   * `{ requeue: true }`), or re-adds it after `requeueAfterMs`. A key is never
   * reconciled concurrently with itself. `n` is a whole number from 1 to
   * 10,000; anything else, or a `reconcile` that is not a function, throws
   * `KubeError` (reason `Invalid`).
   */
  runWorkers(n: number, reconcile: (key: string) => ReconcileResult | Promise<ReconcileResult>, opts?: RunWorkersOptions): WorkerPoolHandle;
  /** Keys waiting to be handed out. */
  readonly len: number;
  /** Whether no key is waiting to be handed out. */
  readonly isEmpty: boolean;
  /** Whether `shutdown` has been called. */
  readonly shuttingDown: boolean;
}

/** Instantiating this with anything but `never` fails type-checking. */
type MustBeNever<T extends never> = T;
/** Every member of the generated classes is declared above (a drift check; see the top). */
export type __KubewasmTypingsCoverGenerated = [
  MustBeNever<Exclude<keyof GeneratedKubeClient, keyof KubeClient>>,
  MustBeNever<Exclude<keyof GeneratedResourceClient, keyof ResourceClient>>,
  MustBeNever<Exclude<keyof GeneratedInformerFactory, keyof InformerFactory>>,
  MustBeNever<Exclude<keyof GeneratedInformer, keyof Informer>>,
  MustBeNever<Exclude<keyof GeneratedLister, keyof Lister>>,
  MustBeNever<Exclude<keyof GeneratedScopedView, keyof ScopedView>>,
  MustBeNever<Exclude<keyof GeneratedWorkQueue, keyof WorkQueue>>,
];
