//! Bounded waits for the initial sync. `wait_for_sync` waits as client-go's
//! `WaitForCacheSync` does, for as long as it takes; an unreachable server
//! or a scope the server rejects keeps the informer retrying with backoff,
//! so a caller that must answer (a request handler, a test, a CLI) waits
//! with a deadline instead and gets the informer's last error back.

use std::fmt;
use std::time::Duration;

use futures::future::{self, Either};

use super::factory::SharedInformerFactory;
use super::shared_informer::SharedIndexInformer;
use super::status::{Phase, StatusError};

/// Why a bounded wait for sync gave up.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncError {
    /// Whether the deadline passed or the informer stopped first.
    pub kind: SyncErrorKind,
    /// The phase of the (first) informer that had not synced.
    pub phase: Phase,
    /// Its last error, if one was reported yet (a request still being
    /// retried by the REST client has not reported one).
    pub last_error: Option<StatusError>,
}

/// What ended a bounded wait for sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncErrorKind {
    /// The timeout passed before every informer synced.
    TimedOut(Duration),
    /// An informer stopped before it synced.
    Stopped,
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SyncErrorKind::TimedOut(d) => write!(f, "not synced after {d:?}")?,
            SyncErrorKind::Stopped => write!(f, "the informer stopped before it synced")?,
        }
        write!(f, " (phase {}", self.phase.as_str())?;
        match &self.last_error {
            Some(e) if e.code != 0 => {
                write!(f, "; last error: {} ({} {})", e.message, e.code, e.reason)?
            }
            Some(e) => write!(f, "; last error: {}", e.message)?,
            None => write!(f, "; no error reported yet")?,
        }
        write!(f, ")")
    }
}

impl std::error::Error for SyncError {}

fn unsynced(informers: &[SharedIndexInformer], kind: SyncErrorKind) -> SyncError {
    let status = informers
        .iter()
        .find(|i| !i.has_synced())
        .map(|i| i.status_snapshot())
        .unwrap_or_default();
    SyncError {
        kind,
        phase: status.phase,
        last_error: status.last_error,
    }
}

/// Waits until every informer in `informers` has synced, at most `timeout`
/// on the first informer's clock.
async fn wait_all(informers: &[SharedIndexInformer], timeout: Duration) -> Result<(), SyncError> {
    let Some(first) = informers.first() else {
        return Ok(());
    };
    let deadline = first.clock().sleep(timeout);
    let synced = Box::pin(super::shared_informer::wait_for_cache_sync(informers));
    match future::select(synced, deadline).await {
        Either::Left((true, _)) => Ok(()),
        Either::Left((false, _)) => Err(unsynced(informers, SyncErrorKind::Stopped)),
        Either::Right(_) => Err(unsynced(informers, SyncErrorKind::TimedOut(timeout))),
    }
}

impl SharedIndexInformer {
    /// [`wait_for_sync`](Self::wait_for_sync) with a deadline: `Ok` once
    /// synced; otherwise, when `timeout` has passed on the informer's clock
    /// or it stopped first, a [`SyncError`] with its phase and last error.
    /// The informer keeps running (and retrying) either way.
    pub async fn wait_for_sync_timeout(&self, timeout: Duration) -> Result<(), SyncError> {
        wait_all(std::slice::from_ref(self), timeout).await
    }
}

impl SharedInformerFactory {
    /// [`wait_for_sync`](Self::wait_for_sync) with one deadline for every
    /// informer created so far; the error describes the first that had not
    /// synced.
    pub async fn wait_for_sync_timeout(&self, timeout: Duration) -> Result<(), SyncError> {
        wait_all(&self.informers(), timeout).await
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::cache::scripted::ScriptedListerWatcher;
    use crate::cache::shared_informer::InformerOptions;
    use crate::rest::{Error, ObjectList};
    use crate::rt::{run_until_stalled, spawn_local, FakeClock};

    type Outcome = Rc<RefCell<Option<Result<(), SyncError>>>>;

    fn informer(clock: &FakeClock, lw: &ScriptedListerWatcher) -> SharedIndexInformer {
        SharedIndexInformer::new(
            Rc::new(lw.clone()),
            clock.shared(),
            InformerOptions::default(),
        )
    }

    fn wait(inf: &SharedIndexInformer, timeout: Duration) -> Outcome {
        let out: Outcome = Rc::default();
        let (o, i) = (out.clone(), inf.clone());
        // Dropping the handle detaches the task.
        spawn_local(async move { *o.borrow_mut() = Some(i.wait_for_sync_timeout(timeout).await) });
        out
    }

    /// The error a finished wait ended with.
    fn failed(out: &RefCell<Option<Result<(), SyncError>>>) -> SyncError {
        out.borrow_mut()
            .take()
            .expect("the wait ended")
            .expect_err("the wait failed")
    }

    #[test]
    fn an_unreachable_server_ends_the_wait_at_the_deadline_with_the_last_error() {
        let clock = FakeClock::new();
        let lw = ScriptedListerWatcher::new();
        for _ in 0..10 {
            lw.push_list(Err(Error::unreachable("connect ECONNREFUSED 127.0.0.1:1")));
        }
        let inf = informer(&clock, &lw);
        inf.start();
        let out = wait(&inf, Duration::from_secs(5));
        run_until_stalled();
        assert_eq!(*out.borrow(), None, "still within the deadline");
        clock.advance(Duration::from_secs(5));
        run_until_stalled();
        let err = failed(&out);
        assert_eq!(err.kind, SyncErrorKind::TimedOut(Duration::from_secs(5)));
        assert!(
            matches!(err.phase, Phase::Backoff | Phase::Listing),
            "{:?}",
            err.phase
        );
        let last = err.last_error.clone().expect("the list's error");
        assert!(last.message.contains("ECONNREFUSED"), "{last:?}");
        assert!(err.to_string().contains("not synced after 5s"), "{err}");
        assert!(!inf.is_stopped(), "the informer keeps retrying");
        inf.stop();
        run_until_stalled();
    }

    #[test]
    fn a_sync_within_the_deadline_is_ok_and_a_stop_is_reported_as_such() {
        let clock = FakeClock::new();
        let lw = ScriptedListerWatcher::new();
        lw.push_list(Ok(ObjectList {
            resource_version: "7".into(),
            ..Default::default()
        }));
        let inf = informer(&clock, &lw);
        let out = wait(&inf, Duration::from_secs(5));
        inf.start();
        run_until_stalled();
        assert_eq!(*out.borrow(), Some(Ok(())));
        assert_eq!(clock.pending_timers(), 0, "the deadline went with the wait");

        let never = informer(&clock, &ScriptedListerWatcher::new());
        let out = wait(&never, Duration::from_secs(60));
        run_until_stalled();
        never.stop();
        run_until_stalled();
        let err = failed(&out);
        assert_eq!(
            (err.kind, err.phase),
            (SyncErrorKind::Stopped, Phase::Stopped)
        );
        inf.stop();
        run_until_stalled();
    }
}
