//! kubewasm: Kubernetes client-go's caching machinery for WebAssembly.
//!
//! The crate is layered along the data path; each module depends only on the
//! ones listed before it, and everything below [`js`] builds and tests natively:
//!
//! 1. [`rt`] — the runtime seam: local executor, clock (real or fake), timers.
//! 2. [`rest`] — config, requests over `fetch`, typed errors, the watch framer.
//! 3. [`api`] — resource identities, the resource handle ([`api::Api`]) that
//!    builds every request path, discovery.
//! 4. [`cache`] — keys, store/indexer, selectors, DeltaFIFO, reflector, informers.
//! 5. [`workqueue`] — queue, delaying queue, rate limiters.
//! 6. `js` — the wasm-bindgen surface (wasm32 only).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod api;
pub mod cache;
#[cfg(target_arch = "wasm32")]
pub mod js;
pub mod rest;
pub mod rt;
pub mod workqueue;
