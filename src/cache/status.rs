//! Informer status: what a UI shows about a live cache, readable at any time
//! and pushed to subscribers when something a user would notice changes
//! (phase, next retry time, list progress per page, the last error, sync).
//!
//! Per-event counters (events applied, last event time, objects cached) are
//! updated quietly: notifying on each of 100,000 events per second would cost
//! more than the events. Readers that want them live poll [`StatusCell::get`]
//! (a UI does it once per frame) or wait on [`StatusCell::changed`].

use std::cell::RefCell;
use std::rc::Rc;

use crate::rt::{Notified, Notify};

/// What the reflector is doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Not started.
    #[default]
    Idle,
    /// Showing objects restored from storage (see `stored_at_ms`), not yet
    /// confirmed by the server: the watch from their resourceVersion is
    /// being opened.
    Stored,
    /// Listing (initial list, relist, or the initial phase of a watch-list).
    Listing,
    /// Watching for changes.
    Watching,
    /// Waiting before the next attempt (see `next_retry_at_ms`).
    Backoff,
    /// Not watching for now (released, or the page is hidden); the cache
    /// keeps its contents and resumes from its last resourceVersion.
    Paused,
    /// Stopped for good.
    Stopped,
}

impl Phase {
    /// The lowercase name shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Stored => "stored",
            Phase::Listing => "listing",
            Phase::Watching => "watching",
            Phase::Backoff => "backoff",
            Phase::Paused => "paused",
            Phase::Stopped => "stopped",
        }
    }
}

/// A snapshot of an informer's health and progress.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InformerStatus {
    /// Current phase.
    pub phase: Phase,
    /// While backing off: wall-clock ms of the next attempt.
    pub next_retry_at_ms: Option<f64>,
    /// Items received by the current (re)list so far.
    pub listed: u64,
    /// The list's total when the server sent `remainingItemCount`.
    pub list_total: Option<u64>,
    /// Relists after the initial list.
    pub relists: u64,
    /// Watches re-opened without a relist.
    pub reconnects: u64,
    /// Watches the server accepted (response headers, or a WebSocket
    /// handshake), first and later ones alike.
    pub watches_opened: u64,
    /// Wall-clock ms of the last watch event or bookmark.
    pub last_event_at_ms: Option<f64>,
    /// The last error.
    pub last_error: Option<StatusError>,
    /// Objects the cache could not apply (skipped and reported) so far.
    pub skipped: u64,
    /// Set while a handler's backlog holds the informer back (the watch is
    /// not read until it drains).
    pub held_back: Option<HeldBack>,
    /// Watch events applied to the queue.
    pub events_applied: u64,
    /// Objects in the store.
    pub cached: u64,
    /// Whether the initial list reached the store and every handler's queue.
    pub synced: bool,
    /// The resourceVersion of the last list, event or bookmark.
    pub resource_version: String,
    /// Whether the reflector uses a streaming watch-list (false after a fallback).
    pub watch_list: bool,
    /// What carries the watch (`fetch`, `websocket`), once one was opened.
    pub transport: Option<String>,
    /// Why that transport (`within-budget`, `over-budget`, `configured`, ...).
    pub transport_reason: Option<String>,
    /// Something the user should know that is not an error: set when the
    /// per-origin connection budget decided the transport.
    pub warning: Option<String>,
    /// Wall-clock ms at which the restored objects were stored; set from a
    /// warm start until a watch or list has confirmed the cache.
    pub stored_at_ms: Option<f64>,
    /// Wall-clock ms at which the informer last entered `watching` (a
    /// watch connecting after a list, or a watch stream beginning).
    pub watching_since_ms: Option<f64>,
    /// How long the watch may go without a byte before its watchdog opens
    /// it again (ms); `None` when it has no watchdog.
    pub watch_idle_ms: Option<f64>,
}

/// How late a watchdog may fire (a busy or throttled host) before a watch it
/// should have reopened counts as stalled.
const WATCHDOG_SLACK_MS: f64 = 60_000.0;

