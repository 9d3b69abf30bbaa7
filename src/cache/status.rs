//! Informer status: what a UI shows about a live cache, readable at any time
//! and pushed to listeners when the phase or the last error changes.

use std::cell::RefCell;
use std::rc::Rc;

/// What the reflector is doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Not started.
    #[default]
    Idle,
    /// Listing (initial list or relist).
    Listing,
    /// Watching for changes.
    Watching,
    /// Waiting before the next attempt.
    Backoff,
    /// Stopped for good.
    Stopped,
}

impl Phase {
    /// The lowercase name shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Listing => "listing",
            Phase::Watching => "watching",
            Phase::Backoff => "backoff",
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
    /// Watches re-opened after the first.
    pub reconnects: u64,
    /// Wall-clock ms of the last watch event or bookmark.
    pub last_event_at_ms: Option<f64>,
    /// The last error, as text, with its HTTP code (0 if none) and reason.
    pub last_error: Option<(String, u16, String)>,
    /// Watch events applied to the queue.
    pub events_applied: u64,
    /// Objects in the store.
    pub cached: u64,
    /// Whether the initial list reached the store and every handler.
    pub synced: bool,
}

type StatusListener = Rc<dyn Fn(&InformerStatus)>;

/// The status, its listeners, and the last listener id handed out.
type Shared = (InformerStatus, Vec<(u64, StatusListener)>, u64);

/// Shared, observable status.
#[derive(Clone, Default)]
pub struct StatusCell {
    inner: Rc<RefCell<Shared>>,
}

impl StatusCell {
    /// The current status.
    pub fn get(&self) -> InformerStatus {
        self.inner.borrow().0.clone()
    }

    /// Change counters without notifying (per-event bookkeeping).
    pub fn quiet(&self, f: impl FnOnce(&mut InformerStatus)) {
        f(&mut self.inner.borrow_mut().0);
    }

    /// Change the status and notify listeners.
    pub fn update(&self, f: impl FnOnce(&mut InformerStatus)) {
        let (snapshot, listeners) = {
            let mut i = self.inner.borrow_mut();
            f(&mut i.0);
            (
                i.0.clone(),
                i.1.iter().map(|(_, l)| l.clone()).collect::<Vec<_>>(),
            )
        };
        for l in listeners {
            l(&snapshot);
        }
    }

    /// Listen for changes; returns an id for [`unsubscribe`](StatusCell::unsubscribe).
    pub fn subscribe(&self, l: impl Fn(&InformerStatus) + 'static) -> u64 {
        let mut i = self.inner.borrow_mut();
        i.2 += 1;
        let id = i.2;
        i.1.push((id, Rc::new(l)));
        id
    }

    /// Stop listening.
    pub fn unsubscribe(&self, id: u64) {
        self.inner.borrow_mut().1.retain(|(i, _)| *i != id);
    }
}
