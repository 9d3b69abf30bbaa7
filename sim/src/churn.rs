//! Deterministic churn: the writes of a busy cluster. Pods are created
//! (scale-ups, replacements), become ready, fail readiness, crash-loop and
//! restart, and are deleted; deployments roll out new replica sets; events
//! are recorded and expire; widgets change. Given the same store and seed,
//! the same steps produce the same writes.
//!
//! Objects are picked by jumping to a random point of the key space (a
//! namespace, then a random name prefix), which costs a map lookup rather
//! than a scan, so churn stays cheap with 50,000 pods.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::clock::rfc3339;
use crate::resources::ids::{DEPLOYMENTS, EVENTS, NAMESPACES, PODS, REPLICASETS, WIDGETS};
use crate::rng::Rng;
use crate::seed::{self, Owner, PodState};
use crate::state::{lock, Sim};
use crate::store::{Key, Obj, Store};

const NAME_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789-";

fn random_namespace(st: &Store, rng: &mut Rng) -> String {
    let n = st.count(NAMESPACES);
    if n == 0 {
        return "default".into();
    }
    st.iter(NAMESPACES)
        .nth(rng.index(n))
        .map(|(k, _)| k.1.clone())
        .unwrap_or_else(|| "default".into())
}

/// A pseudo-random object of a namespaced resource.
fn random_key(st: &Store, res: usize, rng: &mut Rng) -> Option<Key> {
    let ns = random_namespace(st, rng);
    let prefix: String = (0..3)
        .map(|_| {
            char::from(
                NAME_CHARS
                    .get(rng.index(NAME_CHARS.len()))
                    .copied()
                    .unwrap_or(b'a'),
            )
        })
        .collect();
    st.key_at_or_after(res, &(ns, prefix))
}

fn uid(v: &Value) -> String {
    v["metadata"]["uid"].as_str().unwrap_or("").to_string()
}

fn state_of(pod: &Value) -> PodState {
    let main = &pod["status"]["containerStatuses"][0];
    match pod["status"]["phase"].as_str() {
        Some("Pending") => PodState::Pending,
        Some("Failed") => PodState::Failed,
        _ if main["state"]["waiting"]["reason"] == "CrashLoopBackOff" => PodState::CrashLoop,
        _ if main["ready"] == true => PodState::Ready,
        _ => PodState::NotReady,
    }
}

fn record_event(st: &mut Store, pod: &Value, reason: &str, message: &str, warning: bool, at: &str) {
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let name = pod["metadata"]["name"].as_str().unwrap_or("");
    let kind = pod["kind"].as_str().unwrap_or("Pod");
    let _ = st.create(
        EVENTS,
        Some(ns),
        seed::event(ns, kind, name, &uid(pod), reason, message, warning, at),
    );
}

