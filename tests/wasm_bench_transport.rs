//! Watch throughput by transport: the same flood of MODIFIED pods read over
//! a fetch watch and over a WebSocket watch, alternating, in one run.
//! Events are decoded (`WatchStream`), counted by the stream's consumer.
//! `scripts/with-sim.sh -- scripts/wasm-test.sh page --release --features bench wasm_bench_transport -- --nocapture`
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use futures::StreamExt;
use kubewasm::rest::{Client, Request, WatchEvent, WatchParams, WatchTransportMode};
use kubewasm::rt::real_clock;
use serde_json::{json, Value};
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[path = "support/sim.rs"]
mod sim;

const FLOOD: u64 = 100_000;
const ROUNDS: usize = 2;

fn now_ms() -> f64 {
    real_clock().now().as_millis_f64()
}

/// Milliseconds from the flood's start until `FLOOD` MODIFIED events came
/// through a watch over `mode`.
async fn flood(c: &Client, mode: WatchTransportMode) -> f64 {
    let mut cfg = sim::config();
    cfg.rate_limit = None;
    cfg.watch_transport = mode;
    let client = Client::new(cfg).expect("client");
    let stats: Value = c
        .send_json(&Request::get().path("/sim/stats"))
        .await
        .expect("stats");
    let rv = stats["resourceVersion"].as_str().unwrap_or("0").to_owned();
    let mut w = client
        .watch(&Request::get().resource("pods").watch_params(&WatchParams {
            resource_version: Some(rv),
            ..Default::default()
        }))
        .await
        .expect("watch");
    let t0 = now_ms();
    sim::post(
        c,
        "/sim/flood",
        json!({"resource": "pods", "events": FLOOD}),
    )
    .await;
    let mut seen = 0u64;
    while seen < FLOOD {
        match w.next().await {
            Some(Ok(WatchEvent::Modified(o))) if !o.name().is_empty() => seen += 1,
            Some(Ok(_)) => {}
            other => panic!("watch ended after {seen} events: {other:?}"),
        }
    }
    now_ms() - t0
}

/// The floor of the WebSocket itself: plain JS counting messages (no
/// decoding), same flood. Milliseconds.
async fn js_websocket_floor(c: &Client) -> f64 {
    let stats: Value = c
        .send_json(&Request::get().path("/sim/stats"))
        .await
        .expect("stats");
    let rv = stats["resourceVersion"].as_str().unwrap_or("0").to_owned();
    let token = sim::token().unwrap_or("");
    let f = js_sys::Function::new_with_args(
        "url, token, rv, n, proto",
        r#"return new Promise((resolve, reject) => {
            const ws = new WebSocket(url.replace(/^http/, 'ws') + `/api/v1/pods?watch=1&resourceVersion=${rv}`,
              token ? ['kubewasm.watch', proto] : []);
            let seen = 0, t0 = 0;
            ws.onopen = async () => {
              t0 = performance.now();
              await fetch(`${url}/sim/flood`, { method: 'POST', headers: token ? { Authorization: 'Bearer ' + token } : {},
                body: JSON.stringify({ resource: 'pods', events: n }) });
            };
            ws.onmessage = (e) => {
              if (++seen === n) { resolve(performance.now() - t0); ws.close(); }
            };
            ws.onclose = () => { if (seen < n) reject(new Error('closed after ' + seen)); };
          })"#,
    );
    let proto = kubewasm::testing::bearer_subprotocol(token);
    let args = js_sys::Array::of5(
        &sim::url().into(),
        &token.into(),
        &rv.into(),
        &wasm_bindgen::JsValue::from_f64(FLOOD as f64),
        &proto.into(),
    );
    let p: js_sys::Promise = f
        .apply(&wasm_bindgen::JsValue::NULL, &args)
        .expect("js floor")
        .into();
    wasm_bindgen_futures::JsFuture::from(p)
        .await
        .expect("js floor")
        .as_f64()
        .unwrap_or(f64::NAN)
}

#[wasm_bindgen_test]
async fn fetch_vs_websocket_flood() {
    let c = sim::unlimited_client();
    sim::post(&c, "/sim/faults/clear", json!({})).await;
    sim::post(
        &c,
        "/sim/seed",
        json!({"namespaces": 20, "pods": 10_000, "seed": 1, "podBytes": 3000}),
    )
    .await;
    let mut results: Vec<(&str, f64)> = Vec::new();
    for _ in 0..ROUNDS {
        for (name, mode) in [
            ("fetch", WatchTransportMode::Fetch),
            ("websocket", WatchTransportMode::WebSocket),
        ] {
            let ms = flood(&c, mode).await;
            console_log!(
                "{name}: {FLOOD} MODIFIED pods of ~3 KB in {ms:.0} ms = {:.0} events/s",
                FLOOD as f64 / ms * 1000.0
            );
            results.push((name, ms));
        }
        let ms = js_websocket_floor(&c).await;
        console_log!(
            "JS WebSocket floor (count messages only): {FLOOD} in {ms:.0} ms = {:.0} events/s",
            FLOOD as f64 / ms * 1000.0
        );
        results.push(("js-websocket-floor", ms));
    }
    for name in ["fetch", "websocket", "js-websocket-floor"] {
        let runs: Vec<f64> = results
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, ms)| FLOOD as f64 / ms * 1000.0)
            .collect();
        let best = runs.iter().copied().fold(0.0, f64::max);
        console_log!(
            "{name}: best {best:.0} events/s over {} runs {runs:.0?}",
            runs.len()
        );
    }
}
