//! The Kubernetes API routes: get, list, watch, create, replace, patch
//! (merge, strategic, JSON, apply), delete, delete collection, and the
//! `status` and `scale` subresources.
//!
//! As in the API server, a write to the main resource keeps the stored
//! `status` of resources that have a status subresource, and a write to
//! `/status` changes only `status`. Objects may be created in namespaces
//! that do not exist (tests create freely; nothing here checks).

use std::time::Duration;

use serde_json::{json, Value};

use crate::http::{Request, Response};
use crate::list::ListRequest;
use crate::partial::Shape;
use crate::patch;
use crate::resources::{find, Resource, RESOURCES};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::state::{lock, Sim};
use crate::status::ApiError;
use crate::store::{Filter, Obj, Store};
use crate::watch::WatchParams;

/// What a handler produces.
pub enum Reply {
    /// A complete response: a serialized API object, which the API server
    /// may compress (see compress.rs).
    Full(Response),
    /// A complete response the API server streams from its source (a pod
    /// log that does not follow): never compressed.
    Streamed(Response),
    /// A watch to stream.
    Watch(Box<WatchParams>),
    /// A followed container log to stream.
    Log(Box<crate::logs::LogRequest>),
}

/// A Status response for an error.
pub fn error_response(e: &ApiError) -> Response {
    let mut r = Response::json(e.code, e.to_bytes());
    if let Some(s) = e.details.get("retryAfterSeconds").and_then(Value::as_u64) {
        r = r.with_header("Retry-After", s.to_string());
    }
    r
}

fn object(code: u16, o: &Obj) -> Reply {
    Reply::Full(Response::json(code, o.bytes.to_vec()))
}

/// The parsed path of a resource request.
struct Target {
    res: usize,
    ns: Option<String>,
    name: Option<String>,
    sub: Option<String>,
}

impl Target {
    fn r(&self) -> &'static Resource {
        // Targets are only built from valid indexes.
        &RESOURCES[self.res.min(RESOURCES.len() - 1)]
    }
    fn ns_key(&self) -> &str {
        self.ns.as_deref().unwrap_or("")
    }
}

fn not_found_path() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

fn resolve(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let owned = |i: usize| rest.get(i).map(|s| s.to_string());
    if let ["namespaces", ns, plural, ..] = rest {
        if let Some(res) = find(group, version, plural).filter(|&r| RESOURCES[r].namespaced) {
            if rest.len() > 5 {
                return None;
            }
            return Some(Target {
                res,
                ns: Some(ns.to_string()),
                name: owned(3),
                sub: owned(4),
            });
        }
    }
    if rest.len() > 3 {
        return None;
    }
    Some(Target {
        res: find(group, version, rest.first()?)?,
        ns: None,
        name: owned(1),
        sub: owned(2),
    })
}

fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))
}

/// Handle a request under /api or /apis (after auth and faults).
pub fn handle(sim: &Sim, req: &Request) -> Reply {
    match route(sim, req) {
        Ok(r) => r,
        Err(e) => Reply::Full(error_response(&e)),
    }
}

