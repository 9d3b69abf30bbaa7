//! The Reflector: keeps a [`DeltaFifo`] in step with the server by listing,
//! then watching from the list's resourceVersion, and recovering from every
//! way a watch can end.
//!
//! Recovery rules (client-go's, IDs from the behaviour specification):
//!
//! | what happened | what the reflector does |
//! |---|---|
//! | initial list | pages of 500 at RV "0" (RL-02/04); `Replace` into the queue |
//! | relist | at the last synced RV, unpaginated unless pagination was seen (RL-03/04) |
//! | list 410 / too-large RV | list again at once with RV "" (RL-05) |
//! | continue token expired | one unpaginated list at the original RV (RL-07, PG-04) |
//! | watch ends normally | re-watch at once from the last RV (RL-11) |
//! | watch ends < 1 s with no event | backoff, relist (RL-12) |
//! | 410 Expired/Gone during a watch | backoff, relist at the last RV (RL-13) |
//! | 429 or network error opening a watch | backoff, re-watch without relist (RL-14) |
//! | connection dropped mid-stream | re-watch from the last RV (the stream just ended) |
//! | no bytes and no bookmark for the idle timeout | treated as a dropped connection |
//! | any other error | reported to the error handler, backoff, relist (RL-17) |
//!
//! Backoff: 800 ms doubling to 30 s, each wait plus up to 100 % jitter,
//! reset when 2 minutes have passed since the last reset (RL-16). Watches ask
//! for bookmarks and a server timeout drawn from [300, 600) s (RL-08). Event
//! RVs are tracked last-event-wins (RL-10).
//!
//! Mode: list + watch by default; streaming watch-list (`sendInitialEvents`,
//! RL-20..23) with `ReflectorOptions::use_watch_list`. client-go defaults to
//! watch-list; we do not yet, because API servers before 1.32, many proxies,
//! and `kubectl proxy` setups in the field reject or mishandle it, and in a
//! browser the paginated list already keeps peak memory flat. When enabled,
//! a rejection (any error other than 410/429/network) falls back to list +
//! watch within the same cycle and for the rest of the reflector's life.
//!
//! Back-pressure: while the queue holds more than `max_queued` keys the
//! reflector stops pulling the watch stream (yielding to the event loop) until
//! the controller drains it, so a flood never buffers without bound.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt;

use super::delta_fifo::DeltaFifo;
use super::keys::DeltaObject;
use super::list_watch::ListerWatcher;
use super::status::{Phase, StatusCell};
use crate::rest::{Error, KubeObject, ListParams, WatchEvent, WatchParams};
use crate::rt::{yield_now, Instant, Rng, SharedClock};

/// The reflector's backoff (client-go's `wait.Backoff` as the reflector uses it).
#[derive(Clone, Debug)]
pub struct BackoffOptions {
    /// First wait.
    pub initial: Duration,
    /// Multiplier per step.
    pub factor: f64,
    /// Cap of the base wait.
    pub cap: Duration,
    /// Extra random fraction of the wait (1.0 = up to double).
    pub jitter: f64,
    /// Return to the first step after this long since the last reset.
    pub reset_after: Duration,
}

