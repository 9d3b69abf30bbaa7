//! Cache benchmarks in wasm (Node):
//! `scripts/wasm-test.sh node --release --features bench wasm_bench_cache -- --nocapture`.
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[allow(dead_code)]
#[rustfmt::skip]
mod pods {
    include!("../benches/support/pods.rs");
    pub(crate) fn pod(i: usize, rv: u64) -> String { pod_json(i, rv) }
}
use pods::pod as pod_json;
include!("../benches/support/cache_bench.rs");

#[wasm_bindgen_test]
fn cache_benchmarks() {
    let perf = js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .unwrap_or(wasm_bindgen::JsValue::UNDEFINED);
    let now = js_sys::Reflect::get(&perf, &"now".into())
        .ok()
        .and_then(|f| wasm_bindgen::JsCast::dyn_into::<js_sys::Function>(f).ok());
    let now_ms = move || {
        now.as_ref()
            .and_then(|f| f.call0(&perf).ok())
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    };
    let pages = core::arch::wasm32::memory_size(0);
    run_cache_benches(&now_ms, &|line| console_log!("wasm {line}"));
    let grown = core::arch::wasm32::memory_size(0) - pages;
    console_log!("wasm linear memory grew by {} MiB during the run (50,000 pods cached twice plus the indexes)", grown * 64 / 1024);
}
