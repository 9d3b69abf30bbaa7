//! `InformerFactory`, `Informer`, `Lister` and scoped snapshots for JS.
//!
//! UI delivery: one internal handler per informer records each key's change
//! in a [`ChangeSet`]; at most once per animation frame (a macrotask where
//! there is no `requestAnimationFrame`) the net diff goes to every
//! `subscribe` listener, and the version that `getSnapshot` keys on moves.
//! `getSnapshot()` returns the same array until a diff was delivered — the
//! `useSyncExternalStore` contract — and rebuilds it from the store (objects
//! are materialized once per version, so a rebuild reuses unchanged objects).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::abort::sync_wait_promise;
use super::cache_shape::{factory_error, options_conflict, Shape};
use super::changes::{ChangeKind, ChangeSet, Diff};
use super::client::KubeClient;
use super::error::{from_rest, KubeErrorInit};
use super::frame::{document, on_next_frame, page_hidden};
use super::object::to_js;
use super::options::{self, report};
use super::persist::Persist;
use super::promise::future_to_promise;
use super::selector::{label_selector, label_selector_query, selector_error};
use super::snapshot::{DiffLog, Snapshot};
use crate::cache::{
    in_scope, partial_object_metadata, strip_managed_fields, Applied, DeltaObject, Failure,
    FieldSelector, Handler, IndexFunc, Indexers, InformerError, InformerOptions, InformerStatus,
    LabelSelector, Lister as RustLister, Notification, ReflectorOptions, Registration,
    ResourceScope, SharedIndexInformer, SharedInformerFactory, Transformer, WeakInformerFactory,
};
use crate::rest::KubeObject;
use crate::rt::{real_clock, spawn_local, Notify, TaskHandle};

#[wasm_bindgen(typescript_custom_section)]
const INFORMER_TS: &'static str = r#"
/**
 * When `waitForSync` gives up (client-go's `WaitForCacheSync` stop channel): it then resolves `false`, as when the
 * informer stops first; the informer itself keeps running and retrying. Other members are refused (`Invalid`).
 */
export interface SyncWaitOptions {
  /** Give up once this signal aborts (at once if it has). */
  signal?: AbortSignal | undefined;
  /** Give up after this many ms (`0` or `Infinity`: never, as the client's `timeoutMs`). */
  timeoutMs?: number | undefined;
}
/** What an informer caches: `resource` is the plural name (`pods`, `widgets`), or give a built-in `kind` instead. */
/**
 * An index function: the values an object is listed under. `undefined`, `null` or `[]` leave the object out of
 * the index (it stays cached); a string is one value. One that throws or returns anything else skips the object,
 * reported to `error` listeners.
 */
export type IndexFunc<T extends object = KubeObject> = (obj: T) => readonly string[] | string | null | undefined;

export interface InformerOptions<T extends object = KubeObject> {
  group?: string | undefined;
  version: string;
  resource?: string | undefined;
  /** Instead of `resource`: a built-in kind (`Pod`, `Deployment`); for CRDs resolve with `client.resourceFor`. */
  kind?: string | undefined;
  /** Whether the resource is namespaced: known for built-in resources and from `client.resourceFor`; otherwise assumed `true`. A cluster-scoped resource ignores `namespace`. */
  namespaced?: boolean | undefined;
  namespace?: string | undefined;
  /** A selector string (`app=web`) or an API selector object (a Deployment's `spec.selector`). */
  labelSelector?: string | LabelSelectorObject | undefined;
  fieldSelector?: string | undefined;
  /** Re-deliver every cached object to every `update` handler (old and new the same object) this often (ms; less than 1000 is raised to 1000, client-go's minimum); off by default. */
  resyncMs?: number | undefined;
  /** Drop `metadata.managedFields` before caching (default true). */
  stripManagedFields?: boolean | undefined;
  /**
   * Cache metadata only, as client-go's metadata informers do: the server is asked for
   * `PartialObjectMetadata` (so the rest of each object never crosses the wire), and objects are
   * `{ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata }` without managedFields.
   * A server that refuses (406/415) or ignores the request, and watches over WebSocket (which cannot
   * ask), send whole objects, which are cut down to the same form on the client.
   */
  metadataOnly?: boolean | undefined;
  /** Applied to each object before it is cached; must return a JSON-serializable object. */
  transform?: ((obj: T) => T) | undefined;
  /** Extra indexes: name → values an object is listed under. Asking again for the scope adds new names; the same name must be the same function. */
  indexers?: Record<string, IndexFunc<T>> | undefined;
  /**
   * The most notifications a handler may have waiting (default 1024; 0 = no
   * bound). While a handler is over it, the informer stops reading the watch
   * (the server is held back by the stream's flow control) until the handler
   * has worked its backlog down to half; nothing is dropped. `status.heldBack`
   * says when this happens.
   */
  maxBacklog?: number | undefined;
  /**
   * The queue between the watch and the cache. `'delta'` (the default, client-go's DeltaFIFO): a key's
   * queued changes are handed over together, a delete of an object the cache never held is dropped and
   * repeated deletes are merged, so handlers never see a delete for something they were not given.
   * `'real'` (client-go's RealFIFO, its informers' default since 1.36): every change in arrival order
   * across keys, deletes included as they came, a relist's deletions before its objects. Subscribers'
   * per-frame diffs look the same either way; handlers differ only in the order across keys.
   */
  queue?: 'delta' | 'real' | undefined;
  /**
   * Waits between attempts after an error or a relist (client-go's defaults:
   * 800 ms doubling to 30 s, each wait up to twice its base at random). In a
   * browser, the network coming back (`online`) ends a wait at once (not one
   * the server asked for with `Retry-After`); the next wait is still the next
   * step.
   */
  backoff?: { initialMs?: number | undefined; capMs?: number | undefined } | undefined;
  /**
   * Label keys to index (e.g. `['app']`): listers and scoped views answer an
   * equality selector on them (`app=web`, with or without a namespace) from
   * the index instead of testing every object. Added to a shared informer too.
   */
  labelIndexes?: string[] | undefined;
}

/** Options of an `InformerFactory`. */
export interface InformerFactoryOptions {
  /**
   * How long an informer keeps watching after its last user released it
   * (ms, default 30,000): re-acquiring it within this time finds it live;
   * later it resumes from its last resourceVersion.
   */
  releaseGraceMs?: number | undefined;
  /**
   * How long an informer nobody holds keeps its cache once it has stopped
   * watching (ms, default 300,000): asking for its scope within this time
   * resumes it from its last resourceVersion; later it is dropped, and asking
   * again lists anew (or starts from a stored copy). `Infinity` keeps every
   * cache for the factory's life.
   */
  releasedCacheMs?: number | undefined;
  /**
   * How long a page may stay hidden before its informers stop watching (ms,
   * default 60,000). When it is shown again they resume from their last
   * resourceVersion and subscribers get one diff of what changed meanwhile.
   * In a worker, forward the page's visibility with `setVisible`.
   */
  hiddenPauseMs?: number | undefined;
  /**
   * Keep a copy of every informer's cache in IndexedDB and start from it
   * next time (see the README's "Warm start"). `name` names the database;
   * `identity` separates users (default: the client's bearer token, only
   * ever hashed; required with a `tokenProvider`); writes happen at most
   * once per `intervalMs` (default 1,000) per informer. At most `maxCopies`
   * (default 64) scopes' copies are kept per identity: a new scope's first
   * write deletes the least recently written beyond them.
   */
  persist?: { name: string; identity?: string | undefined; intervalMs?: number | undefined; maxCopies?: number | undefined } | undefined;
  /**
   * Where this factory's informers get their data, repeated in each
   * informer's `status.host` (`kubewasm/shared` sets it).
   */
  host?: InformerHost | undefined;
}

/** Where an informer's lists and watches are served from (see `kubewasm/shared`). */
export interface InformerHost {
  /** `shared-worker`: one SharedWorker for every tab; `worker`: a dedicated Worker; `page`: this page. */
  kind: 'shared-worker' | 'worker' | 'page';
  /** Why that host: `configured`, `available`, or what kept the preferred one from working. */
  reason: string;
}

/** Keys (`namespace/name`, or `name` when cluster-scoped) that changed since the previous diff. */
export interface Diff {
  added: string[];
  updated: string[];
  removed: string[];
  version: number;
}

/** An informer's health and progress. */
export interface InformerStatus {
  /**
   * `stored`: showing a copy restored from IndexedDB (see `storedAt`) while the watch opens; it stays `stored`
   * while the server cannot be reached, with `lastError` and `nextRetryAt` set as in `backoff`.
   * `watching`: the list is in the cache and a watch is open or opening (`transport` is set once one opened); a
   * watch that cannot be opened turns it to `backoff` with the error. A watch that was open when the browser went
   * `offline` is opened again from its resourceVersion when it is back `online` (it may have died without a word,
   * as over a laptop's sleep); otherwise a silent watch is found by its 90 s idle limit.
   */
  phase: 'idle' | 'stored' | 'listing' | 'watching' | 'backoff' | 'paused' | 'stopped';
  /** Epoch ms at which the cached copy was stored; present (and `phase` is `stored`) until a watch or list confirmed it. */
  storedAt?: number;
  /** With a factory's `persist` option: whether copies are still written, and why not. */
  persistence?: { enabled: boolean; warning?: string };
  /** With a factory's `host` option: where the lists and watches are served from. */
  host?: InformerHost;
  /**
   * While backing off (also in `stored`, until the server answers): epoch ms of the next attempt. In a browser the
   * attempt comes sooner when the network comes back (`online`): a wait grown by an outage does not outlast it.
   */
  nextRetryAt?: number;
  /** Items received by the current list so far. */
  listed: number;
  /** The list's total, when the server reports `remainingItemCount`. */
  listTotal?: number;
  relists: number;
  reconnects: number;
  /** Epoch ms of the last watch event or bookmark. */
  lastEventAt?: number;
  /**
   * The last error; `key` names the object when one object could not be
   * cached, `at` is when (epoch ms). It stays after the informer recovers:
   * `phase` tells the informer's health, `at` the error's age.
   */
  lastError?: { message: string; code: number; reason: string; key?: string; at: number };
  /** Objects the cache could not apply (each reported to `error` listeners). */
  skipped: number;
  /** What carries the watch (see `WatchCarrier`). */
  transport?: WatchCarrier;
  /** Why that transport: `within-budget`, `over-budget`, `configured`, `not-limited`, `multiplexed`, `websocket-failed`, ... */
  transportReason?: string;
  /** Set when the per-origin connection budget decided the transport, or when the informer is `stalled`. */
  warning?: string;
  /**
   * True while `phase` says `watching` but the watch has been quiet for longer than its own idle limit allows
   * (90 s, plus a minute's slack): the host stopped running the informer's timers. In workerd this is an
   * informer that outlived the request that started it. Read when the status is read; no `status` event marks it.
   */
  stalled?: boolean;
  /** Present while a slow handler holds the informer back: its backlog and the bound. */
  heldBack?: { pending: number; limit: number };
  /** Watch events received and applied, bookmarks included (a bookmark is the server saying the watch is alive). */
  eventsApplied: number;
  cached: number;
  synced: boolean;
}

