//! Store / Indexer behaviour (ST), ported from client-go's store, index and
//! thread_safe_store tests as behaviour, plus a property test against a naive model.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

use proptest::prelude::*;

use super::obj;
use crate::cache::{
    FifoError, IndexFunc, Indexer, Indexers, InformerError, KeyError, StoreError, NAMESPACE_INDEX,
};
use crate::rest::KubeObject;
use serde_json::json;

/// Index on the comma-separated `users` label (client-go's `testUsersIndexFunc`).
fn users_index() -> IndexFunc {
    Rc::new(|o: &KubeObject| {
        Ok(o.meta()
            .labels()
            .get("users")
            .map(|u| u.split('.').map(str::to_owned).collect())
            .unwrap_or_default())
    })
}

fn store_with_users() -> Indexer {
    let mut ix = Indexers::new();
    ix.insert("byUser".into(), users_index());
    Indexer::new(ix)
}

fn keys(v: Vec<KubeObject>) -> BTreeSet<String> {
    v.iter()
        .map(|o| crate::cache::object_key(o).unwrap())
        .collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn st_01_02_add_update_get_delete_list() {
    let s = Indexer::with_namespace_index();
    s.add(obj("foo", 1, &[("v", "bar")])).unwrap();
    s.update(obj("foo", 2, &[("v", "baz")])).unwrap();
    assert_eq!(
        s.get_by_key("foo").unwrap().meta().labels().get("v"),
        Some("baz")
    );
    s.update(obj("new", 3, &[])).unwrap();
    assert!(s.contains_key("new"), "update of an absent key inserts it");
    s.delete(&obj("foo", 0, &[])).unwrap();
    assert!(s.get_by_key("foo").is_none());
    s.delete(&obj("never", 0, &[])).unwrap();
    assert_eq!(set(&["new"]), s.list_keys().into_iter().collect());
}

#[test]
fn st_03_replace_swaps_content_and_rebuilds_indexes() {
    let s = Indexer::with_namespace_index();
    for k in ["a/x", "a/y", "b/z"] {
        s.add(obj(k, 1, &[])).unwrap();
    }
    s.replace(vec![obj("c/foo", 5, &[]), obj("c/bar", 5, &[])], "50")
        .unwrap();
    assert_eq!(keys(s.list()), set(&["c/foo", "c/bar"]));
    assert!(s.by_index(NAMESPACE_INDEX, "a").unwrap().is_empty());
    assert_eq!(
        s.index_keys(NAMESPACE_INDEX, "c").unwrap(),
        vec!["c/bar", "c/foo"]
    );
    assert_eq!(s.last_sync_resource_version(), "50");
    // A list with an unkeyable object fails and leaves the store untouched.
    let nameless = KubeObject::from_value(&serde_json::json!({"metadata": {}})).unwrap();
    assert!(matches!(
        s.replace(vec![obj("d/1", 1, &[]), nameless], "60"),
        Err(StoreError::Key(_))
    ));
    assert_eq!(keys(s.list()), set(&["c/foo", "c/bar"]));
}

#[test]
fn st_06_index_follows_add_update_delete() {
    let s = store_with_users();
    s.add(obj("one", 1, &[("users", "ernie.bert")])).unwrap();
    s.add(obj("two", 1, &[("users", "bert.oscar")])).unwrap();
    s.add(obj("tre", 1, &[("users", "ernie.elmo")])).unwrap();
    assert_eq!(
        keys(s.by_index("byUser", "ernie").unwrap()),
        set(&["one", "tre"])
    );
    assert!(s.by_index("byUser", "elmo1").unwrap().is_empty());
    s.delete(&obj("tre", 1, &[])).unwrap();
    assert_eq!(keys(s.by_index("byUser", "ernie").unwrap()), set(&["one"]));
    assert!(s.by_index("byUser", "elmo").unwrap().is_empty());
    s.update(obj("two", 2, &[("users", "oscar")])).unwrap();
    assert_eq!(keys(s.by_index("byUser", "bert").unwrap()), set(&["one"]));
}

#[test]
fn st_07_multi_valued_index_updates_are_exact() {
    let s = store_with_users();
    s.add(obj("key1", 1, &[("users", "foo")])).unwrap();
    s.add(obj("key2", 1, &[("users", "bar")])).unwrap();
    s.update(obj("key2", 2, &[("users", "foo.bar")])).unwrap();
    assert_eq!(s.index_keys("byUser", "foo").unwrap(), vec!["key1", "key2"]);
    assert_eq!(s.index_keys("byUser", "bar").unwrap(), vec!["key2"]);
    s.update(obj("key1", 2, &[("users", "foo.bar")])).unwrap();
    assert_eq!(s.index_keys("byUser", "bar").unwrap(), vec!["key1", "key2"]);
    s.add(obj("key3", 1, &[("users", "foo.bar.baz")])).unwrap();
    assert_eq!(s.index_keys("byUser", "baz").unwrap(), vec!["key3"]);
    s.update(obj("key1", 3, &[("users", "foo")])).unwrap();
    assert_eq!(s.index_keys("byUser", "bar").unwrap(), vec!["key2", "key3"]);
    s.update(obj("key2", 3, &[("users", "bar")])).unwrap();
    assert_eq!(s.index_keys("byUser", "foo").unwrap(), vec!["key1", "key3"]);
    s.delete(&obj("key1", 0, &[])).unwrap();
    assert_eq!(s.index_keys("byUser", "foo").unwrap(), vec!["key3"]);
    s.delete(&obj("key3", 0, &[])).unwrap();
    assert!(s.index_keys("byUser", "foo").unwrap().is_empty());
    assert_eq!(s.index_keys("byUser", "bar").unwrap(), vec!["key2"]);
    assert!(s.index_keys("byUser", "baz").unwrap().is_empty());
}

#[test]
fn st_08_09_empty_buckets_are_dropped() {
    let s = store_with_users();
    s.add(obj("k", 1, &[("users", "k")])).unwrap();
    s.delete(&obj("k", 1, &[])).unwrap();
    assert!(s.list_index_func_values("byUser").is_empty());
    s.add(obj("retain", 1, &[("users", "v")])).unwrap();
    s.add(obj("delete", 1, &[("users", "v")])).unwrap();
    s.delete(&obj("delete", 1, &[])).unwrap();
    assert_eq!(s.list_index_func_values("byUser"), vec!["v"]);
    assert!(
        s.list_index_func_values("nope").is_empty(),
        "unknown index → empty, not an error"
    );
}

#[test]
fn st_10_11_unknown_index_errors_and_index_by_object() {
    let s = store_with_users();
    assert_eq!(
        s.index_keys("nope", "x"),
        Err(StoreError::UnknownIndex("nope".into()))
    );
    assert!(s.by_index("nope", "x").is_err());
    for (k, u) in [("a", "b"), ("c", "b"), ("e", "f"), ("g", "h")] {
        s.add(obj(k, 1, &[("users", u)])).unwrap();
    }
    assert_eq!(
        keys(
            s.index("byUser", &obj("probe", 1, &[("users", "b")]))
                .unwrap()
        ),
        set(&["a", "c"])
    );
    assert_eq!(
        keys(
            s.index("byUser", &obj("probe", 1, &[("users", "b.f.b")]))
                .unwrap()
        ),
        set(&["a", "c", "e"])
    );
}

#[test]
fn st_12_add_indexers_indexes_existing_and_rejects_duplicates() {
    let s = Indexer::with_namespace_index();
    s.add(obj("ns/pod1", 1, &[("users", "a")])).unwrap();
    s.add(obj("ns/pod2", 1, &[("users", "b")])).unwrap();
    s.add(obj("ns/pod3", 1, &[("users", "a")])).unwrap();
    let mut ix = Indexers::new();
    ix.insert("labels-again".into(), users_index());
    s.add_indexers(ix.clone()).unwrap();
    assert_eq!(
        s.index_keys("labels-again", "a").unwrap(),
        vec!["ns/pod1", "ns/pod3"]
    );
    assert_eq!(
        s.add_indexers(ix),
        Err(StoreError::IndexerConflict("labels-again".into()))
    );
    // A failing index function leaves everything unchanged.
    let mut bad = Indexers::new();
    bad.insert(
        "bad".into(),
        Rc::new(|_: &KubeObject| Err("boom".to_string())) as IndexFunc,
    );
    assert!(matches!(
        s.add_indexers(bad.clone()),
        Err(StoreError::IndexFunc { .. })
    ));
    assert!(!s.has_index("bad"));
}

#[test]
fn insert_returns_what_the_key_held_and_indexes_follow() {
    let s = store_with_users();
    assert_eq!(
        s.insert("ns/a", obj("ns/a", 1, &[("users", "ann")])),
        Ok(None)
    );
    let old = s
        .insert("ns/a", obj("ns/a", 2, &[("users", "bob")]))
        .unwrap();
    assert_eq!(
        old.map(|o| o.resource_version().to_owned()).as_deref(),
        Some("1")
    );
    assert_eq!(s.get_by_key("ns/a").unwrap().resource_version(), "2");
    assert!(s.by_index("byUser", "ann").unwrap().is_empty());
    assert_eq!(keys(s.by_index("byUser", "bob").unwrap()), set(&["ns/a"]));
    // A refused write changes nothing and returns no object.
    let mut ix = Indexers::new();
    ix.insert(
        "strict".into(),
        Rc::new(|_: &KubeObject| Err("no".into())) as IndexFunc,
    );
    let strict = Indexer::new(ix);
    assert!(strict.insert("ns/a", obj("ns/a", 1, &[])).is_err());
    assert!(!strict.contains_key("ns/a"));
}

#[test]
fn st_12_failing_index_function_rejects_the_write_untouched() {
    let mut ix = Indexers::new();
    ix.insert(
        "strict".into(),
        Rc::new(|o: &KubeObject| {
            if o.name() == "poison" {
                Err("no".into())
            } else {
                Ok(vec![o.name().to_owned()])
            }
        }) as IndexFunc,
    );
    let s = Indexer::new(ix);
    s.add(obj("ok", 1, &[])).unwrap();
    assert!(s.add(obj("poison", 1, &[])).is_err());
    assert!(!s.contains_key("poison"));
    assert_eq!(s.list_index_func_values("strict"), vec!["ok"]);
}

#[test]
fn st_13_14_namespace_index_and_last_sync_rv() {
    let s = Indexer::with_namespace_index();
    s.add(obj("node1", 10, &[])).unwrap();
    s.add(obj("ns/a", 20, &[])).unwrap();
    assert_eq!(s.index_keys(NAMESPACE_INDEX, "").unwrap(), vec!["node1"]);
    assert_eq!(s.last_sync_resource_version(), "20");
    s.add(obj("ns/b", 15, &[])).unwrap();
    assert_eq!(
        s.last_sync_resource_version(),
        "15",
        "last write, not maximum"
    );
    s.delete(&obj("ns/b", 30, &[])).unwrap();
    assert_eq!(s.last_sync_resource_version(), "30");
    s.delete_key("ns/a");
    assert_eq!(
        s.last_sync_resource_version(),
        "30",
        "key-only delete leaves it"
    );
}

// ---- property test: the store agrees with a naive model after every step ----

#[derive(Clone, Debug)]
enum Op {
    Upsert(u8, u8, u8),
    Delete(u8),
    Replace(Vec<(u8, u8, u8)>),
    AddIndexer,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..12, 0u8..3, 0u8..4).prop_map(|(k, ns, app)| Op::Upsert(k, ns, app)),
        3 => (0u8..12).prop_map(Op::Delete),
        1 => proptest::collection::vec((0u8..12, 0u8..3, 0u8..4), 0..8).prop_map(Op::Replace),
        1 => Just(Op::AddIndexer),
    ]
}

