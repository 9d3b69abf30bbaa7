//! `retryNow`: every informer waiting out a backoff tries again at once.

use wasm_bindgen::prelude::*;

/// Every informer of this module that waits in a backoff (after a failed
/// list or watch) tries again now, as it does when the browser's `online`
/// event fires: for a "Retry now" button, or for code that knows the
/// server is back (`kubewasm/shared` calls it in each tab when the worker's
/// own informer recovers). The backoff starts again from its first step, a
/// wait the server asked for (`Retry-After`) still holds, and open watches
/// are left alone.
#[wasm_bindgen(js_name = retryNow)]
pub fn retry_now() {
    crate::rt::host_network().retry_now();
}
