//! SharedIndexInformer behaviour (SI, CT end to end) on a scripted
//! lister-watcher and a fake clock — client-go's `shared_informer_test.go`,
//! `controller_test.go` and `processor_listener_test.go` ported as behaviour.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::cache::scripted::ScriptedListerWatcher;
use crate::rest::fixtures;
use crate::rest::{Error, ObjectList, Status, WatchEvent};
use crate::rt::Backoff;
use crate::rt::{block_on, run_until_stalled, FakeClock};

/// A pod with managedFields, an `app` label and a spec (what the transforms cut).
fn obj(key: &str, rv: u64) -> KubeObject {
    let name = key.rsplit('/').next().unwrap_or(key);
    fixtures::obj_with(
        key,
        rv,
        json!({"managedFields": [{"manager": "kubectl"}], "labels": {"app": name}}),
        json!({"spec": {"x": 1}}),
    )
}

fn page(rv: &str, items: Vec<KubeObject>) -> ObjectList {
    fixtures::page(rv, items, None)
}

type Log = Rc<RefCell<Vec<String>>>;

fn recorder(log: Log) -> Handler {
    Rc::new(move |n: Notification| {
        let s = match n {
            Notification::Add(o, initial) => format!(
                "add {}@{}{}",
                o.name(),
                o.resource_version(),
                if initial { " initial" } else { "" }
            ),
            Notification::Update(old, new) => format!(
                "update {}@{}->{}",
                new.name(),
                old.resource_version(),
                new.resource_version()
            ),
            Notification::Delete(d) => format!("delete {}", d.key().unwrap_or_default()),
        };
        log.borrow_mut().push(s);
        None
    })
}

struct Rig {
    clock: FakeClock,
    lw: ScriptedListerWatcher,
    inf: SharedIndexInformer,
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.inf.stop();
        run_until_stalled();
    }
}