fn mk(k: u8, ns: u8, app: u8) -> KubeObject {
    obj(&format!("ns{ns}/k{k}"), 1, &[("app", &format!("a{app}"))])
}

proptest! {
    #[test]
    fn st_property_store_matches_naive_model(ops in proptest::collection::vec(op(), 1..60)) {
        let store = Indexer::with_namespace_index();
        let mut model: BTreeMap<String, KubeObject> = BTreeMap::new();
        let mut has_app_index = false;
        for op in ops {
            match op {
                Op::Upsert(k, ns, app) => {
                    let o = mk(k, ns, app);
                    // Keys are per namespace; drop the same name in other namespaces from the model only if same key.
                    model.insert(crate::cache::object_key(&o).unwrap(), o.clone());
                    store.add(o).unwrap();
                }
                Op::Delete(k) => {
                    let victims: Vec<String> = model.keys().filter(|key| key.ends_with(&format!("/k{k}"))).cloned().collect();
                    for key in victims {
                        model.remove(&key);
                        store.delete_key(&key);
                    }
                }
                Op::Replace(items) => {
                    let objs: Vec<KubeObject> = items.iter().map(|&(k, ns, app)| mk(k, ns, app)).collect();
                    model = objs.iter().map(|o| (crate::cache::object_key(o).unwrap(), o.clone())).collect();
                    store.replace(objs, "1").unwrap();
                }
                Op::AddIndexer => {
                    if !has_app_index {
                        store.add_label_index("app").unwrap();
                        has_app_index = true;
                    }
                }
            }
            // Naive indexes recomputed from scratch.
            let mut ns_ix: HashMap<String, BTreeSet<String>> = HashMap::new();
            let mut app_ix: HashMap<String, BTreeSet<String>> = HashMap::new();
            for (k, o) in &model {
                ns_ix.entry(o.namespace().unwrap_or("").to_owned()).or_default().insert(k.clone());
                if let Some(a) = o.meta().labels().get("app") {
                    app_ix.entry(a.to_owned()).or_default().insert(k.clone());
                }
            }
            let store_keys: BTreeSet<String> = store.list_keys().into_iter().collect();
            prop_assert_eq!(&store_keys, &model.keys().cloned().collect::<BTreeSet<_>>());
            let mut values: Vec<String> = store.list_index_func_values(NAMESPACE_INDEX);
            values.sort();
            let mut want: Vec<String> = ns_ix.keys().cloned().collect();
            want.sort();
            prop_assert_eq!(values, want);
            for (v, ks) in &ns_ix {
                prop_assert_eq!(store.index_keys(NAMESPACE_INDEX, v).unwrap(), ks.iter().cloned().collect::<Vec<_>>());
            }
            if has_app_index {
                let name = crate::cache::label_index_name("app");
                prop_assert_eq!(store.list_index_func_values(&name).len(), app_ix.len());
                for (v, ks) in &app_ix {
                    prop_assert_eq!(store.index_keys(&name, v).unwrap(), ks.iter().cloned().collect::<Vec<_>>());
                }
            }
        }
    }
}

