//! Reflector, controller and shared informer behaviour (RL, CT, SI) with a
//! scripted lister-watcher and a fake clock.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use futures::channel::mpsc;
use futures::future::LocalBoxFuture;
use futures::StreamExt;

use super::obj;
use crate::cache::{
    BackoffManager, BackoffOptions, EventStream, Handler, InformerOptions, ListerWatcher,
    Notification, Phase, SharedIndexInformer,
};
use crate::rest::{Error, ListParams, ObjectList, Status, WatchEvent, WatchParams};
use crate::rt::{run_until_stalled, Clock, FakeClock};

type WatchTx = mpsc::UnboundedSender<Result<WatchEvent, Error>>;

/// Scripted lister-watcher: queued list results; each watch either fails
/// with a queued error or opens a channel the test feeds.
#[derive(Default)]
struct FakeLw {
    lists: RefCell<VecDeque<Result<ObjectList, Error>>>,
    watch_errors: RefCell<VecDeque<Error>>,
    watches: RefCell<Vec<WatchTx>>,
    calls: RefCell<Vec<String>>,
    timeouts: RefCell<Vec<u32>>,
}

fn list(rv: &str, items: Vec<crate::rest::KubeObject>) -> ObjectList {
    ObjectList {
        api_version: "v1".into(),
        kind: "PodList".into(),
        resource_version: rv.into(),
        continue_token: None,
        remaining_item_count: None,
        items,
    }
}

impl ListerWatcher for Rc<FakeLw> {
    fn list(&self, p: ListParams) -> LocalBoxFuture<'static, Result<ObjectList, Error>> {
        let cont = p
            .continue_token
            .as_deref()
            .map(|c| format!(" continue={c}"))
            .unwrap_or_default();
        self.calls.borrow_mut().push(format!(
            "LIST rv={} limit={}{cont}",
            p.resource_version.unwrap_or_default(),
            p.limit.unwrap_or(0)
        ));
        let r = self
            .lists
            .borrow_mut()
            .pop_front()
            .unwrap_or_else(|| Ok(list("1", vec![])));
        Box::pin(async move { r })
    }
    fn watch(&self, p: WatchParams) -> LocalBoxFuture<'static, Result<EventStream, Error>> {
        self.timeouts
            .borrow_mut()
            .push(p.timeout_seconds.unwrap_or(0));
        let mode = if p.send_initial_events == Some(true) {
            " initial-events"
        } else {
            ""
        };
        self.calls.borrow_mut().push(format!(
            "WATCH rv={} bookmarks={}{mode}",
            p.resource_version.unwrap_or_default(),
            p.allow_watch_bookmarks
        ));
        if let Some(e) = self.watch_errors.borrow_mut().pop_front() {
            return Box::pin(async move { Err(e) });
        }
        let (tx, rx) = mpsc::unbounded();
        self.watches.borrow_mut().push(tx);
        Box::pin(async move { Ok(rx.boxed_local()) })
    }
}

struct Rig {
    clock: FakeClock,
    lw: Rc<FakeLw>,
    informer: SharedIndexInformer,
    seen: Rc<RefCell<Vec<String>>>,
}

fn recorder(seen: Rc<RefCell<Vec<String>>>) -> Handler {
    Rc::new(move |n: Notification| {
        let s = match n {
            Notification::Add(o, initial) => format!(
                "add {}@{}{}",
                o.name(),
                o.resource_version(),
                if initial { " (initial)" } else { "" }
            ),
            Notification::Update(old, new) => format!(
                "update {}@{}->{}",
                new.name(),
                old.resource_version(),
                new.resource_version()
            ),
            Notification::Delete(d) => format!("delete {}", d.key().unwrap_or_default()),
        };
        seen.borrow_mut().push(s);
        None
    })
}

fn rig(lists: Vec<Result<ObjectList, Error>>) -> Rig {
    crate::rt::seed_thread_rng(7);
    let clock = FakeClock::new();
    let lw = Rc::new(FakeLw::default());
    lw.lists.borrow_mut().extend(lists);
    let informer = SharedIndexInformer::new(
        Rc::new(lw.clone()),
        clock.shared(),
        InformerOptions::default(),
    );
    let seen = Rc::new(RefCell::new(Vec::new()));
    informer.add_handler(recorder(seen.clone()), false);
    Rig {
        clock,
        lw,
        informer,
        seen,
    }
}