fn route(sim: &Sim, req: &Request) -> Result<Reply, ApiError> {
    let segs: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api"] | ["apis"] if req.method == "GET" => return Ok(crate::discovery::root(req)),
        ["api", v] if req.method == "GET" => return crate::discovery::group_version("", v),
        ["apis", g] if req.method == "GET" => return crate::discovery::group(g),
        ["apis", g, v] if req.method == "GET" => return crate::discovery::group_version(g, v),
        ["api", v, rest @ ..] if !rest.is_empty() => ("", *v, rest),
        ["apis", g, v, rest @ ..] if !rest.is_empty() => (*g, *v, rest),
        _ => return Err(not_found_path()),
    };
    let t = resolve(group, version, rest).ok_or_else(not_found_path)?;
    let r = t.r();
    if r.namespaced && t.name.is_some() && t.ns.is_none() {
        return Err(not_found_path());
    }
    if let Some(sub) = &t.sub {
        if !r.subresources.contains(&sub.as_str()) {
            return Err(not_found_path());
        }
    }
    match (req.method.as_str(), t.name.as_deref(), t.sub.as_deref()) {
        ("GET", None, None) if req.flag("watch") => watch_params(sim, &t, req),
        ("GET", None, None) => list(sim, &t, req),
        ("GET", Some(_), None) if req.flag("watch") => watch_params(sim, &t, req),
        ("GET", Some(name), Some("log")) => {
            let pod: Value = {
                let st = lock(&sim.store);
                let o = st
                    .get(t.res, t.ns_key(), name)
                    .ok_or_else(|| ApiError::not_found(r.group, r.plural, name))?;
                serde_json::from_slice(&o.bytes).unwrap_or(Value::Null)
            };
            let lr = crate::logs::parse(sim, t.ns_key(), &pod, req)?;
            Ok(if lr.follows() {
                Reply::Log(Box::new(lr))
            } else {
                Reply::Streamed(lr.body(sim))
            })
        }
        ("GET", Some(name), sub) => {
            let st = lock(&sim.store);
            let o = st
                .get(t.res, t.ns_key(), name)
                .ok_or_else(|| ApiError::not_found(r.group, r.plural, name))?;
            Ok(match sub {
                Some("scale") => Reply::Full(Response::json(200, scale_json(o))),
                _ if shape(sim, req, false)? == Shape::Partial => {
                    Reply::Full(Response::json(200, crate::partial::object(&o.bytes)))
                }
                _ => object(200, o),
            })
        }
        ("POST", None, None) => create(sim, &t, req).map(|r| with_warnings(&t, r)),
        ("PUT", Some(name), sub) => replace(sim, &t, name, sub, req).map(|r| with_warnings(&t, r)),
        ("PATCH", Some(name), sub) => {
            patch_object(sim, &t, name, sub, req).map(|r| with_warnings(&t, r))
        }
        ("DELETE", Some(name), None) => delete(sim, &t, name, req),
        ("DELETE", None, None) => delete_collection(sim, &t, req),
        (m, _, _) => Err(ApiError::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource ({m})"),
        )),
    }
}

/// A successful write of a pod carries the API server's warnings about the
/// pod as written (see warnings.rs).
fn with_warnings(t: &Target, reply: Reply) -> Reply {
    let Reply::Full(mut resp) = reply else {
        return reply;
    };
    if t.r().kind == "Pod" && t.sub.is_none() && (200..300).contains(&resp.code) {
        if let Ok(pod) = serde_json::from_slice::<Value>(&resp.body) {
            for w in crate::warnings::pod_warnings(&pod) {
                resp = resp.with_header("Warning", crate::warnings::header_value(&w));
            }
        }
    }
    Reply::Full(resp)
}

fn dry_run(req: &Request) -> bool {
    req.param("dryRun") == Some("All")
}

fn has_status(r: &Resource) -> bool {
    r.subresources.contains(&"status")
}

