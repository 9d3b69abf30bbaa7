//! The REST client against the simulated API server, in whatever JS host runs
//! it (Node, a Chromium page, a dedicated Web Worker): no host-specific
//! configuration here, so the same file runs everywhere.
//!
//! Needs `KUBEWASM_SIM_URL` (and `KUBEWASM_SIM_TOKEN` when the sim runs with
//! `--token`) at compile time; `make test` starts the sim and sets both.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use futures::StreamExt;
use kubewasm::rest::{
    Client, Config, Error, ListParams, PatchParams, PatchType, Request, WatchEvent, WatchParams,
};
use kubewasm::rt::real_clock;
use serde_json::{json, Value};
use wasm_bindgen_test::wasm_bindgen_test;

#[path = "support/sim.rs"]
mod sim;

/// A name no other run of these tests uses.
async fn clear_faults(c: &Client) {
    c.send(&Request::post().path("/sim/faults/clear"))
        .await
        .expect("clear faults");
}

/// A fresh namespace for one test (AlreadyExists is fine).
async fn namespace(c: &Client, prefix: &str) -> String {
    let ns = sim::unique(prefix);
    let req = Request::post()
        .resource("namespaces")
        .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
    match c.send(&req).await {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("create namespace: {e}"),
    }
    ns
}

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"suite": "wasm-rest"}},
           "data": {"k": value}})
}

async fn wait_for_open_watches(c: &Client, want: i64) -> i64 {
    let clock = real_clock();
    let start = clock.now();
    loop {
        let n = sim::get(c, "/sim/stats").await["openWatches"]
            .as_i64()
            .unwrap_or(-1);
        if n == want || clock.now() - start > Duration::from_secs(10) {
            return n;
        }
        clock.sleep(Duration::from_millis(50)).await;
    }
}

/// The bearer token reaches the server; without it the sim answers 401.
#[wasm_bindgen_test]
async fn bearer_token_is_sent() {
    let c = sim::client();
    let list = c
        .send_list(&Request::get().resource("namespaces"))
        .await
        .expect("authorized list");
    assert!(!list.resource_version.is_empty());
    if sim::token().is_some() {
        let anon = Client::new(Config::new(sim::url())).expect("client");
        let err = anon
            .send(&Request::get().resource("namespaces"))
            .await
            .expect_err("no token");
        assert!(err.is_unauthorized(), "{err:?}");
        let wrong = Client::new(Config::new(sim::url()).bearer_token("wrong")).expect("client");
        let err = wrong
            .send(&Request::get().resource("namespaces"))
            .await
            .expect_err("wrong token");
        assert!(err.is_unauthorized(), "{err:?}");
    }
}

/// Status errors from the server keep their reason (404, 409).
#[wasm_bindgen_test]
async fn api_errors_are_classified() {
    let c = sim::client();
    let ns = namespace(&c, "rest-err").await;
    let err = c
        .send(
            &Request::get()
                .namespace(&ns)
                .resource("configmaps")
                .name("missing"),
        )
        .await
        .expect_err("404");
    assert!(err.is_not_found(), "{err:?}");
    let create = Request::post()
        .namespace(&ns)
        .resource("configmaps")
        .json(&configmap("dup", "1"));
    c.send(&create).await.expect("created");
    let err = c.send(&create).await.expect_err("409");
    assert!(err.is_already_exists(), "{err:?}");
    let err = c
        .send(&Request::get().resource("pods").list_params(&ListParams {
            label_selector: Some("a in (".into()),
            ..Default::default()
        }))
        .await
        .expect_err("bad selector");
    assert_eq!(err.code(), Some(400), "{err:?}");
}

/// RC-02: a watch from a resourceVersion replays ADDED/MODIFIED/DELETED in
/// order, with every body written in random small pieces.
#[wasm_bindgen_test]
async fn watch_from_rv_delivers_events_in_order_with_split_chunks() {
    let c = sim::client();
    clear_faults(&c).await;
    let ns = namespace(&c, "rest-watch").await;
    let cms = Request::get().namespace(&ns).resource("configmaps");
    let start_rv = c.send_list(&cms).await.expect("list").resource_version;

    let name = sim::unique("cm");
    let created = c
        .send_object(
            &Request::post()
                .namespace(&ns)
                .resource("configmaps")
                .json(&configmap(&name, "é1")),
        )
        .await
        .expect("create");
    assert_eq!(created.name(), name);
    let patched = c
        .send_object(
            &Request::patch()
                .namespace(&ns)
                .resource("configmaps")
                .name(&name)
                .patch_params(&PatchParams::default(), PatchType::Merge)
                .json(&json!({"data": {"k": "日本2"}})),
        )
        .await
        .expect("patch");
    assert_ne!(patched.resource_version(), created.resource_version());
    c.send(
        &Request::delete()
            .namespace(&ns)
            .resource("configmaps")
            .name(&name),
    )
    .await
    .expect("delete");

    sim::post(&c, "/sim/faults", json!({"splitChunks": true, "seed": 7})).await;
    let mut w = c
        .watch(&cms.clone().watch_params(&WatchParams {
            resource_version: Some(start_rv),
            ..Default::default()
        }))
        .await
        .expect("watch");
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match w.next().await {
            Some(Ok(ev)) => {
                let o = ev.object().expect("object").clone();
                if o.name() == name {
                    seen.push((ev.type_name(), o.resource_version().to_string()));
                    if let WatchEvent::Modified(o) = &ev {
                        let v: Value = o.decode().expect("decode");
                        assert_eq!(v["data"]["k"], "日本2");
                    }
                }
            }
            other => panic!("watch ended early: {other:?}"),
        }
    }
    clear_faults(&c).await;
    let types: Vec<_> = seen.iter().map(|(t, _)| *t).collect();
    assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"]);
    assert_eq!(seen[0].1, created.resource_version());
    assert_eq!(seen[1].1, patched.resource_version());
}