fn opts() -> InformerOptions {
    InformerOptions {
        reflector: ReflectorOptions {
            backoff: Backoff {
                initial: Duration::from_secs(1),
                factor: 1.0,
                max: Duration::from_secs(1),
                jitter: 0.0,
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

fn rig_with(lists: Vec<ObjectList>, o: InformerOptions) -> Rig {
    crate::rt::seed_thread_rng(5);
    let clock = FakeClock::new();
    let lw = ScriptedListerWatcher::new();
    for l in lists {
        lw.push_list(Ok(l));
    }
    let inf = SharedIndexInformer::new(Rc::new(lw.clone()), clock.shared(), o);
    Rig { clock, lw, inf }
}

fn rig(lists: Vec<ObjectList>) -> Rig {
    rig_with(lists, opts())
}

impl Rig {
    fn send(&self, ev: WatchEvent) {
        assert!(self.lw.send(Ok(ev)));
        run_until_stalled();
    }
    fn state(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        self.inf.store().for_each(|k, o| {
            m.insert(k.to_owned(), o.resource_version().to_owned());
        });
        m
    }
}

fn gone() -> WatchEvent {
    WatchEvent::Error(Status {
        code: 410,
        reason: "Gone".into(),
        ..Default::default()
    })
}

#[test]
fn si_01_02_handlers_before_start_get_initial_adds_then_live_events_and_indexers_work() {
    let r = rig(vec![page("2", vec![obj("ns/pod1", 1), obj("ns/pod2", 2)])]);
    let log: Log = Rc::default();
    let reg = r.inf.add_event_handler(recorder(log.clone())).unwrap();
    assert!(!reg.has_synced());
    let by_app: crate::cache::IndexFunc = Rc::new(|o: &KubeObject| {
        Ok(o.meta()
            .labels()
            .get("app")
            .map(|v| vec![v.to_owned()])
            .unwrap_or_default())
    });
    r.inf
        .add_indexers([("app".to_owned(), by_app)].into_iter().collect())
        .unwrap();
    r.inf.start();
    run_until_stalled();
    assert!(r.inf.has_synced() && reg.has_synced());
    r.send(WatchEvent::Added(obj("ns/pod3", 3)));
    assert_eq!(
        *log.borrow(),
        vec!["add pod1@1 initial", "add pod2@2 initial", "add pod3@3"]
    );
    assert_eq!(r.inf.store().by_index("app", "pod3").unwrap().len(), 1);
    // After start: existing objects are indexed at once.
    let by_ns_name: crate::cache::IndexFunc =
        Rc::new(|o: &KubeObject| Ok(vec![o.name().to_owned()]));
    r.inf
        .add_indexers([("name".to_owned(), by_ns_name)].into_iter().collect())
        .unwrap();
    assert_eq!(r.inf.store().by_index("name", "pod1").unwrap().len(), 1);
    assert_eq!(r.inf.last_sync_resource_version(), "3");
}

#[test]
fn si_03_04_late_handler_gets_the_cache_first_atomically_and_its_own_sync() {
    let r = rig(vec![page("1", vec![obj("ns/pod1", 1)])]);
    let l1: Log = Rc::default();
    r.inf.add_event_handler(recorder(l1.clone())).unwrap();
    r.inf.start();
    run_until_stalled();
    // Queue an event, register, then let it through: no miss, no duplicate.
    assert!(r.lw.send(Ok(WatchEvent::Added(obj("ns/pod2", 2)))));
    let l2: Log = Rc::default();
    let reg2 = r.inf.add_event_handler(recorder(l2.clone())).unwrap();
    assert!(!reg2.has_synced(), "false until its replay is delivered");
    run_until_stalled();
    assert!(reg2.has_synced());
    assert_eq!(*l2.borrow(), vec!["add pod1@1 initial", "add pod2@2"]);
    assert_eq!(*l1.borrow(), vec!["add pod1@1 initial", "add pod2@2"]);
}

#[test]
fn si_04_registration_syncs_only_after_its_async_handler_returned() {
    let r = rig(vec![page("1", vec![obj("ns/pod1", 1)])]);
    let gate = crate::rt::Notify::new();
    let g = gate.clone();
    let slow: Handler = Rc::new(move |_| {
        let w = g.notified();
        Some(Box::pin(w))
    });
    let reg = r.inf.add_event_handler(slow).unwrap();
    r.inf.start();
    run_until_stalled();
    assert!(
        r.inf.has_synced(),
        "the informer does not wait for handlers (SI-05)"
    );
    assert!(!reg.has_synced());
    gate.notify_waiters();
    run_until_stalled();
    assert!(reg.has_synced());
}

#[test]
fn si_05_has_synced_survives_relists() {
    let r = rig(vec![page("1", vec![obj("ns/a", 1)])]);
    r.inf.start();
    run_until_stalled();
    assert!(r.inf.has_synced());
    r.send(gone());
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert!(r.inf.has_synced());
    assert_eq!(r.inf.status_snapshot().relists, 1);
}

#[test]
fn si_06_a_slow_async_handler_does_not_delay_the_others_or_the_cache() {
    let r = rig(vec![page("1", vec![])]);
    let gate = crate::rt::Notify::new();
    let g = gate.clone();
    let slow_seen = Rc::new(Cell::new(0));
    let s = slow_seen.clone();
    let slow: Handler = Rc::new(move |_| {
        s.set(s.get() + 1);
        let w = g.notified();
        Some(Box::pin(w))
    });
    let fast: Log = Rc::default();
    let slow_reg = r.inf.add_event_handler(slow).unwrap();
    r.inf.add_event_handler(recorder(fast.clone())).unwrap();
    r.inf.start();
    run_until_stalled();
    for i in 0..5 {
        r.send(WatchEvent::Added(obj(&format!("ns/p{i}"), i + 2)));
    }
    assert_eq!(fast.borrow().len(), 5);
    assert_eq!(r.inf.store().len(), 5);
    assert_eq!(slow_seen.get(), 1, "one at a time");
    assert_eq!(slow_reg.pending(), 4);
    for _ in 0..4 {
        gate.notify_waiters();
        run_until_stalled();
    }
    assert_eq!(slow_seen.get(), 5, "in order, eventually");
}

#[test]
fn si_07_resync_check_period_rules() {
    let mut o = opts();
    o.reflector.resync_period = Some(Duration::from_secs(12 * 3600));
    let r = rig_with(vec![], o);
    let h: Handler = Rc::new(|_| None);
    let periods: Vec<Duration> = [0u64, 60, 55, 5]
        .iter()
        .map(|s| {
            r.inf
                .add_event_handler_with_resync(h.clone(), Duration::from_secs(*s))
                .unwrap()
        })
        .map(|reg| reg.resync_period())
        .collect();
    assert_eq!(
        periods,
        [0, 60, 55, 5].map(Duration::from_secs).to_vec(),
        "each lowered the check period before start"
    );
    // Below the minimum → 1 s; after start, shorter than the check period → raised.
    let tiny = r
        .inf
        .add_event_handler_with_resync(h.clone(), Duration::from_millis(10))
        .unwrap();
    assert_eq!(tiny.resync_period(), Duration::from_secs(1));
    r.inf.start();
    let late = r
        .inf
        .add_event_handler_with_resync(h.clone(), Duration::from_millis(500))
        .unwrap();
    assert_eq!(late.resync_period(), Duration::from_secs(1));
    // An informer created without resync never resyncs anyone.
    let r0 = rig(vec![]);
    let reg = r0
        .inf
        .add_event_handler_with_resync(h, Duration::from_secs(60))
        .unwrap();
    assert_eq!(reg.resync_period(), Duration::ZERO);
}

#[test]
fn si_08_09_per_handler_resync_reaches_only_due_handlers() {
    let mut o = opts();
    o.reflector.resync_period = Some(Duration::from_secs(1));
    let r = rig_with(
        vec![page("2", vec![obj("ns/pod1", 1), obj("ns/pod2", 2)])],
        o,
    );
    let logs: Vec<Log> = (0..3).map(|_| Rc::default()).collect();
    for (l, p) in logs.iter().zip([0u64, 2, 3]) {
        r.inf
            .add_event_handler_with_resync(recorder(l.clone()), Duration::from_secs(p))
            .unwrap();
    }
    r.inf.start();
    run_until_stalled();
    for l in &logs {
        l.borrow_mut().clear();
    }
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert!(
        logs.iter().all(|l| l.borrow().is_empty()),
        "nobody due at 1 s"
    );
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    let mut got = logs[1].borrow().clone();
    got.sort();
    assert_eq!(got, vec!["update pod1@1->1", "update pod2@2->2"]);
    assert!(logs[0].borrow().is_empty() && logs[2].borrow().is_empty());
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(logs[2].borrow().len(), 2);
    assert_eq!(logs[1].borrow().len(), 2);
}

#[test]
fn si_09_ct_08_watch_disruption_relist_delivers_changes_and_new_objects_as_not_initial() {
    let r = rig(vec![
        page("2", vec![obj("ns/pod1", 1), obj("ns/pod2", 2)]),
        page(
            "4",
            vec![obj("ns/pod1", 1), obj("ns/pod2", 4), obj("ns/pod3", 3)],
        ),
    ]);
    let log: Log = Rc::default();
    r.inf.add_event_handler(recorder(log.clone())).unwrap();
    r.inf.start();
    run_until_stalled();
    log.borrow_mut().clear();
    r.send(gone());
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    let mut got = log.borrow().clone();
    got.sort();
    // Listeners start "syncing", so the unchanged pod1 arrives too (SI-09).
    assert_eq!(
        got,
        vec!["add pod3@3", "update pod1@1->1", "update pod2@2->4"]
    );
}

#[test]
fn si_11_13_remove_is_idempotent_and_double_registration_is_independent() {
    let r = rig(vec![page("1", vec![])]);
    let log: Log = Rc::default();
    let h = recorder(log.clone());
    let a = r.inf.add_event_handler(h.clone()).unwrap();
    let _b = r.inf.add_event_handler(h).unwrap();
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Added(obj("ns/x", 2)));
    assert_eq!(log.borrow().len(), 2);
    r.inf.remove_event_handler(&a);
    a.remove();
    assert_eq!(r.inf.handler_count(), 1);
    r.send(WatchEvent::Added(obj("ns/y", 3)));
    assert_eq!(log.borrow().len(), 3);
    r.inf.stop();
    a.remove();
}

#[test]
fn si_12_shut_down_waits_for_the_pump() {
    let r = rig(vec![page("1", vec![obj("ns/a", 1)])]);
    let log: Log = Rc::default();
    let reg = r.inf.add_event_handler(recorder(log)).unwrap();
    // Never started: returns at once.
    block_on(reg.shut_down());
    let reg2 = r.inf.add_event_handler(Rc::new(|_| None)).unwrap();
    r.inf.start();
    run_until_stalled();
    block_on(reg2.shut_down());
    assert!(reg2.is_removed());
}

#[test]
fn si_11_a_removed_handler_is_dropped_though_its_registration_lives() {
    // What the handler captures is let go on removal, not when the
    // registration is: a JS handler may hold its own registration, a cycle
    // through wasm's table of JS references that no collector can break.
    let r = rig(vec![page("1", vec![obj("ns/a", 1)])]);
    let captured = Rc::new(());
    let held = captured.clone();
    let reg = r
        .inf
        .add_event_handler(Rc::new(move |_| {
            let _ = &held;
            None
        }))
        .unwrap();
    r.inf.start();
    run_until_stalled();
    assert_eq!(Rc::strong_count(&captured), 2);
    reg.remove();
    run_until_stalled();
    assert_eq!(Rc::strong_count(&captured), 1, "the handler is gone");
    assert!(reg.is_removed());
}

#[test]
fn si_14_lifecycle_after_stop() {
    let r = rig(vec![]);
    assert!(!r.inf.is_started() && !r.inf.is_stopped());
    r.inf.start();
    r.inf.start();
    run_until_stalled();
    assert_eq!(r.lw.calls().len(), 2, "a second start is ignored");
    r.inf.stop();
    assert!(r.inf.is_started() && r.inf.is_stopped());
    let e = r.inf.add_event_handler(Rc::new(|_| None)).err();
    assert_eq!(e, Some(InformerError::Stopped));
    assert!(r.inf.add_indexers(Indexers::new()).is_err());
    let inert = r.inf.add_handler(Rc::new(|_| None), false);
    assert!(inert.is_removed() && !inert.has_synced());
}

#[test]
fn si_15_ct_09_transform_before_caching_once_and_setters_only_before_start() {
    let calls = Rc::new(Cell::new(0));
    let c = calls.clone();
    let upper: Transformer = Rc::new(move |o: KubeObject| {
        c.set(c.get() + 1);
        let mut v = o.to_value().map_err(|e| e.to_string())?;
        let name = o.name().to_uppercase();
        v["metadata"]["name"] = json!(name);
        KubeObject::from_value(&v).map_err(|e| e.to_string())
    });
    let r = rig(vec![page("2", vec![obj("ns/pod1", 1), obj("ns/pod2", 2)])]);
    r.inf.set_transform(Some(strip_managed_fields())).unwrap();
    r.inf.set_transform(Some(upper)).unwrap();
    r.inf.set_watch_error_handler(Rc::new(|_| {})).unwrap();
    let log: Log = Rc::default();
    r.inf.add_event_handler(recorder(log.clone())).unwrap();
    r.inf.start();
    assert_eq!(
        r.inf.set_transform(None),
        Err(InformerError::AlreadyStarted)
    );
    assert!(r.inf.set_watch_error_handler(Rc::new(|_| {})).is_err());
    run_until_stalled();
    r.send(WatchEvent::Modified(obj("ns/pod1", 3)));
    assert_eq!(
        *log.borrow(),
        vec![
            "add POD1@1 initial",
            "add POD2@2 initial",
            "update POD1@1->3"
        ]
    );
    assert_eq!(calls.get(), 3, "once per incoming object");
    assert!(r.inf.store().get_by_key("ns/POD1").is_some());
}

#[test]
fn strip_managed_fields_and_metadata_only_transforms() {
    let o = obj("ns/a", 1);
    assert!(o.raw_str().contains("managedFields"));
    let s = strip_managed_fields()(o.clone()).unwrap();
    assert!(!s.raw_str().contains("managedFields"));
    assert!(s.raw_str().contains("spec"));
    assert_eq!(s.resource_version(), "1");
    let plain = KubeObject::from_value(&json!({"metadata": {"name": "x"}})).unwrap();
    assert!(strip_managed_fields()(plain.clone())
        .unwrap()
        .ptr_eq(&plain));
    let m = metadata_only()(o.clone()).unwrap();
    assert!(!m.raw_str().contains("spec") && !m.raw_str().contains("managedFields"));
    assert_eq!(m.name(), "a");

    // A whole object and the server's metadata-only form of it cache alike.
    let from_client = partial_object_metadata()(o.clone()).unwrap();
    let server_form = KubeObject::from_value(&json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": serde_json::from_str::<serde_json::Value>(o.raw_str())
            .unwrap()["metadata"]
            .clone(),
    }))
    .unwrap();
    let from_server = partial_object_metadata()(server_form).unwrap();
    for p in [&from_client, &from_server] {
        assert_eq!(
            (p.kind(), p.api_version()),
            ("PartialObjectMetadata", "meta.k8s.io/v1")
        );
        assert_eq!(
            (p.name(), p.namespace(), p.resource_version()),
            ("a", Some("ns"), "1")
        );
        assert!(!p.raw_str().contains("spec") && !p.raw_str().contains("managedFields"));
    }
    let as_value = |o: &KubeObject| serde_json::from_str::<serde_json::Value>(o.raw_str()).unwrap();
    assert_eq!(as_value(&from_client), as_value(&from_server));
}

#[test]
fn si_17_ct_03_watch_delete_passes_the_object_relist_delete_a_tombstone() {
    let r = rig(vec![
        page("2", vec![obj("ns/a", 1), obj("ns/b", 2)]),
        page("5", vec![]),
    ]);
    let seen: Rc<RefCell<Vec<(String, bool)>>> = Rc::default();
    let s = seen.clone();
    r.inf
        .add_event_handler(Rc::new(move |n| {
            if let Notification::Delete(d) = n {
                let tomb = matches!(d, crate::cache::DeltaObject::Tombstone(_));
                s.borrow_mut().push((d.key().unwrap_or_default(), tomb));
            }
            None
        }))
        .unwrap();
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Deleted(obj("ns/a", 3)));
    r.send(gone());
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(
        *seen.borrow(),
        vec![("ns/a".to_owned(), false), ("ns/b".to_owned(), true)]
    );
    assert!(r.inf.store().is_empty());
}

