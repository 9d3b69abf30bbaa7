//! Cache benchmarks, native: `cargo bench -p kubewasm --bench cache`.
//! The wasm twin is tests/wasm_bench_cache.rs.
use std::time::Instant;

include!("support/pods.rs");
include!("support/cache_bench.rs");

fn main() {
    let start = Instant::now();
    run_cache_benches(&|| start.elapsed().as_secs_f64() * 1000.0, &|line| {
        println!("native {line}")
    });
}
