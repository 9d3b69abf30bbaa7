//! Streaming watch-list (RL-20..23): one WATCH with `sendInitialEvents=true`
//! replaces the paginated list. Events fill a temporary store until the
//! bookmark annotated `k8s.io/initial-events-end: "true"`; then the queue gets
//! one `Replace` at that bookmark's RV and the same stream continues as the
//! watch. The RV used for the `Replace` comes only from non-ADDED events
//! (RL-22): initial ADDEDs are not RV-ordered.

use std::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt;

use super::{is_internal, BackoffManager, Reflector, VERY_SHORT_WATCH};
use crate::cache::delta_fifo::SkippedObject;
use crate::cache::keys::object_key;
use crate::cache::list_watch::EventStream;
use crate::cache::status::Phase;
use crate::rest::{Error, KubeObject, WatchEvent, WatchParams};
use crate::rt::fx::FxHashMap;
use crate::rt::NetworkMark;

/// How one watch-list attempt ended, when it did not produce a stream.
enum Attempt {
    /// Try another watch-list at once (fresh temporary store).
    Again,
    /// Back off, then try another watch-list.
    BackOff(Option<Duration>),
    /// Give up on watch-list for this cycle: list + watch.
    Fallback,
}

impl Reflector {
    /// `Ok(Some(stream))`: synced, the stream continues as the watch.
    /// `Ok(None)`: fall back to list + watch in this cycle (RL-23).
    /// The mark is the network's history from before the stream opened.
    pub(super) async fn watch_list(
        &self,
        backoff: &mut BackoffManager,
    ) -> Result<Option<(EventStream, NetworkMark)>, Error> {
        self.status.update(|s| {
            s.phase = Phase::Listing;
            s.next_retry_at_ms = None;
            s.listed = 0;
            s.list_total = None;
        });
        loop {
            let attempt = match self.watch_list_once().await {
                Ok(stream) => return Ok(Some(stream)),
                Err(a) => a,
            };
            match attempt {
                Attempt::Again => {}
                Attempt::BackOff(floor) => {
                    self.back_off(backoff, floor).await;
                    self.status.update(|s| {
                        s.phase = Phase::Listing;
                        s.next_retry_at_ms = None;
                    });
                }
                Attempt::Fallback => return Ok(None),
            }
        }
    }

    fn watch_list_params(&self) -> WatchParams {
        let rv = {
            let st = self.state.borrow();
            if st.rv_unavailable {
                String::new()
            } else {
                st.last_rv.clone()
            }
        };
        WatchParams {
            resource_version: (!rv.is_empty()).then_some(rv),
            resource_version_match: Some("NotOlderThan".into()),
            send_initial_events: Some(true),
            allow_watch_bookmarks: true,
            timeout_seconds: Some(self.watch_timeout()),
            ..Default::default()
        }
    }

    /// Classify an error that ended an attempt (opening it or in-band).
    fn watch_list_error(&self, e: &Error, opening: bool) -> Attempt {
        self.record_error(e);
        self.unreachable.set(e.is_network());
        if e.is_too_many_requests() || e.is_network() || e.asks_to_wait() {
            return Attempt::BackOff(e.retry_after());
        }
        if (e.is_gone() || e.is_too_large_resource_version()) && !self.state.borrow().rv_unavailable
        {
            self.state.borrow_mut().rv_unavailable = true;
            return Attempt::Again;
        }
        if opening && !is_internal(e) && e.code().is_some_and(|c| (400..500).contains(&c)) {
            // The server refuses sendInitialEvents: do not ask again.
            self.state.borrow_mut().watch_list_rejected = true;
        }
        Attempt::Fallback
    }

