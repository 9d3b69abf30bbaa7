//! The request builder: verb, API path (`/api/v1` or `/apis/{group}/{version}`),
//! namespace, resource, name, subresource, query parameters and body.
//!
//! Path segments and query values are percent-encoded here, once: selector
//! syntax (`,` `!` `=` `(` `)` spaces) must reach the server intact, so query
//! values are encoded the way Go's `url.QueryEscape` does (space → `+`,
//! everything but `A–Z a–z 0–9 - _ . ~` as `%XX`).
use std::rc::Rc;
use std::time::Duration;

use serde::Serialize;

use super::params::{DeleteParams, ListParams, PatchParams, PatchType, PostParams, WatchParams};
use super::Error;

/// HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// GET (get, list, watch).
    Get,
    /// POST (create).
    Post,
    /// PUT (replace).
    Put,
    /// PATCH.
    Patch,
    /// DELETE (delete, delete collection).
    Delete,
}

impl Method {
    /// The method name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// One API request, built step by step and sent with
/// [`Client`](super::Client). Cheap to clone (the body is shared).
///
/// ```
/// use kubewasm::rest::{ListParams, Request};
/// let req = Request::get()
///     .group_version("apps", "v1")
///     .namespace("default")
///     .resource("deployments")
///     .list_params(&ListParams {
///         label_selector: Some("app in (web,api),tier!=db".into()),
///         ..Default::default()
///     });
/// assert_eq!(
///     req.path_and_query().unwrap(),
///     "/apis/apps/v1/namespaces/default/deployments?labelSelector=app+in+%28web%2Capi%29%2Ctier%21%3Ddb"
/// );
/// ```
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    raw_path: Option<String>,
    group: String,
    version: String,
    namespace: Option<String>,
    resource: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    body: Option<Rc<[u8]>>,
    content_type: Option<String>,
    watch: bool,
    retry_non_idempotent: bool,
    server_errors_to_caller: bool,
    network_errors_to_caller: bool,
    waits_to_caller: bool,
    timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    error: Option<String>,
}

impl Request {
    /// A request with `method`, for the core group `v1` until told otherwise.
    pub fn new(method: Method) -> Self {
        Request {
            method,
            raw_path: None,
            group: String::new(),
            version: "v1".into(),
            namespace: None,
            resource: None,
            name: None,
            subresource: None,
            query: Vec::new(),
            headers: Vec::new(),
            body: None,
            content_type: None,
            watch: false,
            retry_non_idempotent: false,
            server_errors_to_caller: false,
            network_errors_to_caller: false,
            waits_to_caller: false,
            timeout: None,
            idle_timeout: None,
            error: None,
        }
    }

    /// `GET`.
    pub fn get() -> Self {
        Self::new(Method::Get)
    }
    /// `POST`.
    pub fn post() -> Self {
        Self::new(Method::Post)
    }
    /// `PUT`.
    pub fn put() -> Self {
        Self::new(Method::Put)
    }
    /// `PATCH`.
    pub fn patch() -> Self {
        Self::new(Method::Patch)
    }
    /// `DELETE`.
    pub fn delete() -> Self {
        Self::new(Method::Delete)
    }

