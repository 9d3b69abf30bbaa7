//! The Reflector: keeps a [`DeltaFifo`] in step with the server by listing,
//! then watching from the list's resourceVersion, and recovering from every
//! way a watch can end.
//!
//! Recovery rules (client-go's, IDs defined in `docs/behaviours.md`):
//!
//! | what happened | what the reflector does |
//! |---|---|
//! | initial list | pages of 500 at RV "0" (RL-02/04); one `Replace` into the queue |
//! | relist | at the last synced RV, unpaginated unless a page size is set or pagination was seen (RL-03/04) |
//! | list 410 / too-large RV (RL-06) | list again at once with RV "" (RL-05) |
//! | continue token expired | one unpaginated list at the original RV (RL-07, PG-04) |
//! | watch ends normally, or the connection drops after ≥ 1 s or ≥ 1 event | re-watch at once from the last RV (RL-11) |
//! | watch ends < 1 s with no event | backoff, relist (RL-12) |
//! | 410 Expired/Gone during a watch | backoff, relist at the last RV (RL-13) |
//! | 429 during a watch | backoff, re-watch (RL-13) |
//! | 500 during a watch | re-watch while the internal-error window allows (RL-15, default off), else backoff, relist |
//! | 429 or network error opening a watch | backoff, re-watch without relist (RL-14) |
//! | other error opening a watch, or a list failure | error handler, backoff, relist (RL-14/17) |
//! | no bytes and no bookmark for the idle timeout | the stream ends with a timeout: like a dropped connection |
//! | events of another kind, `Table` objects | skipped, RV unchanged (RL-09/24) |
//! | the host says `online` after an `offline` seen since the watch opened | the watch is presumed dead: re-watch at once from the last RV |
//!
//! Backoff: 800 ms doubling to 30 s, each wait plus up to 100 % jitter,
//! reset two minutes after the previous reset ([`BackoffManager`], RL-16).
//! The host's `online` event ([`NetworkEvents`]) ends every wait at once
//! (not before a wait the server asked for, `Retry-After`) and starts the
//! steps over: after an outage the retry comes when the network is back,
//! not up to a minute later, and one that fails because the network is
//! not quite back yet comes again soon. client-go has no such signal.
//! Watches ask for bookmarks and a server timeout drawn from [300, 600) s
//! (RL-08). Event RVs are tracked last-event-wins; a watch that started from
//! `""`/`"0"` records RVs only after its first non-ADDED event (RL-10).
//! The resync timer runs only while watching and asks `should_resync` first
//! (RL-18). Stopping = dropping the task: every fetch and timer it owns is
//! dropped with it (RL-19).
//!
//! **Mode.** List + watch is the default; streaming watch-list (RL-20..23:
//! `sendInitialEvents`, events into a temporary store until the
//! `k8s.io/initial-events-end` bookmark, one `Replace`, the same stream
//! continuing as the watch) is opt-in with [`ReflectorOptions::use_watch_list`].
//! client-go ≥ 1.35 defaults to watch-list; we do not, because API servers
//! before 1.32 and many proxies in front of browsers (`kubectl proxy` setups,
//! dashboard backends, API gateways that buffer or time out long responses)
//! reject or mishandle it, and in a browser the paginated list already keeps
//! peak memory flat. When enabled, an explicit rejection (an error other than
//! 410/429/network) falls back to list + watch within the same cycle and for
//! the rest of the reflector's life, so a rejecting server costs one request.
//!
//! **Back-pressure.** While the queue holds `max_queued` keys or more, the
//! reflector stops pulling the watch stream until the consumer signals
//! [`Reflector::drained`]; the pull-based fetch body then stops reading, so a
//! flood never buffers without bound.
//!
//! **Errors.** Only errors that end a cycle from outside an open watch (a
//! failed list, a watch that could not be opened for a non-retryable reason)
//! reach the watch-error handler, as in client-go; every error is recorded
//! in the status (`last_error`).

mod backoff;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
mod watch_list;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt;

pub(crate) use backoff::BackoffManager;
pub use backoff::{DEFAULT_BACKOFF_RESET, DEFAULT_REFLECTOR_BACKOFF};

use super::delta_fifo::{describe, SkippedObject};
use super::informer_queue::InformerQueue;
use super::keys::DeltaObject;
use super::list_watch::{EventStream, ListerWatcher};
use super::status::{Failure, Phase, StatusCell, StatusError};
use crate::rest::{Error, KubeObject, ListParams, OnItem, WatchEvent, WatchParams};
use crate::rt::{Backoff, Instant, NetworkEvents, NetworkMark, Notify, Rng, SharedClock, Sleep};

