//! Legacy discovery (`/api`, `/apis`, `/api/v1`, `/apis/{g}`, `/apis/{g}/{v}`)
//! and aggregated discovery (`APIGroupDiscoveryList`, v2 or v2beta1) on
//! `/api` and `/apis` when the Accept header asks for it.

use serde_json::{json, Value};

use crate::api::Reply;
use crate::http::{Request, Response};
use crate::resources::{Resource, RESOURCES};
use crate::status::ApiError;

fn not_found() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

fn json_reply(v: &Value) -> Reply {
    Reply::Full(Response::json(
        200,
        serde_json::to_vec(v).unwrap_or_default(),
    ))
}

/// Which aggregated discovery version the Accept header asks for, if any.
fn aggregated_version(accept: &str) -> Option<&'static str> {
    let compact: String = accept.chars().filter(|c| !c.is_whitespace()).collect();
    let wants = |v: &str| {
        compact.split(',').any(|t| {
            let params: Vec<&str> = t.split(';').collect();
            params.contains(&"g=apidiscovery.k8s.io")
                && params.contains(&format!("v={v}").as_str())
                && params.contains(&"as=APIGroupDiscoveryList")
        })
    };
    if wants("v2") {
        Some("v2")
    } else if wants("v2beta1") {
        Some("v2beta1")
    } else {
        None
    }
}

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

/// A log is only read; status and scale are written too.
fn sub_verbs(sub: &str) -> &'static [&'static str] {
    if sub == "log" {
        &["get"]
    } else {
        &["get", "patch", "update"]
    }
}

fn legacy_resource(r: &Resource) -> Vec<Value> {
    let mut v = vec![json!({
        "name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
        "verbs": VERBS, "shortNames": r.short_names,
    })];
    for sub in r.subresources {
        let kind = if *sub == "scale" { "Scale" } else { r.kind };
        v.push(json!({"name": format!("{}/{}", r.plural, sub), "singularName": "", "namespaced": r.namespaced, "kind": kind, "verbs": sub_verbs(sub)}));
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
            "verbs": sub_verbs(s),
        })).collect::<Vec<_>>(),
    })
}

fn aggregated(core: bool, version: &str) -> Vec<u8> {
    let items: Vec<Value> = if core {
        vec![
            json!({"metadata": {"name": ""}, "versions": [{"version": "v1", "freshness": "Current",
            "resources": RESOURCES.iter().filter(|r| r.group.is_empty()).map(aggregated_resource).collect::<Vec<_>>()}]}),
        ]
    } else {
        groups().iter().map(|(g, v)| json!({"metadata": {"name": g}, "versions": [{"version": v, "freshness": "Current",
            "resources": RESOURCES.iter().filter(|r| r.group == *g && r.version == *v).map(aggregated_resource).collect::<Vec<_>>()}]})).collect()
    };
    serde_json::to_vec(&json!({"kind": "APIGroupDiscoveryList", "apiVersion": format!("apidiscovery.k8s.io/{version}"), "metadata": {}, "items": items})).unwrap_or_default()
}

/// GET /api or /apis.
pub fn root(req: &Request) -> Reply {
    let core = req.path.trim_end_matches('/') == "/api";
    if let Some(version) = req.header("accept").and_then(aggregated_version) {
        let ctype = if version == "v2" {
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        } else {
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        };
        return Reply::Full(Response {
            code: 200,
            content_type: ctype,
            headers: vec![("Vary", "Accept".to_string())],
            body: aggregated(core, version),
        });
    }
    let body = if core {
        json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]})
    } else {
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups().iter().map(|(g, v)| json!({
            "name": g, "versions": [{"groupVersion": format!("{g}/{v}"), "version": v}],
            "preferredVersion": {"groupVersion": format!("{g}/{v}"), "version": v}})).collect::<Vec<_>>()})
    };
    json_reply(&body)
}

/// GET /apis/{group}.
pub fn group(g: &str) -> Result<Reply, ApiError> {
    let (g, v) = groups()
        .into_iter()
        .find(|(gg, _)| *gg == g)
        .ok_or_else(not_found)?;
    Ok(json_reply(
        &json!({"kind": "APIGroup", "apiVersion": "v1", "name": g,
        "versions": [{"groupVersion": format!("{g}/{v}"), "version": v}],
        "preferredVersion": {"groupVersion": format!("{g}/{v}"), "version": v}}),
    ))
}

/// GET /api/v1 or /apis/{group}/{version}.
pub fn group_version(g: &str, v: &str) -> Result<Reply, ApiError> {
    let rs: Vec<Value> = RESOURCES
        .iter()
        .filter(|r| r.group == g && r.version == v)
        .flat_map(legacy_resource)
        .collect();
    if rs.is_empty() {
        return Err(not_found());
    }
    let gv = if g.is_empty() {
        v.to_string()
    } else {
        format!("{g}/{v}")
    };
    Ok(json_reply(
        &json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": rs}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregated_accept_negotiation() {
        assert_eq!(aggregated_version("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"), Some("v2"));
        assert_eq!(
            aggregated_version(
                "application/json; g=apidiscovery.k8s.io; v=v2beta1; as=APIGroupDiscoveryList"
            ),
            Some("v2beta1")
        );
        assert_eq!(aggregated_version("application/json"), None);
        let doc: Value = serde_json::from_slice(&aggregated(false, "v2")).unwrap();
        assert_eq!(doc["kind"], "APIGroupDiscoveryList");
        let groups: Vec<_> = doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(groups, ["apps", "demo.kubewasm.dev"]);
        let core: Value = serde_json::from_slice(&aggregated(true, "v2")).unwrap();
        let pods = &core["items"][0]["versions"][0]["resources"][0];
        assert_eq!(pods["resource"], "pods");
        assert_eq!(pods["scope"], "Namespaced");
        assert_eq!(pods["subresources"][0]["subresource"], "status");
    }
}
