//! api layer behaviour: the built-in table, the mapper, discovery parsing and
//! fallback, the pager (PG-01..04) and the resource handle's requests.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::rest::fixtures;
use crate::rest::{
    Client, Config, Error, FakeResponse, FakeTransport, ListParams, ObjectList, PatchParams,
    PatchType, PostParams,
};
use crate::rt::{block_on, FakeClock};

fn client(t: &FakeTransport, clock: &FakeClock) -> Client {
    let mut cfg = Config::new("http://k8s.test/prefix");
    cfg.rate_limit = None;
    cfg.max_retries = 0;
    Client::with_transport(cfg, Rc::new(t.clone()), clock.shared()).expect("client")
}

fn page(rv: &str, names: &[&str], cont: Option<&str>) -> ObjectList {
    let items = names.iter().map(|n| fixtures::obj(n, 1)).collect();
    fixtures::page(rv, items, cont)
}

#[test]
fn builtin_table_and_mapper() {
    let m = RestMapper::new(builtin_resources());
    assert_eq!(m.find("po").unwrap().plural, "pods");
    assert_eq!(m.find("Deployment").unwrap().api_version(), "apps/v1");
    assert_eq!(m.find("deployments.apps").unwrap().kind, "Deployment");
    assert!(m.find("deployments.batch").is_none());
    assert!(!m.find("nodes").unwrap().namespaced);
    assert!(m.find("cronjob").unwrap().namespaced);
    assert_eq!(
        m.resource_for_kind(Some("networking.k8s.io"), "Ingress")
            .unwrap()
            .plural,
        "ingresses"
    );
    assert_eq!(builtin_resources().len(), 18);
}

/// Names as kubectl resolves them: `resource.group` (a group with dots too),
/// `resource.version.group`, and singulars from the kind when discovery
/// names none (`glasses` is `glass`, not `glasse`).
#[test]
fn mapper_resolves_qualified_names_and_singulars_from_kinds() {
    let legacy = br#"{"kind":"APIResourceList","groupVersion":"optics.example.com/v1","resources":[
        {"name":"glasses","namespaced":true,"kind":"Glass","verbs":["list"]}]}"#;
    let v2 = br#"{"kind":"APIResourceList","groupVersion":"optics.example.com/v2","resources":[
        {"name":"glasses","namespaced":true,"kind":"Glass","verbs":["list"]}]}"#;
    let mut rs = parse_resource_list(v2, true).unwrap();
    rs.extend(parse_resource_list(legacy, false).unwrap());
    rs.extend(builtin_resources());
    assert_eq!(rs[0].singular, "glass");
    let m = RestMapper::new(rs);
    let found = |name: &str| m.find(name).map(|r| r.api_version());
    assert_eq!(found("glass").as_deref(), Some("optics.example.com/v2"));
    assert_eq!(
        found("glasses.optics.example.com").as_deref(),
        Some("optics.example.com/v2")
    );
    assert_eq!(
        found("glasses.v1.optics.example.com").as_deref(),
        Some("optics.example.com/v1")
    );
    assert_eq!(
        found("Glass.V1.Optics.Example.Com").as_deref(),
        Some("optics.example.com/v1")
    );
    assert_eq!(found("glasses.v3.optics.example.com"), None);
    assert_eq!(found("deployments.v1.apps").as_deref(), Some("apps/v1"));
    assert_eq!(found("deploy.v1.apps").as_deref(), Some("apps/v1"));
    assert_eq!(found("deployments.v1beta1.apps"), None);
    assert_eq!(
        found("ingresses.networking.k8s.io").as_deref(),
        Some("networking.k8s.io/v1")
    );
    assert_eq!(
        found("ingresses.v1.networking.k8s.io").as_deref(),
        Some("networking.k8s.io/v1")
    );
    assert_eq!(found("pods.v1"), None);
}