fn send(lw: &FakeLw, ev: Result<WatchEvent, Error>) {
    let tx = lw
        .watches
        .borrow()
        .last()
        .cloned()
        .expect("a watch is open");
    let _ = tx.unbounded_send(ev);
}

fn close_watch(lw: &FakeLw) {
    if let Some(tx) = lw.watches.borrow().last() {
        tx.close_channel();
    }
}

fn state(inf: &SharedIndexInformer) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    inf.indexer().for_each(|k, o| {
        m.insert(k.to_owned(), o.resource_version().to_owned());
    });
    m
}

#[test]
fn rl_02_11_list_then_watch_from_list_rv_and_rewatch_after_normal_close() {
    let r = rig(vec![Ok(list(
        "10",
        vec![obj("ns/a", 5, &[]), obj("ns/b", 7, &[])],
    ))]);
    r.informer.start();
    run_until_stalled();
    assert!(r.informer.has_synced());
    assert_eq!(
        *r.lw.calls.borrow(),
        vec!["LIST rv=0 limit=500", "WATCH rv=10 bookmarks=true"]
    );
    assert_eq!(
        *r.seen.borrow(),
        vec!["add a@5 (initial)", "add b@7 (initial)"]
    );
    send(&r.lw, Ok(WatchEvent::Modified(obj("ns/a", 11, &[]))));
    send(&r.lw, Ok(WatchEvent::Added(obj("ns/c", 12, &[]))));
    send(&r.lw, Ok(WatchEvent::Deleted(obj("ns/b", 13, &[]))));
    send(&r.lw, Ok(WatchEvent::Bookmark(obj("x", 14, &[]))));
    run_until_stalled();
    assert_eq!(
        r.seen.borrow()[2..],
        ["update a@5->11", "add c@12", "delete ns/b"]
    );
    assert_eq!(
        state(&r.informer),
        BTreeMap::from([("ns/a".into(), "11".into()), ("ns/c".into(), "12".into())])
    );
    assert_eq!(
        r.informer.last_sync_resource_version(),
        "14",
        "last event wins, bookmarks included"
    );
    r.clock.advance(Duration::from_secs(5));
    close_watch(&r.lw);
    run_until_stalled();
    let calls = r.lw.calls.borrow().clone();
    assert_eq!(
        calls.last().map(String::as_str),
        Some("WATCH rv=14 bookmarks=true"),
        "re-watch at once, no relist: {calls:?}"
    );
    assert_eq!(calls.iter().filter(|c| c.starts_with("LIST")).count(), 1);
    assert_eq!(r.informer.status_snapshot().phase, Phase::Watching);
}

#[test]
fn rl_13_gone_during_watch_relists_after_backoff_and_emits_deletes() {
    let r = rig(vec![
        Ok(list("10", vec![obj("ns/a", 5, &[]), obj("ns/b", 7, &[])])),
        Ok(list("20", vec![obj("ns/a", 15, &[])])),
    ]);
    r.informer.start();
    run_until_stalled();
    send(
        &r.lw,
        Ok(WatchEvent::Error(Status {
            code: 410,
            reason: "Expired".into(),
            message: "too old".into(),
            ..Default::default()
        })),
    );
    run_until_stalled();
    assert_eq!(r.informer.status_snapshot().phase, Phase::Backoff);
    let wait = r.clock.next_deadline().expect("a backoff timer") - r.clock.now();
    assert!(
        wait >= Duration::from_millis(800) && wait < Duration::from_millis(1600),
        "first backoff step: {wait:?}"
    );
    r.clock.advance(wait);
    run_until_stalled();
    let calls = r.lw.calls.borrow().clone();
    assert_eq!(
        calls[2], "LIST rv=10 limit=0",
        "relist at the last RV, unpaginated: {calls:?}"
    );
    assert_eq!(
        state(&r.informer),
        BTreeMap::from([("ns/a".into(), "15".into())])
    );
    assert!(
        r.seen.borrow().contains(&"delete ns/b".to_string()),
        "the relist's tombstone reaches handlers"
    );
    assert!(r.seen.borrow().contains(&"update a@5->15".to_string()));
    assert_eq!(r.informer.status_snapshot().relists, 1);
}

