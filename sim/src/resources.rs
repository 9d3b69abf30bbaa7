//! The resources the sim serves.

/// One served resource.
pub struct Resource {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub subresources: &'static [&'static str],
}

impl Resource {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

macro_rules! r {
    ($g:expr, $v:expr, $p:expr, $s:expr, $k:expr, $ns:expr, $short:expr, $sub:expr) => {
        Resource {
            group: $g,
            version: $v,
            plural: $p,
            singular: $s,
            kind: $k,
            namespaced: $ns,
            short_names: $short,
            subresources: $sub,
        }
    };
}

pub static RESOURCES: &[Resource] = &[
    r!("", "v1", "pods", "pod", "Pod", true, &["po"], &["status"]),
    r!(
        "",
        "v1",
        "services",
        "service",
        "Service",
        true,
        &["svc"],
        &["status"]
    ),
    r!(
        "",
        "v1",
        "configmaps",
        "configmap",
        "ConfigMap",
        true,
        &["cm"],
        &[]
    ),
    r!("", "v1", "secrets", "secret", "Secret", true, &[], &[]),
    r!(
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        false,
        &["ns"],
        &["status"]
    ),
    r!(
        "",
        "v1",
        "nodes",
        "node",
        "Node",
        false,
        &["no"],
        &["status"]
    ),
    r!("", "v1", "events", "event", "Event", true, &["ev"], &[]),
    r!(
        "",
        "v1",
        "endpoints",
        "endpoints",
        "Endpoints",
        true,
        &["ep"],
        &[]
    ),
    r!(
        "",
        "v1",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        true,
        &["sa"],
        &[]
    ),
    r!(
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        true,
        &["deploy"],
        &["status", "scale"]
    ),
    r!(
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        true,
        &["rs"],
        &["status", "scale"]
    ),
    r!(
        "apps",
        "v1",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        true,
        &["sts"],
        &["status", "scale"]
    ),
    r!(
        "apps",
        "v1",
        "daemonsets",
        "daemonset",
        "DaemonSet",
        true,
        &["ds"],
        &["status"]
    ),
    r!(
        "demo.kubewasm.dev",
        "v1",
        "widgets",
        "widget",
        "Widget",
        true,
        &["wd"],
        &["status"]
    ),
];

pub fn find(group: &str, version: &str, plural: &str) -> Option<usize> {
    RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.plural == plural)
}

pub fn by_plural(plural: &str) -> Option<usize> {
    RESOURCES.iter().position(|r| r.plural == plural)
}