fn create(sim: &Sim, t: &Target, req: &Request) -> Result<Reply, ApiError> {
    let v = parse_json(&req.body)?;
    if let (Some(body_ns), Some(path_ns)) = (
        v.pointer("/metadata/namespace").and_then(Value::as_str),
        &t.ns,
    ) {
        if !body_ns.is_empty() && body_ns != path_ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    if dry_run(req) {
        return Ok(Reply::Full(Response::json(
            201,
            serde_json::to_vec(&v).unwrap_or_default(),
        )));
    }
    let o = sim.write(|st| st.create(t.res, t.ns.as_deref(), v))?;
    Ok(object(201, &o))
}

/// Copy `status` from `from` to `to` (removing it when `from` has none).
fn carry_status(to: &mut Value, from: &Value) {
    match (from.get("status"), to.as_object_mut()) {
        (Some(s), Some(m)) => {
            m.insert("status".into(), s.clone());
        }
        (None, Some(m)) => {
            m.remove("status");
        }
        _ => {}
    }
}

/// The object a write to `sub` produces from the stored one and the
/// client's version of it.
fn apply_subresource(
    r: &Resource,
    sub: Option<&str>,
    current: &Value,
    mut wanted: Value,
) -> Result<Value, ApiError> {
    match sub {
        None => {
            if has_status(r) {
                carry_status(&mut wanted, current);
            }
            Ok(wanted)
        }
        Some("status") => {
            let mut next = current.clone();
            carry_status(&mut next, &wanted);
            next["metadata"]["resourceVersion"] = wanted
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(json!(""));
            Ok(next)
        }
        Some("scale") => {
            let replicas = wanted
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .ok_or_else(|| {
                    ApiError::new(422, "Invalid", "Scale.spec.replicas: Required value")
                })?;
            if replicas < 0 {
                return Err(ApiError::new(
                    422,
                    "Invalid",
                    "Scale.spec.replicas: must be greater than or equal to 0",
                ));
            }
            let mut next = current.clone();
            next["spec"]["replicas"] = json!(replicas);
            next["metadata"]["resourceVersion"] = wanted
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(json!(""));
            Ok(next)
        }
        Some(other) => Err(ApiError::new(
            404,
            "NotFound",
            format!("unknown subresource {other}"),
        )),
    }
}

fn respond_write(sub: Option<&str>, o: &Obj) -> Reply {
    if sub == Some("scale") {
        Reply::Full(Response::json(200, scale_json(o)))
    } else {
        object(200, o)
    }
}

fn replace(
    sim: &Sim,
    t: &Target,
    name: &str,
    sub: Option<&str>,
    req: &Request,
) -> Result<Reply, ApiError> {
    let r = t.r();
    let wanted = parse_json(&req.body)?;
    if !wanted.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    let o = sim.write(|st: &mut Store| {
        let current = st
            .get(t.res, t.ns_key(), name)
            .ok_or_else(|| ApiError::not_found(r.group, r.plural, name))?
            .value();
        let next = apply_subresource(r, sub, &current, wanted)?;
        if dry_run(req) {
            return Ok(Obj::new(t.res, &next, 0));
        }
        st.update(t.res, t.ns_key(), name, next)
    })?;
    Ok(respond_write(sub, &o))
}

fn patch_object(
    sim: &Sim,
    t: &Target,
    name: &str,
    sub: Option<&str>,
    req: &Request,
) -> Result<Reply, ApiError> {
    let r = t.r();
    let ctype = req
        .header("content-type")
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let kind = match ctype.as_str() {
        "application/merge-patch+json" => "merge",
        "application/strategic-merge-patch+json" => "strategic",
        "application/json-patch+json" => "json",
        "application/apply-patch+yaml" | "application/apply-patch+json" => "apply",
        other => {
            return Err(ApiError::new(
                415,
                "UnsupportedMediaType",
                format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {other:?})"),
            ))
        }
    };
    if kind == "apply" && req.param("fieldManager").is_none_or(str::is_empty) {
        return Err(ApiError::bad_request(
            "PATCH with apply requires a fieldManager (only JSON apply configurations are accepted here)",
        ));
    }
    let body = parse_json(&req.body).map_err(|e| {
        if kind == "apply" {
            ApiError::bad_request(format!(
                "{} (this simulator accepts apply configurations as JSON only)",
                e.message
            ))
        } else {
            e
        }
    })?;
    if kind != "json" && !body.is_object() {
        return Err(ApiError::bad_request("a merge patch must be a JSON object"));
    }
    let (o, created) = sim.write(|st: &mut Store| {
        let Some(existing) = st.get(t.res, t.ns_key(), name).map(Obj::value) else {
            if kind == "apply" && sub.is_none() {
                let mut v = body.clone();
                v["metadata"]["name"] = json!(name);
                if dry_run(req) {
                    return Ok((Obj::new(t.res, &v, 0), true));
                }
                return st.create(t.res, t.ns.as_deref(), v).map(|o| (o, true));
            }
            return Err(ApiError::not_found(r.group, r.plural, name));
        };
        // The document the patch applies to: the object, or its Scale view.
        let mut doc = if sub == Some("scale") {
            serde_json::from_slice(&scale_json(&Obj::new(t.res, &existing, 0)))
                .unwrap_or(Value::Null)
        } else {
            existing.clone()
        };
        match kind {
            "merge" => patch::merge(&mut doc, &body),
            "json" => {
                patch::json_patch(&mut doc, &body).map_err(|e| ApiError::new(422, "Invalid", e))?
            }
            _ => patch::strategic(&mut doc, &body),
        }
        if sub == Some("scale") {
            doc["metadata"]["resourceVersion"] = json!("");
        }
        let next = apply_subresource(r, sub, &existing, doc)?;
        if dry_run(req) {
            return Ok((Obj::new(t.res, &next, 0), false));
        }
        // A patch that leaves metadata.resourceVersion alone carries the
        // current one, so only a patch that sets a stale one conflicts.
        st.update(t.res, t.ns_key(), name, next).map(|o| (o, false))
    })?;
    Ok(if created {
        object(201, &o)
    } else {
        respond_write(sub, &o)
    })
}

