//! The `onWarning` client option: API server `Warning` headers
//! (deprecations, admission warnings) delivered to JS, each distinct message
//! once per client (client-go's deduplicating warning writer, as kubectl
//! uses).

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;

use super::error::KubeErrorInit;
use super::options::{self, report};
use crate::rest::{DedupWarnings, SharedWarningHandler, Warning};

#[wasm_bindgen(typescript_custom_section)]
const WARNINGS_TS: &'static str = r#"
/** A warning the API server sent in a `Warning` header (a deprecated API or field, an admission webhook's note). */
export interface ApiWarning {
  /** 299 from the API server. */
  code: number;
  /** `-` from the API server. */
  agent: string;
  text: string;
}
"#;

/// The handler the `onWarning` option asks for: the function given, none
/// for `false`, and `console.warn` when absent. Only code-299 warnings
/// with a text reach it, each text once.
pub fn from_options(opts: &JsValue) -> Result<Option<SharedWarningHandler>, KubeErrorInit> {
    let given = options::prop(opts, "onWarning");
    if given.as_ref().and_then(JsValue::as_bool) == Some(false) {
        return Ok(None);
    }
    let f = options::function(opts, "onWarning")
        .map_err(|_| KubeErrorInit::invalid("option `onWarning` must be a function or false"))?;
    let deliver = move |w: &Warning| match &f {
        Some(f) => {
            if let Err(e) = f.call1(&JsValue::NULL, &to_js(w)) {
                report("kubewasm: onWarning threw", &e);
            }
        }
        None => web_sys::console::warn_1(&JsValue::from_str(&format!("Warning: {}", w.text))),
    };
    Ok(Some(SharedWarningHandler::new(DedupWarnings::new(deliver))))
}

fn to_js(w: &Warning) -> JsValue {
    let o = Object::new();
    let _ = Reflect::set(&o, &"code".into(), &JsValue::from(w.code));
    let _ = Reflect::set(&o, &"agent".into(), &JsValue::from_str(&w.agent));
    let _ = Reflect::set(&o, &"text".into(), &JsValue::from_str(&w.text));
    o.into()
}