#[test]
fn parses_aggregated_and_legacy_discovery() {
    let agg = json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": [
        {"metadata": {"name": "demo.kubewasm.dev"}, "versions": [
            {"version": "v2", "resources": [{"resource": "widgets", "responseKind": {"group": "demo.kubewasm.dev", "version": "v2", "kind": "Widget"},
              "scope": "Namespaced", "singularResource": "widget", "verbs": ["get", "list", "watch"], "shortNames": ["wd"],
              "subresources": [{"subresource": "status"}]}]},
            {"version": "v1", "resources": [{"resource": "widgets", "responseKind": {"kind": "Widget"}, "scope": "Namespaced", "verbs": ["list"]}]}]}]});
    let rs = parse_aggregated(&serde_json::to_vec(&agg).unwrap()).unwrap();
    assert_eq!(rs.len(), 2);
    assert!(
        rs[0].preferred && !rs[1].preferred,
        "the first version is preferred"
    );
    assert_eq!(rs[0].subresources, vec!["status"]);
    let m = RestMapper::new(rs);
    assert_eq!(m.find("wd").unwrap().version, "v2");
    assert!(parse_aggregated(br#"{"kind":"APIGroupList"}"#).is_err());
    assert!(parse_aggregated(b"<html>").is_err());

    let legacy = json!({"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": [
        {"name": "deployments", "singularName": "deployment", "namespaced": true, "kind": "Deployment", "verbs": ["get"], "shortNames": ["deploy"]},
        {"name": "deployments/scale", "namespaced": true, "kind": "Scale", "verbs": ["get"]}]});
    let rs = parse_resource_list(&serde_json::to_vec(&legacy).unwrap(), true).unwrap();
    assert_eq!(rs.len(), 1);
    assert_eq!(
        (rs[0].group.as_str(), rs[0].subresources.clone()),
        ("apps", vec!["scale".to_string()])
    );
    let groups = json!({"kind": "APIGroupList", "groups": [{"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}, {"groupVersion": "apps/v1beta1", "version": "v1beta1"}],
        "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}]});
    assert_eq!(
        parse_legacy_group_list(&serde_json::to_vec(&groups).unwrap()).unwrap(),
        vec![
            ("apps/v1".to_string(), true),
            ("apps/v1beta1".to_string(), false)
        ]
    );
}

#[test]
fn discovery_documents_read_in_any_member_order_with_nulls_as_empty() {
    // The group's name and each version's name after their resources; unknown
    // members of every type skipped; `null` where Go's decoder reads empty.
    let agg = br#"{"items":[{"versions":[{"resources":[{"verbs":null,"x":[1,{"y":2.5e3}],
        "resource":"gadgets","scope":"Cluster","responseKind":{"kind":"Gadget"},"shortNames":null,
        "subresources":[{"subresource":"scale"},{"subresource":"status"}]}],"version":"v1"}],
        "metadata":{"name":"demo.kubewasm.dev","labels":{}}}],"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2"}"#;
    let rs = parse_aggregated(agg).unwrap();
    assert_eq!(
        rs,
        vec![ApiResource {
            group: "demo.kubewasm.dev".into(),
            version: "v1".into(),
            plural: "gadgets".into(),
            singular: "gadget".into(),
            kind: "Gadget".into(),
            namespaced: false,
            short_names: vec![],
            verbs: vec![],
            subresources: vec!["scale".into(), "status".into()],
            preferred: true,
        }]
    );
    // A member of the wrong type, or a cut document, is a decode error.
    for bad in [
        &br#"{"kind":"APIGroupDiscoveryList","items":{}}"#[..],
        br#"{"kind":"APIGroupDiscoveryList","items":[{"versions":[{"version":1}]}]}"#,
        br#"{"kind":"APIGroupDiscoveryList","items":["#,
    ] {
        assert!(parse_aggregated(bad).is_err());
    }
    assert!(parse_resource_list(br#"{"resources":[{"namespaced":"yes"}]}"#, true).is_err());
    assert!(parse_legacy_group_list(br#"{"groups":[{"versions":[5]}]}"#).is_err());
    assert_eq!(
        parse_legacy_group_list(
            br#"{"groups":[{"preferredVersion":null,"versions":[{"groupVersion":"a/v1"}]}]}"#
        )
        .unwrap(),
        vec![("a/v1".to_string(), true)]
    );
}

#[test]
fn invalidate_during_a_discovery_starts_a_fresh_one_and_the_old_one_fills_no_cache() {
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let c = client(&t, &clock);
    let core = |kind: &str| {
        FakeResponse::json(
            200,
            &json!({"kind": "APIGroupDiscoveryList", "items": [{"metadata": {"name": ""}, "versions": [{"version": "v1", "resources": [{"resource": "things", "responseKind": {"kind": kind}, "scope": "Namespaced"}]}]}]}),
        )
    };
    let no_groups =
        || FakeResponse::json(200, &json!({"kind": "APIGroupDiscoveryList", "items": []}));
    let d = Discovery::new(c);
    let kinds = |r: &Rc<Vec<ApiResource>>| r.iter().map(|r| r.kind.clone()).collect::<Vec<_>>();
    let old = t.push_pending();
    let first: Rc<RefCell<Option<Vec<String>>>> = Rc::default();
    let (f, d1) = (first.clone(), d.clone());
    crate::rt::spawn_local(async move {
        *f.borrow_mut() = d1.resources().await.ok().map(|r| kinds(&r));
    });
    crate::rt::run_until_stalled();
    assert_eq!(t.request_count(), 1);
    // A CRD was installed meanwhile.
    d.invalidate();
    t.push(core("New"));
    t.push(no_groups());
    let second: Rc<RefCell<Option<Vec<String>>>> = Rc::default();
    let (s2, d2) = (second.clone(), d.clone());
    crate::rt::spawn_local(async move {
        *s2.borrow_mut() = d2.resources().await.ok().map(|r| kinds(&r));
    });
    crate::rt::run_until_stalled();
    assert_eq!(
        second.borrow().clone(),
        Some(vec!["New".to_owned()]),
        "not the old one joined"
    );
    assert_eq!(t.request_count(), 3, "a fresh discovery");
    t.push(no_groups());
    old.respond(core("Old"));
    crate::rt::run_until_stalled();
    assert_eq!(
        first.borrow().clone(),
        Some(vec!["Old".to_owned()]),
        "its own caller gets it"
    );
    assert_eq!(
        kinds(&block_on(d.resources()).unwrap()),
        vec!["New"],
        "the cache kept the fresh one"
    );
    assert_eq!(t.request_count(), 4);
}

#[test]
fn a_legacy_group_version_that_fails_leaves_the_others() {
    // metrics.k8s.io's server is down: apps/v1 is still found, at once.
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let c = client(&t, &clock);
    t.push(FakeResponse::status(406, "NotAcceptable", "no"));
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": []}),
    ));
    t.push(FakeResponse::json(200, &json!({"kind": "APIGroupList", "groups": [
        {"name": "metrics.k8s.io", "versions": [{"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
         "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}},
        {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}
    ]})));
    t.push(FakeResponse::status(
        503,
        "ServiceUnavailable",
        "the metrics server is down",
    ));
    t.push(FakeResponse::json(200, &json!({"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": [
        {"name": "deployments", "namespaced": true, "kind": "Deployment", "verbs": ["list", "watch"]}
    ]})));
    let d = Discovery::new(c);
    let rs = block_on(d.resources()).expect("partial results");
    assert_eq!(
        rs.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>(),
        vec!["Deployment"]
    );
    assert_eq!(t.request_count(), 5, "the 503 was not retried");
}

#[test]
fn discovery_falls_back_to_legacy_and_caches_with_ttl() {
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let c = client(&t, &clock);
    // Aggregated is refused (an old server answers 406).
    t.push(FakeResponse::status(406, "NotAcceptable", "no"));
    t.push(FakeResponse::json(200, &json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [{"name": "pods", "namespaced": true, "kind": "Pod", "verbs": ["list"]}]})));
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "APIGroupList", "groups": []}),
    ));
    let d = Discovery::new(c).with_ttl(Duration::from_secs(60));
    let rs = block_on(d.resources()).unwrap();
    assert_eq!(rs.len(), 1);
    let urls: Vec<String> = t.requests().iter().map(|r| r.url.clone()).collect();
    assert_eq!(
        urls,
        vec![
            "http://k8s.test/prefix/api",
            "http://k8s.test/prefix/api/v1",
            "http://k8s.test/prefix/apis"
        ]
    );
    assert_eq!(t.requests()[0].header("Accept"), Some(AGGREGATED_ACCEPT));
    block_on(d.resources()).unwrap();
    assert_eq!(t.request_count(), 3, "served from the cache");
    clock.advance(Duration::from_secs(61));
    t.push(FakeResponse::json(200, &json!({"kind": "APIGroupDiscoveryList", "items": [{"metadata": {"name": ""}, "versions": [{"version": "v1", "resources": [{"resource": "pods", "responseKind": {"kind": "Pod"}, "scope": "Namespaced"}]}]}]})));
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "APIGroupDiscoveryList", "items": []}),
    ));
    let rs = block_on(d.resources()).unwrap();
    assert_eq!(rs[0].kind, "Pod");
    assert_eq!(
        t.request_count(),
        5,
        "expired cache refetches, aggregated this time"
    );
    d.invalidate();
    t.push(FakeResponse::status(500, "InternalError", "x"));
    t.push(FakeResponse::status(500, "InternalError", "x"));
    assert!(
        block_on(d.resources()).is_err(),
        "both paths failing is an error"
    );
}

