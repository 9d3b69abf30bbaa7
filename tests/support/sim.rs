//! Shared by the wasm suites: a client for the kubewasm-sim that
//! `scripts/with-sim.sh` started (its URL and token are baked in at build
//! time), and the sim's control endpoints. Include with
//! `#[path = "support/sim.rs"] mod sim;`.
#![allow(dead_code)] // each suite uses a different subset

use kubewasm::rest::{Client, Config, Request};
use serde_json::Value;

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
