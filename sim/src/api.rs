//! The Kubernetes API routes: list, get, create, replace, patch, delete,
//! delete collection, subresources (status, scale), and watch.

use serde_json::{json, Value};

use crate::http::Request;
use crate::patch;
use crate::resources::{find, Resource, RESOURCES};
use crate::selectors::{FieldSelector, LabelSelector};
use crate::state::{lock, status_json, Obj, Shared};

/// What a handler produces.
pub enum Reply {
    Full {
        code: u16,
        content_type: &'static str,
        headers: String,
        body: Vec<u8>,
    },
    Watch(Box<WatchParams>),
}

pub struct WatchParams {
    pub res: usize,
    pub ns: Option<String>,
    pub name: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub from_rv: Option<u64>,
    pub bookmarks: bool,
    pub send_initial: bool,
    pub timeout_secs: Option<u64>,
}

pub fn json_reply(code: u16, body: Vec<u8>) -> Reply {
    Reply::Full {
        code,
        content_type: "application/json",
        headers: String::new(),
        body,
    }
}

pub fn status(code: u16, reason: &str, message: &str) -> Reply {
    json_reply(code, status_json(code, reason, message))
}

fn err((code, reason, msg): (u16, &'static str, String)) -> Reply {
    status(code, reason, &msg)
}

/// The parsed path of a resource request.
pub struct Target {
    res: usize,
    ns: Option<String>,
    name: Option<String>,
    sub: Option<String>,
}

fn resolve(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    if rest.len() >= 3 && rest[0] == "namespaces" {
        if let Some(res) = find(group, version, rest[2]).filter(|&r| RESOURCES[r].namespaced) {
            return Some(Target {
                res,
                ns: Some(rest[1].to_string()),
                name: rest.get(3).map(|s| s.to_string()),
                sub: rest.get(4).map(|s| s.to_string()),
            });
        }
    }
    let res = find(group, version, rest.first()?)?;
    Some(Target {
        res,
        ns: None,
        name: rest.get(1).map(|s| s.to_string()),
        sub: rest.get(2).map(|s| s.to_string()),
    })
}

fn parse_json(body: &[u8]) -> Result<Value, Reply> {
    serde_json::from_slice(body)
        .map_err(|e| status(400, "BadRequest", &format!("invalid JSON body: {e}")))
}

/// Handle a request under /api or /apis (after auth and faults).
pub fn handle(state: &Shared, req: &Request) -> Reply {
    let segs: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api"] | ["apis"] => return crate::discovery::root(req),
        ["api", v] => return crate::discovery::group_version("", v),
        ["apis", g, v] => return crate::discovery::group_version(g, v),
        ["apis", g] => return crate::discovery::group(g),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => {
            return status(
                404,
                "NotFound",
                "the server could not find the requested resource",
            )
        }
    };
    let Some(t) = resolve(group, version, rest) else {
        return status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
    };
    let r = &RESOURCES[t.res];
    if r.namespaced && t.name.is_some() && t.ns.is_none() {
        return status(404, "NotFound", "namespaced resource requires a namespace");
    }
    let ns_key = t.ns.clone().unwrap_or_default();
    match (req.method.as_str(), &t.name, &t.sub) {
        ("GET", None, None) => {
            if matches!(req.param("watch"), Some("1") | Some("true")) {
                watch_params(&t, req, None)
            } else {
                list(state, &t, req)
            }
        }
        ("GET", Some(name), None) => {
            let st = lock(state);
            match st.objects[t.res].get(&(ns_key, name.clone())) {
                Some(o) => json_reply(200, o.bytes.to_vec()),
                None => status(
                    404,
                    "NotFound",
                    &format!("{} \"{}\" not found", r.plural, name),
                ),
            }
        }
        ("POST", None, None) => {
            let v = match parse_json(&req.body) {
                Ok(v) => v,
                Err(e) => return e,
            };
            if let Some(body_ns) = v.pointer("/metadata/namespace").and_then(Value::as_str) {
                if t.ns.as_deref().is_some_and(|n| n != body_ns) {
                    return status(
                        400,
                        "BadRequest",
                        "the namespace of the object does not match the namespace on the request",
                    );
                }
            }
            if is_dry_run(req) {
                return json_reply(201, serde_json::to_vec(&v).unwrap_or_default());
            }
            let mut st = lock(state);
            let out = st.create(t.res, t.ns.as_deref(), v);
            state.1.notify_all();
            match out {
                Ok(o) => json_reply(201, o.bytes.to_vec()),
                Err(e) => err(e),
            }
        }
        ("PUT", Some(name), sub) => {
            let v = match parse_json(&req.body) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let mut st = lock(state);
            let key = (ns_key.clone(), name.clone());
            let new = match sub.as_deref() {
                None => v,
                Some("status") => match st.objects[t.res].get(&key) {
                    Some(o) => {
                        let mut cur = (*o.value).clone();
                        cur["status"] = v.get("status").cloned().unwrap_or(Value::Null);
                        cur["metadata"]["resourceVersion"] = v
                            .pointer("/metadata/resourceVersion")
                            .cloned()
                            .unwrap_or(json!(""));
                        cur
                    }
                    None => {
                        return status(
                            404,
                            "NotFound",
                            &format!("{} \"{}\" not found", r.plural, name),
                        )
                    }
                },
                Some("scale") => match st.objects[t.res].get(&key) {
                    Some(o) => {
                        let mut cur = (*o.value).clone();
                        cur["spec"]["replicas"] =
                            v.pointer("/spec/replicas").cloned().unwrap_or(json!(0));
                        cur["metadata"]["resourceVersion"] = json!("");
                        cur
                    }
                    None => {
                        return status(
                            404,
                            "NotFound",
                            &format!("{} \"{}\" not found", r.plural, name),
                        )
                    }
                },
                Some(other) => {
                    return status(404, "NotFound", &format!("unknown subresource {other}"))
                }
            };
            let out = st.update(t.res, &ns_key, name, new);
            state.1.notify_all();
            match out {
                Ok(o) if sub.as_deref() == Some("scale") => json_reply(200, scale_json(r, &o)),
                Ok(o) => json_reply(200, o.bytes.to_vec()),
                Err(e) => err(e),
            }
        }
        ("PATCH", Some(name), sub) => patch_object(state, &t, r, name, sub.as_deref(), req),
        ("GET", Some(name), Some(sub)) if sub == "status" || sub == "scale" => {
            let st = lock(state);
            match st.objects[t.res].get(&(ns_key, name.clone())) {
                Some(o) if sub == "scale" => json_reply(200, scale_json(r, o)),
                Some(o) => json_reply(200, o.bytes.to_vec()),
                None => status(
                    404,
                    "NotFound",
                    &format!("{} \"{}\" not found", r.plural, name),
                ),
            }
        }
        ("DELETE", Some(name), None) => {
            if is_dry_run(req) {
                return json_reply(200, b"{}".to_vec());
            }
            let mut st = lock(state);
            let out = st.delete(t.res, &ns_key, name);
            state.1.notify_all();
            match out {
                Ok(o) => json_reply(200, o.bytes.to_vec()),
                Err(e) => err(e),
            }
        }
        ("DELETE", None, None) => {
            let (labels, fields) = match selectors(req) {
                Ok(s) => s,
                Err(e) => return e,
            };
            let mut st = lock(state);
            let keys: Vec<(String, String)> = st.objects[t.res]
                .iter()
                .filter(|((ns, _), o)| {
                    t.ns.as_deref().is_none_or(|n| n == ns)
                        && labels.matches(&o.value)
                        && fields.matches(&o.value)
                })
                .map(|(k, _)| k.clone())
                .collect();
            let mut items = Vec::new();
            for (ns, name) in keys {
                if let Ok(o) = st.delete(t.res, &ns, &name) {
                    items.push(o);
                }
            }
            state.1.notify_all();
            json_reply(200, list_bytes(r, st.rv, None, None, items.iter()))
        }
        _ => status(
            405,
            "MethodNotAllowed",
            &format!("{} is not supported on this path", req.method),
        ),
    }
}

