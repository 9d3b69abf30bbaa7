//! SharedIndexInformer: reflector → DeltaFIFO → controller loop → indexer →
//! isolated listeners; and the factory that shares one informer per scope.
//!
//! Single-thread adaptation of client-go's design:
//! * The controller loop is a task that pops at most `batch` keys per turn,
//!   applies them to the indexer, fans notifications out, and then yields to
//!   the event loop so a 50,000-object sync never blocks a page for long.
//! * Every listener has its own buffer and pump task (client-go's
//!   `processorListener`): a handler that is slow (returns a future) only
//!   delays itself. Handlers that panic cannot be caught in wasm (a panic
//!   aborts the module), so JS handlers are wrapped by the binding layer,
//!   which catches their exceptions and reports them.
//! * A handler added after start first receives a synthetic add for every
//!   cached object (SI-03); registration and the replay happen in one
//!   synchronous step, so no later event can overtake the replay.
//! * `has_synced` (informer) = the queue's initial list has been applied;
//!   a registration's `has_synced` additionally waits until its listener has
//!   delivered everything up to that point (SI-04).
//! * Add vs update is decided by presence in the indexer; an update carries
//!   the cached old object; tombstones reach `on_delete` (CT items).
//! * Resync (SI-07..09): each handler has its own period (at least 1 s and
//!   the informer's check period); at each tick the due handlers are marked,
//!   and same-RV updates (resyncs, unchanged relisted objects) go only to
//!   marked handlers. Every handler starts marked.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use futures::future::LocalBoxFuture;

use super::delta_fifo::{
    DeltaFifo, DeltaFifoOptions, DeltaType, KnownObjects, Popped, Transformer,
};
use super::keys::{object_key, DeltaObject};
use super::list_watch::{ListerWatcher, ResourceListWatch, ResourceScope};
use super::reflector::{Reflector, ReflectorOptions, WatchErrorHandler};
use super::status::{InformerStatus, Phase, StatusCell};
use super::store::{Indexer, Indexers, StoreError};
use crate::rest::{Client, KubeObject};
use crate::rt::{spawn_local, yield_now, Notify, SharedClock, TaskHandle};

/// One change delivered to a handler.
#[derive(Clone, Debug)]
pub enum Notification {
    /// An object was added (`true` when part of the initial list).
    Add(KubeObject, bool),
    /// An object changed: old, new.
    Update(KubeObject, KubeObject),
    /// An object was deleted (possibly a tombstone).
    Delete(DeltaObject),
}

/// A handler: may return a future, which the listener awaits before its
/// next notification (only this listener waits).
pub type Handler = Rc<dyn Fn(Notification) -> Option<LocalBoxFuture<'static, ()>>>;

enum Item {
    Note(Notification),
    SyncMarker,
}

struct Listener {
    id: u64,
    handler: Handler,
    buffer: RefCell<VecDeque<Item>>,
    wake: Notify,
    synced: Cell<bool>,
    /// Effective resync period (SI-07); `None` = never.
    resync: Option<Duration>,
    next_resync: Cell<crate::rt::Instant>,
    /// Receives same-RV updates (SI-08/09); every listener starts marked.
    syncing: Cell<bool>,
    task: RefCell<Option<TaskHandle>>,
}

impl Listener {
    fn push(&self, item: Item) {
        self.buffer.borrow_mut().push_back(item);
        self.wake.notify_waiters();
    }

    async fn pump(self: Rc<Self>) {
        loop {
            let wait = self.wake.notified();
            let next = self.buffer.borrow_mut().pop_front();
            match next {
                Some(Item::Note(n)) => {
                    if let Some(fut) = (self.handler)(n) {
                        fut.await;
                    }
                }
                Some(Item::SyncMarker) => self.synced.set(true),
                None => wait.await,
            }
        }
    }
}

/// A handle to one registered handler.
#[derive(Clone)]
pub struct Registration {
    listener: Rc<Listener>,
    informer: SharedIndexInformer,
}

