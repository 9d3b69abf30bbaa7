//! The table of resources the sim serves, with the field labels each one
//! supports in field selectors (as the API server's field-label conversion
//! does: anything else is a 400).

/// One served resource.
pub struct Resource {
    /// API group ("" for core).
    pub group: &'static str,
    /// API version.
    pub version: &'static str,
    /// Plural resource name (the URL segment).
    pub plural: &'static str,
    /// Singular name.
    pub singular: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// kubectl short names.
    pub short_names: &'static [&'static str],
    /// Subresources served (`status`, `scale`).
    pub subresources: &'static [&'static str],
    /// Field labels beyond metadata.name / metadata.namespace.
    pub fields: &'static [&'static str],
}

impl Resource {
    /// `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether `label` may be used in a field selector on this resource.
    pub fn supports_field(&self, label: &str) -> bool {
        label == "metadata.name" || label == "metadata.namespace" || self.fields.contains(&label)
    }
}

#[allow(clippy::too_many_arguments)]
const fn r(
    group: &'static str,
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    subresources: &'static [&'static str],
    fields: &'static [&'static str],
) -> Resource {
    Resource {
        group,
        version: "v1",
        plural,
        singular,
        kind,
        namespaced,
        short_names,
        subresources,
        fields,
    }
}

const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];
const EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// Every resource served, in a fixed order (indexes are used as ids).
pub static RESOURCES: &[Resource] = &[
    r(
        "",
        "pods",
        "pod",
        "Pod",
        true,
        &["po"],
        &["status", "log"],
        POD_FIELDS,
    ),
    r(
        "",
        "services",
        "service",
        "Service",
        true,
        &["svc"],
        &["status"],
        &[],
    ),
    r(
        "",
        "configmaps",
        "configmap",
        "ConfigMap",
        true,
        &["cm"],
        &[],
        &[],
    ),
    r("", "secrets", "secret", "Secret", true, &[], &[], &["type"]),
    r(
        "",
        "namespaces",
        "namespace",
        "Namespace",
        false,
        &["ns"],
        &["status"],
        &["status.phase"],
    ),
    r(
        "",
        "nodes",
        "node",
        "Node",
        false,
        &["no"],
        &["status"],
        &["spec.unschedulable"],
    ),
    r(
        "",
        "events",
        "event",
        "Event",
        true,
        &["ev"],
        &[],
        EVENT_FIELDS,
    ),
    r(
        "",
        "endpoints",
        "endpoints",
        "Endpoints",
        true,
        &["ep"],
        &[],
        &[],
    ),
    r(
        "",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        true,
        &["sa"],
        &[],
        &[],
    ),
    r(
        "apps",
        "deployments",
        "deployment",
        "Deployment",
        true,
        &["deploy"],
        &["status", "scale"],
        &[],
    ),
    r(
        "apps",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        true,
        &["rs"],
        &["status", "scale"],
        &["status.replicas"],
    ),
    r(
        "apps",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        true,
        &["sts"],
        &["status", "scale"],
        &[],
    ),
    r(
        "apps",
        "daemonsets",
        "daemonset",
        "DaemonSet",
        true,
        &["ds"],
        &["status"],
        &[],
    ),
    r(
        "demo.kubewasm.dev",
        "widgets",
        "widget",
        "Widget",
        true,
        &["wd"],
        &["status"],
        &[],
    ),
];

/// The resource served at `group/version/plural`.
pub fn find(group: &str, version: &str, plural: &str) -> Option<usize> {
    RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The resource with this plural name (unique across groups here).
pub fn by_plural(plural: &str) -> Option<usize> {
    RESOURCES.iter().position(|r| r.plural == plural)
}

/// Well-known resource indexes, for seeding and churn.
pub mod ids {
    /// pods
    pub const PODS: usize = 0;
    /// services
    pub const SERVICES: usize = 1;
    /// configmaps
    pub const CONFIGMAPS: usize = 2;
    /// namespaces
    pub const NAMESPACES: usize = 4;
    /// nodes
    pub const NODES: usize = 5;
    /// events
    pub const EVENTS: usize = 6;
    /// serviceaccounts
    pub const SERVICEACCOUNTS: usize = 8;
    /// deployments
    pub const DEPLOYMENTS: usize = 9;
    /// replicasets
    pub const REPLICASETS: usize = 10;
    /// widgets
    pub const WIDGETS: usize = 13;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_the_table() {
        for (id, plural) in [
            (ids::PODS, "pods"),
            (ids::SERVICES, "services"),
            (ids::CONFIGMAPS, "configmaps"),
            (ids::NAMESPACES, "namespaces"),
            (ids::NODES, "nodes"),
            (ids::EVENTS, "events"),
            (ids::SERVICEACCOUNTS, "serviceaccounts"),
            (ids::DEPLOYMENTS, "deployments"),
            (ids::REPLICASETS, "replicasets"),
            (ids::WIDGETS, "widgets"),
        ] {
            assert_eq!(by_plural(plural), Some(id), "{plural}");
        }
        assert_eq!(find("apps", "v1", "deployments"), Some(ids::DEPLOYMENTS));
        assert_eq!(find("", "v1", "deployments"), None);
        assert!(RESOURCES[ids::PODS].supports_field("spec.nodeName"));
        assert!(!RESOURCES[ids::SERVICES].supports_field("spec.nodeName"));
    }
}