/** Options of one `addEventHandler` registration. */
export interface HandlerOptions {
  /**
   * This registration's resync period in ms (client-go's `AddEventHandlerWithResyncPeriod`); 0 for none, less
   * than 1000 raised to 1000. Resyncs happen only on an informer with `resyncMs` set, checked at its period: a
   * shorter one here lowers that check before `start()`, and is raised to it after.
   */
  resyncMs?: number | undefined;
}

/**
 * Handlers of one registration (client-go's `ResourceEventHandlerFuncs`).
 * They observe every change in the order the cache applied it, across
 * `add`, `update` and `delete`. A handler that throws, or returns a promise
 * that rejects, is reported to the informer's `error` listeners and does
 * not stop the others.
 */
export interface EventHandlers<T extends object = KubeObject> {
  /**
   * An object appeared (or, for a registration made after start, was already cached). `isInInitialList` is true
   * for the objects of the informer's first list, and for the cache replayed to a registration made after start
   * (client-go's `OnAdd(obj, isInInitialList)`): code that acts on new objects only can skip those.
   */
  add?: ((obj: T, isInInitialList: boolean) => void) | undefined;
  /** An object changed: the cached old version, then the new one. */
  update?: ((oldObj: T, newObj: T) => void) | undefined;
  /**
   * An object went away: its last known version (only `metadata.namespace` and `name` when the cache never had it).
   * `finalStateUnknown` is true when the delete was not seen but inferred, because a relist no longer had the object
   * (client-go's `DeletedFinalStateUnknown`): the object may be stale. Behind `kubewasm/shared` the worker's relists
   * reach a tab as plain deletes (`false`).
   */
  delete?: ((obj: T, finalStateUnknown: boolean) => void) | undefined;
}

export declare interface KubeError {
  /** For an object the cache could not apply: its key (`namespace/name`). */
  readonly key?: string;
}

/** Filters for listers and scoped snapshots. */
export interface ListFilter {
  /** Only objects in this namespace; ignored for a cluster-scoped resource. */
  namespace?: string | undefined;
  /**
   * A selector string (`app=web`) or an API selector object (a Deployment's
   * `spec.selector`), converted as client-go's `LabelSelectorAsSelector`
   * does: an empty object matches everything, `null` matches nothing.
   */
  labelSelector?: string | LabelSelectorObject | null | undefined;
  /**
   * `path=value` / `path!=value` requirements, comma-separated, over any dotted path of the cached object
   * (`status.phase=Running`); a field the object lacks reads as the empty string. Evaluated here, not by
   * the server, so it takes paths a server's field selector would refuse.
   */
  fieldSelector?: string | undefined;
}

/** A filtered live view with the `useSyncExternalStore` contract. */
export interface ScopedView<T extends object = KubeObject> {
  getSnapshot(): readonly T[];
  subscribe(listener: (diff: Diff) => void): () => void;
}

export type InformerEvent = 'add' | 'update' | 'delete' | 'error' | 'status';
"#;

/// Shares one informer per scope. The registry is the cache layer's
/// [`SharedInformerFactory`]; each informer's JS state is attached to its
/// entry there.
#[wasm_bindgen]
pub struct InformerFactory {
    factory: SharedInformerFactory,
    life: Rc<Lifecycle>,
    /// The `visibilitychange` listener, removed at shutdown.
    on_visibility: Option<Function>,
    persist: Option<Rc<Persist>>,
}

/// What decides whether a factory's informers watch: their users (reference
/// counts, each informer's own) and the page's visibility (shared).
struct Lifecycle {
    grace: std::time::Duration,
    /// How long a released informer keeps its cache (`None`: always).
    keep_released: Option<std::time::Duration>,
    hidden_delay: std::time::Duration,
    /// Hidden for longer than `hidden_delay`: every informer is paused.
    hidden: Cell<bool>,
    hide_task: RefCell<Option<TaskHandle>>,
    factory: WeakInformerFactory,
    /** The factory's `host` option, shown in every status. */
    host: JsValue,
}

/// The JS state attached to each of a factory's informers.
fn states(factory: &SharedInformerFactory) -> Vec<Rc<State>> {
    factory
        .attachments()
        .into_iter()
        .filter_map(|a| a.downcast::<State>().ok())
        .collect()
}

impl Lifecycle {
    fn each_state(&self, f: impl Fn(&Rc<State>)) {
        let Some(factory) = self.factory.upgrade() else {
            return;
        };
        for s in &states(&factory) {
            f(s);
        }
    }

    fn set_visible(self: &Rc<Self>, visible: bool) {
        if visible {
            if let Some(t) = self.hide_task.borrow_mut().take() {
                t.abort();
            }
            if self.hidden.replace(false) {
                self.each_state(|s| {
                    s.begin_catch_up();
                    s.apply_pause();
                });
            }
        } else if !self.hidden.get() && self.hide_task.borrow().is_none() {
            let me = Rc::downgrade(self);
            let delay = self.hidden_delay;
            let task = spawn_local(async move {
                real_clock().sleep(delay).await;
                if let Some(life) = me.upgrade() {
                    life.hide_task.borrow_mut().take();
                    life.hidden.set(true);
                    life.each_state(|s| s.apply_pause());
                }
            });
            *self.hide_task.borrow_mut() = Some(task);
        }
    }
}

struct State {
    inf: SharedIndexInformer,
    /// The options that shaped the cache, compared when the scope is asked for again.
    shape: Shape,
    changes: RefCell<ChangeSet>,
    subscribers: RefCell<Vec<(u64, Function)>>,
    errors: RefCell<Vec<(u64, Function)>>,
    next_id: Cell<u64>,
    snapshot: RefCell<Option<Snapshot>>,
    /// The keys of recent diffs, for snapshots to catch up from.
    diff_log: RefCell<DiffLog>,
    scoped: RefCell<HashMap<String, ScopedEntry>>,
    /// The one listener behind every `on('add' | 'update' | 'delete')`.
    group: RefCell<Option<Group>>,
    /// Every listener `waitForSync` waits for: each `addEventHandler`
    /// registration.
    regs: RefCell<Vec<(u64, Registration)>>,
    /// Fired when an `on()` handler has received its replay.
    joined: Notify,
    life: Rc<Lifecycle>,
    /// Handles, subscriptions and handlers holding the informer.
    refs: Cell<usize>,
    /// Subscriptions and handlers (`subscribe`, `on`) among them.
    listeners: Cell<usize>,
    /// The informer itself while a listener holds it: the app need keep
    /// nothing else (handle, factory, the unsubscribe function) for its
    /// listeners to go on being called; let go by the last one or a stop.
    pinned: RefCell<Option<Rc<State>>>,
    /// Paused because its last user let go more than the grace period ago.
    released: Cell<bool>,
    /// Dropped from its factory after `releasedCacheMs` with no user: its
    /// handles refuse new users (the factory makes the scope anew).
    evicted: Cell<bool>,
    grace_task: RefCell<Option<TaskHandle>>,
    /// Resumed after a pause: hold diffs until the catch-up is applied, so
    /// subscribers get one diff of everything that changed meanwhile.
    catching_up: Cell<bool>,
    /// When the catch-up began (ms): diffs are held at most `MAX_CATCH_UP_MS`.
    catching_since: Cell<f64>,
    /// The informer's relists when diffs last looked: a new one is held as a
    /// catch-up, since a relist applies what it listed before the deletes of
    /// what it no longer has, and a diff between the two would show both.
    relists_seen: Cell<u64>,
    /// Started from a stored copy: once it is no longer only stored, the
    /// catch-up (watch replay or relist) is held as one diff.
    warm: Rc<Cell<bool>>,
    persist: Option<Rc<Persist>>,
    /// Reports the rejection of a promise an `async` handler returned (made
    /// on first use; one function for every such promise).
    on_reject: std::cell::OnceCell<JsValue>,
    /// A cluster-scoped resource: listers and views ignore a namespace, as
    /// the resource client does.
    cluster_scoped: bool,
    /// Whether the console was told of a failing list or watch since the
    /// informer last watched (set only while no `error` listener is added).
    warned: Cell<bool>,
    /// The scope, as the console warning names it.
    described: String,
    /// The namespace of a namespace-scoped informer: a lister's `get`
    /// without one looks there, as a resource client in it would.
    namespace: Option<String>,
    /// The resource's plural name, for errors.
    plural: String,
}

#[wasm_bindgen(module = "/src/rt/host.js")]
extern "C" {
    /// A timer that does not keep Node running by itself.
    #[wasm_bindgen(js_name = idleSleep)]
    fn idle_sleep(ms: f64, cancel: &Object) -> Promise;
}

/// Sleep on a timer that does not keep Node running; a sleep dropped
/// before its end (the task was aborted) clears its timer.
async fn idle_for(d: std::time::Duration) {
    struct Clear(Object);
    impl Drop for Clear {
        fn drop(&mut self) {
            if let Some(f) = Reflect::get(&self.0, &"clear".into())
                .ok()
                .and_then(|f| f.dyn_into::<Function>().ok())
            {
                let _ = f.call0(&JsValue::NULL);
            }
        }
    }
    let cancel = Object::new();
    let sleep = idle_sleep(d.as_secs_f64() * 1000.0, &cancel);
    let _clear = Clear(cancel);
    let _ = wasm_bindgen_futures::JsFuture::from(sleep).await;
}

/// `InformerOptions`' members, and those of `ApiResourceInfo` (what
/// `resourceFor` returns is spread into them).
const INFORMER_OPTIONS: &[&str] = &[
    "group",
    "version",
    "resource",
    "kind",
    "namespaced",
    "namespace",
    "labelSelector",
    "fieldSelector",
    "resyncMs",
    "stripManagedFields",
    "metadataOnly",
    "transform",
    "indexers",
    "maxBacklog",
    "queue",
    "backoff",
    "labelIndexes",
    "singular",
    "verbs",
    "shortNames",
    "subresources",
    "preferred",
];

/// `InformerFactoryOptions`' members.
const FACTORY_OPTIONS: &[&str] = &[
    "releaseGraceMs",
    "releasedCacheMs",
    "hiddenPauseMs",
    "persist",
    "host",
];

/// `ListFilter`'s members.
const LIST_FILTER: &[&str] = &["namespace", "labelSelector", "fieldSelector"];

/// The longest subscribers wait for a catch-up to be applied as one diff.
const MAX_CATCH_UP_MS: f64 = 5_000.0;

/// A scoped view's snapshot, shared by the recent views of one filter.
type ScopedSnap = RefCell<Option<Snapshot>>;