/// A compacted resourceVersion surfaces as a typed 410: an ERROR event on
/// the watch, an API error on an exact list.
#[wasm_bindgen_test]
async fn compacted_rv_is_a_typed_410() {
    let c = sim::client();
    clear_faults(&c).await;
    let ns = namespace(&c, "rest-410").await;
    let cms = Request::get().namespace(&ns).resource("configmaps");
    let old_rv = c.send_list(&cms).await.expect("list").resource_version;
    c.send(
        &Request::post()
            .namespace(&ns)
            .resource("configmaps")
            .json(&configmap(&sim::unique("cm"), "x")),
    )
    .await
    .expect("create");
    sim::post(&c, "/sim/compact", json!({})).await;

    let mut w = c
        .watch(&cms.clone().watch_params(&WatchParams {
            resource_version: Some(old_rv.clone()),
            ..Default::default()
        }))
        .await
        .expect("watch opens, then reports the error in-band");
    match w.next().await {
        Some(Ok(WatchEvent::Error(status))) => {
            assert_eq!(status.code, 410);
            let err = Error::from(status);
            assert!(err.is_gone(), "{err:?}");
        }
        other => panic!("expected an ERROR event, got {other:?}"),
    }

    // A continue token issued before the compaction is expired: 410 on a list.
    let first = c
        .send_list(
            &Request::get()
                .resource("namespaces")
                .list_params(&ListParams {
                    limit: Some(1),
                    ..Default::default()
                }),
        )
        .await
        .expect("first page");
    let token = first
        .continue_token
        .expect("more than one namespace, so a token");
    sim::post(&c, "/sim/compact", json!({})).await;
    let err = c
        .send_list(
            &Request::get()
                .resource("namespaces")
                .list_params(&ListParams {
                    limit: Some(1),
                    continue_token: Some(token),
                    ..Default::default()
                }),
        )
        .await
        .expect_err("410 for an expired continue token");
    assert!(err.is_gone(), "{err:?}");
    assert_eq!(err.reason(), Some("Expired"));
}

/// RC-04: a 429 is retried after its Retry-After, for a read and for a
/// write; a 500 without it is not retried for a write.
#[wasm_bindgen_test]
async fn status_429_is_retried_after_retry_after() {
    let c = sim::client();
    clear_faults(&c).await;
    sim::post(
        &c,
        "/sim/faults",
        json!({"status429": {"count": 1, "retryAfterSeconds": 1}}),
    )
    .await;
    let clock = real_clock();
    let start = clock.now();
    let list = c.send_list(&Request::get().resource("namespaces")).await;
    let elapsed = clock.now() - start;
    clear_faults(&c).await;
    assert!(list.is_ok(), "{list:?}");
    assert!(
        elapsed >= Duration::from_millis(950),
        "retried after only {elapsed:?}"
    );

    // A create follows it too: the server asked for the retry, so it did
    // not act on the first attempt (client-go's IsNextRetry).
    sim::post(
        &c,
        "/sim/faults",
        json!({"status429": {"count": 1, "retryAfterSeconds": 1}}),
    )
    .await;
    let ns = sim::unique("rest-429");
    let start = clock.now();
    let created = c
        .send(
            &Request::post()
                .resource("namespaces")
                .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
        )
        .await;
    let elapsed = clock.now() - start;
    clear_faults(&c).await;
    assert!(created.is_ok(), "{created:?}");
    assert!(
        elapsed >= Duration::from_millis(950),
        "retried after only {elapsed:?}"
    );

    // A 500 without Retry-After is not retried for a create: the server may
    // have acted on it.
    sim::post(&c, "/sim/faults", json!({"status500": {"count": 1}})).await;
    let ns = sim::unique("rest-500");
    let err = c
        .send(
            &Request::post()
                .resource("namespaces")
                .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
        )
        .await
        .expect_err("500 for a POST");
    clear_faults(&c).await;
    assert_eq!(err.code(), Some(500), "{err:?}");
}

