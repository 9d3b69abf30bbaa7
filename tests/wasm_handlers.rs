//! The JS surface's handler contract against the sim, in Node and Chromium:
//! a map kept only from separately registered `on('add')`, `on('update')` and
//! `on('delete')` handlers equals the cache and the sim's state, at
//! `waitForSync()` and again once faults and churn stop (20 seeds of the
//! sim's fault mix: dropped watches, 410 after compaction, split chunks,
//! 429/500, malformed lines), and in one 20,000-object run.
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use js_sys::{Array, Object, Reflect};
use kubewasm::js::{Informer, InformerFactory, KubeClient};
use kubewasm::rest::Client;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[path = "support/sim.rs"]
mod sim;

type State = BTreeMap<String, String>;

async fn sim_state(c: &Client) -> State {
    sim::state(c, "pods").await
}

fn get(o: &JsValue, path: &[&str]) -> Option<String> {
    let mut v = o.clone();
    for p in path {
        v = Reflect::get(&v, &JsValue::from_str(p)).ok()?;
    }
    v.as_string()
}

fn key_and_rv(o: &JsValue) -> Option<(String, String)> {
    let name = get(o, &["metadata", "name"])?;
    let key = match get(o, &["metadata", "namespace"]) {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name,
    };
    Some((
        key,
        get(o, &["metadata", "resourceVersion"]).unwrap_or_default(),
    ))
}

fn cache_state(inf: &Informer) -> State {
    let list: Array = inf
        .lister()
        .expect("lister")
        .list(JsValue::UNDEFINED)
        .expect("list");
    list.iter().filter_map(|o| key_and_rv(&o)).collect()
}

/// `on('add' | 'update' | 'delete')` handlers, each registered on its own,
/// keeping one map.
fn map_from_handlers(inf: &Informer) -> Rc<RefCell<State>> {
    let map: Rc<RefCell<State>> = Rc::default();
    let m = map.clone();
    let add = Closure::<dyn Fn(JsValue)>::new(move |o: JsValue| {
        if let Some((k, rv)) = key_and_rv(&o) {
            m.borrow_mut().insert(k, rv);
        }
    });
    let m = map.clone();
    let update = Closure::<dyn Fn(JsValue, JsValue)>::new(move |_old: JsValue, o: JsValue| {
        if let Some((k, rv)) = key_and_rv(&o) {
            m.borrow_mut().insert(k, rv);
        }
    });
    let m = map.clone();
    let delete = Closure::<dyn Fn(JsValue)>::new(move |o: JsValue| {
        if let Some((k, _)) = key_and_rv(&o) {
            m.borrow_mut().remove(&k);
        }
    });
    inf.on("add".into(), add.into_js_value()).expect("on add");
    inf.on("update".into(), update.into_js_value())
        .expect("on update");
    inf.on("delete".into(), delete.into_js_value())
        .expect("on delete");
    map
}

fn js_client() -> KubeClient {
    let opts = Object::new();
    let _ = Reflect::set(&opts, &"server".into(), &sim::url().into());
    if let Some(t) = sim::token() {
        let _ = Reflect::set(&opts, &"token".into(), &t.into());
    }
    KubeClient::new(opts.into()).expect("client")
}

fn pods_informer(factory: &InformerFactory) -> Informer {
    let opts = Object::new();
    let _ = Reflect::set(&opts, &"version".into(), &"v1".into());
    let _ = Reflect::set(&opts, &"resource".into(), &"pods".into());
    // Short steps keep 20 seeds of relists within the suite's time.
    let backoff = Object::new();
    let _ = Reflect::set(&backoff, &"initialMs".into(), &50.into());
    let _ = Reflect::set(&backoff, &"capMs".into(), &400.into());
    let _ = Reflect::set(&opts, &"backoff".into(), &backoff);
    factory.informer(opts.into()).expect("informer")
}

use sim::sleep;