/// How a reflector behaves.
#[derive(Clone, Debug)]
pub struct ReflectorOptions {
    /// An explicit LIST page size: every list is paginated with it (RL-04).
    /// `None`: pages of 500 for lists at RV `""`/`"0"`, unpaginated relists
    /// at a concrete RV unless the server was seen paginating.
    pub page_size: Option<u32>,
    /// Lower bound of the server-side watch timeout (5 min; smaller values
    /// are ignored; the upper bound is twice this) (RL-08).
    pub min_watch_timeout: Duration,
    /// Periodic resync of the store into the queue while watching (RL-18).
    pub resync_period: Option<Duration>,
    /// Backoff between attempts (RL-16; default [`DEFAULT_REFLECTOR_BACKOFF`]).
    /// The host's `online` event ends a wait early (RL-25).
    pub backoff: Backoff,
    /// The backoff returns to its first step when this long has passed since
    /// its previous reset (RL-16; default [`DEFAULT_BACKOFF_RESET`]).
    pub backoff_reset: Duration,
    /// Stop reading the watch while the queue holds this many deltas
    /// (back-pressure). Default 500: a flood measured no faster with 2,000,
    /// which only held more versions in memory at its peak.
    pub max_queued: usize,
    /// Start with a streaming watch-list instead of a paginated list.
    pub use_watch_list: bool,
    /// Re-watch after a 500 during a watch while the first such error is at
    /// most this old (RL-15; zero = never, the default).
    pub max_internal_error_retry: Duration,
    /// Skip (and report) watch events whose object's `kind` differs
    /// (RL-09), as client-go's typed informers do; objects without a `kind`
    /// and metadata-only answers (`PartialObjectMetadata`) are accepted.
    /// The factory sets it from the resource's kind when that is known.
    pub expected_kind: Option<String>,
}

impl Default for ReflectorOptions {
    fn default() -> Self {
        ReflectorOptions {
            page_size: None,
            min_watch_timeout: Duration::from_secs(300),
            resync_period: None,
            backoff: DEFAULT_REFLECTOR_BACKOFF,
            backoff_reset: DEFAULT_BACKOFF_RESET,
            max_queued: 500,
            use_watch_list: false,
            max_internal_error_retry: Duration::ZERO,
            expected_kind: None,
        }
    }
}

/// Called with every error that ends a list-and-watch cycle (RL-17), and
/// with each network error opening a watch (RL-14: the server is out of
/// reach; the watch is tried again after a backoff step, without a relist).
pub type WatchErrorHandler = Rc<dyn Fn(&Error)>;

/// Asked when the resync timer fires; `false` skips that resync (RL-18).
pub type ShouldResync = Rc<dyn Fn() -> bool>;

/// The default page size of paginated lists (PG-01).
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// Seconds over which the informers of a client that hear the server
/// answer again spread their retries.
const REACHED_SPREAD_S: f64 = 1.0;

/// A watch shorter than this without any event is suspicious (RL-12).
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// How one watch stream ended.
enum WatchEnd {
    /// Closed normally (or dropped after doing work): re-watch at once.
    Closed,
    /// Closed normally within [`VERY_SHORT_WATCH`], after some events:
    /// re-watch after the backoff's first step (it does not grow).
    /// client-go re-watches at once, but a server or proxy that ends every
    /// watch after an event would then be asked thousands of times a
    /// second, at full CPU.
    ClosedEarly,
    /// End the cycle: back off and relist.
    Relist,
    /// 429: back off and re-watch.
    TooManyRequests(Option<Duration>),
    /// A 500: re-watch if the internal-error window allows, else relist.
    Internal,
    /// The network went away while the watch was open and is back: the
    /// watch may have died without a word. Re-watch at once.
    NetworkBack,
}

#[derive(Default)]
struct State {
    last_rv: String,
    paginated: bool,
    rv_unavailable: bool,
    watch_list_rejected: bool,
}

/// How long a watch from a stored copy's version must last without an
/// error before the copy counts as confirmed (when no event came sooner).
const CONFIRM_STORED_AFTER: Duration = Duration::from_secs(1);

/// A stored copy of a resource to start from: its objects as of
/// `resource_version`, written at `stored_at_ms` (wall clock).
#[derive(Clone, Debug, Default)]
pub struct Seed {
    /// The objects, as the cache held them (after its transform).
    pub objects: Vec<KubeObject>,
    /// The resourceVersion the objects are current at.
    pub resource_version: String,
    /// When they were stored (wall-clock ms since the epoch).
    pub stored_at_ms: f64,
}

/// Lists and watches into a queue ([`DeltaFifo`](super::DeltaFifo) or
/// [`RealFifo`](super::RealFifo)).
pub struct Reflector {
    lw: Rc<dyn ListerWatcher>,
    fifo: InformerQueue,
    clock: SharedClock,
    status: StatusCell,
    opts: ReflectorOptions,
    on_error: Option<WatchErrorHandler>,
    should_resync: Option<ShouldResync>,
    on_replace: Option<Rc<dyn Fn()>>,
    drained: Notify,
    relist_requested: Cell<bool>,
    relist_notify: Notify,
    state: RefCell<State>,
    rng: RefCell<Rng>,
    resync_at: Cell<Option<Instant>>,
    /// Seeded from a stored copy that the server has not confirmed yet.
    stored: Cell<bool>,
    network: NetworkEvents,
    /// The last failure met no server (a network error).
    unreachable: Cell<bool>,
}