/// A recent scoped snapshot by filter, and when it was last read.
struct ScopedEntry {
    snap: Rc<ScopedSnap>,
    used: u64,
}

/// Scoped snapshots kept per informer by filter, so a view created per
/// keystroke or per render takes the array of the one before it while its
/// filter is among the recent ones. A view keeps its own snapshot besides,
/// so any number of live views keep their arrays.
const MAX_SCOPED: usize = 32;

#[derive(Clone, Copy, PartialEq, Eq)]
enum EventKind {
    Add,
    Update,
    Delete,
}

/// One `on()` handler inside the shared listener.
struct OnEntry {
    id: u64,
    kind: EventKind,
    f: Function,
    /// Set on the listener's pump once the handler's replay is delivered:
    /// from then on it receives every notification.
    active: Cell<bool>,
    removed: Cell<bool>,
}

/// The shared listener of `on()` handlers: one queue, so every handler sees
/// one order; entries are replaced copy-on-write so delivery never holds a
/// borrow while JS runs.
struct Group {
    reg: Registration,
    entries: Rc<RefCell<Rc<Vec<Rc<OnEntry>>>>>,
}

/// Objects replayed per queued call when an `add` handler joins late.
const REPLAY_CHUNK: usize = 16;

impl State {
    /// The status as JS sees it: the informer's, plus the factory's persistence and host.
    fn status_js(&self) -> JsValue {
        let js = status_to_js(&self.inf.status_snapshot());
        if let Some(p) = &self.persist {
            let _ = Reflect::set(&js, &"persistence".into(), &p.status_js());
        }
        if self.life.host.is_object() {
            let _ = Reflect::set(&js, &"host".into(), &self.life.host);
        }
        js
    }

    fn new(
        inf: SharedIndexInformer,
        shape: Shape,
        life: Rc<Lifecycle>,
        warm: Rc<Cell<bool>>,
        persist: Option<Rc<Persist>>,
        scope: &ResourceScope,
    ) -> Rc<State> {
        Rc::new(State {
            inf,
            shape,
            changes: RefCell::new(ChangeSet::default()),
            subscribers: RefCell::new(Vec::new()),
            errors: RefCell::new(Vec::new()),
            next_id: Cell::new(0),
            snapshot: RefCell::new(None),
            diff_log: RefCell::default(),
            scoped: RefCell::new(HashMap::new()),
            group: RefCell::new(None),
            regs: RefCell::new(Vec::new()),
            joined: Notify::new(),
            life,
            refs: Cell::new(0),
            listeners: Cell::new(0),
            pinned: RefCell::new(None),
            released: Cell::new(false),
            evicted: Cell::new(false),
            grace_task: RefCell::new(None),
            catching_up: Cell::new(false),
            relists_seen: Cell::new(0),
            catching_since: Cell::new(0.0),
            warm,
            persist,
            on_reject: std::cell::OnceCell::new(),
            cluster_scoped: !scope.resource.namespaced,
            warned: Cell::new(false),
            described: super::cache_shape::describe(scope),
            namespace: scope.effective_namespace().map(str::to_owned),
            plural: scope.resource.plural.clone(),
        })
    }