impl Default for BackoffOptions {
    fn default() -> Self {
        BackoffOptions {
            initial: Duration::from_millis(800),
            factor: 2.0,
            cap: Duration::from_secs(30),
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

/// Exponential backoff with jitter and periodic reset, on a clock.
pub struct BackoffManager {
    opts: BackoffOptions,
    clock: SharedClock,
    current: Duration,
    last_reset: Instant,
    rng: Rng,
}

impl BackoffManager {
    /// A backoff at its first step.
    pub fn new(opts: BackoffOptions, clock: SharedClock, seed: u64) -> Self {
        let now = clock.now();
        BackoffManager {
            current: opts.initial,
            opts,
            clock,
            last_reset: now,
            rng: Rng::with_seed(seed),
        }
    }

    /// The next wait.
    pub fn next_delay(&mut self) -> Duration {
        let now = self.clock.now();
        if now - self.last_reset > self.opts.reset_after {
            self.current = self.opts.initial;
            self.last_reset = now;
        }
        let base = self.current;
        self.current = base.mul_f64(self.opts.factor.max(1.0)).min(self.opts.cap);
        base + base.mul_f64(self.opts.jitter.clamp(0.0, 10.0) * self.rng.next_f64())
    }
}

/// How a reflector behaves.
#[derive(Clone, Debug)]
pub struct ReflectorOptions {
    /// LIST page size (500).
    pub page_size: u32,
    /// Lower bound of the server-side watch timeout (5 min; the upper bound is twice this).
    pub min_watch_timeout: Duration,
    /// Periodic resync of the store into the queue.
    pub resync_period: Option<Duration>,
    /// Backoff between attempts.
    pub backoff: BackoffOptions,
    /// Stop reading the watch while the queue holds more keys than this.
    pub max_queued: usize,
    /// Start with a streaming watch-list (`sendInitialEvents`) instead of a
    /// paginated list, falling back to list + watch when the server rejects it.
    pub use_watch_list: bool,
}

impl Default for ReflectorOptions {
    fn default() -> Self {
        ReflectorOptions {
            page_size: 500,
            min_watch_timeout: Duration::from_secs(300),
            resync_period: None,
            backoff: BackoffOptions::default(),
            max_queued: 10_000,
            use_watch_list: false,
        }
    }
}

/// Called with every error that ends a list-and-watch cycle.
pub type WatchErrorHandler = Rc<dyn Fn(&Error)>;

/// Lists and watches into a [`DeltaFifo`].
pub struct Reflector {
    lw: Rc<dyn ListerWatcher>,
    fifo: DeltaFifo,
    clock: SharedClock,
    status: StatusCell,
    opts: ReflectorOptions,
    last_rv: RefCell<String>,
    paginated: Cell<bool>,
    rv_unavailable: Cell<bool>,
    watch_list_unsupported: Cell<bool>,
    on_error: Option<WatchErrorHandler>,
    rng: RefCell<Rng>,
    /// Requests issued: (is_watch, resourceVersion, limit) — for tests and status.
    log: RefCell<Vec<(bool, String, Option<u32>)>>,
    should_resync: RefCell<Option<Rc<dyn Fn() -> bool>>>,
}

/// How a watch (or a list-and-watch cycle) ended.
enum CycleEnd {
    /// Relist after a backoff (410 during a watch).
    Relist,
    /// Open a new watch from the last RV at once.
    ReWatch,
}

fn is_too_large_rv(e: &Error) -> bool {
    e.code() == Some(504) && e.to_string().contains("Too large resource version")
}

impl Reflector {
    /// A reflector feeding `fifo` from `lw`.
    pub fn new(
        lw: Rc<dyn ListerWatcher>,
        fifo: DeltaFifo,
        clock: SharedClock,
        status: StatusCell,
        opts: ReflectorOptions,
        on_error: Option<WatchErrorHandler>,
    ) -> Self {
        let seed = (crate::rt::random_f64() * u64::MAX as f64) as u64;
        Reflector {
            lw,
            fifo,
            clock,
            status,
            opts,
            last_rv: RefCell::new(String::new()),
            paginated: Cell::new(false),
            rv_unavailable: Cell::new(false),
            watch_list_unsupported: Cell::new(false),
            on_error,
            rng: RefCell::new(Rng::with_seed(seed)),
            log: RefCell::new(Vec::new()),
            should_resync: RefCell::new(None),
        }
    }

    /// Decide at each resync tick whether the store is resynced (client-go's
    /// `ShouldResync`; the shared informer asks its handlers).
    pub fn set_should_resync(&self, f: Rc<dyn Fn() -> bool>) {
        *self.should_resync.borrow_mut() = Some(f);
    }

    /// The RV of the last list or event applied.
    pub fn last_sync_resource_version(&self) -> String {
        self.last_rv.borrow().clone()
    }

    /// Every request issued so far: `(is_watch, resourceVersion, limit)`.
    pub fn request_log(&self) -> Vec<(bool, String, Option<u32>)> {
        self.log.borrow().clone()
    }

    fn record_error(&self, e: &Error) {
        let entry = (
            e.to_string(),
            e.code().unwrap_or(0),
            e.reason().unwrap_or("").to_owned(),
        );
        self.status.update(|s| s.last_error = Some(entry));
    }

    /// Run until the task is aborted (dropping it cancels every request and timer).
    pub async fn run(self: Rc<Self>) {
        let mut backoff = BackoffManager::new(
            self.opts.backoff.clone(),
            self.clock.clone(),
            self.rng.borrow_mut().next_u64(),
        );
        let mut first = true;
        loop {
            if !first {
                self.status.quiet(|s| s.relists += 1);
            }
            first = false;
            match self.list_and_watch(&mut backoff).await {
                Ok(_) => {}
                Err(e) => {
                    self.record_error(&e);
                    if let Some(h) = &self.on_error {
                        h(&e);
                    }
                }
            }
            let wait = backoff.next_delay();
            let at = self.clock.wall_millis() + wait.as_secs_f64() * 1000.0;
            self.status.update(|s| {
                s.phase = Phase::Backoff;
                s.next_retry_at_ms = Some(at);
            });
            self.clock.sleep(wait).await;
        }
    }

    async fn list(&self) -> Result<(), Error> {
        self.status.update(|s| {
            s.phase = Phase::Listing;
            s.next_retry_at_ms = None;
            s.listed = 0;
            s.list_total = None;
        });
        let mut attempt = 0;
        loop {
            attempt += 1;
            let rv = if self.rv_unavailable.get() {
                String::new()
            } else {
                let last = self.last_rv.borrow().clone();
                if last.is_empty() {
                    "0".to_owned()
                } else {
                    last
                }
            };
            match self.list_at(&rv).await {
                Ok(()) => {
                    self.rv_unavailable.set(false);
                    return Ok(());
                }
                Err(e) if attempt == 1 && (e.is_gone() || is_too_large_rv(&e)) => {
                    // RL-05: the RV is gone; list once more, consistently, at once.
                    self.rv_unavailable.set(true);
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn list_at(&self, rv: &str) -> Result<(), Error> {
        let paginate = rv.is_empty() || rv == "0" || self.paginated.get();
        let limit = paginate.then_some(self.opts.page_size);
        let mut items: Vec<KubeObject> = Vec::new();
        let mut cont: Option<String> = None;
        let list_rv;
        loop {
            let params = ListParams {
                limit,
                continue_token: cont.clone(),
                // With a continue token the RV is implied by the token.
                resource_version: if cont.is_some() || rv.is_empty() {
                    None
                } else {
                    Some(rv.to_owned())
                },
                ..Default::default()
            };
            self.log.borrow_mut().push((
                false,
                params.resource_version.clone().unwrap_or_default(),
                limit,
            ));
            let page = match self.lw.list(params).await {
                Ok(p) => p,
                Err(e) if cont.is_some() && e.is_gone() => {
                    // PG-04 / RL-07: the continue token expired; one full list at the original RV.
                    let params = ListParams {
                        resource_version: (!rv.is_empty()).then(|| rv.to_owned()),
                        ..Default::default()
                    };
                    self.log.borrow_mut().push((false, rv.to_owned(), None));
                    let full = self.lw.list(params).await?;
                    items = full.items;
                    list_rv = full.resource_version;
                    break;
                }
                Err(e) => return Err(e),
            };
            let n = page.items.len() as u64;
            let remaining = page.remaining_item_count.map(|r| r.max(0) as u64);
            self.status.quiet(|s| {
                s.listed += n;
                s.list_total = remaining.map(|r| s.listed + r);
            });
            self.status.update(|_| {});
            items.extend(page.items);
            match page.continue_token.filter(|c| !c.is_empty()) {
                Some(c) => {
                    if rv == "0" {
                        self.paginated.set(true);
                    }
                    cont = Some(c);
                }
                None => {
                    list_rv = page.resource_version;
                    break;
                }
            }
        }
        self.fifo
            .replace(items, &list_rv)
            .map_err(|e| Error::invalid_request(e.to_string()))?;
        *self.last_rv.borrow_mut() = list_rv;
        Ok(())
    }

    fn watch_timeout(&self) -> u32 {
        let min = self
            .opts
            .min_watch_timeout
            .max(Duration::from_secs(300))
            .as_secs_f64();
        (min + self.rng.borrow_mut().next_f64() * min) as u32
    }

    /// RL-20..23: a streaming watch-list. Events fill a temporary store until
    /// the `k8s.io/initial-events-end` bookmark; then one `Replace` and the same
    /// stream continues as the watch. `Ok(None)` = fall back to list + watch.
    async fn watch_list(
        &self,
        backoff: &mut BackoffManager,
    ) -> Result<Option<super::list_watch::EventStream>, Error> {
        self.status.update(|s| {
            s.phase = Phase::Listing;
            s.next_retry_at_ms = None;
            s.listed = 0;
            s.list_total = None;
        });
        loop {
            let rv = if self.rv_unavailable.get() {
                String::new()
            } else {
                self.last_rv.borrow().clone()
            };
            let params = WatchParams {
                resource_version: (!rv.is_empty()).then(|| rv.clone()),
                resource_version_match: Some("NotOlderThan".into()),
                send_initial_events: Some(true),
                allow_watch_bookmarks: true,
                timeout_seconds: Some(self.watch_timeout()),
                ..Default::default()
            };
            self.log
                .borrow_mut()
                .push((true, format!("watch-list:{rv}"), None));
            let mut stream = match self.lw.watch(params).await {
                Ok(s) => s,
                Err(e) if e.is_too_many_requests() || e.is_network() => {
                    self.record_error(&e);
                    self.clock.sleep(backoff.next_delay()).await;
                    continue;
                }
                Err(e) if e.is_gone() || is_too_large_rv(&e) => {
                    self.rv_unavailable.set(true);
                    continue;
                }
                Err(e) => {
                    // The server rejects sendInitialEvents: list + watch from now on.
                    self.record_error(&e);
                    self.watch_list_unsupported.set(true);
                    return Ok(None);
                }
            };
            let started = self.clock.now();
            let mut events = 0u64;
            let mut temp: std::collections::BTreeMap<String, KubeObject> =
                std::collections::BTreeMap::new();
            loop {
                match stream.next().await {
                    None => {
                        if events == 0 && self.clock.now() - started < Duration::from_secs(1) {
                            self.watch_list_unsupported.set(true);
                            return Ok(None);
                        }
                        break; // retry with an empty temporary store
                    }
                    Some(Err(e)) if e.is_network() || e.is_timeout() => break,
                    Some(Err(e)) => return Err(e),
                    Some(Ok(WatchEvent::Error(status))) => {
                        let e = Error::from(status);
                        self.record_error(&e);
                        if e.is_gone() {
                            self.rv_unavailable.set(true);
                            break;
                        }
                        self.watch_list_unsupported.set(true);
                        return Ok(None);
                    }
                    Some(Ok(ev)) => {
                        events += 1;
                        if ev.is_initial_events_end() {
                            let rv = ev
                                .object()
                                .map(|o| o.resource_version().to_owned())
                                .unwrap_or_default();
                            let items: Vec<KubeObject> =
                                std::mem::take(&mut temp).into_values().collect();
                            self.fifo
                                .replace(items, &rv)
                                .map_err(|e| Error::invalid_request(e.to_string()))?;
                            *self.last_rv.borrow_mut() = rv;
                            self.rv_unavailable.set(false);
                            return Ok(Some(stream));
                        }
                        match ev {
                            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                                if let Ok(k) = super::keys::object_key(&o) {
                                    temp.insert(k, o);
                                }
                            }
                            WatchEvent::Deleted(o) => {
                                if let Ok(k) = super::keys::object_key(&o) {
                                    temp.remove(&k);
                                }
                            }
                            WatchEvent::Bookmark(_) | WatchEvent::Error(_) => {}
                        }
                        let n = temp.len() as u64;
                        self.status.quiet(|s| s.listed = n);
                    }
                }
            }
        }
    }

    async fn list_and_watch(&self, backoff: &mut BackoffManager) -> Result<CycleEnd, Error> {
        let mut pending = None;
        if self.opts.use_watch_list && !self.watch_list_unsupported.get() {
            pending = self.watch_list(backoff).await?;
        }
        if pending.is_none() {
            self.list().await?;
        }
        let mut watches = 0u64;
        loop {
            let rv = self.last_rv.borrow().clone();
            let params = WatchParams {
                resource_version: Some(rv.clone()),
                allow_watch_bookmarks: true,
                timeout_seconds: Some(self.watch_timeout()),
                ..Default::default()
            };
            if let Some(s) = pending.take() {
                // The watch-list stream continues as the watch (RL-21).
                watches += 1;
                self.status.update(|st| {
                    st.phase = Phase::Watching;
                    st.next_retry_at_ms = None;
                });
                if let CycleEnd::Relist = self.consume(s, backoff).await? {
                    return Ok(CycleEnd::Relist);
                }
                continue;
            }
            self.log.borrow_mut().push((true, rv, None));
            if watches > 0 {
                self.status.quiet(|s| s.reconnects += 1);
            }
            watches += 1;
            let stream = match self.lw.watch(params).await {
                Ok(s) => s,
                Err(e) if e.is_too_many_requests() || e.is_network() => {
                    // RL-14: wait one step and re-watch, no relist.
                    self.record_error(&e);
                    let wait = e
                        .retry_after()
                        .unwrap_or_default()
                        .max(backoff.next_delay());
                    let at = self.clock.wall_millis() + wait.as_secs_f64() * 1000.0;
                    self.status.update(|s| {
                        s.phase = Phase::Backoff;
                        s.next_retry_at_ms = Some(at);
                    });
                    self.clock.sleep(wait).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            self.status.update(|s| {
                s.phase = Phase::Watching;
                s.next_retry_at_ms = None;
            });
            if let CycleEnd::Relist = self.consume(stream, backoff).await? {
                return Ok(CycleEnd::Relist);
            }
        }
    }

    /// Apply one watch stream until it ends. `Ok(ReWatch)`: open a new watch
    /// from the last RV; `Ok(Relist)`: back off and relist; `Err`: report, back off, relist.
    async fn consume(
        &self,
        mut stream: super::list_watch::EventStream,
        backoff: &mut BackoffManager,
    ) -> Result<CycleEnd, Error> {
        let started = self.clock.now();
        let mut events = 0u64;
        let mut resync = self.opts.resync_period.map(|d| self.clock.sleep(d));
        loop {
            let next = match resync.as_mut() {
                Some(timer) => match select(stream.next(), timer).await {
                    Either::Left((item, _)) => Some(item),
                    Either::Right(_) => None,
                },
                None => Some(stream.next().await),
            };
            let Some(item) = next else {
                // The resync timer fired (RL-18).
                let due = self.should_resync.borrow().as_ref().is_none_or(|f| f());
                if due {
                    self.fifo.resync();
                }
                resync = self.opts.resync_period.map(|d| self.clock.sleep(d));
                continue;
            };
            match item {
                None => {
                    // RL-11 / RL-12.
                    if events == 0 && self.clock.now() - started < Duration::from_secs(1) {
                        return Err(Error::network(
                            "very short watch: the watch closed within 1 s without any event",
                        ));
                    }
                    return Ok(CycleEnd::ReWatch);
                }
                Some(Err(e)) if e.is_network() || e.is_timeout() => {
                    // A dropped connection or the idle watchdog: re-watch from the last RV.
                    self.record_error(&e);
                    return Ok(CycleEnd::ReWatch);
                }
                Some(Err(e)) => return Err(e),
                Some(Ok(WatchEvent::Error(status))) => {
                    let e = Error::from(status);
                    self.record_error(&e);
                    if e.is_gone() {
                        return Ok(CycleEnd::Relist);
                    }
                    if e.is_too_many_requests() {
                        self.clock.sleep(backoff.next_delay()).await;
                        return Ok(CycleEnd::ReWatch);
                    }
                    return Err(e);
                }
                Some(Ok(ev)) => {
                    events += 1;
                    self.apply(ev)
                        .map_err(|e| Error::invalid_request(e.to_string()))?;
                    while self.fifo.len() > self.opts.max_queued {
                        yield_now().await;
                    }
                }
            }
        }
    }

    fn apply(&self, ev: WatchEvent) -> Result<(), super::delta_fifo::FifoError> {
        let wall = self.clock.wall_millis();
        let rv = ev
            .object()
            .map(|o| o.resource_version().to_owned())
            .unwrap_or_default();
        match ev {
            WatchEvent::Added(o) => self.fifo.add(o)?,
            WatchEvent::Modified(o) => self.fifo.update(o)?,
            WatchEvent::Deleted(o) => self.fifo.delete(DeltaObject::Object(o))?,
            WatchEvent::Bookmark(_) | WatchEvent::Error(_) => {}
        }
        if !rv.is_empty() {
            *self.last_rv.borrow_mut() = rv;
        }
        self.status.quiet(|s| {
            s.events_applied += 1;
            s.last_event_at_ms = Some(wall);
        });
        Ok(())
    }
}
