//! /sim/* control endpoints for tests, the demo and benchmarks.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::api::{json_reply, status, Reply};
use crate::http::Request;
use crate::resources::{by_plural, RESOURCES};
use crate::seed::{churn_step, seed, Rng};
use crate::state::{lock, Shared};

fn body(req: &Request) -> Value {
    serde_json::from_slice(&req.body).unwrap_or(json!({}))
}

fn ok() -> Reply {
    json_reply(200, b"{\"ok\":true}".to_vec())
}

pub fn handle(state: &Shared, req: &Request) -> Reply {
    let b = body(req);
    match (req.method.as_str(), req.path.trim_end_matches('/')) {
        ("GET", "/sim/stats") => {
            let st = lock(state);
            let objects: BTreeMap<&str, usize> = RESOURCES
                .iter()
                .zip(&st.objects)
                .map(|(r, m)| (r.plural, m.len()))
                .collect();
            json_reply(200, serde_json::to_vec(&json!({
                "resourceVersion": st.rv.to_string(), "openWatches": st.stats.open_watches,
                "inFlight": st.stats.in_flight, "maxInFlight": st.stats.max_in_flight,
                "requests": st.stats.requests, "objects": objects, "oldestResourceVersion": st.oldest_rv.to_string(),
            })).unwrap_or_default())
        }
        ("POST", "/sim/stats/reset") => {
            let mut st = lock(state);
            st.stats.max_in_flight = st.stats.in_flight;
            st.stats.requests = 0;
            ok()
        }
        ("POST", "/sim/faults") => {
            let mut st = lock(state);
            let f = &mut st.faults;
            *f = Default::default();
            f.split_chunks = b["splitChunks"].as_bool().unwrap_or(false);
            f.malformed_line_once = b["malformedLineOnce"].as_bool().unwrap_or(false);
            f.drop_after_events = b["dropWatchesAfterEvents"].as_u64();
            f.status429 = b
                .pointer("/status429/count")
                .and_then(Value::as_u64)
                .unwrap_or(0) as u32;
            f.retry_after = b
                .pointer("/status429/retryAfterSeconds")
                .and_then(Value::as_u64)
                .unwrap_or(1) as u32;
            f.status500 = b
                .pointer("/status500/count")
                .and_then(Value::as_u64)
                .unwrap_or(0) as u32;
            f.latency_ms = b["latencyMs"].as_u64().unwrap_or(0);
            f.seed = b["seed"].as_u64().unwrap_or(1);
            ok()
        }
        ("POST", "/sim/faults/clear") => {
            lock(state).faults = Default::default();
            ok()
        }
        ("POST", "/sim/compact") => {
            lock(state).compact();
            state.1.notify_all();
            ok()
        }
        ("POST", "/sim/drop-watches") => {
            lock(state).drop_gen += 1;
            state.1.notify_all();
            ok()
        }
        ("POST", "/sim/churn") => {
            let mut st = lock(state);
            st.churn_per_sec = b["perSec"].as_f64().unwrap_or(0.0).max(0.0);
            st.churn_seed = b["seed"].as_u64().unwrap_or(st.churn_seed);
            ok()
        }
        ("POST", "/sim/churn/steps") => {
            let mut st = lock(state);
            let mut rng = Rng(b["seed"].as_u64().unwrap_or(1));
            for _ in 0..b["steps"].as_u64().unwrap_or(1).min(1_000_000) {
                churn_step(&mut st, &mut rng);
            }
            let rv = st.rv.to_string();
            drop(st);
            state.1.notify_all();
            json_reply(
                200,
                serde_json::to_vec(&json!({"resourceVersion": rv})).unwrap_or_default(),
            )
        }
        ("POST", "/sim/seed") => {
            let mut st = lock(state);
            if let Some(pods) = by_plural("pods") {
                let keys: Vec<_> = st.objects[pods].keys().cloned().collect();
                for (ns, name) in keys {
                    let _ = st.delete(pods, &ns, &name);
                }
            }
            seed(
                &mut st,
                b["seed"].as_u64().unwrap_or(1),
                b["namespaces"].as_u64().unwrap_or(3) as usize,
                b["pods"].as_u64().unwrap_or(30) as usize,
                b["podBytes"].as_u64().unwrap_or(2500) as usize,
            );
            let rv = st.rv.to_string();
            drop(st);
            state.1.notify_all();
            json_reply(
                200,
                serde_json::to_vec(&json!({"resourceVersion": rv})).unwrap_or_default(),
            )
        }
        ("POST", "/sim/flood") => {
            let res = by_plural(b["resource"].as_str().unwrap_or("pods")).unwrap_or(0);
            let events = b["events"].as_u64().unwrap_or(1000);
            let state = state.clone();
            std::thread::spawn(move || flood(&state, res, events));
            ok()
        }
        ("GET", "/sim/state") => {
            let res = req.param("resource").and_then(by_plural).unwrap_or(0);
            let st = lock(state);
            let items: BTreeMap<String, String> = st.objects[res]
                .iter()
                .map(|((ns, name), o)| {
                    (
                        if ns.is_empty() {
                            name.clone()
                        } else {
                            format!("{ns}/{name}")
                        },
                        o.rv.to_string(),
                    )
                })
                .collect();
            json_reply(
                200,
                serde_json::to_vec(&json!({"resourceVersion": st.rv.to_string(), "items": items}))
                    .unwrap_or_default(),
            )
        }
        _ => status(404, "NotFound", "unknown control endpoint"),
    }
}

/// Touch pods round robin, pacing to the slowest open watch so none falls
/// out of the history window.
fn flood(state: &Shared, res: usize, events: u64) {
    let keys: Vec<(String, String)> = lock(state).objects[res].keys().cloned().collect();
    if keys.is_empty() {
        return;
    }
    let mut done = 0u64;
    while done < events {
        let mut st = lock(state);
        let window = (st.history_cap as u64 / 2).max(1);
        let slowest = st.watch_progress.values().min().copied();
        if slowest.is_some_and(|s| st.rv.saturating_sub(s) > window) {
            let _ = state.1.wait_timeout(st, Duration::from_millis(5));
            continue;
        }
        for _ in 0..500.min(events - done) {
            let key = &keys[(done % keys.len() as u64) as usize];
            st.touch(res, key);
            done += 1;
        }
        drop(st);
        state.1.notify_all();
    }
}

/// Background churn at the configured rate.
pub fn churn_loop(state: Shared) {
    let mut rng = Rng(1);
    let mut seeded = 0;
    loop {
        let rate = {
            let st = lock(&state);
            if st.churn_seed != seeded {
                seeded = st.churn_seed;
                rng = Rng(seeded);
            }
            st.churn_per_sec
        };
        if rate <= 0.0 {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        // Batch small intervals so high rates stay accurate.
        let per_tick = (rate / 50.0).ceil().max(1.0) as u64;
        {
            let mut st = lock(&state);
            for _ in 0..per_tick {
                churn_step(&mut st, &mut rng);
            }
        }
        state.1.notify_all();
        std::thread::sleep(Duration::from_secs_f64(per_tick as f64 / rate));
    }
}
