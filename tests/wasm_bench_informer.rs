//! End-to-end informer benchmarks in wasm against the sim (Node, or Chromium
//! with `page`): events/s reaching a handler that reads only the key, beside a
//! plain JS floor on the same kind of stream in the same run; time to sync
//! 50,000 pods paged at 500 beside merely fetching the same pages; memory.
//! `scripts/with-sim.sh -- scripts/wasm-test.sh node --release --features bench wasm_bench_informer -- --nocapture`
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use js_sys::{Function, Promise};
use kubewasm::api::ApiResource;
use kubewasm::cache::{
    Handler, InformerOptions, Notification, ResourceListWatch, ResourceScope, SharedIndexInformer,
};
use kubewasm::rest::{ListParams, Request};
use kubewasm::rt::real_clock;
use serde_json::{json, Value};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[path = "support/sim.rs"]
mod sim;

const FLOOD: u64 = 200_000;

fn now_ms() -> f64 {
    real_clock().now().as_millis_f64()
}

/// The JS floor: read a watch stream, split lines, JSON.parse each, count MODIFIED.
async fn js_floor(rv: &str, events: u64) -> f64 {
    let token = sim::token().unwrap_or("");
    let f = Function::new_with_args(
        "url, token, rv, n",
        r#"return (async () => {
            const headers = token ? { Authorization: 'Bearer ' + token } : {};
            const res = await fetch(`${url}/api/v1/pods?watch=1&resourceVersion=${rv}`, { headers });
            const t0 = performance.now();
            await fetch(`${url}/sim/flood`, { method: 'POST', body: JSON.stringify({ resource: 'pods', events: n }) });
            const reader = res.body.getReader();
            const dec = new TextDecoder();
            let buf = '', seen = 0;
            while (seen < n) {
              const { value, done } = await reader.read();
              if (done) break;
              buf += dec.decode(value, { stream: true });
              let i;
              while ((i = buf.indexOf('\n')) >= 0) {
                const line = buf.slice(0, i);
                buf = buf.slice(i + 1);
                if (!line) continue;
                const ev = JSON.parse(line);
                if (ev.type === 'MODIFIED' && ev.object.metadata.name) seen++;
              }
            }
            const ms = performance.now() - t0;
            await reader.cancel();
            return ms;
          })()"#,
    );
    let p: Promise = f
        .call4(
            &JsValue::NULL,
            &sim::url().into(),
            &token.into(),
            &rv.into(),
            &JsValue::from_f64(events as f64),
        )
        .expect("js floor")
        .into();
    JsFuture::from(p)
        .await
        .expect("js floor")
        .as_f64()
        .unwrap_or(f64::NAN)
}

fn memory_mib() -> f64 {
    (core::arch::wasm32::memory_size(0) * 64) as f64 / 1024.0
}

#[wasm_bindgen_test]
async fn informer_end_to_end() {
    let c = sim::unlimited_client();
    sim::post(&c, "/sim/faults/clear", json!({})).await;
    sim::post(
        &c,
        "/sim/seed",
        json!({"namespaces": 20, "pods": 10_000, "seed": 1, "podBytes": 3000}),
    )
    .await;

    // kubewasm: an informer whose handler reads only the key.
    let seen = Rc::new(Cell::new(0u64));
    let s = seen.clone();
    let handler: Handler = Rc::new(move |n: Notification| {
        if let Notification::Update(_, o) = n {
            if !o.name().is_empty() {
                s.set(s.get() + 1);
            }
        }
        None
    });
    let lw = ResourceListWatch::new(
        c.clone(),
        ResourceScope::new(ApiResource::builtin("pods").expect("pods")),
    );
    let inf = SharedIndexInformer::new(Rc::new(lw), real_clock(), InformerOptions::default());
    inf.add_handler(handler, false);
    inf.start();
    inf.wait_for_sync().await;
    let t0 = now_ms();
    sim::post(
        &c,
        "/sim/flood",
        json!({"resource": "pods", "events": FLOOD}),
    )
    .await;
    while seen.get() < FLOOD {
        real_clock().sleep(Duration::from_millis(5)).await;
    }
    let wasm_ms = now_ms() - t0;
    inf.stop();

    // The JS floor on a fresh stream of the same pods.
    let rv: Value = c
        .send_json(&Request::get().path("/sim/stats"))
        .await
        .expect("stats");
    let rv = rv["resourceVersion"].as_str().unwrap_or("0").to_owned();
    let js_ms = js_floor(&rv, FLOOD).await;
    console_log!(
        "informer flood, 10,000 pods of ~3 KB, {FLOOD} MODIFIED: kubewasm handler {:.0} events/s ({wasm_ms:.0} ms); JS fetch+split+JSON.parse floor {:.0} events/s ({js_ms:.0} ms); ratio {:.2}x",
        FLOOD as f64 / wasm_ms * 1000.0,
        FLOOD as f64 / js_ms * 1000.0,
        js_ms / wasm_ms
    );

    // Sync 50,000 pods (paged at 500) vs fetching and discarding the same pages.
    sim::post(
        &c,
        "/sim/seed",
        json!({"namespaces": 50, "pods": 50_000, "seed": 2, "podBytes": 3000}),
    )
    .await;
    let t0 = now_ms();
    let mut cont: Option<String> = None;
    let mut bytes = 0usize;
    loop {
        let req = Request::get()
            .core()
            .resource("pods")
            .list_params(&ListParams {
                limit: Some(500),
                continue_token: cont.clone(),
                ..Default::default()
            });
        let body = c.send_bytes(&req).await.expect("page");
        bytes += body.len();
        // Only the continue token is read (the sim writes list metadata first).
        let head = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        cont = head
            .split(r#""continue":""#)
            .nth(1)
            .and_then(|r| r.split('"').next())
            .map(str::to_owned)
            .filter(|s| !s.is_empty());
        if cont.is_none() {
            break;
        }
    }
    let fetch_ms = now_ms() - t0;
    // The informer twice, pages prefetched (the default) and one at a time.
    let mut results = Vec::new();
    for prefetch in [true, false] {
        let mem_before = memory_mib();
        let lw = ResourceListWatch::new(
            c.clone(),
            ResourceScope::new(ApiResource::builtin("pods").expect("pods")),
        );
        let lw = if prefetch { lw } else { lw.without_prefetch() };
        let inf = SharedIndexInformer::new(Rc::new(lw), real_clock(), InformerOptions::default());
        let t0 = now_ms();
        inf.start();
        inf.wait_for_sync().await;
        let sync_ms = now_ms() - t0;
        assert_eq!(inf.store().len(), 50_000);
        results.push((prefetch, sync_ms, memory_mib(), memory_mib() - mem_before));
        inf.stop();
    }
    for (prefetch, sync_ms, mem, grew) in results {
        console_log!(
            "sync 50,000 pods ({:.0} MB) paged at 500, {}: informer {sync_ms:.0} ms vs fetch-and-discard {fetch_ms:.0} ms ({:.2}x); wasm linear memory {mem:.0} MiB (grew {grew:.0} MiB)",
            bytes as f64 / 1e6,
            if prefetch { "next page prefetched" } else { "one page at a time" },
            sync_ms / fetch_ms,
        );
    }
}
