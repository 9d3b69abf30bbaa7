//! Shared by the wasm suites: a client for the kubewasm-sim that
//! `scripts/with-sim.sh` started (its URL and token are baked in at build
//! time), and the sim's control endpoints. Include with
//! `#[path = "support/sim.rs"] mod sim;`.
#![allow(dead_code)] // each suite uses a different subset

use kubewasm::rest::{Client, Config, Request};
use serde_json::{json, Value};

/// The sim's base URL.
pub fn url() -> &'static str {
    match option_env!("KUBEWASM_SIM_URL") {
        Some(u) if !u.is_empty() => u,
        _ => panic!(
            "KUBEWASM_SIM_URL was not set at build time: start kubewasm-sim and build the \
             tests with KUBEWASM_SIM_URL=http://127.0.0.1:PORT (make test does this)"
        ),
    }
}

/// The sim's bearer token, when it runs with one.
pub fn token() -> Option<&'static str> {
    option_env!("KUBEWASM_SIM_TOKEN").filter(|t| !t.is_empty())
}

/// A client configuration for the sim (default rate limits).
pub fn config() -> Config {
    let mut cfg = Config::new(url());
    if let Some(t) = token() {
        cfg = cfg.bearer_token(t);
    }
    cfg
}

/// A client with the default configuration.
pub fn client() -> Client {
    Client::new(config()).expect("client")
}

/// A client without the client-side rate limit (bulk setup, benchmarks).
pub fn unlimited_client() -> Client {
    let mut cfg = config();
    cfg.rate_limit = None;
    Client::new(cfg).expect("client")
}

/// POST a control request (`/sim/...`) and return its JSON answer.
pub async fn post(c: &Client, path: &str, body: Value) -> Value {
    c.send_json(&Request::post().path(path).json(&body))
        .await
        .unwrap_or_else(|e| panic!("POST {path}: {e}"))
}

/// GET a control endpoint's JSON answer.
pub async fn get(c: &Client, path: &str) -> Value {
    c.send_json(&Request::get().path(path))
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// A name no other run of these tests uses.
pub fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{:08x}",
        (js_sys::Math::random() * f64::from(u32::MAX)) as u32
    )
}

/// `key → resourceVersion` of every object of `resource` in the sim.
pub async fn state(c: &Client, resource: &str) -> std::collections::BTreeMap<String, String> {
    get(c, &format!("/sim/state?resource={resource}")).await["items"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Watches the sim has open.
pub async fn open_watches(c: &Client) -> i64 {
    get(c, "/sim/stats").await["openWatches"]
        .as_i64()
        .unwrap_or(-1)
}

/// Check `cond` every `every_ms` until it holds (`true`), or give up after
/// `tries` checks (`false`): the suites wait on conditions, not on time.
pub async fn until(tries: u32, every_ms: u64, mut cond: impl AsyncFnMut() -> bool) -> bool {
    for _ in 0..tries {
        if cond().await {
            return true;
        }
        sleep(every_ms).await;
    }
    false
}

/// Wait `ms` on the real clock.
pub async fn sleep(ms: u64) {
    kubewasm::rt::Clock::sleep(
        kubewasm::rt::real_clock().as_ref(),
        std::time::Duration::from_millis(ms),
    )
    .await;
}

/// One round of the consistency properties' fault mix for `seed`: a fault
/// (split chunks, dropped watches, 429, 500, a malformed line, latency, and
/// binary WebSocket frames when `websocket`), background churn, three bursts
/// of churn steps with dropped watches or a compaction between them; then
/// churn stops, faults clear and a last burst lands. Returns the fault.
pub async fn fault_round(c: &Client, seed: u64, websocket: bool) -> Value {
    let mut rng = kubewasm::testing::Rng::with_seed(seed);
    let faults = match rng.next_u64() % if websocket { 7 } else { 6 } {
        0 => json!({"splitChunks": true, "seed": seed}),
        1 => json!({"dropWatchesAfterEvents": 1 + rng.next_u64() % 5}),
        2 => json!({"status429": {"count": 2, "retryAfterSeconds": 1}}),
        3 => json!({"status500": {"count": 2}}),
        4 => json!({"malformedLineOnce": true}),
        5 if websocket => json!({"webSocketBinary": true, "splitChunks": true, "seed": seed}),
        _ => json!({"latencyMs": 300}),
    };
    post(c, "/sim/faults", faults.clone()).await;
    post(c, "/sim/churn", json!({"perSec": 50, "seed": seed})).await;
    for round in 0..3 {
        post(
            c,
            "/sim/churn/steps",
            json!({"steps": 10, "seed": seed * 10 + round}),
        )
        .await;
        match rng.next_u64() % 4 {
            0 => {
                post(c, "/sim/drop-watches", json!({})).await;
            }
            1 => {
                post(c, "/sim/compact", json!({})).await;
                post(c, "/sim/drop-watches", json!({})).await;
            }
            _ => {}
        }
        sleep(50).await;
    }
    post(c, "/sim/churn", json!({"perSec": 0})).await;
    post(c, "/sim/faults/clear", json!({})).await;
    post(
        c,
        "/sim/churn/steps",
        json!({"steps": 5, "seed": 1000 + seed}),
    )
    .await;
    faults
}

/// Informer options for the fault suites: short backoff steps keep 20 seeds
/// of faults within the suite's time.
pub fn fault_opts() -> kubewasm::cache::InformerOptions {
    use std::time::Duration;
    kubewasm::cache::InformerOptions {
        reflector: kubewasm::cache::ReflectorOptions {
            backoff: kubewasm::Backoff {
                initial: Duration::from_millis(50),
                max: Duration::from_millis(400),
                ..kubewasm::cache::DEFAULT_REFLECTOR_BACKOFF
            },
            ..Default::default()
        },
        ..Default::default()
    }
}
