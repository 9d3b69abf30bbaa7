//! Deterministic, realistic seed data: nodes, namespaces (with their
//! `kube-root-ca.crt` config map and `default` service account),
//! deployments owning replica sets owning pods, services, events and
//! widgets. The same seed and counts give the same objects (names, labels,
//! specs, statuses, timestamps relative to the store's clock at seeding); uids and resourceVersions follow the order
//! of writes.
//!
//! Pods are about `pod_bytes` of JSON (2–4 KB is typical of real clusters):
//! containers with probes, resources, env and mounts; volumes; tolerations;
//! conditions and container statuses; and the managedFields that make real
//! pods heavy. The main container's env is padded to reach the size.

use serde_json::{json, Value};

use crate::clock::rfc3339;
use crate::resources::ids::{
    CONFIGMAPS, DEPLOYMENTS, EVENTS, NAMESPACES, NODES, PODS, REPLICASETS, SERVICEACCOUNTS,
    SERVICES, WIDGETS,
};
use crate::rng::Rng;
use crate::store::Store;

/// 2026-01-01T00:00:00Z, the store clock of the tests, so that their seeded
/// timestamps are fixed.
#[cfg(test)]
pub const EPOCH: u64 = 1_767_225_600;

/// Application names; "web" is always the first deployment of a namespace.
pub const APPS: &[&str] = &[
    "web",
    "api",
    "worker",
    "cache",
    "auth",
    "search",
    "billing",
    "gateway",
    "queue",
    "notifier",
    "reports",
    "scheduler",
];
const TIERS: &[&str] = &["frontend", "backend", "data"];
const NAMESPACE_NAMES: &[&str] = &[
    "default",
    "payments",
    "checkout",
    "catalog",
    "identity",
    "monitoring",
    "logging",
    "ingress",
    "data",
    "ml",
    "search",
    "notifications",
];
/// Pods per deployment.
const REPLICAS: usize = 5;

/// Seed counts.
#[derive(Clone, Debug)]
pub struct SeedSpec {
    /// The seed.
    pub seed: u64,
    /// Namespaces holding workloads (the first is "default").
    pub namespaces: usize,
    /// Pods in total.
    pub pods: usize,
    /// Approximate JSON size of each pod.
    pub pod_bytes: usize,
}

/// The name of the i-th seeded namespace.
pub fn namespace_name(i: usize) -> String {
    match NAMESPACE_NAMES.get(i) {
        Some(n) => n.to_string(),
        None => format!("team-{i}"),
    }
}

fn tier_of(app: &str) -> &'static str {
    match app {
        "web" | "gateway" => "frontend",
        "cache" | "search" | "reports" => "data",
        _ => TIERS.get(1).copied().unwrap_or("backend"),
    }
}

/// The state a pod is generated in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PodState {
    /// Running and ready.
    Ready,
    /// Running, readiness probe failing.
    NotReady,
    /// Scheduled, containers being created.
    Pending,
    /// Restarting in a loop.
    CrashLoop,
    /// Finished with an error.
    Failed,
}

impl PodState {
    /// A state with the mix a healthy-ish cluster shows.
    pub fn random(rng: &mut Rng) -> PodState {
        match rng.below(100) {
            0..=84 => PodState::Ready,
            85..=89 => PodState::NotReady,
            90..=94 => PodState::Pending,
            95..=98 => PodState::CrashLoop,
            _ => PodState::Failed,
        }
    }
}

/// What a pod belongs to.
pub struct Owner<'a> {
    /// Namespace.
    pub namespace: &'a str,
    /// app label.
    pub app: &'a str,
    /// Replica set name (`{deployment}-{hash}`).
    pub rs_name: &'a str,
    /// Replica set uid.
    pub rs_uid: &'a str,
    /// pod-template-hash.
    pub hash: &'a str,
    /// Image tag of the current rollout.
    pub version: &'a str,
}

