//! Handing cached objects to JS: built once per object version, then reused.
//!
//! The cache holds raw JSON; JS gets a frozen object whose top-level members
//! are getters (see `objects.js`). A member's JSON text crosses into JS only
//! when the member is first read, and is parsed there by the engine's own
//! `JSON.parse`: a handler that reads `metadata` never pays for `spec` and
//! `status`, and an object that stays in the cache does not hold a second
//! copy of its text in the JS heap. The JS object is kept in the version's
//! extension slot, so every later read of that version returns the same
//! object (stable identity for React memoization).
//!
//! Lifetimes: the JS object finds its version through a numbered registry of
//! weak handles, so it never keeps the version alive (that would be a cycle
//! through the extension). When the version is released (replaced or
//! deleted in the cache, and nothing in Rust holds it) the JS object may
//! still be held by the app, so it receives the text of the members it has
//! not parsed yet.

use std::cell::{Cell, RefCell};

use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::rest::{Extension, KubeObject, WeakKubeObject};
use crate::rt::fx::FxHashMap;

thread_local! {
    /// Versions that have a lazy JS object, by the id the object carries.
    static LIVE: RefCell<FxHashMap<u64, Live>> = RefCell::default();
    /// The last id handed out (0 is never used; ids stay below 2^53, exact
    /// as JS numbers, and are never reused).
    static LAST_ID: Cell<u64> = const { Cell::new(0) };
    /// Whether `objects.js` has been given the member source yet.
    static SOURCE_SET: Cell<bool> = const { Cell::new(false) };
}

/// A registered version: a handle that does not keep it alive, and which of
/// its first 64 members JS has fetched (and so parsed).
struct Live {
    obj: WeakKubeObject,
    fetched: Cell<u64>,
}

/// The extension stored on a cached object: its JS object, and the id under
/// which the object finds its version (0: the object is fully parsed).
struct Materialized {
    obj: JsValue,
    id: u64,
}

impl Extension for Materialized {
    fn released(&self, raw: &[u8], layout: &[u32]) {
        if self.id == 0 {
            return;
        }
        // `try_`: a release can happen while the registry is borrowed (never
        // by this module's own code); a stale entry then only fails to upgrade.
        let fetched = LIVE
            .try_with(|l| {
                l.try_borrow_mut()
                    .ok()
                    .and_then(|mut l| l.remove(&self.id))
                    .map(|e| e.fetched.get())
            })
            .ok()
            .flatten()
            .unwrap_or(0);
        // The members JS has not read go over in one call: the stretch of the
        // object's bytes that holds them (a view of wasm memory, copied by
        // JS and decoded only if read), with (index, start, end) byte offsets
        // in that stretch. On a watch flood every replaced version comes
        // through here, and its object is usually never read again.
        let mut triples: Vec<u32> = Vec::new();
        let (mut lo, mut pos) = (None, 0);
        for (i, m) in layout.chunks_exact(4).enumerate() {
            let (a, b) = (m[2] as usize, m[3] as usize);
            if raw.get(a..b).is_none() || a < pos {
                break;
            }
            if i >= 64 || fetched & (1 << i) == 0 {
                let from = *lo.get_or_insert(a);
                triples.extend([i as u32, (a - from) as u32, (b - from) as u32]);
                pos = b;
            }
        }
        if let Some(lo) = lo {
            adopt_members(&self.obj, raw.get(lo..pos).unwrap_or_default(), &triples);
        }
    }
}

/// The JS object for this object version (built on first use).
pub fn to_js(obj: &KubeObject) -> JsValue {
    match obj.extension(|| materialize(obj)) {
        Some(m) => m.obj.clone(),
        // The slot holds something else (not done by this crate): build anew.
        None => parse_frozen_js(obj.raw_str()).unwrap_or(JsValue::NULL),
    }
}

/// A plain, mutable copy of the object (for results of the resource client,
/// which the caller owns and may edit and send back).
pub fn to_js_owned(obj: &KubeObject) -> JsValue {
    js_sys::JSON::parse(obj.raw_str()).unwrap_or(JsValue::NULL)
}

#[wasm_bindgen(module = "/src/js/objects.js")]
extern "C" {
    #[wasm_bindgen(js_name = lazyObject)]
    fn lazy_object_js(keys: &str, id: f64) -> JsValue;
    #[wasm_bindgen(js_name = parseFrozen, catch)]
    fn parse_frozen_js(text: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = setMemberSource)]
    fn set_member_source(f: &Function);
    #[wasm_bindgen(js_name = adoptMembers)]
    fn adopt_members(obj: &JsValue, text: &[u8], triples: &[u32]);
}

/// Member `index` of the version registered as `id`, as JSON text
/// (`undefined` if the version is gone, which a released object never asks).
fn member_text(id: f64, index: u32) -> JsValue {
    let id = id as u64;
    // The handle is upgraded inside the borrow and used after it, so a drop
    // it might cause can never meet a borrowed registry.
    let obj = LIVE.with(|l| {
        let l = l.borrow();
        let e = l.get(&id)?;
        if index < 64 {
            e.fetched.set(e.fetched.get() | 1 << index);
        }
        e.obj.upgrade()
    });
    obj.as_ref()
        .and_then(|o| o.member(index as usize))
        .map(|(_, text)| JsValue::from_str(text))
        .unwrap_or(JsValue::UNDEFINED)
}

fn ensure_member_source() {
    if SOURCE_SET.with(|s| s.replace(true)) {
        return;
    }
    let f = Closure::<dyn Fn(f64, u32) -> JsValue>::new(member_text);
    set_member_source(f.as_ref().unchecked_ref());
    // One closure for the module's lifetime.
    f.forget();
}

fn materialize(obj: &KubeObject) -> Materialized {
    // Member keys as written, separated by U+0001 (a raw control character
    // cannot occur inside a JSON string, so it cannot occur inside a key).
    // Only the keys are read here (validating every value's text as UTF-8
    // once more would walk the whole object).
    let mut keys = String::new();
    let mut i = 0;
    let mut separable = true;
    let raw = obj.raw();
    for m in obj.layout().chunks_exact(4) {
        let Some(key) = raw
            .get(m[0] as usize..m[1] as usize)
            .and_then(|k| std::str::from_utf8(k).ok())
        else {
            // Not a layout this crate recorded: parse the object whole.
            separable = false;
            break;
        };
        if i > 0 {
            keys.push('\u{1}');
        }
        separable &= !key.contains('\u{1}');
        keys.push_str(key);
        i += 1;
    }
    if i == 0 || !separable {
        // No layout (or a key the separator cannot carry): parse it all now.
        let js = parse_frozen_js(obj.raw_str()).unwrap_or(JsValue::NULL);
        return Materialized { obj: js, id: 0 };
    }
    ensure_member_source();
    let id = LAST_ID.with(|c| {
        let next = c.get() + 1;
        c.set(next);
        next
    });
    LIVE.with(|l| {
        l.borrow_mut().insert(
            id,
            Live {
                obj: obj.downgrade(),
                fetched: Cell::new(0),
            },
        )
    });
    Materialized {
        obj: lazy_object_js(&keys, id as f64),
        id,
    }
}
