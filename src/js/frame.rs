//! Scheduling "once per frame": `requestAnimationFrame` where the host has it
//! (pages), otherwise one macrotask (`setTimeout(0)`: workers, Node, edge).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;

/// How long a frame may stall (the page went hidden after the frame was
/// requested) before the timer delivers instead.
const FRAME_FALLBACK_MS: f64 = 250.0;

/// The callback, taken by whichever of the frame and the timer comes first.
type Slot = Rc<RefCell<Option<Box<dyn FnOnce()>>>>;

fn global_fn(name: &str) -> Option<Function> {
    Reflect::get(&js_sys::global(), &JsValue::from_str(name))
        .ok()
        .and_then(|v| v.dyn_into::<Function>().ok())
}

/// The page's `document`, where there is one.
pub fn document() -> Option<JsValue> {
    Reflect::get(&js_sys::global(), &JsValue::from_str("document"))
        .ok()
        .filter(|d| d.is_object())
}

/// Whether a `document` exists and is hidden (frames do not run then).
pub fn page_hidden() -> bool {
    document()
        .and_then(|d| Reflect::get(&d, &JsValue::from_str("hidden")).ok())
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// Run `f` once: at the next animation frame of a visible page, else at the
/// next macrotask. In a page a timer backs the frame up, since a page hidden
/// after the request runs no frames until it is shown again.
pub fn on_next_frame(f: impl FnOnce() + 'static) {
    let global = js_sys::global();
    let slot: Slot = Rc::new(RefCell::new(Some(Box::new(f))));
    let callback = |slot: Slot| -> Option<Function> {
        Closure::once_into_js(move || {
            let f = slot.borrow_mut().take();
            if let Some(f) = f {
                f();
            }
        })
        .dyn_into::<Function>()
        .ok()
    };
    let mut delay = 0.0;
    // A callback is made only for a host that will call it: one never
    // called keeps its closure (and the slot) for the life of the module.
    let raf = global_fn("requestAnimationFrame").filter(|_| !page_hidden());
    if let Some(raf) = raf {
        if let Some(cb) = callback(slot.clone()) {
            if raf.call1(&global, &cb).is_ok() {
                if document().is_none() {
                    return;
                }
                delay = FRAME_FALLBACK_MS;
            }
        }
    }
    if let Some(set_timeout) = global_fn("setTimeout") {
        if let Some(cb) = callback(slot) {
            let _ = set_timeout.call2(&global, &cb, &JsValue::from_f64(delay));
        }
    }
}
