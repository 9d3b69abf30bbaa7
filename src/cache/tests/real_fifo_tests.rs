//! RealFIFO behaviour, ported from client-go's the_real_fifo_test as
//! behaviour: every change in order, no per-key grouping, deletions of a
//! relist queued before its objects.

use std::cell::Cell;
use std::rc::Rc;

use super::obj;
use crate::cache::{
    DeltaFifoOptions, DeltaObject, DeltaType, Indexer, KnownObjects, Popped, RealFifo, Tombstone,
};
use crate::rest::KubeObject;
use crate::rt::{block_on, run_until_stalled, spawn_local};

use DeltaType::*;

fn o(key: &str, rv: u64) -> KubeObject {
    obj(key, rv, &[])
}

fn with_known(known: &[(&str, u64)]) -> (RealFifo, Indexer) {
    let ix = Indexer::default();
    for (k, rv) in known {
        ix.add(o(k, *rv)).unwrap();
    }
    let f = RealFifo::new(DeltaFifoOptions {
        known_objects: Some(Rc::new(ix.clone()) as Rc<dyn KnownObjects>),
        ..Default::default()
    });
    (f, ix)
}

fn fifo() -> RealFifo {
    with_known(&[]).0
}

/// `(type, key, rv or "dfsu:rv")` of a popped item, which holds exactly one delta.
fn one(p: &Popped) -> (DeltaType, String, String) {
    assert_eq!(p.deltas.len(), 1, "RealFIFO pops one delta at a time");
    let d = &p.deltas[0];
    let desc = match &d.object {
        DeltaObject::Object(o) => o.resource_version().to_owned(),
        DeltaObject::Tombstone(Tombstone { obj, .. }) => {
            format!(
                "dfsu:{}",
                obj.as_ref().map_or("-", |o| o.resource_version())
            )
        }
    };
    (d.kind, p.key.clone(), desc)
}

/// Pop (and mark done) everything queued.
fn drain(f: &RealFifo) -> Vec<(DeltaType, String, String)> {
    let mut out = Vec::new();
    while let Some(p) = f.try_pop() {
        out.push(one(&p));
        f.done(&p);
    }
    out
}

/// A scripted sequence of queue operations.
type Ops = Box<dyn Fn(&RealFifo)>;
/// What [`drain`] returns.
type Summary = Vec<(DeltaType, String, String)>;

fn d(v: &[(DeltaType, &str, &str)]) -> Vec<(DeltaType, String, String)> {
    v.iter()
        .map(|(t, k, r)| (*t, k.to_string(), r.to_string()))
        .collect()
}

