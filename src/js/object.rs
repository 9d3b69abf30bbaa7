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
    let raw = obj.raw();
    let layout = obj.layout();
    let result = if raw.is_ascii() {
        // Byte offsets are UTF-16 offsets.
        lazy_object_js(obj.raw_str(), layout)
    } else {
        lazy_object_js(obj.raw_str(), &utf16_offsets(raw, layout))
    };
    // The bytes were validated as JSON when cached, so this cannot fail in
    // practice; `null` rather than a panic if it ever did.
    result.unwrap_or(JsValue::NULL)
}

/// Byte offsets into UTF-8 `text` converted to UTF-16 offsets (what JS
/// string indices count). `offsets` need not be sorted.
fn utf16_offsets(text: &[u8], offsets: &[u32]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_by_key(|&i| offsets.get(i).copied().unwrap_or(0));
    let mut out = vec![0u32; offsets.len()];
    let (mut byte, mut units) = (0usize, 0u32);
    for i in order {
        let target = offsets.get(i).map_or(0, |&o| o as usize);
        while byte < target {
            let b = text.get(byte).copied().unwrap_or(0);
            // Lead bytes start a code point: four-byte sequences are two
            // UTF-16 units; continuation bytes add nothing.
            units += match b {
                0x00..=0x7f | 0xc0..=0xef => 1,
                0xf0..=0xff => 2,
                _ => 0,
            };
            byte += 1;
        }
        if let Some(slot) = out.get_mut(i) {
            *slot = units;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::utf16_offsets;

    #[test]
    fn utf16_offsets_count_code_units() {
        let s = "a\u{e9}b\u{1F600}c";
        let b = s.as_bytes();
        // byte offsets of a, é, b, 😀, c, end
        let bytes = [0u32, 1, 3, 4, 8, 9];
        let got = utf16_offsets(b, &bytes);
        assert_eq!(got, vec![0, 1, 2, 3, 5, 6]);
        let units: Vec<u16> = s.encode_utf16().collect();
        assert_eq!(units.len(), 6);
        assert_eq!(utf16_offsets(b, &[9, 0, 4]), vec![6, 0, 3]);
    }
}