impl InformerStatus {
    /// Whether the watch has gone quiet for longer than its own watchdog
    /// allows, so the host stopped running the informer's timers (in
    /// workerd: the request that started it ended). A status read at
    /// `now_ms` (wall clock) tells; the informer cannot notice by itself.
    pub fn stalled(&self, now_ms: f64) -> bool {
        let (Phase::Watching, Some(idle), Some(opened)) =
            (self.phase, self.watch_idle_ms, self.watching_since_ms)
        else {
            return false;
        };
        let active = self.last_event_at_ms.map_or(opened, |e| e.max(opened));
        now_ms - active > idle + WATCHDOG_SLACK_MS
    }
}

/// An error as the status shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusError {
    /// What went wrong.
    pub message: String,
    /// The HTTP code (0 when the error did not come from a response).
    pub code: u16,
    /// The `Status` reason (`Expired`, `Invalid`, ...), or for an error
    /// without a response its kind, as a thrown `KubeError` has it
    /// (`Network`, `Timeout`, `Decode`, ...).
    pub reason: String,
    /// The object key, when the error concerns one object.
    pub key: Option<String>,
    /// When it happened (wall-clock ms since the epoch): the error stays
    /// after the informer recovers, so a UI can tell an old one by its age.
    pub at_ms: f64,
}

/// Why delivery is paused: a handler fell behind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeldBack {
    /// Notifications waiting for the slowest handler.
    pub pending: usize,
    /// The backlog bound that was reached.
    pub limit: usize,
}

/// A change the cache could not apply. It reaches the informer's failure
/// listeners and the status; the object was skipped (the cache holds no
/// stale version of it).
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The object's key (`namespace/name`), or what is known of it.
    pub key: String,
    /// Why it could not be applied.
    pub message: String,
    /// The `Status`-style reason (`Invalid` for bad objects, `TransformFailed`,
    /// `IndexFailed`).
    pub reason: String,
    /// When (wall-clock ms since the epoch).
    pub at_ms: f64,
}

type StatusListener = Rc<dyn Fn(&InformerStatus)>;
type FailureListener = Rc<dyn Fn(&Failure)>;

#[derive(Default)]
struct Shared {
    status: InformerStatus,
    listeners: Vec<(u64, StatusListener)>,
    failure_listeners: Vec<(u64, FailureListener)>,
    last_id: u64,
    changed: Notify,
}

/// Shared, observable status. Clones share one status.
#[derive(Clone, Default)]
pub struct StatusCell {
    inner: Rc<RefCell<Shared>>,
}

impl StatusCell {
    /// The current status.
    pub fn get(&self) -> InformerStatus {
        self.inner.borrow().status.clone()
    }

    /// Read one field without cloning the whole status.
    pub fn with<R>(&self, f: impl FnOnce(&InformerStatus) -> R) -> R {
        f(&self.inner.borrow().status)
    }

    /// Change counters without notifying (per-event bookkeeping).
    pub fn quiet(&self, f: impl FnOnce(&mut InformerStatus)) {
        f(&mut self.inner.borrow_mut().status);
    }

    /// Change the status and notify subscribers, unless `f` changed nothing
    /// (a UI re-renders on each notification). A subscriber may read the
    /// cell or (un)subscribe; the borrow is released before any is called.
    pub fn update(&self, f: impl FnOnce(&mut InformerStatus)) {
        let (snapshot, listeners, changed) = {
            let mut i = self.inner.borrow_mut();
            let before = i.status.clone();
            f(&mut i.status);
            if i.status == before {
                return;
            }
            (
                i.status.clone(),
                i.listeners
                    .iter()
                    .map(|(_, l)| l.clone())
                    .collect::<Vec<_>>(),
                i.changed.clone(),
            )
        };
        changed.notify_waiters();
        for l in listeners {
            l(&snapshot);
        }
    }

    /// Listen for changes; returns an id for [`unsubscribe`](StatusCell::unsubscribe).
    pub fn subscribe(&self, l: impl Fn(&InformerStatus) + 'static) -> u64 {
        let mut i = self.inner.borrow_mut();
        i.last_id += 1;
        let id = i.last_id;
        i.listeners.push((id, Rc::new(l)));
        id
    }

