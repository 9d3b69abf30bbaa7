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

// The main types at the crate root, as kube-rs offers them.
pub use api::{Api, ApiResource, Discovery, GroupVersionKind};
pub use cache::{
    FieldSelector, Handler, Indexer, InformerOptions, LabelSelector, Lister, Notification,
    ResourceScope, SharedIndexInformer, SharedInformerFactory, Store,
};
pub use rest::{Client, Config, Error, KubeObject, ListParams, WatchEvent, WatchParams};
pub use rt::Backoff;
pub use workqueue::{DelayingQueue, Queue, RateLimiter, RateLimitingQueue, WorkQueue};

/// Test support, not part of the stable API: fakes for the transport, the
/// clock and the lister-watcher, and the decode internals that the crate's
/// own integration tests and benchmarks drive directly. Enabled by the
/// `testing` feature.
#[cfg(feature = "testing")]
pub mod testing {
    pub use crate::cache::testing::*;
    pub use crate::rest::testing::*;
    pub use crate::rt::testing::*;
}