#[test]
fn st_04_unkeyable_objects_are_typed_errors() {
    let s = Indexer::with_namespace_index();
    let nameless = KubeObject::from_value(&json!({"metadata": {"namespace": "x"}})).unwrap();
    let e = s.add(nameless.clone()).unwrap_err();
    assert!(
        matches!(&e, StoreError::Key(k) if k.message.contains("metadata.name")),
        "{e}"
    );
    assert!(s.delete(&nameless).is_err());
    assert!(s.get(&nameless).is_err());
    assert!(s.is_empty());
}

#[test]
fn st_05_store_transformer_runs_on_add_update_replace_not_delete() {
    let calls = Rc::new(std::cell::Cell::new(0));
    let c = calls.clone();
    let s = Indexer::with_namespace_index().with_transformer(Rc::new(move |o: KubeObject| {
        c.set(c.get() + 1);
        if o.name() == "bad" {
            return Err("refused".into());
        }
        Ok(o)
    }));
    s.add(obj("ns/a", 1, &[])).unwrap();
    s.update(obj("ns/a", 2, &[])).unwrap();
    s.replace(vec![obj("ns/a", 3, &[]), obj("ns/b", 3, &[])], "3")
        .unwrap();
    s.delete(&obj("ns/b", 3, &[])).unwrap();
    assert_eq!(
        calls.get(),
        4,
        "add, update, two replace items; delete is not transformed"
    );
    assert_eq!(
        s.add(obj("bad", 1, &[])),
        Err(StoreError::Transform("refused".into()))
    );
    assert!(!s.contains_key("bad"));
    assert!(s.replace(vec![obj("bad", 1, &[])], "4").is_err());
    assert_eq!(
        s.list_keys(),
        vec!["ns/a"],
        "a failed replace leaves the store untouched"
    );
}