/// Move a pod along its lifecycle.
fn transition(st: &mut Store, rng: &mut Rng, at: &str) {
    let Some((ns, name)) = random_key(st, PODS, rng) else {
        create_pod(st, rng, at);
        return;
    };
    let Some(mut pod) = st.get(PODS, &ns, &name).map(Obj::value) else {
        return;
    };
    let restarts = pod["status"]["containerStatuses"][0]["restartCount"]
        .as_u64()
        .unwrap_or(0);
    let (next, restarts, event) = match state_of(&pod) {
        PodState::Pending if rng.chance(80) => (
            PodState::Ready,
            restarts,
            Some(("Started", "Started container", false)),
        ),
        PodState::Pending => (
            PodState::CrashLoop,
            restarts + 1,
            Some(("BackOff", "Back-off restarting failed container", true)),
        ),
        PodState::Ready if rng.chance(60) => (
            PodState::NotReady,
            restarts,
            Some((
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                true,
            )),
        ),
        PodState::Ready => (
            PodState::CrashLoop,
            restarts + 1,
            Some(("BackOff", "Back-off restarting failed container", true)),
        ),
        PodState::NotReady if rng.chance(80) => (PodState::Ready, restarts, None),
        PodState::NotReady => (
            PodState::CrashLoop,
            restarts + 1,
            Some(("BackOff", "Back-off restarting failed container", true)),
        ),
        PodState::CrashLoop if rng.chance(50) => (
            PodState::Ready,
            restarts,
            Some(("Started", "Started container", false)),
        ),
        PodState::CrashLoop => (
            PodState::CrashLoop,
            restarts + 1,
            Some(("BackOff", "Back-off restarting failed container", true)),
        ),
        PodState::Failed => {
            let _ = st.delete(PODS, &ns, &name, None, None);
            return;
        }
    };
    if next == PodState::Ready && pod["spec"]["nodeName"].as_str().is_none() {
        // Scheduled on its way up.
        pod["spec"]["nodeName"] = json!(format!(
            "ip-10-0-0-{}.eu-west-1.compute.internal",
            rng.below(3) + 1
        ));
    }
    seed::set_pod_state(&mut pod, next, at, restarts, rng);
    pod["metadata"]["resourceVersion"] = json!("");
    if st.update(PODS, &ns, &name, pod.clone()).is_ok() {
        if let Some((reason, message, warning)) = event.filter(|_| rng.chance(50)) {
            record_event(st, &pod, reason, message, warning, at);
        }
    }
}