#[test]
fn pg_01_to_04_pager_rules() {
    // PG-01/02: default limit, a single page is not paginated even when full.
    let seen: Rc<RefCell<Vec<ListParams>>> = Rc::default();
    let s = seen.clone();
    let r = block_on(list_all(10, ListParams::default(), move |p| {
        s.borrow_mut().push(p);
        async { Ok(page("5", &["a", "b"], None)) }
    }))
    .unwrap();
    assert!(!r.paginated);
    assert_eq!(seen.borrow()[0].limit, Some(10));
    // PG-03: later pages carry the token, drop RV and RV-match; the first RV wins.
    let pages = Rc::new(RefCell::new(vec![
        page("1", &["a"], Some("c1")),
        page("2", &["b"], Some("c2")),
        page("3", &["c"], None),
    ]));
    let seen: Rc<RefCell<Vec<ListParams>>> = Rc::default();
    let (s, p) = (seen.clone(), pages.clone());
    let params = ListParams {
        resource_version: Some("10".into()),
        resource_version_match: Some("NotOlderThan".into()),
        label_selector: Some("a=b".into()),
        ..Default::default()
    };
    let r = block_on(list_all(10, params, move |lp| {
        s.borrow_mut().push(lp);
        let next = p.borrow_mut().remove(0);
        async move { Ok(next) }
    }))
    .unwrap();
    assert!(r.paginated);
    assert_eq!(r.items.len(), 3);
    assert_eq!(r.resource_version, "1");
    let seen = seen.borrow();
    assert_eq!(seen[0].resource_version.as_deref(), Some("10"));
    assert_eq!(seen[1].resource_version, None);
    assert_eq!(seen[1].resource_version_match, None);
    assert_eq!(seen[1].continue_token.as_deref(), Some("c1"));
    assert_eq!(
        seen[2].label_selector.as_deref(),
        Some("a=b"),
        "selectors pass through"
    );
    // PG-04: Expired on page 2 → one full list at the original RV.
    let calls = Rc::new(RefCell::new(0));
    let c = calls.clone();
    let r = block_on(list_all(
        10,
        ListParams {
            resource_version: Some("7".into()),
            ..Default::default()
        },
        move |lp| {
            *c.borrow_mut() += 1;
            let n = *c.borrow();
            async move {
                match n {
                    1 => Ok(page("7", &["a"], Some("c1"))),
                    2 => Err(Error::from_response(
                        410,
                        br#"{"kind":"Status","code":410,"reason":"Expired","message":"old"}"#,
                        None,
                    )),
                    _ => {
                        assert_eq!(lp.limit, None);
                        assert_eq!(lp.continue_token, None);
                        assert_eq!(lp.resource_version.as_deref(), Some("7"));
                        Ok(page("8", &["a", "b", "c"], None))
                    }
                }
            }
        },
    ))
    .unwrap();
    assert_eq!((r.items.len(), *calls.borrow()), (3, 3));
    // An Expired first page is an error.
    let r = block_on(list_all(10, ListParams::default(), |_| async {
        Err(Error::from_response(
            410,
            br#"{"kind":"Status","code":410,"reason":"Expired","message":"old"}"#,
            None,
        ))
    }));
    assert!(r.is_err());
}

