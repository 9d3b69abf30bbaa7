//! SharedIndexInformer: reflector → DeltaFIFO → controller loop → indexer →
//! shared processor → isolated listeners.
//!
//! Single-thread adaptation of client-go's design (see also `controller.rs`
//! and `processor.rs`):
//! * Three kinds of task: the reflector, the controller loop, and one pump
//!   per handler. [`SharedIndexInformer::stop`] aborts the first two (which
//!   drops every fetch and timer they own) and ends the pumps after their
//!   running callback; the queue is closed.
//! * Registration is synchronous: a handler added after start gets a
//!   synthetic add for everything cached, then every later event, with no
//!   gap and no duplicate (SI-03). Its `has_synced` waits for its own
//!   delivery of the initial list (SI-04).
//! * The informer has synced once the initial list has been written to the
//!   store and queued to every handler (SI-05); relists do not reset it.
//! * Transform: applied once per incoming object by the queue, before
//!   caching and notifying (CT-09, SI-15); [`strip_managed_fields`] and
//!   [`metadata_only`] are ready-made ones.
//! * Resync: per-handler periods (SI-07) checked by the reflector's timer at
//!   the informer's check period (SI-08); unchanged-RV updates only reach
//!   handlers that are due (SI-09).
//! * Handler failures: see `processor.rs` (the JS layer catches exceptions).
//!
//! The behaviour IDs used here (RL, CT, SI, PG) are defined, with the tests
//! that check each one, in `docs/behaviours.md`.

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use super::controller::{ApplyFailure, Controller, ControllerOptions, DeltaHandler};
use super::delta_fifo::{DeltaFifoOptions, KnownObjects};
use super::informer_queue::{InformerQueue, QueueKind};
use super::keys::DeltaObject;
use super::list_watch::ListerWatcher;
use super::lister::Lister;
use super::processor::{
    Handler, Notification, Processor, Registration, DEFAULT_MAX_PENDING, MIN_RESYNC_PERIOD,
};
use super::reader::Store;
use super::reflector::{Reflector, ReflectorOptions, Seed, WatchErrorHandler};
use super::status::{Failure, HeldBack, InformerStatus, Phase, StatusCell};
use super::store::Transformer;
use super::store::{Indexer, Indexers, StoreError};
use crate::rest::KubeObject;
use crate::rt::{spawn_local, Notify, SharedClock, TaskHandle};
use futures::future::LocalBoxFuture;

/// Informer settings.
#[derive(Clone, Default)]
pub struct InformerOptions {
    /// Reflector settings; `reflector.resync_period` is the informer's
    /// default handler resync period and its resync check period.
    pub reflector: ReflectorOptions,
    /// Applied to every object before it is cached.
    pub transform: Option<Transformer>,
    /// Indexers besides the built-in `namespace` index.
    pub indexers: Indexers,
    /// Keys applied per controller turn before yielding (default 1000).
    pub batch: Option<usize>,
    /// Receives errors that end a list/watch cycle.
    pub on_watch_error: Option<WatchErrorHandler>,
    /// The queue between the reflector and the store: [`QueueKind::DeltaFifo`]
    /// (the default: the pipeline every behaviour test and benchmark of this
    /// crate was built on) or [`QueueKind::RealFifo`] (client-go's default
    /// since 1.36: every change in order, one per pop).
    pub queue: QueueKind,
    /// The bound of each handler's backlog (1024 when `None`; `Some(0)` =
    /// unbounded). While a handler is over it, the informer stops applying
    /// the queue and reading the watch.
    pub max_pending: Option<usize>,
    /// Where a warm start comes from: called once at start; a stored copy
    /// it resolves with fills the cache and the watch starts from its
    /// resourceVersion, `None` starts with a list as usual.
    pub seed: Option<SeedSource>,
}

/// Loads a stored copy of the informer's objects (see [`InformerOptions::seed`]).
pub type SeedSource = Rc<dyn Fn() -> LocalBoxFuture<'static, Option<Seed>>>;

