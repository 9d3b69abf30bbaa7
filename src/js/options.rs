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

/// A boolean option, `default` when absent. Anything else is refused: a
/// truthy string read as `false` would, for `dryRun`, write for real.
pub fn flag(obj: &JsValue, name: &str, default: bool) -> Result<bool, KubeErrorInit> {
    match prop(obj, name) {
        None => Ok(default),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| KubeErrorInit::invalid(format!("option `{name}` must be a boolean"))),
    }
}

/// `dryRun`: a boolean, or the API's own form, `['All']` (`[]` is none),
/// which `kubernetes-types` and client-go's `DryRun []string` use.
pub fn dry_run(obj: &JsValue) -> Result<bool, KubeErrorInit> {
    let Some(v) = prop(obj, "dryRun") else {
        return Ok(false);
    };
    if let Some(b) = v.as_bool() {
        return Ok(b);
    }
    if js_sys::Array::is_array(&v) {
        let list = js_sys::Array::from(&v);
        match list.length() {
            0 => return Ok(false),
            1 if list.get(0).as_string().as_deref() == Some("All") => return Ok(true),
            _ => {}
        }
    }
    Err(KubeErrorInit::invalid(
        "option `dryRun` must be true, false or ['All'] (the only dry-run mode the API server has)",
    ))
}

/// Refuse a member of `obj` that is not among `known`: a misspelt option
/// (`labelSelectr`, `tokne`, `dryrun`) would otherwise be ignored, and
/// change what a call does without a word. The error names the member, the
/// known one it most likely meant, and every known one. Members set to
/// `undefined` or `null` are ignored, as absent ones are (as `prop` reads
/// them). Every options object the package reads goes through here.
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
            let hint = closest(&name, known)
                .map(|k| format!("did you mean `{k}`? "))
                .unwrap_or_default();
            // A key taken from a caller's request can be any size.
            let shown: String = name.chars().take(MAX_HINTED).collect();
            let cut = if shown.len() < name.len() { "…" } else { "" };
            return Err(KubeErrorInit::invalid(format!(
                "unknown {what} option `{shown}{cut}` ({hint}known: {})",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// The longest unknown option name that gets a hint, and the most of one a
/// message repeats.
const MAX_HINTED: usize = 64;

/// The member of `known` that `name` most likely misspells: the same but
/// for case (`dryrun`), or within a small edit distance that grows with the
/// name (`tokne`, `namepsace`, `baseDelay` as a prefix of `baseDelayMs`).
fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    // No option name is near this long: no hint, and no table the size of
    // the name times the option's.
    if name.len() > MAX_HINTED {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    if let Some(k) = known.iter().find(|k| k.to_ascii_lowercase() == lower) {
        return Some(k);
    }
    let limit = (name.chars().count() / 3).clamp(1, 3);
    known
        .iter()
        .filter_map(|k| {
            let kl = k.to_ascii_lowercase();
            let d = if kl.starts_with(&lower) && lower.len() >= 4 {
                // A unit or suffix left off (`baseDelay`, `timeout`).
                0
            } else {
                edit_distance(&lower, &kl)
            };
            (d <= limit).then_some((d, *k))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and swaps of neighbours each cost one (a swap is the commonest typo).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (i, row) in d.chunks_mut(w).enumerate() {
        if let Some(first) = row.first_mut() {
            *first = i;
        }
    }
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
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

/// The `qps` and `burst` options of a token bucket, read as client-go reads
/// a client's `QPS` and `Burst`: absent or 0 keeps the default, a negative
/// `qps` or `Infinity` turns the bucket off (`None`). A `qps` that is not a
/// number, or a `burst` that is negative or not finite, is an `Invalid`
/// error: a bucket that can never hand out a token parks every key for good.
pub fn token_bucket(
    obj: &JsValue,
    default_qps: f64,
    default_burst: u32,
) -> Result<Option<(f64, u32)>, KubeErrorInit> {
    let qps = prop(obj, "qps")
        .map(|v| match v.as_f64() {
            Some(n) if !n.is_nan() => Ok(n),
            _ => Err(KubeErrorInit::invalid(
                "option `qps` must be a number (0 for the default, a negative number or Infinity for no limit)",
            )),
        })
        .transpose()?;
    let burst = number(obj, "burst")?;
    if matches!(qps, Some(q) if q < 0.0 || q.is_infinite()) {
        return Ok(None);
    }
    Ok(Some((
        qps.filter(|q| *q > 0.0).unwrap_or(default_qps),
        burst
            .filter(|b| *b > 0.0)
            .map_or(default_burst, |b| b.clamp(1.0, f64::from(u32::MAX)) as u32),
    )))
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
