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
//! ## Behaviour coverage (IDs of the client-go behaviour specification)
//!
//! Tests live beside the code: `reflector/tests.rs` (R), `shared_informer/tests.rs`
//! (S), `controller.rs` (C), `processor.rs` (P), `reflector/backoff.rs` (B),
//! `factory.rs` (F), `status.rs`; the wasm suite `tests/wasm_informer.rs` (W)
//! runs the consistency property against the sim in Node and Chromium.
//!
//! | ID | test |
//! |---|---|
//! | RL-01 | R `rl_01_watch_list_only_when_enabled_and_supported` |
//! | RL-02 | R `rl_02_initial_list_replaces_then_watches_from_the_list_rv_with_bookmarks` |
//! | RL-03 | R `rl_03_relist_uses_the_last_rv_unpaginated` |
//! | RL-04 | R `rl_04_explicit_page_size_always_paginates`, `rl_04_a_paginated_rv0_list_makes_relists_paginate` |
//! | RL-05 | R `rl_05_expired_or_too_large_list_retries_at_once_with_empty_rv` |
//! | RL-06 | R `rl_06_too_large_resource_version_recognition` |
//! | RL-07 | R `rl_07_expired_continue_token_falls_back_to_one_full_list_at_the_original_rv` |
//! | RL-08 | R `rl_08_watch_timeout_is_random_in_min_to_twice_min` |
//! | RL-09 | R `rl_09_events_are_applied_and_foreign_kinds_skipped_without_moving_the_rv` |
//! | RL-10 | R `rl_09_…` (last event wins), `rl_10_bookmarks_move_the_rv_and_watch_from_zero_tracks_after_first_non_added` |
//! | RL-11 | R `rl_11_normal_close_rewatches_at_once_from_the_last_rv` (also dropped connection, idle watchdog) |
//! | RL-12 | R `rl_12_very_short_watch_backs_off_then_relists` |
//! | RL-13 | R `rl_13_gone_during_watch_relists_after_backoff_and_keeps_the_rest`, `rl_13_too_many_requests_during_a_watch_rewatches_without_relist` |
//! | RL-14 | R `rl_14_429_opening_a_watch_waits_one_step_and_never_relists`, `rl_14_network_error_opening_a_watch_retries_but_other_errors_relist_via_the_handler` |
//! | RL-15 | R `rl_15_internal_error_window` |
//! | RL-16 | B `rl_16_*` (steps, jitter, cap, reset since the previous reset, custom backoff) |
//! | RL-17 | R `rl_17_list_failures_reach_the_handler_and_retry_after_backoff` |
//! | RL-18 | R `rl_18_resync_timer_runs_while_watching_and_asks_first`; S `si_08_09_*` |
//! | RL-19 | R `rl_19_stop_before_start_issues_nothing_and_stop_during_watch_drops_it`; S `stop_leaves_no_fetch_timer_or_task_behind`; W (open watches back to before, no timer fires) |
//! | RL-20/21 | R `rl_20_21_watch_list_fills_a_temporary_store_then_continues_the_same_stream`, `rl_21_an_end_bookmark_annotated_false_does_not_count`; W (watch-list informer) |
//! | RL-22 | R `rl_22_watch_list_rv_comes_only_from_non_added_events` |
//! | RL-23 | R `rl_23_watch_list_rejection_falls_back_to_list_and_watch_for_good`, `rl_23_watch_list_retries_429_and_restarts_after_an_early_close`, `rl_23_very_short_watch_list_falls_back_within_the_cycle` |
//! | RL-24 | R `rl_24_a_table_list_is_rejected`; Table watch objects skipped by `wrong_kind` |
//! | PG-01..04 | `api::tests::pg_01_to_04_pager_rules` (pager); the reflector's own paging: R `rl_04_*`, `rl_07_*` |
//! | PG-05 | not used: the reflector needs every page before one `Replace` |
//! | CT-01 | C `ct_01_add_vs_update_by_presence_and_store_written_first` |
//! | CT-02 | C `ct_02_update_old_is_whatever_the_cache_held` |
//! | CT-03 | C `ct_03_si_17_relist_deletions_are_tombstones_with_the_cached_object`; S `si_17_ct_03_*` |
//! | CT-04 | C `ct_04_resync_delivers_update_of_the_same_object` |
//! | CT-05 | R `rl_10_*` (bookmark moves the RV, writes no object) |
//! | CT-06 | DeltaFIFO pipeline: per-key pops, no multi-key transactions (see `controller.rs`) |
//! | CT-07 | C `ct_07_failed_item_is_dropped_and_the_loop_continues` |
//! | CT-08 | C `ct_08_initial_list_adds_are_flagged_later_ones_are_not`; S `si_09_ct_08_*` |
//! | CT-09 | S `si_15_ct_09_transform_before_caching_once_and_setters_only_before_start` |
//! | CT-10 | policy: Rust handlers must not panic (a wasm panic aborts); the JS layer catches exceptions |
//! | CT-11 | filtering handlers are the binding layer's (scoped views) |
//! | CT-12 | C `ct_12_has_synced_delegates_to_the_queue_and_turns_are_bounded`; S `si_01_02_*` (last sync RV) |
//! | SI-01/02 | S `si_01_02_handlers_before_start_get_initial_adds_then_live_events_and_indexers_work` |
//! | SI-03/04 | S `si_03_04_late_handler_gets_the_cache_first_atomically_and_its_own_sync`, `si_04_registration_syncs_only_after_its_async_handler_returned` |
//! | SI-05 | S `si_05_has_synced_survives_relists`, `si_04_*` |
//! | SI-06 | S `si_06_a_slow_async_handler_does_not_delay_the_others_or_the_cache` |
//! | SI-07 | S `si_07_resync_check_period_rules`; P `si_07_effective_periods_and_check_period_lowering` |
//! | SI-08/09 | S `si_08_09_per_handler_resync_reaches_only_due_handlers`, `si_09_ct_08_*`; P `si_08_09_only_due_listeners_get_sync_updates` |
//! | SI-10 | P `si_10_events_before_run_are_held_then_delivered_in_order` |
//! | SI-11/13 | S `si_11_13_remove_is_idempotent_and_double_registration_is_independent` |
//! | SI-12 | S `si_12_shut_down_waits_for_the_pump`; P `si_11_12_*` |
//! | SI-14 | S `si_14_lifecycle_after_stop` |
//! | SI-15 | S `si_15_ct_09_*`, `strip_managed_fields_and_metadata_only_transforms` |
//! | SI-16 | deviation: no 1 s pause (see `processor.rs`) |
//! | SI-17 | S `si_17_ct_03_watch_delete_passes_the_object_relist_delete_a_tombstone` (DeltaFIFO drops a DELETE of a never-cached key, DF-03) |
//! | SI-18 | S `si_18_wait_for_cache_sync_is_event_driven_and_false_when_stopped`; F `factory_start_wait_and_shutdown` |
//! | status | S `status_reports_phase_counts_and_errors_with_notifications`; R `list_progress_reports_remaining_item_count_totals` |
//! | back-pressure | R `back_pressure_stops_reading_the_watch_until_the_queue_drains` |
//! | consistency | S `consistency_under_a_random_script_store_and_handler_map_match_the_model` (20 seeds); W (20 seeds against the sim) |

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use super::controller::{ApplyFailure, Controller, ControllerOptions, DeltaHandler};
use super::delta_fifo::{DeltaFifo, DeltaFifoOptions, KnownObjects, Transformer};
use super::keys::DeltaObject;
use super::list_watch::ListerWatcher;
use super::processor::{
    Handler, Notification, Processor, Registration, DEFAULT_MAX_PENDING, MIN_RESYNC_PERIOD,
};
use super::reflector::{Reflector, ReflectorOptions, Seed, WatchErrorHandler};
use super::status::{Failure, HeldBack, InformerStatus, Phase, StatusCell};
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
    /// The bound of each handler's backlog ([`DEFAULT_MAX_PENDING`] when
    /// `None`; `Some(0)` = unbounded). While a handler is over it, the
    /// informer stops applying the queue and reading the watch.
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

