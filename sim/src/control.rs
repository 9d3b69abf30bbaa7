//! `/sim/*` control endpoints for tests, the demo and benchmarks (JSON in
//! and out). Malformed bodies are 400 Status errors. Who may call them
//! (not other origins) is decided before this, in `cors::admin_access`.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::error_response;
use crate::churn;
use crate::faults::Faults;
use crate::flood::flood;
use crate::http::{Request, Response};
use crate::resources::{by_plural, RESOURCES};
use crate::rng::Rng;
use crate::seed::{seed, SeedSpec};
use crate::state::{lock, Sim};
use crate::status::ApiError;

fn ok(v: Value) -> Result<Response, ApiError> {
    Ok(Response::json(
        200,
        serde_json::to_vec(&v).unwrap_or_default(),
    ))
}

fn body(req: &Request) -> Result<Value, ApiError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    let v: Value = serde_json::from_slice(&req.body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    Ok(v)
}

fn uint(b: &Value, key: &str, default: u64) -> Result<u64, ApiError> {
    match b.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| ApiError::bad_request(format!("{key} must be a non-negative integer"))),
    }
}

fn resource(name: &str) -> Result<usize, ApiError> {
    by_plural(name).ok_or_else(|| ApiError::bad_request(format!("unknown resource {name:?}")))
}

/// Answer a `/sim/*` request.
pub fn handle(sim: &Arc<Sim>, req: &Request) -> Response {
    match route(sim, req) {
        Ok(r) => r,
        Err(e) => error_response(&e),
    }
}

fn stats(sim: &Sim) -> Value {
    let st = lock(&sim.store);
    let objects: BTreeMap<&str, usize> = RESOURCES
        .iter()
        .enumerate()
        .map(|(i, r)| (r.plural, st.count(i)))
        .collect();
    let s = &sim.stats;
    let churn = lock(&sim.churn).clone();
    json!({
        "resourceVersion": st.rv.to_string(),
        "oldestResourceVersion": st.oldest_rv.to_string(),
        "historyEvents": st.history_len(),
        "openWatches": s.open_watches.load(Ordering::SeqCst),
        "inFlight": s.in_flight.load(Ordering::SeqCst),
        "maxInFlight": s.max_in_flight.load(Ordering::SeqCst),
        "requests": s.requests.load(Ordering::SeqCst),
        "gzippedResponses": s.gzipped.load(Ordering::SeqCst),
        "churnSteps": s.churn_steps.load(Ordering::Relaxed),
        "floodEvents": s.flood_events.load(Ordering::Relaxed),
        "churn": {"perSec": churn.per_sec, "seed": churn.seed},
        "objects": objects,
    })
}

