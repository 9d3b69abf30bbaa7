//! api layer behaviour: the built-in table, the mapper, discovery parsing and
//! fallback, the pager (PG-01..04) and the dynamic client's requests.

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
fn dynamic_client_builds_requests_for_any_resource() {
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
    let d = DynamicClient::new(c.clone(), widgets);
    assert!(
        block_on(d.get("x")).is_err(),
        "a namespaced resource needs a namespace for named calls"
    );
    let d = d.namespaced("team-1");
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
    let nodes = DynamicClient::new(
        c,
        RestMapper::new(builtin_resources())
            .find("nodes")
            .unwrap()
            .clone(),
    )
    .namespaced("ignored");
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