#[test]
fn si_18_wait_for_cache_sync_is_event_driven_and_false_when_stopped() {
    let r = rig(vec![page("1", vec![obj("ns/a", 1)])]);
    let done = Rc::new(Cell::new(None));
    let d = done.clone();
    let i = r.inf.clone();
    let _t = crate::rt::spawn_local(async move { d.set(Some(wait_for_cache_sync(&[i]).await)) });
    run_until_stalled();
    assert_eq!(done.get(), None);
    r.inf.start();
    run_until_stalled();
    assert_eq!(done.get(), Some(true));
    let r2 = rig(vec![]);
    r2.inf.stop();
    assert!(!block_on(wait_for_cache_sync(std::slice::from_ref(
        &r2.inf
    ))));
}

#[test]
fn stop_leaves_no_fetch_timer_or_task_behind() {
    let mut o = opts();
    o.reflector.resync_period = Some(Duration::from_secs(30));
    let r = rig_with(vec![page("1", vec![obj("ns/a", 1)])], o);
    let fired = Rc::new(Cell::new(0));
    let f = fired.clone();
    r.inf
        .add_event_handler(Rc::new(move |_| {
            f.set(f.get() + 1);
            None
        }))
        .unwrap();
    let net = crate::rt::host_network();
    r.inf.start();
    run_until_stalled();
    assert_eq!(r.lw.open_watches(), 1);
    assert!(r.clock.pending_timers() >= 1, "the resync timer");
    assert_eq!(net.waiters(), 1, "the watch listens for the network");
    r.inf.stop();
    run_until_stalled();
    assert_eq!(r.lw.open_watches(), 0);
    assert_eq!(r.clock.pending_timers(), 0);
    assert_eq!(net.waiters(), 0, "nor for the network");
    assert_eq!(r.inf.status().get().phase, crate::cache::Phase::Stopped);
    let before = fired.get();
    r.clock.advance(Duration::from_secs(3600));
    run_until_stalled();
    assert_eq!(fired.get(), before);
    assert_eq!(r.lw.calls().len(), 2);
    // Stop while backing off: the backoff timer goes too.
    let r = rig(vec![]);
    r.lw.push_watch_error(Error::network("refused"));
    r.inf.start();
    run_until_stalled();
    assert_eq!(r.clock.pending_timers(), 1);
    assert_eq!(net.waiters(), 1, "the backoff listens for the network");
    r.inf.stop();
    run_until_stalled();
    assert_eq!(r.clock.pending_timers(), 0);
    assert_eq!(net.waiters(), 0);
}