#[test]
fn the_handle_builds_requests_for_any_resource() {
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let c = client(&t, &clock);
    let widgets = ApiResource {
        group: "demo.kubewasm.dev".into(),
        version: "v1".into(),
        plural: "widgets".into(),
        kind: "Widget".into(),
        namespaced: true,
        ..Default::default()
    };
    let d = Api::all(c.clone(), widgets);
    assert!(
        block_on(d.get("x")).is_err(),
        "a namespaced resource needs a namespace for named calls"
    );
    let d = d.in_namespace("team-1");
    t.push(FakeResponse::json(
        201,
        &json!({"metadata": {"name": "w", "namespace": "team-1"}}),
    ));
    block_on(d.create(
        &json!({"metadata": {"name": "w"}}),
        &PostParams {
            dry_run: true,
            field_manager: Some("me".into()),
        },
    ))
    .unwrap();
    let r = t.last_request().unwrap();
    assert_eq!(r.url, "http://k8s.test/prefix/apis/demo.kubewasm.dev/v1/namespaces/team-1/widgets?dryRun=All&fieldManager=me");
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    for (kind, ctype) in [
        (PatchType::Merge, "application/merge-patch+json"),
        (
            PatchType::Strategic,
            "application/strategic-merge-patch+json",
        ),
        (PatchType::Json, "application/json-patch+json"),
        (PatchType::Apply, "application/apply-patch+yaml"),
    ] {
        t.push(FakeResponse::json(200, &json!({"metadata": {"name": "w"}})));
        let pp = PatchParams {
            field_manager: Some("me".into()),
            ..Default::default()
        };
        block_on(d.patch("w", &json!({}), kind, &pp)).unwrap();
        assert_eq!(
            t.last_request().unwrap().header("Content-Type"),
            Some(ctype)
        );
    }
    assert!(
        block_on(d.patch("w", &json!({}), PatchType::Apply, &PatchParams::default())).is_err(),
        "apply needs a field manager"
    );
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "Scale", "metadata": {"name": "w"}}),
    ));
    block_on(d.get_subresource("w", "scale")).unwrap();
    assert!(t
        .last_request()
        .unwrap()
        .url
        .ends_with("/namespaces/team-1/widgets/w/scale"));
    let nodes = Api::namespaced(c, ApiResource::builtin("nodes").unwrap(), "ignored");
    t.push(FakeResponse::json(
        200,
        &json!({"metadata": {"name": "n1"}}),
    ));
    block_on(nodes.get("n1")).unwrap();
    assert_eq!(
        t.last_request().unwrap().url,
        "http://k8s.test/prefix/api/v1/nodes/n1",
        "cluster-scoped ignores the namespace"
    );
}