    /// Report the rejection of `v` (what a handler returned) when it
    /// settles: any thenable is adopted, and anything else settles at once.
    fn catch_rejection(self: &Rc<Self>, v: &JsValue) {
        let on_reject = self.on_reject.get_or_init(|| {
            let weak = Rc::downgrade(self);
            Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
                if let Some(s) = weak.upgrade() {
                    s.report_error(&e);
                }
            })
            .into_js_value()
        });
        catch_with(v, on_reject);
    }

    fn id(&self) -> u64 {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        id
    }

    /// Refuse a new user of an evicted informer: it no longer watches, and
    /// its cache would only go stale.
    fn live(&self) -> Result<(), JsValue> {
        if self.evicted.get() {
            return Err(KubeErrorInit::invalid(
                "this informer was dropped (no user for its factory's releasedCacheMs, or \
                 its factory is gone): ask a factory for its scope again",
            )
            .into());
        }
        Ok(())
    }

    fn subscribe(self: &Rc<Self>, listener: JsValue) -> Result<JsValue, JsValue> {
        self.live()?;
        let listener: Function = listener.dyn_into().map_err(|_| {
            JsValue::from(KubeErrorInit::invalid("the listener must be a function"))
        })?;
        let id = self.id();
        self.subscribers.borrow_mut().push((id, listener));
        self.pin();
        let weak = Rc::downgrade(self);
        Ok(unsubscriber(move || {
            if let Some(s) = weak.upgrade() {
                s.subscribers.borrow_mut().retain(|(i, _)| *i != id);
                s.unpin();
            }
        }))
    }

    /// A listener took hold of the informer.
    fn pin(self: &Rc<Self>) {
        let n = self.listeners.get() + 1;
        self.listeners.set(n);
        if n == 1 && !self.inf.is_stopped() {
            *self.pinned.borrow_mut() = Some(self.clone());
        }
        self.acquire();
    }

    /// Stopped: nothing more reaches its listeners, so it need not outlive
    /// its other users.
    fn unpin_all(&self) {
        let pin = self.pinned.borrow_mut().take();
        drop(pin);
    }

    /// A listener let go; the last one lets the informer be collected once
    /// nothing else holds it.
    fn unpin(self: &Rc<Self>) {
        let n = self.listeners.get().saturating_sub(1);
        self.listeners.set(n);
        let pin = if n == 0 {
            self.pinned.borrow_mut().take()
        } else {
            None
        };
        self.release();
        drop(pin);
    }

    /// A user took hold of the informer (a handle, subscription or handler).
    fn acquire(&self) {
        self.refs.set(self.refs.get() + 1);
        if let Some(t) = self.grace_task.borrow_mut().take() {
            t.abort();
        }
        if self.released.replace(false) {
            self.begin_catch_up();
            self.apply_pause();
        }
    }

    /// A user let go; the last one starts the grace period.
    fn release(self: &Rc<Self>) {
        let n = self.refs.get().saturating_sub(1);
        self.refs.set(n);
        // A stopped informer has nothing to pause: no timer is left behind
        // (in Node a pending one keeps the process alive).
        if n > 0 || self.grace_task.borrow().is_some() || self.inf.is_stopped() {
            return;
        }
        // Held by the task, not weakly: once the factory is gone (freed or
        // collected) the task is what still pauses and drops the informer,
        // which would otherwise watch for the life of the process.
        let me = self.clone();
        let grace = self.life.grace;
        let keep = self.life.keep_released;
        let task = spawn_local(async move {
            // Not a reason for Node to stay up either (a server-side render
            // releases informers it never started).
            idle_for(grace).await;
            if me.refs.get() != 0 {
                return;
            }
            me.released.set(true);
            me.apply_pause();
            // With its factory gone nobody can ask for it again: dropped now.
            if me.life.factory.upgrade().is_none() {
                me.evict();
                return;
            }
            let Some(keep) = keep else { return };
            // Not a reason for Node to stay up: the cache only matters to
            // a program that goes on.
            idle_for(keep).await;
            if me.refs.get() == 0 && me.released.get() {
                me.evict();
            }
        });
        *self.grace_task.borrow_mut() = Some(task);
    }

    /// Drop the informer from its factory (nobody held it for the factory's
    /// `releasedCacheMs`, or the factory is gone): its cache goes, and its
    /// scope is made anew when asked for again.
    fn evict(&self) {
        self.evicted.set(true);
        // Called from the grace task too, which returns right after.
        self.end_grace();
        if let Some(p) = &self.persist {
            p.untrack(&self.inf);
        }
        match self.life.factory.upgrade() {
            Some(f) => {
                f.forget(&self.inf);
            }
            None => self.inf.stop(),
        }
        self.joined.notify_waiters();
    }

    /// Drop a pending grace period (the informer stopped).
    fn end_grace(&self) {
        if let Some(t) = self.grace_task.borrow_mut().take() {
            t.abort();
        }
    }

    /// Whether diffs are being held (a resume's catch-up, or a relist
    /// that `flush` has yet to see or is holding).
    fn holding(&self) -> bool {
        self.catching_up.get() || self.inf.status().with(|s| s.relists) != self.relists_seen.get()
    }

    /// `objs` as subscribers know them while diffs are held: without the
    /// objects added since the last diff. A relist applies what it listed
    /// before the deletes of what is gone, so a snapshot taken from the
    /// store in between would show both populations.
    fn as_told(&self, objs: &mut Vec<KubeObject>) {
        if !self.holding() {
            return;
        }
        let changes = self.changes.borrow();
        if changes.any_new() {
            objs.retain(|o| crate::cache::object_key(o).map_or(true, |k| !changes.is_new(&k)));
        }
    }

    fn begin_catch_up(&self) {
        self.catching_up.set(true);
        self.catching_since.set(js_sys::Date::now());
    }

    /// Watch unless released or hidden.
    fn apply_pause(&self) {
        if self.released.get() || self.life.hidden.get() {
            self.inf.pause();
        } else {
            self.inf.resume();
        }
    }

    fn report_failure(&self, f: &Failure) {
        let err = KubeErrorInit {
            message: format!("{} ({})", f.message, f.key),
            reason: f.reason.clone(),
            ..Default::default()
        }
        .into_js();
        let _ = Reflect::set(&err, &"key".into(), &f.key.as_str().into());
        if !self.tell_error_listeners(&err) {
            report("kubewasm: an informer skipped an object", &err);
        }
    }

    fn report_error(&self, err: &JsValue) {
        if !self.tell_error_listeners(err) {
            report("kubewasm: an informer handler threw", err);
        }
    }

    /// A list or watch that failed (the informer backs off and retries, as
    /// `status` shows): to the `error` listeners. With none, the first
    /// failure since the informer last watched goes to the console as a
    /// warning (client-go logs every one; an offline page would fill the
    /// console with those), so a misconfigured informer is not silent.
    fn report_list_watch_error(&self, e: &crate::rest::Error) {
        if !self.errors.borrow().is_empty() {
            self.tell_error_listeners(&from_rest(e));
        } else if !self.warned.replace(true) {
            web_sys::console::warn_2(
                &JsValue::from_str(&format!(
                    "kubewasm: the informer of {} cannot list or watch; it retries with \
                     backoff and warns again only after it has watched. Add an \
                     on('error') listener to handle failures; status.lastError holds \
                     the latest.",
                    self.described
                )),
                &from_rest(e),
            );
        }
    }

    /// The informer watches: a later failure warns again.
    fn watching(&self) {
        self.warned.set(false);
    }

    /// Call every `error` listener with `err`; false when there is none.
    fn tell_error_listeners(&self, err: &JsValue) -> bool {
        let listeners: Vec<Function> = self
            .errors
            .borrow()
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        let any = !listeners.is_empty();
        for f in listeners {
            match f.call1(&JsValue::NULL, err) {
                Err(e) => report("kubewasm: an error listener threw", &e),
                // An `async` error listener's rejection goes to the console.
                Ok(v) if v.is_object() => catch_with(&v, &console_on_reject()),
                Ok(_) => {}
            }
        }
        any
    }

    fn record(self: &Rc<Self>, key: &str, kind: ChangeKind) {
        if self.changes.borrow_mut().record(key, kind) {
            let me = self.clone();
            on_next_frame(move || me.flush());
        }
    }

    fn flush(self: &Rc<Self>) {
        if self.warm.get() {
            // A warm start: the stored copy goes out as one diff once it is
            // applied; what the watch or a relist brings next as another.
            if self.catching_since.get() == 0.0 {
                self.catching_since.set(js_sys::Date::now());
            }
            let waited = js_sys::Date::now() - self.catching_since.get();
            if self.inf.queued_deltas() > 0 && !self.inf.is_stopped() && waited < MAX_CATCH_UP_MS {
                let me = self.clone();
                on_next_frame(move || me.flush());
                return;
            }
            self.warm.set(false);
            self.deliver();
            self.begin_catch_up();
            return;
        }
        // A hold already under way keeps its start: retried lists must not
        // stretch it past `MAX_CATCH_UP_MS`.
        let relists = self.inf.status().with(|s| s.relists);
        if relists != self.relists_seen.replace(relists) && !self.catching_up.get() {
            self.begin_catch_up();
        }
        if self.catching_up.get() {
            let st = self.inf.status_snapshot();
            let caught_up = st.phase != crate::cache::Phase::Listing
                && st.phase != crate::cache::Phase::Paused
                && st.phase != crate::cache::Phase::Backoff
                && self.inf.queued_deltas() == 0;
            let waited = js_sys::Date::now() - self.catching_since.get();
            if !caught_up && !self.inf.is_stopped() && waited < MAX_CATCH_UP_MS {
                let me = self.clone();
                on_next_frame(move || me.flush());
                return;
            }
            self.catching_up.set(false);
        }
        self.deliver();
    }

    /// Send the changes recorded so far to every subscriber as one diff.
    fn deliver(self: &Rc<Self>) {
        let mut cancelled = Vec::new();
        let diff = self.changes.borrow_mut().flush(&mut cancelled);
        let subs: Vec<Function> = self
            .subscribers
            .borrow()
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        // With no subscriber (handlers only) the flush still moved the
        // version on; nobody reads the diff.
        let js = (!diff.is_empty() && !subs.is_empty()).then(|| diff_to_js(&diff));
        // Every key the flush covers goes to the snapshots' log (moved, not
        // copied), those that cancelled out too (a snapshot read meanwhile
        // may hold one); before subscribers read snapshots.
        if self.diff_log.borrow().is_on() {
            let delivered = !diff.is_empty();
            let Diff {
                added,
                updated,
                removed,
                version,
            } = diff;
            let mut touched = cancelled;
            touched.extend(added.into_iter().chain(updated).chain(removed));
            let n = self.inf.indexer().len();
            self.diff_log
                .borrow_mut()
                .push(version, delivered, touched, n);
        }
        let Some(js) = js else {
            return;
        };
        let me = Rc::downgrade(self);
        for f in subs {
            handled(&me, f.call1(&JsValue::NULL, &js));
        }
    }

    /// Add an `on()` handler to the shared listener. It first receives the
    /// cache as it is now (an `add` handler) and then every change applied
    /// after this call, in order.
    fn join(self: &Rc<Self>, kind: EventKind, f: Function) -> Result<u64, JsValue> {
        let stopped = || JsValue::from(KubeErrorInit::invalid("the informer has stopped"));
        if self.group.borrow().is_none() {
            let entries: Rc<RefCell<Rc<Vec<Rc<OnEntry>>>>> = Rc::default();
            let handler = group_handler(Rc::downgrade(self), entries.clone());
            let reg = self
                .inf
                .add_listener_without_replay(handler)
                .map_err(|_| stopped())?;
            *self.group.borrow_mut() = Some(Group { reg, entries });
        }
        let group = self.group.borrow();
        let group = group.as_ref().ok_or_else(stopped)?;
        let entry = Rc::new(OnEntry {
            id: self.id(),
            kind,
            f,
            active: Cell::new(false),
            removed: Cell::new(false),
        });
        {
            let mut list = group.entries.borrow_mut();
            let mut next: Vec<Rc<OnEntry>> = list.iter().cloned().collect();
            next.push(entry.clone());
            *list = Rc::new(next);
        }
        if kind == EventKind::Add && self.inf.is_started() {
            let objs = self.inf.indexer().list();
            for chunk in objs.chunks(REPLAY_CHUNK) {
                let (e, chunk, weak) = (entry.clone(), chunk.to_vec(), Rc::downgrade(self));
                group.reg.enqueue(Box::new(move || {
                    for o in &chunk {
                        if e.removed.get() {
                            return;
                        }
                        let initial = JsValue::TRUE;
                        handled(&weak, e.f.call2(&JsValue::NULL, &to_js(o), &initial));
                    }
                }));
            }
        }
        let (e, weak) = (entry.clone(), Rc::downgrade(self));
        group.reg.enqueue(Box::new(move || {
            e.active.set(true);
            if let Some(s) = weak.upgrade() {
                s.joined.notify_waiters();
            }
        }));
        Ok(entry.id)
    }

    /// Remove an `on()` handler; the shared listener goes with the last one.
    fn leave(&self, id: u64) {
        let mut group = self.group.borrow_mut();
        let Some(g) = group.as_ref() else { return };
        let empty = {
            let mut list = g.entries.borrow_mut();
            let mut next: Vec<Rc<OnEntry>> = Vec::with_capacity(list.len());
            for e in list.iter() {
                if e.id == id {
                    e.removed.set(true);
                } else {
                    next.push(e.clone());
                }
            }
            let empty = next.is_empty();
            *list = Rc::new(next);
            empty
        };
        if empty {
            if let Some(g) = group.take() {
                g.reg.remove();
            }
        }
        drop(group);
        self.joined.notify_waiters();
    }

    /// What `waitForSync` waits for: the informer, then every listener and
    /// `on()` handler registered so far.
    fn wait_for_handlers(self: &Rc<Self>) -> impl std::future::Future<Output = ()> {
        let inf = self.inf.clone();
        let mut regs: Vec<Registration> =
            self.regs.borrow().iter().map(|(_, r)| r.clone()).collect();
        let mut entries = Vec::new();
        if let Some(g) = self.group.borrow().as_ref() {
            regs.push(g.reg.clone());
            entries.extend(g.entries.borrow().iter().cloned());
        }
        let joined = self.joined.clone();
        async move {
            if !inf.wait_for_sync().await {
                return;
            }
            for r in &regs {
                r.wait_for_sync().await;
            }
            for e in &entries {
                loop {
                    let wait = joined.notified();
                    if e.active.get() || e.removed.get() || inf.is_stopped() {
                        break;
                    }
                    wait.await;
                }
            }
        }
    }

    fn snapshot(&self) -> Array {
        let mut snap = self.snapshot.borrow_mut();
        self.snapshot_of(&mut snap, |_| true, || self.inf.indexer().list())
    }

    /// `snap` brought up to the current diff version: patched from the diff
    /// log when it can be, else built anew from `list()` (the objects
    /// `admits` takes, in any order).
    fn snapshot_of(
        &self,
        snap: &mut Option<Snapshot>,
        admits: impl Fn(&KubeObject) -> bool,
        list: impl FnOnce() -> Vec<KubeObject>,
    ) -> Array {
        let changes = self.changes.borrow();
        let version = changes.version();
        if let Some(s) = snap.as_mut() {
            if s.version == version {
                return s.array.clone();
            }
            // While a relist is held, `as_told` decides: built anew.
            if !self.holding() {
                let log = self.diff_log.borrow();
                let cache = self.inf.indexer();
                if let Some(arr) = s.patch(version, &log, changes.pending_keys(), cache, admits) {
                    return arr;
                }
            }
        }
        drop(changes);
        let mut objs = list();
        self.as_told(&mut objs);
        sort_by_key(&mut objs);
        let built = Snapshot::build(version, &objs, snap.as_ref().map(|s| &s.array));
        self.diff_log.borrow_mut().start(version);
        let arr = built.array.clone();
        *snap = Some(built);
        arr
    }
}

/// The deleted object as JS: its final state, or, when only the key is
/// known, a frozen `{ metadata: { namespace?, name } }` made from it, so a
/// handler can still find what to remove.
fn deleted_js(d: &DeltaObject) -> JsValue {
    match d {
        DeltaObject::Object(o) => to_js(o),
        DeltaObject::Tombstone(t) => match &t.obj {
            Some(o) => to_js(o),
            None => {
                let (namespace, name) = match t.key.split_once('/') {
                    Some((ns, name)) => (Some(ns), name),
                    None => (None, t.key.as_str()),
                };
                let meta = Object::new();
                if let Some(ns) = namespace {
                    let _ = Reflect::set(&meta, &"namespace".into(), &ns.into());
                }
                let _ = Reflect::set(&meta, &"name".into(), &name.into());
                let obj = Object::new();
                let _ = Reflect::set(&obj, &"metadata".into(), &Object::freeze(&meta));
                Object::freeze(&obj).into()
            }
        },
    }
}

fn kind_of(n: &Notification) -> EventKind {
    match n {
        Notification::Add(..) => EventKind::Add,
        Notification::Update(..) => EventKind::Update,
        Notification::Delete(_) => EventKind::Delete,
    }
}

/// Call one JS handler with a notification's arguments.
fn call_js(f: &Function, n: &Notification) -> Result<JsValue, JsValue> {
    match n {
        Notification::Add(o, initial) => {
            f.call2(&JsValue::NULL, &to_js(o), &JsValue::from_bool(*initial))
        }
        Notification::Update(old, new) => f.call2(&JsValue::NULL, &to_js(old), &to_js(new)),
        Notification::Delete(d) => f.call2(
            &JsValue::NULL,
            &deleted_js(d),
            &JsValue::from_bool(matches!(d, DeltaObject::Tombstone(_))),
        ),
    }
}

/// What a handler's call came to: a throw is reported now, and a returned
/// promise (an `async` handler) has its rejection reported when it settles.
/// Left alone, that rejection would be unhandled, which ends a Node process.
/// The informer does not wait for the promise: handlers are notified in
/// order, not serialized.
fn handled(state: &std::rc::Weak<State>, outcome: Result<JsValue, JsValue>) {
    // Most handlers return `undefined`: that case upgrades nothing.
    match outcome {
        Ok(v) if !v.is_object() => {}
        Ok(v) => match state.upgrade() {
            Some(s) => s.catch_rejection(&v),
            None => catch_with(&v, &console_on_reject()),
        },
        Err(e) => match state.upgrade() {
            Some(s) => s.report_error(&e),
            None => report("kubewasm: an informer handler threw", &e),
        },
    }
}