#[test]
fn status_reports_phase_counts_and_errors_with_notifications() {
    let r = rig(vec![page("1", vec![obj("ns/a", 1)])]);
    let phases: Rc<RefCell<Vec<Phase>>> = Rc::default();
    let p = phases.clone();
    r.inf
        .status()
        .subscribe(move |s| p.borrow_mut().push(s.phase));
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Added(obj("ns/b", 2)));
    r.lw.push_watch_error(Error::network("refused"));
    r.clock.advance(Duration::from_secs(2));
    r.lw.close_watch();
    run_until_stalled();
    let s = r.inf.status_snapshot();
    assert_eq!(s.phase, Phase::Backoff);
    assert!(s.next_retry_at_ms.is_some());
    assert_eq!(s.cached, 2);
    assert_eq!(s.events_applied, 1);
    assert!(s.synced);
    assert_eq!(s.resource_version, "2");
    assert_eq!(
        s.last_error.as_ref().map(|e| e.message.contains("refused")),
        Some(true)
    );
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(r.inf.status_snapshot().phase, Phase::Watching);
    assert_eq!(r.inf.status_snapshot().reconnects, 2);
    let ph = phases.borrow();
    assert!(ph.contains(&Phase::Listing) && ph.contains(&Phase::Backoff));
}

#[test]
fn consistency_under_a_random_script_store_and_handler_map_match_the_model() {
    // A native version of the wasm consistency property: random events,
    // drops and 410s; afterwards store == model == handler-built map.
    for seed in 0..20u64 {
        let mut rng = crate::rt::Rng::with_seed(seed);
        let r = rig(vec![page("1", vec![])]);
        let map: Rc<RefCell<BTreeMap<String, String>>> = Rc::default();
        let m = map.clone();
        r.inf
            .add_event_handler(Rc::new(move |n| {
                let mut m = m.borrow_mut();
                match n {
                    Notification::Add(o, _) | Notification::Update(_, o) => {
                        m.insert(
                            crate::cache::object_key(&o).unwrap(),
                            o.resource_version().into(),
                        );
                    }
                    Notification::Delete(d) => {
                        m.remove(&d.key().unwrap());
                    }
                }
                None
            }))
            .unwrap();
        r.inf.start();
        run_until_stalled();
        let mut model: BTreeMap<String, u64> = BTreeMap::new();
        let mut rv = 1u64;
        for _ in 0..200 {
            rv += 1;
            let key = format!("ns/p{}", rng.next_u64() % 15);
            let roll = rng.next_u64() % 20;
            if roll == 0 {
                // The server loses our watch; the relist shows the model.
                r.send(gone());
                let items = model.iter().map(|(k, v)| obj(k, *v)).collect();
                r.lw.push_list(Ok(page(&rv.to_string(), items)));
                r.clock.advance(Duration::from_secs(1));
                run_until_stalled();
            } else if roll == 1 {
                r.clock.advance(Duration::from_secs(2));
                r.lw.close_watch();
                run_until_stalled();
            } else if model.contains_key(&key) && roll < 6 {
                model.remove(&key);
                r.send(WatchEvent::Deleted(obj(&key, rv)));
            } else if model.contains_key(&key) {
                model.insert(key.clone(), rv);
                r.send(WatchEvent::Modified(obj(&key, rv)));
            } else {
                model.insert(key.clone(), rv);
                r.send(WatchEvent::Added(obj(&key, rv)));
            }
        }
        let want: BTreeMap<String, String> = model
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        assert_eq!(r.state(), want, "seed {seed}: store");
        assert_eq!(*map.borrow(), want, "seed {seed}: handler map");
    }
}