// ---- slot table, bucket lifetime, re-entrancy ----

#[test]
fn st_slots_are_reused_after_delete_and_indexes_follow() {
    let s = Indexer::with_namespace_index();
    s.add_label_index("app").unwrap();
    s.add(obj("a/one", 1, &[("app", "web")])).unwrap();
    s.add(obj("a/two", 1, &[("app", "db")])).unwrap();
    s.delete_key("a/one");
    // The freed slot is taken by a new key; nothing of the old object's
    // index records may leak into it.
    s.add(obj("b/three", 1, &[("app", "db")])).unwrap();
    assert_eq!(s.len(), 2);
    assert!(s.get_by_key("a/one").is_none());
    assert_eq!(s.get_by_key("b/three").unwrap().name(), "three");
    let app = crate::cache::label_index_name("app");
    let app_ns = crate::cache::label_ns_index_name("app");
    assert!(s.index_keys(&app, "web").unwrap().is_empty());
    assert_eq!(s.index_keys(&app, "db").unwrap(), vec!["a/two", "b/three"]);
    assert_eq!(s.index_keys(&app_ns, "b/db").unwrap(), vec!["b/three"]);
    assert_eq!(s.index_keys(NAMESPACE_INDEX, "a").unwrap(), vec!["a/two"]);
    assert_eq!(s.index_keys(NAMESPACE_INDEX, "b").unwrap(), vec!["b/three"]);
    // Many deletes and re-adds keep the table at its peak size and exact.
    for round in 0..3 {
        for i in 0..20 {
            s.add(obj(&format!("c/p{i}"), round, &[("app", "web")]))
                .unwrap();
        }
        for i in 0..20 {
            s.delete_key(&format!("c/p{i}"));
        }
    }
    assert_eq!(s.len(), 2);
    assert!(s.index_keys(&app, "web").unwrap().is_empty());
    assert_eq!(
        keys(s.list()),
        set(&["a/two", "b/three"]),
        "list walks live slots only"
    );
}