fn is_dry_run(req: &Request) -> bool {
    req.param("dryRun") == Some("All")
}

fn scale_json(r: &Resource, o: &Obj) -> Vec<u8> {
    let v = &o.value;
    serde_json::to_vec(&json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": v["metadata"]["name"], "namespace": v["metadata"]["namespace"], "resourceVersion": o.rv.to_string(), "uid": v["metadata"]["uid"]},
        "spec": {"replicas": v.pointer("/spec/replicas").cloned().unwrap_or(json!(0))},
        "status": {"replicas": v.pointer("/status/replicas").cloned().unwrap_or(json!(0)), "selector": format!("app={}", r.singular)}
    }))
    .unwrap_or_default()
}

fn patch_object(
    state: &Shared,
    t: &Target,
    r: &Resource,
    name: &str,
    sub: Option<&str>,
    req: &Request,
) -> Reply {
    let ctype = req
        .header("content-type")
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let body = match parse_json(&req.body) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let ns_key = t.ns.clone().unwrap_or_default();
    let mut st = lock(state);
    let existing = st.objects[t.res]
        .get(&(ns_key.clone(), name.to_string()))
        .cloned();
    let mut doc = match (&existing, ctype.as_str()) {
        (Some(o), _) => (*o.value).clone(),
        (None, "application/apply-patch+yaml") => {
            if req.param("fieldManager").is_none_or(str::is_empty) {
                return status(400, "BadRequest", "PATCH with apply requires fieldManager");
            }
            let mut v = body.clone();
            v["metadata"]["name"] = json!(name);
            let out = st.create(t.res, t.ns.as_deref(), v);
            state.1.notify_all();
            return match out {
                Ok(o) => json_reply(201, o.bytes.to_vec()),
                Err(e) => err(e),
            };
        }
        (None, _) => {
            return status(
                404,
                "NotFound",
                &format!("{} \"{}\" not found", r.plural, name),
            )
        }
    };
    let result = match ctype.as_str() {
        "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
            patch::merge(&mut doc, &body);
            Ok(())
        }
        "application/apply-patch+yaml" => {
            if req.param("fieldManager").is_none_or(str::is_empty) {
                return status(400, "BadRequest", "PATCH with apply requires fieldManager");
            }
            patch::merge(&mut doc, &body);
            Ok(())
        }
        "application/json-patch+json" => patch::json_patch(&mut doc, &body),
        other => return status(415, "UnsupportedMediaType", &format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {other:?})")),
    };
    if let Err(e) = result {
        return status(422, "Invalid", &e);
    }
    if sub == Some("scale") {
        if let Some(replicas) = body.pointer("/spec/replicas") {
            doc["spec"]["replicas"] = replicas.clone();
        }
    }
    // A patch carries no precondition unless it sets metadata.resourceVersion.
    let precondition = body
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .map(str::to_string);
    doc["metadata"]["resourceVersion"] = json!(precondition.unwrap_or_default());
    if is_dry_run(req) {
        return json_reply(200, serde_json::to_vec(&doc).unwrap_or_default());
    }
    let out = st.update(t.res, &ns_key, name, doc);
    state.1.notify_all();
    match out {
        Ok(o) if sub == Some("scale") => json_reply(200, scale_json(r, &o)),
        Ok(o) => json_reply(200, o.bytes.to_vec()),
        Err(e) => err(e),
    }
}

