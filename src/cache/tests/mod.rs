mod fifo_tests;
mod real_fifo_tests;
mod store_tests;

use serde_json::json;

use crate::rest::KubeObject;

/// A test object `ns/name` at resourceVersion `rv` with labels.
pub fn obj(key: &str, rv: u64, labels: &[(&str, &str)]) -> KubeObject {
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    crate::rest::fixtures::obj_with(key, rv, json!({ "labels": labels }), json!({}))
}