fn route(sim: &Arc<Sim>, req: &Request) -> Result<Response, ApiError> {
    let path = req.path.trim_end_matches('/');
    match (req.method.as_str(), path) {
        ("GET", "/sim/stats") => ok(stats(sim)),
        ("POST", "/sim/stats/reset") => {
            sim.reset_stats();
            ok(json!({"ok": true}))
        }
        ("GET", "/sim/faults") => ok(lock(&sim.faults).to_json()),
        ("POST", "/sim/faults") => {
            let f = Faults::from_json(&body(req)?).map_err(ApiError::bad_request)?;
            let shown = f.to_json();
            *lock(&sim.faults) = f;
            ok(shown)
        }
        ("POST", "/sim/faults/clear") => {
            *lock(&sim.faults) = Faults::default();
            ok(json!({"ok": true}))
        }
        ("POST", "/sim/compact") => {
            let rv = sim.write(|st| {
                st.compact();
                st.rv
            });
            ok(json!({"ok": true, "resourceVersion": rv.to_string()}))
        }
        ("POST", "/sim/drop-watches") => {
            // `{"expire": true}`: a 410 ERROR event and a clean close instead.
            let expire = body(req)?
                .get("expire")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let dropped = if expire {
                sim.expire_watches()
            } else {
                sim.drop_watches()
            };
            ok(json!({"ok": true, "dropped": dropped}))
        }
        ("POST", "/sim/churn") => {
            let b = body(req)?;
            let per_sec = match b.get("perSec") {
                None | Some(Value::Null) => 0.0,
                Some(v) => v
                    .as_f64()
                    .filter(|r| r.is_finite() && *r >= 0.0)
                    .ok_or_else(|| ApiError::bad_request("perSec must be a non-negative number"))?,
            };
            let mut c = lock(&sim.churn);
            c.per_sec = per_sec.min(1_000_000.0);
            c.seed = uint(&b, "seed", c.seed)?;
            c.generation += 1;
            ok(json!({"ok": true, "perSec": c.per_sec, "seed": c.seed}))
        }
        ("POST", "/sim/churn/steps") => {
            let b = body(req)?;
            let steps = uint(&b, "steps", 1)?.min(1_000_000);
            let mut rng = Rng(uint(&b, "seed", 1)?);
            let rv = sim.write(|st| {
                for _ in 0..steps {
                    churn::step(st, &mut rng);
                }
                st.rv
            });
            ok(json!({"resourceVersion": rv.to_string()}))
        }
        ("POST", "/sim/restart-container") => {
            let b = body(req)?;
            let text = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let (ns, name) = (text("namespace"), text("name"));
            let pod: Value = {
                let st = lock(&sim.store);
                let o = st
                    .get(crate::resources::ids::PODS, &ns, &name)
                    .ok_or_else(|| ApiError::not_found("", "pods", &name))?;
                serde_json::from_slice(&o.bytes).unwrap_or(Value::Null)
            };
            let all: Vec<String> = pod
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let chosen = match b.get("container").and_then(Value::as_str) {
                Some(c) if all.iter().any(|x| x == c) => vec![c.to_string()],
                Some(c) => {
                    return Err(ApiError::bad_request(format!(
                        "container {c} is not valid for pod {name}"
                    )))
                }
                None => all,
            };
            let mut logs = lock(&sim.logs);
            let restarts: serde_json::Map<String, Value> = chosen
                .iter()
                .map(|c| (c.clone(), json!(logs.restart(&ns, &name, c))))
                .collect();
            ok(json!({"ok": true, "restartCount": restarts}))
        }
        ("POST", "/sim/seed") => {
            lock(&sim.logs).clear();
            let b = body(req)?;
            let spec = SeedSpec {
                seed: uint(&b, "seed", 1)?,
                namespaces: uint(&b, "namespaces", 3)?.clamp(1, 10_000) as usize,
                pods: uint(&b, "pods", 30)?.min(1_000_000) as usize,
                pod_bytes: uint(&b, "podBytes", 2500)?.min(1 << 20) as usize,
            };
            let rv = sim.write(|st| {
                seed(st, &spec);
                st.rv
            });
            ok(json!({"resourceVersion": rv.to_string()}))
        }
        ("POST", "/sim/flood") => {
            let b = body(req)?;
            let res = resource(b.get("resource").and_then(Value::as_str).unwrap_or("pods"))?;
            let events = uint(&b, "events", 1000)?;
            let start = lock(&sim.store).rv;
            if b.get("wait").and_then(Value::as_bool).unwrap_or(false) {
                let written = flood(sim, res, events);
                let rv = lock(&sim.store).rv;
                return ok(
                    json!({"ok": true, "fromResourceVersion": start.to_string(), "events": written, "resourceVersion": rv.to_string()}),
                );
            }
            let s = sim.clone();
            std::thread::Builder::new()
                .name("kubewasm-sim-flood".into())
                .spawn(move || flood(&s, res, events))
                .map_err(|e| {
                    ApiError::new(500, "InternalError", format!("cannot start the flood: {e}"))
                })?;
            ok(json!({"ok": true, "fromResourceVersion": start.to_string()}))
        }
        ("GET", "/sim/state") => {
            let res = resource(req.param("resource").unwrap_or("pods"))?;
            let st = lock(&sim.store);
            let items: BTreeMap<String, String> = st
                .iter(res)
                .map(|((ns, name), o)| {
                    let key = if ns.is_empty() {
                        name.clone()
                    } else {
                        format!("{ns}/{name}")
                    };
                    (key, o.rv.to_string())
                })
                .collect();
            ok(json!({"resourceVersion": st.rv.to_string(), "items": items}))
        }
        (
            _,
            "/sim/stats"
            | "/sim/stats/reset"
            | "/sim/faults"
            | "/sim/faults/clear"
            | "/sim/compact"
            | "/sim/drop-watches"
            | "/sim/churn"
            | "/sim/churn/steps"
            | "/sim/seed"
            | "/sim/flood"
            | "/sim/state"
            | "/sim/restart-container",
        ) => Err(ApiError::new(
            405,
            "MethodNotAllowed",
            format!("{} is not allowed on {path}", req.method),
        )),
        _ => Err(ApiError::new(
            404,
            "NotFound",
            format!("unknown control endpoint {path}"),
        )),
    }
}