/// Wait until handler map == cache == sim, or fail with the difference.
async fn converge(what: &str, inf: &Informer, map: &Rc<RefCell<State>>, want: &State) {
    for i in 0..400 {
        if *map.borrow() == *want && cache_state(inf) == *want {
            return;
        }
        if i % 50 == 49 {
            console_log!(
                "{what}: waiting at {}: {}",
                js_sys::Date::now(),
                js_sys::JSON::stringify(&inf.status())
                    .map(String::from)
                    .unwrap_or_default()
            );
        }
        sleep(100).await;
    }
    let cache = cache_state(inf);
    let map = map.borrow();
    let diff = |a: &State, b: &State| -> Vec<String> {
        a.iter()
            .filter(|(k, v)| b.get(*k) != Some(v))
            .map(|(k, v)| format!("{k}@{v}"))
            .chain(
                b.keys()
                    .filter(|k| !a.contains_key(*k))
                    .map(|k| format!("extra {k}")),
            )
            .take(5)
            .collect()
    };
    let status = js_sys::JSON::stringify(&inf.status())
        .map(String::from)
        .unwrap_or_default();
    panic!(
        "{what}: handlers vs sim {:?}; cache vs sim {:?}; sizes {} / {} / {}; status {status}",
        diff(want, &map),
        diff(want, &cache),
        map.len(),
        cache.len(),
        want.len()
    );
}

/// Seed the sim, then start a pods informer whose `on()` handlers keep a
/// map, and wait for its sync.
async fn start(c: &Client, seed: Value) -> (InformerFactory, Informer, Rc<RefCell<State>>) {
    sim::post(c, "/sim/faults/clear", json!({})).await;
    sim::post(c, "/sim/seed", seed).await;
    let factory = InformerFactory::new(&js_client(), JsValue::UNDEFINED).expect("factory");
    let inf = pods_informer(&factory);
    let map = map_from_handlers(&inf);
    factory.start();
    JsFuture::from(inf.wait_for_sync(None)).await.expect("sync");
    (factory, inf, map)
}

#[wasm_bindgen_test]
async fn handler_map_equals_cache_and_sim_under_random_faults() {
    let c = sim::client();
    let (factory, inf, map) = start(&c, json!({"namespaces": 3, "pods": 300, "seed": 2})).await;
    let want = sim_state(&c).await;
    assert_eq!(*map.borrow(), cache_state(&inf), "at waitForSync");
    assert_eq!(cache_state(&inf), want, "at waitForSync");

    for seed in 0..20u64 {
        let faults = sim::fault_round(&c, seed + 100, false).await;
        let want = sim_state(&c).await;
        converge(&format!("seed {seed} ({faults})"), &inf, &map, &want).await;
        console_log!("seed {seed}: handlers == cache == sim with faults {faults}");
    }
    factory.shutdown();
}

#[wasm_bindgen_test]
async fn handler_map_equals_cache_and_sim_with_20000_objects() {
    let c = sim::client();
    let (factory, inf, map) = start(&c, json!({"namespaces": 10, "pods": 20000, "seed": 3})).await;
    let want = sim_state(&c).await;
    assert_eq!(want.len(), 20000);
    assert_eq!(
        map.borrow().len(),
        20000,
        "handlers have the list at waitForSync"
    );
    assert_eq!(cache_state(&inf), want);
    sim::post(&c, "/sim/faults", json!({"dropWatchesAfterEvents": 50})).await;
    for round in 0..4 {
        sim::post(
            &c,
            "/sim/churn/steps",
            json!({"steps": 400, "seed": 70 + round}),
        )
        .await;
        if round == 2 {
            sim::post(&c, "/sim/compact", json!({})).await;
            sim::post(&c, "/sim/drop-watches", json!({})).await;
        }
    }
    sim::post(&c, "/sim/faults/clear", json!({})).await;
    let want = sim_state(&c).await;
    converge("20,000 objects", &inf, &map, &want).await;
    factory.shutdown();
}