/// The newest replica set of a deployment, with its version and hash.
fn current_rs(st: &Store, ns: &str, deploy: &str) -> Option<(String, Value)> {
    let prefix = format!("{deploy}-");
    st.iter(REPLICASETS)
        .skip_while(|(k, _)| k.0.as_str() < ns)
        .take_while(|(k, _)| k.0 == ns)
        .filter(|(k, _)| k.1.strip_prefix(&prefix).is_some_and(|h| !h.contains('-')))
        .map(|(k, o)| (k.1.clone(), o.value()))
        .max_by_key(|(_, v)| {
            v["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                .as_str()
                .and_then(|r| r.parse::<u64>().ok())
                .unwrap_or(0)
        })
}

/// A new pod for a random deployment's current replica set.
fn create_pod(st: &mut Store, rng: &mut Rng, at: &str) {
    let Some((ns, deploy)) = random_key(st, DEPLOYMENTS, rng) else {
        // Nothing to own it: a bare pod.
        let name = format!("standalone-{}", rng.name_suffix(5));
        let owner = Owner {
            namespace: "default",
            app: "standalone",
            rs_name: "standalone",
            rs_uid: "",
            hash: "0",
            version: "1.0.0",
        };
        let p = seed::pod(rng, &owner, &name, "", at, PodState::Pending, 2500);
        let _ = st.create(PODS, Some("default"), p);
        return;
    };
    let Some((rs_name, rs)) = current_rs(st, &ns, &deploy) else {
        return;
    };
    let app = rs["metadata"]["labels"]["app"]
        .as_str()
        .unwrap_or(&deploy)
        .to_string();
    let hash = rs["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let image = rs["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let version = image.rsplit(':').next().unwrap_or("1.0.0").to_string();
    let rs_uid = uid(&rs);
    let owner = Owner {
        namespace: &ns,
        app: &app,
        rs_name: &rs_name,
        rs_uid: &rs_uid,
        hash: &hash,
        version: &version,
    };
    let name = format!("{rs_name}-{}", rng.name_suffix(5));
    let node = format!("ip-10-0-0-{}.eu-west-1.compute.internal", rng.below(3) + 1);
    let p = seed::pod(rng, &owner, &name, &node, at, PodState::Pending, 2500);
    if let Ok(o) = st.create(PODS, Some(&ns), p) {
        let v = o.value();
        record_event(
            st,
            &v,
            "Scheduled",
            &format!("Successfully assigned {ns}/{name} to {node}"),
            false,
            at,
        );
    }
}

fn delete_pod(st: &mut Store, rng: &mut Rng, at: &str) {
    let Some((ns, name)) = random_key(st, PODS, rng) else {
        return;
    };
    if let Ok(o) = st.delete(PODS, &ns, &name, None, None) {
        if rng.chance(50) {
            let v = o.value();
            record_event(st, &v, "Killing", "Stopping container", false, at);
        }
    }
}

/// Roll a deployment out to a new version: a new replica set takes over.
fn rollout(st: &mut Store, rng: &mut Rng, at: &str) {
    let Some((ns, deploy)) = random_key(st, DEPLOYMENTS, rng) else {
        return;
    };
    let Some(mut d) = st.get(DEPLOYMENTS, &ns, &deploy).map(Obj::value) else {
        return;
    };
    let Some((old_name, old_rs)) = current_rs(st, &ns, &deploy) else {
        return;
    };
    let revision = old_rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        .as_str()
        .and_then(|r| r.parse::<u64>().ok())
        .unwrap_or(1)
        + 1;
    let app = d["metadata"]["labels"]["app"]
        .as_str()
        .unwrap_or(&deploy)
        .to_string();
    let replicas = d["spec"]["replicas"].as_u64().unwrap_or(1) as usize;
    let version = format!("1.{}.{}", rng.below(20), rng.below(10));
    let hash = rng.name_suffix(10);
    let rs = seed::replicaset(
        &ns,
        &deploy,
        &uid(&d),
        &app,
        &hash,
        replicas,
        &version,
        revision,
        at,
    );
    if st.create(REPLICASETS, Some(&ns), rs).is_err() {
        return;
    }
    let mut old = old_rs;
    old["spec"]["replicas"] = json!(0);
    old["metadata"]["resourceVersion"] = json!("");
    let _ = st.update(REPLICASETS, &ns, &old_name, old);
    d["spec"]["template"]["spec"]["containers"][0]["image"] =
        json!(format!("registry.example.com/{ns}/{app}:{version}"));
    d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = json!(revision.to_string());
    d["metadata"]["resourceVersion"] = json!("");
    if let Ok(o) = st.update(DEPLOYMENTS, &ns, &deploy, d) {
        let v = o.value();
        record_event(
            st,
            &v,
            "ScalingReplicaSet",
            &format!("Scaled up replica set {deploy}-{hash} to {replicas}"),
            false,
            at,
        );
    }
}

fn expire_events(st: &mut Store, rng: &mut Rng) {
    let cap = (st.count(PODS) / 4).max(50);
    for _ in 0..(st.count(EVENTS).saturating_sub(cap)).min(5) {
        if let Some((ns, name)) = random_key(st, EVENTS, rng) {
            let _ = st.delete(EVENTS, &ns, &name, None, None);
        }
    }
}

fn touch_widget(st: &mut Store, rng: &mut Rng) {
    let Some((ns, name)) = random_key(st, WIDGETS, rng) else {
        return;
    };
    let Some(mut w) = st.get(WIDGETS, &ns, &name).map(Obj::value) else {
        return;
    };
    let size = rng.below(10) + 1;
    w["spec"]["size"] = json!(size);
    w["status"] =
        json!({"state": if rng.chance(80) {"Ready"} else {"Resizing"}, "observedSize": size});
    w["metadata"]["resourceVersion"] = json!("");
    let _ = st.update(WIDGETS, &ns, &name, w);
}

fn annotate_pod(st: &mut Store, rng: &mut Rng, at: &str) {
    let Some((ns, name)) = random_key(st, PODS, rng) else {
        return;
    };
    let Some(mut p) = st.get(PODS, &ns, &name).map(Obj::value) else {
        return;
    };
    p["metadata"]["annotations"]["kubewasm.dev/last-probe"] = json!(at);
    p["metadata"]["resourceVersion"] = json!("");
    let _ = st.update(PODS, &ns, &name, p);
}

/// One churn step (usually one write, sometimes a few related ones).
pub fn step(st: &mut Store, rng: &mut Rng) {
    let at = rfc3339((st.clock)());
    match rng.below(100) {
        0..=34 => transition(st, rng, &at),
        35..=49 => create_pod(st, rng, &at),
        50..=63 => delete_pod(st, rng, &at),
        64..=66 => rollout(st, rng, &at),
        67..=79 => {
            if let Some((ns, name)) = random_key(st, PODS, rng) {
                if let Some(p) = st.get(PODS, &ns, &name).map(Obj::value) {
                    record_event(
                        st,
                        &p,
                        "Pulled",
                        "Container image already present on machine",
                        false,
                        &at,
                    );
                }
            }
        }
        80..=86 => expire_events(st, rng),
        87..=92 => touch_widget(st, rng),
        _ => annotate_pod(st, rng, &at),
    }
}

/// The background churn thread: runs at the configured rate.
pub fn run(sim: Arc<Sim>) {
    let mut rng = Rng(1);
    let mut generation = u64::MAX;
    let mut owed = 0.0f64;
    let mut last = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let cfg = lock(&sim.churn).clone();
        if cfg.generation != generation {
            generation = cfg.generation;
            rng = Rng(cfg.seed);
            owed = 0.0;
        }
        let now = Instant::now();
        let elapsed = now.duration_since(last).as_secs_f64();
        last = now;
        if cfg.per_sec <= 0.0 {
            owed = 0.0;
            continue;
        }
        // Carry fractions so low rates stay exact; cap a backlog after a stall.
        owed = (owed + cfg.per_sec * elapsed).min(cfg.per_sec.max(1.0));
        let steps = owed.floor();
        if steps >= 1.0 {
            owed -= steps;
            sim.write(|st| {
                for _ in 0..steps as u64 {
                    step(st, &mut rng);
                }
            });
            sim.stats
                .churn_steps
                .fetch_add(steps as u64, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{SeedSpec, EPOCH};

    fn seeded() -> Store {
        let mut st = Store::new(100_000);
        st.clock = || EPOCH;
        seed::seed(
            &mut st,
            &SeedSpec {
                seed: 3,
                namespaces: 3,
                pods: 60,
                pod_bytes: 2500,
            },
        );
        st
    }

    fn state(st: &Store, res: usize) -> Vec<(Key, u64)> {
        st.iter(res).map(|(k, o)| (k.clone(), o.rv)).collect()
    }

    #[test]
    fn churn_is_deterministic_and_keeps_the_cluster_alive() {
        let (mut a, mut b) = (seeded(), seeded());
        let rv0 = a.rv;
        let (mut ra, mut rb) = (Rng(9), Rng(9));
        for _ in 0..500 {
            step(&mut a, &mut ra);
            step(&mut b, &mut rb);
        }
        assert_eq!(state(&a, PODS), state(&b, PODS));
        assert_eq!(a.rv, b.rv);
        assert!(a.rv > rv0 + 400, "writes happened");
        assert!(
            (30..=120).contains(&a.count(PODS)),
            "pods stay around the seeded count: {}",
            a.count(PODS)
        );
        let states: Vec<PodState> = a.iter(PODS).map(|(_, o)| state_of(&o.value())).collect();
        assert!(states.contains(&PodState::Ready) && states.iter().any(|s| *s != PodState::Ready));
        assert!(
            a.iter(REPLICASETS).count() > b.iter(DEPLOYMENTS).count(),
            "rollouts made new replica sets"
        );
        let mut c = seeded();
        let mut rc = Rng(10);
        for _ in 0..500 {
            step(&mut c, &mut rc);
        }
        assert_ne!(
            state(&a, PODS),
            state(&c, PODS),
            "another seed, another history"
        );
    }

    #[test]
    fn churn_on_an_empty_store_does_not_panic() {
        let mut st = Store::new(1000);
        let mut rng = Rng(1);
        for _ in 0..200 {
            step(&mut st, &mut rng);
        }
        assert!(st.count(PODS) > 0);
    }
}