impl std::error::Error for InformerError {}

struct Inner {
    lw: Rc<dyn ListerWatcher>,
    clock: SharedClock,
    indexer: Indexer,
    fifo: RefCell<Option<DeltaFifo>>,
    status: StatusCell,
    opts: RefCell<InformerOptions>,
    processor: Rc<Processor>,
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
#[derive(Clone)]
pub struct SharedIndexInformer {
    inner: Rc<Inner>,
}

/// Forwards the controller's writes to the processor, and holds the
/// controller back while a listener's backlog is full (shown in the status).
struct Fanout(Rc<Processor>, StatusCell);

impl DeltaHandler for Fanout {
    fn on_add(&self, obj: &KubeObject, initial: bool) {
        self.0
            .distribute(Notification::Add(obj.clone(), initial), false);
    }
    fn on_update(&self, old: &KubeObject, new: &KubeObject) {
        let sync = old.resource_version() == new.resource_version();
        self.0
            .distribute(Notification::Update(old.clone(), new.clone()), sync);
    }
    fn on_delete(&self, obj: &DeltaObject) {
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

/// Milliseconds (from JS) to a resync period; non-positive or non-finite = none.
pub fn resync_period(ms: f64) -> Option<Duration> {
    (ms.is_finite() && ms > 0.0)
        .then(|| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .flatten()
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

    /// The store (SI-01: store and indexer are the same object). Listers
    /// and snapshots read it; clones are cheap handles to the same data.
    pub fn indexer(&self) -> &Indexer {
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
        let period = self.inner.opts.borrow().reflector.resync_period;
        self.add_event_handler_with_resync(handler, period.unwrap_or_default())
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

    /// A listener that receives only what the cache applies from now on,
    /// with no replay of what it holds: for a caller that replays the cache
    /// itself, per handler, through [`Registration::enqueue`].
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn add_listener_without_replay(
        &self,
        handler: Handler,
    ) -> Result<Registration, InformerError> {
        self.register(handler, Duration::ZERO, false)
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
        let fifo = DeltaFifo::new(DeltaFifoOptions {
            known_objects: Some(Rc::new(inner.indexer.clone()) as Rc<dyn KnownObjects>),
            emit_delta_type_replaced: true,
            transformer: opts.transform.clone(),
        });
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
        let on_failure: Rc<dyn Fn(ApplyFailure)> = Rc::new(move |f: ApplyFailure| {
            status.report_failure(Failure {
                key: f.key,
                reason: f.error.reason().to_owned(),
                message: format!("could not cache an object: {}", f.error),
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
            Rc::new(Fanout(inner.processor.clone(), inner.status.clone())),
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
