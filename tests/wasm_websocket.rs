//! Watches over WebSocket against the sim, in Node and in Chromium: events
//! decode as over fetch, the token travels in the subprotocol, a 410 and a
//! malformed message are typed, a server close mid-stream is the fetch
//! watch's error, dropping closes the socket at the sim, the per-origin
//! budget sends the fifth watch over WebSocket in a page, and an informer
//! converges under faults with WebSocket forced.
//!
//! Node 20 has `WebSocket` only behind `--experimental-websocket`, which
//! `scripts/wasm-test.sh` sets for the node host.
#![cfg(target_arch = "wasm32")]

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use futures::StreamExt;
use kubewasm::api::ApiResource;
use kubewasm::cache::{ResourceListWatch, ResourceScope, SharedIndexInformer};
use kubewasm::rest::{
    Client, Config, Error, PatchParams, PatchType, Request, TransportReason, WatchEvent,
    WatchParams, WatchStream, WatchTransport, WatchTransportMode,
};
use kubewasm::rt::real_clock;
use serde_json::{json, Value};
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[path = "support/sim.rs"]
mod sim;

fn config(mode: WatchTransportMode) -> Config {
    let mut cfg = sim::config();
    cfg.watch_transport = mode;
    cfg
}

fn ws_client() -> Client {
    Client::new(config(WatchTransportMode::WebSocket)).expect("client")
}

async fn clear_faults(c: &Client) {
    sim::post(c, "/sim/faults/clear", json!({})).await;
}

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
           "metadata": {"name": name}, "data": {"k": value}})
}

use sim::open_watches;

/// Wait (up to 10 s) until the sim counts `want` open watches.
async fn wait_for_open_watches(c: &Client, want: i64) -> i64 {
    let clock = real_clock();
    let start = clock.now();
    loop {
        let n = open_watches(c).await;
        if n == want || clock.now() - start > Duration::from_secs(10) {
            return n;
        }
        clock.sleep(Duration::from_millis(50)).await;
    }
}

/// Wait until the watches of earlier tests are gone at the sim (it notices
/// a closed client within a fraction of a second); the count to start from.
async fn settled_open_watches(c: &Client) -> i64 {
    let n = wait_for_open_watches(c, 0).await;
    assert_eq!(n, 0, "earlier tests left watches open");
    n
}

fn transport(w: &WatchStream) -> (WatchTransport, TransportReason) {
    let t = w.transport().expect("opened by Client::watch");
    (t.transport, t.reason)
}

/// Create, patch and delete a config map after `rv`; a WebSocket watch from
/// `rv` sees the three events in order with the right objects.
async fn three_events_over_websocket(faults: Value) {
    let c = ws_client();
    clear_faults(&c).await;
    let ns = namespace(&c, "ws-events").await;
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
    c.send(
        &Request::delete()
            .namespace(&ns)
            .resource("configmaps")
            .name(&name),
    )
    .await
    .expect("delete");

    sim::post(&c, "/sim/faults", faults.clone()).await;
    let mut w = c
        .watch(&cms.clone().watch_params(&WatchParams {
            resource_version: Some(start_rv),
            ..Default::default()
        }))
        .await
        .expect("watch");
    assert_eq!(
        transport(&w),
        (WatchTransport::WebSocket, TransportReason::Configured)
    );
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match w.next().await {
            Some(Ok(ev)) => {
                let o = ev.object().expect("object").clone();
                if let WatchEvent::Modified(o) = &ev {
                    let v: Value = o.decode().expect("decode");
                    assert_eq!(v["data"]["k"], "日本2");
                }
                seen.push((ev.type_name(), o.resource_version().to_string()));
            }
            other => panic!("watch ended early ({faults}): {other:?}"),
        }
    }
    clear_faults(&c).await;
    let types: Vec<_> = seen.iter().map(|(t, _)| *t).collect();
    assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"], "{faults}");
    assert_eq!(seen[0].1, created.resource_version());
    assert_eq!(seen[1].1, patched.resource_version());
}

/// Events arrive and decode (text frames; the token in the subprotocol,
/// since the sim runs with `--token`).
#[wasm_bindgen_test]
async fn events_arrive_and_decode() {
    three_events_over_websocket(json!({})).await;
}

/// The same with binary frames, each message fragmented into tiny frames.
#[wasm_bindgen_test]
async fn binary_and_fragmented_frames_decode() {
    three_events_over_websocket(json!({"webSocketBinary": true, "splitChunks": true, "seed": 5}))
        .await;
}