fn condition(kind: &str, ok: bool, at: &str, reason: Option<&str>) -> Value {
    let mut c = json!({"type": kind, "status": if ok {"True"} else {"False"}, "lastProbeTime": null, "lastTransitionTime": at});
    if let Some(r) = reason {
        c["reason"] = json!(r);
    }
    c
}

/// Which optional status parts a pod carries (kept across churn so a pod
/// trimmed to its size target stays that size).
struct Shape {
    ready_to_start: bool,
    host_ips: bool,
    image_ids: bool,
}

fn shape_of(pod: &Value) -> Shape {
    let status = &pod["status"];
    if !status["conditions"].is_array() {
        return Shape {
            ready_to_start: true,
            host_ips: true,
            image_ids: true,
        };
    }
    Shape {
        ready_to_start: status["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "PodReadyToStartContainers")),
        host_ips: status.get("hostIPs").is_some() || status.get("hostIP").is_none(),
        image_ids: status["containerStatuses"][0].get("imageID").is_some(),
    }
}

/// Set a pod's status for `state` (used by seeding and by churn).
pub fn set_pod_state(pod: &mut Value, state: PodState, at: &str, restarts: u64, rng: &mut Rng) {
    let shape = shape_of(pod);
    let node = pod["spec"]["nodeName"].as_str().unwrap_or("").to_string();
    let names: Vec<(String, String)> = pod["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap_or("main").to_string(),
                        c["image"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let started = pod["status"]["startTime"]
        .as_str()
        .unwrap_or(at)
        .to_string();
    let ready = state == PodState::Ready;
    let running = matches!(state, PodState::Ready | PodState::NotReady);
    let phase = match state {
        PodState::Ready | PodState::NotReady | PodState::CrashLoop => "Running",
        PodState::Pending => "Pending",
        PodState::Failed => "Failed",
    };
    let statuses: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, (name, image))| {
            let main = i == 0;
            let crash = main && state == PodState::CrashLoop;
            let st = if crash {
                json!({"waiting": {"reason": "CrashLoopBackOff", "message": format!("back-off 40s restarting failed container={name}")}})
            } else if state == PodState::Pending {
                json!({"waiting": {"reason": "ContainerCreating"}})
            } else if state == PodState::Failed && main {
                json!({"terminated": {"exitCode": 1, "reason": "Error", "startedAt": started, "finishedAt": at}})
            } else {
                json!({"running": {"startedAt": at}})
            };
            let mut s = json!({
                "name": name, "state": st, "ready": ready || (running && !main),
                "restartCount": if main { restarts } else { 0 }, "image": image,
                "started": running || (state == PodState::CrashLoop && !main),
            });
            if shape.image_ids {
                s["imageID"] = json!(format!("{}@sha256:{}", image.split(':').next().unwrap_or(""), rng.hex(64)));
            }
            if state != PodState::Pending {
                s["containerID"] = json!(format!("containerd://{}", rng.hex(64)));
            }
            if main && restarts > 0 {
                s["lastState"] = json!({"terminated": {"exitCode": 137, "reason": "Error", "startedAt": started, "finishedAt": at}});
            }
            s
        })
        .collect();
    let scheduled = !node.is_empty();
    let not_ready_reason = (!ready).then_some("ContainersNotReady");
    let mut conditions = Vec::new();
    if shape.ready_to_start {
        conditions.push(condition(
            "PodReadyToStartContainers",
            state != PodState::Pending,
            at,
            None,
        ));
    }
    conditions.push(condition("Initialized", true, &started, None));
    conditions.push(condition("Ready", ready, at, not_ready_reason));
    conditions.push(condition("ContainersReady", ready, at, not_ready_reason));
    conditions.push(condition("PodScheduled", scheduled, &started, None));
    let host = (rng.below(200) + 10, rng.below(250) + 1);
    let mut status = json!({
        "phase": phase,
        "conditions": conditions,
        "qosClass": "Burstable",
        "startTime": started,
        "containerStatuses": statuses,
    });
    if scheduled {
        let host_ip = format!("10.0.{}.{}", host.0 % 16, host.1);
        status["hostIP"] = json!(host_ip);
        if shape.host_ips {
            status["hostIPs"] = json!([{"ip": host_ip}]);
        }
        if state != PodState::Pending {
            let pod_ip = format!("10.244.{}.{}", host.0, rng.below(250) + 2);
            status["podIP"] = json!(pod_ip);
            if shape.host_ips {
                status["podIPs"] = json!([{"ip": pod_ip}]);
            }
        }
    }
    if state == PodState::Failed {
        status["reason"] = json!("Error");
    }
    pod["status"] = status;
}

fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map(|b| b.len()).unwrap_or(0)
}

