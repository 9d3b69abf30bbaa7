//! Reflector behaviour (RL-01..24) with a scripted lister-watcher and a fake
//! clock — client-go's `reflector_test.go` and `reflector_watchlist_test.go`
//! ported as behaviour.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde_json::json;

use super::watch_list::watch_list_resource_version;
use super::*;
use crate::cache::controller::{process_deltas, DeltaHandler};
use crate::cache::delta_fifo::{DeltaFifo, DeltaFifoOptions, KnownObjects};
use crate::cache::scripted::{Call, ScriptedListerWatcher};
use crate::cache::store::Indexer;
use crate::rest::fixtures::{obj, page};
use crate::rest::{Status, StatusCause, StatusDetails};
use crate::rt::{run_until_stalled, spawn_local, Clock, FakeClock, TaskHandle};

fn bookmark(rv: u64, end: bool) -> WatchEvent {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    WatchEvent::Bookmark(KubeObject::from_value(&json!({"kind": "Pod", "metadata": meta})).unwrap())
}

pub(crate) fn api_err(code: u16, reason: &str) -> Error {
    Error::from_status(Status {
        status: "Failure".into(),
        message: format!("{reason} ({code})"),
        reason: reason.into(),
        details: None,
        code,
    })
}

fn status_event(code: u16, reason: &str) -> WatchEvent {
    WatchEvent::Error(Status {
        status: "Failure".into(),
        message: reason.into(),
        reason: reason.into(),
        details: None,
        code,
    })
}

struct Nop;
impl DeltaHandler for Nop {
    fn on_add(&self, _: &str, _: &KubeObject, _: bool) {}
    fn on_update(&self, _: &str, _: &KubeObject, _: &KubeObject) {}
    fn on_delete(&self, _: &str, _: &crate::cache::DeltaObject) {}
}

struct Rig {
    clock: FakeClock,
    lw: ScriptedListerWatcher,
    fifo: DeltaFifo,
    indexer: Indexer,
    reflector: Rc<Reflector>,
    errors: Rc<RefCell<Vec<String>>>,
    /// The host's `online` and `offline` events, as the test fires them.
    net: NetworkEvents,
    task: Option<TaskHandle>,
}

impl Rig {
    fn new(opts: ReflectorOptions) -> Rig {
        crate::rt::seed_thread_rng(11);
        let clock = FakeClock::new();
        let lw = ScriptedListerWatcher::new();
        let indexer = Indexer::with_namespace_index();
        let fifo = DeltaFifo::new(DeltaFifoOptions {
            known_objects: Some(Rc::new(indexer.clone()) as Rc<dyn KnownObjects>),
            emit_delta_type_replaced: true,
            transformer: None,
        });
        let errors: Rc<RefCell<Vec<String>>> = Rc::default();
        let e2 = errors.clone();
        let net = NetworkEvents::new();
        let reflector = Rc::new(
            Reflector::new(
                Rc::new(lw.clone()),
                fifo.clone(),
                clock.shared(),
                StatusCell::default(),
                opts,
            )
            .with_error_handler(Some(Rc::new(move |e: &Error| {
                e2.borrow_mut().push(e.to_string())
            })))
            .with_network(net.clone()),
        );
        Rig {
            clock,
            lw,
            fifo,
            indexer,
            reflector,
            errors,
            net,
            task: None,
        }
    }

    /// A rig whose reflector uses watch-list (`opts` otherwise).
    fn watch_list() -> Rig {
        let mut opts = Rig::opts();
        opts.use_watch_list = true;
        Rig::new(opts)
    }

    /// Fixed 1 s backoff steps without jitter: easy to step through.
    fn opts() -> ReflectorOptions {
        ReflectorOptions {
            backoff: Backoff {
                initial: Duration::from_secs(1),
                factor: 1.0,
                max: Duration::from_secs(1),
                jitter: 0.0,
            },
            ..Default::default()
        }
    }

    fn start(&mut self) {
        self.task = Some(spawn_local(self.reflector.clone().run()));
        self.settle();
    }

    /// Run tasks and apply the queue to the store.
    fn settle(&self) {
        run_until_stalled();
        while let Some(p) = self.fifo.try_pop() {
            let _ = process_deltas(&self.indexer, &p, &Nop);
            self.fifo.done(&p);
        }
        self.reflector.drained().notify_waiters();
        run_until_stalled();
    }

    fn advance(&self, secs: f64) {
        self.clock.advance(Duration::from_secs_f64(secs));
        self.settle();
    }

    fn send(&self, ev: WatchEvent) {
        assert!(self.lw.send(Ok(ev)), "a watch is open");
        self.settle();
    }

    fn calls(&self) -> Vec<String> {
        self.lw.described()
    }

    fn store(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .indexer
            .list()
            .iter()
            .map(|o| format!("{}@{}", o.name(), o.resource_version()))
            .collect();
        v.sort();
        v
    }

    fn status(&self) -> crate::cache::InformerStatus {
        self.reflector.status.get()
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
        run_until_stalled();
    }
}

#[test]
fn rl_01_watch_list_only_when_enabled_and_supported() {
    let mut r = Rig::new(Rig::opts());
    r.start();
    assert_eq!(r.calls(), vec!["LIST rv=0 limit=500", "WATCH rv=1"]);

    let mut opts = Rig::opts();
    opts.use_watch_list = true;
    let mut r = Rig::new(opts.clone());
    r.start();
    assert_eq!(r.calls(), vec!["WATCHLIST rv="]);

    let mut r = Rig::new(opts);
    r.lw.set_watch_list_unsupported();
    r.start();
    assert_eq!(r.calls(), vec!["LIST rv=0 limit=500", "WATCH rv=1"]);
}

#[test]
fn rl_02_initial_list_replaces_then_watches_from_the_list_rv_with_bookmarks() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Ok(page("1", vec![obj("ns/foo", 1)], None)));
    r.start();
    assert_eq!(r.store(), vec!["foo@1"]);
    assert_eq!(r.reflector.last_sync_resource_version(), "1");
    match &r.lw.calls()[..] {
        [Call::List(l), Call::Watch(w)] => {
            assert_eq!(l.resource_version.as_deref(), Some("0"));
            assert_eq!(l.limit, Some(500));
            assert_eq!(l.resource_version_match, None);
            assert_eq!(w.resource_version.as_deref(), Some("1"));
            assert!(w.allow_watch_bookmarks);
            assert_eq!(w.send_initial_events, None);
        }
        other => panic!("unexpected calls {other:?}"),
    }
    assert_eq!(r.status().phase, Phase::Watching);
}

