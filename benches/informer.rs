//! informer benchmarks (filled in by its layer).
fn main() {}