/// Pad the first container's env until the pod is about `target` bytes
/// (`len` is its current size).
fn pad(pod: &mut Value, len: usize, target: usize, rng: &mut Rng) {
    // Each entry is {"name":"FEATURE_FLAG_NN","value":"<24 hex>"}: 58 bytes and a comma.
    let mut deficit = target.saturating_sub(len);
    let mut entries = Vec::new();
    let mut i = 0;
    while deficit >= 59 && i < 10_000 {
        entries.push(json!({"name": format!("FEATURE_FLAG_{:02}", i % 100), "value": rng.hex(24)}));
        deficit -= 59;
        i += 1;
    }
    if let Some(env) = pod
        .pointer_mut("/spec/containers/0/env")
        .and_then(Value::as_array_mut)
    {
        env.extend(entries);
    }
}

/// Remove the member `key` (an object key or an array index) under the
/// JSON pointer `parent`; returns about how many bytes that saved.
fn remove_at(pod: &mut Value, parent: &str, key: &str) -> usize {
    match pod.pointer_mut(parent) {
        Some(Value::Object(m)) => m.remove(key).map_or(0, |v| json_len(&v) + key.len() + 4),
        Some(Value::Array(a)) => match key.parse::<usize>() {
            Ok(i) if i < a.len() => json_len(&a.remove(i)) + 1,
            _ => 0,
        },
        _ => 0,
    }
}

/// Optional parts of a generated pod, least important first: trimmed until
/// the pod fits its size target.
const OPTIONAL: &[&[(&str, &str)]] = &[
    &[
        ("/spec/containers", "1"),
        ("/status/containerStatuses", "1"),
    ],
    &[
        ("/spec/containers/0/env", "2"),
        ("/spec/containers/0/env", "1"),
    ],
    &[
        ("/spec/volumes", "1"),
        ("/spec/containers/0/volumeMounts", "1"),
    ],
    &[("/metadata", "annotations")],
    &[("/spec", "securityContext")],
    &[("/spec/containers/0", "securityContext")],
    &[("/spec/containers/0", "livenessProbe")],
    &[
        ("/spec", "priority"),
        ("/spec", "preemptionPolicy"),
        ("/spec", "enableServiceLinks"),
    ],
    &[("/metadata/managedFields", "1")],
    &[("/status", "hostIPs"), ("/status", "podIPs")],
    &[
        ("/spec/containers/0", "terminationMessagePath"),
        ("/spec/containers/0", "terminationMessagePolicy"),
    ],
    &[("/spec/tolerations", "1")],
    &[("/status/conditions", "0")],
    &[("/status/containerStatuses/0", "imageID")],
    &[("/status/containerStatuses/0", "lastState")],
    &[
        ("/spec", "schedulerName"),
        ("/spec", "dnsPolicy"),
        ("/spec", "terminationGracePeriodSeconds"),
    ],
    &[
        ("/spec/containers/0", "imagePullPolicy"),
        ("/metadata", "generateName"),
        ("/status", "qosClass"),
    ],
    &[
        ("/spec/containers/0/env", "0"),
        ("/spec/containers/0", "ports"),
    ],
    &[("/status/containerStatuses/0", "containerID")],
];

