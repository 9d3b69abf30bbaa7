//! Legacy and aggregated discovery documents.

use serde_json::{json, Value};

use crate::api::{json_reply, status, Reply};
use crate::http::Request;
use crate::resources::{Resource, RESOURCES};

const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn groups() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for r in RESOURCES {
        if !r.group.is_empty() && !out.contains(&(r.group, r.version)) {
            out.push((r.group, r.version));
        }
    }
    out
}

fn legacy_resource(r: &Resource) -> Vec<Value> {
    let mut v = vec![json!({
        "name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
        "verbs": VERBS, "shortNames": r.short_names,
    })];
    for sub in r.subresources {
        let kind = if *sub == "scale" { "Scale" } else { r.kind };
        v.push(json!({"name": format!("{}/{}", r.plural, sub), "singularName": "", "namespaced": r.namespaced, "kind": kind, "verbs": ["get", "patch", "update"]}));
    }
    v
}

fn aggregated_resource(r: &Resource) -> Value {
    json!({
        "resource": r.plural, "singularResource": r.singular,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "verbs": VERBS, "shortNames": r.short_names,
        "subresources": r.subresources.iter().map(|s| json!({
            "subresource": s,
            "responseKind": if *s == "scale" { json!({"group": "autoscaling", "version": "v1", "kind": "Scale"}) } else { json!({"group": r.group, "version": r.version, "kind": r.kind}) },
            "verbs": ["get", "patch", "update"],
        })).collect::<Vec<_>>(),
    })
}

fn aggregated(core: bool) -> Vec<u8> {
    let items: Vec<Value> = if core {
        vec![
            json!({"metadata": {"name": ""}, "versions": [{"version": "v1", "freshness": "Current",
            "resources": RESOURCES.iter().filter(|r| r.group.is_empty()).map(aggregated_resource).collect::<Vec<_>>()}]}),
        ]
    } else {
        groups().iter().map(|(g, v)| json!({"metadata": {"name": g}, "versions": [{"version": v, "freshness": "Current",
            "resources": RESOURCES.iter().filter(|r| r.group == *g && r.version == *v).map(aggregated_resource).collect::<Vec<_>>()}]})).collect()
    };
    serde_json::to_vec(&json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})).unwrap_or_default()
}

/// GET /api or /apis.
pub fn root(req: &Request) -> Reply {
    let core = req.path.trim_end_matches('/') == "/api";
    if req
        .header("accept")
        .is_some_and(|a| a.contains("as=APIGroupDiscoveryList"))
    {
        return Reply::Full {
            code: 200,
            content_type: AGGREGATED,
            headers: String::new(),
            body: aggregated(core),
        };
    }
    let body = if core {
        json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]})
    } else {
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups().iter().map(|(g, v)| json!({
            "name": g, "versions": [{"groupVersion": format!("{g}/{v}"), "version": v}],
            "preferredVersion": {"groupVersion": format!("{g}/{v}"), "version": v}})).collect::<Vec<_>>()})
    };
    json_reply(200, serde_json::to_vec(&body).unwrap_or_default())
}

/// GET /apis/{group}.
pub fn group(g: &str) -> Reply {
    match groups().into_iter().find(|(gg, _)| *gg == g) {
        Some((g, v)) => json_reply(
            200,
            serde_json::to_vec(&json!({"kind": "APIGroup", "apiVersion": "v1", "name": g,
            "versions": [{"groupVersion": format!("{g}/{v}"), "version": v}],
            "preferredVersion": {"groupVersion": format!("{g}/{v}"), "version": v}}))
            .unwrap_or_default(),
        ),
        None => status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ),
    }
}

/// GET /api/v1 or /apis/{group}/{version}.
pub fn group_version(g: &str, v: &str) -> Reply {
    let rs: Vec<Value> = RESOURCES
        .iter()
        .filter(|r| r.group == g && r.version == v)
        .flat_map(legacy_resource)
        .collect();
    if rs.is_empty() {
        return status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
    }
    let gv = if g.is_empty() {
        v.to_string()
    } else {
        format!("{g}/{v}")
    };
    json_reply(200, serde_json::to_vec(&json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": rs})).unwrap_or_default())
}
