//! The api layer against the sim, in Node and Chromium: discovery and the
//! mapper, CRUD and all four patch types on pods and on a CRD, and a paged
//! list of 1,200 objects.
#![cfg(target_arch = "wasm32")]

use kubewasm::api::{Api, Deleted, Discovery, RestMapper};
use kubewasm::rest::{
    Client, DeleteParams, ListParams, PatchParams, PatchType, PostParams, Request,
};
use serde_json::{json, Value};
use wasm_bindgen_test::wasm_bindgen_test;

#[path = "support/sim.rs"]
mod sim;

async fn mapper(c: &Client) -> RestMapper {
    RestMapper::new(
        Discovery::new(c.clone())
            .resources()
            .await
            .expect("discovery")
            .to_vec(),
    )
}

#[wasm_bindgen_test]
async fn discovery_finds_core_apps_and_crd_resources() {
    let m = mapper(&sim::client()).await;
    assert_eq!(m.find("pods").map(|r| r.namespaced), Some(true));
    assert_eq!(
        m.find("deploy").map(|r| r.api_version()),
        Some("apps/v1".to_string())
    );
    let w = m.find("widgets").expect("the CRD is discovered");
    assert_eq!(
        (w.group.as_str(), w.kind.as_str()),
        ("demo.kubewasm.dev", "Widget")
    );
    assert!(w.subresources.iter().any(|s| s == "status"));
    assert!(!m.find("nodes").expect("nodes").namespaced);
}

async fn round_trip(c: &Client, resource: &str, body: Value) {
    let m = mapper(c).await;
    let ns = sim::unique("api");
    let _ = c
        .send(
            &Request::post()
                .resource("namespaces")
                .json(&json!({"metadata": {"name": ns}})),
        )
        .await;
    let d = Api::namespaced(c.clone(), m.find(resource).expect("resource").clone(), &ns);
    let name = sim::unique("obj");
    let mut body = body;
    body["metadata"] = json!({"name": name, "labels": {"suite": "api"}});
    let created = d
        .create(&body, &PostParams::default())
        .await
        .expect("create");
    assert_eq!(created.name(), name);
    let got = d.get(&name).await.expect("get");
    assert_eq!(got.meta().uid(), created.meta().uid());

    let mut v = got.to_value().expect("decode");
    v["metadata"]["labels"]["replaced"] = json!("yes");
    let replaced = d
        .replace(&name, &v, &PostParams::default())
        .await
        .expect("replace");
    assert_eq!(replaced.meta().labels().get("replaced"), Some("yes"));
    // A stale resourceVersion conflicts.
    let stale = d
        .replace(&name, &v, &PostParams::default())
        .await
        .expect_err("stale replace");
    assert!(stale.is_conflict(), "{stale}");

    let pp = PatchParams {
        field_manager: Some("kubewasm-tests".into()),
        ..Default::default()
    };
    let o = d
        .patch(
            &name,
            &json!({"metadata": {"labels": {"merge": "1"}}}),
            PatchType::Merge,
            &pp,
        )
        .await
        .expect("merge");
    assert_eq!(o.meta().labels().get("merge"), Some("1"));
    let o = d
        .patch(
            &name,
            &json!({"metadata": {"labels": {"smp": "1"}}}),
            PatchType::Strategic,
            &pp,
        )
        .await
        .expect("strategic");
    assert_eq!(o.meta().labels().get("smp"), Some("1"));
    let o = d
        .patch(
            &name,
            &json!([{"op": "add", "path": "/metadata/labels/jp", "value": "1"}]),
            PatchType::Json,
            &pp,
        )
        .await
        .expect("json");
    assert_eq!(o.meta().labels().get("jp"), Some("1"));
    let o = d
        .patch(
            &name,
            &json!({"metadata": {"labels": {"ssa": "1"}}}),
            PatchType::Apply,
            &pp,
        )
        .await
        .expect("apply");
    assert_eq!(o.meta().labels().get("ssa"), Some("1"));

    let deleted = d
        .delete(&name, &DeleteParams::default())
        .await
        .expect("delete");
    // Pods come back as the deleted object; a custom resource deleted at once
    // answers a Status, as the API server does.
    match (resource, deleted) {
        ("pods", Deleted::Object(o)) => assert_eq!(o.name(), name),
        ("pods", other) => panic!("a pod deletion answers the pod: {other:?}"),
        (_, Deleted::Status(s)) => assert_eq!(s.details.map(|d| d.name), Some(name.clone())),
        (_, other) => panic!("a deletion at once answers a Status: {other:?}"),
    }
    let gone = d.get(&name).await.expect_err("deleted");
    assert!(gone.is_not_found(), "{gone}");
}

#[wasm_bindgen_test]
async fn crud_and_patches_on_pods() {
    round_trip(&sim::client(), "pods", json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": "busybox"}]}})).await;
}

#[wasm_bindgen_test]
async fn crud_and_patches_on_a_crd() {
    round_trip(
        &sim::client(),
        "widgets",
        json!({"apiVersion": "demo.kubewasm.dev/v1", "kind": "Widget", "spec": {"size": 3}}),
    )
    .await;
}

#[wasm_bindgen_test]
async fn list_all_pages_1200_objects_at_limit_500_in_order() {
    // 1,200 creates: without the client-side rate limit (20/s by default).
    let c = sim::unlimited_client();
    let m = mapper(&c).await;
    let ns = sim::unique("pager");
    let _ = c
        .send(
            &Request::post()
                .resource("namespaces")
                .json(&json!({"metadata": {"name": ns}})),
        )
        .await;
    let d = Api::namespaced(
        c.clone(),
        m.find("configmaps").expect("configmaps").clone(),
        &ns,
    );
    for i in 0..1200 {
        d.create(
            &json!({"metadata": {"name": format!("cm-{i:04}")}, "data": {"i": i.to_string()}}),
            &PostParams::default(),
        )
        .await
        .expect("create");
    }
    let first = d
        .list(&ListParams {
            limit: Some(500),
            ..Default::default()
        })
        .await
        .expect("page");
    assert_eq!(first.items.len(), 500);
    assert!(first.continue_token.is_some());
    let all = d
        .list_all(&ListParams {
            limit: Some(500),
            ..Default::default()
        })
        .await
        .expect("list all");
    assert!(all.paginated);
    let names: Vec<String> = all.items.iter().map(|o| o.name().to_owned()).collect();
    let want: Vec<String> = (0..1200).map(|i| format!("cm-{i:04}")).collect();
    assert_eq!(names, want);
}