/// A realistic pod of about `target_bytes` of JSON. Generated whole, then
/// trimmed of optional parts while too large (the smallest form, about
/// 2.4 KB, still has managedFields, resources, a probe, a volume and its
/// mount, a toleration, conditions and a container status), then padded
/// with env entries up to the target.
pub fn pod(
    rng: &mut Rng,
    o: &Owner,
    name: &str,
    node: &str,
    created: &str,
    state: PodState,
    target_bytes: usize,
) -> Value {
    let tier = tier_of(o.app);
    let image = format!(
        "registry.example.com/{}/{}:{}",
        o.namespace, o.app, o.version
    );
    let mut containers = vec![json!({
        "name": o.app, "image": image, "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [
            {"name": "LOG_LEVEL", "value": *rng.pick(&["info", "debug", "warn"]).unwrap_or(&"info")},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}
        ],
        "resources": {"requests": {"cpu": format!("{}m", 50 * (1 + rng.below(8))), "memory": format!("{}Mi", 64 * (1 + rng.below(8)))},
                      "limits": {"memory": "1Gi"}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5, "failureThreshold": 3},
        "volumeMounts": [
            {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true},
            {"name": "config", "mountPath": "/etc/app", "readOnly": true}
        ],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 10, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
        "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}},
    })];
    let sidecar = rng.chance(40);
    if sidecar {
        containers.push(json!({
            "name": "log-shipper", "image": "registry.example.com/platform/log-shipper:2.4.1", "imagePullPolicy": "IfNotPresent",
            "args": ["--input=/var/log/app", "--output=collector.logging:4317"],
            "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        }));
    }
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "generateName": format!("{}-", o.rs_name), "namespace": o.namespace,
            "labels": {"app": o.app, "tier": tier, "pod-template-hash": o.hash},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": o.rs_name, "uid": o.rs_uid, "controller": true, "blockOwnerDeletion": true}],
            "creationTimestamp": created,
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": created, "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}},
                   "f:ownerReferences": {".": {}, format!("k:{{\"uid\":\"{}\"}}", o.rs_uid): {}}},
                   "f:spec": {"f:containers": {format!("k:{{\"name\":\"{}\"}}", o.app): {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}}, "f:volumes": {}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": created, "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:startTime": {}}}}
            ]
        },
        "spec": {
            "containers": containers,
            "volumes": [
                {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}},
                {"name": "config", "configMap": {"name": format!("{}-config", o.app), "defaultMode": 420}}
            ],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "nodeName": node, "schedulerName": "default-scheduler",
            "securityContext": {"fsGroup": 2000, "seccompProfile": {"type": "RuntimeDefault"}},
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": {"startTime": created}
    });
    if node.is_empty() {
        if let Some(spec) = p["spec"].as_object_mut() {
            spec.remove("nodeName");
        }
    }
    let restarts = match state {
        PodState::CrashLoop => 1 + rng.below(12),
        PodState::Ready => u64::from(rng.chance(10)),
        _ => 0,
    };
    set_pod_state(&mut p, state, created, restarts, rng);
    let mut len = json_len(&p);
    for group in OPTIONAL {
        if len <= target_bytes {
            break;
        }
        for (parent, key) in *group {
            len = len.saturating_sub(remove_at(&mut p, parent, key));
        }
    }
    pad(&mut p, len, target_bytes, rng);
    p
}