/// A 410 whose reason is `Expired` (PG-04: `Gone` does not count for continue tokens).
fn is_expired(e: &Error) -> bool {
    e.reason() == Some("Expired") || (e.code() == Some(410) && e.reason() != Some("Gone"))
}

fn is_internal(e: &Error) -> bool {
    e.code() == Some(500) || e.reason() == Some("InternalError")
}

impl Reflector {
    /// A reflector feeding `fifo` from `lw`.
    pub fn new(
        lw: Rc<dyn ListerWatcher>,
        fifo: impl Into<InformerQueue>,
        clock: SharedClock,
        status: StatusCell,
        opts: ReflectorOptions,
    ) -> Self {
        let seed = (crate::rt::random_f64() * u64::MAX as f64) as u64;
        Reflector {
            lw,
            fifo: fifo.into(),
            clock,
            status,
            opts,
            on_error: None,
            should_resync: None,
            on_replace: None,
            drained: Notify::new(),
            relist_requested: Cell::new(false),
            relist_notify: Notify::new(),
            state: RefCell::new(State::default()),
            rng: RefCell::new(Rng::with_seed(seed)),
            resync_at: Cell::new(None),
            stored: Cell::new(false),
            network: crate::rt::host_network(),
            unreachable: Cell::new(false),
        }
    }

    /// React to `network` instead of the host's `online` and `offline`
    /// events ([`host_network`](crate::rt::host_network)).
    #[must_use]
    pub fn with_network(mut self, network: NetworkEvents) -> Self {
        self.network = network;
        self
    }

    /// Receive the errors that end a cycle (RL-17), and network errors
    /// opening a watch (RL-14).
    #[must_use]
    pub fn with_error_handler(mut self, h: Option<WatchErrorHandler>) -> Self {
        self.on_error = h;
        self
    }

    /// Gate each periodic resync (RL-18; the informer asks its listeners, SI-08).
    #[must_use]
    pub fn with_should_resync(mut self, f: Option<ShouldResync>) -> Self {
        self.should_resync = f;
        self
    }

    /// Call `f` after every `Replace` into the queue (an empty list leaves
    /// nothing to pop, so the consumer learns of the sync this way).
    #[must_use]
    pub fn with_on_replace(mut self, f: Option<Rc<dyn Fn()>>) -> Self {
        self.on_replace = f;
        self
    }

    pub(super) fn replaced(&self) {
        if let Some(f) = &self.on_replace {
            f();
        }
    }

    /// The signal the queue's consumer fires after draining a batch; the
    /// reflector waits on it while the queue is over `max_queued`.
    pub fn drained(&self) -> Notify {
        self.drained.clone()
    }

    /// End the current watch and relist from the last RV: the consumer could
    /// not apply a change this reflector queued, and a relist is what
    /// brings the cache back to the server's state (a re-watch would skip
    /// the change).
    pub fn request_relist(&self) {
        self.relist_requested.set(true);
        self.relist_notify.notify_waiters();
    }

    /// The RV of the last list, event or bookmark applied (`""` before the first list).
    pub fn last_sync_resource_version(&self) -> String {
        self.state.borrow().last_rv.clone()
    }

    /// Whether the last RV was found expired or too large (the next list uses RV "").
    pub fn is_last_sync_resource_version_unavailable(&self) -> bool {
        self.state.borrow().rv_unavailable
    }

    fn set_last_rv(&self, rv: &str) {
        let mut st = self.state.borrow_mut();
        if st.last_rv != rv {
            st.last_rv.clear();
            st.last_rv.push_str(rv);
        }
    }

    fn record_error(&self, e: &Error) {
        let entry = StatusError {
            message: e.to_string(),
            code: e.code().unwrap_or(0),
            reason: e.reported_reason().to_owned(),
            key: None,
            at_ms: self.clock.wall_millis(),
        };
        self.status.update(|s| s.last_error = Some(entry));
    }

    /// Report list items that could not be decoded; the rest of the list is applied.
    fn report_invalid(&self, invalid: Vec<(String, Error)>) {
        for (key, e) in invalid {
            self.status.report_failure(Failure {
                key,
                reason: e.reason().unwrap_or("Invalid").to_owned(),
                message: format!("skipped a listed object: {e}"),
                at_ms: self.clock.wall_millis(),
            });
        }
    }

    /// Report objects a list (or watch-list) could not cache; the rest of it is applied.
    pub(super) fn report_skipped(&self, skipped: Vec<SkippedObject>) {
        for s in skipped {
            self.status.report_failure(Failure {
                key: s.key,
                reason: s.error.reason().to_owned(),
                message: format!("skipped a listed object: {}", s.error),
                at_ms: self.clock.wall_millis(),
            });
        }
    }

    fn report(&self, e: &Error) {
        self.record_error(e);
        if let Some(h) = &self.on_error {
            h(e);
        }
    }