/// Why an informer refused a request.
#[derive(Clone, Debug, PartialEq)]
pub enum InformerError {
    /// The informer has stopped (SI-14).
    Stopped,
    /// Only possible before `start` (SI-15).
    AlreadyStarted,
    /// The store refused (e.g. a duplicate index name).
    Store(StoreError),
}

impl fmt::Display for InformerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InformerError::Stopped => {
                write!(f, "the informer has stopped already")
            }
            InformerError::AlreadyStarted => write!(f, "informer has already started"),
            InformerError::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for InformerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InformerError::Store(e) => Some(e),
            InformerError::Stopped | InformerError::AlreadyStarted => None,
        }
    }
}

struct Inner {
    lw: Rc<dyn ListerWatcher>,
    clock: SharedClock,
    indexer: Indexer,
    fifo: RefCell<Option<InformerQueue>>,
    status: StatusCell,
    opts: RefCell<InformerOptions>,
    processor: Rc<Processor>,
    observers: Observers,
    tasks: RefCell<Vec<TaskHandle>>,
    /// The reflector's task, apart from the others: a pause ends only it.
    reflector_task: RefCell<Option<TaskHandle>>,
    started: Cell<bool>,
    stopped: Cell<bool>,
    synced: Cell<bool>,
    synced_notify: Notify,
    reflector: RefCell<Option<Rc<Reflector>>>,
}

/// A shared, indexed, self-updating cache of one resource. Clones share it.
///
/// It lists the resource, then watches it from the list's resourceVersion,
/// applying every change to its [`store`](Self::store) and telling every
/// registered [`Handler`] about it; on a broken watch it resumes or relists
/// (client-go's `SharedIndexInformer`, on one thread).
///
/// # What a handler may assume
///
/// * **Order.** A handler sees the changes in the order the cache applied
///   them, each once: for one object, in the order the server made them.
///   Notifications from the initial list come first, flagged as such.
/// * **The cache is at least as new.** When a handler runs, the store
///   already holds the change it is told about, and may hold later ones
///   (the handler runs after the write, on its own task). Read the store
///   for the current state; use the notification for what changed.
/// * **Deletes.** A `Delete` carries the deleted object, or a tombstone
///   (its key and last known state) when the delete was missed while the
///   watch was down and found by a relist.
/// * **Resyncs.** With a resync period, a handler periodically gets an
///   `Update` whose old and new objects have the same resourceVersion.
/// * **Isolation.** Each handler has its own backlog and task: a handler
///   that returns a future is not called again until it resolves, and
///   delays no other handler and not the cache. A backlog over
///   [`InformerOptions::max_pending`] pauses reading the watch; nothing is
///   dropped.
/// * **Late handlers.** A handler added after start gets the cached objects
///   as adds, then every later change, with no gap and no duplicate; its
///   [`Registration::has_synced`] turns true once that replay was delivered.
/// * **Immutability.** Objects are shared, immutable handles: a handler can
///   keep one, but cannot change what the cache holds.
/// * **No panics.** A handler must not panic: in wasm a panic aborts the
///   whole module.
///
/// # Example
///
/// ```no_run
/// use std::rc::Rc;
/// use kubewasm::cache::{wait_for_cache_sync, InformerError};
/// use kubewasm::{LabelSelector, Notification, SharedIndexInformer};
///
/// async fn run(pods: SharedIndexInformer) -> Result<(), InformerError> {
///     pods.add_event_handler(Rc::new(|n: Notification| {
///         if let Notification::Update(old, new) = n {
///             println!("{} {} -> {}", new.name(), old.resource_version(), new.resource_version());
///         }
///         None // or Some(future) for an async handler
///     }))?;
///     pods.start();
///     if !wait_for_cache_sync(&[pods.clone()]).await {
///         return Err(InformerError::Stopped);
///     }
///     let web = LabelSelector::parse("app=web").expect("a valid selector");
///     for pod in pods.lister().list_in(Some("default"), &web) {
///         println!("{}", pod.name());
///     }
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct SharedIndexInformer {
    inner: Rc<Inner>,
}