/// A node.
fn node(name: &str, i: usize, created: &str) -> Value {
    let zone = ["a", "b", "c"][i % 3];
    json!({
        "metadata": {"name": name, "creationTimestamp": created,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "node.kubernetes.io/instance-type": "m6i.2xlarge", "topology.kubernetes.io/zone": format!("eu-west-1{zone}")},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": {"podCIDR": format!("10.244.{i}.0/24"), "providerID": format!("aws:///eu-west-1{zone}/i-{:017x}", i * 7919 + 12345)},
        "status": {
            "capacity": {"cpu": "8", "memory": "32408812Ki", "pods": "110", "ephemeral-storage": "101430960Ki"},
            "allocatable": {"cpu": "7910m", "memory": "31391980Ki", "pods": "110", "ephemeral-storage": "93478772582"},
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "lastHeartbeatTime": created, "lastTransitionTime": created},
                {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure", "lastHeartbeatTime": created, "lastTransitionTime": created},
                {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID", "lastHeartbeatTime": created, "lastTransitionTime": created},
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status", "lastHeartbeatTime": created, "lastTransitionTime": created}
            ],
            "addresses": [{"type": "InternalIP", "address": format!("10.0.{}.{}", i / 250, i % 250 + 1)}, {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.33.0", "containerRuntimeVersion": "containerd://2.0.4", "kernelVersion": "6.8.0-1024-aws",
                         "osImage": "Ubuntu 24.04.2 LTS", "operatingSystem": "linux", "architecture": "amd64"}
        }
    })
}

/// A deployment with `replicas` pods of image tag `version`.
pub fn deployment(
    ns: &str,
    name: &str,
    app: &str,
    replicas: usize,
    version: &str,
    created: &str,
) -> Value {
    json!({
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app, "kubewasm.dev/seeded": "true"},
                     "annotations": {"deployment.kubernetes.io/revision": "1"}, "creationTimestamp": created},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}}, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                 "template": {"metadata": {"labels": {"app": app, "tier": tier_of(app)}},
                              "spec": {"containers": [{"name": app, "image": format!("registry.example.com/{ns}/{app}:{version}"), "ports": [{"containerPort": 8080}]}]}}},
        "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                   "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastUpdateTime": created, "lastTransitionTime": created},
                                  {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "lastUpdateTime": created, "lastTransitionTime": created}]}
    })
}

/// A replica set owned by a deployment.
#[allow(clippy::too_many_arguments)]
pub fn replicaset(
    ns: &str,
    deploy: &str,
    deploy_uid: &str,
    app: &str,
    hash: &str,
    replicas: usize,
    version: &str,
    revision: u64,
    created: &str,
) -> Value {
    json!({
        "metadata": {"name": format!("{deploy}-{hash}"), "namespace": ns,
                     "labels": {"app": app, "pod-template-hash": hash, "kubewasm.dev/seeded": "true"},
                     "annotations": {"deployment.kubernetes.io/revision": revision.to_string(), "deployment.kubernetes.io/desired-replicas": replicas.to_string()},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": deploy, "uid": deploy_uid, "controller": true, "blockOwnerDeletion": true}],
                     "creationTimestamp": created},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app, "pod-template-hash": hash}},
                 "template": {"metadata": {"labels": {"app": app, "pod-template-hash": hash}},
                              "spec": {"containers": [{"name": app, "image": format!("registry.example.com/{ns}/{app}:{version}")}]}}},
        "status": {"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "observedGeneration": 1}
    })
}

/// An event about an object.
#[allow(clippy::too_many_arguments)]
pub fn event(
    ns: &str,
    kind: &str,
    name: &str,
    uid: &str,
    reason: &str,
    message: &str,
    warning: bool,
    at: &str,
) -> Value {
    json!({
        "metadata": {"generateName": format!("{name}."), "namespace": ns, "creationTimestamp": at},
        "involvedObject": {"kind": kind, "namespace": ns, "name": name, "uid": uid, "apiVersion": if kind == "Pod" {"v1"} else {"apps/v1"}},
        "reason": reason, "message": message, "type": if warning {"Warning"} else {"Normal"},
        "source": {"component": if kind == "Pod" {"kubelet"} else {"deployment-controller"}},
        "firstTimestamp": at, "lastTimestamp": at, "count": 1,
        "reportingComponent": if kind == "Pod" {"kubelet"} else {"deployment-controller"}, "reportingInstance": ""
    })
}