#[test]
fn rl_03_relist_uses_the_last_rv_unpaginated() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Ok(page("10", vec![], None)));
    r.start();
    r.send(status_event(410, "Expired"));
    r.advance(1.0);
    assert_eq!(
        r.calls(),
        vec![
            "LIST rv=0 limit=500",
            "WATCH rv=10",
            "LIST rv=10 limit=0",
            "WATCH rv=1"
        ]
    );
}

#[test]
fn rl_04_explicit_page_size_always_paginates() {
    let mut opts = Rig::opts();
    opts.page_size = Some(4);
    let mut r = Rig::new(opts);
    let items: Vec<KubeObject> = (0..10).map(|i| obj(&format!("ns/p{i}"), i + 1)).collect();
    r.lw.push_list(Ok(page("20", items[0..4].to_vec(), Some("C1"))));
    r.lw.push_list(Ok(page("20", items[4..8].to_vec(), Some("C2"))));
    r.lw.push_list(Ok(page("20", items[8..].to_vec(), None)));
    r.start();
    assert_eq!(r.indexer.len(), 10);
    let conts: Vec<Option<String>> =
        r.lw.calls()
            .iter()
            .filter_map(|c| match c {
                Call::List(l) => Some(l.continue_token.clone()),
                Call::Watch(_) => None,
            })
            .collect();
    assert_eq!(conts, vec![None, Some("C1".into()), Some("C2".into())]);
    // PG-03: later pages carry no RV.
    assert_eq!(
        r.calls()[..3],
        [
            "LIST rv=0 limit=4",
            "LIST rv= limit=4 continue",
            "LIST rv= limit=4 continue"
        ]
    );
}

#[test]
fn rl_04_a_paginated_rv0_list_makes_relists_paginate() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Ok(page("5", vec![obj("ns/a", 1)], Some("C1"))));
    r.lw.push_list(Ok(page("5", vec![obj("ns/b", 2)], None)));
    r.start();
    r.send(status_event(410, "Gone"));
    r.advance(1.0);
    assert_eq!(r.calls()[3], "LIST rv=5 limit=500");
}

#[test]
fn a_list_retried_at_rv_empty_counts_only_its_own_items() {
    let mut opts = Rig::opts();
    opts.page_size = Some(3);
    let mut r = Rig::new(opts);
    r.lw.push_list(Ok(page("10", vec![], None)));
    r.start();
    // The relist's first page arrives, its second is refused as too large
    // a version: the list at RV "" that follows starts the count again.
    let mut too_large = api_err(504, "Timeout");
    if let Error::Api(a) = &mut too_large {
        a.message = "Too large resource version: 30, current: 20".into();
    }
    let three: Vec<KubeObject> = (0..3).map(|i| obj(&format!("ns/p{i}"), i + 1)).collect();
    r.lw.push_list(Ok(page("10", three, Some("C1"))));
    r.lw.push_list(Err(too_large));
    r.lw.push_list(Ok(page("11", vec![obj("ns/q", 11), obj("ns/r", 11)], None)));
    r.send(status_event(410, "Expired"));
    r.advance(1.0);
    assert_eq!(r.indexer.len(), 2, "{:?}", r.calls());
    assert_eq!(r.status().listed, 2);
}

#[test]
fn rl_05_expired_or_too_large_list_retries_at_once_with_empty_rv() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Ok(page("10", vec![], None)));
    r.start();
    // The watch ends with 410; the relist at RV 10 is expired too.
    r.lw.push_list(Err(api_err(410, "Expired")));
    r.lw.push_list(Ok(page("11", vec![], None)));
    r.send(status_event(410, "Expired"));
    r.advance(1.0);
    assert_eq!(
        r.calls(),
        vec![
            "LIST rv=0 limit=500",
            "WATCH rv=10",
            "LIST rv=10 limit=0",
            "LIST rv= limit=500",
            "WATCH rv=11"
        ]
    );
    assert!(!r.reflector.is_last_sync_resource_version_unavailable());
    assert!(
        r.errors.borrow().is_empty(),
        "no handler call: {:?}",
        r.errors
    );

    let mut r = Rig::new(Rig::opts());
    let mut too_large = api_err(504, "Timeout");
    if let Error::Api(a) = &mut too_large {
        a.message = "Too large resource version: 30, current: 20".into();
    }
    r.lw.push_list(Err(too_large));
    r.start();
    assert_eq!(
        r.calls()[..2],
        ["LIST rv=0 limit=500", "LIST rv= limit=500"]
    );
}