/// Have `on_reject` called with `v`'s rejection: any thenable is adopted
/// (a `then` that throws rejects), anything else settles at once.
fn catch_with(v: &JsValue, on_reject: &JsValue) {
    let p = js_sys::Promise::resolve(v);
    if let Ok(catch) = Reflect::get(&p, &"catch".into()).and_then(|f| f.dyn_into::<Function>()) {
        let _ = catch.call1(&p, on_reject);
    }
}

thread_local! {
    /// Reports a rejection no informer is left to take to the console (one
    /// function for the module's life).
    static CONSOLE_ON_REJECT: JsValue = Closure::<dyn FnMut(JsValue)>::new(|e: JsValue| {
        report("kubewasm: a listener's promise rejected", &e);
    })
    .into_js_value();
}

fn console_on_reject() -> JsValue {
    CONSOLE_ON_REJECT.with(JsValue::clone)
}

/// The shared listener's handler: each notification goes to the active
/// `on()` handlers of its kind, in registration order.
fn group_handler(
    state: std::rc::Weak<State>,
    entries: Rc<RefCell<Rc<Vec<Rc<OnEntry>>>>>,
) -> Handler {
    Rc::new(move |n: Notification| {
        let list = entries.borrow().clone();
        let kind = kind_of(&n);
        for e in list.iter() {
            if e.kind != kind || !e.active.get() || e.removed.get() {
                continue;
            }
            handled(&state, call_js(&e.f, &n));
        }
        None
    })
}

/// In snapshot order: by namespace, then name.
fn sort_by_key(objs: &mut [KubeObject]) {
    crate::rt::sort::sort_by(objs, |a, b| {
        (a.namespace(), a.name()).cmp(&(b.namespace(), b.name()))
    });
}

#[wasm_bindgen(module = "/src/js/objects.js")]
extern "C" {
    #[wasm_bindgen(js_name = splitLines)]
    fn split_lines(text: &str, n: u32) -> Array;
}

/// `keys` as a JS array of strings, crossing as one joined string (the
/// diffs of a flood carry hundreds of keys each).
fn keys_to_js(keys: &[String]) -> Array {
    let n = u32::try_from(keys.len()).ok();
    // A server's object names never hold a newline; one that does goes key
    // by key rather than split wrong.
    match n {
        Some(n) if !keys.iter().any(|k| k.contains('\n')) => {
            let mut joined = String::with_capacity(keys.iter().map(|k| k.len() + 1).sum());
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    joined.push('\n');
                }
                joined.push_str(k);
            }
            split_lines(&joined, n)
        }
        _ => keys.iter().map(|s| JsValue::from_str(s)).collect(),
    }
}

fn diff_to_js(d: &Diff) -> JsValue {
    let o = Object::new();
    let list = |v: &[String]| keys_to_js(v);
    let _ = Reflect::set(&o, &"added".into(), &list(&d.added));
    let _ = Reflect::set(&o, &"updated".into(), &list(&d.updated));
    let _ = Reflect::set(&o, &"removed".into(), &list(&d.removed));
    let _ = Reflect::set(&o, &"version".into(), &JsValue::from_f64(d.version as f64));
    o.into()
}

fn status_to_js(s: &InformerStatus) -> JsValue {
    let o = Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = Reflect::set(&o, &k.into(), &v);
    };
    // Until a watch or list confirms a restored copy, the data is stored,
    // not live, whatever the reflector is doing meanwhile.
    let phase = match s.phase {
        crate::cache::Phase::Listing
        | crate::cache::Phase::Backoff
        | crate::cache::Phase::Watching
            if s.stored_at_ms.is_some() =>
        {
            crate::cache::Phase::Stored
        }
        p => p,
    };
    set("phase", phase.as_str().into());
    if let Some(t) = s.next_retry_at_ms {
        set("nextRetryAt", t.into());
    }
    set("listed", (s.listed as f64).into());
    if let Some(t) = s.list_total {
        set("listTotal", (t as f64).into());
    }
    set("relists", (s.relists as f64).into());
    set("reconnects", (s.reconnects as f64).into());
    if let Some(t) = s.last_event_at_ms {
        set("lastEventAt", t.into());
    }
    if let Some(err) = &s.last_error {
        let e = Object::new();
        let _ = Reflect::set(&e, &"message".into(), &err.message.as_str().into());
        let _ = Reflect::set(&e, &"code".into(), &JsValue::from_f64(err.code as f64));
        let _ = Reflect::set(&e, &"reason".into(), &err.reason.as_str().into());
        if let Some(k) = &err.key {
            let _ = Reflect::set(&e, &"key".into(), &k.as_str().into());
        }
        let _ = Reflect::set(&e, &"at".into(), &err.at_ms.into());
        set("lastError", e.into());
    }
    set("skipped", (s.skipped as f64).into());
    if let Some(t) = &s.transport {
        set("transport", t.as_str().into());
    }
    if let Some(r) = &s.transport_reason {
        set("transportReason", r.as_str().into());
    }
    if let Some(w) = &s.warning {
        set("warning", w.as_str().into());
    }
    if s.stalled(js_sys::Date::now()) {
        set("stalled", true.into());
        if s.warning.is_none() {
            set(
                "warning",
                "no watch activity for longer than the watch's own idle limit: the host stopped \
                 running this informer (in workerd, an informer outlives the request that started \
                 it; keep it in a Durable Object)"
                    .into(),
            );
        }
    }
    if let Some(t) = s.stored_at_ms {
        set("storedAt", t.into());
    }
    if let Some(h) = &s.held_back {
        let o = Object::new();
        let _ = Reflect::set(&o, &"pending".into(), &(h.pending as f64).into());
        let _ = Reflect::set(&o, &"limit".into(), &(h.limit as f64).into());
        set("heldBack", o.into());
    }
    set("eventsApplied", (s.events_applied as f64).into());
    set("cached", (s.cached as f64).into());
    set("synced", s.synced.into());
    o.into()
}

/// A JS function as an index function (exceptions become index errors).
/// `undefined` or `null` means "not indexed" (client-go's nil) and one
/// string is one value, so `o => o.spec.nodeName` works as users write it.
fn js_index_func(f: Function) -> IndexFunc {
    Rc::new(move |o: &KubeObject| {
        let v = f
            .call1(&JsValue::NULL, &to_js(o))
            .map_err(|e| format!("index function threw: {}", options::thrown_text(&e)))?;
        if v.is_undefined() || v.is_null() {
            return Ok(Vec::new());
        }
        if let Some(s) = v.as_string() {
            return Ok(vec![s]);
        }
        let arr: Array = v.dyn_into().map_err(|_| {
            "index function must return an array of strings, a string, undefined or null"
                .to_string()
        })?;
        arr.iter()
            .map(|x| {
                x.as_string()
                    .ok_or_else(|| "index values must be strings".to_string())
            })
            .collect()
    })
}

/// An optional array of strings option.
fn string_list(opts: &JsValue, name: &str) -> Result<Vec<String>, JsValue> {
    let Some(v) = options::prop(opts, name) else {
        return Ok(Vec::new());
    };
    let bad = || {
        JsValue::from(KubeErrorInit::invalid(format!(
            "`{name}` must be an array of strings"
        )))
    };
    let arr: Array = v.dyn_into().map_err(|_| bad())?;
    arr.iter().map(|x| x.as_string().ok_or_else(bad)).collect()
}

fn add_label_indexes(inf: &SharedIndexInformer, labels: &[String]) -> Result<(), JsValue> {
    for l in labels {
        crate::cache::validate_label_key(l)
            .map_err(|e| JsValue::from(KubeErrorInit::invalid(format!("labelIndexes: {e}"))))?;
        inf.indexer()
            .add_label_index(l)
            .map_err(|e| JsValue::from(KubeErrorInit::invalid(e.to_string())))?;
    }
    Ok(())
}

fn js_transform(f: Function) -> Transformer {
    Rc::new(move |o: KubeObject| {
        // Transform a mutable copy: the cached object itself is frozen.
        let copy = js_sys::JSON::parse(o.raw_str()).map_err(|e| format!("{e:?}"))?;
        let out = f
            .call1(&JsValue::NULL, &copy)
            .map_err(|e| format!("transform threw: {}", options::thrown_text(&e)))?;
        let text = js_sys::JSON::stringify(&out).map_err(|e| format!("{e:?}"))?;
        let text = text.as_string().unwrap_or_default();
        KubeObject::from_json(text.as_bytes()).map_err(|e| e.to_string())
    })
}

/// The factory's `releasedCacheMs`: `None` (keep every cache) for
/// `Infinity`, five minutes when absent.
fn released_cache_ms(opts: &JsValue) -> Result<Option<std::time::Duration>, JsValue> {
    if options::prop(opts, "releasedCacheMs").and_then(|v| v.as_f64()) == Some(f64::INFINITY) {
        return Ok(None);
    }
    let ms = options::number(opts, "releasedCacheMs")?.unwrap_or(300_000.0);
    Ok(Some(options::millis(ms)))
}