#[test]
fn concurrent_discovery_calls_share_one_refresh() {
    use crate::rt::{run_until_stalled, spawn_local};
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let d = Discovery::new(client(&t, &clock));
    let api = t.push_pending();
    let got = Rc::new(RefCell::new(Vec::new()));
    for _ in 0..3 {
        let (d, got) = (d.clone(), got.clone());
        spawn_local(async move {
            let n = d.resources().await.map(|r| r.len());
            got.borrow_mut().push(n);
        });
    }
    run_until_stalled();
    assert_eq!(
        t.request_count(),
        1,
        "one request in flight for three callers"
    );
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "APIGroupDiscoveryList", "items": []}),
    ));
    api.respond(FakeResponse::json(200, &json!({"kind": "APIGroupDiscoveryList", "items": [{"metadata": {"name": ""}, "versions": [{"version": "v1", "resources": [{"resource": "pods", "responseKind": {"kind": "Pod"}, "scope": "Namespaced"}]}]}]})));
    run_until_stalled();
    assert_eq!(*got.borrow(), vec![Ok(1), Ok(1), Ok(1)]);
    assert_eq!(t.request_count(), 2, "/api and /apis once");
    // A failed refresh is shared too, and the next call tries again.
    d.invalidate();
    t.push(FakeResponse::status(500, "InternalError", "x"));
    t.push(FakeResponse::status(500, "InternalError", "x"));
    assert!(block_on(d.resources()).is_err());
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "APIGroupDiscoveryList", "items": []}),
    ));
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "APIGroupDiscoveryList", "items": []}),
    ));
    assert_eq!(block_on(d.resources()).map(|r| r.len()), Ok(0));
}

