//! What happens after a panic or a trap: the module is poisoned.
//!
//! The package is built with `panic = "abort"` (the only choice on stable
//! Rust for wasm32-unknown-unknown), so a panic, an out-of-memory abort or a
//! stack overflow ends in a WebAssembly trap that unwinds every Rust frame on
//! the stack without running a destructor: `RefCell`s borrowed at that moment
//! stay borrowed, locks stay held and half-applied changes stay half-applied.
//! Nothing Rust does afterwards can be trusted, so nothing runs afterwards.
//!
//! wasm-bindgen 0.2.130 has hard-abort handling of its own
//! (`wasm_bindgen::handler`), but its generated guard exists only for modules
//! with exception-handling instructions (`panic = "unwind"`, a nightly
//! `-Zbuild-std` build) or when the CLI is run with
//! `--force-enable-abort-handler`, which wasm-pack cannot pass and which needs
//! `WebAssembly.JSTag` (not in Node 20). So the package does it itself, in
//! two parts:
//!
//! - [`install_panic_hook`] sets a panic hook that hands the panic message to
//!   `recordPanic` in `kube_error.js` before the trap, which poisons the
//!   module at once, wherever the panic happened (an export, a timer, a
//!   `fetch` continuation).
//! - `guardExports` in `kube_error.js` wraps every function the wasm
//!   instance exports, at the one place the generated glue stores them
//!   (`scripts/build-pkg.sh` patches that line). Every call from JS into
//!   Rust (exported functions, class methods and getters, closures run by
//!   timers, promises and cached objects' getters) passes through it: once
//!   poisoned, every call throws a `KubeError` with reason `Poisoned` and the
//!   panic message; a call that traps poisons the module (covering traps
//!   without a panic, such as running out of memory) and throws that error
//!   in place of `RuntimeError: unreachable`. Frees and destructors become
//!   no-ops, so garbage collection and cleanup code never throw.
//!
//! The hook is installed by the package glue, not by a `start` function, so
//! a Rust application that links this crate keeps its own panic hook and
//! `start`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/kube_error.js")]
extern "C" {
    #[wasm_bindgen(js_name = recordPanic)]
    fn record_panic(message: &str);
}

/// Sets the panic hook that poisons the package's module with the panic's
/// message. The package glue calls it once, right after instantiation.
#[wasm_bindgen(js_name = __kubewasm_install_panic_hook, skip_typescript)]
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload_as_str().unwrap_or("Box<dyn Any>");
        let message = match info.location() {
            Some(at) => format!("{payload} (at {}:{})", at.file(), at.line()),
            None => payload.to_string(),
        };
        record_panic(&message);
    }));
}

/// Ends in a trap, for the package's own tests of the poisoned state only: it
/// is not part of the API (no typings), and it poisons the module.
///
/// Panics with `message`, or with `abort` aborts without a panic (the path an
/// out-of-memory abort takes). With `delay_ms` > 0 it returns at once and
/// traps later, in a timer callback.
#[wasm_bindgen(js_name = __kubewasm_test_panic, skip_typescript)]
pub fn test_panic(message: String, abort: bool, delay_ms: u32) {
    let trap = move || {
        if abort {
            std::process::abort();
        }
        panic!("{message}");
    };
    if delay_ms == 0 {
        trap();
    } else {
        gloo_timers::callback::Timeout::new(delay_ms, trap).forget();
    }
}