#[wasm_bindgen]
impl InformerFactory {
    /// A factory over a client. In a page, informers stop watching while
    /// the page has been hidden for `hiddenPauseMs`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        client: &KubeClient,
        #[wasm_bindgen(unchecked_param_type = "InformerFactoryOptions")] opts: JsValue,
    ) -> Result<InformerFactory, JsValue> {
        options::known_members(&opts, FACTORY_OPTIONS, "factory")?;
        let ms = |name: &str, default: f64| -> Result<std::time::Duration, JsValue> {
            Ok(options::millis(
                options::number(&opts, name)?.unwrap_or(default),
            ))
        };
        let factory =
            SharedInformerFactory::new(client.inner().clone(), InformerOptions::default());
        let life = Rc::new(Lifecycle {
            grace: ms("releaseGraceMs", 30_000.0)?,
            keep_released: released_cache_ms(&opts)?,
            hidden_delay: ms("hiddenPauseMs", 60_000.0)?,
            hidden: Cell::new(false),
            hide_task: RefCell::new(None),
            factory: factory.downgrade(),
            // Frozen: every status hands out this one object.
            host: options::prop(&opts, "host")
                .filter(JsValue::is_object)
                .map(|h| Object::freeze(&Object::assign(&Object::new(), h.unchecked_ref())).into())
                .unwrap_or(JsValue::UNDEFINED),
        });
        let on_visibility = document().and_then(|doc| {
            let weak = Rc::downgrade(&life);
            let f: Function = Closure::<dyn Fn()>::new(move || {
                if let Some(l) = weak.upgrade() {
                    l.set_visible(!page_hidden());
                }
            })
            .into_js_value()
            .unchecked_into();
            let add: Function = Reflect::get(&doc, &"addEventListener".into())
                .ok()?
                .dyn_into()
                .ok()?;
            add.call2(&doc, &"visibilitychange".into(), &f).ok()?;
            Some(f)
        });
        if page_hidden() {
            life.set_visible(false);
        }
        let persist = Persist::from_options(&opts, client.inner())?;
        Ok(InformerFactory {
            factory,
            life,
            on_visibility,
            persist,
        })
    }

    /// Tell the factory whether the page is visible: in a worker, which has
    /// no `document`, forward the page's `visibilitychange` here. Hidden for
    /// longer than `hiddenPauseMs`, informers stop watching; visible again,
    /// they resume from their last resourceVersion.
    #[wasm_bindgen(js_name = setVisible)]
    pub fn set_visible(&self, visible: bool) {
        self.life.set_visible(visible);
    }

    /// The informer for these options: one per resource, namespace and
    /// selectors. Asking again for a scope with options that shape the cache
    /// differently throws a `KubeError` with reason `OptionsConflict`;
    /// indexers under new names and `labelIndexes` are added to the shared
    /// informer. Started at once
    /// when the factory was started; otherwise call `start()`.
    #[wasm_bindgen(unchecked_return_type = "Informer")]
    pub fn informer(
        &self,
        #[wasm_bindgen(unchecked_param_type = "InformerOptions")] opts: JsValue,
    ) -> Result<Informer, JsValue> {
        options::known_members(&opts, INFORMER_OPTIONS, "informer")?;
        let resource = super::discovery::api_resource(&opts)?;
        // A string is kept verbatim; an object is sent in canonical form.
        let label_selector = label_selector_query(&opts, "labelSelector")?;
        if let Some(s) = &label_selector {
            LabelSelector::parse(s).map_err(selector_error)?;
        }
        let field_selector =
            options::string(&opts, "fieldSelector")?.filter(|s| !s.trim().is_empty());
        if let Some(s) = &field_selector {
            FieldSelector::parse(s).map_err(selector_error)?;
        }
        let scope = ResourceScope {
            resource,
            namespace: options::string(&opts, "namespace")?.filter(|n| !n.is_empty()),
            label_selector,
            field_selector,
            metadata_only: options::prop(&opts, "metadataOnly")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
        };
        let label_indexes = string_list(&opts, "labelIndexes")?;
        let shape = Shape::read(&opts)?;
        if let Some(state) = self
            .factory
            .attachment(&scope)
            .and_then(|a| a.downcast::<State>().ok())
        {
            if let Some(option) = state.shape.conflict(&shape) {
                return Err(options_conflict(&scope, option).into());
            }
            let added = state.shape.new_indexers(&shape);
            if !added.is_empty() {
                let ix: Indexers = added
                    .iter()
                    .map(|(n, f)| (n.clone(), js_index_func(f.clone())))
                    .collect();
                state.inf.add_indexers(ix).map_err(indexer_error)?;
                state.shape.record_indexers(&added);
            }
            add_label_indexes(&state.inf, &label_indexes)?;
            return Ok(Informer::held(state.clone()));
        }
        let mut io = InformerOptions {
            reflector: ReflectorOptions::default(),
            ..Default::default()
        };
        io.reflector.resync_period = shape.resync_ms.and_then(options::resync_period);
        let bo = &mut io.reflector.backoff;
        if let Some(ms) = shape.backoff_initial_ms {
            bo.initial = options::millis(ms);
        }
        if let Some(ms) = shape.backoff_cap_ms {
            bo.max = options::millis(ms);
        }
        io.max_pending = shape.max_backlog.map(|n| n.min(u32::MAX as f64) as usize);
        io.queue = shape.queue;
        let user = shape.transform.clone().map(js_transform);
        let base = if shape.metadata_only {
            Some(partial_object_metadata())
        } else if shape.strip_managed_fields {
            Some(strip_managed_fields())
        } else {
            None
        };
        io.transform = match (base, user) {
            (Some(a), Some(b)) => Some(Rc::new(move |o| b(a(o)?)) as Transformer),
            (a, b) => a.or(b),
        };
        io.indexers = shape
            .indexers
            .borrow()
            .iter()
            .map(|(n, f)| (n.clone(), js_index_func(f.clone())))
            .collect();
        let key = SharedInformerFactory::scope_key(&scope);
        let stored_as = shape.stored_key(&key);
        let family = shape.stored_family(&key);
        let warm: Rc<Cell<bool>> = Rc::default();
        if let Some(p) = &self.persist {
            if p.is_enabled() {
                io.seed = Some(p.seed_source(&stored_as, warm.clone()));
            }
        }
        let mut made: Option<Rc<State>> = None;
        let life = self.life.clone();
        let persist = self.persist.clone();
        let inf = self
            .factory
            .informer_with(scope.clone(), Some(io), |inf| {
                let state = State::new(inf.clone(), shape, life, warm, persist, &scope);
                // A watch the server accepted, not a list that succeeded: an
                // informer whose watches are refused must not warn every cycle.
                let weak = Rc::downgrade(&state);
                let opened = Cell::new(0);
                inf.status().subscribe(move |s| {
                    if s.watches_opened != opened.replace(s.watches_opened) {
                        if let Some(state) = weak.upgrade() {
                            state.watching();
                        }
                    }
                });
                let weak = Rc::downgrade(&state);
                // Not started yet: the handler is taken.
                let _ = inf.set_watch_error_handler(Rc::new(move |e: &crate::rest::Error| {
                    if let Some(s) = weak.upgrade() {
                        s.report_list_watch_error(e);
                    }
                }));
                made = Some(state.clone());
                Some(state as Rc<dyn Any>)
            })
            .map_err(|e| factory_error(&scope, &e))?;
        // A new entry always runs `attach`; an existing one was found above.
        let state = made.ok_or_else(|| options_conflict(&scope, "options"))?;
        add_label_indexes(&inf, &label_indexes)?;
        if let Some(p) = &self.persist {
            p.track(&inf, &stored_as, &family);
        }
        let weak = Rc::downgrade(&state);
        inf.status().on_failure(move |f| {
            if let Some(s) = weak.upgrade() {
                s.report_failure(f);
            }
        });
        // The keys of the next diff, collected as the cache applies them:
        // no notification is queued for them.
        let weak = Rc::downgrade(&state);
        inf.observe(Rc::new(move |key: &str, change: Applied<'_>| {
            if let Some(state) = weak.upgrade() {
                let kind = match change {
                    Applied::Added(_) => ChangeKind::Add,
                    Applied::Updated(..) => ChangeKind::Update,
                    Applied::Deleted(_) => ChangeKind::Delete,
                };
                state.record(key, kind);
            }
        }));
        if self.life.hidden.get() {
            state.apply_pause();
        }
        Ok(Informer::held(state))
    }

    /// Start every informer (and those created later).
    pub fn start(&self) {
        self.factory.start();
    }

    /// Stop writing to IndexedDB and delete every copy stored under the
    /// `persist` name (for every server and identity), e.g. at logout.
    /// Every other tab or worker persisting under the name stops writing
    /// too. Resolves at once without the `persist` option.
    #[wasm_bindgen(js_name = clearPersisted, unchecked_return_type = "Promise<void>")]
    pub fn clear_persisted(&self) -> Promise {
        let cleared = self.persist.as_ref().map(|p| p.clear());
        future_to_promise(async move {
            if let Some(p) = cleared {
                wasm_bindgen_futures::JsFuture::from(p).await?;
            }
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Resolves `true` when every informer the factory holds now has synced,
    /// or `false` once one of them stops first, or `signal` aborts, or
    /// `timeoutMs` passes (client-go's `WaitForCacheSync`). An informer
    /// stopped before the call is no longer the factory's.
    #[wasm_bindgen(js_name = waitForSync, unchecked_return_type = "Promise<boolean>")]
    pub fn wait_for_sync(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "SyncWaitOptions")] opts: Option<JsValue>,
    ) -> Promise {
        sync_wait_promise(opts, || self.factory.wait_for_sync())
    }

    /// Stop every informer and forget them (their listers keep the last
    /// state). The factory can be used again: informers asked for afterwards
    /// are new, and run once `start()` is called again.
    pub fn shutdown(&self) {
        self.remove_visibility_listener();
        if let Some(t) = self.life.hide_task.borrow_mut().take() {
            t.abort();
        }
        let all = states(&self.factory);
        self.factory.shutdown();
        if let Some(p) = &self.persist {
            p.stop();
        }
        for s in &all {
            s.end_grace();
            s.joined.notify_waiters();
            s.unpin_all();
        }
    }
}

impl InformerFactory {
    fn remove_visibility_listener(&self) {
        if let (Some(doc), Some(f)) = (document(), &self.on_visibility) {
            if let Some(remove) = Reflect::get(&doc, &"removeEventListener".into())
                .ok()
                .and_then(|v| v.dyn_into::<Function>().ok())
            {
                let _ = remove.call2(&doc, &"visibilitychange".into(), f);
            }
        }
    }
}

impl Drop for InformerFactory {
    /// Freed (`free()`, `Symbol.dispose`) or collected: nobody can ask for
    /// the informers nobody holds again, so they stop now; held ones run
    /// until released, then stop after their grace period as usual.
    fn drop(&mut self) {
        self.remove_visibility_listener();
        // Nothing tells the held ones of visibility any more: they watch.
        if let Some(t) = self.life.hide_task.borrow_mut().take() {
            t.abort();
        }
        self.life.hidden.set(false);
        for s in states(&self.factory) {
            if s.refs.get() == 0 {
                s.evict();
            } else {
                s.apply_pause();
            }
        }
    }
}

/// A reference to an informer held by a JS object (a lister or a view):
/// released when the object is freed or collected.
struct Hold(Rc<State>);

