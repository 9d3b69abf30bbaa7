//! Deterministic, realistic seed data and churn.

use serde_json::{json, Value};

use crate::resources::by_plural;
use crate::state::{rfc3339, State};

/// A small deterministic generator (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

const APPS: &[&str] = &[
    "web", "api", "worker", "cache", "db", "queue", "auth", "search",
];
const TIERS: &[&str] = &["frontend", "backend", "data"];
const PHASES: &[&str] = &[
    "Running",
    "Running",
    "Running",
    "Running",
    "Pending",
    "Succeeded",
    "Failed",
];

fn hex(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| char::from(b"0123456789abcdef"[rng.below(16) as usize]))
        .collect()
}

/// A pod of roughly `target_bytes` of JSON (padded through env and annotations).
pub fn pod(rng: &mut Rng, ns: &str, name: &str, app: &str, target_bytes: usize) -> Value {
    let tier = TIERS[rng.below(TIERS.len() as u64) as usize];
    let phase = PHASES[rng.below(PHASES.len() as u64) as usize];
    let ready = phase == "Running" && rng.below(10) > 0;
    let node = format!("node-{}", rng.below(8));
    let hash = hex(rng, 10);
    let started = rfc3339(1_767_225_600 + rng.below(86_400 * 30));
    let mut env = Vec::new();
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns,
            "labels": {"app": app, "tier": tier, "pod-template-hash": hash},
            "annotations": {"kubewasm.dev/seeded": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-{hash}"), "uid": format!("rs-{app}-{hash}"), "controller": true, "blockOwnerDeletion": true}],
            "creationTimestamp": started,
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": started, "fieldsType": "FieldsV1",
              "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}}, "f:ownerReferences": {}},
                "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:ports": {}, "f:resources": {}}}, "f:dnsPolicy": {}, "f:restartPolicy": {}}}}]
        },
        "spec": {
            "nodeName": node, "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler",
            "containers": [{
                "name": "main", "image": format!("registry.example.com/{app}:1.{}.{}", rng.below(20), rng.below(10)),
                "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
                "env": []
            }],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}, {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}, {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
        },
        "status": {
            "phase": phase, "hostIP": format!("10.0.0.{}", rng.below(250)), "podIP": format!("10.244.{}.{}", rng.below(250), rng.below(250)),
            "startTime": started, "qosClass": "Burstable",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": started},
                {"type": "Ready", "status": if ready {"True"} else {"False"}, "lastProbeTime": null, "lastTransitionTime": started},
                {"type": "ContainersReady", "status": if ready {"True"} else {"False"}, "lastProbeTime": null, "lastTransitionTime": started},
                {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": started}
            ],
            "containerStatuses": [{"name": "main", "ready": ready, "restartCount": rng.below(3), "started": ready,
                "image": format!("registry.example.com/{app}:1.0"), "imageID": format!("registry.example.com/{app}@sha256:{}", hex(rng, 64)),
                "containerID": format!("containerd://{}", hex(rng, 64)),
                "state": if ready { json!({"running": {"startedAt": started}}) } else { json!({"waiting": {"reason": "ContainerCreating"}}) }}]
        }
    });
    let mut i = 0;
    while serde_json::to_vec(&p)
        .map(|b| b.len())
        .unwrap_or(usize::MAX)
        < target_bytes
        && i < 200
    {
        env.push(json!({"name": format!("SETTING_{i}"), "value": hex(rng, 24)}));
        p["spec"]["containers"][0]["env"] = Value::Array(env.clone());
        i += 1;
    }
    p
}