    /// Stop listening. Unknown ids are ignored.
    pub fn unsubscribe(&self, id: u64) {
        let mut i = self.inner.borrow_mut();
        i.listeners.retain(|(i, _)| *i != id);
        i.failure_listeners.retain(|(i, _)| *i != id);
    }

    /// Report a change the cache could not apply: counted, shown as the last
    /// error, and passed to every failure listener.
    pub fn report_failure(&self, f: Failure) {
        let listeners: Vec<FailureListener> = self
            .inner
            .borrow()
            .failure_listeners
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        self.update(|s| {
            s.skipped += 1;
            s.last_error = Some(StatusError {
                message: f.message.clone(),
                code: 0,
                reason: f.reason.clone(),
                key: Some(f.key.clone()),
                at_ms: f.at_ms,
            });
        });
        for l in listeners {
            l(&f);
        }
    }

    /// Listen for failures; returns an id for [`unsubscribe`](StatusCell::unsubscribe).
    pub fn on_failure(&self, l: impl Fn(&Failure) + 'static) -> u64 {
        let mut i = self.inner.borrow_mut();
        i.last_id += 1;
        let id = i.last_id;
        i.failure_listeners.push((id, Rc::new(l)));
        id
    }

    /// Resolves at the next notified change (for async consumers).
    pub fn changed(&self) -> Notified {
        self.inner.borrow().changed.notified()
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A watch quiet for longer than its watchdog allows (plus slack) is
    /// stalled; one with a recent event, or reopened, or not watching, is not.
    #[test]
    fn stalled_when_the_watchdog_should_have_fired_long_ago() {
        let s = InformerStatus {
            phase: Phase::Watching,
            watching_since_ms: Some(1_000.0),
            watch_idle_ms: Some(90_000.0),
            ..Default::default()
        };
        let limit = 1_000.0 + 90_000.0 + WATCHDOG_SLACK_MS;
        assert!(!s.stalled(limit));
        assert!(s.stalled(limit + 1.0));
        let recent = InformerStatus {
            last_event_at_ms: Some(100_000.0),
            ..s.clone()
        };
        assert!(!recent.stalled(limit + 1.0), "an event since");
        assert!(recent.stalled(100_000.0 + 90_000.0 + WATCHDOG_SLACK_MS + 1.0));
        for other in [
            InformerStatus {
                phase: Phase::Backoff,
                ..s.clone()
            },
            InformerStatus {
                watch_idle_ms: None,
                ..s.clone()
            },
            InformerStatus {
                watching_since_ms: None,
                ..s.clone()
            },
        ] {
            assert!(!other.stalled(f64::MAX), "{other:?}");
        }
    }

    #[test]
    fn status_update_notifies_quiet_does_not_and_unsubscribe_stops() {
        let cell = StatusCell::default();
        let seen = Rc::new(Cell::new(0u32));
        let s = seen.clone();
        let id = cell.subscribe(move |st| {
            assert_eq!(st.phase, Phase::Listing);
            s.set(s.get() + 1)
        });
        cell.quiet(|s| s.events_applied += 1);
        assert_eq!(seen.get(), 0);
        let changed = cell.changed();
        cell.update(|s| s.phase = Phase::Listing);
        assert_eq!(seen.get(), 1);
        assert!(crate::rt::block_on(async {
            changed.await;
            true
        }));
        // An update that changes nothing tells no one, though counters moved
        // quietly since the last one.
        cell.quiet(|s| s.events_applied += 1);
        cell.update(|s| s.phase = Phase::Listing);
        assert_eq!(seen.get(), 1);
        cell.unsubscribe(id);
        cell.unsubscribe(id);
        cell.update(|s| s.phase = Phase::Listing);
        assert_eq!(seen.get(), 1);
        assert_eq!(cell.with(|s| s.events_applied), 2);
        assert_eq!(Phase::Backoff.as_str(), "backoff");
    }
}
