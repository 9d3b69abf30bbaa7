mod fifo_tests;
mod real_fifo_tests;
mod store_tests;

use serde_json::json;

use crate::rest::KubeObject;

/// A test object `ns/name` at resourceVersion `rv` with labels.
pub fn obj(key: &str, rv: u64, labels: &[(&str, &str)]) -> KubeObject {
    let (ns, name) = match key.split_once('/') {
        Some((n, m)) => (Some(n), m),
        None => (None, key),
    };
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let mut meta = json!({"name": name, "resourceVersion": rv.to_string(), "labels": labels});
    if let Some(ns) = ns {
        meta["namespace"] = json!(ns);
    }
    KubeObject::from_value(&json!({"metadata": meta})).expect("valid object")
}