#[test]
fn rf_every_change_leaves_in_arrival_order_across_keys() {
    let f = fifo();
    for i in 1..=200u64 {
        f.add(o(&format!("a{}", i % 7), i)).unwrap();
        f.update(o(&format!("b{}", i % 5), 1000 + i)).unwrap();
    }
    let got = drain(&f);
    assert_eq!(got.len(), 400, "nothing compacted");
    let rvs: Vec<u64> = got.iter().map(|(_, _, r)| r.parse().unwrap()).collect();
    let (a, b): (Vec<u64>, Vec<u64>) = rvs.iter().partition(|&&r| r < 1000);
    assert!(a.windows(2).all(|w| w[0] < w[1]) && b.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(rvs[..4], [1, 1001, 2, 1002], "interleaved as written");
}

#[test]
fn rf_add_update_delete_of_one_key_are_three_pops() {
    let f = fifo();
    f.add(o("foo", 10)).unwrap();
    f.update(o("foo", 12)).unwrap();
    f.delete(DeltaObject::Object(o("foo", 15))).unwrap();
    assert_eq!(f.queued_deltas(), 3);
    assert_eq!(
        drain(&f),
        d(&[
            (Added, "foo", "10"),
            (Updated, "foo", "12"),
            (Deleted, "foo", "15")
        ])
    );
    assert!(f.is_empty());
}

#[test]
fn rf_deletes_are_always_queued_even_of_unknown_objects_and_twice() {
    let f = fifo();
    f.add(o("foo", 10)).unwrap();
    f.update(o("bar", 15)).unwrap();
    f.add(o("qux", 17)).unwrap();
    f.delete(DeltaObject::Object(o("qux", 18))).unwrap();
    f.delete(DeltaObject::Object(o("baz", 20))).unwrap();
    f.delete(DeltaObject::Object(o("baz", 21))).unwrap();
    let rvs: Vec<String> = drain(&f).into_iter().map(|(_, _, r)| r).collect();
    assert_eq!(rvs, ["10", "15", "17", "18", "20", "21"]);
    // With a store that knows the key: the same.
    let (f, _ix) = with_known(&[("baz", 7)]);
    f.delete(DeltaObject::Object(o("baz", 20))).unwrap();
    assert_eq!(drain(&f), d(&[(Deleted, "baz", "20")]));
}

#[test]
fn rf_replace_after_a_queued_delete_queues_the_object_again() {
    let (f, _ix) = with_known(&[("foo", 1)]);
    f.delete(DeltaObject::Object(o("foo", 1))).unwrap();
    f.replace(vec![o("foo", 2)], "2");
    assert_eq!(
        drain(&f),
        d(&[(Deleted, "foo", "1"), (Replaced, "foo", "2")])
    );
}

#[test]
fn rf_replace_tombstones_keys_only_in_the_queue_once() {
    let cases: Vec<(&str, Ops, Summary)> = vec![
        (
            "added then relisted without it",
            Box::new(|f| {
                f.add(o("foo", 2)).unwrap();
                f.replace(vec![], "0");
            }),
            d(&[(Added, "foo", "2"), (Deleted, "foo", "dfsu:2")]),
        ),
        (
            "deleted already: no second delete",
            Box::new(|f| {
                f.add(o("foo", 2)).unwrap();
                f.delete(DeltaObject::Object(o("foo", 2))).unwrap();
                f.replace(vec![], "0");
            }),
            d(&[(Added, "foo", "2"), (Deleted, "foo", "2")]),
        ),
        (
            "relisted twice, then gone",
            Box::new(|f| {
                f.add(o("foo", 2)).unwrap();
                f.replace(vec![o("foo", 2)], "0");
                f.replace(vec![o("foo", 2)], "0");
                f.replace(vec![], "0");
            }),
            d(&[
                (Added, "foo", "2"),
                (Replaced, "foo", "2"),
                (Replaced, "foo", "2"),
                (Deleted, "foo", "dfsu:2"),
            ]),
        ),
        (
            "two empty relists: one delete",
            Box::new(|f| {
                f.add(o("foo", 2)).unwrap();
                f.replace(vec![], "0");
                f.replace(vec![], "1");
            }),
            d(&[(Added, "foo", "2"), (Deleted, "foo", "dfsu:2")]),
        ),
        (
            "added, deleted, added again: the newest is tombstoned",
            Box::new(|f| {
                f.add(o("foo", 2)).unwrap();
                f.delete(DeltaObject::Object(o("foo", 2))).unwrap();
                f.add(o("foo", 3)).unwrap();
                f.replace(vec![], "0");
            }),
            d(&[
                (Added, "foo", "2"),
                (Deleted, "foo", "2"),
                (Added, "foo", "3"),
                (Deleted, "foo", "dfsu:3"),
            ]),
        ),
    ];
    for (name, ops, want) in cases {
        let f = fifo();
        ops(&f);
        assert_eq!(drain(&f), want, "{name}");
        assert!(f.is_empty(), "{name}");
    }
}

#[test]
fn rf_replace_queues_deletions_of_known_objects_before_the_list() {
    let (f, _ix) = with_known(&[("foo", 5), ("bar", 6), ("baz", 7)]);
    f.delete(DeltaObject::Object(o("baz", 10))).unwrap();
    f.replace(vec![o("foo", 5)], "0");
    assert_eq!(
        drain(&f),
        d(&[
            (Deleted, "baz", "10"),
            (Deleted, "bar", "dfsu:6"),
            (Replaced, "foo", "5")
        ])
    );
    let (f, _ix) = with_known(&[("foo", 5), ("bar", 6), ("baz", 7)]);
    f.add(o("baz", 10)).unwrap();
    f.replace(vec![o("foo", 5)], "0");
    let got = drain(&f);
    assert_eq!(got[0], (Added, "baz".into(), "10".into()));
    assert_eq!(got[3], (Replaced, "foo".into(), "5".into()));
    let mut tombstones = got[1..3].to_vec();
    tombstones.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        tombstones,
        d(&[(Deleted, "bar", "dfsu:6"), (Deleted, "baz", "dfsu:10")]),
        "the queued version of baz is its last known state"
    );
}

#[test]
fn rf_add_then_replace_hands_out_both_versions() {
    let f = fifo();
    f.add(o("foo", 10)).unwrap();
    f.replace(vec![o("foo", 15)], "0");
    assert_eq!(
        drain(&f),
        d(&[(Added, "foo", "10"), (Replaced, "foo", "15")])
    );
}

#[test]
fn rf_resync_offers_stored_objects_nothing_queued_names() {
    let (f, _ix) = with_known(&[("foo", 5)]);
    f.resync();
    assert_eq!(drain(&f), d(&[(Sync, "foo", "5")]));
    let (f, _ix) = with_known(&[("foo", 5)]);
    f.delete(DeltaObject::Object(o("foo", 10))).unwrap();
    f.resync();
    assert_eq!(
        drain(&f),
        d(&[(Deleted, "foo", "10")]),
        "a queued key is not resynced"
    );
    let f = RealFifo::new(DeltaFifoOptions::default());
    f.resync();
    assert!(f.is_empty(), "no store, nothing to resync");
}