fn selectors(req: &Request) -> Result<(LabelSelector, FieldSelector), Reply> {
    let labels = LabelSelector::parse(req.param("labelSelector").unwrap_or(""))
        .map_err(|e| status(400, "BadRequest", &e))?;
    let fields = FieldSelector::parse(req.param("fieldSelector").unwrap_or(""))
        .map_err(|e| status(400, "BadRequest", &e))?;
    Ok((labels, fields))
}

fn list_bytes<'a>(
    r: &Resource,
    rv: u64,
    cont: Option<&str>,
    remaining: Option<usize>,
    items: impl Iterator<Item = &'a Obj>,
) -> Vec<u8> {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(c) = cont {
        meta["continue"] = json!(c);
    }
    if let Some(n) = remaining {
        meta["remainingItemCount"] = json!(n);
    }
    let mut out = format!(
        "{{\"kind\":\"{}List\",\"apiVersion\":\"{}\",\"metadata\":{},\"items\":[",
        r.kind,
        r.api_version(),
        meta
    )
    .into_bytes();
    for (i, o) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&o.bytes);
    }
    out.extend_from_slice(b"]}");
    out
}

fn list(state: &Shared, t: &Target, req: &Request) -> Reply {
    let r = &RESOURCES[t.res];
    let (labels, fields) = match selectors(req) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let limit = req
        .param("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|&l| l > 0);
    let mut st = lock(state);
    let (snap_id, offset, items, rv) = match req.param("continue").filter(|c| !c.is_empty()) {
        Some(token) => {
            let parsed = token
                .split_once('-')
                .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<usize>().ok()?)));
            match parsed.and_then(|(id, off)| st.snapshots.get(&id).map(|s| (id, off, s.clone()))) {
                Some((id, off, snap)) => {
                    let rv = st.snapshot_rv(id);
                    (id, off, snap, rv)
                }
                None => {
                    return status(410, "Expired", "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.");
                }
            }
        }
        None => {
            let items: Vec<Obj> = st.objects[t.res]
                .iter()
                .filter(|((ns, _), o)| {
                    t.ns.as_deref().is_none_or(|n| n == ns)
                        && labels.matches(&o.value)
                        && fields.matches(&o.value)
                })
                .map(|(_, o)| o.clone())
                .collect();
            (0, 0, std::sync::Arc::new(items), st.rv)
        }
    };
    let end = match limit {
        Some(l) => (offset + l).min(items.len()),
        None => items.len(),
    };
    let page = items.get(offset.min(items.len())..end).unwrap_or(&[]);
    let (cont, remaining) = if end < items.len() {
        let id = if snap_id == 0 {
            let id = st.next_snapshot;
            st.next_snapshot += 1;
            st.snapshots.insert(id, items.clone());
            st.snapshot_rvs.insert(id, rv);
            id
        } else {
            snap_id
        };
        (Some(format!("{id}-{end}")), Some(items.len() - end))
    } else {
        (None, None)
    };
    json_reply(
        200,
        list_bytes(r, rv, cont.as_deref(), remaining, page.iter()),
    )
}