impl Registration {
    /// Whether this handler has received everything in the initial list (SI-04).
    pub fn has_synced(&self) -> bool {
        self.informer.has_synced() && self.listener.synced.get()
    }

    /// Remove the handler; its buffer is dropped.
    pub fn remove(&self) {
        self.informer.remove_handler(self.listener.id);
    }
}

/// Informer settings.
#[derive(Clone, Default)]
pub struct InformerOptions {
    /// Reflector settings (page size, resync, backoff, back-pressure).
    pub reflector: ReflectorOptions,
    /// Applied to every object before it is cached.
    pub transform: Option<Transformer>,
    /// Indexers besides the built-in `namespace` index.
    pub indexers: Indexers,
    /// Keys applied per controller turn before yielding (default 500).
    pub batch: Option<usize>,
    /// Receives errors that end a list/watch cycle.
    pub on_watch_error: Option<WatchErrorHandler>,
}

struct Inner {
    lw: Rc<dyn ListerWatcher>,
    clock: SharedClock,
    indexer: Indexer,
    fifo: DeltaFifo,
    status: StatusCell,
    opts: InformerOptions,
    listeners: RefCell<Vec<Rc<Listener>>>,
    next_id: Cell<u64>,
    tasks: RefCell<Vec<TaskHandle>>,
    started: Cell<bool>,
    stopped: Cell<bool>,
    synced_notify: Notify,
    reflector: RefCell<Option<Rc<Reflector>>>,
}

/// A shared, indexed, self-updating cache of one resource.
#[derive(Clone)]
pub struct SharedIndexInformer {
    inner: Rc<Inner>,
}

/// A ready-made transform that drops `metadata.managedFields` (often half
/// of an object's bytes, never needed by a UI).
pub fn strip_managed_fields() -> Transformer {
    Rc::new(|obj: KubeObject| {
        let raw = obj.raw();
        if !raw.windows(15).any(|w| w == b"\"managedFields\"") {
            return Ok(obj);
        }
        let mut v = obj.to_value().map_err(|e| e.to_string())?;
        if let Some(m) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            m.remove("managedFields");
        }
        KubeObject::from_value(&v).map_err(|e| e.to_string())
    })
}

/// A transform that keeps only `apiVersion`, `kind` and `metadata`
/// (metadata-only informers), managedFields dropped.
pub fn metadata_only() -> Transformer {
    Rc::new(|obj: KubeObject| {
        let v = obj.to_value().map_err(|e| e.to_string())?;
        let mut meta = v
            .get("metadata")
            .cloned()
            .unwrap_or(serde_json::Value::Null);
        if let Some(m) = meta.as_object_mut() {
            m.remove("managedFields");
        }
        let out = serde_json::json!({"apiVersion": v.get("apiVersion"), "kind": v.get("kind"), "metadata": meta});
        KubeObject::from_value(&out).map_err(|e| e.to_string())
    })
}

impl SharedIndexInformer {
    /// An informer over any lister-watcher.
    pub fn new(lw: Rc<dyn ListerWatcher>, clock: SharedClock, opts: InformerOptions) -> Self {
        let indexer = Indexer::with_namespace_index();
        let _ = indexer.add_indexers(opts.indexers.clone());
        let fifo = DeltaFifo::new(DeltaFifoOptions {
            known_objects: Some(Rc::new(indexer.clone()) as Rc<dyn KnownObjects>),
            emit_delta_type_replaced: true,
            transformer: opts.transform.clone(),
        });
        SharedIndexInformer {
            inner: Rc::new(Inner {
                lw,
                clock,
                indexer,
                fifo,
                status: StatusCell::default(),
                opts,
                listeners: RefCell::new(Vec::new()),
                next_id: Cell::new(1),
                tasks: RefCell::new(Vec::new()),
                started: Cell::new(false),
                stopped: Cell::new(false),
                synced_notify: Notify::new(),
                reflector: RefCell::new(None),
            }),
        }
    }

    /// The store (listers and snapshots read it).
    pub fn indexer(&self) -> &Indexer {
        &self.inner.indexer
    }

