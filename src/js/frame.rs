//! Scheduling "once per frame": `requestAnimationFrame` where the host has it
//! (pages), otherwise one macrotask (`setTimeout(0)`: workers, Node, edge).

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;

/// Run `f` at the next animation frame, or at the next macrotask where there
/// is no `requestAnimationFrame` (or the page is hidden and frames stall: the
/// timeout fallback keeps workers and background tabs flowing).
pub fn on_next_frame(f: impl FnOnce() + 'static) {
    let global = js_sys::global();
    let cb = Closure::once_into_js(f);
    let Ok(cb) = cb.dyn_into::<Function>() else {
        return;
    };
    let raf = Reflect::get(&global, &JsValue::from_str("requestAnimationFrame"))
        .ok()
        .and_then(|v| v.dyn_into::<Function>().ok());
    if let Some(raf) = raf {
        if raf.call1(&global, &cb).is_ok() {
            return;
        }
    }
    if let Ok(set_timeout) = Reflect::get(&global, &JsValue::from_str("setTimeout"))
        .and_then(|v| v.dyn_into::<Function>())
    {
        let _ = set_timeout.call2(&global, &cb, &JsValue::from_f64(0.0));
    }
}