#[test]
fn rl_06_too_large_resource_version_recognition() {
    let cause = Error::from_status(Status {
        code: 504,
        reason: "Timeout".into(),
        details: Some(StatusDetails {
            causes: vec![StatusCause {
                reason: "ResourceVersionTooLarge".into(),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    assert!(cause.is_too_large_resource_version());
    let by_cause_message = Error::from_status(Status {
        code: 504,
        reason: "Timeout".into(),
        details: Some(StatusDetails {
            causes: vec![StatusCause {
                message: "Too large resource version".into(),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    assert!(by_cause_message.is_too_large_resource_version());
    let by_message = Error::from_status(Status {
        code: 504,
        message: "Timeout: Too large resource version: 9, current: 3".into(),
        ..Default::default()
    });
    assert!(by_message.is_too_large_resource_version());
    assert!(!api_err(504, "Timeout").is_too_large_resource_version());
    assert!(!Error::network("x").is_too_large_resource_version());
}

#[test]
fn rl_07_expired_continue_token_falls_back_to_one_full_list_at_the_original_rv() {
    let mut opts = Rig::opts();
    opts.page_size = Some(4);
    let mut r = Rig::new(opts);
    r.lw.push_list(Ok(page("10", vec![], None)));
    r.start();
    r.send(status_event(410, "Expired"));
    let items: Vec<KubeObject> = (0..8).map(|i| obj(&format!("ns/p{i}"), i + 1)).collect();
    r.lw.push_list(Ok(page("10", items[..4].to_vec(), Some("C1"))));
    r.lw.push_list(Err(api_err(410, "Expired")));
    r.lw.push_list(Ok(page("10", items.clone(), None)));
    r.advance(1.0);
    assert_eq!(
        r.calls()[2..],
        [
            "LIST rv=10 limit=4",
            "LIST rv= limit=4 continue",
            "LIST rv=10 limit=0",
            "WATCH rv=10"
        ]
    );
    assert_eq!(r.indexer.len(), 8);
}

#[test]
fn a_continue_token_seen_twice_fails_the_list_and_keeps_the_cache() {
    // A caching proxy that ignores the query answers every page with the
    // first: without a check the list never ends and memory grows.
    let mut opts = Rig::opts();
    opts.page_size = Some(2);
    let mut r = Rig::new(opts);
    r.lw.push_list(Ok(page("10", vec![obj("ns/a", 1)], None)));
    r.start();
    assert_eq!(r.indexer.len(), 1);
    r.send(status_event(410, "Expired"));
    let same = || Ok(page("10", vec![obj("ns/b", 2), obj("ns/c", 3)], Some("T")));
    for _ in 0..3 {
        r.lw.push_list(same());
    }
    r.advance(1.0);
    let lists = r.calls().iter().filter(|c| c.starts_with("LIST")).count();
    assert_eq!(
        lists,
        3,
        "the first list, a page, the same token once more: {:?}",
        r.calls()
    );
    let err = r.status().last_error.expect("reported");
    assert!(err.message.contains("a second time"), "{}", err.message);
    assert_eq!(r.indexer.len(), 1, "the cache as it was");
}

#[test]
fn rl_08_watch_timeout_is_random_in_min_to_twice_min() {
    for (min, lo, hi) in [(1u64, 300u32, 600u32), (300, 300, 600), (1800, 1800, 3600)] {
        let mut opts = Rig::opts();
        opts.min_watch_timeout = Duration::from_secs(min);
        let r = Rig::new(opts);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..50 {
            let t = r.reflector.watch_timeout();
            assert!(t >= lo && t < hi, "{t} not in [{lo},{hi})");
            seen.insert(t);
        }
        assert!(seen.len() > 10, "random, not fixed");
    }
}

#[test]
fn rl_09_events_are_applied_and_foreign_kinds_skipped_without_moving_the_rv() {
    let mut opts = Rig::opts();
    opts.expected_kind = Some("Pod".into());
    let mut r = Rig::new(opts);
    r.lw.push_list(Ok(page(
        "10",
        vec![obj("ns/foo", 1), obj("ns/bar", 2)],
        None,
    )));
    r.start();
    let svc = KubeObject::from_value(
        &json!({"kind": "Service", "metadata": {"name": "rejected", "namespace": "ns", "resourceVersion": "99"}}),
    )
    .unwrap();
    r.send(WatchEvent::Added(svc));
    assert_eq!(r.reflector.last_sync_resource_version(), "10");
    r.send(WatchEvent::Deleted(obj("ns/foo", 50)));
    r.send(WatchEvent::Modified(obj("ns/bar", 55)));
    r.send(WatchEvent::Added(obj("ns/baz", 32)));
    assert_eq!(r.store(), vec!["bar@55", "baz@32"]);
    // RL-10: last event wins, not the maximum.
    assert_eq!(r.reflector.last_sync_resource_version(), "32");
    assert_eq!(r.status().events_applied, 3);
    // The skipped event was reported, with its key.
    let st = r.status();
    assert_eq!(st.skipped, 1);
    assert_eq!(
        st.last_error.and_then(|e| e.key).as_deref(),
        Some("ns/rejected")
    );
    // A metadata-only answer is of the resource all the same.
    let partial = KubeObject::from_value(
        &json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "qux", "namespace": "ns", "resourceVersion": "33"}}),
    )
    .unwrap();
    r.send(WatchEvent::Added(partial));
    assert_eq!(r.store(), vec!["bar@55", "baz@32", "qux@33"]);
}

#[test]
fn rl_10_bookmarks_move_the_rv_and_watch_from_zero_tracks_after_first_non_added() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Ok(page("10", vec![], None)));
    r.start();
    for ev in [
        WatchEvent::Added(obj("ns/a", 10)),
        WatchEvent::Modified(obj("ns/a", 20)),
        bookmark(30, false),
        WatchEvent::Deleted(obj("ns/a", 40)),
    ] {
        let want = ev.object().unwrap().resource_version().to_owned();
        r.send(ev);
        assert_eq!(r.reflector.last_sync_resource_version(), want);
    }
    assert!(r.store().is_empty(), "bookmarks write no object");

    // A stream that started at "0": ADDEDs are not RV-ordered.
    let r = Rig::new(Rig::opts());
    r.reflector.set_last_rv("5");
    let (tx, rx) = futures::channel::mpsc::unbounded();
    for ev in [
        WatchEvent::Added(obj("ns/a", 9)),
        WatchEvent::Added(obj("ns/b", 3)),
    ] {
        tx.unbounded_send(Ok(ev)).unwrap();
    }
    drop(tx);
    let refl = r.reflector.clone();
    crate::rt::block_on(async move {
        let since = refl.network.mark();
        refl.consume(rx.boxed_local(), false, since).await;
    });
    assert_eq!(r.reflector.last_sync_resource_version(), "5");
}

#[test]
fn rl_10_a_watch_opened_at_rv_empty_skips_the_versions_of_its_synthetic_adds() {
    // A server whose list carries no resourceVersion: the watch opens at ""
    // and begins with ADDED events in no version order.
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Ok(page("", vec![], None)));
    r.start();
    r.clock.advance(Duration::from_secs(2));
    r.send(WatchEvent::Added(obj("ns/a", 50)));
    r.send(WatchEvent::Added(obj("ns/b", 7)));
    assert_eq!(r.reflector.last_sync_resource_version(), "");
    r.lw.close_watch();
    r.settle();
    assert_eq!(r.calls()[1..], ["WATCH rv=", "WATCH rv="]);
    // From the first other event on, versions are tracked.
    r.clock.advance(Duration::from_secs(2));
    r.send(WatchEvent::Added(obj("ns/c", 60)));
    r.send(WatchEvent::Modified(obj("ns/a", 61)));
    assert_eq!(r.reflector.last_sync_resource_version(), "61");
    r.send(WatchEvent::Added(obj("ns/d", 62)));
    assert_eq!(r.reflector.last_sync_resource_version(), "62");
    assert_eq!(r.store(), vec!["a@61", "b@7", "c@60", "d@62"]);
}

#[test]
fn rl_11_normal_close_rewatches_at_once_from_the_last_rv() {
    let mut r = Rig::new(Rig::opts());
    r.start();
    r.clock.advance(Duration::from_secs(2));
    r.send(WatchEvent::Added(obj("ns/p3", 3)));
    r.lw.close_watch();
    r.settle();
    assert_eq!(
        r.calls(),
        vec!["LIST rv=0 limit=500", "WATCH rv=1", "WATCH rv=3"]
    );
    assert_eq!(r.status().reconnects, 1);
    // A connection dropped mid-stream after an event is a close too.
    r.clock.advance(Duration::from_secs(2));
    r.send(WatchEvent::Modified(obj("ns/p3", 4)));
    r.lw.send(Err(Error::network("reset")));
    r.settle();
    assert_eq!(r.calls().last().unwrap(), "WATCH rv=4");
    // The idle watchdog's timeout likewise, once the watch has lasted ≥ 1 s.
    r.clock.advance(Duration::from_secs(2));
    r.lw.send(Err(Error::timeout("no bytes for 90 s")));
    r.settle();
    assert_eq!(r.calls().last().unwrap(), "WATCH rv=4");
    assert_eq!(r.calls().len(), 5);
    assert!(r.errors.borrow().is_empty());
}

#[test]
fn a_watch_that_ends_within_a_second_after_events_rewatches_after_a_backoff_step() {
    // A server or proxy that ends every watch after one event: re-watching
    // at once would ask it thousands of times a second.
    let mut r = Rig::new(Rig::opts());
    r.start();
    let mut at = Vec::new();
    for rv in 2..6 {
        r.send(WatchEvent::Modified(obj("ns/p", rv)));
        r.lw.close_watch();
        r.settle();
        let watches = r.calls().iter().filter(|c| c.starts_with("WATCH")).count();
        assert_eq!(
            watches,
            (rv - 1) as usize,
            "no immediate re-watch: {:?}",
            r.calls()
        );
        assert_eq!(r.status().phase, Phase::Backoff);
        let t0 = r.clock.now();
        while r.calls().iter().filter(|c| c.starts_with("WATCH")).count() == watches {
            r.advance(0.05);
        }
        at.push(r.clock.now().saturating_duration_since(t0));
        assert_eq!(
            r.calls().last().unwrap(),
            &format!("WATCH rv={rv}"),
            "from the last RV, no list"
        );
    }
    assert!(
        at.iter().all(|d| *d >= Duration::from_millis(500)),
        "a backoff step each time: {at:?}"
    );
    assert_eq!(
        r.calls().iter().filter(|c| c.starts_with("LIST")).count(),
        1
    );
    assert!(r.errors.borrow().is_empty());
}

#[test]
fn short_watches_that_did_work_wait_the_first_step_without_growing() {
    // A growing backoff would leave the cache half a minute behind a server
    // that ends every watch after an event.
    let mut opts = Rig::opts();
    opts.backoff = Backoff {
        initial: Duration::from_millis(800),
        factor: 2.0,
        max: Duration::from_secs(30),
        jitter: 0.0,
    };
    let mut r = Rig::new(opts);
    r.start();
    for rv in 2..10 {
        r.send(WatchEvent::Modified(obj("ns/p", rv)));
        r.lw.close_watch();
        r.settle();
        let watches = r.calls().iter().filter(|c| c.starts_with("WATCH")).count();
        r.advance(0.79);
        assert_eq!(
            r.calls().iter().filter(|c| c.starts_with("WATCH")).count(),
            watches
        );
        r.advance(0.02);
        assert_eq!(
            r.calls().iter().filter(|c| c.starts_with("WATCH")).count(),
            watches + 1,
            "re-watched after 800 ms, the {}th time too",
            rv - 1
        );
    }
}

#[test]
fn rl_12_very_short_watch_backs_off_then_relists() {
    let mut r = Rig::new(Rig::opts());
    r.start();
    r.lw.close_watch();
    r.settle();
    assert_eq!(r.calls().len(), 2, "no immediate re-watch");
    assert_eq!(r.status().phase, Phase::Backoff);
    assert!(r.status().next_retry_at_ms.is_some());
    r.advance(1.0);
    assert_eq!(
        r.calls(),
        vec![
            "LIST rv=0 limit=500",
            "WATCH rv=1",
            "LIST rv=1 limit=0",
            "WATCH rv=1"
        ]
    );
    assert_eq!(r.status().relists, 1);
}

#[test]
fn rl_13_gone_during_watch_relists_after_backoff_and_keeps_the_rest() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Ok(page("3", vec![obj("ns/keep", 1)], None)));
    r.start();
    r.send(WatchEvent::Added(obj("ns/foo", 4)));
    r.send(status_event(500, "StoreReadError"));
    // Generic error: backoff, then relist at the last RV.
    r.lw.push_list(Ok(page("5", vec![obj("ns/keep", 1)], None)));
    r.advance(1.0);
    assert_eq!(r.calls()[2], "LIST rv=4 limit=0");
    assert_eq!(r.store(), vec!["keep@1"]);
    assert_eq!(r.reflector.last_sync_resource_version(), "5");
    assert!(
        r.errors.borrow().is_empty(),
        "watch errors do not reach the handler"
    );
    assert!(r.status().last_error.is_some());
}

#[test]
fn rl_13_too_many_requests_during_a_watch_rewatches_without_relist() {
    let mut r = Rig::new(Rig::opts());
    r.start();
    r.send(status_event(429, "TooManyRequests"));
    assert_eq!(r.calls().len(), 2);
    r.advance(1.0);
    r.send(status_event(429, "TooManyRequests"));
    r.advance(1.0);
    assert_eq!(
        r.calls(),
        vec![
            "LIST rv=0 limit=500",
            "WATCH rv=1",
            "WATCH rv=1",
            "WATCH rv=1"
        ]
    );
}

#[test]
fn rl_14_429_opening_a_watch_waits_one_step_and_never_relists() {
    let mut r = Rig::new(Rig::opts());
    for _ in 0..4 {
        r.lw.push_watch_error(api_err(429, "TooManyRequests"));
    }
    r.start();
    for _ in 0..4 {
        r.advance(1.0);
    }
    let calls = r.calls();
    assert_eq!(calls.iter().filter(|c| c.starts_with("LIST")).count(), 1);
    assert_eq!(calls.iter().filter(|c| c.starts_with("WATCH")).count(), 5);
    assert_eq!(r.lw.open_watches(), 1);
    assert!(r.errors.borrow().is_empty());
}

#[test]
fn rl_14_a_5xx_with_retry_after_opening_a_watch_waits_and_never_relists() {
    // A proxy in maintenance answers watch opens with 503 and `Retry-After: 3`:
    // the informer waits at least that long and re-watches; a relist (the
    // heaviest request) is what the server asked to be spared.
    let mut r = Rig::new(Rig::opts());
    let body = br#"{"kind":"Status","status":"Failure","reason":"ServiceUnavailable","code":503}"#;
    for _ in 0..2 {
        r.lw.push_watch_error(Error::from_response(503, body, Some(3)));
    }
    r.start();
    r.advance(2.9);
    assert_eq!(r.calls(), vec!["LIST rv=0 limit=500", "WATCH rv=1"]);
    r.advance(0.2);
    r.advance(3.0);
    let calls = r.calls();
    assert_eq!(calls.iter().filter(|c| c.starts_with("LIST")).count(), 1);
    assert_eq!(calls.iter().filter(|c| c.starts_with("WATCH")).count(), 3);
    assert_eq!(r.lw.open_watches(), 1);
}

#[test]
fn rl_14_a_version_the_server_does_not_have_relists_though_it_comes_with_retry_after() {
    // The API server answers a too-large resourceVersion with 504 and
    // `Retry-After: 1`; waiting does not mend it: relist.
    let mut r = Rig::new(Rig::opts());
    let body = br#"{"kind":"Status","status":"Failure","reason":"Timeout","code":504,"message":"Too large resource version: 110, current: 3","details":{"retryAfterSeconds":1}}"#;
    r.lw.push_watch_error(Error::from_response(504, body, Some(1)));
    r.start();
    r.advance(3.0);
    let calls = r.calls();
    assert_eq!(
        calls.iter().filter(|c| c.starts_with("LIST")).count(),
        2,
        "{calls:?}"
    );
}

#[test]
fn rl_14_network_error_opening_a_watch_retries_without_relist_other_errors_relist() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_watch_error(Error::network("connection refused"));
    r.lw.push_watch_error(api_err(410, "Gone"));
    r.start();
    assert_eq!(
        r.errors.borrow().len(),
        1,
        "the unreachable server is reported at once"
    );
    assert!(r.errors.borrow()[0].contains("connection refused"));
    assert_eq!(r.status().phase, Phase::Backoff);
    r.advance(1.0);
    assert_eq!(
        r.errors.borrow().len(),
        2,
        "410 opening a watch reaches the handler"
    );
    r.advance(1.0);
    assert_eq!(
        r.calls(),
        vec![
            "LIST rv=0 limit=500",
            "WATCH rv=1",
            "WATCH rv=1",
            "LIST rv=1 limit=0",
            "WATCH rv=1"
        ]
    );
}

#[test]
fn rl_15_internal_error_window() {
    let clock = FakeClock::new();
    let mut w = RetryWindow::new(Duration::from_secs(30));
    let mut n = 0;
    while w.should_retry(clock.now()) {
        n += 1;
        clock.advance(Duration::from_secs(1));
    }
    assert_eq!(n, 31);
    // A minute without internal errors starts a new window.
    let mut w = RetryWindow::new(Duration::from_secs(30));
    let mut n = 0;
    for i in 0.. {
        if i == 10 {
            clock.advance(Duration::from_secs(60));
        }
        if !w.should_retry(clock.now()) {
            break;
        }
        n += 1;
        clock.advance(Duration::from_secs(1));
    }
    assert_eq!(n, 10 + 31);
    assert!(!RetryWindow::new(Duration::ZERO).should_retry(clock.now()));

    // In the reflector: with a window, a 500 re-watches without relisting.
    let mut opts = Rig::opts();
    opts.max_internal_error_retry = Duration::from_secs(30);
    let mut r = Rig::new(opts);
    r.start();
    r.send(status_event(500, "InternalError"));
    assert_eq!(
        r.calls(),
        vec!["LIST rv=0 limit=500", "WATCH rv=1", "WATCH rv=1"]
    );
}

#[test]
fn rl_17_list_failures_reach_the_handler_and_retry_after_backoff() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Err(api_err(403, "Forbidden")));
    r.start();
    assert_eq!(r.errors.borrow().len(), 1);
    assert!(r.errors.borrow()[0].contains("Forbidden"));
    assert_eq!(r.status().phase, Phase::Backoff);
    r.advance(0.5);
    assert_eq!(r.calls().len(), 1, "waits the backoff step");
    r.advance(0.5);
    assert_eq!(
        r.calls(),
        vec!["LIST rv=0 limit=500", "LIST rv=0 limit=500", "WATCH rv=1"]
    );
}

#[test]
fn rl_17_a_server_that_asks_for_a_wait_gets_at_least_that_long() {
    // A 429 on the list with `Retry-After: 3`: reported at once (the status
    // shows the wait), then listed again no sooner than asked, although the
    // backoff's first step is one second.
    let mut r = Rig::new(Rig::opts());
    let body = br#"{"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429}"#;
    r.lw.push_list(Err(Error::from_response(429, body, Some(3))));
    r.start();
    assert_eq!(r.errors.borrow().len(), 1);
    assert!(r.errors.borrow()[0].contains("TooManyRequests"));
    assert_eq!(r.status().phase, Phase::Backoff);
    r.advance(2.9);
    assert_eq!(r.calls().len(), 1, "waits what the server asked");
    r.advance(0.2);
    assert_eq!(
        r.calls(),
        vec!["LIST rv=0 limit=500", "LIST rv=0 limit=500", "WATCH rv=1"]
    );
}

#[test]
fn rl_18_resync_timer_runs_while_watching_and_asks_first() {
    let mut opts = Rig::opts();
    opts.resync_period = Some(Duration::from_secs(10));
    let mut r = Rig::new(opts);
    let asked = Rc::new(RefCell::new(0));
    let a = asked.clone();
    let refl = Rc::get_mut(&mut r.reflector).unwrap();
    refl.should_resync = Some(Rc::new(move || {
        *a.borrow_mut() += 1;
        *a.borrow() % 2 == 0
    }));
    r.lw.push_list(Ok(page("1", vec![obj("ns/a", 1)], None)));
    r.start();
    r.advance(10.0);
    assert_eq!(*asked.borrow(), 1);
    assert!(r.fifo.is_empty(), "first ask said no");
    r.clock.advance(Duration::from_secs(10));
    run_until_stalled();
    assert_eq!(*asked.borrow(), 2);
    assert_eq!(r.fifo.len(), 1, "second ask said yes: a Sync is queued");
    r.settle();
    // Not while backing off.
    r.send(status_event(410, "Gone"));
    r.clock.advance(Duration::from_millis(999));
    run_until_stalled();
    assert_eq!(*asked.borrow(), 2);
}

#[test]
fn rl_19_stop_before_start_issues_nothing_and_stop_during_watch_drops_it() {
    let r = Rig::new(Rig::opts());
    let t = spawn_local(r.reflector.clone().run());
    t.abort();
    run_until_stalled();
    assert!(r.calls().is_empty());

    let mut r = Rig::new(Rig::opts());
    r.start();
    assert_eq!(r.lw.open_watches(), 1);
    r.task.take().unwrap().abort();
    run_until_stalled();
    assert_eq!(r.lw.open_watches(), 0);
    assert_eq!(r.clock.pending_timers(), 0);
}

#[test]
fn rl_20_21_watch_list_fills_a_temporary_store_then_continues_the_same_stream() {
    let mut r = Rig::watch_list();
    r.start();
    match &r.lw.calls()[..] {
        [Call::Watch(w)] => {
            assert_eq!(w.send_initial_events, Some(true));
            assert!(w.allow_watch_bookmarks);
            assert_eq!(w.resource_version_match.as_deref(), Some("NotOlderThan"));
            assert_eq!(w.resource_version, None);
            assert!(w.timeout_seconds.is_some());
        }
        other => panic!("{other:?}"),
    }
    for ev in [
        WatchEvent::Added(obj("ns/p1", 1)),
        WatchEvent::Added(obj("ns/p2", 2)),
        WatchEvent::Modified(obj("ns/p1", 3)),
        WatchEvent::Added(obj("ns/p3", 4)),
        WatchEvent::Deleted(obj("ns/p3", 5)),
        bookmark(5, false),
    ] {
        r.send(ev);
    }
    assert!(
        r.store().is_empty(),
        "nothing reaches the queue before the end bookmark"
    );
    assert_eq!(r.status().listed, 2);
    r.send(bookmark(6, true));
    assert_eq!(r.store(), vec!["p1@3", "p2@2"]);
    assert_eq!(r.reflector.last_sync_resource_version(), "6");
    r.send(WatchEvent::Modified(obj("ns/p2", 7)));
    assert_eq!(r.store(), vec!["p1@3", "p2@7"]);
    assert_eq!(r.calls().len(), 1, "one request for list and watch");
    assert!(r.status().watch_list);
}

#[test]
fn rl_21_an_end_bookmark_annotated_false_does_not_count() {
    let mut r = Rig::watch_list();
    r.start();
    r.send(WatchEvent::Added(obj("ns/p1", 1)));
    let fake_end = KubeObject::from_value(&json!({"metadata": {"resourceVersion": "2",
        "annotations": {"k8s.io/initial-events-end": "false"}}}))
    .unwrap();
    r.send(WatchEvent::Bookmark(fake_end));
    assert!(r.store().is_empty());
}

#[test]
fn rl_22_watch_list_rv_comes_only_from_non_added_events() {
    assert_eq!(watch_list_resource_version(&[]), "");
    assert_eq!(
        watch_list_resource_version(&[WatchEvent::Added(obj("p1", 1))]),
        ""
    );
    assert_eq!(
        watch_list_resource_version(&[WatchEvent::Added(obj("p1", 1)), bookmark(2, true)]),
        "2"
    );
}

#[test]
fn rl_23_watch_list_rejection_falls_back_to_list_and_watch_for_good() {
    let mut r = Rig::watch_list();
    r.lw.push_watch_error(api_err(400, "BadRequest"));
    r.start();
    assert_eq!(
        r.calls(),
        vec!["WATCHLIST rv=", "LIST rv=0 limit=500", "WATCH rv=1"]
    );
    assert!(!r.status().watch_list);
    r.send(status_event(410, "Gone"));
    r.advance(1.0);
    assert_eq!(r.calls()[3], "LIST rv=1 limit=0", "no second watch-list");
}

#[test]
fn rl_23_watch_list_retries_429_and_restarts_after_an_early_close() {
    let mut r = Rig::watch_list();
    r.lw.push_watch_error(api_err(429, "TooManyRequests"));
    r.lw.push_watch_error(api_err(429, "TooManyRequests"));
    r.start();
    r.advance(1.0);
    r.advance(1.0);
    assert_eq!(r.calls(), vec!["WATCHLIST rv="; 3]);
    // Closed after an event but before the end bookmark: a fresh attempt.
    r.send(WatchEvent::Added(obj("ns/gone", 1)));
    r.lw.close_watch();
    r.settle();
    assert_eq!(r.calls().len(), 4);
    r.send(WatchEvent::Added(obj("ns/p1", 2)));
    r.send(bookmark(2, true));
    assert_eq!(
        r.store(),
        vec!["p1@2"],
        "the first attempt's objects are gone"
    );
    // 410 during a watch-list: retry with RV "".
}

#[test]
fn rl_23_very_short_watch_list_falls_back_within_the_cycle() {
    let mut r = Rig::watch_list();
    r.start();
    r.lw.close_watch();
    r.settle();
    assert_eq!(
        r.calls(),
        vec!["WATCHLIST rv=", "LIST rv=0 limit=500", "WATCH rv=1"]
    );
}

#[test]
fn rl_24_a_table_list_is_rejected() {
    let mut r = Rig::new(Rig::opts());
    let mut t = page("1", vec![], None);
    t.kind = "Table".into();
    r.lw.push_list(Ok(t));
    r.start();
    assert_eq!(r.errors.borrow().len(), 1);
    assert!(r.errors.borrow()[0].contains("Table"));
}

#[test]
fn list_progress_reports_remaining_item_count_totals() {
    let mut r = Rig::new(Rig::opts());
    type Progress = Rc<RefCell<Vec<(u64, Option<u64>)>>>;
    let seen: Progress = Rc::default();
    let s = seen.clone();
    r.reflector
        .status
        .subscribe(move |st| s.borrow_mut().push((st.listed, st.list_total)));
    let mut p1 = page("9", vec![obj("ns/a", 1), obj("ns/b", 2)], Some("C"));
    p1.remaining_item_count = Some(1);
    r.lw.push_list(Ok(p1));
    r.lw.push_list(Ok(page("9", vec![obj("ns/c", 3)], None)));
    r.start();
    assert!(seen.borrow().contains(&(2, Some(3))));
    assert!(seen.borrow().contains(&(3, None)));
    assert_eq!(r.status().listed, 3);
}

#[test]
fn back_pressure_stops_reading_the_watch_until_the_queue_drains() {
    let mut opts = Rig::opts();
    opts.max_queued = 3;
    let mut r = Rig::new(opts);
    r.start();
    for i in 0..10 {
        r.lw.send(Ok(WatchEvent::Added(obj(&format!("ns/p{i}"), i + 2))));
    }
    run_until_stalled();
    assert_eq!(r.fifo.len(), 3, "stopped pulling at the limit");
    assert_eq!(r.status().events_applied, 3);
    // Drain and signal, repeatedly: everything arrives.
    for _ in 0..5 {
        r.settle();
    }
    assert_eq!(r.indexer.len(), 10);
}

/// A server that answers again, but not at our version (expired, or a
/// server whose versions went backwards), is listed from at the first
/// backoff step, not the step an outage left the backoff at.
#[test]
fn an_answer_not_at_our_version_after_an_outage_lists_at_the_first_backoff_step() {
    let mut opts = Rig::opts();
    opts.backoff.factor = 2.0;
    opts.backoff.max = Duration::from_secs(30);
    let mut r = Rig::new(opts);
    r.lw.push_list(Ok(page("5", vec![], None)));
    // The outage: three failed connections (waits of 1, 2 and 4 s), then
    // the server is back without our version.
    for _ in 0..3 {
        r.lw.push_watch_error(Error::network("connection refused"));
    }
    r.lw.push_watch_error(api_err(410, "Gone"));
    r.lw.push_list(Ok(page("9", vec![], None)));
    r.start();
    for s in [1.0, 2.0, 4.0] {
        r.advance(s);
    }
    let lists = |r: &Rig| r.calls().iter().filter(|c| c.starts_with("LIST")).count();
    assert_eq!(lists(&r), 1, "{:?}", r.calls());
    assert_eq!(
        r.errors.borrow().len(),
        4,
        "the three failed connections and the 410 reached the handler"
    );
    // The next step would be 8 s; the list comes after the first one.
    r.advance(1.0);
    assert_eq!(lists(&r), 2, "{:?}", r.calls());
    assert_eq!(r.status().phase, Phase::Watching);
}

/// ... but a server that answers 410 to every watch is not relisted from
/// every second: only the first such answer in a row restarts the backoff.
#[test]
fn a_server_answering_every_watch_with_410_still_meets_a_growing_backoff() {
    let mut opts = Rig::opts();
    opts.backoff.factor = 2.0;
    opts.backoff.max = Duration::from_secs(30);
    let mut r = Rig::new(opts);
    for _ in 0..6 {
        r.lw.push_list(Ok(page("5", vec![], None)));
        r.lw.push_watch_error(api_err(410, "Gone"));
    }
    r.start();
    let lists = |r: &Rig| r.calls().iter().filter(|c| c.starts_with("LIST")).count();
    // Waits of 1 (restarted), 2, 4, 8 s between the lists, not 1 s each.
    let mut seen = vec![lists(&r)];
    for _ in 0..15 {
        r.advance(1.0);
        seen.push(lists(&r));
    }
    assert_eq!(
        seen,
        vec![1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 5],
        "{:?}",
        r.calls()
    );
}

/// Backoff steps of 10, 20, 40 s without jitter: an outage's wait is long.
fn slow_backoff() -> ReflectorOptions {
    ReflectorOptions {
        backoff: Backoff {
            initial: Duration::from_secs(10),
            factor: 2.0,
            max: Duration::from_secs(60),
            jitter: 0.0,
        },
        ..Default::default()
    }
}

fn watches(r: &Rig) -> usize {
    r.calls().iter().filter(|c| c.starts_with("WATCH")).count()
}

fn assert_next_retry_in(r: &Rig, secs: f64) {
    let s = r.status();
    assert_eq!(s.phase, Phase::Backoff);
    let at = s.next_retry_at_ms.expect("a next retry");
    let want = r.clock.wall_millis() + secs * 1000.0;
    assert!((at - want).abs() < 1.0, "next retry at {at}, want {want}");
}

/// A worker's host looks at its network only while a reflector runs: the
/// reflector listens from its start to its end, backing off or watching.
#[test]
fn a_reflector_listens_to_the_network_while_it_runs_and_not_after() {
    let mut r = Rig::new(Rig::opts());
    assert_eq!(r.net.listeners(), 0, "not before it runs");
    r.lw.push_watch_error(Error::network("Failed to fetch"));
    r.start();
    assert_eq!(r.status().phase, Phase::Backoff);
    assert_eq!(r.net.listeners(), 1, "backing off");
    r.advance(1.0);
    assert_eq!(r.status().phase, Phase::Watching);
    assert_eq!(r.net.listeners(), 1, "watching");
    if let Some(t) = r.task.take() {
        t.abort();
    }
    r.settle();
    assert_eq!(r.net.listeners(), 0, "stopped");
    r.task = Some(spawn_local(r.reflector.clone().resume()));
    r.settle();
    assert_eq!(r.net.listeners(), 1, "resumed");
}

#[test]
fn a_server_answering_another_request_ends_a_backoff_after_a_network_error_only() {
    let mut r = Rig::new(slow_backoff());
    for _ in 0..2 {
        r.lw.push_watch_error(Error::network("Failed to fetch"));
    }
    r.start();
    r.advance(10.0);
    assert_eq!(watches(&r), 2);
    assert_next_retry_in(&r, 20.0);
    // Another informer of the same client reached the server: tried
    // within a second (the informers of a client spread their retries),
    // and the steps start again.
    r.advance(5.0);
    r.lw.server_reached();
    r.settle();
    r.advance(1.0);
    assert_eq!(watches(&r), 3);
    assert_eq!(r.status().phase, Phase::Watching);
    // A watch the server ends at once is not a server out of reach: its
    // wait runs its course whoever else gets answers.
    r.lw.close_watch();
    r.advance(0.5);
    assert_eq!(r.status().phase, Phase::Backoff);
    let before = watches(&r);
    r.lw.server_reached();
    r.settle();
    assert_eq!(watches(&r), before, "{:?}", r.calls());
}

#[test]
fn rl_25_online_ends_a_watch_backoff_at_once_and_restarts_its_steps() {
    let mut r = Rig::new(slow_backoff());
    for _ in 0..3 {
        r.lw.push_watch_error(Error::network("Failed to fetch"));
    }
    r.start();
    r.advance(10.0);
    assert_eq!(watches(&r), 2);
    assert_next_retry_in(&r, 20.0);
    r.net.went_offline();
    r.advance(5.0);
    assert_eq!(watches(&r), 2, "offline changes nothing");
    r.net.came_online();
    r.settle();
    // Tried at 15 s, not at the 30 s deadline; it failed again (the network
    // is back before its routes), and the next wait is the first step, not
    // the one the outage had grown to.
    assert_eq!(watches(&r), 3);
    assert_next_retry_in(&r, 10.0);
    r.advance(1.0);
    r.net.came_online();
    r.settle();
    assert_eq!(watches(&r), 4);
    assert_eq!(r.status().phase, Phase::Watching);
    assert_eq!(r.status().next_retry_at_ms, None);
    // The old deadlines pass with nothing more asked, and an `online` with
    // no `offline` since the watch opened leaves it be.
    r.advance(60.0);
    r.net.came_online();
    r.settle();
    assert_eq!(
        r.calls(),
        vec![
            "LIST rv=0 limit=500",
            "WATCH rv=1",
            "WATCH rv=1",
            "WATCH rv=1",
            "WATCH rv=1"
        ]
    );
    assert_eq!(r.lw.open_watches(), 1);
}

#[test]
fn rl_25_online_ends_the_wait_before_a_relist_but_not_a_wait_the_server_asked_for() {
    let mut r = Rig::new(slow_backoff());
    r.lw.push_list(Err(api_err(503, "ServiceUnavailable")));
    let body = br#"{"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429}"#;
    r.lw.push_list(Err(Error::from_response(429, body, Some(30))));
    r.start();
    assert_next_retry_in(&r, 10.0);
    r.advance(2.0);
    r.net.came_online();
    r.settle();
    assert_eq!(r.calls().len(), 2, "listed again at the wake");
    // The server asked for 30 s: the wake shortens the 20 s step's jitter-free
    // wait to no less than that.
    assert_next_retry_in(&r, 30.0);
    r.advance(5.0);
    r.net.came_online();
    r.settle();
    assert_eq!(r.calls().len(), 2, "the server's wait is kept");
    assert_next_retry_in(&r, 25.0);
    r.advance(24.9);
    assert_eq!(r.calls().len(), 2);
    r.advance(0.2);
    assert_eq!(
        r.calls(),
        vec![
            "LIST rv=0 limit=500",
            "LIST rv=0 limit=500",
            "LIST rv=0 limit=500",
            "WATCH rv=1"
        ]
    );
    assert_eq!(r.status().phase, Phase::Watching);
}

#[test]
fn rl_25_a_watch_open_across_offline_and_online_is_reopened_from_the_last_rv() {
    let mut r = Rig::new(Rig::opts());
    r.lw.push_list(Ok(page("3", vec![obj("ns/a", 3)], None)));
    r.start();
    r.clock.advance(Duration::from_secs(5));
    r.send(WatchEvent::Modified(obj("ns/a", 4)));
    r.net.went_offline();
    r.settle();
    assert_eq!(r.lw.open_watches(), 1, "offline alone keeps the watch");
    r.net.came_online();
    r.settle();
    // At once (the clock has not moved), from the last RV, without a list.
    assert_eq!(
        r.calls(),
        vec!["LIST rv=0 limit=500", "WATCH rv=3", "WATCH rv=4"]
    );
    assert_eq!(r.lw.open_watches(), 1, "the old watch was closed");
    let s = r.status();
    assert_eq!((s.phase, s.reconnects, s.relists), (Phase::Watching, 1, 0));
    r.send(WatchEvent::Modified(obj("ns/a", 5)));
    assert_eq!(r.store(), vec!["a@5"]);
    // A 410 on the watch opened again relists, as any expired watch does.
    r.send(status_event(410, "Expired"));
    r.advance(1.0);
    assert_eq!(r.calls()[3], "LIST rv=5 limit=0");
}

#[test]
fn retry_now_ends_a_backoff_and_leaves_a_watch_open_across_an_offline_be() {
    let mut r = Rig::new(slow_backoff());
    r.lw.push_watch_error(Error::network("Failed to fetch"));
    r.start();
    assert_next_retry_in(&r, 10.0);
    r.advance(1.0);
    r.net.retry_now();
    r.settle();
    assert_eq!(watches(&r), 2, "tried at the nudge, not at the deadline");
    assert_eq!(r.status().phase, Phase::Watching);
    // Unlike an `online`, a nudge presumes no connection dead, even one
    // that was open while the host said it was offline.
    r.net.went_offline();
    r.net.retry_now();
    r.settle();
    assert_eq!(watches(&r), 2);
    assert_eq!(r.lw.open_watches(), 1);
}

#[test]
fn rl_25_a_watch_list_open_across_offline_and_online_starts_over_or_rewatches() {
    let mut r = Rig::watch_list();
    r.start();
    r.send(WatchEvent::Added(obj("ns/p1", 1)));
    r.net.went_offline();
    r.net.came_online();
    r.settle();
    assert_eq!(r.calls(), vec!["WATCHLIST rv=", "WATCHLIST rv="]);
    r.send(WatchEvent::Added(obj("ns/p1", 1)));
    r.send(bookmark(2, true));
    assert_eq!(r.store(), vec!["p1@1"]);
    r.net.went_offline();
    r.net.came_online();
    r.settle();
    assert_eq!(
        r.calls(),
        vec!["WATCHLIST rv=", "WATCHLIST rv=", "WATCH rv=2"],
        "after the initial events, a re-watch from the bookmark's RV"
    );
    assert_eq!(r.lw.open_watches(), 1);
}