#[test]
fn st_label_buckets_are_dropped_when_empty_on_update_and_delete() {
    let s = Indexer::with_namespace_index();
    s.add_label_index("app").unwrap();
    let app = crate::cache::label_index_name("app");
    let app_ns = crate::cache::label_ns_index_name("app");
    s.add(obj("a/x", 1, &[("app", "web")])).unwrap();
    s.add(obj("a/y", 1, &[("app", "web")])).unwrap();
    // A value long enough not to be kept inline in the per-slot record.
    let long = "a-label-value-longer-than-twenty-two-bytes";
    s.update(obj("a/x", 2, &[("app", long)])).unwrap();
    assert_eq!(s.index_keys(&app, long).unwrap(), vec!["a/x"]);
    assert_eq!(
        s.index_keys(&app_ns, &format!("a/{long}")).unwrap(),
        vec!["a/x"]
    );
    s.update(obj("a/y", 2, &[])).unwrap();
    let mut values = s.list_index_func_values(&app);
    values.sort();
    assert_eq!(
        values,
        vec![long.to_owned()],
        "the emptied web bucket is gone"
    );
    assert_eq!(s.index_len(&app, "web"), 0);
    s.update(obj("a/x", 3, &[("app", "web")])).unwrap();
    assert_eq!(s.list_index_func_values(&app), vec!["web"]);
    assert_eq!(s.list_index_func_values(&app_ns), vec!["a/web"]);
    s.delete_key("a/x");
    s.delete_key("a/y");
    assert!(s.list_index_func_values(&app).is_empty());
    assert!(s.list_index_func_values(&app_ns).is_empty());
    assert!(s.list_index_func_values(NAMESPACE_INDEX).is_empty());
}