/// One change the cache has just applied, as an [`Observer`] sees it.
#[derive(Clone, Copy)]
pub enum Applied<'a> {
    /// A new key was stored.
    Added(&'a KubeObject),
    /// A cached object was replaced by a newer version: (old, new).
    Updated(&'a KubeObject, &'a KubeObject),
    /// A key was removed: its final state or a tombstone.
    Deleted(&'a DeltaObject),
}

/// Called synchronously, in cache order, for every change the cache applies
/// (see [`SharedIndexInformer::observe`]), with the key it applied it under.
pub type Observer = Rc<dyn Fn(&str, Applied<'_>)>;

/// The observers, replaced (never changed in place) when one is added, so a
/// call can go on while another is added.
#[derive(Clone, Default)]
struct Observers(Rc<RefCell<Rc<[Observer]>>>);

impl Observers {
    fn tell(&self, key: &str, change: Applied<'_>) {
        let list = self.0.borrow().clone();
        for o in list.iter() {
            o(key, change);
        }
    }
}

/// Forwards the controller's writes to the observers and the processor,
/// and holds the controller back while a listener's backlog is full (shown
/// in the status).
struct Fanout(Rc<Processor>, StatusCell, Observers);

impl DeltaHandler for Fanout {
    fn on_add(&self, key: &str, obj: &KubeObject, initial: bool) {
        self.2.tell(key, Applied::Added(obj));
        self.0
            .distribute(Notification::Add(obj.clone(), initial), false);
    }
    fn on_update(&self, key: &str, old: &KubeObject, new: &KubeObject) {
        // The same version again (a resync, or a relist that found it
        // unchanged): only handlers that asked for resyncs hear of it.
        // Handlers hear of an update under the same version only if they
        // asked for resyncs (client-go's `isSync`, by resourceVersion alone);
        // the diff reports it when the content changed.
        let sync = old.resource_version() == new.resource_version();
        if !sync || !old.same_content(new) {
            self.2.tell(key, Applied::Updated(old, new));
        }
        self.0
            .distribute(Notification::Update(old.clone(), new.clone()), sync);
    }
    fn on_delete(&self, key: &str, obj: &DeltaObject) {
        self.2.tell(key, Applied::Deleted(obj));
        self.0.distribute(Notification::Delete(obj.clone()), false);
    }
    fn has_room(&self) -> bool {
        self.0.has_room()
    }
    fn wait_for_room(&self) -> futures::future::LocalBoxFuture<'static, ()> {
        let (p, status) = (self.0.clone(), self.1.clone());
        Box::pin(async move {
            if p.has_room() {
                return;
            }
            let held = HeldBack {
                pending: p.max_backlog(),
                limit: p.max_pending(),
            };
            status.update(|s| s.held_back = Some(held));
            p.wait_for_room().await;
            status.update(|s| s.held_back = None);
        })
    }
}

/// A ready-made transform that drops `metadata.managedFields` (often half
/// of an object's bytes, never needed by a UI). Objects without it pass
/// through untouched (no re-encoding).
pub fn strip_managed_fields() -> Transformer {
    // A byte-level cut at the range the scanner recorded: no re-encoding.
    Rc::new(|obj: KubeObject| Ok(obj.without_managed_fields()))
}

/// A transform that keeps only `apiVersion`, `kind` and `metadata`
/// (metadata-only informers), managedFields dropped.
pub fn metadata_only() -> Transformer {
    Rc::new(|obj: KubeObject| Ok(obj.metadata_only()))
}

/// A transform to client-go's metadata-only form: `PartialObjectMetadata`
/// (`apiVersion: meta.k8s.io/v1`) with the object's metadata, managedFields
/// dropped. Objects the server already sent in that form (a scope with
/// [`metadata_only`](super::ResourceScope::metadata_only)) only lose their
/// managedFields; whole objects (a server that does not serve the form, a
/// WebSocket watch, which cannot ask for it) are cut down on the client, so
/// both paths cache the same objects.
pub fn partial_object_metadata() -> Transformer {
    Rc::new(|obj: KubeObject| {
        let obj = obj.metadata_only();
        if obj.kind() == "PartialObjectMetadata" && obj.api_version() == "meta.k8s.io/v1" {
            return Ok(obj);
        }
        let meta = (0..)
            .map_while(|i| obj.member(i))
            .find(|(name, _)| *name == "metadata")
            .map_or("{}", |(_, v)| v);
        let mut raw = Vec::with_capacity(meta.len() + 80);
        raw.extend_from_slice(
            br#"{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":"#,
        );
        raw.extend_from_slice(meta.as_bytes());
        raw.push(b'}');
        KubeObject::from_json(&raw).map_err(|e| e.to_string())
    })
}

impl SharedIndexInformer {
    /// An informer over any lister-watcher.
    pub fn new(lw: Rc<dyn ListerWatcher>, clock: SharedClock, opts: InformerOptions) -> Self {
        let indexer = Indexer::with_namespace_index();
        // A duplicate of the built-in name is the only failure; it keeps the built-in.
        let _ = indexer.add_indexers(opts.indexers.clone());
        let check = opts.reflector.resync_period.unwrap_or_default();
        let processor = Processor::new(clock.clone(), check);
        processor.set_max_pending(opts.max_pending.unwrap_or(DEFAULT_MAX_PENDING));
        SharedIndexInformer {
            inner: Rc::new(Inner {
                lw,
                processor: Rc::new(processor),
                observers: Observers::default(),
                clock,
                indexer,
                fifo: RefCell::new(None),
                status: StatusCell::default(),
                opts: RefCell::new(opts),
                tasks: RefCell::new(Vec::new()),
                reflector_task: RefCell::new(None),
                started: Cell::new(false),
                stopped: Cell::new(false),
                synced: Cell::new(false),
                synced_notify: Notify::new(),
                reflector: RefCell::new(None),
            }),
        }
    }

    /// The cache, read-only: every read sees the latest state the informer
    /// applied. Only the informer writes to it (see [`Store`]).
    pub fn store(&self) -> Store {
        self.inner.indexer.reader()
    }

    /// A lister over the cache.
    pub fn lister(&self) -> Lister {
        Lister::new(self.store())
    }

    /// The cache's write side (SI-01: store and indexer are the same
    /// object), for the crate's own bindings.
    #[cfg(all(target_arch = "wasm32", feature = "js"))]
    pub(crate) fn indexer(&self) -> &Indexer {
        &self.inner.indexer
    }

    /// The observable status.
    pub fn status(&self) -> &StatusCell {
        &self.inner.status
    }

    /// A status snapshot with the live counters filled in.
    pub fn status_snapshot(&self) -> InformerStatus {
        let mut s = self.inner.status.get();
        s.cached = self.inner.indexer.len() as u64;
        s.synced = self.has_synced();
        if let Some(r) = self.inner.reflector.borrow().as_ref() {
            s.resource_version = r.last_sync_resource_version();
        }
        s
    }

    /// The clock the informer's timers run on.
    pub(crate) fn clock(&self) -> &SharedClock {
        &self.inner.clock
    }

    /// Whether the initial list has been written to the store and queued to
    /// every handler (SI-05). Stays true through relists.
    pub fn has_synced(&self) -> bool {
        self.inner.synced.get()
    }

    /// Resolves true once synced, false if the informer stops first (SI-18).
    pub async fn wait_for_sync(&self) -> bool {
        loop {
            let wait = self.inner.synced_notify.notified();
            if self.has_synced() {
                return true;
            }
            if self.inner.stopped.get() {
                return false;
            }
            wait.await;
        }
    }

    /// The RV of the last list, event or bookmark (`""` before start) (CT-12).
    pub fn last_sync_resource_version(&self) -> String {
        self.inner
            .reflector
            .borrow()
            .as_ref()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// Add indexers, before or after start; existing objects are indexed at
    /// once (SI-01). Fails after stop (SI-14) or on a duplicate name.
    pub fn add_indexers(&self, indexers: Indexers) -> Result<(), InformerError> {
        if self.inner.stopped.get() {
            return Err(InformerError::Stopped);
        }
        self.inner
            .indexer
            .add_indexers(indexers)
            .map_err(InformerError::Store)
    }

    /// Set the transform (before start; the last call wins) (SI-15).
    pub fn set_transform(&self, t: Option<Transformer>) -> Result<(), InformerError> {
        if self.inner.started.get() {
            return Err(InformerError::AlreadyStarted);
        }
        self.inner.opts.borrow_mut().transform = t;
        Ok(())
    }

    /// Set the watch-error handler (before start; the last call wins) (SI-15).
    pub fn set_watch_error_handler(&self, h: WatchErrorHandler) -> Result<(), InformerError> {
        if self.inner.started.get() {
            return Err(InformerError::AlreadyStarted);
        }
        self.inner.opts.borrow_mut().on_watch_error = Some(h);
        Ok(())
    }

    /// Register a handler with the informer's default resync period.
    pub fn add_event_handler(&self, handler: Handler) -> Result<Registration, InformerError> {
        self.add_event_handler_with_resync(handler, self.default_resync())
    }

    /// The informer's resync period, zero for none.
    fn default_resync(&self) -> Duration {
        self.inner
            .opts
            .borrow()
            .reflector
            .resync_period
            .unwrap_or_default()
    }

    /// Register a handler with its own resync period (zero = never), under
    /// client-go's rules (SI-07): below 1 s → 1 s; before start a shorter
    /// period lowers the check period; after start it is raised to it.
    /// After start the handler first receives every cached object as an add
    /// (SI-03). Fails after stop (SI-14).
    pub fn add_event_handler_with_resync(
        &self,
        handler: Handler,
        resync: Duration,
    ) -> Result<Registration, InformerError> {
        self.register(handler, resync, true)
    }

    /// A listener with the informer's default resync period that receives
    /// only what the cache applies from now on, with no replay of what it
    /// holds: for a caller that replays the cache itself, per handler,
    /// through [`Registration::enqueue`].
    #[cfg_attr(not(all(target_arch = "wasm32", feature = "js")), allow(dead_code))]
    pub(crate) fn add_listener_without_replay(
        &self,
        handler: Handler,
    ) -> Result<Registration, InformerError> {
        self.register(handler, self.default_resync(), false)
    }

    fn register(
        &self,
        handler: Handler,
        resync: Duration,
        replay: bool,
    ) -> Result<Registration, InformerError> {
        if self.inner.stopped.get() {
            return Err(InformerError::Stopped);
        }
        let p = &self.inner.processor;
        let mut resync = resync;
        if !resync.is_zero() {
            resync = resync.max(MIN_RESYNC_PERIOD);
            let check = p.check_period();
            if resync < check {
                if self.inner.started.get() {
                    resync = check;
                } else {
                    p.lower_check_period(resync);
                }
            }
        }
        let started = self.inner.started.get() && replay;
        let indexer = &self.inner.indexer;
        let listener = p.add(
            handler,
            resync,
            |push| {
                if started {
                    indexer.for_each(|_, o| push(Notification::Add(o.clone(), true)));
                }
            },
            self.has_synced(),
        );
        let me = Rc::downgrade(&self.inner);
        Ok(Registration {
            listener,
            processor: Rc::downgrade(p),
            informer_synced: Rc::new(move || me.upgrade().is_some_and(|i| i.synced.get())),
        })
    }

    /// Watch every change as the cache applies it, for as long as the
    /// informer lives: synchronously, in cache order, before any handler
    /// hears of it, with no backlog (no notification is queued for it). For
    /// cheap bookkeeping that runs no user code, such as collecting the keys
    /// a frame's diff reports: the controller waits for it. Resyncs are not
    /// observed.
    pub fn observe(&self, observer: Observer) {
        let cell = &self.inner.observers.0;
        let list: Rc<[Observer]> = cell.borrow().iter().cloned().chain([observer]).collect();
        *cell.borrow_mut() = list;
    }

    /// Register a handler (compatibility form): `wants_resync` = the
    /// informer's default period, else never. After stop the registration
    /// is inert (never synced, never called).
    pub fn add_handler(&self, handler: Handler, wants_resync: bool) -> Registration {
        let period = if wants_resync {
            self.inner.opts.borrow().reflector.resync_period
        } else {
            None
        };
        match self.add_event_handler_with_resync(handler.clone(), period.unwrap_or_default()) {
            Ok(r) => r,
            Err(_) => {
                let p = Rc::new(Processor::new(self.inner.clock.clone(), Duration::ZERO));
                let listener = p.add(handler, Duration::ZERO, |_| {}, false);
                let r = Registration {
                    listener,
                    processor: Rc::downgrade(&p),
                    informer_synced: Rc::new(|| false),
                };
                r.remove();
                r
            }
        }
    }

    /// Remove a handler; idempotent, never fails (SI-11).
    pub fn remove_event_handler(&self, reg: &Registration) {
        reg.remove();
    }

    /// Registered handlers.
    pub fn handler_count(&self) -> usize {
        self.inner.processor.len()
    }

    /// Start the reflector, the controller and the handler pumps. A second
    /// call, or a call after stop, does nothing (SI-14).
    pub fn start(&self) {
        let inner = &self.inner;
        if inner.started.get() || inner.stopped.get() {
            return;
        }
        inner.started.set(true);
        let opts = inner.opts.borrow().clone();
        let fifo = InformerQueue::new(
            opts.queue,
            DeltaFifoOptions {
                known_objects: Some(Rc::new(inner.indexer.clone()) as Rc<dyn KnownObjects>),
                emit_delta_type_replaced: true,
                transformer: opts.transform.clone(),
            },
        );
        *inner.fifo.borrow_mut() = Some(fifo.clone());
        let mut ropts = opts.reflector.clone();
        let check = inner.processor.check_period();
        ropts.resync_period = (!check.is_zero()).then_some(check);
        let processor = inner.processor.clone();
        let weak = Rc::downgrade(inner);
        let on_turn: Rc<dyn Fn()> = Rc::new(move || {
            if let Some(i) = weak.upgrade() {
                SharedIndexInformer { inner: i }.after_turn();
            }
        });
        let reflector = Rc::new(
            Reflector::new(
                inner.lw.clone(),
                fifo.clone(),
                inner.clock.clone(),
                inner.status.clone(),
                ropts,
            )
            .with_error_handler(opts.on_watch_error.clone())
            .with_should_resync(Some(Rc::new(move || processor.should_resync())))
            .with_on_replace(Some(on_turn.clone())),
        );
        *inner.reflector.borrow_mut() = Some(reflector.clone());
        let status = inner.status.clone();
        let weak_reflector = Rc::downgrade(&reflector);
        let clock = inner.clock.clone();
        let on_failure: Rc<dyn Fn(ApplyFailure)> = Rc::new(move |f: ApplyFailure| {
            status.report_failure(Failure {
                key: f.key,
                reason: f.error.reason().to_owned(),
                message: format!("could not cache an object: {}", f.error),
                at_ms: clock.wall_millis(),
            });
            if f.from_watch {
                if let Some(r) = weak_reflector.upgrade() {
                    r.request_relist();
                }
            }
        });
        let controller = Controller::new(
            fifo,
            inner.indexer.clone(),
            Rc::new(Fanout(
                inner.processor.clone(),
                inner.status.clone(),
                inner.observers.clone(),
            )),
            inner.clock.clone(),
            ControllerOptions {
                batch: opts.batch.unwrap_or(1000).max(1),
                ..Default::default()
            },
        )
        .with_drained(reflector.drained())
        .with_on_turn(on_turn)
        .with_on_failure(on_failure);
        inner.processor.run();
        inner.tasks.borrow_mut().push(spawn_local(controller.run()));
        let run = match opts.seed {
            Some(load) => {
                let load = load();
                Box::pin(async move {
                    if let Some(seed) = load.await {
                        reflector.seed(seed);
                    }
                    // Watches from the seed's RV when there was one, else lists.
                    reflector.resume().await
                }) as LocalBoxFuture<'static, ()>
            }
            None => Box::pin(reflector.run()),
        };
        *inner.reflector_task.borrow_mut() = Some(spawn_local(run));
    }

    /// Stop watching for now: the reflector's requests and timers end, the
    /// cache keeps its contents and handlers stay registered. Nothing
    /// happens before start, after stop, or when already paused.
    pub fn pause(&self) {
        let inner = &self.inner;
        if inner.stopped.get() {
            return;
        }
        if let Some(t) = inner.reflector_task.borrow_mut().take() {
            t.abort();
            inner.status.update(|s| {
                s.phase = Phase::Paused;
                s.next_retry_at_ms = None;
            });
        }
    }

    /// Watch again after [`pause`](SharedIndexInformer::pause), from the
    /// last resourceVersion (a 410 relists). No-op unless paused.
    pub fn resume(&self) {
        let inner = &self.inner;
        if inner.stopped.get() || !inner.started.get() || inner.reflector_task.borrow().is_some() {
            return;
        }
        let Some(r) = inner.reflector.borrow().clone() else {
            return;
        };
        *inner.reflector_task.borrow_mut() = Some(spawn_local(r.resume()));
    }

    /// Deltas queued and not yet applied to the cache.
    pub fn queued_deltas(&self) -> usize {
        self.inner
            .fifo
            .borrow()
            .as_ref()
            .map_or(0, |f| f.queued_deltas())
    }

    /// Whether the informer is paused (started, not stopped, not watching).
    pub fn is_paused(&self) -> bool {
        let inner = &self.inner;
        inner.started.get() && !inner.stopped.get() && inner.reflector_task.borrow().is_none()
    }

    fn after_turn(&self) {
        let inner = &self.inner;
        let cached = inner.indexer.len() as u64;
        let fifo_synced = inner.fifo.borrow().as_ref().is_some_and(|f| f.has_synced());
        if fifo_synced && !inner.synced.get() {
            inner.synced.set(true);
            inner.processor.mark_synced();
            inner.status.update(|s| {
                s.synced = true;
                s.cached = cached;
            });
            inner.synced_notify.notify_waiters();
        } else {
            inner.status.quiet(|s| s.cached = cached);
        }
    }

    /// Whether `other` is a handle to this same informer.
    pub fn same_as(&self, other: &SharedIndexInformer) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }

    /// Whether `start` has been called.
    pub fn is_started(&self) -> bool {
        self.inner.started.get()
    }

    /// Whether `other` is a handle to this same informer.
    pub fn ptr_eq(&self, other: &SharedIndexInformer) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }

    /// Whether `stop` has been called (SI-14).
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.get()
    }

    /// Stop for good: cancels the reflector (aborting its fetches and
    /// timers) and the controller, ends every handler pump after its running
    /// callback, and closes the queue. The cache keeps its last contents.
    pub fn stop(&self) {
        let inner = &self.inner;
        if inner.stopped.replace(true) {
            return;
        }
        for t in inner.tasks.borrow_mut().drain(..) {
            t.abort();
        }
        if let Some(t) = inner.reflector_task.borrow_mut().take() {
            t.abort();
        }
        inner.processor.stop();
        if let Some(f) = inner.fifo.borrow().as_ref() {
            f.close();
        }
        inner.synced_notify.notify_waiters();
        inner.status.update(|s| {
            s.phase = Phase::Stopped;
            s.next_retry_at_ms = None;
        });
    }
}

/// Resolves true when every check passes, false as soon as any informer in
/// `informers` has stopped first (client-go's `WaitForCacheSync`, SI-18,
/// event-driven instead of polling).
pub async fn wait_for_cache_sync(informers: &[SharedIndexInformer]) -> bool {
    for i in informers {
        if !i.wait_for_sync().await {
            return false;
        }
    }
    true
}
