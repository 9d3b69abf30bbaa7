//! DeltaFIFO behaviour (DF), ported from client-go's delta_fifo_test as behaviour.

use std::cell::Cell;
use std::rc::Rc;

use super::obj;
use crate::cache::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Indexer, KnownObjects, Popped,
    Tombstone,
};
use crate::rest::KubeObject;
use crate::rt::{block_on, run_until_stalled, spawn_local};

fn o(key: &str, rv: u64) -> KubeObject {
    obj(key, rv, &[])
}

fn fifo() -> DeltaFifo {
    DeltaFifo::new(DeltaFifoOptions::default())
}

fn with_known(known: &[(&str, u64)]) -> (DeltaFifo, Indexer) {
    let ix = Indexer::default();
    for (k, rv) in known {
        ix.add(o(k, *rv)).unwrap();
    }
    let f = DeltaFifo::new(DeltaFifoOptions {
        known_objects: Some(Rc::new(ix.clone()) as Rc<dyn KnownObjects>),
        ..Default::default()
    });
    (f, ix)
}

/// `(type, rv or tombstone marker)` of each delta, for compact assertions.
fn summary(p: &Popped) -> Vec<(DeltaType, String)> {
    p.deltas
        .iter()
        .map(|d: &Delta| {
            let desc = match &d.object {
                DeltaObject::Object(o) => o.resource_version().to_owned(),
                DeltaObject::Tombstone(Tombstone { obj, .. }) => format!(
                    "dfsu:{}",
                    obj.as_ref().map_or("-", |o| o.resource_version())
                ),
            };
            (d.kind, desc)
        })
        .collect()
}

fn pop(f: &DeltaFifo) -> Popped {
    let p = f.try_pop().expect("an item is queued");
    f.done(&p);
    p
}

use DeltaType::*;

fn s(v: &[(DeltaType, &str)]) -> Vec<(DeltaType, String)> {
    v.iter().map(|(t, d)| (*t, d.to_string())).collect()
}

#[test]
fn df_01_keys_leave_in_first_entry_order() {
    let f = fifo();
    for (k, rv) in [
        ("foo", 10),
        ("bar", 1),
        ("foo", 11),
        ("foo", 13),
        ("zab", 30),
    ] {
        f.add(o(k, rv)).unwrap();
    }
    let first = pop(&f);
    assert_eq!(first.key, "foo");
    assert_eq!(
        first
            .deltas
            .last()
            .unwrap()
            .object
            .object()
            .unwrap()
            .resource_version(),
        "13"
    );
    f.add(o("foo", 14)).unwrap();
    let order: Vec<(String, String)> = (0..3)
        .map(|_| pop(&f))
        .map(|p| (p.key.clone(), summary(&p).last().unwrap().1.clone()))
        .collect();
    assert_eq!(
        order,
        vec![
            ("bar".into(), "1".into()),
            ("zab".into(), "30".into()),
            ("foo".into(), "14".into())
        ]
    );
}

#[test]
fn df_02_one_pop_hands_all_deltas_and_second_pop_waits() {
    let f = fifo();
    f.add(o("foo", 10)).unwrap();
    f.update(o("foo", 12)).unwrap();
    f.delete(DeltaObject::Object(o("foo", 15))).unwrap();
    assert_eq!(
        summary(&pop(&f)),
        s(&[(Added, "10"), (Updated, "12"), (Deleted, "15")])
    );
    let got = Rc::new(Cell::new(false));
    let (g, f2) = (got.clone(), f.clone());
    spawn_local(async move {
        let p = f2.pop().await;
        g.set(p.is_some());
    });
    run_until_stalled();
    assert!(!got.get(), "pop waits on an empty queue");
    f.add(o("bar", 1)).unwrap();
    run_until_stalled();
    assert!(got.get());
}

#[test]
fn df_03_deletes_of_unknown_objects_are_dropped() {
    let f = fifo();
    f.add(o("foo", 10)).unwrap();
    f.update(o("bar", 15)).unwrap();
    f.add(o("qux", 17)).unwrap();
    f.delete(DeltaObject::Object(o("qux", 18))).unwrap();
    f.delete(DeltaObject::Object(o("baz", 20))).unwrap();
    let got: Vec<String> = (0..3)
        .map(|_| summary(&pop(&f)).last().unwrap().1.clone())
        .collect();
    assert_eq!(got, vec!["10", "15", "18"]);
    assert!(f.try_pop().is_none(), "baz never appears");

    let (f, _ix) = with_known(&[("foo", 1), ("bar", 1), ("baz", 1)]);
    f.add(o("foo", 10)).unwrap();
    f.update(o("bar", 15)).unwrap();
    f.delete(DeltaObject::Object(o("baz", 20))).unwrap();
    let got: Vec<String> = (0..3)
        .map(|_| summary(&pop(&f)).last().unwrap().1.clone())
        .collect();
    assert_eq!(got, vec!["10", "15", "20"]);
}