/// The token must be in the subprotocol: without it, or with a wrong one,
/// the handshake fails (the browser does not expose the 401; one fetch of the
/// same watch then asks, and the 401 is the error).
#[wasm_bindgen_test]
async fn token_travels_in_the_subprotocol() {
    let c = ws_client();
    clear_faults(&c).await;
    // Accepted with the token (the sim checks it on every upgrade).
    let w = c
        .watch(&Request::get().resource("configmaps"))
        .await
        .expect("watch with the token");
    drop(w);
    if sim::token().is_none() {
        console_log!("the sim runs without a token: nothing more to check");
        return;
    }
    for cfg in [
        Config {
            max_retries: 0,
            ..config(WatchTransportMode::WebSocket)
        }
        .bearer_token("wrong"),
        Config {
            max_retries: 0,
            auth: kubewasm::rest::Auth::None,
            ..config(WatchTransportMode::WebSocket)
        },
    ] {
        let c = Client::new(cfg).expect("client");
        let err = c
            .watch(&Request::get().resource("configmaps"))
            .await
            .map(|_| ())
            .expect_err("refused");
        // The browser does not say why the handshake failed; the fetch that
        // asks does: the server's 401.
        assert!(err.is_unauthorized(), "{err:?}");
    }
}

/// A compacted resourceVersion: the ERROR event with a 410, then a clean end.
#[wasm_bindgen_test]
async fn compacted_rv_is_a_typed_410() {
    let c = ws_client();
    clear_faults(&c).await;
    let ns = namespace(&c, "ws-410").await;
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
        .watch(&cms.watch_params(&WatchParams {
            resource_version: Some(old_rv),
            ..Default::default()
        }))
        .await
        .expect("opens, then reports the error in-band");
    match w.next().await {
        Some(Ok(WatchEvent::Error(status))) => {
            assert_eq!(status.code, 410);
            assert!(Error::from(status).is_gone());
        }
        other => panic!("expected an ERROR event, got {other:?}"),
    }
    let end = w.next().await;
    assert!(end.is_none(), "close 1000 is a clean end: {end:?}");
}

/// A malformed message is a decode error, as a malformed line over fetch.
#[wasm_bindgen_test]
async fn malformed_message_is_a_decode_error() {
    let c = ws_client();
    clear_faults(&c).await;
    sim::post(&c, "/sim/faults", json!({"malformedLineOnce": true})).await;
    let mut w = c
        .watch(&Request::get().resource("configmaps"))
        .await
        .expect("watch");
    let got = w.next().await;
    clear_faults(&c).await;
    assert!(matches!(got, Some(Err(Error::Decode { .. }))), "{got:?}");
    assert!(w.next().await.is_none(), "the stream ends after the error");
}

/// The sim dropping its watches mid-stream: both transports report the same
/// typed error.
#[wasm_bindgen_test]
async fn server_close_mid_stream_is_the_fetch_watch_error() {
    let c = sim::client();
    clear_faults(&c).await;
    let before = settled_open_watches(&c).await;
    let rv = c
        .send_list(&Request::get().resource("configmaps"))
        .await
        .expect("list")
        .resource_version;
    let req = Request::get()
        .resource("configmaps")
        .watch_params(&WatchParams {
            resource_version: Some(rv),
            ..Default::default()
        });
    let fetch = Client::new(config(WatchTransportMode::Fetch)).expect("client");
    let mut wf = fetch.watch(&req).await.expect("fetch watch");
    let mut ws = ws_client().watch(&req).await.expect("websocket watch");
    assert_eq!(transport(&wf).0, WatchTransport::Fetch);
    assert_eq!(transport(&ws).0, WatchTransport::WebSocket);
    assert_eq!(wait_for_open_watches(&c, before + 2).await, before + 2);
    sim::post(&c, "/sim/drop-watches", json!({})).await;
    let (ef, es) = (wf.next().await, ws.next().await);
    match &es {
        Some(Err(Error::Network { message, .. })) => assert!(message.contains("1006"), "{message}"),
        other => panic!("WebSocket gave {other:?}"),
    }
    let node = option_env!("KUBEWASM_EXPECT_HOST") == Some("node");
    match &ef {
        Some(Err(Error::Network { .. })) => {}
        // Node's fetch (undici) ends a chunked body cut short as if it were
        // complete; browsers report the network error.
        None if node => console_log!("Node's fetch reported the cut body as a clean end"),
        other => panic!("fetch gave {other:?}"),
    }
}

/// Dropping a WebSocket watch closes the socket: the sim's count goes down.
#[wasm_bindgen_test]
async fn dropping_a_watch_closes_the_socket() {
    let c = ws_client();
    clear_faults(&c).await;
    let before = settled_open_watches(&c).await;
    let w = c
        .watch(&Request::get().resource("configmaps"))
        .await
        .expect("watch");
    assert_eq!(wait_for_open_watches(&c, before + 1).await, before + 1);
    drop(w);
    assert_eq!(wait_for_open_watches(&c, before).await, before);
}

