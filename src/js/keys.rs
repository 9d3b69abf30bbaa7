//! Cache keys from JS: client-go's `MetaNamespaceKeyFunc` and
//! `SplitMetaNamespaceKey`, so that code turning diff keys and handler
//! objects into workqueue keys and back agrees with the cache.

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;

use super::error::KubeErrorInit;
use super::options;

/// The cache key of an object: `namespace/name`, or `name` when it has no
/// namespace (client-go's `MetaNamespaceKeyFunc`). Throws `KubeError`
/// (`Invalid`) for a value without `metadata.name`.
#[wasm_bindgen(js_name = keyOf)]
pub fn key_of(
    #[wasm_bindgen(
        unchecked_param_type = "{ metadata?: { name?: string | undefined; namespace?: string | undefined } | undefined }"
    )]
    obj: &JsValue,
) -> Result<String, JsValue> {
    let meta = options::prop(obj, "metadata").unwrap_or(JsValue::UNDEFINED);
    let name = options::string(&meta, "name")?.unwrap_or_default();
    if name.is_empty() {
        return Err(KubeErrorInit::invalid("keyOf: the object has no metadata.name").into());
    }
    Ok(
        match options::string(&meta, "namespace")?.filter(|n| !n.is_empty()) {
            Some(mut ns) => {
                ns.push('/');
                ns.push_str(&name);
                ns
            }
            None => name,
        },
    )
}

/// A cache key split into `{ namespace, name }` (`namespace` absent for a
/// cluster-scoped key), as client-go's `SplitMetaNamespaceKey` splits it.
/// Throws `KubeError` (`Invalid`) for a key with more than one `/`.
#[wasm_bindgen(js_name = splitKey, unchecked_return_type = "{ namespace?: string; name: string }")]
pub fn split_key(
    #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
) -> Result<JsValue, JsValue> {
    let key = options::string_arg(&key, "key")?;
    let (ns, name) = crate::cache::split_key(&key)
        .map_err(|e| JsValue::from(KubeErrorInit::invalid(format!("splitKey: {e}"))))?;
    let out = Object::new();
    if !ns.is_empty() {
        let _ = Reflect::set(&out, &"namespace".into(), &ns.into());
    }
    let _ = Reflect::set(&out, &"name".into(), &name.into());
    Ok(out.into())
}
