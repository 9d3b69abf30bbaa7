//! What happens after a panic or a trap: the module is poisoned.
//!
//! The package is built with `panic = "abort"` (the only choice on stable
//! Rust for wasm32-unknown-unknown), so a panic or an out-of-memory abort ends
//! in a WebAssembly trap that unwinds every Rust frame on the stack without
//! running a destructor: `RefCell`s borrowed at that moment stay borrowed and
//! half-applied changes stay half-applied. Nothing Rust does afterwards can be
//! trusted, so nothing runs afterwards.
//!
//! wasm-bindgen 0.2.130 has hard-abort handling of its own
//! (`wasm_bindgen::handler`), but its generated guard exists only for modules
//! with exception-handling instructions (`panic = "unwind"`, a nightly
//! `-Zbuild-std` build) or when the CLI is run with
//! `--force-enable-abort-handler`, which wasm-pack cannot pass, which wraps
//! every import in a `try_table` and which needs `WebAssembly.JSTag` (not in
//! Node 20). So the package does it itself, in two parts:
//!
//! - [`install_panic_hook`] sets a panic hook that hands the panic message to
//!   `recordPanic` in `kube_error.js` just before the trap, which poisons the
//!   module wherever the panic happened (an export, a timer, a `fetch`
//!   continuation).
//! - `guardExports` in `kube_error.js` wraps every function the wasm
//!   instance exports, at the one place the generated glue stores them
//!   (`scripts/build-pkg.sh` patches that line), so no export needs code of
//!   its own. Every call from JS into Rust passes through it: exported
//!   functions, class methods and getters, cached objects' getters, and
//!   closures run by timers and promise reactions. A call that traps poisons
//!   the module (a trap without a panic, such as running out of memory, too)
//!   and throws a `KubeError` with reason `Poisoned` and the panic message in
//!   place of `RuntimeError: unreachable`; from then on every call throws the
//!   same, and promises that wasm returned and has not settled reject with
//!   it. Frees, destructors and host-called closures become no-ops, so
//!   finalizers, cleanup code and leftover timers never throw; a trap *inside*
//!   a host callback still reaches the host once, as an uncaught `KubeError`.
//!
//! The hook is installed by the package glue, not by a `start` function, so
//! a Rust application that links this crate keeps its own panic hook and
//! `start`; wasm-bindgen-test suites run without the guard.
//!
//! [`test_panic`] is a hidden export rather than a cargo feature: the guard is
//! added by the package build, so the tests must run against the package that
//! ships, and a second package build per test run would cost minutes for a
//! few hundred bytes. It has no typings and a name that says what it is for.

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
            Some(at) => format!("{payload} (at {}:{})", short_path(at.file()), at.line()),
            None => payload.to_string(),
        };
        record_panic(&message);
    }));
}

/// A dependency's source path without the builder's Cargo home
/// (`serde_json-1.0.154/src/de.rs`); the crate's own paths are relative.
fn short_path(file: &str) -> &str {
    const REGISTRY: &str = "/registry/src/";
    match file.find(REGISTRY) {
        // Skip the registry index's folder as well.
        Some(i) => {
            let rest = &file[i + REGISTRY.len()..];
            rest.split_once('/').map_or(rest, |(_, path)| path)
        }
        None => file,
    }
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