    async fn watch_list_once(&self) -> Result<(EventStream, NetworkMark), Attempt> {
        let since = self.network.mark();
        let mut stream = match self.lw.watch(self.watch_list_params()).await {
            Ok(s) => s,
            Err(e) => return Err(self.watch_list_error(&e, true)),
        };
        // The stream goes on as the watch: the status says what carries it.
        self.show_transport();
        let started = self.clock.now();
        let mut events = 0u64;
        let mut temp: FxHashMap<String, KubeObject> = FxHashMap::default();
        let mut rv = String::new();
        let mut online = self.network.online();
        loop {
            if online.fired() {
                online = self.network.online();
            }
            if self.network.back_online_since(since) {
                // Presumed dead (see `WatchEnd::NetworkBack`): start over.
                return Err(Attempt::Again);
            }
            // The shape of the watch's own wait (one copy of its code);
            // a relist asked for meanwhile waits for the watch.
            let relist = self.relist_notify.notified();
            let next = match select(stream.next(), select(relist, &mut online)).await {
                Either::Left((next, _)) => next,
                Either::Right(_) => continue,
            };
            match next {
                None | Some(Err(Error::Network { .. } | Error::Timeout { .. })) => {
                    let elapsed = self.clock.now().saturating_duration_since(started);
                    if events == 0 && elapsed < VERY_SHORT_WATCH {
                        // A very short watch takes the fallback path (RL-23).
                        self.record_error(&Error::network(
                            "very short watch-list: closed within 1 s without any event",
                        ));
                        return Err(Attempt::Fallback);
                    }
                    // Closed before the end bookmark: start over with an empty store.
                    return Err(Attempt::Again);
                }
                Some(Err(e)) => return Err(self.watch_list_error(&e, false)),
                Some(Ok(WatchEvent::Error(status))) => {
                    return Err(self.watch_list_error(&Error::from(status), false));
                }
                Some(Ok(ev)) => {
                    events += 1;
                    if ev.is_initial_events_end() {
                        if let Some(o) = ev.object() {
                            rv = o.resource_version().to_owned();
                        }
                        // In key order, as a sorted map would give them: the
                        // replace (and what handlers see) does not depend on
                        // the hash.
                        let mut keyed: Vec<(String, KubeObject)> = temp.into_iter().collect();
                        crate::rt::sort::sort_by(&mut keyed, |a, b| a.0.cmp(&b.0));
                        let items: Vec<KubeObject> = keyed.into_iter().map(|(_, o)| o).collect();
                        let n = items.len() as u64;
                        let skipped = self.fifo.replace_prepared(items, &rv);
                        self.report_skipped(skipped);
                        self.set_last_rv(&rv);
                        self.state.borrow_mut().rv_unavailable = false;
                        self.status.update(|s| {
                            s.listed = n;
                            s.list_total = Some(n);
                            s.resource_version = rv;
                        });
                        self.replaced();
                        return Ok((stream, since));
                    }
                    let Some(obj) = ev.object() else { continue };
                    if !matches!(ev, WatchEvent::Added(_)) && !obj.resource_version().is_empty() {
                        rv = obj.resource_version().to_owned();
                    }
                    if matches!(ev, WatchEvent::Bookmark(_)) || self.wrong_kind(obj) {
                        continue;
                    }
                    let key = match object_key(obj) {
                        Ok(k) => k,
                        Err(e) => {
                            self.report_skipped(vec![SkippedObject {
                                key: super::describe(obj),
                                error: e.into(),
                            }]);
                            continue;
                        }
                    };
                    match ev {
                        // Transformed (or swapped for the stored copy) as it
                        // arrives, so the raw objects are never held all at once.
                        WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                            match self.fifo.prepare(o) {
                                Ok((_, o)) => {
                                    temp.insert(key, o);
                                }
                                Err(skipped) => {
                                    temp.remove(&key);
                                    self.report_skipped(vec![skipped]);
                                }
                            }
                        }
                        WatchEvent::Deleted(_) => {
                            temp.remove(&key);
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

#[cfg(all(test, not(target_arch = "wasm32")))]
/// RL-22: the RV a watch-list would `Replace` at, from the events seen so far.
pub(super) fn watch_list_resource_version(events: &[WatchEvent]) -> String {
    let mut rv = String::new();
    for ev in events {
        if let Some(o) = ev.object() {
            if !matches!(ev, WatchEvent::Added(_)) && !o.resource_version().is_empty() {
                rv = o.resource_version().to_owned();
            }
        }
    }
    rv
}