#[test]
fn df_04_only_two_trailing_deletes_are_merged() {
    let (f, _ix) = with_known(&[("foo", 1)]);
    f.delete(DeltaObject::Object(o("foo", 2))).unwrap();
    f.delete(DeltaObject::Tombstone(Tombstone {
        key: "foo".into(),
        obj: Some(o("foo", 3)),
    }))
    .unwrap();
    assert_eq!(
        summary(&pop(&f)),
        s(&[(Deleted, "2")]),
        "a tombstone after a real delete is dropped"
    );

    let (f, _ix) = with_known(&[("foo", 1)]);
    f.delete(DeltaObject::Tombstone(Tombstone {
        key: "foo".into(),
        obj: Some(o("foo", 2)),
    }))
    .unwrap();
    f.delete(DeltaObject::Object(o("foo", 3))).unwrap();
    assert_eq!(
        summary(&pop(&f)),
        s(&[(Deleted, "3")]),
        "a real delete replaces an older tombstone"
    );

    let (f, _ix) = with_known(&[("foo", 1)]);
    f.resync();
    f.resync();
    f.update(o("foo", 2)).unwrap();
    f.update(o("foo", 2)).unwrap();
    assert_eq!(
        summary(&pop(&f)),
        s(&[(Sync, "1"), (Updated, "2"), (Updated, "2")]),
        "nothing else is deduplicated"
    );
}

#[test]
fn df_05_replace_appends_sync_even_after_delete() {
    let (f, _ix) = with_known(&[("foo", 1)]);
    f.delete(DeltaObject::Object(o("foo", 1))).unwrap();
    f.replace(vec![o("foo", 2)], "0");
    assert_eq!(summary(&pop(&f)), s(&[(Deleted, "1"), (Sync, "2")]));

    let f = DeltaFifo::new(DeltaFifoOptions {
        emit_delta_type_replaced: true,
        ..Default::default()
    });
    f.replace(vec![o("foo", 2)], "0");
    assert_eq!(summary(&pop(&f)), s(&[(Replaced, "2")]));
}

#[test]
fn df_06_replace_tombstones_keys_only_in_the_queue() {
    let f = fifo();
    f.add(o("foo", 1)).unwrap();
    f.replace(vec![], "0");
    assert_eq!(summary(&pop(&f)), s(&[(Added, "1"), (Deleted, "dfsu:1")]));

    let f = fifo();
    f.add(o("foo", 1)).unwrap();
    f.delete(DeltaObject::Object(o("foo", 1))).unwrap();
    f.add(o("foo", 2)).unwrap();
    f.replace(vec![], "0");
    assert_eq!(
        summary(&pop(&f)),
        s(&[
            (Added, "1"),
            (Deleted, "1"),
            (Added, "2"),
            (Deleted, "dfsu:2")
        ])
    );

    let f = fifo();
    f.add(o("foo", 1)).unwrap();
    f.replace(vec![o("foo", 1)], "0");
    f.replace(vec![o("foo", 1)], "0");
    f.replace(vec![], "0");
    assert_eq!(
        summary(&pop(&f)),
        s(&[(Added, "1"), (Sync, "1"), (Sync, "1"), (Deleted, "dfsu:1")])
    );
}