    fn set_phase(&self, phase: Phase) {
        let rv = self.last_sync_resource_version();
        // Entering `watching` (a watch connecting after a list, or a stream
        // beginning) is when the watchdog's clock starts, for a status read
        // to tell a host that stopped running the informer from a quiet
        // watch (`InformerStatus::stalled`).
        let watching = (phase == Phase::Watching).then(|| {
            (
                self.clock.wall_millis(),
                self.lw
                    .watch_idle_timeout()
                    .map(|d| d.as_secs_f64() * 1000.0),
            )
        });
        self.status.update(|s| {
            s.phase = phase;
            s.next_retry_at_ms = None;
            s.resource_version = rv;
            if let Some((since, idle)) = watching {
                s.watching_since_ms = Some(since);
                s.watch_idle_ms = idle;
            }
        });
    }

    /// The server confirmed the cache (a list, or a watch event or bookmark
    /// after a seed): it is live, no longer only stored. An open watch alone
    /// does not confirm it: an expired version arrives as an error event.
    fn confirm(&self) {
        if self.stored.replace(false) {
            self.status.update(|s| s.stored_at_ms = None);
        }
    }

    /// Fill the queue from a stored copy (a warm start) as if a list at
    /// `seed.resource_version` had returned it; [`resume`](Reflector::resume)
    /// then watches from that version, and an expired one (410) relists.
    /// Objects the cache cannot hold are skipped and reported, and then the
    /// copy is shown but not resumed from: watching from its version would
    /// never bring the skipped objects back, so the informer lists. An empty
    /// resourceVersion seeds nothing: there is nothing to watch from.
    pub fn seed(&self, seed: Seed) {
        if seed.resource_version.is_empty() {
            return;
        }
        let skipped = self.fifo.replace(seed.objects, &seed.resource_version);
        let incomplete = !skipped.is_empty();
        self.report_skipped(skipped);
        if !incomplete {
            self.set_last_rv(&seed.resource_version);
        }
        self.stored.set(true);
        self.status.update(|s| {
            s.phase = Phase::Stored;
            s.next_retry_at_ms = None;
            s.resource_version = seed.resource_version.clone();
            s.stored_at_ms = Some(seed.stored_at_ms);
        });
        self.replaced();
    }

    /// Wait one backoff step (at least `floor`, the server's `Retry-After`),
    /// showing it in the status.
    async fn back_off(&self, backoff: &mut BackoffManager, floor: Option<Duration>) {
        let floor = floor.unwrap_or_default();
        let wait = backoff.next_delay().max(floor);
        if self.wait_out(wait, floor).await {
            // The network has just come back, often before its routes, DNS
            // or VPN: a retry that fails then waits the first steps again, not
            // the step the outage had grown to.
            backoff.restart();
        }
    }

    /// Wait `wait` in the `Backoff` phase, showing when the next try is. An
    /// `online` from the host ends the wait early (a retry then has a chance
    /// the backoff's next step would only delay), but not before `floor`,
    /// which the server asked for. Whether it was ended so.
    async fn wait_out(&self, wait: Duration, floor: Duration) -> bool {
        let not_before = self.clock.now() + floor;
        let mut wait = wait;
        let mut woken = false;
        loop {
            let at = self.clock.wall_millis() + wait.as_secs_f64() * 1000.0;
            self.status.update(|s| {
                s.phase = Phase::Backoff;
                s.next_retry_at_ms = Some(at);
            });
            let online = self.network.online();
            // After a network error, another informer of the same client
            // reaching the server ends the wait too (once: a retry follows).
            let reached = match (!woken && self.unreachable.get()).then(|| self.lw.reached_again())
            {
                Some(Some(r)) => r,
                _ => Box::pin(futures::future::pending()),
            };
            let spread = match select(self.clock.sleep(wait), select(online, reached)).await {
                Either::Left(_) => return woken,
                Either::Right((Either::Left(_), _)) => Duration::ZERO,
                // Every informer of the client hears it at once: spread
                // their retries over a second rather than send them all in
                // one burst (a page's connections, the server just back).
                Either::Right((Either::Right(_), _)) => {
                    Duration::from_secs_f64(self.rng.borrow_mut().next_f64() * REACHED_SPREAD_S)
                }
            };
            woken = true;
            wait = not_before
                .saturating_duration_since(self.clock.now())
                .max(spread);
            if wait.is_zero() {
                return true;
            }
        }
    }

    /// Run until the task is dropped or aborted (which cancels every request
    /// and timer it owns). Each cycle lists (or watch-lists) and watches;
    /// whenever a cycle ends, its error (if any) goes to the handler, then
    /// one backoff step, then the next cycle (RL-17).
    pub async fn run(self: Rc<Self>) {
        self.run_from(false).await
    }

    /// [`run`](Reflector::run) after a pause: when an RV is known, the first
    /// cycle watches from it without listing (a 410 then relists, as any
    /// expired watch does).
    pub async fn resume(self: Rc<Self>) {
        self.run_from(true).await
    }