/// Seed namespaces, nodes, deployments, replicasets, services, pods, events and widgets.
pub fn seed(st: &mut State, seed: u64, namespaces: usize, pods: usize, pod_bytes: usize) {
    let mut rng = Rng(seed);
    let res = |p: &str| by_plural(p).unwrap_or(0);
    for n in 0..8 {
        let _ = st.create(res("nodes"), None, json!({"metadata": {"name": format!("node-{n}"), "labels": {"kubernetes.io/hostname": format!("node-{n}")}}, "status": {"conditions": [{"type": "Ready", "status": "True"}], "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}));
    }
    let nss: Vec<String> = (0..namespaces.max(1))
        .map(|i| {
            if i == 0 {
                "default".to_string()
            } else {
                format!("team-{i}")
            }
        })
        .collect();
    for ns in &nss {
        let _ = st.create(res("namespaces"), None, json!({"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}, "status": {"phase": "Active"}}));
        for app in APPS.iter().take(3) {
            let _ = st.create(res("deployments"), Some(ns), json!({"metadata": {"name": app, "labels": {"app": app}}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": app}}, "template": {"metadata": {"labels": {"app": app}}}}, "status": {"replicas": 3, "readyReplicas": 3}}));
            let _ = st.create(res("replicasets"), Some(ns), json!({"metadata": {"name": format!("{app}-{}", hex(&mut rng, 10)), "labels": {"app": app}}, "spec": {"replicas": 3}, "status": {"replicas": 3}}));
            let _ = st.create(res("services"), Some(ns), json!({"metadata": {"name": app, "labels": {"app": app}}, "spec": {"selector": {"app": app}, "ports": [{"port": 80, "targetPort": 8080}], "type": "ClusterIP"}}));
        }
        let _ = st.create(res("widgets"), Some(ns), json!({"metadata": {"name": "sample"}, "spec": {"size": rng.below(10), "color": "blue"}, "status": {"state": "Ready"}}));
    }
    for i in 0..pods {
        let ns = &nss[i % nss.len()];
        let app = APPS[rng.below(APPS.len() as u64) as usize];
        let name = format!("{app}-{}-{}", hex(&mut rng, 5), i);
        let p = pod(&mut rng, ns, &name, app, pod_bytes);
        let _ = st.create(res("pods"), Some(ns), p);
    }
}

/// One churn write: create, update (status flip) or delete a pod, or an event.
pub fn churn_step(st: &mut State, rng: &mut Rng) {
    let pods = by_plural("pods").unwrap_or(0);
    let events = by_plural("events").unwrap_or(0);
    let n = st.objects[pods].len() as u64;
    let roll = rng.below(100);
    if n < 5 || roll < 20 {
        let ns = if n == 0 {
            "default".to_string()
        } else {
            st.objects[pods]
                .keys()
                .nth(rng.below(n) as usize)
                .map(|k| k.0.clone())
                .unwrap_or_else(|| "default".into())
        };
        let app = APPS[rng.below(APPS.len() as u64) as usize];
        let name = format!("{app}-{}-c", hex(rng, 8));
        let p = pod(rng, &ns, &name, app, 2500);
        let _ = st.create(pods, Some(&ns), p);
    } else if roll < 85 {
        let Some(((ns, name), obj)) = st.objects[pods]
            .iter()
            .nth(rng.below(n) as usize)
            .map(|(k, v)| (k.clone(), v.clone()))
        else {
            return;
        };
        let mut v = (*obj.value).clone();
        let ready = rng.below(4) > 0;
        v["status"]["phase"] = json!(if ready {
            "Running"
        } else {
            PHASES[rng.below(PHASES.len() as u64) as usize]
        });
        if let Some(c) = v.pointer_mut("/status/conditions/1/status") {
            *c = json!(if ready { "True" } else { "False" });
        }
        if let Some(c) = v.pointer_mut("/status/containerStatuses/0/restartCount") {
            *c = json!(c.as_u64().unwrap_or(0) + u64::from(!ready));
        }
        if let Some(m) = v.get_mut("metadata") {
            m["resourceVersion"] = json!("");
        }
        let _ = st.update(pods, &ns, &name, v);
        if !ready {
            let _ = st.create(events, Some(&ns), json!({"metadata": {"generateName": format!("{name}.")}, "involvedObject": {"kind": "Pod", "name": name, "namespace": ns}, "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning", "count": 1}));
        }
    } else {
        let Some((ns, name)) = st.objects[pods].keys().nth(rng.below(n) as usize).cloned() else {
            return;
        };
        let _ = st.delete(pods, &ns, &name);
    }
}