fn failures(inf: &SharedIndexInformer) -> Rc<RefCell<Vec<Failure>>> {
    let seen: Rc<RefCell<Vec<Failure>>> = Rc::default();
    let s = seen.clone();
    inf.status()
        .on_failure(move |f| s.borrow_mut().push(f.clone()));
    seen
}

#[test]
fn back_pressure_a_stuck_handler_bounds_every_queue_and_loses_nothing() {
    let mut o = opts();
    o.max_pending = Some(8);
    o.reflector.max_queued = 16;
    let r = rig_with(vec![page("1", vec![])], o);
    let gate = crate::rt::Notify::new();
    let seen: Rc<RefCell<Vec<String>>> = Rc::default();
    let (g, s) = (gate.clone(), seen.clone());
    let slow: Handler = Rc::new(move |n| {
        if let Notification::Add(o, _) = n {
            s.borrow_mut().push(o.name().to_owned());
        }
        Some(Box::pin(g.notified()))
    });
    let reg = r.inf.add_event_handler(slow).unwrap();
    r.inf.start();
    run_until_stalled();
    for i in 0..200u64 {
        assert!(r
            .lw
            .send(Ok(WatchEvent::Added(obj(&format!("ns/p{i:03}"), i + 2)))));
    }
    run_until_stalled();
    let st = r.inf.status_snapshot();
    assert!(reg.pending() <= 8, "handler backlog {}", reg.pending());
    let queued = r.inf.inner.fifo.borrow().as_ref().unwrap().queued_deltas();
    assert!(queued <= 16, "queue {queued}");
    assert!(
        st.events_applied < 40,
        "the watch is no longer read: {} events taken",
        st.events_applied
    );
    assert_eq!(
        st.held_back.as_ref().map(|h| h.limit),
        Some(8),
        "status says why"
    );
    for _ in 0..400 {
        if seen.borrow().len() == 200 {
            break;
        }
        gate.notify_waiters();
        run_until_stalled();
    }
    let want: Vec<String> = (0..200).map(|i| format!("p{i:03}")).collect();
    assert_eq!(*seen.borrow(), want, "every event, in order");
    assert_eq!(r.inf.status_snapshot().held_back, None);
    assert_eq!(r.inf.store().len(), 200);
}

#[test]
fn a_version_the_store_refuses_is_reported_with_its_key_never_served_stale_and_relisted() {
    let fail_next = Rc::new(Cell::new(1u32));
    let f = fail_next.clone();
    let by_app: crate::cache::IndexFunc = Rc::new(move |o: &KubeObject| {
        if o.resource_version() == "3" && f.get() > 0 {
            f.set(f.get() - 1);
            return Err("index function threw".into());
        }
        Ok(vec![o.name().to_owned()])
    });
    let mut o = opts();
    o.indexers.insert("by-name".into(), by_app);
    let r = rig_with(
        vec![
            page("1", vec![obj("ns/a", 1)]),
            page("4", vec![obj("ns/a", 3), obj("ns/b", 4)]),
        ],
        o,
    );
    let log: Log = Rc::default();
    r.inf.add_event_handler(recorder(log.clone())).unwrap();
    let seen = failures(&r.inf);
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Modified(obj("ns/a", 3)));
    // The refused version is reported with its key; the old one is not kept.
    assert_eq!(seen.borrow().len(), 1);
    assert_eq!(seen.borrow()[0].key, "ns/a");
    assert_eq!(seen.borrow()[0].reason, "IndexFailed");
    assert!(r.inf.store().get_by_key("ns/a").is_none());
    assert_eq!(r.inf.status_snapshot().skipped, 1);
    assert_eq!(
        r.inf.status_snapshot().last_error.and_then(|e| e.key),
        Some("ns/a".to_owned())
    );
    // The watch ends and the informer relists from the RV before the change.
    r.clock.advance(Duration::from_secs(2));
    run_until_stalled();
    let lists: Vec<String> =
        r.lw.described()
            .into_iter()
            .filter(|d| d.starts_with("LIST"))
            .collect();
    assert_eq!(lists.len(), 2, "{:?}", r.lw.described());
    let want: BTreeMap<String, String> = [("ns/a", "3"), ("ns/b", "4")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert_eq!(r.state(), want);
    assert_eq!(
        *log.borrow(),
        vec!["add a@1 initial", "delete ns/a", "add a@3", "add b@4"]
    );
}

#[test]
fn a_watch_event_the_transform_refuses_keeps_the_rv_before_it_and_relists() {
    let mut o = opts();
    o.transform = Some(Rc::new(|o: KubeObject| {
        if o.name() == "bad" {
            Err("transform threw".into())
        } else {
            Ok(o)
        }
    }));
    let r = rig_with(
        vec![
            page("1", vec![]),
            page("5", vec![obj("ns/ok", 2), obj("ns/bad", 3), obj("ns/c", 5)]),
        ],
        o,
    );
    let seen = failures(&r.inf);
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Added(obj("ns/ok", 2)));
    r.send(WatchEvent::Added(obj("ns/bad", 3)));
    assert_eq!(
        r.inf.last_sync_resource_version(),
        "2",
        "not past the change"
    );
    assert_eq!(seen.borrow()[0].key, "ns/bad");
    assert_eq!(seen.borrow()[0].reason, "TransformFailed");
    r.clock.advance(Duration::from_secs(2));
    run_until_stalled();
    assert!(
        r.lw.described().iter().any(|d| d == "LIST rv=2 limit=0"),
        "relisted from the last applied RV: {:?}",
        r.lw.described()
    );
    // The relist skips (and reports) the object again and applies the rest.
    assert_eq!(seen.borrow().len(), 2);
    assert_eq!(
        r.state().keys().cloned().collect::<Vec<_>>(),
        ["ns/c", "ns/ok"]
    );
    assert_eq!(r.inf.last_sync_resource_version(), "5");
}

