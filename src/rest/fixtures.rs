//! Objects and list pages for the crate's unit tests, shared by every layer.

use serde_json::{json, Value};

use super::{KubeObject, ObjectList};

/// A `Pod` named by `key` (`namespace/name`, or `name` for a cluster-scoped
/// object) at resourceVersion `rv`.
pub(crate) fn obj(key: &str, rv: u64) -> KubeObject {
    obj_with(key, rv, json!({}), json!({}))
}

/// [`obj`] with `meta`'s members added to `metadata` (labels,
/// managedFields, …) and `top`'s to the object (spec, status, …).
pub(crate) fn obj_with(key: &str, rv: u64, meta: Value, top: Value) -> KubeObject {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    let mut metadata = json!({"name": name, "resourceVersion": rv.to_string()});
    if !ns.is_empty() {
        metadata["namespace"] = json!(ns);
    }
    let mut object = json!({"kind": "Pod"});
    for (from, to) in [(meta, &mut metadata), (top, &mut object)] {
        if let (Value::Object(add), Value::Object(into)) = (from, to) {
            into.extend(add);
        }
    }
    object["metadata"] = metadata;
    KubeObject::from_value(&object).expect("a valid test object")
}

/// One LIST page at resourceVersion `rv`, with a continue token if `cont`.
pub(crate) fn page(rv: &str, items: Vec<KubeObject>, cont: Option<&str>) -> ObjectList {
    ObjectList {
        api_version: "v1".into(),
        kind: "PodList".into(),
        resource_version: rv.into(),
        continue_token: cont.map(str::to_owned),
        remaining_item_count: None,
        invalid: Vec::new(),
        items,
    }
}