#[test]
fn df_07_08_replace_tombstones_known_objects_after_list_items() {
    let (f, _ix) = with_known(&[("foo", 5), ("bar", 6), ("baz", 7)]);
    f.delete(DeltaObject::Object(o("baz", 10))).unwrap();
    f.replace(vec![o("foo", 5)], "0");
    let got: Vec<(String, Vec<(DeltaType, String)>)> = (0..3)
        .map(|_| pop(&f))
        .map(|p| (p.key.clone(), summary(&p)))
        .collect();
    assert_eq!(got[0], ("baz".into(), s(&[(Deleted, "10")])));
    assert_eq!(got[1], ("foo".into(), s(&[(Sync, "5")])));
    assert_eq!(got[2], ("bar".into(), s(&[(Deleted, "dfsu:6")])));

    let (f, _ix) = with_known(&[("foo", 5), ("bar", 6), ("baz", 7)]);
    f.delete(DeltaObject::Object(o("bar", 6))).unwrap();
    f.add(o("bar", 100)).unwrap();
    f.replace(vec![o("foo", 5)], "0");
    let got: Vec<(String, Vec<(DeltaType, String)>)> = (0..3)
        .map(|_| pop(&f))
        .map(|p| (p.key.clone(), summary(&p)))
        .collect();
    assert_eq!(
        got[0],
        (
            "bar".into(),
            s(&[(Deleted, "6"), (Added, "100"), (Deleted, "dfsu:100")])
        ),
        "queued object wins over the known copy"
    );
    assert_eq!(got[1], ("foo".into(), s(&[(Sync, "5")])));
    assert_eq!(got[2], ("baz".into(), s(&[(Deleted, "dfsu:7")])));
}

#[test]
fn df_09_resync_skips_queued_keys() {
    let (f, ix) = with_known(&[("foo", 5)]);
    f.resync();
    assert_eq!(summary(&pop(&f)), s(&[(Sync, "5")]));
    f.update(o("foo", 6)).unwrap();
    f.resync();
    assert_eq!(summary(&pop(&f)), s(&[(Updated, "6")]));
    f.delete(DeltaObject::Object(o("foo", 10))).unwrap();
    f.resync();
    assert_eq!(summary(&pop(&f)), s(&[(Deleted, "10")]));
    assert!(fifo().try_pop().is_none());
    fifo().resync();
    drop(ix);
}

#[test]
fn df_10_11_has_synced_after_the_initial_list_is_processed() {
    assert!(!fifo().has_synced());
    let f = fifo();
    f.add(o("a", 1)).unwrap();
    assert!(f.has_synced());
    let f = fifo();
    f.replace(vec![], "0");
    assert!(f.has_synced());
    let f = fifo();
    f.replace(vec![o("a", 1), o("b", 1)], "0");
    assert!(!f.has_synced());
    let p = f.try_pop().unwrap();
    assert!(p.is_in_initial_list);
    assert!(
        !f.has_synced(),
        "not synced before the item is processed (RealFIFO order, DF-15)"
    );
    f.done(&p);
    assert!(!f.has_synced());
    pop(&f);
    assert!(f.has_synced());
    let f = fifo();
    f.replace(vec![o("a", 1), o("a", 2)], "0");
    pop(&f);
    assert!(f.has_synced(), "same key twice counts once");

    let (f, _ix) = with_known(&[("foo", 1), ("bar", 1), ("baz", 1)]);
    f.replace(vec![o("foo", 5)], "0");
    for _ in 0..3 {
        assert!(!f.has_synced());
        let p = f.try_pop().unwrap();
        assert!(
            p.is_in_initial_list,
            "tombstones of the first replace are initial too"
        );
        f.done(&p);
    }
    assert!(f.has_synced());
}

#[test]
fn df_12_close_wakes_waiters_and_drains() {
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
    let f = fifo();
    f.add(o("a", 1)).unwrap();
    f.close();
    f.add(o("b", 1)).unwrap();
    assert_eq!(block_on(f.pop()).map(|p| p.key), Some("a".to_string()));
    assert_eq!(block_on(f.pop()).map(|p| p.key), Some("b".to_string()));
    assert!(block_on(f.pop()).is_none());
    let r: Option<Result<(), &str>> = block_on(f.pop_and_process(|_| Ok(())));
    assert!(r.is_none());
}

#[test]
fn df_14_transformer_runs_once_per_incoming_object() {
    let calls = Rc::new(Cell::new(0));
    let c = calls.clone();
    let f = DeltaFifo::new(DeltaFifoOptions {
        transformer: Some(Rc::new(move |o: KubeObject| {
            c.set(c.get() + 1);
            Ok(o)
        })),
        ..Default::default()
    });
    for (k, rv) in [("foo", 10), ("bar", 11)] {
        f.add(o(k, rv)).unwrap();
    }
    f.update(o("foo", 12)).unwrap();
    f.delete(DeltaObject::Object(o("foo", 15))).unwrap();
    f.replace(vec![], "0");
    f.add(o("bar", 16)).unwrap();
    f.replace(vec![], "0");
    assert_eq!(
        calls.get(),
        5,
        "add, add, update, delete, add — never tombstones"
    );
    let foo = pop(&f);
    assert_eq!(summary(&foo).last().unwrap(), &(Deleted, "15".to_string()));
    let bar = pop(&f);
    assert_eq!(
        summary(&bar).last().unwrap(),
        &(Deleted, "dfsu:16".to_string())
    );
    let failing = DeltaFifo::new(DeltaFifoOptions {
        transformer: Some(Rc::new(|_| Err("nope".into()))),
        ..Default::default()
    });
    assert!(failing.add(o("x", 1)).is_err());
    assert!(failing.is_empty(), "nothing queued on a transform error");
}