    /// The observable status.
    pub fn status(&self) -> &StatusCell {
        &self.inner.status
    }

    /// A status snapshot with the cached count filled in.
    pub fn status_snapshot(&self) -> InformerStatus {
        let mut s = self.inner.status.get();
        s.cached = self.inner.indexer.len() as u64;
        s.synced = self.has_synced();
        s
    }

    /// Whether the initial list has been applied to the store.
    pub fn has_synced(&self) -> bool {
        self.inner.fifo.has_synced()
    }

    /// Resolves once the informer has synced.
    pub async fn wait_for_sync(&self) {
        loop {
            let wait = self.inner.synced_notify.notified();
            if self.has_synced() {
                return;
            }
            if self.inner.stopped.get() {
                return;
            }
            wait.await;
        }
    }

    /// The RV of the last list or event the reflector applied.
    pub fn last_sync_resource_version(&self) -> String {
        self.inner
            .reflector
            .borrow()
            .as_ref()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// Add indexers (before or after start).
    pub fn add_indexers(&self, indexers: Indexers) -> Result<(), StoreError> {
        self.inner.indexer.add_indexers(indexers)
    }

    /// Register a handler. After start it first receives every cached object
    /// as an add (SI-03). `wants_resync`: resync at the informer's period.
    pub fn add_handler(&self, handler: Handler, wants_resync: bool) -> Registration {
        let period = if wants_resync {
            self.inner.opts.reflector.resync_period
        } else {
            None
        };
        self.add_handler_with_resync(handler, period)
    }

    /// Register a handler with its own resync period (SI-07): never shorter
    /// than 1 s or than the informer's check period (the reflector's
    /// `resync_period`), and never when the informer does not resync.
    pub fn add_handler_with_resync(
        &self,
        handler: Handler,
        resync: Option<Duration>,
    ) -> Registration {
        let check = self.inner.opts.reflector.resync_period;
        let resync = match (resync, check) {
            (Some(r), Some(c)) if !r.is_zero() && !c.is_zero() => {
                Some(r.max(Duration::from_secs(1)).max(c))
            }
            _ => None,
        };
        let id = self.inner.next_id.get();
        self.inner.next_id.set(id + 1);
        let l = Rc::new(Listener {
            id,
            handler,
            buffer: RefCell::new(VecDeque::new()),
            wake: Notify::new(),
            synced: Cell::new(false),
            resync,
            next_resync: Cell::new(self.inner.clock.now() + resync.unwrap_or_default()),
            syncing: Cell::new(true),
            task: RefCell::new(None),
        });
        if self.inner.started.get() {
            self.inner.indexer.for_each(|_, o| {
                l.buffer
                    .borrow_mut()
                    .push_back(Item::Note(Notification::Add(o.clone(), true)))
            });
            if self.has_synced() {
                l.buffer.borrow_mut().push_back(Item::SyncMarker);
            }
        }
        if !self.inner.stopped.get() {
            *l.task.borrow_mut() = Some(spawn_local(l.clone().pump()));
        }
        self.inner.listeners.borrow_mut().push(l.clone());
        Registration {
            listener: l,
            informer: self.clone(),
        }
    }

    fn remove_handler(&self, id: u64) {
        self.inner.listeners.borrow_mut().retain(|l| {
            if l.id == id {
                if let Some(t) = l.task.borrow_mut().take() {
                    t.abort();
                }
                false
            } else {
                true
            }
        });
    }

    fn distribute(&self, n: Notification, resync: bool) {
        for l in self.inner.listeners.borrow().iter() {
            if resync && !l.syncing.get() {
                continue;
            }
            l.push(Item::Note(n.clone()));
        }
    }

    /// SI-08: at each resync tick, mark the listeners that are due (and move
    /// their next resync), unmark the others; resync the store only if any is due.
    fn should_resync(&self) -> bool {
        let now = self.inner.clock.now();
        let mut any = false;
        for l in self.inner.listeners.borrow().iter() {
            let due = l.resync.is_some() && now >= l.next_resync.get();
            l.syncing.set(due);
            if let (true, Some(p)) = (due, l.resync) {
                l.next_resync.set(now + p);
                any = true;
            }
        }
        any
    }

    fn handle_deltas(&self, popped: &Popped) -> Result<(), StoreError> {
        let ix = &self.inner.indexer;
        for d in &popped.deltas {
            match (&d.kind, &d.object) {
                (DeltaType::Deleted, obj) => {
                    if let Ok(key) = obj.key() {
                        ix.delete_key(&key);
                    }
                    self.distribute(Notification::Delete(obj.clone()), false);
                }
                (kind, DeltaObject::Object(obj)) => {
                    let key = object_key(obj).map_err(StoreError::Key)?;
                    match ix.get_by_key(&key) {
                        Some(old) => {
                            ix.upsert(key, obj.clone())?;
                            // A relisted object whose RV did not change is a resync.
                            let is_sync = *kind == DeltaType::Sync
                                || (*kind == DeltaType::Replaced
                                    && old.resource_version() == obj.resource_version());
                            self.distribute(Notification::Update(old, obj.clone()), is_sync);
                        }
                        None => {
                            ix.upsert(key, obj.clone())?;
                            self.distribute(
                                Notification::Add(obj.clone(), popped.is_in_initial_list),
                                false,
                            );
                        }
                    }
                }
                (_, DeltaObject::Tombstone(_)) => {}
            }
        }
        Ok(())
    }

    async fn controller_loop(self) {
        let batch = self.inner.opts.batch.unwrap_or(500).max(1);
        // Yield to the event loop after a full batch or 8 ms of work, not after
        // every wake-up: a macrotask costs ≥ 1 ms in Node and browsers clamp
        // nested timeouts, so yielding per small batch throttled floods.
        let slice = Duration::from_millis(8);
        let mut slice_start = self.inner.clock.now();
        loop {
            let was_synced = self.has_synced();
            let Some(first) = self.inner.fifo.pop().await else {
                return;
            };
            let mut popped = Some(first);
            let mut n = 0;
            while let Some(p) = popped.take() {
                // A failed write (unkeyable object, failing index) drops that item:
                // the rest of the cache stays consistent and the next relist repairs it.
                let _ = self.handle_deltas(&p);
                self.inner.fifo.done(&p);
                n += 1;
                if n < batch {
                    popped = self.inner.fifo.try_pop();
                }
            }
            if !was_synced && self.has_synced() {
                for l in self.inner.listeners.borrow().iter() {
                    l.push(Item::SyncMarker);
                }
                self.inner.status.update(|s| s.synced = true);
                self.inner.synced_notify.notify_waiters();
            }
            self.inner
                .status
                .quiet(|s| s.cached = self.inner.indexer.len() as u64);
            if n >= batch || self.inner.clock.now() - slice_start >= slice {
                yield_now().await;
                slice_start = self.inner.clock.now();
            }
        }
    }

    /// Start the reflector and controller (idempotent).
    pub fn start(&self) {
        if self.inner.started.get() || self.inner.stopped.get() {
            return;
        }
        self.inner.started.set(true);
        let reflector = Rc::new(Reflector::new(
            self.inner.lw.clone(),
            self.inner.fifo.clone(),
            self.inner.clock.clone(),
            self.inner.status.clone(),
            self.inner.opts.reflector.clone(),
            self.inner.opts.on_watch_error.clone(),
        ));
        let weak = Rc::downgrade(&self.inner);
        reflector.set_should_resync(Rc::new(move || match weak.upgrade() {
            Some(inner) => SharedIndexInformer { inner }.should_resync(),
            None => false,
        }));
        *self.inner.reflector.borrow_mut() = Some(reflector.clone());
        let mut tasks = self.inner.tasks.borrow_mut();
        tasks.push(spawn_local(reflector.run()));
        tasks.push(spawn_local(self.clone().controller_loop()));
    }

    /// Whether `start` has been called.
    pub fn is_started(&self) -> bool {
        self.inner.started.get()
    }

    /// Stop for good: cancels the reflector (aborting its fetches and timers),
    /// the controller and every listener pump.
    pub fn stop(&self) {
        if self.inner.stopped.replace(true) {
            return;
        }
        for t in self.inner.tasks.borrow_mut().drain(..) {
            t.abort();
        }
        for l in self.inner.listeners.borrow().iter() {
            if let Some(t) = l.task.borrow_mut().take() {
                t.abort();
            }
        }
        self.inner.fifo.close();
        self.inner.synced_notify.notify_waiters();
        self.inner.status.update(|s| {
            s.phase = Phase::Stopped;
            s.next_retry_at_ms = None;
        });
    }
}

/// One informer per (resource, namespace, label selector, field selector),
/// shared by every consumer whatever order they ask in.
#[derive(Clone)]
pub struct SharedInformerFactory {
    client: Client,
    clock: SharedClock,
    defaults: InformerOptions,
    informers: Rc<RefCell<HashMap<String, SharedIndexInformer>>>,
    started: Rc<Cell<bool>>,
}

impl SharedInformerFactory {
    /// A factory over `client`.
    pub fn new(client: Client, defaults: InformerOptions) -> Self {
        let clock = client.clock().clone();
        SharedInformerFactory {
            client,
            clock,
            defaults,
            informers: Rc::default(),
            started: Rc::default(),
        }
    }