#[test]
fn st_writes_from_inside_visitors_are_reentrant_errors_not_panics() {
    let s = Indexer::with_namespace_index();
    s.add(obj("a/x", 1, &[])).unwrap();
    let mut seen = Vec::new();
    s.for_each(|_, _| {
        seen.push(s.add(obj("a/y", 1, &[])));
        seen.push(s.upsert("a/z".into(), obj("a/z", 1, &[])));
        seen.push(s.delete(&obj("a/x", 1, &[])));
        seen.push(s.replace(Vec::new(), "9"));
        assert!(s.delete_key("a/x").is_none(), "refused, not applied");
        s.bookmark("ignored");
        // Reads are fine.
        assert!(s.get_by_key("a/x").is_some());
    });
    assert_eq!(seen.len(), 4);
    assert!(
        seen.iter().all(|r| *r == Err(StoreError::Reentrant)),
        "{seen:?}"
    );
    let mut add_ix = Indexers::new();
    add_ix.insert("late".into(), users_index());
    let mut in_index = None;
    s.for_each_in_index(NAMESPACE_INDEX, "a", |_, _| {
        in_index = Some(s.add_indexers(add_ix.clone()));
    })
    .unwrap();
    assert_eq!(in_index, Some(Err(StoreError::Reentrant)));
    assert_eq!(s.list_keys(), vec!["a/x"]);
    assert!(!s.has_index("late"));
    assert_ne!(s.last_sync_resource_version(), "ignored");
    // After the visitor returns, writes work again.
    s.add(obj("a/y", 2, &[])).unwrap();
    assert_eq!(s.len(), 2);
}

#[test]
fn st_index_functions_run_unborrowed_and_see_the_store_before_the_write() {
    let s = Indexer::with_namespace_index();
    let handle = s.clone();
    let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
    let log = seen.clone();
    let mut ix = Indexers::new();
    ix.insert(
        "reads-store".into(),
        Rc::new(move |o: &KubeObject| {
            // Reading the store from an index function must not panic.
            log.borrow_mut().push((o.name().to_owned(), handle.len()));
            Ok(vec![handle.len().to_string()])
        }) as IndexFunc,
    );
    s.add_indexers(ix).unwrap();
    s.add(obj("a/x", 1, &[])).unwrap();
    s.add(obj("a/y", 1, &[])).unwrap();
    assert_eq!(
        *seen.borrow(),
        vec![("x".to_owned(), 0), ("y".to_owned(), 1)]
    );
    assert_eq!(s.index_keys("reads-store", "1").unwrap(), vec!["a/y"]);
}

#[test]
fn st_an_index_function_that_adds_indexes_fails_the_write_untouched() {
    let s = Indexer::with_namespace_index();
    let handle = s.clone();
    let mut ix = Indexers::new();
    ix.insert(
        "grows".into(),
        Rc::new(move |o: &KubeObject| {
            if o.name() == "trigger" {
                // Changes the index layout between computing and storing.
                let _ = handle.add_label_index("app");
            }
            Ok(vec![o.name().to_owned()])
        }) as IndexFunc,
    );
    s.add_indexers(ix).unwrap();
    s.add(obj("a/x", 1, &[])).unwrap();
    assert_eq!(s.add(obj("a/trigger", 1, &[])), Err(StoreError::Reentrant));
    assert!(!s.contains_key("a/trigger"));
    assert!(s.has_index(&crate::cache::label_index_name("app")));
    // The store is consistent and usable afterwards.
    s.add(obj("a/z", 1, &[("app", "web")])).unwrap();
    assert_eq!(s.index_keys("grows", "z").unwrap(), vec!["a/z"]);
    assert_eq!(
        s.index_keys(&crate::cache::label_index_name("app"), "web")
            .unwrap(),
        vec!["a/z"]
    );
}

// ---- property test: the lister's bucket intersection against a naive filter ----