#[test]
fn rl_14_too_many_requests_opening_a_watch_rewatches_without_relist() {
    let r = rig(vec![Ok(list("10", vec![]))]);
    for _ in 0..4 {
        r.lw.watch_errors
            .borrow_mut()
            .push_back(Error::from_response(429, b"{}", Some(1)));
    }
    r.informer.start();
    for _ in 0..6 {
        run_until_stalled();
        r.clock.advance(Duration::from_secs(60));
    }
    run_until_stalled();
    let calls = r.lw.calls.borrow().clone();
    assert_eq!(
        calls.iter().filter(|c| c.starts_with("LIST")).count(),
        1,
        "{calls:?}"
    );
    assert_eq!(
        calls.iter().filter(|c| c.starts_with("WATCH")).count(),
        5,
        "{calls:?}"
    );
    assert_eq!(r.informer.status_snapshot().phase, Phase::Watching);
}

#[test]
fn rl_05_list_expired_relists_at_once_with_empty_rv() {
    let gone = Error::from_response(
        410,
        br#"{"kind":"Status","code":410,"reason":"Expired","message":"too old"}"#,
        None,
    );
    let r = rig(vec![
        Ok(list("10", vec![])),
        Err(gone),
        Ok(list("30", vec![])),
    ]);
    r.informer.start();
    run_until_stalled();
    close_watch(&r.lw); // closes at once without events: a very short watch → backoff, relist
    run_until_stalled();
    r.clock.advance(Duration::from_secs(2));
    run_until_stalled();
    let lists: Vec<String> =
        r.lw.calls
            .borrow()
            .iter()
            .filter(|c| c.starts_with("LIST"))
            .cloned()
            .collect();
    assert_eq!(
        lists,
        vec![
            "LIST rv=0 limit=500",
            "LIST rv=10 limit=0",
            "LIST rv= limit=500"
        ]
    );
}

#[test]
fn rl_16_backoff_steps_jitter_and_reset() {
    let clock = FakeClock::new();
    let mut b = BackoffManager::new(BackoffOptions::default(), clock.shared(), 1);
    let bounds = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0];
    for lo in bounds {
        let d = b.next_delay().as_secs_f64();
        assert!(d >= lo && d < lo * 2.0, "{d} not in [{lo}, {})", lo * 2.0);
    }
    clock.advance(Duration::from_secs(121));
    let d = b.next_delay().as_secs_f64();
    assert!((0.8..1.6).contains(&d), "reset after 2 minutes: {d}");
}

#[test]
fn si_03_04_late_handler_gets_current_state_first_and_its_own_sync() {
    let r = rig(vec![Ok(list(
        "10",
        vec![obj("ns/a", 5, &[]), obj("ns/b", 7, &[])],
    ))]);
    r.informer.start();
    run_until_stalled();
    let late = Rc::new(RefCell::new(Vec::new()));
    let reg = r.informer.add_handler(recorder(late.clone()), false);
    assert!(
        !reg.has_synced(),
        "not synced before its replay is delivered"
    );
    send(&r.lw, Ok(WatchEvent::Added(obj("ns/c", 11, &[]))));
    run_until_stalled();
    let mut replay: Vec<String> = late.borrow()[..2].to_vec();
    replay.sort();
    assert_eq!(replay, vec!["add a@5 (initial)", "add b@7 (initial)"]);
    assert_eq!(
        late.borrow()[2],
        "add c@11",
        "live events come after the replay"
    );
    assert!(reg.has_synced());
    reg.remove();
    send(&r.lw, Ok(WatchEvent::Added(obj("ns/d", 12, &[]))));
    run_until_stalled();
    assert_eq!(
        late.borrow().len(),
        3,
        "a removed handler gets nothing more"
    );
}

