//! kubewasm-sim: a simulated Kubernetes API server.
fn main() {}
