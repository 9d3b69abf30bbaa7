//! Resource identities and the built-in table of common resources.

/// Group, version and kind (`apps/v1, Kind=Deployment`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersionKind {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl GroupVersionKind {
    /// Parse an `apiVersion` (`v1`, `apps/v1`) and a kind.
    pub fn from_api_version(api_version: &str, kind: &str) -> Self {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        GroupVersionKind {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }
}

/// Everything needed to address a resource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ApiResource {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural name (the URL segment).
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Kind.
    pub kind: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Short names (`po`, `deploy`).
    pub short_names: Vec<String>,
    /// Verbs the server allows.
    pub verbs: Vec<String>,
    /// Subresources (`status`, `scale`).
    pub subresources: Vec<String>,
    /// Whether this version is the group's preferred one.
    pub preferred: bool,
}

impl ApiResource {
    /// A resource known by group, version and plural name only (a CRD not
    /// looked up through discovery): no kind, every verb allowed.
    pub fn new(group: &str, version: &str, plural: &str, namespaced: bool) -> Self {
        ApiResource {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            namespaced,
            preferred: true,
            ..Default::default()
        }
    }

    /// A built-in resource by plural, singular, short name or kind
    /// (`pods`, `po`, `Pod`, `deployments.apps`).
    pub fn builtin(name: &str) -> Option<Self> {
        super::RestMapper::new(builtin_resources())
            .find(name)
            .cloned()
    }

    /// `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The GVK.
    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind {
            group: self.group.clone(),
            version: self.version.clone(),
            kind: self.kind.clone(),
        }
    }

    /// Whether the server allows `verb` (resources without verb data allow all).
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.is_empty() || self.verbs.iter().any(|v| v == verb)
    }
}

/// One row of the built-in table: group, version, plural, singular, kind,
/// namespaced, short names, subresources.
type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    &'static [&'static str],
);

const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The common resources, known without discovery.
pub fn builtin_resources() -> Vec<ApiResource> {
    let table: &[Row] = &[
        (
            "",
            "v1",
            "pods",
            "pod",
            "Pod",
            true,
            &["po"],
            &["status", "log", "eviction"],
        ),
        (
            "",
            "v1",
            "services",
            "service",
            "Service",
            true,
            &["svc"],
            &["status"],
        ),
        (
            "",
            "v1",
            "endpoints",
            "endpoints",
            "Endpoints",
            true,
            &["ep"],
            &[],
        ),
        (
            "",
            "v1",
            "configmaps",
            "configmap",
            "ConfigMap",
            true,
            &["cm"],
            &[],
        ),
        ("", "v1", "secrets", "secret", "Secret", true, &[], &[]),
        (
            "",
            "v1",
            "namespaces",
            "namespace",
            "Namespace",
            false,
            &["ns"],
            &["status", "finalize"],
        ),
        (
            "",
            "v1",
            "nodes",
            "node",
            "Node",
            false,
            &["no"],
            &["status"],
        ),
        ("", "v1", "events", "event", "Event", true, &["ev"], &[]),
        (
            "",
            "v1",
            "serviceaccounts",
            "serviceaccount",
            "ServiceAccount",
            true,
            &["sa"],
            &["token"],
        ),
        (
            "",
            "v1",
            "persistentvolumes",
            "persistentvolume",
            "PersistentVolume",
            false,
            &["pv"],
            &["status"],
        ),
        (
            "",
            "v1",
            "persistentvolumeclaims",
            "persistentvolumeclaim",
            "PersistentVolumeClaim",
            true,
            &["pvc"],
            &["status"],
        ),
        (
            "apps",
            "v1",
            "deployments",
            "deployment",
            "Deployment",
            true,
            &["deploy"],
            &["status", "scale"],
        ),
        (
            "apps",
            "v1",
            "replicasets",
            "replicaset",
            "ReplicaSet",
            true,
            &["rs"],
            &["status", "scale"],
        ),
        (
            "apps",
            "v1",
            "statefulsets",
            "statefulset",
            "StatefulSet",
            true,
            &["sts"],
            &["status", "scale"],
        ),
        (
            "apps",
            "v1",
            "daemonsets",
            "daemonset",
            "DaemonSet",
            true,
            &["ds"],
            &["status"],
        ),
        ("batch", "v1", "jobs", "job", "Job", true, &[], &["status"]),
        (
            "batch",
            "v1",
            "cronjobs",
            "cronjob",
            "CronJob",
            true,
            &["cj"],
            &["status"],
        ),
        (
            "networking.k8s.io",
            "v1",
            "ingresses",
            "ingress",
            "Ingress",
            true,
            &["ing"],
            &["status"],
        ),
    ];
    table
        .iter()
        .map(|(g, v, p, s, k, ns, short, sub)| ApiResource {
            group: (*g).into(),
            version: (*v).into(),
            plural: (*p).into(),
            singular: (*s).into(),
            kind: (*k).into(),
            namespaced: *ns,
            short_names: short.iter().map(|x| (*x).into()).collect(),
            verbs: ALL_VERBS.iter().map(|x| (*x).into()).collect(),
            subresources: sub.iter().map(|x| (*x).into()).collect(),
            preferred: true,
        })
        .collect()
}