/// The request a handle call sends, or the error it fails with before sending.
fn sent<F: std::future::Future>(t: &FakeTransport, call: F) -> Result<String, String>
where
    F::Output: std::fmt::Debug,
{
    let before = t.request_count();
    t.set_handler(|_| {
        Some(Ok(FakeResponse::json(
            200,
            &json!({"kind": "List", "metadata": {"name": "x", "resourceVersion": "1"}, "items": []}),
        )))
    });
    let out = block_on(call);
    if t.request_count() == before {
        return Err(format!("{out:?}"));
    }
    let r = t.last_request().expect("request");
    Ok(format!(
        "{} {}",
        r.method.as_str(),
        r.url.trim_start_matches("http://k8s.test/prefix")
    ))
}

#[test]
fn handle_paths_for_core_and_group_namespaced_and_cluster_resources() {
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let c = client(&t, &clock);
    let pods = Api::all(c.clone(), ApiResource::builtin("pods").unwrap());
    let deploys = Api::namespaced(c.clone(), ApiResource::builtin("deploy").unwrap(), "prod");
    let nodes = Api::all(c.clone(), ApiResource::builtin("nodes").unwrap());
    let lp = ListParams::default();
    let post = PostParams::default();
    let del = crate::rest::DeleteParams::default();
    let body = json!({"metadata": {"name": "x"}});

    // Collections: one namespace or all of them.
    assert_eq!(sent(&t, pods.list(&lp)).unwrap(), "GET /api/v1/pods");
    assert_eq!(
        sent(&t, pods.in_namespace("a").list(&lp)).unwrap(),
        "GET /api/v1/namespaces/a/pods"
    );
    assert_eq!(
        sent(&t, deploys.list(&lp)).unwrap(),
        "GET /apis/apps/v1/namespaces/prod/deployments"
    );
    assert_eq!(
        sent(&t, deploys.all_namespaces().list(&lp)).unwrap(),
        "GET /apis/apps/v1/deployments"
    );
    assert_eq!(
        sent(&t, deploys.create(&body, &post)).unwrap(),
        "POST /apis/apps/v1/namespaces/prod/deployments"
    );
    assert_eq!(
        sent(&t, deploys.delete_collection(&lp, &del)).unwrap(),
        "DELETE /apis/apps/v1/namespaces/prod/deployments"
    );
    // The API server has no deletecollection across namespaces.
    assert!(sent(&t, deploys.all_namespaces().delete_collection(&lp, &del)).is_err());
    // Named verbs and subresources.
    assert_eq!(
        sent(&t, pods.in_namespace("a").get("p1")).unwrap(),
        "GET /api/v1/namespaces/a/pods/p1"
    );
    assert_eq!(
        sent(&t, deploys.get_subresource("web", "scale")).unwrap(),
        "GET /apis/apps/v1/namespaces/prod/deployments/web/scale"
    );
    assert_eq!(
        sent(&t, deploys.get_at("web", "", Some("0"))).unwrap(),
        "GET /apis/apps/v1/namespaces/prod/deployments/web?resourceVersion=0"
    );
    assert_eq!(
        sent(
            &t,
            deploys.replace_subresource("web", "status", &body, &post)
        )
        .unwrap(),
        "PUT /apis/apps/v1/namespaces/prod/deployments/web/status"
    );
    assert_eq!(
        sent(&t, deploys.delete("web", &del)).unwrap(),
        "DELETE /apis/apps/v1/namespaces/prod/deployments/web"
    );
    // Cluster-scoped: the namespace is ignored, every verb works without one.
    assert_eq!(nodes.in_namespace("a").namespace(), None);
    assert_eq!(sent(&t, nodes.get("n1")).unwrap(), "GET /api/v1/nodes/n1");
    assert_eq!(
        sent(&t, nodes.in_namespace("a").get("n1")).unwrap(),
        "GET /api/v1/nodes/n1"
    );
    assert_eq!(
        sent(&t, nodes.in_namespace("a").list(&lp)).unwrap(),
        "GET /api/v1/nodes"
    );
    assert_eq!(
        sent(&t, nodes.create(&body, &post)).unwrap(),
        "POST /api/v1/nodes"
    );
    assert_eq!(
        sent(&t, nodes.get_subresource("n1", "status")).unwrap(),
        "GET /api/v1/nodes/n1/status"
    );
}

