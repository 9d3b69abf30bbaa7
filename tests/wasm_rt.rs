//! The runtime seam on a real JS host: timers, the clock and the executor.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use kubewasm::rt::{real_clock, spawn_local, yield_now};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
async fn real_clock_sleeps_at_least_the_duration() {
    let clock = real_clock();
    let start = clock.now();
    clock.sleep(Duration::from_millis(30)).await;
    let elapsed = clock.now() - start;
    assert!(
        elapsed >= Duration::from_millis(25),
        "slept only {elapsed:?}"
    );
    assert!(
        clock.wall_millis() > 1.6e12,
        "wall clock is epoch milliseconds"
    );
}

#[wasm_bindgen_test]
async fn spawned_task_runs_and_abort_stops_it() {
    let (tx, rx) = futures::channel::oneshot::channel::<u32>();
    spawn_local(async move {
        yield_now().await;
        let _ = tx.send(7);
    });
    assert_eq!(rx.await.ok(), Some(7));

    let (tx2, rx2) = futures::channel::oneshot::channel::<u32>();
    let handle = spawn_local(async move {
        real_clock().sleep(Duration::from_millis(20)).await;
        let _ = tx2.send(1);
    });
    handle.abort();
    assert!(
        rx2.await.is_err(),
        "an aborted task drops its sender without sending"
    );
}

/// The Makefile runs the wasm suites in Node, in a Chromium page and in a
/// Chromium dedicated worker; this proves each run really happened where it
/// claims (a misconfigured runner silently falls back or skips).
#[wasm_bindgen_test]
fn runs_in_the_expected_host() {
    let global = js_sys::global();
    let has = |name: &str| js_sys::Reflect::has(&global, &name.into()).unwrap_or(false);
    let host = if has("window") {
        "page"
    } else if has("WorkerGlobalScope") {
        "worker"
    } else if has("process") {
        "node"
    } else {
        "unknown"
    };
    let expected = option_env!("KUBEWASM_EXPECT_HOST").unwrap_or("unset");
    assert_eq!(
        host, expected,
        "KUBEWASM_EXPECT_HOST must name the host this run targets"
    );
    // No part of the client may need `window`: fetch and timers come from the global scope.
    assert!(has("fetch") && has("setTimeout"));
}