fn delete(sim: &Sim, t: &Target, name: &str, req: &Request) -> Result<Reply, ApiError> {
    let r = t.r();
    let opts = if req.body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        parse_json(&req.body)?
    };
    let precondition = opts
        .pointer("/preconditions/resourceVersion")
        .and_then(Value::as_str)
        .map(str::to_string);
    let uid = opts
        .pointer("/preconditions/uid")
        .and_then(Value::as_str)
        .map(str::to_string);
    if dry_run(req)
        || opts
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "All"))
    {
        let st = lock(&sim.store);
        let o = st
            .get(t.res, t.ns_key(), name)
            .ok_or_else(|| ApiError::not_found(r.group, r.plural, name))?;
        crate::store::check_preconditions(r, name, o, precondition.as_deref(), uid.as_deref())?;
        return Ok(deleted(r, o));
    }
    let o = sim.write(|st| {
        st.delete(
            t.res,
            t.ns_key(),
            name,
            precondition.as_deref(),
            uid.as_deref(),
        )
    })?;
    Ok(deleted(r, &o))
}

/// What the API server answers to a DELETE: the object for the resources
/// whose storage returns the deleted object (pods, service accounts,
/// persistent volumes and claims) and for namespaces (whose deletion waits
/// for finalizers), a `Status` of `Success` for everything else.
fn deleted(r: &Resource, o: &Obj) -> Reply {
    const RETURN_OBJECT: &[&str] = &[
        "pods",
        "serviceaccounts",
        "persistentvolumes",
        "persistentvolumeclaims",
        "namespaces",
    ];
    if r.group.is_empty() && RETURN_OBJECT.contains(&r.plural) {
        return object(200, o);
    }
    let v = o.value();
    let meta = &v["metadata"];
    let mut details = serde_json::Map::new();
    details.insert("name".into(), meta["name"].clone());
    if !r.group.is_empty() {
        details.insert("group".into(), json!(r.group));
    }
    // The API server puts the resource (not the kind) in `details.kind`.
    details.insert("kind".into(), json!(r.plural));
    details.insert("uid".into(), meta["uid"].clone());
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    });
    Reply::Full(Response::json(200, status.to_string().into_bytes()))
}