/// Dropping a watch stream aborts its fetch: the sim's open-watch count
/// goes back down.
#[wasm_bindgen_test]
async fn dropping_a_watch_closes_the_connection() {
    let c = sim::client();
    clear_faults(&c).await;
    let before = sim::get(&c, "/sim/stats").await["openWatches"]
        .as_i64()
        .expect("count");
    let w = c
        .watch(&Request::get().resource("configmaps"))
        .await
        .expect("watch");
    assert_eq!(wait_for_open_watches(&c, before + 1).await, before + 1);
    drop(w);
    assert_eq!(wait_for_open_watches(&c, before).await, before);
}

/// A request timeout aborts a slow request with a typed error.
#[wasm_bindgen_test]
async fn request_timeout_is_typed() {
    let c = sim::client();
    sim::post(&c, "/sim/faults", json!({"latencyMs": 2000})).await;
    let err = c
        .send(
            &Request::get()
                .resource("namespaces")
                .timeout(Duration::from_millis(200)),
        )
        .await
        .expect_err("timeout");
    clear_faults(&c).await;
    assert!(err.is_timeout(), "{err:?}");
}

/// Valid watch lines to mutate (escapes, surrogate pairs, every number
/// form, nulls, managedFields).
const SEED_EVENTS: &[&str] = &[
    r#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"café-☕","namespace":"日本","resourceVersion":"12","generation":3,"labels":{"app":"wëb"},"annotations":{"note":"a \"q\" \\ {x} \u00e9 \ud83d\ude00 \/ \b\f\n\r\t"},"ownerReferences":[{"kind":"ReplicaSet","name":"rs","controller":true}],"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{"replicas":-0,"ratio":0.25,"big":1.5e+300,"tiny":-2E-308,"int":12345678901234567890,"flags":[true,false,null],"empty":{},"list":[]}}}"#,
    r#"{ "object" : { "metadata" : { "name" : "b" , "resourceVersion" : "13" } , "data" : { "k" : "v" } } , "type" : "MODIFIED" }"#,
    r#"{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"15","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
];

/// Bytes that matter to a JSON scanner.
const MUTATION_BYTES: &[u8] =
    b"{}[],:\"\\/ \t\n0123456789-+.eEtrufalsn\x01\x1f\x7f\xc3\xa9\xed\xa0\xff";

/// Every object the decoder accepts reads with the host's `JSON.parse`,
/// whole and member by member (what the JS layer does on first access):
/// a deterministic sample of mutated events plus edge cases. The native
/// property tests check the same against serde_json at scale.
#[wasm_bindgen_test]
fn accepted_objects_parse_with_json_parse() {
    let check = |o: &kubewasm::rest::KubeObject| {
        let v = js_sys::JSON::parse(o.raw_str())
            .unwrap_or_else(|e| panic!("JSON.parse threw {e:?} on {:?}", o.raw_str()));
        assert!(v.is_object(), "{}", o.raw_str());
        let mut i = 0;
        while let Some((key, value)) = o.member(i) {
            js_sys::JSON::parse(&format!("\"{key}\"")).expect("key");
            js_sys::JSON::parse(value)
                .unwrap_or_else(|e| panic!("JSON.parse threw {e:?} on member {key}: {value}"));
            i += 1;
        }
        for rewritten in [
            o.clone().without_managed_fields(),
            o.clone().metadata_only(),
        ] {
            js_sys::JSON::parse(rewritten.raw_str()).expect("rewrite");
        }
    };
    let edge_cases = [
        r#"{"a":"\ud83d\ude00\u0000\u001f\"\\\/","n":[-0,0.0e0,5e-324,1e-400,1.7976931348623157e308,-9007199254740993]}"#.to_string(),
        "{\"del\":\"\u{7f}\",\"bmp\":\"\u{ffff}\",\"astral\":\"\u{10ffff}\",\"ls\":\"\u{2028}\u{2029}\"}".to_string(),
        format!("{{\"deep\":{}1{}}}", "[".repeat(2000), "]".repeat(2000)),
        format!("{{\"deep\":{}1{}}}", "{\"k\":".repeat(2000), "}".repeat(2000)),
    ];
    for text in &edge_cases {
        let o = kubewasm::rest::KubeObject::from_json(text.as_bytes())
            .unwrap_or_else(|e| panic!("{e}: {text:.80}"));
        check(&o);
    }

    // xorshift64*: the same sample on every run.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: usize| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    };
    let (mut accepted, mut tried) = (0, 0);
    for _ in 0..20_000 {
        let mut b = SEED_EVENTS[next(SEED_EVENTS.len())].as_bytes().to_vec();
        for _ in 0..1 + next(3) {
            let at = next(b.len());
            let byte = MUTATION_BYTES[next(MUTATION_BYTES.len())];
            match next(3) {
                0 => b[at] = byte,
                1 => b.insert(at, byte),
                _ => {
                    b.remove(at);
                }
            }
        }
        tried += 1;
        if let Ok(ev) = kubewasm::testing::decode_event(&b) {
            if let Some(o) = ev.object() {
                check(o);
                accepted += 1;
            }
        }
    }
    // Many mutants stay valid (a changed digit or letter inside a string):
    // the check above ran on a real sample, not on nothing.
    assert!(accepted > tried / 20, "{accepted} of {tried} accepted");
}