impl Hold {
    fn new(state: &Rc<State>) -> Hold {
        state.acquire();
        Hold(state.clone())
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A live, indexed cache of one resource.
#[wasm_bindgen]
pub struct Informer {
    state: Rc<State>,
    /// Whether this handle holds a reference (released once).
    held: Cell<bool>,
}

impl Informer {
    /// A handle that holds a reference to the informer.
    fn held(state: Rc<State>) -> Informer {
        state.acquire();
        Informer {
            state,
            held: Cell::new(true),
        }
    }
}

impl Drop for Informer {
    fn drop(&mut self) {
        if self.held.replace(false) {
            self.state.release();
        }
    }
}

#[wasm_bindgen]
impl Informer {
    /// Let go of this handle (also done by `free()` and `Symbol.dispose`).
    /// When the informer's last handle, subscription and handler are gone,
    /// it stops watching after the factory's `releaseGraceMs`, and its cache
    /// is kept for the factory's `releasedCacheMs`: a `factory.informer(...)`
    /// for the scope meanwhile resumes it from its last resourceVersion.
    /// After that the informer is dropped, and its old handles throw when
    /// asked for a new subscription, handler, view or lister. Idempotent.
    pub fn release(&self) {
        if self.held.replace(false) {
            self.state.release();
        }
    }

    /// Start listing and watching (idempotent).
    pub fn start(&self) {
        self.state.inf.start();
    }

    /// Stop for good: the watch is aborted and no timer or task remains.
    /// The factory lets go of it, as `shutdown` does of all: asking it for
    /// the same scope again makes a new informer, while this handle keeps the
    /// stopped one and its last cache.
    pub fn stop(&self) {
        let s = &self.state;
        s.end_grace();
        if let Some(p) = &s.persist {
            p.untrack(&s.inf);
        }
        if let Some(f) = s.life.factory.upgrade() {
            f.forget(&s.inf);
        }
        s.inf.stop();
        s.joined.notify_waiters();
        s.unpin_all();
    }

    /// Listen for `add` (obj), `update` (oldObj, newObj), `delete` (obj),
    /// `error` (err) or `status` (status). Returns an unsubscribe function;
    /// until it is called (or the informer is stopped) the listener holds
    /// the informer, even when nothing else of it is kept.
    /// Every `add`/`update`/`delete` handler of an informer shares one queue,
    /// so all of them observe changes in the order the cache applied them.
    /// An `add` handler registered after start first receives every cached
    /// object. A handler that throws, or returns a promise that rejects, is
    /// reported to `error` listeners (or the console) and does not affect
    /// the others. `error` listeners also
    /// receive a `KubeError` with the object's `key` for every object the
    /// cache could not apply (skipped, and the informer relists when that
    /// brings it back).
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn on(
        &self,
        #[wasm_bindgen(unchecked_param_type = "InformerEvent")] event: JsValue,
        #[wasm_bindgen(unchecked_param_type = "(first: KubeObject, second: KubeObject) => void")]
        handler: JsValue,
    ) -> Result<JsValue, JsValue> {
        self.state.live()?;
        let event = options::string_arg(&event, "event")?;
        let handler: Function = handler
            .dyn_into()
            .map_err(|_| JsValue::from(KubeErrorInit::invalid("the handler must be a function")))?;
        let state = self.state.clone();
        let cleanup: Box<dyn FnOnce()> = match event.as_str() {
            "error" => {
                let id = state.id();
                state.errors.borrow_mut().push((id, handler));
                let weak = Rc::downgrade(&state);
                Box::new(move || {
                    if let Some(s) = weak.upgrade() {
                        s.errors.borrow_mut().retain(|(i, _)| *i != id);
                    }
                })
            }
            "status" => {
                let inf = state.inf.clone();
                let h = handler.clone();
                let weak = Rc::downgrade(&state);
                let id = inf.status().subscribe(move |_s| {
                    if let Some(st) = weak.upgrade() {
                        let snap = st.status_js();
                        handled(&weak, h.call1(&JsValue::NULL, &snap));
                    }
                });
                let status = inf.status().clone();
                Box::new(move || status.unsubscribe(id))
            }
            "add" | "update" | "delete" => {
                let kind = match event.as_str() {
                    "add" => EventKind::Add,
                    "update" => EventKind::Update,
                    _ => EventKind::Delete,
                };
                let id = state.join(kind, handler)?;
                let weak = Rc::downgrade(&state);
                Box::new(move || {
                    if let Some(s) = weak.upgrade() {
                        s.leave(id);
                    }
                })
            }
            other => {
                return Err(
                    KubeErrorInit::invalid(format!("unknown informer event {other:?}")).into(),
                )
            }
        };
        // Every listener holds the informer until it unsubscribes.
        state.pin();
        let weak = Rc::downgrade(&state);
        Ok(unsubscriber(move || {
            cleanup();
            if let Some(s) = weak.upgrade() {
                s.unpin();
            }
        }))
    }

    /// Receive coalesced diffs, at most one per animation frame. Returns an
    /// unsubscribe function. A subscription holds the informer (see
    /// `release`), as an event listener holds its target: it keeps watching
    /// until the function is called or the informer is stopped, even when
    /// nothing else of it is kept.
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn subscribe(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(diff: Diff) => void")] listener: JsValue,
    ) -> Result<JsValue, JsValue> {
        self.state.subscribe(listener)
    }

    /// Every cached object, sorted by namespace and name; the same (frozen)
    /// array until a diff has been delivered. While a relist's diff is held,
    /// a snapshot built anew leaves out what the relist added so far, as
    /// the diffs do.
    #[wasm_bindgen(js_name = getSnapshot, unchecked_return_type = "readonly KubeObject[]")]
    pub fn get_snapshot(&self) -> Array {
        self.state.snapshot()
    }

    /// A filtered view with the same snapshot contract. Throws `KubeError`
    /// (with `position`) for a malformed selector.
    #[wasm_bindgen(unchecked_return_type = "ScopedView")]
    pub fn scoped(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ListFilter")] filter: JsValue,
    ) -> Result<ScopedView, JsValue> {
        self.state.live()?;
        let (namespace, selector, fields) = list_filter(&filter)?;
        let namespace = index_namespace(namespace, &fields, self.state.cluster_scoped);
        Ok(ScopedView {
            state: self.state.clone(),
            namespace,
            selector,
            fields,
            own: RefCell::new(None),
            _hold: Hold::new(&self.state),
        })
    }

    /// Whether the initial list has reached the cache.
    #[wasm_bindgen(getter, js_name = hasSynced)]
    pub fn has_synced(&self) -> bool {
        self.state.inf.has_synced()
    }

    /// Resolves `true` once the initial list is in the cache and every
    /// handler registered before this call (`on`, `addEventHandler`,
    /// `subscribe`) has received it, or `false` once the informer stops
    /// first, or `signal` aborts, or `timeoutMs` passes. A handler registered
    /// later gets the cache as adds on its own; wait for it through its
    /// registration.
    #[wasm_bindgen(js_name = waitForSync, unchecked_return_type = "Promise<boolean>")]
    pub fn wait_for_sync(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "SyncWaitOptions")] opts: Option<JsValue>,
    ) -> Promise {
        sync_wait_promise(opts, || {
            let wait = self.state.wait_for_handlers();
            let inf = self.state.inf.clone();
            async move {
                wait.await;
                inf.has_synced()
            }
        })
    }

    /// Register `add`, `update` and `delete` handlers as one listener
    /// (client-go's `AddEventHandler`): they observe changes in the order
    /// the cache applied them. Registered after start, it first receives
    /// every cached object as an add. Returns the registration, which holds
    /// the informer until `remove()` (or a stop), kept or not.
    #[wasm_bindgen(js_name = addEventHandler)]
    pub fn add_event_handler(
        &self,
        #[wasm_bindgen(unchecked_param_type = "EventHandlers")] handlers: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "HandlerOptions")] options: Option<JsValue>,
    ) -> Result<EventRegistration, JsValue> {
        self.state.live()?;
        let resync = match options.filter(|o| !o.is_undefined() && !o.is_null()) {
            Some(o) => {
                options::known_members(&o, &["resyncMs"], "addEventHandler")?;
                options::number(&o, "resyncMs")?
                    .map(|ms| options::resync_period(ms).unwrap_or_default())
            }
            None => None,
        };
        let add = options::function(&handlers, "add")?;
        let update = options::function(&handlers, "update")?;
        let delete = options::function(&handlers, "delete")?;
        if add.is_none() && update.is_none() && delete.is_none() {
            return Err(KubeErrorInit::invalid(
                "addEventHandler needs at least one of `add`, `update`, `delete`",
            )
            .into());
        }
        let weak = Rc::downgrade(&self.state);
        let h: Handler = Rc::new(move |n: Notification| {
            let f = match &n {
                Notification::Add(..) => add.as_ref(),
                Notification::Update(..) => update.as_ref(),
                Notification::Delete(_) => delete.as_ref(),
            };
            if let Some(f) = f {
                handled(&weak, call_js(f, &n));
            }
            None
        });
        let inf = &self.state.inf;
        let reg = match resync {
            Some(period) => inf.add_event_handler_with_resync(h, period),
            None => inf.add_event_handler(h),
        }
        .map_err(|e| JsValue::from(KubeErrorInit::invalid(e.to_string())))?;
        let id = self.state.id();
        self.state.regs.borrow_mut().push((id, reg.clone()));
        self.state.pin();
        Ok(EventRegistration {
            reg,
            id,
            state: Rc::downgrade(&self.state),
            held: Cell::new(true),
        })
    }

    /// Current status.
    #[wasm_bindgen(getter, unchecked_return_type = "InformerStatus")]
    pub fn status(&self) -> JsValue {
        self.state.status_js()
    }

    /// Approximate bytes the cached objects hold in wasm memory (raw JSON
    /// plus parsed metadata), for memory budgets such as an edge isolate's.
    #[wasm_bindgen(getter, js_name = cachedBytes)]
    pub fn cached_bytes(&self) -> f64 {
        let mut total = 0usize;
        self.state
            .inf
            .indexer()
            .for_each(|_, o| total += o.approx_heap_bytes());
        total as f64
    }

    /// A lister over the cache. Throws once the informer has been dropped
    /// (see `release`).
    pub fn lister(&self) -> Result<Lister, JsValue> {
        self.state.live()?;
        Ok(Lister {
            lister: self.state.inf.lister(),
            cluster_scoped: self.state.cluster_scoped,
            namespace: self.state.namespace.clone(),
            plural: self.state.plural.clone(),
            _hold: Hold::new(&self.state),
        })
    }

    /// Add an index: `fn(obj)` returns the values the object is listed under.
    /// The same name with the same function again does nothing; with another
    /// function it throws `KubeError` with reason `OptionsConflict`.
    #[wasm_bindgen(js_name = addIndexer)]
    pub fn add_indexer(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "IndexFunc")] f: JsValue,
    ) -> Result<(), JsValue> {
        let name = options::string_arg(&name, "name")?;
        if name.is_empty() {
            return Err(KubeErrorInit::invalid("an index needs a name").into());
        }
        let f: Function = f.dyn_into().map_err(|_| {
            JsValue::from(KubeErrorInit::invalid(
                "the index function must be a function",
            ))
        })?;
        // The same function again is the index there already, as asking the
        // factory again with it is.
        let known = self
            .state
            .shape
            .indexers
            .borrow()
            .iter()
            .any(|(n, g)| *n == name && Object::is(g, &f));
        if known {
            return Ok(());
        }
        let mut ix = Indexers::new();
        ix.insert(name.clone(), js_index_func(f.clone()));
        self.state.inf.add_indexers(ix).map_err(indexer_error)?;
        self.state.shape.record_indexers(&[(name, f)]);
        Ok(())
    }
}