#[test]
fn si_slow_async_handler_does_not_delay_others() {
    let r = rig(vec![Ok(list("10", vec![obj("ns/a", 5, &[])]))]);
    let clock = r.clock.clone();
    let slow_seen = Rc::new(RefCell::new(0));
    let s2 = slow_seen.clone();
    let slow: Handler = Rc::new(move |_n| {
        let s = s2.clone();
        let sleep = clock.sleep(Duration::from_secs(10));
        Some(Box::pin(async move {
            sleep.await;
            *s.borrow_mut() += 1;
        }) as LocalBoxFuture<'static, ()>)
    });
    r.informer.add_handler(slow, false);
    r.informer.start();
    run_until_stalled();
    for i in 0..3 {
        send(
            &r.lw,
            Ok(WatchEvent::Added(obj(&format!("ns/x{i}"), 20 + i, &[]))),
        );
    }
    run_until_stalled();
    assert_eq!(r.seen.borrow().len(), 4, "the fast handler saw everything");
    assert_eq!(*slow_seen.borrow(), 0);
    for _ in 0..4 {
        r.clock.advance(Duration::from_secs(10));
        run_until_stalled();
    }
    assert_eq!(*slow_seen.borrow(), 4);
}

#[test]
fn si_stop_leaves_no_task_or_timer() {
    let r = rig(vec![Ok(list("10", vec![]))]);
    r.informer.start();
    run_until_stalled();
    send(
        &r.lw,
        Ok(WatchEvent::Error(Status {
            code: 500,
            reason: "InternalError".into(),
            ..Default::default()
        })),
    );
    run_until_stalled();
    assert!(r.clock.pending_timers() > 0, "backing off");
    r.informer.stop();
    run_until_stalled();
    assert_eq!(r.clock.pending_timers(), 0);
    let before = r.lw.calls.borrow().len();
    r.clock.advance(Duration::from_secs(600));
    run_until_stalled();
    assert_eq!(r.lw.calls.borrow().len(), before, "no request after stop");
    assert!(
        r.lw.watches.borrow().iter().all(|tx| tx.is_closed()),
        "every watch stream was dropped"
    );
    assert_eq!(r.informer.status_snapshot().phase, Phase::Stopped);
}

fn watch_list_rig() -> Rig {
    crate::rt::seed_thread_rng(7);
    let clock = FakeClock::new();
    let lw = Rc::new(FakeLw::default());
    let mut opts = InformerOptions::default();
    opts.reflector.use_watch_list = true;
    let informer = SharedIndexInformer::new(Rc::new(lw.clone()), clock.shared(), opts);
    let seen = Rc::new(RefCell::new(Vec::new()));
    informer.add_handler(recorder(seen.clone()), false);
    Rig {
        clock,
        lw,
        informer,
        seen,
    }
}

fn end_bookmark(rv: u64) -> crate::rest::KubeObject {
    crate::rest::KubeObject::from_value(&serde_json::json!({"metadata": {"resourceVersion": rv.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}})).unwrap()
}

#[test]
fn rl_20_21_watch_list_fills_a_temporary_store_then_continues_the_same_stream() {
    let r = watch_list_rig();
    r.informer.start();
    run_until_stalled();
    assert_eq!(
        *r.lw.calls.borrow(),
        vec!["WATCH rv= bookmarks=true initial-events"]
    );
    for ev in [
        WatchEvent::Added(obj("ns/p1", 1, &[])),
        WatchEvent::Added(obj("ns/p2", 2, &[])),
        WatchEvent::Modified(obj("ns/p1", 3, &[])),
        WatchEvent::Added(obj("ns/p3", 4, &[])),
        WatchEvent::Deleted(obj("ns/p3", 5, &[])),
        WatchEvent::Bookmark(obj("x", 5, &[])),
    ] {
        send(&r.lw, Ok(ev));
    }
    run_until_stalled();
    assert!(
        !r.informer.has_synced(),
        "a bookmark without the end annotation does not end the initial phase"
    );
    assert!(
        state(&r.informer).is_empty(),
        "nothing reaches the store before the end bookmark"
    );
    send(&r.lw, Ok(WatchEvent::Bookmark(end_bookmark(5))));
    run_until_stalled();
    assert!(r.informer.has_synced());
    assert_eq!(
        state(&r.informer),
        BTreeMap::from([("ns/p1".into(), "3".into()), ("ns/p2".into(), "2".into())])
    );
    send(&r.lw, Ok(WatchEvent::Modified(obj("ns/p1", 6, &[]))));
    run_until_stalled();
    assert_eq!(
        state(&r.informer)["ns/p1"],
        "6",
        "the same stream continues as the watch"
    );
    assert_eq!(r.lw.calls.borrow().len(), 1, "one request, no LIST");
    assert_eq!(r.informer.last_sync_resource_version(), "6");
}

#[test]
fn rl_23_watch_list_rejected_falls_back_to_list_and_watch() {
    let r = watch_list_rig();
    r.lw.watch_errors.borrow_mut().push_back(Error::from_response(422, br#"{"kind":"Status","code":422,"reason":"Invalid","message":"sendInitialEvents is not supported"}"#, None));
    r.lw.lists
        .borrow_mut()
        .push_back(Ok(list("9", vec![obj("ns/a", 9, &[])])));
    r.informer.start();
    run_until_stalled();
    assert_eq!(
        *r.lw.calls.borrow(),
        vec![
            "WATCH rv= bookmarks=true initial-events",
            "LIST rv=0 limit=500",
            "WATCH rv=9 bookmarks=true"
        ]
    );
    assert!(r.informer.has_synced());
    assert_eq!(*r.seen.borrow(), vec!["add a@9 (initial)"]);
}

fn paged(rv: &str, names: &[&str], cont: Option<&str>) -> ObjectList {
    let mut l = list(
        rv,
        names
            .iter()
            .map(|n| obj(&format!("ns/{n}"), 1, &[]))
            .collect(),
    );
    l.continue_token = cont.map(str::to_owned);
    l.remaining_item_count = cont.map(|_| 1);
    l
}

fn gone() -> Error {
    Error::from_response(
        410,
        br#"{"kind":"Status","code":410,"reason":"Expired","message":"too old"}"#,
        None,
    )
}

#[test]
fn rl_04_a_paginated_initial_list_keeps_relists_paginated() {
    let r = rig(vec![
        Ok(paged("10", &["a"], Some("c1"))),
        Ok(paged("10", &["b"], None)),
        Ok(paged("20", &["a"], None)),
    ]);
    r.informer.start();
    run_until_stalled();
    assert_eq!(state(&r.informer).len(), 2);
    assert_eq!(
        r.informer.status_snapshot().list_total,
        None,
        "the last page carries no remaining count"
    );
    send(
        &r.lw,
        Ok(WatchEvent::Error(Status {
            code: 410,
            reason: "Expired".into(),
            ..Default::default()
        })),
    );
    run_until_stalled();
    r.clock.advance(Duration::from_secs(2));
    run_until_stalled();
    let lists: Vec<String> =
        r.lw.calls
            .borrow()
            .iter()
            .filter(|c| c.starts_with("LIST"))
            .cloned()
            .collect();
    assert_eq!(
        lists,
        vec![
            "LIST rv=0 limit=500",
            "LIST rv= limit=500 continue=c1",
            "LIST rv=10 limit=500"
        ]
    );
}

#[test]
fn rl_07_expired_continue_token_falls_back_to_one_full_list_at_the_original_rv() {
    let r = rig(vec![
        Ok(paged("10", &["a"], Some("c1"))),
        Err(gone()),
        Ok(paged("10", &["a", "b", "c"], None)),
    ]);
    r.informer.start();
    run_until_stalled();
    let lists: Vec<String> =
        r.lw.calls
            .borrow()
            .iter()
            .filter(|c| c.starts_with("LIST"))
            .cloned()
            .collect();
    assert_eq!(
        lists,
        vec![
            "LIST rv=0 limit=500",
            "LIST rv= limit=500 continue=c1",
            "LIST rv=0 limit=0"
        ]
    );
    assert_eq!(state(&r.informer).len(), 3);
    assert!(r.informer.has_synced());
}

#[test]
fn rl_08_watch_timeouts_are_drawn_from_300_to_600_seconds() {
    let r = rig(vec![Ok(list("1", vec![]))]);
    r.informer.start();
    for _ in 0..40 {
        run_until_stalled();
        r.clock.advance(Duration::from_secs(2));
        close_watch(&r.lw);
    }
    run_until_stalled();
    let t = r.lw.timeouts.borrow().clone();
    assert!(t.len() >= 20, "{t:?}");
    assert!(t.iter().all(|s| (300..600).contains(s)), "{t:?}");
    assert!(t.iter().any(|s| *s != t[0]), "randomized: {t:?}");
}

#[test]
fn rl_17_list_failures_reach_the_error_handler_and_the_status() {
    crate::rt::seed_thread_rng(3);
    let clock = FakeClock::new();
    let lw = Rc::new(FakeLw::default());
    let denied = || {
        Error::from_response(
            403,
            br#"{"kind":"Status","code":403,"reason":"Forbidden","message":"Access Denied"}"#,
            None,
        )
    };
    lw.lists.borrow_mut().extend([Err(denied()), Err(denied())]);
    let errors = Rc::new(RefCell::new(Vec::new()));
    let e2 = errors.clone();
    let opts = InformerOptions {
        on_watch_error: Some(Rc::new(move |e: &Error| {
            e2.borrow_mut().push(e.to_string())
        })),
        ..Default::default()
    };
    let inf = SharedIndexInformer::new(Rc::new(lw.clone()), clock.shared(), opts);
    inf.start();
    run_until_stalled();
    assert_eq!(errors.borrow().len(), 1);
    assert!(errors.borrow()[0].contains("Access Denied"));
    let st = inf.status_snapshot();
    assert_eq!(st.phase, Phase::Backoff);
    assert_eq!(st.last_error.as_ref().map(|e| e.1), Some(403));
    clock.advance(Duration::from_secs(2));
    run_until_stalled();
    assert_eq!(errors.borrow().len(), 2, "retried after the backoff step");
    assert!(!inf.has_synced());
}

#[test]
fn rl_18_resync_redelivers_cached_objects_to_handlers_that_asked() {
    crate::rt::seed_thread_rng(7);
    let clock = FakeClock::new();
    let lw = Rc::new(FakeLw::default());
    lw.lists
        .borrow_mut()
        .push_back(Ok(list("5", vec![obj("ns/a", 5, &[])])));
    let mut opts = InformerOptions::default();
    opts.reflector.resync_period = Some(Duration::from_secs(30));
    let inf = SharedIndexInformer::new(Rc::new(lw.clone()), clock.shared(), opts);
    let with = Rc::new(RefCell::new(Vec::new()));
    let without = Rc::new(RefCell::new(Vec::new()));
    inf.add_handler(recorder(with.clone()), true);
    inf.add_handler(recorder(without.clone()), false);
    inf.start();
    run_until_stalled();
    clock.advance(Duration::from_secs(30));
    run_until_stalled();
    assert_eq!(*with.borrow(), vec!["add a@5 (initial)", "update a@5->5"]);
    assert_eq!(
        *without.borrow(),
        vec!["add a@5 (initial)"],
        "no resync for a handler that did not ask"
    );
    clock.advance(Duration::from_secs(30));
    run_until_stalled();
    assert_eq!(with.borrow().len(), 3, "the timer re-arms");
}

#[test]
fn rl_19_stopped_before_start_issues_no_request() {
    let r = rig(vec![Ok(list("1", vec![]))]);
    r.informer.stop();
    r.informer.start();
    run_until_stalled();
    assert!(r.lw.calls.borrow().is_empty());
    assert_eq!(r.clock.pending_timers(), 0);
}

#[test]
fn rl_22_watch_list_without_the_end_bookmark_never_syncs() {
    let r = watch_list_rig();
    r.informer.start();
    run_until_stalled();
    send(&r.lw, Ok(WatchEvent::Added(obj("ns/p1", 1, &[]))));
    send(&r.lw, Ok(WatchEvent::Bookmark(obj("x", 2, &[]))));
    run_until_stalled();
    assert!(!r.informer.has_synced());
    assert!(state(&r.informer).is_empty());
    assert_eq!(
        r.informer.status_snapshot().listed,
        1,
        "progress counts the temporary store"
    );
}

#[test]
fn si_07_08_per_handler_resync_periods() {
    crate::rt::seed_thread_rng(7);
    let clock = FakeClock::new();
    let lw = Rc::new(FakeLw::default());
    lw.lists
        .borrow_mut()
        .push_back(Ok(list("5", vec![obj("ns/a", 5, &[])])));
    let mut opts = InformerOptions::default();
    opts.reflector.resync_period = Some(Duration::from_secs(10));
    let inf = SharedIndexInformer::new(Rc::new(lw.clone()), clock.shared(), opts);
    let fast = Rc::new(RefCell::new(Vec::new()));
    let slow = Rc::new(RefCell::new(Vec::new()));
    let tiny = Rc::new(RefCell::new(Vec::new()));
    inf.add_handler_with_resync(recorder(fast.clone()), Some(Duration::from_secs(10)));
    inf.add_handler_with_resync(recorder(slow.clone()), Some(Duration::from_secs(30)));
    // Shorter than the check period: raised to it.
    inf.add_handler_with_resync(recorder(tiny.clone()), Some(Duration::from_millis(500)));
    inf.start();
    run_until_stalled();
    let updates = |v: &Rc<RefCell<Vec<String>>>| {
        v.borrow()
            .iter()
            .filter(|s| s.starts_with("update"))
            .count()
    };
    for _ in 0..3 {
        clock.advance(Duration::from_secs(10));
        run_until_stalled();
    }
    assert_eq!(updates(&fast), 3, "every 10 s");
    assert_eq!(
        updates(&tiny),
        3,
        "500 ms is raised to the 10 s check period"
    );
    assert_eq!(updates(&slow), 1, "only at 30 s");
}