#[test]
fn df_relists_compare_against_their_own_list_only() {
    // Epoch stamps: a key listed by an earlier relist and still queued is
    // stale for the next relist that omits it, while a key in both is not.
    let (f, _ix) = with_known(&[("k1", 1), ("k2", 1)]);
    f.replace(vec![o("k1", 2), o("k2", 2), o("k3", 2)], "2");
    f.replace(vec![o("k2", 3), o("k3", 3), o("k3", 4)], "3");
    let mut got: Vec<(String, Vec<(DeltaType, String)>)> = Vec::new();
    while let Some(p) = f.try_pop() {
        f.done(&p);
        got.push((p.key.clone(), summary(&p)));
    }
    assert_eq!(
        got,
        vec![
            ("k1".to_owned(), s(&[(Sync, "2"), (Deleted, "dfsu:2")])),
            ("k2".to_owned(), s(&[(Sync, "2"), (Sync, "3")])),
            ("k3".to_owned(), s(&[(Sync, "2"), (Sync, "3"), (Sync, "4")])),
        ]
    );
    assert!(
        f.has_synced(),
        "the first relist's three keys were counted once each"
    );

    // A relist after the queue drained: known keys absent from the list are
    // tombstoned with their stored object, listed ones are not.
    let (f, _ix) = with_known(&[("a", 1), ("b", 1), ("c", 1)]);
    f.replace(vec![o("b", 2)], "2");
    let mut got: Vec<(String, Vec<(DeltaType, String)>)> = Vec::new();
    while let Some(p) = f.try_pop() {
        f.done(&p);
        got.push((p.key.clone(), summary(&p)));
    }
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        vec![
            ("a".to_owned(), s(&[(Deleted, "dfsu:1")])),
            ("b".to_owned(), s(&[(Sync, "2")])),
            ("c".to_owned(), s(&[(Deleted, "dfsu:1")])),
        ]
    );
    assert!(f.has_synced());
}

#[test]
fn a_relisted_version_the_store_holds_is_queued_as_the_stored_copy() {
    let (f, ix) = with_known(&[("ns/same", 5), ("ns/changed", 6)]);
    let stored = ix.get_by_key("ns/same").expect("stored");
    let skipped = f.replace(
        vec![o("ns/same", 5), o("ns/changed", 7), o("ns/new", 1)],
        "9",
    );
    assert!(skipped.is_empty());
    let mut queued = std::collections::HashMap::new();
    while let Some(p) = f.try_pop() {
        f.done(&p);
        if let Some(DeltaObject::Object(obj)) = p.deltas.last().map(|d| &d.object) {
            queued.insert(p.key.clone(), obj.clone());
        }
    }
    assert!(
        queued["ns/same"].ptr_eq(&stored),
        "one copy of an unchanged object"
    );
    let changed = ix.get_by_key("ns/changed").expect("stored");
    assert!(!queued["ns/changed"].ptr_eq(&changed));
    assert_eq!(queued["ns/changed"].resource_version(), "7");
    assert_eq!(queued["ns/new"].resource_version(), "1");
}

#[test]
fn prepared_objects_are_not_transformed_twice() {
    let calls = Rc::new(Cell::new(0));
    let c = calls.clone();
    let f = DeltaFifo::new(DeltaFifoOptions {
        transformer: Some(Rc::new(move |o: KubeObject| {
            c.set(c.get() + 1);
            Ok(o)
        })),
        ..Default::default()
    });
    let prepared: Vec<KubeObject> = [o("ns/a", 1), o("ns/b", 2)]
        .into_iter()
        .map(|x| f.prepare(x).expect("keyed").1)
        .collect();
    assert!(f.replace_prepared(prepared, "3").is_empty());
    assert_eq!(calls.get(), 2);
    assert_eq!(f.len(), 2);
}
