//! Typed query parameters of the Kubernetes API verbs (`metav1.ListOptions`,
//! `CreateOptions`, `PatchOptions`, `DeleteOptions`), turned into query pairs
//! by the [`Request`](super::Request) builder. Unset fields are omitted, as
//! client-go's parameter codec does.

use super::scan::quote;

/// Parameters of a LIST (`GET` on a collection).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListParams {
    /// `labelSelector`, e.g. `app=web,tier!=db,env in (a,b)`.
    pub label_selector: Option<String>,
    /// `fieldSelector`, e.g. `metadata.name=x,status.phase!=Running`.
    pub field_selector: Option<String>,
    /// `limit`: page size (0 or `None` means no paging).
    pub limit: Option<u32>,
    /// `continue`: the token from the previous page.
    pub continue_token: Option<String>,
    /// `resourceVersion` (`"0"` = any version, served from the cache).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (`NotOlderThan`, `Exact`).
    pub resource_version_match: Option<String>,
    /// `timeoutSeconds` on the server side.
    pub timeout_seconds: Option<u32>,
}

/// Parameters of a WATCH (`GET` with `watch=true`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchParams {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `resourceVersion` to start from (events after it are delivered).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (`NotOlderThan` with `sendInitialEvents`).
    pub resource_version_match: Option<String>,
    /// `timeoutSeconds`: the server closes the watch cleanly after this long.
    pub timeout_seconds: Option<u32>,
    /// `allowWatchBookmarks`: ask for BOOKMARK events.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents`: stream the current state as ADDED events first,
    /// ended by a bookmark annotated `k8s.io/initial-events-end`.
    pub send_initial_events: Option<bool>,
}

/// Parameters of a create (`POST`) or replace (`PUT`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostParams {
    /// `dryRun=All`: validate and admit, but persist nothing.
    pub dry_run: bool,
    /// `fieldManager`: who owns the fields set.
    pub field_manager: Option<String>,
}

/// Parameters of a `PATCH`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchParams {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager` (required by server-side apply).
    pub field_manager: Option<String>,
    /// `force`: take ownership of conflicting fields (server-side apply only).
    pub force: bool,
}

/// `propagationPolicy` of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// Dependents are left alone.
    Orphan,
    /// Dependents are deleted in the background (the server default for most).
    Background,
    /// The object waits until its dependents are deleted.
    Foreground,
}

impl PropagationPolicy {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            PropagationPolicy::Orphan => "Orphan",
            PropagationPolicy::Background => "Background",
            PropagationPolicy::Foreground => "Foreground",
        }
    }
}

/// Parameters of a `DELETE`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteParams {
    /// `propagationPolicy`.
    pub propagation_policy: Option<PropagationPolicy>,
    /// `gracePeriodSeconds` (0 = immediately).
    pub grace_period_seconds: Option<u32>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Delete only the object with this uid and/or resourceVersion (a 409
    /// `Conflict` otherwise): guards against deleting an object that was
    /// re-created or changed since it was read.
    pub preconditions: Option<Preconditions>,
}

/// `DeleteOptions.preconditions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// The object's `metadata.uid`.
    pub uid: Option<String>,
    /// The object's `metadata.resourceVersion`.
    pub resource_version: Option<String>,
}

/// The four patch flavours and their content types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// JSON merge patch (RFC 7386).
    Merge,
    /// Kubernetes strategic merge patch (built-in types only).
    Strategic,
    /// JSON patch (RFC 6902): a list of operations.
    Json,
    /// Server-side apply (requires a field manager).
    Apply,
}