    /// Use a literal path (e.g. `/api`, `/apis`, `/version`) instead of the
    /// resource path; it is appended to the base URL as given (it must start
    /// with `/` and is not re-encoded).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.raw_path = Some(path.into());
        self
    }

    /// Group and version: `("", "v1")` is the core API under `/api/v1`,
    /// anything else lives under `/apis/{group}/{version}`.
    #[must_use]
    pub fn group_version(mut self, group: impl Into<String>, version: impl Into<String>) -> Self {
        self.group = group.into();
        self.version = version.into();
        self
    }

    /// The core group (`/api/v1`), the default.
    #[must_use]
    pub fn core(self) -> Self {
        self.group_version("", "v1")
    }

    /// The namespace (`None` or empty = cluster scope / all namespaces).
    #[must_use]
    pub fn namespace(mut self, ns: impl Into<String>) -> Self {
        let ns = ns.into();
        self.namespace = (!ns.is_empty()).then_some(ns);
        self
    }

    /// Like [`namespace`](Self::namespace) with an optional value.
    #[must_use]
    pub fn namespace_opt(self, ns: Option<&str>) -> Self {
        match ns {
            Some(ns) => self.namespace(ns),
            None => Request {
                namespace: None,
                ..self
            },
        }
    }

    /// The resource (plural, lower case: `pods`, `deployments`, `widgets`).
    #[must_use]
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// The object name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A subresource (`status`, `scale`).
    #[must_use]
    pub fn subresource(mut self, sub: impl Into<String>) -> Self {
        self.subresource = Some(sub.into());
        self
    }

    /// Add one query parameter (appended, in order).
    #[must_use]
    pub fn query(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((key.into(), value.into()));
        self
    }

    /// Add several query parameters.
    #[must_use]
    pub fn query_pairs(mut self, pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        self.query.extend(pairs);
        self
    }

    /// LIST parameters.
    #[must_use]
    pub fn list_params(self, p: &ListParams) -> Self {
        self.query_pairs(p.to_query())
    }

    /// WATCH parameters; also marks the request as a watch (`watch=true`).
    #[must_use]
    pub fn watch_params(mut self, p: &WatchParams) -> Self {
        self.watch = true;
        self.query_pairs(p.to_query())
    }

    /// Create/replace parameters.
    #[must_use]
    pub fn post_params(self, p: &PostParams) -> Self {
        self.query_pairs(p.to_query())
    }

    /// Patch parameters and body type (sets the patch `Content-Type`); a
    /// server-side apply without field manager makes the request invalid.
    #[must_use]
    pub fn patch_params(mut self, p: &PatchParams, patch: PatchType) -> Self {
        if let Err(e) = p.validate(patch) {
            self.error = Some(e.to_string());
        }
        self.content_type = Some(patch.content_type().to_string());
        self.query_pairs(p.to_query())
    }

    /// Delete parameters.
    #[must_use]
    pub fn delete_params(self, p: &DeleteParams) -> Self {
        match p.to_body() {
            Some(body) => self.body(body, "application/json"),
            None => self.query_pairs(p.to_query()),
        }
    }

    /// Mark as a watch: `watch=true` is added and the response is read as a
    /// stream of events (see [`Client::watch`](super::Client::watch)).
    #[must_use]
    pub fn watch(mut self) -> Self {
        self.watch = true;
        self
    }

    /// An extra header for this request only.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A JSON body (serialized now; an unserializable value makes the request
    /// invalid). Keeps a `Content-Type` set by [`patch_params`](Self::patch_params).
    pub fn json<T: Serialize + ?Sized>(mut self, body: &T) -> Self {
        match serde_json::to_vec(body) {
            Ok(bytes) => self.body = Some(bytes.into()),
            Err(e) => self.error = Some(format!("unserializable body: {e}")),
        }
        if self.content_type.is_none() {
            self.content_type = Some("application/json".into());
        }
        self
    }

    /// A body of raw bytes with its content type.
    #[must_use]
    pub fn body(mut self, bytes: impl Into<Rc<[u8]>>, content_type: impl Into<String>) -> Self {
        self.body = Some(bytes.into());
        self.content_type = Some(content_type.into());
        self
    }

    /// Allow retries of this request even though its method is not
    /// idempotent (POST/PUT/PATCH/DELETE are never retried otherwise).
    #[must_use]
    pub fn retry_non_idempotent(mut self, yes: bool) -> Self {
        self.retry_non_idempotent = yes;
        self
    }

    /// Return a 5xx or a 429 at once unless the server asks for a retry
    /// (`Retry-After`), as client-go's rest client does. For a caller with a
    /// retry loop of its own (a reflector), whose status should show a server
    /// failure as it happens rather than after the client's retries, or one
    /// that can do without the answer (a discovery document of one group).
    #[must_use]
    pub fn server_errors_to_caller(mut self) -> Self {
        self.server_errors_to_caller = true;
        self
    }

    /// Return a failed connection at once too: client-go's rest client
    /// retries only connections reset mid-way, which a browser's `fetch`
    /// cannot tell from a refused one. For a caller with a retry loop of its
    /// own (a reflector), so that an unreachable server shows at once.
    #[must_use]
    pub fn network_errors_to_caller(mut self) -> Self {
        self.network_errors_to_caller = true;
        self
    }

    /// Return a server's request to wait (a 429, or a 5xx with
    /// `Retry-After`) at once too, instead of waiting and retrying: for a
    /// caller that waits at least that long in a retry loop of its own (a
    /// reflector), so that its status shows the refusal while it waits.
    #[must_use]
    pub fn waits_to_caller(mut self) -> Self {
        self.waits_to_caller = true;
        self
    }

    /// Whether [`waits_to_caller`](Self::waits_to_caller) was set.
    pub fn leaves_waits_to_caller(&self) -> bool {
        self.waits_to_caller
    }

    /// Whether [`network_errors_to_caller`](Self::network_errors_to_caller) was set.
    pub fn leaves_network_errors_to_caller(&self) -> bool {
        self.network_errors_to_caller
    }

    /// Whether [`server_errors_to_caller`](Self::server_errors_to_caller) was set.
    pub fn leaves_server_errors_to_caller(&self) -> bool {
        self.server_errors_to_caller
    }

    /// Override the configured request timeout for this request.
    #[must_use]
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }

    /// Override the configured watch idle timeout for this watch.
    #[must_use]
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.idle_timeout = Some(d);
        self
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }
    /// Whether this is a watch.
    pub fn is_watch(&self) -> bool {
        self.watch
    }
    /// The body, if any.
    pub fn body_bytes(&self) -> Option<&Rc<[u8]>> {
        self.body.as_ref()
    }
    /// The body's content type, if any.
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_deref()
    }
    /// Extra headers of this request.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }
    /// The per-request timeout override.
    pub fn timeout_override(&self) -> Option<Duration> {
        self.timeout
    }
    /// The per-request idle timeout override.
    pub fn idle_timeout_override(&self) -> Option<Duration> {
        self.idle_timeout
    }

    /// Whether the client may retry this request on 429/5xx/network errors:
    /// GET (get, list, establishing a watch) always (but see
    /// [`server_errors_to_caller`](Self::server_errors_to_caller)); others
    /// only by opt-in.
    pub fn is_retryable(&self) -> bool {
        self.method == Method::Get || self.retry_non_idempotent
    }

    /// The path and query, percent-encoded, starting with `/`.
    pub fn path_and_query(&self) -> Result<String, Error> {
        if let Some(e) = &self.error {
            return Err(Error::invalid_request(e.clone()));
        }
        let mut out = String::with_capacity(96);
        match &self.raw_path {
            Some(p) => {
                if !p.starts_with('/') {
                    return Err(Error::invalid_request(format!(
                        "path {p:?} must start with '/'"
                    )));
                }
                out.push_str(p);
            }
            None => self.build_path(&mut out)?,
        }
        let mut sep = if out.contains('?') { '&' } else { '?' };
        if self.watch && !self.query.iter().any(|(k, _)| k == "watch") {
            out.push(sep);
            out.push_str("watch=true");
            sep = '&';
        }
        for (k, v) in &self.query {
            out.push(sep);
            encode_query_component(k, &mut out);
            out.push('=');
            encode_query_component(v, &mut out);
            sep = '&';
        }
        Ok(out)
    }

    /// For a list or watch of a collection: the verb, resource and path
    /// (`list deployments: GET /api/v1/deployments`), which a 404's
    /// `Status` leaves out (the server's message names nothing when the
    /// resource itself is unknown, as with a group left off). `None` for
    /// requests to one object, whose `Status` names it.
    pub fn collection_context(&self) -> Option<String> {
        if self.method != Method::Get || self.raw_path.is_some() || self.name.is_some() {
            return None;
        }
        let resource = self.resource.as_deref()?;
        let mut path = String::new();
        self.build_path(&mut path).ok()?;
        let verb = if self.watch { "watch" } else { "list" };
        Some(format!("{verb} {resource}: GET {path}"))
    }

    fn build_path(&self, out: &mut String) -> Result<(), Error> {
        if self.version.is_empty() {
            return Err(Error::invalid_request("empty API version"));
        }
        if self.group.is_empty() {
            out.push_str("/api/");
            push_segment(out, "version", &self.version)?;
        } else {
            out.push_str("/apis/");
            push_segment(out, "group", &self.group)?;
            out.push('/');
            push_segment(out, "version", &self.version)?;
        }
        if let Some(ns) = &self.namespace {
            out.push_str("/namespaces/");
            push_segment(out, "namespace", ns)?;
        }
        match &self.resource {
            Some(r) => {
                out.push('/');
                push_segment(out, "resource", r)?;
            }
            None if self.name.is_some() || self.subresource.is_some() => {
                return Err(Error::invalid_request("a name needs a resource"));
            }
            None => {}
        }
        if let Some(n) = &self.name {
            out.push('/');
            push_segment(out, "name", n)?;
        }
        if let Some(s) = &self.subresource {
            if self.name.is_none() {
                return Err(Error::invalid_request("a subresource needs a name"));
            }
            out.push('/');
            push_segment(out, "subresource", s)?;
        }
        Ok(())
    }

    /// The full URL under `base` (which may carry a path prefix, e.g.
    /// `https://host/k8s/clusters/c1`; a trailing `/` is ignored).
    pub fn url(&self, base: &str) -> Result<String, Error> {
        let pq = self.path_and_query()?;
        let base = base.trim_end_matches('/');
        // With an empty base (`/`), a raw path `//host` or `/\host` would
        // become a URL on another origin.
        if base.is_empty() && super::config::is_scheme_relative(&pq) {
            return Err(Error::invalid_request(format!(
                "path {pq:?} would resolve to another host"
            )));
        }
        let mut url = String::with_capacity(base.len() + pq.len());
        url.push_str(base);
        url.push_str(&pq);
        Ok(url)
    }
}