    async fn run_from(self: Rc<Self>, resume: bool) {
        // The host watches its network only while some reflector runs.
        let _listening = self.network.listen();
        let seed = self.rng.borrow_mut().next_u64();
        let mut backoff = BackoffManager::new(
            self.opts.backoff,
            self.opts.backoff_reset,
            self.clock.clone(),
            seed,
        );
        let mut first = true;
        let mut watch_only = resume && !self.last_sync_resource_version().is_empty();
        let mut missed_before = false;
        loop {
            if !first {
                self.status.quiet(|s| s.relists += 1);
            }
            first = false;
            let cycle = if std::mem::take(&mut watch_only) {
                self.watch_from_last_rv(&mut backoff).await
            } else {
                self.list_and_watch(&mut backoff).await
            };
            let version_missed = match &cycle {
                Err(e) => e.is_gone() || e.is_too_large_resource_version(),
                Ok(()) => false,
            };
            // A server that asked for a wait (429, or a 5xx with
            // `Retry-After`) gets at least that long.
            let mut floor = None;
            if let Err(e) = cycle {
                self.report(&e);
                self.unreachable.set(e.is_network());
                floor = e.retry_after();
            }
            // The server is up and answering, only not at our version
            // (expired, or ahead of a server whose versions went backwards):
            // the next list goes back to the first step, not the one an
            // outage left the backoff at. Only the first time in a row: a
            // server answering so every time still backs off as it grows.
            if version_missed && !missed_before {
                backoff.restart();
            }
            missed_before = version_missed;
            self.back_off(&mut backoff, floor).await;
        }
    }

    /// The RV for the next list (client-go's `relistResourceVersion`).
    fn relist_rv(&self) -> String {
        let st = self.state.borrow();
        if st.rv_unavailable {
            String::new()
        } else if st.last_rv.is_empty() {
            "0".to_owned()
        } else {
            st.last_rv.clone()
        }
    }

    /// One list-and-watch cycle. `Ok` = end quietly (backoff, relist);
    /// `Err` = report, backoff, relist.
    pub(crate) async fn list_and_watch(&self, backoff: &mut BackoffManager) -> Result<(), Error> {
        let mut pending: Option<(EventStream, NetworkMark)> = None;
        let try_watch_list = self.opts.use_watch_list
            && self.lw.supports_watch_list()
            && !self.state.borrow().watch_list_rejected;
        if try_watch_list {
            self.status.quiet(|s| s.watch_list = true);
            pending = self.watch_list(backoff).await?;
        }
        if pending.is_none() {
            self.status.quiet(|s| s.watch_list = false);
            self.list().await?;
            // The list is in the queue: from here the informer is live (or
            // backing off), never "listing", while the watch connects.
            self.set_phase(Phase::Watching);
        }
        self.relist_requested.set(false);
        self.watch_loop(pending, backoff).await
    }

    /// A cycle that starts with a watch from the last RV (after a pause).
    async fn watch_from_last_rv(&self, backoff: &mut BackoffManager) -> Result<(), Error> {
        self.relist_requested.set(false);
        self.watch_loop(None, backoff).await
    }

