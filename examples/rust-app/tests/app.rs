//! The app against kubewasm-sim (its URL and token are baked in at build
//! time by `scripts/with-sim.sh`), in Node and in Chromium: run by
//! `make test` through `scripts/wasm-test.sh --crate examples/rust-app`.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use kubewasm::cache::{FactoryError, SyncErrorKind};
use kubewasm::rest::{Client, ListParams, Request};
use kubewasm_rust_app::{client, pod_names, pod_names_js, AppError};
use wasm_bindgen_test::wasm_bindgen_test;

fn sim() -> (&'static str, Option<&'static str>) {
    let url = option_env!("KUBEWASM_SIM_URL")
        .filter(|u| !u.is_empty())
        .expect("KUBEWASM_SIM_URL set at build time (run through scripts/with-sim.sh)");
    (
        url,
        option_env!("KUBEWASM_SIM_TOKEN").filter(|t| !t.is_empty()),
    )
}

fn sim_client() -> Client {
    let (url, token) = sim();
    client(url, token).expect("client")
}

/// The names the API server itself lists, sorted.
async fn listed(namespace: &str, selector: &str) -> Vec<String> {
    let params = ListParams {
        label_selector: Some(selector.into()),
        ..Default::default()
    };
    let req = Request::get()
        .path(format!("/api/v1/namespaces/{namespace}/pods"))
        .list_params(&params);
    let list = sim_client().send_list(&req).await.expect("list");
    let mut names: Vec<String> = list.items.iter().map(|p| p.name().to_owned()).collect();
    names.sort();
    names
}

#[wasm_bindgen_test]
async fn the_cache_answers_what_the_server_lists() {
    let want = listed("default", "app=web").await;
    assert!(!want.is_empty(), "the sim seeds app=web pods in default");
    let got = pod_names(sim_client(), "default", "app=web", Duration::from_secs(30))
        .await
        .expect("pod names");
    assert_eq!(got, want);
    let all = pod_names(sim_client(), "default", "", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(all.len() > want.len());
}

#[wasm_bindgen_test]
async fn the_javascript_export_answers_the_same() {
    let (url, token) = sim();
    let got = pod_names_js(
        url.into(),
        token.map(Into::into),
        "default".into(),
        "app=web".into(),
    )
    .await
    .map_err(|_| "podNames rejected")
    .unwrap();
    assert_eq!(got, listed("default", "app=web").await);
}

#[wasm_bindgen_test]
async fn an_unreachable_server_is_an_error_within_the_timeout_not_a_hang() {
    // Port 1 on loopback: nothing listens there.
    let c = client("http://127.0.0.1:1", None).unwrap();
    match pod_names(c, "default", "", Duration::from_secs(2)).await {
        Err(AppError::Sync(e)) => assert_eq!(
            e.kind,
            SyncErrorKind::TimedOut(Duration::from_secs(2)),
            "{e}"
        ),
        other => panic!("expected a sync timeout, got {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn a_bad_selector_url_or_namespace_is_a_typed_error_at_once() {
    assert!(matches!(
        pod_names(
            sim_client(),
            "default",
            "app in (web",
            Duration::from_secs(30)
        )
        .await,
        Err(AppError::Selector(_))
    ));
    assert!(matches!(
        client("not a url", None),
        Err(AppError::Config(_))
    ));
    assert!(matches!(
        pod_names(sim_client(), "a/b", "", Duration::from_secs(30)).await,
        Err(AppError::Factory(FactoryError::InvalidScope(_)))
    ));
}