/// `auto`: in a page or worker (the sim speaks HTTP/1.1) the first four
/// watches go over fetch and the fifth over WebSocket; a freed place goes
/// to fetch again. In Node, all stay on fetch.
#[wasm_bindgen_test]
async fn budget_sends_the_fifth_watch_over_websocket() {
    let c = Client::new(config(WatchTransportMode::Auto)).expect("client");
    clear_faults(&c).await;
    let browser = option_env!("KUBEWASM_EXPECT_HOST").is_some_and(|h| h != "node");
    let origin = kubewasm::testing::origin_of(sim::url());
    let base = kubewasm::testing::open_fetch_watches(&origin);
    assert_eq!(base, 0, "no other test leaves a fetch watch open");
    let req = Request::get().resource("configmaps");
    let mut watches = Vec::new();
    for i in 0..5 {
        let w = c.watch(&req).await.expect("watch");
        let t = w.transport().expect("choice").clone();
        console_log!(
            "watch {i}: {} ({})",
            t.transport.as_str(),
            t.reason.as_str()
        );
        watches.push(w);
    }
    let kinds: Vec<_> = watches.iter().map(transport).collect();
    if browser {
        assert_eq!(
            kinds[..4],
            [(WatchTransport::Fetch, TransportReason::WithinBudget); 4]
        );
        assert_eq!(
            kinds[4],
            (WatchTransport::WebSocket, TransportReason::OverBudget)
        );
        assert!(watches[4].transport().is_some_and(|t| t.budget_forced()));
        assert_eq!(kubewasm::testing::open_fetch_watches(&origin), 4);
        // The WebSocket watch is live: it sees a write.
        let ns = namespace(&c, "ws-budget").await;
        c.send(
            &Request::post()
                .namespace(&ns)
                .resource("configmaps")
                .json(&configmap(&sim::unique("cm"), "b")),
        )
        .await
        .expect("create");
        let ev = watches[4].next().await;
        assert!(matches!(ev, Some(Ok(_))), "{ev:?}");
        // A fetch watch goes away: its place is free again (its slot, a Web
        // Lock shared with other tabs, is released a task later).
        watches.remove(0);
        assert_eq!(kubewasm::testing::open_fetch_watches(&origin), 3);
        let mut got = None;
        for _ in 0..50 {
            let w = c.watch(&req).await.expect("watch");
            if transport(&w).0 == WatchTransport::Fetch {
                got = Some(w);
                break;
            }
            drop(w);
            sim::sleep(20).await;
        }
        watches.push(got.expect("the freed place goes back to fetch"));
    } else {
        console_log!("Node has no shared connection pool: every watch stays on fetch");
        assert!(kinds
            .iter()
            .all(|k| *k == (WatchTransport::Fetch, TransportReason::NotLimited)));
    }
    drop(watches);
    assert_eq!(kubewasm::testing::open_fetch_watches(&origin), 0);
}

fn store_state(inf: &SharedIndexInformer) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    inf.store().for_each(|k, o| {
        m.insert(k.to_owned(), o.resource_version().to_owned());
    });
    m
}

/// An informer with every watch over WebSocket converges to the sim's state
/// under 20 seeds of random faults, as `wasm_informer.rs` checks for fetch.
#[wasm_bindgen_test]
async fn informer_converges_over_websocket_under_random_faults() {
    let c = ws_client();
    clear_faults(&c).await;
    sim::post(
        &c,
        "/sim/seed",
        json!({"namespaces": 3, "pods": 120, "seed": 2}),
    )
    .await;
    let before = settled_open_watches(&c).await;
    let lw = ResourceListWatch::new(
        c.clone(),
        ResourceScope::new(ApiResource::builtin("pods").expect("pods")),
    );
    let opts = sim::fault_opts();
    let inf = SharedIndexInformer::new(Rc::new(lw), real_clock(), opts);
    inf.start();
    inf.wait_for_sync().await;
    for seed in 0..20u64 {
        let faults = sim::fault_round(&c, seed, true).await;
        let want = sim::state(&c, "pods").await;
        let ok = sim::until(300, 100, async || store_state(&inf) == want).await;
        assert!(
            ok,
            "seed {seed} (faults {faults}): the store did not converge; status {:?}",
            inf.status_snapshot()
        );
        console_log!("seed {seed}: converged over WebSocket with faults {faults}");
    }
    inf.stop();
    assert_eq!(wait_for_open_watches(&c, before).await, before);
}