#[test]
fn one_bad_item_in_a_list_is_skipped_and_reported_while_the_rest_syncs() {
    let mut o = opts();
    o.transform = Some(Rc::new(|o: KubeObject| {
        if o.name() == "throws" {
            Err("transform threw".into())
        } else {
            Ok(o)
        }
    }));
    let nameless =
        KubeObject::from_value(&json!({"metadata": {"namespace": "ns", "resourceVersion": "2"}}))
            .unwrap();
    let mut list = page(
        "9",
        vec![
            obj("ns/a", 1),
            nameless,
            obj("ns/throws", 3),
            obj("ns/b", 4),
        ],
    );
    list.invalid.push((
        "ns/undecodable".into(),
        Error::decode("bad metadata", b"{}"),
    ));
    let r = rig_with(vec![list], o);
    let seen = failures(&r.inf);
    r.inf.start();
    run_until_stalled();
    assert!(r.inf.has_synced());
    assert_eq!(
        r.state().keys().cloned().collect::<Vec<_>>(),
        ["ns/a", "ns/b"]
    );
    let keys: Vec<String> = seen.borrow().iter().map(|f| f.key.clone()).collect();
    assert_eq!(keys, ["ns/undecodable", "ns/", "ns/throws"]);
    let st = r.inf.status_snapshot();
    assert_eq!(st.skipped, 3);
    assert_eq!(
        st.phase,
        Phase::Watching,
        "synced is never shown as listing"
    );
    assert_eq!(
        r.lw.described()
            .iter()
            .filter(|d| d.starts_with("LIST"))
            .count(),
        1,
        "no relist for a bad listed item"
    );
}

#[test]
fn pause_drops_the_watch_and_resume_watches_from_the_last_rv_without_listing() {
    let r = rig(vec![
        page("1", vec![obj("ns/a", 1)]),
        page("9", vec![obj("ns/a", 8), obj("ns/c", 9)]),
    ]);
    let log: Log = Rc::default();
    r.inf.add_event_handler(recorder(log.clone())).unwrap();
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Added(obj("ns/b", 2)));
    assert_eq!(r.lw.open_watches(), 1);
    r.inf.pause();
    run_until_stalled();
    assert!(r.inf.is_paused());
    assert_eq!(r.lw.open_watches(), 0, "the watch is closed");
    assert_eq!(r.inf.status_snapshot().phase, Phase::Paused);
    assert_eq!(r.clock.pending_timers(), 0, "no timer is left running");
    assert_eq!(r.inf.store().len(), 2, "the cache is kept");
    let calls_before = r.lw.described().len();
    r.inf.resume();
    run_until_stalled();
    assert_eq!(
        r.lw.described()[calls_before..].to_vec(),
        vec!["WATCH rv=2".to_owned()],
        "resumes with a watch from the last RV, no list"
    );
    r.send(WatchEvent::Modified(obj("ns/b", 3)));
    // An expired RV after a long pause: relist and deliver the difference.
    r.inf.pause();
    r.inf.resume();
    run_until_stalled();
    r.send(gone());
    r.clock.advance(Duration::from_secs(2));
    run_until_stalled();
    let want: BTreeMap<String, String> = [("ns/a", "8"), ("ns/c", "9")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert_eq!(r.state(), want);
    assert_eq!(
        *log.borrow(),
        vec![
            "add a@1 initial",
            "add b@2",
            "update b@2->3",
            "update a@1->8",
            "add c@9",
            "delete ns/b"
        ]
    );
    assert_eq!(r.inf.status_snapshot().phase, Phase::Watching);
}

/// The two queues differ in one observable way: DeltaFIFO hands over every
/// queued change of a key together, RealFIFO every change in arrival order.
#[test]
fn real_fifo_informers_deliver_changes_in_arrival_order_across_keys() {
    for (queue, expected) in [
        (
            crate::cache::QueueKind::DeltaFifo,
            ["update a@1->2", "update a@2->3", "update b@1->2"],
        ),
        (
            crate::cache::QueueKind::RealFifo,
            ["update a@1->2", "update b@1->2", "update a@2->3"],
        ),
    ] {
        let r = rig_with(
            vec![
                page("1", vec![obj("ns/a", 1), obj("ns/b", 1)]),
                page("9", vec![obj("ns/b", 2)]),
            ],
            InformerOptions { queue, ..opts() },
        );
        let log: Log = Rc::default();
        r.inf.add_event_handler(recorder(log.clone())).unwrap();
        r.inf.start();
        run_until_stalled();
        assert!(r.inf.has_synced(), "{queue:?}");
        log.borrow_mut().clear();
        // Three events queued before the controller's next turn.
        for ev in [
            WatchEvent::Modified(obj("ns/a", 2)),
            WatchEvent::Modified(obj("ns/b", 2)),
            WatchEvent::Modified(obj("ns/a", 3)),
        ] {
            assert!(r.lw.send(Ok(ev)));
        }
        run_until_stalled();
        assert_eq!(*log.borrow(), expected, "{queue:?}");
        // A relist without `a` deletes it, through either queue.
        log.borrow_mut().clear();
        r.send(gone());
        r.clock.advance(Duration::from_secs(2));
        run_until_stalled();
        assert!(
            log.borrow().contains(&"delete ns/a".to_string()),
            "{queue:?}: {:?}",
            log.borrow()
        );
        assert_eq!(
            r.state(),
            BTreeMap::from([("ns/b".to_string(), "2".to_string())]),
            "{queue:?}"
        );
    }
}

fn seeded(objects: Vec<KubeObject>, rv: &str) -> InformerOptions {
    let rv = rv.to_owned();
    let source: SeedSource = Rc::new(move || {
        let seed = Seed {
            objects: objects.clone(),
            resource_version: rv.clone(),
            stored_at_ms: 1234.0,
        };
        Box::pin(async move { Some(seed) })
    });
    InformerOptions {
        seed: Some(source),
        ..opts()
    }
}

