//! Reading plain JS option objects without trusting their shape.

use wasm_bindgen::prelude::*;

use super::error::KubeErrorInit;

/// A property of an options object, `None` when the object or the property is
/// absent, `null` or `undefined`.
pub fn prop(obj: &JsValue, name: &str) -> Option<JsValue> {
    if obj.is_undefined() || obj.is_null() || !obj.is_object() {
        return None;
    }
    js_sys::Reflect::get(obj, &JsValue::from_str(name))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

/// Refuse a member of `obj` that is not among `known`: a misspelt option
/// (`labelSelectr`) would otherwise be ignored, and change what is cached
/// without a word. Members set to `undefined` or `null` are ignored, as
/// absent ones are (as `prop` reads them).
pub fn known_members(obj: &JsValue, known: &[&str], what: &str) -> Result<(), KubeErrorInit> {
    if !obj.is_object() {
        return Ok(());
    }
    let keys = js_sys::Reflect::own_keys(obj.unchecked_ref()).map_err(|e| {
        KubeErrorInit::invalid(format!(
            "{what} options cannot be read: {}",
            thrown_text(&e)
        ))
    })?;
    for key in keys.iter() {
        let Some(name) = key.as_string() else {
            continue;
        };
        if known.contains(&name.as_str()) {
            continue;
        }
        let set =
            js_sys::Reflect::get(obj, &key).map_or(true, |v| !v.is_undefined() && !v.is_null());
        if set {
            return Err(KubeErrorInit::invalid(format!(
                "unknown {what} option `{name}` (known: {})",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// An optional finite, non-negative number option.
pub fn number(obj: &JsValue, name: &str) -> Result<Option<f64>, KubeErrorInit> {
    match prop(obj, name) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
            _ => Err(KubeErrorInit::invalid(format!(
                "option `{name}` must be a non-negative number"
            ))),
        },
    }
}

/// An optional non-negative number option that may also be `Infinity`
/// (a limit turned off).
pub fn number_or_infinity(obj: &JsValue, name: &str) -> Result<Option<f64>, KubeErrorInit> {
    match prop(obj, name) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n >= 0.0 => Ok(Some(n)),
            _ => Err(KubeErrorInit::invalid(format!(
                "option `{name}` must be a non-negative number or Infinity"
            ))),
        },
    }
}

/// An optional whole-number option from 0 to `max` (a page size, a
/// timeout in seconds): a fraction or anything out of range is refused
/// rather than truncated, since `limit: -1` read as 0 would mean "no limit".
pub fn whole_number(obj: &JsValue, name: &str, max: u32) -> Result<Option<u32>, KubeErrorInit> {
    match prop(obj, name).map(|v| v.as_f64()) {
        None => Ok(None),
        Some(Some(n)) if n.fract() == 0.0 && (0.0..=f64::from(max)).contains(&n) => {
            Ok(Some(n as u32))
        }
        Some(_) => Err(KubeErrorInit::invalid(format!(
            "option `{name}` must be a whole number from 0 to {max}"
        ))),
    }
}

/// An optional string option.
pub fn string(obj: &JsValue, name: &str) -> Result<Option<String>, KubeErrorInit> {
    match prop(obj, name) {
        None => Ok(None),
        Some(v) => v
            .as_string()
            .map(Some)
            .ok_or_else(|| KubeErrorInit::invalid(format!("option `{name}` must be a string"))),
    }
}

/// A string argument of an exported function. The glue's own conversion of
/// a `String` parameter trusts its caller (a number there reads outside the
/// module's memory and poisons it), so exports take a `JsValue` and check it
/// here: anything but a string is an `Invalid` error.
pub fn string_arg(v: &JsValue, name: &str) -> Result<String, JsValue> {
    v.as_string()
        .ok_or_else(|| KubeErrorInit::invalid(format!("`{name}` must be a string")).into_js())
}

/// An optional string argument (see [`string_arg`]): `undefined` or `null`
/// is `None`.
pub fn opt_string_arg(v: &JsValue, name: &str) -> Result<Option<String>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    string_arg(v, name).map(Some)
}

/// An optional function option.
pub fn function(obj: &JsValue, name: &str) -> Result<Option<js_sys::Function>, KubeErrorInit> {
    match prop(obj, name) {
        None => Ok(None),
        Some(v) => v
            .dyn_into::<js_sys::Function>()
            .map(Some)
            .map_err(|_| KubeErrorInit::invalid(format!("option `{name}` must be a function"))),
    }
}

/// Milliseconds (a JS number) to a `Duration`, clamped to what a timer can use.
pub fn millis(ms: f64) -> std::time::Duration {
    // Clamp to ~31 years: finite, and far beyond any sensible delay.
    std::time::Duration::from_secs_f64((ms / 1000.0).clamp(0.0, 1e9))
}

/// A resync period in milliseconds; non-positive or non-finite = none.
pub fn resync_period(ms: f64) -> Option<std::time::Duration> {
    (ms.is_finite() && ms > 0.0)
        .then(|| std::time::Duration::try_from_secs_f64(ms / 1000.0).ok())
        .flatten()
}

/// What a JS callback threw or rejected with, as text for an error message:
/// an `Error`'s message, a string as it is, anything else as JS's
/// `String(value)` writes it. Never throws, whatever was thrown.
pub fn thrown_text(v: &JsValue) -> String {
    // `message` may have been set to anything: read it as a value.
    if let Some(m) = v
        .dyn_ref::<js_sys::Error>()
        .and_then(|e| e.message().as_string())
    {
        return m;
    }
    if let Some(s) = v.as_string() {
        return s;
    }
    // JS's own `String(value)` (no float formatting in the module for it);
    // the glue's description if even that throws (a `toString` that throws).
    js_sys::Reflect::get(&js_sys::global(), &"String".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .and_then(|f| f.call1(&JsValue::NULL, v).ok())
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| format!("{v:?}"))
}

/// Report an error the library cannot throw (it happened inside a callback):
/// to `console.error`, which every host has.
pub fn report(context: &str, err: &JsValue) {
    web_sys::console::error_2(&JsValue::from_str(context), err);
}