#[derive(Clone, Debug)]
enum LOp {
    Upsert(u8, u8, u8, u8),
    Delete(u8, u8),
    Replace(Vec<(u8, u8, u8, u8)>),
}

fn lop() -> impl Strategy<Value = LOp> {
    let item = (0u8..10, 0u8..3, 0u8..4, 0u8..3);
    prop_oneof![
        6 => item.clone().prop_map(|(k, ns, app, tier)| LOp::Upsert(k, ns, app, tier)),
        3 => (0u8..10, 0u8..3).prop_map(|(k, ns)| LOp::Delete(k, ns)),
        1 => proptest::collection::vec(item, 0..8).prop_map(LOp::Replace),
    ]
}

/// Object `ns{ns}/k{k}`; app 3 and tier 2 mean "label absent".
fn lmk(k: u8, ns: u8, app: u8, tier: u8) -> KubeObject {
    let app = format!("a{app}");
    let tier = format!("t{tier}");
    let mut labels: Vec<(&str, &str)> = Vec::new();
    if app != "a3" {
        labels.push(("app", &app));
    }
    if tier != "t2" {
        labels.push(("tier", &tier));
    }
    obj(&format!("ns{ns}/k{k}"), 1, &labels)
}

proptest! {
    #[test]
    fn st_property_lister_intersection_matches_naive_filter(
        ops in proptest::collection::vec(lop(), 1..40),
        tier_indexed in any::<bool>(),
    ) {
        use crate::cache::{LabelSelector, Lister};
        let store = Indexer::with_namespace_index();
        store.add_label_index("app").unwrap();
        if tier_indexed {
            store.add_label_index("tier").unwrap();
        }
        let lister = Lister::new(store.reader());
        let mut model: BTreeMap<String, KubeObject> = BTreeMap::new();
        for op in ops {
            match op {
                LOp::Upsert(k, ns, app, tier) => {
                    let o = lmk(k, ns, app, tier);
                    model.insert(crate::cache::object_key(&o).unwrap(), o.clone());
                    store.add(o).unwrap();
                }
                LOp::Delete(k, ns) => {
                    let key = format!("ns{ns}/k{k}");
                    model.remove(&key);
                    store.delete_key(&key);
                }
                LOp::Replace(items) => {
                    let objs: Vec<KubeObject> = items.iter().map(|&(k, ns, a, t)| lmk(k, ns, a, t)).collect();
                    model = objs.iter().map(|o| (crate::cache::object_key(o).unwrap(), o.clone())).collect();
                    store.replace(objs, "1").unwrap();
                }
            }
            let selectors = [
                "", "app=a0", "app=a1,tier=t0", "app in (a2)", "app=a0,tier!=t1",
                "app!=a0", "tier=t1", "app=a1,tier=t1,app!=a2", "app in (a0,a1)", "!app",
            ];
            for sel in selectors {
                let selector = LabelSelector::parse(sel).unwrap();
                for ns in [None, Some("ns0"), Some("ns1"), Some("ns2"), Some("nsX")] {
                    let got = keys(lister.list_in(ns, &selector));
                    let want: BTreeSet<String> = model
                        .iter()
                        .filter(|(_, o)| ns.is_none_or(|n| o.namespace() == Some(n)))
                        .filter(|(_, o)| selector.matches(o))
                        .map(|(k, _)| k.clone())
                        .collect();
                    prop_assert_eq!(got, want, "selector {:?} in {:?}", sel, ns);
                }
            }
        }
    }
}

#[test]
fn wrapping_errors_name_their_source() {
    use std::error::Error as _;
    let key = KeyError {
        message: "no name".into(),
    };
    let store = StoreError::Key(key.clone());
    assert_eq!(store.source().map(|e| e.to_string()), Some(key.to_string()));
    let informer = InformerError::Store(store.clone());
    assert_eq!(
        informer.source().map(|e| e.to_string()),
        Some(store.to_string())
    );
    assert!(InformerError::Stopped.source().is_none());
    let fifo = FifoError::Key(key);
    assert!(fifo.source().is_some());
}