#[test]
fn a_seed_fills_the_cache_and_the_watch_starts_from_its_rv_without_listing() {
    let r = rig_with(
        vec![page("20", vec![obj("ns/a", 15), obj("ns/c", 20)])],
        seeded(vec![obj("ns/a", 3), obj("ns/b", 4)], "5"),
    );
    let log: Log = Rc::default();
    r.inf.add_event_handler(recorder(log.clone())).unwrap();
    r.inf.start();
    run_until_stalled();
    assert!(
        r.inf.has_synced(),
        "the stored copy counts as the initial list"
    );
    assert_eq!(r.state().len(), 2);
    assert_eq!(r.lw.described(), vec!["WATCH rv=5".to_owned()], "no list");
    // An open watch does not confirm the copy (an expired RV arrives as an
    // error event); its first event does.
    let st = r.inf.status_snapshot();
    assert_eq!((st.phase, st.stored_at_ms), (Phase::Watching, Some(1234.0)));
    r.send(WatchEvent::Modified(obj("ns/b", 6)));
    assert_eq!(r.state()["ns/b"], "6");
    assert_eq!(r.inf.status_snapshot().stored_at_ms, None);
    // The stored RV expired meanwhile: relist and deliver the difference.
    r.send(gone());
    r.clock.advance(Duration::from_secs(2));
    run_until_stalled();
    let want: BTreeMap<String, String> = [("ns/a", "15"), ("ns/c", "20")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert_eq!(r.state(), want);
    assert_eq!(
        *log.borrow(),
        vec![
            "add a@3 initial",
            "add b@4 initial",
            "update b@4->6",
            "update a@3->15",
            "add c@20",
            "delete ns/b"
        ]
    );
}

#[test]
fn a_seed_shows_stored_until_the_watch_opens_and_no_seed_lists() {
    let r = rig_with(
        vec![page("9", vec![obj("ns/a", 9)])],
        seeded(vec![obj("ns/a", 3)], "5"),
    );
    r.lw.push_watch_error(Error::network("offline"));
    r.inf.start();
    run_until_stalled();
    let st = r.inf.status_snapshot();
    assert_eq!(st.stored_at_ms, Some(1234.0), "{st:?}");
    assert_eq!(
        st.phase,
        Phase::Backoff,
        "the watch failed: data still only stored"
    );
    assert_eq!(r.state()["ns/a"], "3");

    // A seed source that finds nothing: an ordinary list.
    let none: SeedSource = Rc::new(|| Box::pin(async { None }));
    let r = rig_with(
        vec![page("9", vec![obj("ns/a", 9)])],
        InformerOptions {
            seed: Some(none),
            ..opts()
        },
    );
    r.inf.start();
    run_until_stalled();
    assert!(r.lw.described()[0].starts_with("LIST rv=0"));
    assert_eq!(r.state()["ns/a"], "9");
}

#[test]
fn a_seed_whose_version_the_server_refuses_is_replaced_by_a_list_at_rv_empty() {
    // A version another host wrote (a SharedWorker's own) or a damaged one:
    // the watch and the list from it get 400, the list at "" converges.
    let r = rig_with(
        Vec::new(),
        seeded(vec![obj("ns/a", 3), obj("ns/b", 4)], "kw.x.5"),
    );
    let refused = || {
        Error::from_status(Status {
            status: "Failure".into(),
            message: "invalid resource version \"kw.x.5\"".into(),
            reason: "BadRequest".into(),
            details: None,
            code: 400,
        })
    };
    r.lw.push_watch_error(refused());
    r.lw.push_list(Err(refused()));
    r.lw.push_list(Ok(page("20", vec![obj("ns/a", 15), obj("ns/c", 20)])));
    r.inf.start();
    run_until_stalled();
    r.clock.advance(Duration::from_secs(5));
    run_until_stalled();
    let want: BTreeMap<String, String> = [("ns/a", "15"), ("ns/c", "20")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert_eq!(r.state(), want, "{:?}", r.lw.described());
    let calls = r.lw.described();
    assert!(calls[0].starts_with("WATCH rv=kw.x.5"), "{calls:?}");
    assert!(calls[1].starts_with("LIST rv=kw.x.5"), "{calls:?}");
    assert!(calls[2].starts_with("LIST rv= "), "{calls:?}");
    let st = r.inf.status_snapshot();
    assert_eq!((st.phase, st.stored_at_ms), (Phase::Watching, None));
    assert!(calls[3].starts_with("WATCH rv=20"), "{calls:?}");
}

#[test]
fn a_seed_with_objects_the_cache_cannot_hold_is_shown_then_listed_not_resumed() {
    // The second stored object has no name: skipped and reported; watching
    // from the copy's version would never bring it back.
    let nameless = KubeObject::from_value(
        &json!({"kind": "Pod", "metadata": {"namespace": "ns", "resourceVersion": "4"}}),
    )
    .unwrap();
    let r = rig_with(
        vec![page("20", vec![obj("ns/a", 15), obj("ns/b", 16)])],
        seeded(vec![obj("ns/a", 3), nameless], "5"),
    );
    let failures = Rc::new(Cell::new(0));
    let seen = failures.clone();
    r.inf.status().on_failure(move |_| seen.set(seen.get() + 1));
    r.inf.start();
    run_until_stalled();
    assert_eq!(failures.get(), 1);
    let calls = r.lw.described();
    assert!(
        calls[0].starts_with("LIST rv=0"),
        "a list, not a watch from the copy: {calls:?}"
    );
    assert_eq!(r.state().len(), 2, "both objects, from the list");
}

#[test]
fn a_quiet_watch_from_a_seed_confirms_it_after_a_moment() {
    let r = rig_with(Vec::new(), seeded(vec![obj("ns/a", 3)], "5"));
    r.inf.start();
    run_until_stalled();
    assert_eq!(r.inf.status_snapshot().stored_at_ms, Some(1234.0));
    r.clock.advance(Duration::from_millis(900));
    run_until_stalled();
    assert_eq!(
        r.inf.status_snapshot().stored_at_ms,
        Some(1234.0),
        "not yet"
    );
    r.clock.advance(Duration::from_millis(200));
    run_until_stalled();
    let st = r.inf.status_snapshot();
    assert_eq!((st.phase, st.stored_at_ms), (Phase::Watching, None));
    assert_eq!(r.lw.described(), vec!["WATCH rv=5".to_owned()]);
}

#[test]
fn observers_see_each_applied_change_in_cache_order_before_handlers_but_no_resyncs() {
    let mut o = opts();
    o.reflector.resync_period = Some(Duration::from_secs(1));
    let r = rig_with(
        vec![page("2", vec![obj("ns/pod1", 1), obj("ns/pod2", 2)])],
        o,
    );
    let log: Log = Rc::default();
    let seen = log.clone();
    let store = r.inf.store();
    r.inf.observe(Rc::new(move |key: &str, c: Applied<'_>| {
        // Called after the store took the change, with the key it took it under.
        let s = match c {
            Applied::Added(o) => {
                assert_eq!(store.get_by_key(key).as_ref(), Some(o));
                format!("observed add {}@{}", o.name(), o.resource_version())
            }
            Applied::Updated(old, new) => {
                assert_eq!(crate::cache::object_key(old).ok().as_deref(), Some(key));
                assert_eq!(store.get_by_key(key).as_ref(), Some(new));
                format!(
                    "observed update {}@{}->{}",
                    new.name(),
                    old.resource_version(),
                    new.resource_version()
                )
            }
            Applied::Deleted(d) => {
                assert_eq!(d.key().ok().as_deref(), Some(key));
                assert!(store.get_by_key(key).is_none());
                format!("observed delete {key}")
            }
        };
        seen.borrow_mut().push(s);
    }));
    // A handler that asks for resyncs, logging into the same log.
    r.inf
        .add_event_handler_with_resync(recorder(log.clone()), Duration::from_secs(1))
        .unwrap();
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Modified(obj("ns/pod1", 3)));
    r.send(WatchEvent::Deleted(obj("ns/pod2", 4)));
    assert_eq!(
        *log.borrow(),
        vec![
            "observed add pod1@1",
            "observed add pod2@2",
            "add pod1@1 initial",
            "add pod2@2 initial",
            "observed update pod1@1->3",
            "update pod1@1->3",
            "observed delete ns/pod2",
            "delete ns/pod2",
        ]
    );
    // A resync reaches the handler only.
    log.borrow_mut().clear();
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(*log.borrow(), vec!["update pod1@3->3"]);
    // A second observer sees what comes next, as does the first.
    let second: Log = Rc::default();
    let s2 = second.clone();
    r.inf.observe(Rc::new(move |_key: &str, c: Applied<'_>| {
        if let Applied::Added(o) = c {
            s2.borrow_mut().push(o.name().to_owned());
        }
    }));
    log.borrow_mut().clear();
    r.send(WatchEvent::Added(obj("ns/pod5", 5)));
    assert_eq!(*second.borrow(), vec!["pod5"]);
    assert_eq!(*log.borrow(), vec!["observed add pod5@5", "add pod5@5"]);
}