    /// The canonical identity of a scope (selectors in canonical form).
    pub fn scope_key(scope: &ResourceScope) -> String {
        let canon_l = scope
            .label_selector
            .as_deref()
            .map(|s| {
                super::selector::LabelSelector::parse(s)
                    .map(|x| x.to_string())
                    .unwrap_or_else(|_| s.to_owned())
            })
            .unwrap_or_default();
        let canon_f = scope
            .field_selector
            .as_deref()
            .map(|s| {
                super::selector::FieldSelector::parse(s)
                    .map(|x| x.to_string())
                    .unwrap_or_else(|_| s.to_owned())
            })
            .unwrap_or_default();
        format!(
            "{}/{}/{}|{}|{}|{}",
            scope.group,
            scope.version,
            scope.resource,
            scope.namespace.as_deref().unwrap_or(""),
            canon_l,
            canon_f
        )
    }

    /// The informer for `scope`, created (with `opts` or the defaults) on
    /// first request. Started at once if the factory was started.
    pub fn informer(
        &self,
        scope: ResourceScope,
        opts: Option<InformerOptions>,
    ) -> SharedIndexInformer {
        let key = Self::scope_key(&scope);
        if let Some(i) = self.informers.borrow().get(&key) {
            return i.clone();
        }
        let lw = Rc::new(ResourceListWatch::new(self.client.clone(), scope));
        let inf = SharedIndexInformer::new(
            lw,
            self.clock.clone(),
            opts.unwrap_or_else(|| self.defaults.clone()),
        );
        self.informers.borrow_mut().insert(key, inf.clone());
        if self.started.get() {
            inf.start();
        }
        inf
    }

    /// Start every informer (and any created later).
    pub fn start(&self) {
        self.started.set(true);
        for i in self.informers.borrow().values() {
            i.start();
        }
    }

    /// Resolves when every informer has synced.
    pub async fn wait_for_sync(&self) {
        let all: Vec<SharedIndexInformer> = self.informers.borrow().values().cloned().collect();
        for i in all {
            i.wait_for_sync().await;
        }
    }

    /// Stop every informer.
    pub fn shutdown(&self) {
        for i in self.informers.borrow().values() {
            i.stop();
        }
        self.informers.borrow_mut().clear();
    }

    /// Number of informers created.
    pub fn len(&self) -> usize {
        self.informers.borrow().len()
    }

    /// Whether no informer was created.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Default resync check period helper (kept for API symmetry with client-go).
pub fn resync_period(ms: f64) -> Option<Duration> {
    (ms.is_finite() && ms > 0.0).then(|| Duration::from_secs_f64(ms / 1000.0))
}