/// One `addEventHandler` registration (client-go's `ResourceEventHandlerRegistration`).
#[wasm_bindgen]
pub struct EventRegistration {
    reg: Registration,
    id: u64,
    state: std::rc::Weak<State>,
    /// Whether the registration still holds the informer.
    held: Cell<bool>,
}

#[wasm_bindgen]
impl EventRegistration {
    /// Whether the informer has synced and these handlers have returned from
    /// every add of the initial list (or of their replay of the cache).
    #[wasm_bindgen(getter, js_name = hasSynced)]
    pub fn has_synced(&self) -> bool {
        self.reg.has_synced()
    }

    /// Resolves `true` once `hasSynced`, or `false` if the registration is
    /// removed or the informer stops first, or `signal` aborts, or
    /// `timeoutMs` passes.
    #[wasm_bindgen(js_name = waitForSync, unchecked_return_type = "Promise<boolean>")]
    pub fn wait_for_sync(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "SyncWaitOptions")] opts: Option<JsValue>,
    ) -> Promise {
        let reg = self.reg.clone();
        sync_wait_promise(opts, || async move { reg.wait_for_sync().await })
    }

    /// Stop delivery to these handlers (idempotent). A handler running now
    /// completes; queued notifications are dropped.
    pub fn remove(&self) {
        self.reg.remove();
        if let Some(s) = self.state.upgrade() {
            s.regs.borrow_mut().retain(|(i, _)| *i != self.id);
            if self.held.replace(false) {
                s.unpin();
            }
        }
    }

    /// Whether `remove` was called (or the informer stopped).
    #[wasm_bindgen(getter, js_name = isRemoved)]
    pub fn is_removed(&self) -> bool {
        self.reg.is_removed()
    }
}

/// A filtered live view (see `Informer.scoped`).
#[wasm_bindgen]
pub struct ScopedView {
    state: Rc<State>,
    namespace: Option<String>,
    selector: LabelSelector,
    fields: FieldSelector,
    /// This view's last snapshot.
    own: RefCell<Option<Rc<ScopedSnap>>>,
    _hold: Hold,
}

#[wasm_bindgen]
impl ScopedView {
    /// The matching objects; the same array until one of them changes, or
    /// an object enters or leaves the view.
    #[wasm_bindgen(js_name = getSnapshot, unchecked_return_type = "readonly KubeObject[]")]
    pub fn get_snapshot(&self) -> Array {
        let version = self.state.changes.borrow().version();
        let own = self.own.borrow().clone();
        if let Some(arr) = own.as_ref().and_then(|snap| {
            let snap = snap.borrow();
            snap.as_ref()
                .filter(|s| s.version == version)
                .map(|s| s.array.clone())
        }) {
            return arr;
        }
        let key = format!(
            "{}|{}|{}",
            self.namespace.as_deref().unwrap_or(""),
            self.selector,
            self.fields
        );
        let tick = self.state.id();
        let recent = self.state.scoped.borrow_mut().get_mut(&key).map(|e| {
            e.used = tick;
            e.snap.clone()
        });
        // Its own, or that of a recent view with this filter (a view made
        // per render takes the array of the one before it).
        let snap = own.or(recent).unwrap_or_default();
        let namespace = self.namespace.as_deref();
        let admits = |o: &KubeObject| {
            in_scope(namespace, &self.selector, o)
                && (self.fields.is_empty() || self.fields.matches(o))
        };
        let list = || {
            let mut objs = Vec::new();
            self.state
                .inf
                .lister()
                .for_each_in(namespace, &self.selector, |o| {
                    if self.fields.is_empty() || self.fields.matches(o) {
                        objs.push(o.clone());
                    }
                });
            objs
        };
        let array = self.state.snapshot_of(&mut snap.borrow_mut(), admits, list);
        *self.own.borrow_mut() = Some(snap.clone());
        let mut cache = self.state.scoped.borrow_mut();
        if cache.len() >= MAX_SCOPED && !cache.contains_key(&key) {
            let oldest = cache
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                cache.remove(&k);
            }
        }
        cache.insert(key, ScopedEntry { snap, used: tick });
        array
    }

    /// Receive the informer's diffs (unfiltered keys; re-read the snapshot).
    #[wasm_bindgen(unchecked_return_type = "() => void")]
    pub fn subscribe(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(diff: Diff) => void")] listener: JsValue,
    ) -> Result<JsValue, JsValue> {
        self.state.subscribe(listener)
    }
}

/// Read-only queries on an informer's cache. A lister holds its informer
/// (see `Informer.release`) until it is freed or collected.
#[wasm_bindgen]
pub struct Lister {
    lister: RustLister,
    /// Ignore namespaces (see `State::cluster_scoped`).
    cluster_scoped: bool,
    /// `get`'s namespace when none is given (see `State::namespace`).
    namespace: Option<String>,
    plural: String,
    _hold: Hold,
}

#[wasm_bindgen]
impl Lister {
    /// Objects matching the filter, in no particular order (a view's
    /// snapshot is sorted). Namespaced lists use the namespace index; an
    /// equality selector on an indexed label uses that index.
    #[wasm_bindgen(unchecked_return_type = "KubeObject[]")]
    pub fn list(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ListFilter")] filter: JsValue,
    ) -> Result<Array, JsValue> {
        let (namespace, selector, fields) = list_filter(&filter)?;
        let namespace = index_namespace(namespace, &fields, self.cluster_scoped);
        let out = Array::new();
        self.lister
            .for_each_in(namespace.as_deref(), &selector, |o| {
                if fields.is_empty() || fields.matches(o) {
                    out.push(&to_js(o));
                }
            });
        Ok(out)
    }

    /// The cached object `name` in `namespace`; `undefined` when absent. The
    /// same order as `ResourceClient.get(name, namespace?)`, and the same
    /// rule: a cluster-scoped resource ignores the namespace; for a
    /// namespaced one, no namespace (`''`, `null` or `undefined`) looks in
    /// the informer's single namespace, and throws `KubeError` (reason
    /// `Invalid`) on an informer of every namespace.
    #[wasm_bindgen(unchecked_return_type = "KubeObject | undefined")]
    pub fn get(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | null")] namespace: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        let name = options::string_arg(&name, "name")?;
        let ns = options::opt_string_arg(&namespace.unwrap_or_default(), "namespace")?
            .filter(|n| !n.is_empty() && !self.cluster_scoped);
        let ns = match ns {
            Some(ns) => Some(ns),
            None if self.cluster_scoped => None,
            None => Some(self.namespace.clone().ok_or_else(|| {
                // The key `name` alone can never match a namespaced object.
                KubeErrorInit::invalid(format!(
                    "{} is namespaced: get {name:?} needs a namespace (this informer watches every namespace)",
                    self.plural
                ))
            })?),
        };
        Ok(self
            .lister
            .get(ns.as_deref(), &name)
            .map(|o| to_js(&o))
            .unwrap_or(JsValue::UNDEFINED))
    }

    /// Objects listed under `value` in the index `indexName` (`namespace` is built in).
    #[wasm_bindgen(js_name = byIndex, unchecked_return_type = "KubeObject[]")]
    pub fn by_index(
        &self,
        #[wasm_bindgen(js_name = indexName, unchecked_param_type = "string")] index_name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] value: JsValue,
    ) -> Result<Array, JsValue> {
        let index_name = options::string_arg(&index_name, "indexName")?;
        let value = options::string_arg(&value, "value")?;
        let objs = self
            .lister
            .store()
            .by_index(&index_name, &value)
            .map_err(|e| JsValue::from(KubeErrorInit::invalid(e.to_string())))?;
        Ok(objs.iter().map(to_js).collect())
    }

    /// The values the index `indexName` lists at least one object under
    /// (client-go's `ListIndexFuncValues`), in no particular order.
    #[wasm_bindgen(js_name = indexValues, unchecked_return_type = "string[]")]
    pub fn index_values(
        &self,
        #[wasm_bindgen(js_name = indexName, unchecked_param_type = "string")] index_name: JsValue,
    ) -> Result<Array, JsValue> {
        let index_name = options::string_arg(&index_name, "indexName")?;
        let store = self.lister.store();
        // An unknown index is an error, as for `byIndex`.
        store
            .index_keys(&index_name, "")
            .map_err(|e| JsValue::from(KubeErrorInit::invalid(e.to_string())))?;
        Ok(store
            .list_index_func_values(&index_name)
            .iter()
            .map(|v| JsValue::from_str(v))
            .collect())
    }
}

/// An index the informer could not add. A name already taken is reason
/// `OptionsConflict`, however it was asked for (`addIndexer`, or the
/// factory's `indexers` with the name bound to another function): client-go's
/// `AddIndexers` "indexer conflict" is a clash with the shared cache's
/// existing indexers, not a malformed argument.
fn indexer_error(e: InformerError) -> JsValue {
    match e {
        InformerError::Store(crate::cache::StoreError::IndexerConflict(name)) => KubeErrorInit {
            message: format!(
                "indexer conflict: the informer already has an index {name:?} with another \
                 function; use another name, or the same function (defined once)"
            ),
            reason: "OptionsConflict".into(),
            ..Default::default()
        }
        .into(),
        e => KubeErrorInit::invalid(e.to_string()).into(),
    }
}

/// A `ListFilter`: the namespace (`None` for all), label and field
/// selectors. Absent is everything; anything but an object (a selector
/// string passed by itself, say) is an `Invalid` error rather than a filter
/// that silently matches everything.
fn list_filter(
    filter: &JsValue,
) -> Result<(Option<String>, LabelSelector, FieldSelector), JsValue> {
    if !(filter.is_undefined() || filter.is_null() || filter.is_object()) {
        return Err(KubeErrorInit::invalid(
            "the filter must be an object: { namespace, labelSelector, fieldSelector }",
        )
        .into());
    }
    options::known_members(filter, LIST_FILTER, "filter")?;
    let namespace = options::string(filter, "namespace")?.filter(|n| !n.is_empty());
    let selector = label_selector(filter, "labelSelector")?;
    let fsel = options::string(filter, "fieldSelector")?.unwrap_or_default();
    let fields = FieldSelector::parse(&fsel).map_err(selector_error)?;
    Ok((namespace, selector, fields))
}

/// The namespace whose index a filtered read walks: the filter's own, or
/// else one a `metadata.namespace=` field selector names (which the field
/// check still applies). Cluster-scoped resources have no namespace index.
fn index_namespace(
    namespace: Option<String>,
    fields: &FieldSelector,
    cluster_scoped: bool,
) -> Option<String> {
    if cluster_scoped {
        return None;
    }
    namespace.or_else(|| fields.namespace_equal().map(str::to_owned))
}

fn unsubscriber(f: impl FnOnce() + 'static) -> JsValue {
    let cell = RefCell::new(Some(f));
    Closure::<dyn Fn()>::new(move || {
        if let Some(f) = cell.borrow_mut().take() {
            f();
        }
    })
    .into_js_value()
}