fn filter(t: &Target, req: &Request) -> Result<Filter, ApiError> {
    let r = t.r();
    let labels = LabelSelector::parse(req.param("labelSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(format!("unable to parse labelSelector: {e}")))?;
    let fields = FieldSelector::parse(req.param("fieldSelector").unwrap_or(""))
        .map_err(ApiError::bad_request)?;
    if let Some(f) = fields.fields().find(|f| !r.supports_field(f)) {
        return Err(ApiError::bad_request(format!(
            "field label not supported: {f}"
        )));
    }
    let mut fields = fields;
    if let Some(name) = &t.name {
        fields.0.push(crate::selectors::FieldRequirement {
            field: "metadata.name".into(),
            equal: true,
            value: name.clone(),
        });
    }
    Ok(Filter {
        res: t.res,
        namespace: t.ns.clone(),
        labels,
        fields,
    })
}

fn delete_collection(sim: &Sim, t: &Target, req: &Request) -> Result<Reply, ApiError> {
    // The API server installs deletecollection on the namespaced path only.
    if t.r().namespaced && t.ns.is_none() {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource".to_string(),
        ));
    }
    let f = filter(t, req)?;
    let dry = dry_run(req);
    let (rv, deleted) = sim.write(|st| {
        let keys: Vec<(String, String)> = st
            .iter(t.res)
            .filter(|(_, o)| f.matches(&o.meta))
            .map(|(k, _)| k.clone())
            .collect();
        let mut out = Vec::new();
        for (ns, name) in keys {
            if dry {
                out.extend(st.get(t.res, &ns, &name).cloned());
            } else if let Ok(o) = st.delete(t.res, &ns, &name, None, None) {
                out.push(o);
            }
        }
        (st.rv, out)
    });
    Ok(Reply::Full(Response::json(
        200,
        list_bytes(t.r(), rv, None, None, &deleted),
    )))
}

fn scale_json(o: &Obj) -> Vec<u8> {
    let v = o.value();
    let selector = v
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let meta = &v["metadata"];
    serde_json::to_vec(&json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"],
                     "resourceVersion": meta["resourceVersion"], "creationTimestamp": meta["creationTimestamp"]},
        "spec": {"replicas": v.pointer("/spec/replicas").cloned().unwrap_or(json!(0))},
        "status": {"replicas": v.pointer("/status/replicas").cloned().unwrap_or(json!(0)), "selector": selector}
    }))
    .unwrap_or_default()
}

/// A list body; metadata comes first so a client can read the continue
/// token without parsing the items.
pub fn list_bytes(
    r: &Resource,
    rv: u64,
    cont: Option<&str>,
    remaining: Option<usize>,
    items: &[Obj],
) -> Vec<u8> {
    list_bytes_of(
        &format!("{}List", r.kind),
        &r.api_version(),
        rv,
        cont,
        remaining,
        items.iter().map(|o| &o.bytes[..]),
    )
}

/// A list body of `kind` holding `items` (each one object's JSON).
fn list_bytes_of<'a>(
    kind: &str,
    api_version: &str,
    rv: u64,
    cont: Option<&str>,
    remaining: Option<usize>,
    items: impl Iterator<Item = &'a [u8]> + Clone,
) -> Vec<u8> {
    // Written by hand to keep the API server's key order.
    let mut meta = format!("{{\"resourceVersion\":\"{rv}\"");
    if let Some(c) = cont {
        meta.push_str(",\"continue\":");
        meta.push_str(&Value::from(c).to_string());
    }
    if let Some(n) = remaining {
        meta.push_str(&format!(",\"remainingItemCount\":{n}"));
    }
    meta.push('}');
    let size: usize = items.clone().map(|o| o.len() + 1).sum();
    let mut out = Vec::with_capacity(size + 256);
    out.extend_from_slice(
        format!("{{\"kind\":\"{kind}\",\"apiVersion\":\"{api_version}\",\"metadata\":{meta},\"items\":[")
            .as_bytes(),
    );
    for (i, o) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(o);
    }
    out.extend_from_slice(b"]}");
    out
}