fn uid_of(o: &crate::store::Obj) -> String {
    o.value()["metadata"]["uid"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Seed (or re-seed) the store. Every pod is replaced, as are the seeded
/// deployments, replica sets and services; namespaces, nodes and widgets
/// are created when missing.
pub fn seed(st: &mut Store, spec: &SeedSpec) {
    let mut rng = Rng(spec.seed);
    // Timestamps are fixed offsets back from the time of seeding (the sim's
    // start), so ages read as in a live cluster: workloads from the last 30
    // days, nodes and namespaces from 60 days ago.
    let now = (st.clock)();
    let at = |rng: &mut Rng| rfc3339(now.saturating_sub(86_400 * 30) + rng.below(86_400 * 29));
    // Clear what a previous seed made.
    let pods: Vec<_> = st.iter(PODS).map(|(k, _)| k.clone()).collect();
    for (ns, name) in pods {
        let _ = st.delete(PODS, &ns, &name, None, None);
    }
    for res in [DEPLOYMENTS, REPLICASETS, SERVICES] {
        let seeded: Vec<_> = st
            .iter(res)
            .filter(|(_, o)| o.meta.labels.contains_key("kubewasm.dev/seeded"))
            .map(|(k, _)| k.clone())
            .collect();
        for (ns, name) in seeded {
            let _ = st.delete(res, &ns, &name, None, None);
        }
    }
    let node_count = (spec.pods / 40).clamp(3, 1000);
    let nodes: Vec<String> = (0..node_count)
        .map(|i| {
            format!(
                "ip-10-0-{}-{}.eu-west-1.compute.internal",
                i / 250,
                i % 250 + 1
            )
        })
        .collect();
    for (i, n) in nodes.iter().enumerate() {
        if st.get(NODES, "", n).is_none() {
            let created = rfc3339(now.saturating_sub(86_400 * 60) + i as u64 * 60);
            let _ = st.create(NODES, None, node(n, i, &created));
        }
    }
    let nss: Vec<String> = (0..spec.namespaces.max(1)).map(namespace_name).collect();
    for (i, ns) in nss.iter().enumerate() {
        if st.get(NAMESPACES, "", ns).is_none() {
            let created = rfc3339(now.saturating_sub(86_400 * 60) + i as u64);
            let _ = st.create(NAMESPACES, None, json!({"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}, "creationTimestamp": created}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}));
        }
        if st.get(CONFIGMAPS, ns, "kube-root-ca.crt").is_none() {
            let _ = st.create(CONFIGMAPS, Some(ns), json!({"metadata": {"name": "kube-root-ca.crt", "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc."}}, "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\nMIIC/jCCAeagAwIBAgIBADANBgkqhkiG9w0BAQsFADAVMRMwEQYDVQQDEwprdWJl\n-----END CERTIFICATE-----\n"}}));
        }
        if st.get(SERVICEACCOUNTS, ns, "default").is_none() {
            let _ = st.create(
                SERVICEACCOUNTS,
                Some(ns),
                json!({"metadata": {"name": "default"}}),
            );
        }
        for w in 0..2 {
            let name = format!("widget-{w}");
            if st.get(WIDGETS, ns, &name).is_none() {
                let size = rng.below(10) + 1;
                let _ = st.create(WIDGETS, Some(ns), json!({"metadata": {"name": name, "labels": {"color": if w == 0 {"blue"} else {"green"}}}, "spec": {"size": size, "color": if w == 0 {"blue"} else {"green"}}, "status": {"state": "Ready", "observedSize": size}}));
            }
        }
    }
    // Pods per namespace, spread evenly; deployments of REPLICAS pods each.
    let per_ns: Vec<usize> = (0..nss.len())
        .map(|i| spec.pods / nss.len() + usize::from(i < spec.pods % nss.len()))
        .collect();
    let mut pod_index = 0usize;
    for (ns, &count) in nss.iter().zip(&per_ns) {
        let deployments = count.div_ceil(REPLICAS);
        let mut left = count;
        for d in 0..deployments {
            let app = APPS.get(d % APPS.len()).copied().unwrap_or("web");
            let name = if d < APPS.len() {
                app.to_string()
            } else {
                format!("{app}-{}", d / APPS.len())
            };
            let replicas = left.min(REPLICAS);
            left -= replicas;
            let created = at(&mut rng);
            let version = format!("1.{}.{}", rng.below(20), rng.below(10));
            let hash = rng.name_suffix(10);
            let Ok(dep) = st.create(
                DEPLOYMENTS,
                Some(ns),
                deployment(ns, &name, app, replicas, &version, &created),
            ) else {
                continue;
            };
            let dep_uid = uid_of(&dep);
            let Ok(rs) = st.create(
                REPLICASETS,
                Some(ns),
                replicaset(
                    ns, &name, &dep_uid, app, &hash, replicas, &version, 1, &created,
                ),
            ) else {
                continue;
            };
            let rs_uid = uid_of(&rs);
            let rs_name = format!("{name}-{hash}");
            if d < APPS.len() {
                let ip = format!("10.96.{}.{}", rng.below(250), rng.below(250) + 1);
                let _ = st.create(SERVICES, Some(ns), json!({"metadata": {"name": name, "labels": {"app": app, "kubewasm.dev/seeded": "true"}, "creationTimestamp": created},
                    "spec": {"selector": {"app": app}, "type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                             "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}], "sessionAffinity": "None"},
                    "status": {"loadBalancer": {}}}));
            }
            let owner = Owner {
                namespace: ns,
                app,
                rs_name: &rs_name,
                rs_uid: &rs_uid,
                hash: &hash,
                version: &version,
            };
            for _ in 0..replicas {
                let state = PodState::random(&mut rng);
                let node = if state == PodState::Pending && rng.chance(50) {
                    String::new()
                } else {
                    nodes
                        .get(pod_index % nodes.len().max(1))
                        .cloned()
                        .unwrap_or_default()
                };
                let pod_name = format!("{rs_name}-{}", rng.name_suffix(5));
                let created = at(&mut rng);
                let p = pod(
                    &mut rng,
                    &owner,
                    &pod_name,
                    &node,
                    &created,
                    state,
                    spec.pod_bytes,
                );
                if let Ok(o) = st.create(PODS, Some(ns), p) {
                    if state != PodState::Ready && rng.chance(60) {
                        let (reason, msg) = match state {
                            PodState::CrashLoop => (
                                "BackOff",
                                format!(
                                    "Back-off restarting failed container {app} in pod {pod_name}"
                                ),
                            ),
                            PodState::Pending => (
                                "Scheduled",
                                format!("Successfully assigned {ns}/{pod_name} to {node}"),
                            ),
                            PodState::NotReady => (
                                "Unhealthy",
                                "Readiness probe failed: HTTP probe failed with statuscode: 503"
                                    .to_string(),
                            ),
                            _ => ("Failed", "Error: container exited with code 1".to_string()),
                        };
                        let _ = st.create(
                            EVENTS,
                            Some(ns),
                            event(
                                ns,
                                "Pod",
                                &pod_name,
                                &uid_of(&o),
                                reason,
                                &msg,
                                state != PodState::Pending,
                                &created,
                            ),
                        );
                    }
                }
                pod_index += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn seeded(seed: u64, pods: usize) -> Store {
        let mut st = Store::new(100_000);
        st.clock = || EPOCH;
        seed_into(&mut st, seed, pods);
        st
    }

    fn seed_into(st: &mut Store, seed: u64, pods: usize) {
        super::seed(
            st,
            &SeedSpec {
                seed,
                namespaces: 3,
                pods,
                pod_bytes: 3000,
            },
        );
    }

    fn dump(st: &Store, res: usize) -> Vec<Vec<u8>> {
        st.iter(res).map(|(_, o)| o.bytes.to_vec()).collect()
    }

    #[test]
    fn seeding_is_deterministic_for_a_seed() {
        let (a, b) = (seeded(7, 40), seeded(7, 40));
        assert_eq!(a.count(PODS), 40);
        assert_eq!(dump(&a, PODS), dump(&b, PODS));
        assert_eq!(dump(&a, DEPLOYMENTS), dump(&b, DEPLOYMENTS));
        assert_ne!(dump(&a, PODS), dump(&seeded(8, 40), PODS));
    }

    #[test]
    fn timestamps_are_offsets_back_from_the_time_of_seeding() {
        // Two clocks a year apart: every creation time moves with the clock,
        // and none is older than 60 days or in the future.
        let later = || EPOCH + 365 * 86_400;
        let mut st = Store::new(100_000);
        st.clock = later;
        seed_into(&mut st, 7, 40);
        let early = seeded(7, 40);
        for res in [PODS, DEPLOYMENTS, NODES, NAMESPACES] {
            let times = |st: &Store, now: u64| -> Vec<String> {
                st.iter(res)
                    .map(|(_, o)| {
                        let t = o.value()["metadata"]["creationTimestamp"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string();
                        assert!(
                            t >= rfc3339(now - 60 * 86_400) && t <= rfc3339(now),
                            "{t} is not within the 60 days before {}",
                            rfc3339(now)
                        );
                        t
                    })
                    .collect()
            };
            let (a, b) = (times(&early, EPOCH), times(&st, later()));
            assert!(!a.is_empty());
            assert_ne!(a, b, "resource {res}");
        }
    }

    #[test]
    fn pods_are_realistic_and_owned_by_their_replicasets() {
        let st = seeded(1, 60);
        let mut sizes = Vec::new();
        for (_, o) in st.iter(PODS) {
            sizes.push(o.bytes.len());
            let v = o.value();
            for k in ["app", "tier", "pod-template-hash"] {
                assert!(o.meta.labels.contains_key(k), "label {k}");
            }
            assert!(v["metadata"]["managedFields"]
                .as_array()
                .is_some_and(|m| !m.is_empty()));
            assert!(v["spec"]["containers"][0]["resources"]["requests"].is_object());
            assert!(v["spec"]["volumes"]
                .as_array()
                .is_some_and(|a| !a.is_empty()));
            assert!(v["spec"]["tolerations"]
                .as_array()
                .is_some_and(|a| !a.is_empty()));
            assert!(v["status"]["conditions"]
                .as_array()
                .is_some_and(|a| a.len() >= 4));
            assert!(v["status"]["containerStatuses"].is_array());
            let owner = &v["metadata"]["ownerReferences"][0];
            assert_eq!(owner["kind"], "ReplicaSet");
            let rs = st
                .get(
                    REPLICASETS,
                    &o.meta.namespace,
                    owner["name"].as_str().unwrap(),
                )
                .expect("owner exists");
            assert_eq!(rs.value()["metadata"]["uid"], owner["uid"]);
            assert_eq!(
                rs.meta.labels.get("pod-template-hash"),
                o.meta.labels.get("pod-template-hash")
            );
        }
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(
            *min >= 2850 && *max <= 3150,
            "pod sizes {min}..{max} for a 3000-byte target"
        );
        assert!(st.iter(PODS).any(|(k, o)| k.0 == "default"
            && o.meta.labels.get("app").map(String::as_str) == Some("web")));
        assert!(
            st.count(NODES) >= 3
                && st.count(NAMESPACES) == 3
                && st.count(SERVICES) > 0
                && st.count(WIDGETS) == 6
        );
    }

    #[test]
    fn reseeding_replaces_pods_and_seeded_workloads() {
        let mut st = seeded(1, 40);
        st.create(PODS, Some("default"), json!({"metadata": {"name": "mine"}}))
            .unwrap();
        st.create(
            DEPLOYMENTS,
            Some("default"),
            json!({"metadata": {"name": "mine"}}),
        )
        .unwrap();
        seed_into(&mut st, 2, 25);
        assert_eq!(st.count(PODS), 25);
        assert!(
            st.get(DEPLOYMENTS, "default", "mine").is_some(),
            "unseeded objects stay"
        );
        assert!(
            st.get(PODS, "default", "mine").is_none(),
            "every pod is replaced"
        );
    }
}
