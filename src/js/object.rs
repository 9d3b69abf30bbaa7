//! Handing cached objects to JS: built once per object version, then reused.
//!
//! The cache holds raw JSON; JS gets a frozen object whose top-level members
//! are parsed by the engine's own `JSON.parse` on first access (see
//! `objects.js`), so a handler that reads only `metadata` never pays for
//! `spec` and `status`. The result is kept in the object's attachment slot:
//! every later read of the same version returns the same JS object (stable
//! identity for React memoization).

use wasm_bindgen::prelude::*;

use crate::rest::KubeObject;

/// The attachment stored on a cached object: its materialized JS value.
struct Materialized(JsValue);

/// The JS object for this object version (built on first use).
pub fn to_js(obj: &KubeObject) -> JsValue {
    match obj.attachment(|| Materialized(materialize(obj))) {
        Some(m) => m.0.clone(),
        // The slot holds something else (not done by this crate): build anew.
        None => materialize(obj),
    }
}

/// A plain, mutable copy of the object (for results of the dynamic client,
/// which the caller owns and may edit and send back).
pub fn to_js_owned(obj: &KubeObject) -> JsValue {
    js_sys::JSON::parse(obj.raw_str()).unwrap_or(JsValue::NULL)
}

#[wasm_bindgen(module = "/src/js/objects.js")]
extern "C" {
    #[wasm_bindgen(js_name = lazyObject, catch)]
    fn lazy_object_js(text: &str, layout: &[u32]) -> Result<JsValue, JsValue>;
}

fn materialize(obj: &KubeObject) -> JsValue {
    let result = lazy_object_js(obj.raw_str(), &obj.layout_utf16());
    // The bytes were validated as JSON when cached, so this cannot fail in
    // practice; `null` rather than a panic if it ever did.
    result.unwrap_or(JsValue::NULL)
}
