//! Label selectors from JS: a selector string, or an API `LabelSelector`
//! object (`matchLabels` / `matchExpressions`, e.g. a Deployment's
//! `spec.selector`) converted with client-go's `LabelSelectorAsSelector`
//! rules.

use wasm_bindgen::prelude::*;

use super::error::KubeErrorInit;
use crate::cache::{LabelSelector, LabelSelectorSpec, SelectorError};

#[wasm_bindgen(typescript_custom_section)]
const SELECTOR_TS: &'static str = r#"
/**
 * An API label selector (`metav1.LabelSelector`), as in a Deployment's
 * `spec.selector`; `kubernetes-types`' `LabelSelector` fits it.
 */
export interface LabelSelectorObject {
  /** Labels that must be present with exactly these values. */
  matchLabels?: Record<string, string> | undefined;
  /** Requirements that must all hold. */
  matchExpressions?: Array<{
    key: string;
    /** `In`, `NotIn`, `Exists` or `DoesNotExist`; any other is an `Invalid` error. */
    operator: string;
    /** Non-empty for `In`/`NotIn`, empty or absent otherwise. */
    values?: string[] | undefined;
  }> | undefined;
}
"#;

/// A `SelectorError` as a thrown `KubeError` (reason `Invalid`, with the
/// position of the problem).
pub fn selector_error(e: SelectorError) -> JsValue {
    KubeErrorInit {
        message: e.message,
        reason: "Invalid".into(),
        position: Some(e.position as u32),
        ..Default::default()
    }
    .into_js()
}

/// The label selector under `name` of an options object: absent or
/// `undefined` matches everything, `null` nothing (a null API selector),
/// a string is parsed, an object converted.
pub fn label_selector(obj: &JsValue, name: &str) -> Result<LabelSelector, JsValue> {
    if !obj.is_object() {
        return Ok(LabelSelector::default());
    }
    let v = js_sys::Reflect::get(obj, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
    if v.is_undefined() {
        return Ok(LabelSelector::default());
    }
    if v.is_null() {
        return Ok(LabelSelector::nothing());
    }
    if let Some(s) = v.as_string() {
        return LabelSelector::parse(&s).map_err(selector_error);
    }
    if !v.is_object() {
        return Err(KubeErrorInit::invalid(format!(
            "option `{name}` must be a selector string or a LabelSelector object"
        ))
        .into_js());
    }
    let json = js_sys::JSON::stringify(&v)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| {
            KubeErrorInit::invalid(format!("option `{name}` is not a label selector")).into_js()
        })?;
    let spec = LabelSelectorSpec::from_json(json.as_bytes()).map_err(selector_error)?;
    LabelSelector::from_spec(spec.as_ref()).map_err(selector_error)
}

/// The label selector under `name` as a request's `labelSelector`: a string
/// as given (the server checks it), an object in canonical form.
/// A `null` one selects nothing (client-go's `LabelSelectorAsSelector`),
/// which no request can ask for: refused, where sending none would select
/// everything (and a `deleteCollection` delete it).
pub fn label_selector_query(obj: &JsValue, name: &str) -> Result<Option<String>, JsValue> {
    if obj.is_object()
        && js_sys::Reflect::get(obj, &JsValue::from_str(name)).is_ok_and(|v| v.is_null())
    {
        return Err(KubeErrorInit::invalid(format!(
            "option `{name}` is null, which selects nothing (as a Deployment's null \
             selector); a request cannot ask for nothing: leave it out to select everything"
        ))
        .into_js());
    }
    Ok(match super::options::prop(obj, name) {
        Some(v) if !v.is_string() => Some(label_selector(obj, name)?.to_string()),
        _ => super::options::string(obj, name)?,
    }
    .filter(|s| !s.trim().is_empty()))
}
