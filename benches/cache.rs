//! Cache benchmarks, native: `cargo bench -p kubewasm --bench cache`.
//! The wasm twin is tests/wasm_bench_cache.rs.
use std::time::Instant;

// Only `pod_json` of the shared generator is used here.
#[allow(dead_code)]
#[rustfmt::skip]
mod pods {
    include!("support/pods.rs");
    pub(crate) fn pod(i: usize, rv: u64) -> String { pod_json(i, rv) }
}
use pods::pod as pod_json;
include!("support/cache_bench.rs");

fn main() {
    let start = Instant::now();
    run_cache_benches(&|| start.elapsed().as_secs_f64() * 1000.0, &|line| {
        println!("native {line}")
    });
}