    /// Watch (re-watching after clean closes) until the cycle must end.
    async fn watch_loop(
        &self,
        mut pending: Option<(EventStream, NetworkMark)>,
        backoff: &mut BackoffManager,
    ) -> Result<(), Error> {
        self.resync_at
            .set(self.opts.resync_period.map(|p| self.clock.now() + p));
        let mut internal = RetryWindow::new(self.opts.max_internal_error_retry);
        let mut opened = false;
        loop {
            // RL-10: a watch from "" or "0" starts with synthetic ADDED events
            // that are not in version order; versions count from the first
            // other event only.
            let mut concrete_rv = true;
            // The network's history from before the watch opened: an
            // `offline` while it opens may leave it dead too.
            let (stream, since) = match pending.take() {
                // The watch-list stream continues as the watch (RL-21).
                Some(s) => s,
                None => {
                    if opened {
                        self.status.quiet(|s| s.reconnects += 1);
                    }
                    opened = true;
                    let since = self.network.mark();
                    let params = self.watch_params();
                    concrete_rv =
                        !matches!(params.resource_version.as_deref(), None | Some("" | "0"));
                    match self.lw.watch(params).await {
                        Ok(s) => {
                            self.show_transport();
                            (s, since)
                        }
                        // A 429 or a 5xx asking to wait: client-go's rest
                        // client retries both inside the request.
                        Err(e)
                            if e.is_too_many_requests() || e.is_network() || e.asks_to_wait() =>
                        {
                            // RL-14: one backoff step, re-watch, no relist.
                            // A server out of reach is also told to the
                            // handler (client-go only logs it), so an app
                            // learns of an outage from a running informer
                            // as it does from one that cannot list.
                            if e.is_network() {
                                self.report(&e);
                            } else {
                                self.record_error(&e);
                            }
                            self.unreachable.set(e.is_network());
                            self.back_off(backoff, e.retry_after()).await;
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            self.status.quiet(|s| s.watches_opened += 1);
            self.unreachable.set(false);
            self.set_phase(Phase::Watching);
            let consumed = self.consume(stream, concrete_rv, since);
            let end = if self.stored.get() {
                // An expired version arrives at once as an error event: a
                // watch that has lasted a moment without one confirms the copy.
                let confirm = async {
                    self.clock.sleep(CONFIRM_STORED_AFTER).await;
                    self.confirm();
                    futures::future::pending::<std::convert::Infallible>().await
                };
                match select(Box::pin(consumed), Box::pin(confirm)).await {
                    Either::Left((end, _)) => end,
                    Either::Right((never, _)) => match never {},
                }
            } else {
                consumed.await
            };
            match end {
                WatchEnd::Closed | WatchEnd::NetworkBack => {}
                WatchEnd::ClosedEarly => {
                    // The watch did work: the first step every time, not a
                    // growing one, so such a server is asked about once a
                    // second and the cache is never minutes behind it.
                    let r = self.rng.borrow_mut().next_f64();
                    self.wait_out(self.opts.backoff.delay(0, r), Duration::ZERO)
                        .await;
                }
                WatchEnd::Relist => return Ok(()),
                WatchEnd::TooManyRequests(floor) => self.back_off(backoff, floor).await,
                WatchEnd::Internal => {
                    if !internal.should_retry(self.clock.now()) {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Put the transport of the watch just opened into the status; a choice
    /// the connection budget forced is a warning users should see.
    fn show_transport(&self) {
        let Some(t) = self.lw.last_transport() else {
            return;
        };
        let warning = t.budget_forced().then(|| match t.reason {
            crate::rest::TransportReason::OverBudget => format!(
                "{} fetch watches are open on {}: this watch uses a WebSocket",
                t.fetch_watches,
                if t.origin.is_empty() { "this origin" } else { &t.origin }
            ),
            _ => "WebSocket failed on this origin recently: this watch uses fetch and may wait for a free connection".to_owned(),
        });
        let transport = Some(t.carrier().to_owned());
        let reason = Some(t.reason.as_str().to_owned());
        let changed = self
            .status
            .with(|s| s.transport != transport || s.warning != warning);
        let set = |s: &mut super::status::InformerStatus| {
            s.transport = transport;
            s.transport_reason = reason;
            s.warning = warning;
        };
        if changed {
            self.status.update(set);
        } else {
            self.status.quiet(set);
        }
    }

    fn watch_timeout(&self) -> u32 {
        let min = self
            .opts
            .min_watch_timeout
            .max(Duration::from_secs(300))
            .min(Duration::from_secs(86_400))
            .as_secs_f64();
        (min + self.rng.borrow_mut().next_f64() * min) as u32
    }

    fn watch_params(&self) -> WatchParams {
        WatchParams {
            resource_version: Some(self.last_sync_resource_version()),
            allow_watch_bookmarks: true,
            timeout_seconds: Some(self.watch_timeout()),
            ..Default::default()
        }
    }

    /// The initial list or a relist, with the RL-05 retry at RV "".
    async fn list(&self) -> Result<(), Error> {
        loop {
            // Each attempt counts its own items.
            self.status.update(|s| {
                s.phase = Phase::Listing;
                s.next_retry_at_ms = None;
                s.listed = 0;
                s.list_total = None;
            });
            let rv = self.relist_rv();
            match self.list_at(&rv).await {
                Ok(()) => {
                    self.state.borrow_mut().rv_unavailable = false;
                    return Ok(());
                }
                Err(e)
                    if (e.is_gone()
                        || e.is_too_large_resource_version()
                        || self.refused_stored_version(&e, &rv))
                        && !self.state.borrow().rv_unavailable =>
                {
                    // RL-05: the RV is gone or ahead of the server; list once more at RV "".
                    self.record_error(&e);
                    self.state.borrow_mut().rv_unavailable = true;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether `e` is the server refusing the version of a stored copy not
    /// confirmed yet (400 or 422: a version another host wrote, such as a
    /// SharedWorker's own, or a damaged one). Such a version never becomes
    /// valid, so the list goes on at RV "" as for an expired one.
    fn refused_stored_version(&self, e: &Error, rv: &str) -> bool {
        // An incomplete copy set no version: its list is at "0".
        self.stored.get() && !rv.is_empty() && rv != "0" && matches!(e.code(), Some(400 | 422))
    }

    fn page_limit(&self, rv: &str) -> Option<u32> {
        if let Some(n) = self.opts.page_size.filter(|n| *n > 0) {
            return Some(n);
        }
        let learned = self.state.borrow().paginated;
        (learned || rv.is_empty() || rv == "0").then_some(DEFAULT_PAGE_SIZE)
    }

    async fn list_at(&self, rv: &str) -> Result<(), Error> {
        let limit = self.page_limit(rv);
        // Each item is transformed (and an unchanged one swapped for the
        // stored copy) as it is decoded, so the raw list is never held whole.
        let skipped: Rc<RefCell<Vec<SkippedObject>>> = Rc::default();
        let prepare: OnItem = {
            let (fifo, skipped) = (self.fifo.clone(), skipped.clone());
            Rc::new(move |obj| match fifo.prepare(obj) {
                Ok((_, obj)) => Some(obj),
                Err(s) => {
                    skipped.borrow_mut().push(s);
                    None
                }
            })
        };
        let mut items: Vec<KubeObject> = Vec::new();
        let mut cont: Option<String> = None;
        let mut tokens = crate::api::ContinueTokens::default();
        let list_rv = loop {
            let params = ListParams {
                limit,
                // PG-03: the RV is implied by the continue token.
                resource_version: (cont.is_none() && !rv.is_empty()).then(|| rv.to_owned()),
                continue_token: cont.clone(),
                ..Default::default()
            };
            let mut page = match self.lw.list_with(params, prepare.clone()).await {
                Ok(p) => p,
                Err(e) if cont.is_some() && is_expired(&e) => {
                    // PG-04 / RL-07: the continue token expired; one full list at the original RV.
                    self.record_error(&e);
                    let mut full = self
                        .lw
                        .list_with(
                            ListParams {
                                resource_version: (!rv.is_empty()).then(|| rv.to_owned()),
                                ..Default::default()
                            },
                            prepare.clone(),
                        )
                        .await?;
                    reject_table(&full.kind)?;
                    self.report_invalid(std::mem::take(&mut full.invalid));
                    let n = full.items.len() as u64;
                    self.status.update(|s| {
                        s.listed = n;
                        s.list_total = Some(n);
                    });
                    items = full.items;
                    break full.resource_version;
                }
                Err(e) => return Err(e),
            };
            reject_table(&page.kind)?;
            self.report_invalid(std::mem::take(&mut page.invalid));
            let n = page.items.len() as u64;
            let remaining = page.remaining_item_count.map(|r| r.max(0) as u64);
            if let (Some(r), true) = (remaining, n > 0) {
                // A large list (64 MiB and up): make room for what the next
                // pages bring, up to 32 MiB at a time, so wasm memory grows in
                // a few large steps (growing it 64 KiB at a time was half the
                // cost of a 50,000-pod sync). Small lists, as an edge worker's,
                // keep growing exactly as needed.
                let per_item = page.items.iter().map(|o| o.raw().len()).sum::<usize>() / n as usize;
                let listed = self.status.with(|s| s.listed) as usize;
                let total = listed.saturating_add(r as usize).saturating_mul(per_item);
                if total >= 64 << 20 {
                    crate::rt::reserve_heap((r as usize).saturating_mul(per_item).min(32 << 20));
                }
            }
            self.status.update(|s| {
                s.listed += n;
                s.list_total = remaining.map(|r| s.listed + r);
            });
            if items.is_empty() {
                items = page.items;
            } else {
                items.extend(page.items);
            }
            match page.continue_token.filter(|c| !c.is_empty()) {
                Some(c) => {
                    tokens.check(&c)?;
                    if rv == "0" {
                        // RL-04: the server paginates RV-0 lists; keep paginating relists.
                        self.state.borrow_mut().paginated = true;
                    }
                    cont = Some(c);
                }
                None => break page.resource_version,
            }
        };
        let mut skipped = std::mem::take(&mut *skipped.borrow_mut());
        skipped.extend(self.fifo.replace_prepared(items, &list_rv));
        self.report_skipped(skipped);
        self.set_last_rv(&list_rv);
        self.status.quiet(|s| s.resource_version = list_rv);
        self.confirm();
        self.replaced();
        Ok(())
    }

    /// The resync deadline as a timer, if resync is on.
    fn resync_timer(&self) -> Option<Sleep> {
        self.resync_at.get().map(|t| self.clock.sleep_until(t))
    }

    fn on_resync_timer(&self) {
        // RL-18: ask first; re-arm after the resync, measured from now.
        let go = self.should_resync.as_ref().is_none_or(|f| f());
        if go {
            self.fifo.resync();
        }
        self.resync_at
            .set(self.opts.resync_period.map(|p| self.clock.now() + p));
    }

    /// Apply one watch stream until it ends. `concrete_rv`: the watch started
    /// from a real RV, so every event's RV is recorded (RL-10). `since`: the
    /// network's history from before the watch opened.
    async fn consume(
        &self,
        mut stream: EventStream,
        concrete_rv: bool,
        since: NetworkMark,
    ) -> WatchEnd {
        let started = self.clock.now();
        let mut events = 0u64;
        let mut track_rv = concrete_rv;
        let mut timer = self.resync_timer();
        let mut online = self.network.online();
        loop {
            let relist = self.relist_notify.notified();
            if self.relist_requested.get() {
                return WatchEnd::Relist;
            }
            if online.fired() {
                online = self.network.online();
            }
            if self.network.back_online_since(since) {
                return WatchEnd::NetworkBack;
            }
            let next = select(stream.next(), select(relist, &mut online));
            let item = match timer.as_mut() {
                Some(t) => match select(next, t).await {
                    Either::Left((Either::Left((item, _)), _)) => item,
                    Either::Left((Either::Right(_), _)) => continue,
                    Either::Right(((), _)) => {
                        self.on_resync_timer();
                        timer = self.resync_timer();
                        continue;
                    }
                },
                None => match next.await {
                    Either::Left((item, _)) => item,
                    Either::Right(_) => continue,
                },
            };
            match item {
                None | Some(Err(Error::Network { .. } | Error::Timeout { .. })) => {
                    if let Some(Err(e)) = &item {
                        self.record_error(e);
                    }
                    // RL-11 / RL-12: a clean close or a dropped connection.
                    let short = self.clock.now().saturating_duration_since(started);
                    if events == 0 && short < VERY_SHORT_WATCH {
                        self.record_error(&Error::network(
                            "very short watch: closed within 1 s without any event",
                        ));
                        return WatchEnd::Relist;
                    }
                    if short < VERY_SHORT_WATCH {
                        return WatchEnd::ClosedEarly;
                    }
                    return WatchEnd::Closed;
                }
                Some(Err(e)) => {
                    // A malformed line and the like: client-go turns it into an
                    // in-band 500 (RC-02), so it follows the internal-error rule.
                    self.record_error(&e);
                    return WatchEnd::Internal;
                }
                Some(Ok(WatchEvent::Error(status))) => {
                    let e = Error::from(status);
                    self.record_error(&e);
                    if e.is_gone() {
                        return WatchEnd::Relist;
                    }
                    if e.is_too_many_requests() {
                        return WatchEnd::TooManyRequests(e.retry_after());
                    }
                    if is_internal(&e) {
                        return WatchEnd::Internal;
                    }
                    return WatchEnd::Relist;
                }
                Some(Ok(ev)) => {
                    events += 1;
                    if !matches!(ev, WatchEvent::Added(_)) {
                        track_rv = true;
                    }
                    if !self.apply(ev, track_rv) {
                        return WatchEnd::Relist;
                    }
                    self.wait_for_room().await;
                }
            }
        }
    }

    /// Back-pressure: while the queue is full, stop pulling the stream.
    async fn wait_for_room(&self) {
        let max = self.opts.max_queued.max(1);
        while self.fifo.queued_deltas() >= max && !self.fifo.is_closed() {
            let wait = self.drained.notified();
            if self.fifo.queued_deltas() < max || self.relist_requested.get() {
                break;
            }
            wait.await;
        }
    }

    /// Whether `o` is of a kind this informer does not cache; if so it is
    /// reported (the event is skipped, the watch goes on).
    fn wrong_kind(&self, o: &KubeObject) -> bool {
        let kind = o.kind();
        let wrong =
            kind == "Table"
                || self.opts.expected_kind.as_deref().is_some_and(|k| {
                    !kind.is_empty() && kind != k && kind != "PartialObjectMetadata"
                });
        if wrong {
            self.status.report_failure(Failure {
                key: describe(o),
                reason: "Invalid".to_owned(),
                message: format!(
                    "skipped a watch event of kind {kind:?}: this informer caches {}",
                    self.opts
                        .expected_kind
                        .as_deref()
                        .unwrap_or("objects, not tables")
                ),
                at_ms: self.clock.wall_millis(),
            });
        }
        wrong
    }

    /// RL-09: one event into the queue. An event the queue refuses (an
    /// unkeyable object, a failing transform) is reported with its key and
    /// the RV stays before it; `false` tells the caller to relist, which is
    /// what brings the change (or its later state) into the cache.
    fn apply(&self, ev: WatchEvent, track_rv: bool) -> bool {
        let wall = self.clock.wall_millis();
        let Some(obj) = ev.object() else { return true };
        if !matches!(ev, WatchEvent::Bookmark(_)) && self.wrong_kind(obj) {
            return true;
        }
        // A handle (a reference count, no copy) for the RV and for a report.
        let kept = obj.clone();
        let r = match ev {
            WatchEvent::Added(o) => self.fifo.add(o),
            WatchEvent::Modified(o) => self.fifo.update(o),
            WatchEvent::Deleted(o) => self.fifo.delete(DeltaObject::Object(o)),
            WatchEvent::Bookmark(_) | WatchEvent::Error(_) => Ok(()),
        };
        if let Err(e) = r {
            self.status.report_failure(Failure {
                key: describe(&kept),
                reason: e.reason().to_owned(),
                message: format!("could not queue a watch event: {e}"),
                at_ms: wall,
            });
            return false;
        }
        if track_rv && !kept.resource_version().is_empty() {
            self.set_last_rv(kept.resource_version());
        }
        self.status.quiet(|s| {
            s.events_applied += 1;
            s.last_event_at_ms = Some(wall);
        });
        self.confirm();
        true
    }
}

fn reject_table(kind: &str) -> Result<(), Error> {
    if kind == "Table" {
        // RL-24: a server-side printing response is not a list of objects.
        return Err(Error::invalid_request(
            "the server returned a Table; informers need full objects",
        ));
    }
    Ok(())
}

/// RL-15: re-watch after internal errors while the first error of the
/// current run is at most `window` old; a gap of a minute starts a new run.
struct RetryWindow {
    window: Duration,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl RetryWindow {
    fn new(window: Duration) -> Self {
        RetryWindow {
            window,
            first: None,
            last: None,
        }
    }

    fn should_retry(&mut self, now: Instant) -> bool {
        if self.window.is_zero() {
            return false;
        }
        if self
            .last
            .is_some_and(|l| now.saturating_duration_since(l) >= Duration::from_secs(60))
        {
            self.first = None;
        }
        self.last = Some(now);
        let first = *self.first.get_or_insert(now);
        now.saturating_duration_since(first) <= self.window
    }
}