/// Whether `b` passes unescaped in a query component (Go's `QueryEscape`).
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~')
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn push_escaped(b: u8, out: &mut String) {
    out.push('%');
    out.push(char::from(HEX[usize::from(b >> 4)]));
    out.push(char::from(HEX[usize::from(b & 15)]));
}

/// Encode a query key or value as `application/x-www-form-urlencoded`.
pub fn encode_query_component(s: &str, out: &mut String) {
    for &b in s.as_bytes() {
        if is_unreserved(b) {
            out.push(char::from(b));
        } else if b == b' ' {
            out.push('+');
        } else {
            push_escaped(b, out);
        }
    }
}

/// Append one path segment, rejecting values that would change the path's
/// shape (`/`, `.`, `..`, empty); other unsafe bytes are percent-encoded.
fn push_segment(out: &mut String, what: &str, s: &str) -> Result<(), Error> {
    if s.is_empty() || s == "." || s == ".." || s.contains('/') {
        return Err(Error::invalid_request(format!(
            "invalid {what} {s:?} (empty, '.', '..' or containing '/')"
        )));
    }
    for &b in s.as_bytes() {
        // RFC 3986 pchar minus the sub-delims a server might treat specially.
        if is_unreserved(b) || matches!(b, b':' | b'@') {
            out.push(char::from(b));
        } else {
            push_escaped(b, out);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::params::PropagationPolicy;

    /// RC-01: paths and query strings for every verb shape, escaping included.
    #[test]
    fn rc_01_url_table() {
        let base = "https://k8s.example:6443/prefix/";
        let sel = ListParams {
            label_selector: Some("app=web,tier!=db,env in (a, b),!canary".into()),
            field_selector: Some("metadata.name=x,status.phase!=Running".into()),
            limit: Some(500),
            continue_token: Some("abc/+=".into()),
            resource_version: Some("0".into()),
            resource_version_match: Some("NotOlderThan".into()),
            timeout_seconds: Some(30),
        };
        let cases: Vec<(Request, &str)> = vec![
            (Request::get().resource("pods"), "/api/v1/pods"),
            (
                Request::get().namespace("kube-system").resource("pods").name("p-1"),
                "/api/v1/namespaces/kube-system/pods/p-1",
            ),
            (
                Request::get().group_version("apps", "v1").namespace("d").resource("deployments").name("web").subresource("scale"),
                "/apis/apps/v1/namespaces/d/deployments/web/scale",
            ),
            (
                Request::get().group_version("demo.kubewasm.dev", "v1").resource("widgets"),
                "/apis/demo.kubewasm.dev/v1/widgets",
            ),
            (Request::get().resource("nodes").name("n1"), "/api/v1/nodes/n1"),
            (Request::get().namespace("").resource("pods"), "/api/v1/pods"),
            (
                Request::get().resource("pods").list_params(&sel),
                "/api/v1/pods?labelSelector=app%3Dweb%2Ctier%21%3Ddb%2Cenv+in+%28a%2C+b%29%2C%21canary&fieldSelector=metadata.name%3Dx%2Cstatus.phase%21%3DRunning&limit=500&continue=abc%2F%2B%3D&resourceVersion=0&resourceVersionMatch=NotOlderThan&timeoutSeconds=30",
            ),
            (
                Request::get().namespace("ns").resource("pods").watch_params(&WatchParams {
                    resource_version: Some("42".into()),
                    allow_watch_bookmarks: true,
                    send_initial_events: Some(true),
                    resource_version_match: Some("NotOlderThan".into()),
                    timeout_seconds: Some(300),
                    ..Default::default()
                }),
                "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=42&resourceVersionMatch=NotOlderThan&timeoutSeconds=300&allowWatchBookmarks=true&sendInitialEvents=true",
            ),
            (
                Request::post().namespace("ns").resource("pods").post_params(&PostParams { dry_run: true, field_manager: Some("kube wasm".into()) }),
                "/api/v1/namespaces/ns/pods?dryRun=All&fieldManager=kube+wasm",
            ),
            (
                Request::patch().namespace("ns").resource("pods").name("p").patch_params(
                    &PatchParams { field_manager: Some("me".into()), force: true, dry_run: false },
                    PatchType::Apply,
                ),
                "/api/v1/namespaces/ns/pods/p?fieldManager=me&force=true",
            ),
            (
                Request::delete().namespace("ns").resource("pods").name("p").delete_params(&DeleteParams {
                    propagation_policy: Some(PropagationPolicy::Foreground),
                    grace_period_seconds: Some(0),
                    dry_run: true,
                    preconditions: None,
                }),
                "/api/v1/namespaces/ns/pods/p?propagationPolicy=Foreground&gracePeriodSeconds=0&dryRun=All",
            ),
            (Request::get().path("/apis"), "/apis"),
            (Request::get().path("/api?x=1").query("a b", "ü"), "/api?x=1&a+b=%C3%BC"),
            (
                Request::get().resource("pods").name("weird name:@%"),
                "/api/v1/pods/weird%20name:@%25",
            ),
        ];
        for (req, want) in cases {
            assert_eq!(req.path_and_query().expect("valid"), want);
            assert_eq!(
                req.url(base).expect("valid"),
                format!("https://k8s.example:6443/prefix{want}")
            );
        }
    }

    #[test]
    fn rc_01_invalid_requests_are_typed_errors() {
        let bad = [
            Request::get().resource("pods").name("a/b"),
            Request::get().resource("pods").name(".."),
            Request::get().name("x"),
            Request::get().resource("pods").subresource("status"),
            Request::get().group_version("apps", ""),
            Request::get().path("api"),
            Request::patch()
                .resource("pods")
                .name("p")
                .patch_params(&PatchParams::default(), PatchType::Apply),
            Request::patch().resource("pods").name("p").patch_params(
                &PatchParams {
                    force: true,
                    ..Default::default()
                },
                PatchType::Merge,
            ),
        ];
        for req in bad {
            assert!(
                matches!(req.path_and_query(), Err(Error::InvalidRequest { .. })),
                "{req:?}"
            );
        }
    }

    #[test]
    fn a_raw_path_never_turns_a_same_origin_base_into_another_origin() {
        for path in ["//evil.example/x", "/\\evil.example/x"] {
            let req = Request::get().path(path);
            assert!(
                matches!(req.url("/"), Err(Error::InvalidRequest { .. })),
                "{path}"
            );
            assert_eq!(
                req.url("/k8s").expect("under a prefix"),
                format!("/k8s{path}")
            );
            assert_eq!(
                req.url("https://h").expect("absolute base"),
                format!("https://h{path}")
            );
        }
        assert_eq!(Request::get().path("/api").url("/").expect("ok"), "/api");
    }

    #[test]
    fn patch_content_types_and_retryability() {
        let r = Request::patch()
            .resource("pods")
            .name("p")
            .patch_params(&PatchParams::default(), PatchType::Strategic)
            .json(&serde_json::json!({"a": 1}));
        assert_eq!(
            r.content_type(),
            Some("application/strategic-merge-patch+json")
        );
        assert_eq!(r.body_bytes().map(|b| &b[..]), Some(&b"{\"a\":1}"[..]));
        assert!(!r.is_retryable());
        assert!(r.retry_non_idempotent(true).is_retryable());
        assert!(Request::get().is_retryable());
        assert_eq!(
            PatchType::Json.content_type(),
            "application/json-patch+json"
        );
        assert_eq!(
            PatchType::Merge.content_type(),
            "application/merge-patch+json"
        );
        assert_eq!(
            PatchType::Apply.content_type(),
            "application/apply-patch+yaml"
        );
    }

    #[test]
    fn delete_preconditions_go_in_a_delete_options_body_with_every_option() {
        let p = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            grace_period_seconds: Some(5),
            dry_run: true,
            preconditions: Some(super::super::Preconditions {
                uid: Some("u-\"1".into()),
                resource_version: Some("42".into()),
            }),
        };
        let req = Request::delete()
            .namespace("ns")
            .resource("pods")
            .name("p")
            .delete_params(&p);
        // With a body the API server reads no query: nothing goes there.
        assert_eq!(
            req.path_and_query().expect("valid"),
            "/api/v1/namespaces/ns/pods/p"
        );
        let body = req.body_bytes().expect("a body");
        let v: serde_json::Value = serde_json::from_slice(body).expect("JSON");
        assert_eq!(
            v,
            serde_json::json!({
                "kind": "DeleteOptions", "apiVersion": "v1",
                "propagationPolicy": "Background", "gracePeriodSeconds": 5, "dryRun": ["All"],
                "preconditions": { "uid": "u-\"1", "resourceVersion": "42" },
            })
        );
        let only_rv = DeleteParams {
            preconditions: Some(super::super::Preconditions {
                uid: None,
                resource_version: Some("7".into()),
            }),
            ..Default::default()
        };
        let req = Request::delete()
            .resource("pods")
            .name("p")
            .delete_params(&only_rv);
        let v: serde_json::Value =
            serde_json::from_slice(req.body_bytes().expect("a body")).expect("JSON");
        assert_eq!(
            v["preconditions"],
            serde_json::json!({ "resourceVersion": "7" })
        );
        assert!(v.get("dryRun").is_none());
    }
}