impl PatchType {
    /// The `Content-Type` the API server expects for this patch.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Json => "application/json-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

fn push_opt(out: &mut Vec<(String, String)>, key: &str, v: &Option<String>) {
    if let Some(v) = v {
        out.push((key.to_string(), v.clone()));
    }
}

fn push_num(out: &mut Vec<(String, String)>, key: &str, v: Option<u32>) {
    if let Some(v) = v {
        out.push((key.to_string(), v.to_string()));
    }
}

impl ListParams {
    /// The query pairs, in a fixed order.
    pub fn to_query(&self) -> Vec<(String, String)> {
        let mut q = Vec::new();
        push_opt(&mut q, "labelSelector", &self.label_selector);
        push_opt(&mut q, "fieldSelector", &self.field_selector);
        if let Some(l) = self.limit.filter(|l| *l > 0) {
            q.push(("limit".into(), l.to_string()));
        }
        push_opt(&mut q, "continue", &self.continue_token);
        push_opt(&mut q, "resourceVersion", &self.resource_version);
        push_opt(&mut q, "resourceVersionMatch", &self.resource_version_match);
        push_num(&mut q, "timeoutSeconds", self.timeout_seconds);
        q
    }
}

impl WatchParams {
    /// The query pairs (without `watch=true`, which the builder adds).
    pub fn to_query(&self) -> Vec<(String, String)> {
        let mut q = Vec::new();
        push_opt(&mut q, "labelSelector", &self.label_selector);
        push_opt(&mut q, "fieldSelector", &self.field_selector);
        push_opt(&mut q, "resourceVersion", &self.resource_version);
        push_opt(&mut q, "resourceVersionMatch", &self.resource_version_match);
        push_num(&mut q, "timeoutSeconds", self.timeout_seconds);
        if self.allow_watch_bookmarks {
            q.push(("allowWatchBookmarks".into(), "true".into()));
        }
        if let Some(s) = self.send_initial_events {
            q.push(("sendInitialEvents".into(), s.to_string()));
        }
        q
    }
}

impl PostParams {
    /// The query pairs.
    pub fn to_query(&self) -> Vec<(String, String)> {
        let mut q = Vec::new();
        if self.dry_run {
            q.push(("dryRun".into(), "All".into()));
        }
        push_opt(&mut q, "fieldManager", &self.field_manager);
        q
    }
}

impl PatchParams {
    /// The query pairs.
    pub fn to_query(&self) -> Vec<(String, String)> {
        let mut q = Vec::new();
        if self.dry_run {
            q.push(("dryRun".into(), "All".into()));
        }
        push_opt(&mut q, "fieldManager", &self.field_manager);
        if self.force {
            q.push(("force".into(), "true".into()));
        }
        q
    }

    /// Server-side apply needs a field manager; force only applies to it.
    pub fn validate(&self, patch: PatchType) -> Result<(), super::Error> {
        if patch == PatchType::Apply && self.field_manager.as_deref().unwrap_or("").is_empty() {
            return Err(super::Error::invalid_request(
                "server-side apply needs a field manager (`fieldManager` in JS, `PatchParams::field_manager` in Rust)",
            ));
        }
        if self.force && patch != PatchType::Apply {
            return Err(super::Error::invalid_request(
                "`force` is only valid with server-side apply (the `apply` patch type)",
            ));
        }
        Ok(())
    }
}

impl DeleteParams {
    /// The request body: a `DeleteOptions` with every option, when there
    /// are preconditions (which only a body carries; the API server then
    /// ignores the query, so nothing goes there).
    pub fn to_body(&self) -> Option<Vec<u8>> {
        let pre = self.preconditions.as_ref()?;
        let mut members = vec![
            ("kind", quote("DeleteOptions")),
            ("apiVersion", quote("v1")),
        ];
        if let Some(p) = self.propagation_policy {
            members.push(("propagationPolicy", quote(p.as_str())));
        }
        if let Some(g) = self.grace_period_seconds {
            members.push(("gracePeriodSeconds", g.to_string().into_bytes()));
        }
        if self.dry_run {
            members.push(("dryRun", br#"["All"]"#.to_vec()));
        }
        let pre: Vec<(&str, Vec<u8>)> = [
            ("uid", &pre.uid),
            ("resourceVersion", &pre.resource_version),
        ]
        .into_iter()
        .filter_map(|(name, v)| Some((name, quote(v.as_deref()?))))
        .collect();
        members.push(("preconditions", json_object(&pre)));
        Some(json_object(&members))
    }

    /// The query pairs.
    pub fn to_query(&self) -> Vec<(String, String)> {
        let mut q = Vec::new();
        if let Some(p) = self.propagation_policy {
            q.push(("propagationPolicy".into(), p.as_str().into()));
        }
        push_num(&mut q, "gracePeriodSeconds", self.grace_period_seconds);
        if self.dry_run {
            q.push(("dryRun".into(), "All".into()));
        }
        q
    }
}

/// A JSON object of members whose values are JSON text already.
fn json_object(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut out = b"{".to_vec();
    for (i, (name, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&quote(name));
        out.push(b':');
        out.extend_from_slice(value);
    }
    out.push(b'}');
    out
}
