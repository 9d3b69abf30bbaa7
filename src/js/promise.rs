//! One promise adapter for every async export.
//!
//! `wasm_bindgen_futures::future_to_promise` is generic over its future: called
//! directly, each export would carry its own copy of the adapter and of the
//! executor's task for that future type. Each export's future is boxed instead
//! and handed to a single instance.

use std::future::Future;
use std::pin::Pin;

use js_sys::Promise;
use wasm_bindgen::JsValue;

/// An export's work as one type, whatever its body.
type Boxed = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

/// Runs `fut` on the local executor; the promise settles with its result.
pub(crate) fn future_to_promise<F>(fut: F) -> Promise
where
    F: Future<Output = Result<JsValue, JsValue>> + 'static,
{
    settle(Box::pin(fut))
}

#[inline(never)]
fn settle(fut: Boxed) -> Promise {
    wasm_bindgen_futures::future_to_promise(fut)
}

/// A promise-returning export's result: a check that failed before any work
/// started rejects the promise too, so `.catch` and `Promise.allSettled`
/// see every failure (an export that throws would escape them).
pub(crate) fn rejecting(r: Result<Promise, JsValue>) -> Promise {
    r.unwrap_or_else(|e| Promise::reject(&e))
}