#[test]
fn rf_has_synced_once_the_initial_population_is_processed() {
    assert!(!fifo().has_synced());
    let f = fifo();
    f.add(o("a", 1)).unwrap();
    assert!(f.has_synced(), "a write before any list populates");
    let f = fifo();
    f.replace(vec![], "0");
    assert!(f.has_synced());
    // Everything queued when the first list lands is initial: here an
    // earlier add, the tombstones of known objects and the list itself.
    let (f, _ix) = with_known(&[("gone", 1)]);
    f.replace(vec![o("a", 1), o("a", 2), o("b", 1)], "0");
    for _ in 0..4 {
        assert!(!f.has_synced());
        let p = f.try_pop().unwrap();
        assert!(p.is_in_initial_list);
        assert!(!f.has_synced(), "not before the item is processed");
        f.done(&p);
    }
    assert!(f.has_synced(), "the same key twice counts twice");
    f.add(o("c", 1)).unwrap();
    let p = f.try_pop().unwrap();
    assert!(!p.is_in_initial_list);
}

#[test]
fn rf_close_wakes_waiters_and_drains() {
    let f = fifo();
    let woke = Rc::new(Cell::new(0));
    for _ in 0..10 {
        let (f, w) = (f.clone(), woke.clone());
        spawn_local(async move {
            if f.pop().await.is_none() {
                w.set(w.get() + 1);
            }
        });
    }
    run_until_stalled();
    f.close();
    run_until_stalled();
    assert_eq!(woke.get(), 10);
    assert!(f.is_closed());
    let f = fifo();
    f.add(o("a", 1)).unwrap();
    f.close();
    f.add(o("b", 1)).unwrap();
    assert_eq!(block_on(f.pop()).map(|p| p.key), Some("a".to_string()));
    assert_eq!(block_on(f.pop()).map(|p| p.key), Some("b".to_string()));
    assert!(block_on(f.pop()).is_none());
}

#[test]
fn rf_a_pop_waits_for_a_write() {
    let f = fifo();
    let got = Rc::new(std::cell::RefCell::new(None));
    let (g, q) = (got.clone(), f.clone());
    spawn_local(async move {
        *g.borrow_mut() = q.pop().await.map(|p| one(&p));
    });
    run_until_stalled();
    assert!(got.borrow().is_none());
    f.update(o("x", 3)).unwrap();
    run_until_stalled();
    assert_eq!(*got.borrow(), Some((Updated, "x".into(), "3".into())));
}

#[test]
fn rf_transformer_runs_once_per_incoming_object_never_on_tombstones() {
    let calls = Rc::new(Cell::new(0));
    let c = calls.clone();
    let ix = Indexer::default();
    let f = RealFifo::new(DeltaFifoOptions {
        known_objects: Some(Rc::new(ix) as Rc<dyn KnownObjects>),
        transformer: Some(Rc::new(move |o: KubeObject| {
            c.set(c.get() + 1);
            Ok(o)
        })),
        ..Default::default()
    });
    f.add(o("foo", 10)).unwrap();
    f.add(o("bar", 11)).unwrap();
    f.update(o("foo", 12)).unwrap();
    f.delete(DeltaObject::Object(o("foo", 15))).unwrap();
    f.replace(vec![], "");
    f.add(o("bar", 16)).unwrap();
    f.replace(vec![], "");
    assert_eq!(
        calls.get(),
        5,
        "four writes and one more add; tombstones untouched"
    );
    assert_eq!(
        drain(&f),
        d(&[
            (Added, "foo", "10"),
            (Added, "bar", "11"),
            (Updated, "foo", "12"),
            (Deleted, "foo", "15"),
            (Deleted, "bar", "dfsu:11"),
            (Added, "bar", "16"),
            (Deleted, "bar", "dfsu:16"),
        ])
    );
    // A transformer error queues nothing.
    let f = RealFifo::new(DeltaFifoOptions {
        transformer: Some(Rc::new(|_| Err("no".to_string()))),
        ..Default::default()
    });
    assert!(f.add(o("a", 1)).is_err());
    assert!(f.is_empty());
    let skipped = f.replace(vec![o("a", 1)], "1");
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].key, "a");
}

#[test]
fn rf_relisted_versions_the_store_holds_are_queued_as_the_stored_copy() {
    let (f, ix) = with_known(&[("ns/same", 5), ("ns/changed", 6)]);
    let stored = ix.get_by_key("ns/same").expect("stored");
    let prepared: Vec<KubeObject> = [o("ns/same", 5), o("ns/changed", 7)]
        .into_iter()
        .map(|x| f.prepare(x).expect("keyed").1)
        .collect();
    assert!(f.replace_prepared(prepared, "9").is_empty());
    let mut popped = Vec::new();
    while let Some(p) = f.try_pop() {
        f.done(&p);
        popped.push(p);
    }
    let obj_of = |key: &str| {
        popped
            .iter()
            .find(|p| p.key == key)
            .and_then(|p| p.deltas[0].object.object().cloned())
            .expect("queued")
    };
    assert!(obj_of("ns/same").ptr_eq(&stored));
    assert_eq!(obj_of("ns/changed").resource_version(), "7");
}

#[test]
fn rf_queued_deltas_count_every_change_for_back_pressure() {
    let f = fifo();
    for i in 0..50 {
        f.update(o("hot", i)).unwrap();
    }
    assert_eq!(f.queued_deltas(), 50, "one key, fifty queued changes");
    f.try_pop().unwrap();
    assert_eq!(f.queued_deltas(), 49);
}