/// A change the server sends without a new resourceVersion (an aggregated
/// API, a proxy) is still a change: observers (the JS diff) and handlers hear
/// of it, and a relist stores what it lists, as client-go stores what it is
/// sent. The same version with the same bytes changes nothing.
#[test]
fn a_change_under_the_same_resource_version_is_a_change() {
    let spec = |x: u64| fixtures::obj_with("ns/a", 1, json!({}), json!({"spec": {"x": x}}));
    let r = rig(vec![page("2", vec![spec(1)]), page("3", vec![spec(3)])]);
    let observed: Log = Rc::default();
    let o = observed.clone();
    r.inf.observe(Rc::new(move |_key: &str, c| {
        if let Applied::Updated(old, new) = c {
            o.borrow_mut().push(format!(
                "{} -> {}",
                old.field_text("spec.x").unwrap_or_default(),
                new.field_text("spec.x").unwrap_or_default()
            ));
        }
    }));
    let log: Log = Rc::default();
    r.inf
        .add_event_handler_with_resync(recorder(log.clone()), Duration::ZERO)
        .unwrap();
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Modified(spec(2)));
    let x = || {
        r.inf
            .store()
            .get_by_key("ns/a")
            .and_then(|o| o.field_text("spec.x"))
    };
    assert_eq!(x().as_deref(), Some("2"));
    r.send(gone());
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(x().as_deref(), Some("3"), "the relist's copy is stored");
    assert_eq!(*observed.borrow(), vec!["1 -> 2", "2 -> 3"]);
    assert_eq!(
        *log.borrow(),
        vec!["add a@1 initial", "update a@1->1", "update a@1->1"]
    );
    // The very same bytes again: the diff has nothing to show; the handler
    // hears of it, as a syncing listener (listeners start syncing, as
    // client-go's do, and this one has no resync period to end it).
    r.send(WatchEvent::Modified(spec(3)));
    assert_eq!(observed.borrow().len(), 2);
    assert_eq!(log.borrow().len(), 4);
}

/// A relisted copy of a version the watch delivered is the same version even
/// without the `kind` and `apiVersion` the API server leaves out of a list's
/// items: the cache keeps its copy and the diff reports nothing.
#[test]
fn a_relisted_copy_without_kind_and_api_version_is_the_same_version() {
    let watched = |rv: u64| {
        KubeObject::from_json(
            format!(r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"a","namespace":"ns","resourceVersion":"{rv}"}},"spec":{{"x":1}}}}"#)
                .as_bytes(),
        )
        .unwrap()
    };
    let listed = |rv: u64, x: u64| {
        KubeObject::from_json(
            format!(r#"{{"metadata":{{"name":"a","namespace":"ns","resourceVersion":"{rv}"}},"spec":{{"x":{x}}}}}"#)
                .as_bytes(),
        )
        .unwrap()
    };
    let r = rig(vec![
        page("1", vec![listed(1, 1)]),
        page("2", vec![listed(2, 1)]),
        page("2", vec![listed(2, 9)]),
    ]);
    let observed: Log = Rc::default();
    let o = observed.clone();
    r.inf.observe(Rc::new(move |_key: &str, c| {
        if let Applied::Updated(_, new) = c {
            o.borrow_mut()
                .push(new.field_text("spec.x").unwrap_or_default());
        }
    }));
    r.inf.start();
    run_until_stalled();
    r.send(WatchEvent::Modified(watched(2)));
    assert_eq!(*observed.borrow(), vec!["1"]);
    let stored = r.inf.store().get_by_key("ns/a").expect("cached");
    r.send(gone());
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    let kept = r.inf.store().get_by_key("ns/a").expect("cached");
    assert!(kept.ptr_eq(&stored), "the watched copy is kept");
    assert_eq!(kept.kind(), "Pod");
    assert_eq!(observed.borrow().len(), 1, "nothing changed");
    // The same version with other content is a change, kind or not.
    r.send(gone());
    r.clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(*observed.borrow(), vec!["1", "9"]);
}