/// Parse a watch request into its parameters (the caller streams it).
pub fn watch_params(t_in: &impl WatchTarget, req: &Request, _unused: Option<()>) -> Reply {
    let (labels, fields) = match selectors(req) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let from_rv = match req.param("resourceVersion").filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => match s.parse::<u64>() {
            Ok(v) => Some(v),
            Err(_) => return status(400, "BadRequest", &format!("invalid resourceVersion {s:?}")),
        },
    };
    let send_initial = matches!(req.param("sendInitialEvents"), Some("true"));
    if send_initial && req.param("resourceVersionMatch") != Some("NotOlderThan") {
        return status(
            422,
            "Invalid",
            "sendInitialEvents requires resourceVersionMatch=NotOlderThan",
        );
    }
    let (res, ns, name) = t_in.parts();
    Reply::Watch(Box::new(WatchParams {
        res,
        ns,
        name,
        labels,
        fields,
        from_rv,
        bookmarks: matches!(req.param("allowWatchBookmarks"), Some("true")),
        send_initial,
        timeout_secs: req.param("timeoutSeconds").and_then(|s| s.parse().ok()),
    }))
}

/// Anything that names a watch target.
pub trait WatchTarget {
    fn parts(&self) -> (usize, Option<String>, Option<String>);
}

impl WatchTarget for Target {
    fn parts(&self) -> (usize, Option<String>, Option<String>) {
        (self.res, self.ns.clone(), self.name.clone())
    }
}
