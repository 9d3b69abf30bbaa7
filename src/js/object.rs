//! Handing cached objects to JS: built once per object version, then reused.
//!
//! The cache holds raw JSON; JS gets a plain object made by the engine's own
//! `JSON.parse` (faster than building it field by field from Rust — see
//! DESIGN.md) the first time it asks for that version. The result is kept in
//! the object's attachment slot, so every later read of the same version
//! returns the same JS object (stable identity for React memoization), and it
//! is frozen so a consumer cannot mutate what other consumers see.

use wasm_bindgen::prelude::*;

use crate::rest::KubeObject;

/// The attachment stored on a cached object: its materialized JS value.
struct Materialized(JsValue);

/// The JS object for this object version (parsed and frozen on first use).
pub fn to_js(obj: &KubeObject) -> JsValue {
    match obj.attachment(|| Materialized(parse_frozen(obj))) {
        Some(m) => m.0.clone(),
        // The slot holds something else (not done by this crate): parse anew.
        None => parse_frozen(obj),
    }
}

#[wasm_bindgen(module = "/src/js/objects.js")]
extern "C" {
    #[wasm_bindgen(js_name = parseFrozen, catch)]
    fn parse_frozen_js(text: &str) -> Result<JsValue, JsValue>;
}

fn parse_frozen(obj: &KubeObject) -> JsValue {
    // The bytes were validated as JSON when cached, so this cannot fail in
    // practice; `null` rather than a panic if it ever did.
    parse_frozen_js(obj.raw_str()).unwrap_or(JsValue::NULL)
}