/// The body shape the request's `Accept` asks for (see partial.rs).
fn shape(sim: &Sim, req: &Request, list: bool) -> Result<Shape, ApiError> {
    let support = lock(&sim.faults).partial_metadata;
    crate::partial::negotiate(req.header("accept"), list, support)
}

fn list(sim: &Sim, t: &Target, req: &Request) -> Result<Reply, ApiError> {
    let shape = shape(sim, req, true)?;
    let limit = match req.param("limit").filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => {
            let n: i64 = s
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid limit {s:?}")))?;
            usize::try_from(n).ok().filter(|&n| n > 0)
        }
    };
    let lr = ListRequest {
        filter: filter(t, req)?,
        limit,
        continue_token: req.param("continue"),
        resource_version: req.param("resourceVersion"),
        rv_match: req.param("resourceVersionMatch"),
    };
    let page = lock(&sim.store).list(&lr)?;
    // Serialized outside the lock: the objects are shared, immutable bytes.
    let body = if shape == Shape::Partial {
        let items: Vec<Vec<u8>> = page
            .items
            .iter()
            .map(|o| crate::partial::object(&o.bytes))
            .collect();
        list_bytes_of(
            "PartialObjectMetadataList",
            "meta.k8s.io/v1",
            page.rv,
            page.continue_token.as_deref(),
            page.remaining,
            items.iter().map(Vec::as_slice),
        )
    } else {
        list_bytes(
            t.r(),
            page.rv,
            page.continue_token.as_deref(),
            page.remaining,
            &page.items,
        )
    };
    Ok(Reply::Full(Response::json(200, body)))
}

fn watch_params(sim: &Sim, t: &Target, req: &Request) -> Result<Reply, ApiError> {
    let partial = shape(sim, req, false)? == Shape::Partial;
    let f = filter(t, req)?;
    let rv = match req.param("resourceVersion").filter(|s| !s.is_empty()) {
        None | Some("0") => None,
        Some(s) => Some(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version {s:?}")))?,
        ),
    };
    let send_initial = match req.param("sendInitialEvents") {
        None | Some("") => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "invalid sendInitialEvents {other:?}"
            )))
        }
    };
    let bookmarks = req.flag("allowWatchBookmarks");
    if send_initial.is_some() {
        let mut problems = Vec::new();
        if req.param("resourceVersionMatch") != Some("NotOlderThan") {
            problems.push("resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
        }
        if !bookmarks {
            problems.push("allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true");
        }
        if !problems.is_empty() {
            return Err(ApiError::new(
                422,
                "Invalid",
                format!(
                    "ListOptions.meta.k8s.io \"\" is invalid: {}",
                    problems.join(", ")
                ),
            ));
        }
    }
    let current = lock(&sim.store).rv;
    if send_initial == Some(true) {
        if let Some(n) = rv.filter(|&n| n > current) {
            return Err(crate::store::too_large(n, current));
        }
    }
    let from_rv = match send_initial {
        Some(true) => None,
        // Explicitly no initial events: start at the given RV, or now.
        Some(false) => Some(rv.unwrap_or(current)),
        None => rv,
    };
    // A watch from an RV the store has not reached (a cluster restored or
    // restarted under a client): the API server's watch cache waits up to
    // 3 s for it, then answers "Too large resource version", which makes a
    // reflector list again. The sim answers at once.
    if let Some(n) = from_rv.filter(|&n| n > current) {
        return Err(crate::store::too_large(n, current));
    }
    let timeout = match req.param("timeoutSeconds").filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(Duration::from_secs(s.parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!("invalid timeoutSeconds {s:?}"))
        })?)),
    };
    Ok(Reply::Watch(Box::new(WatchParams {
        filter: f,
        from_rv,
        bookmarks,
        send_initial: send_initial == Some(true),
        timeout,
        partial,
    })))
}