#[test]
fn handle_scope_errors_are_raised_before_sending() {
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let c = client(&t, &clock);
    let pods = Api::all(c.clone(), ApiResource::builtin("pods").unwrap());
    let post = PostParams::default();
    let del = crate::rest::DeleteParams::default();
    let body = json!({"metadata": {"name": "x"}});
    let invalid = |r: Result<String, String>, needle: &str| {
        let e = r.expect_err("no request is sent");
        assert!(e.contains("InvalidRequest") && e.contains(needle), "{e}");
    };
    // A namespaced resource needs a namespace for named verbs and create.
    invalid(sent(&t, pods.get("p1")), "pods is namespaced: ");
    invalid(sent(&t, pods.delete("p1", &del)), "needs a namespace");
    invalid(
        sent(
            &t,
            pods.patch("p1", &body, PatchType::Merge, &PatchParams::default()),
        ),
        "needs a namespace",
    );
    invalid(
        sent(&t, pods.get_subresource("p1", "status")),
        "needs a namespace",
    );
    invalid(
        sent(&t, pods.create(&body, &post)),
        "create needs a namespace",
    );
    // An empty name would address the collection.
    invalid(
        sent(&t, pods.in_namespace("a").delete("", &del)),
        "name must not be empty",
    );
    // Names and namespaces must be path segments.
    invalid(sent(&t, pods.in_namespace("a").get("x/y")), "invalid name");
    invalid(
        sent(&t, pods.in_namespace("..").get("x")),
        "invalid namespace",
    );
    assert_eq!(t.request_count(), 0);
}

#[test]
fn delete_answers_the_object_or_the_status() {
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let c = client(&t, &clock);
    let cms = Api::namespaced(c, ApiResource::builtin("cm").unwrap(), "a");
    let del = crate::rest::DeleteParams::default();
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Success", "details": {"name": "x", "kind": "configmaps"}}),
    ));
    match block_on(cms.delete("x", &del)).unwrap() {
        Deleted::Status(s) => {
            assert_eq!(s.status, "Success");
            assert_eq!(s.details.unwrap().name, "x");
        }
        other => panic!("{other:?}"),
    }
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "ConfigMap", "metadata": {"name": "x", "namespace": "a", "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["f"]}}),
    ));
    match block_on(cms.delete("x", &del)).unwrap() {
        Deleted::Object(o) => assert_eq!(o.name(), "x"),
        other => panic!("{other:?}"),
    }
    // A failure `Status` answered with 200 is its error, not "deleted".
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Invalid", "code": 422}),
    ));
    let e = block_on(cms.delete("x", &del)).unwrap_err();
    assert_eq!((e.code(), e.reason()), (Some(422), Some("Invalid")));
}

#[test]
fn the_pager_stops_at_a_continue_token_it_already_followed() {
    // Tokens c1, c2, then c1 again: the list would cycle forever.
    let tokens = Rc::new(RefCell::new(vec!["c1", "c2", "c1", "c9"]));
    let calls = Rc::new(RefCell::new(0));
    let (t, c) = (tokens.clone(), calls.clone());
    let r = block_on(list_all(10, ListParams::default(), move |_| {
        *c.borrow_mut() += 1;
        let next = t.borrow_mut().remove(0);
        async move { Ok(page("1", &["a"], Some(next))) }
    }));
    let e = r.expect_err("a cycle is an error");
    assert!(e.to_string().contains("\"c1\" a second time"), "{e}");
    assert_eq!(*calls.borrow(), 3);
}
