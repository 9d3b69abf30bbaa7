//! kubewasm: Kubernetes client-go's caching machinery for WebAssembly.
//!
//! The crate is layered along the data path; each module depends only on the
//! ones listed before it, and everything below `js` builds and tests natively:
//!
//! 1. [`rt`] — the runtime seam: local executor, clock (real or fake), timers.
//! 2. [`rest`] — config, requests over `fetch`, typed errors, the watch framer.
//! 3. [`api`] — resource identities, the resource handle ([`api::Api`]) that
//!    builds every request path, discovery.
//! 4. [`cache`] — keys, store/indexer, selectors, DeltaFIFO, reflector, informers.
//! 5. [`workqueue`] — queue, delaying queue, rate limiters.
//! 6. `js` — the wasm-bindgen surface exported to JavaScript (wasm32 only;
//!    the default-on `js` feature).
//!
//! # Quick start
//!
//! The whole flow in a wasm32 app: a [`Config`], a [`Client`] over `fetch`,
//! a [`SharedInformerFactory`], an informer per resource scope, a bounded
//! wait for the initial list, then reads from the cache through a
//! [`Lister`]. `examples/rust-app` is this as a crate of its own, tested in
//! Node and Chromium.
//!
//! ```no_run
//! use std::cell::RefCell;
//! use std::rc::Rc;
//! use std::time::Duration;
//!
//! use kubewasm::cache::handler;
//! use kubewasm::{ApiResource, Client, Config, InformerOptions, LabelSelector};
//! use kubewasm::{ResourceScope, SharedInformerFactory};
//!
//! async fn web_pods() -> Result<Vec<String>, Box<dyn std::error::Error>> {
//!     // e.g. `kubectl proxy`, or an API server that allows this origin (CORS).
//!     let config = Config::new("http://127.0.0.1:8001").bearer_token("my-token");
//!     let client = Client::new(config)?;
//!     let factory = SharedInformerFactory::new(client, InformerOptions::default());
//!     // A scope no request could be built for is an error here, not a retry loop.
//!     let pods = ApiResource::new("", "v1", "pods", true);
//!     let pods = factory.informer(ResourceScope::new(pods).namespace("default"), None)?;
//!     // Handlers see every change in the order the cache applied them.
//!     let changed = Rc::new(RefCell::new(Vec::new()));
//!     let log = changed.clone();
//!     pods.add_event_handler(handler(move |n| log.borrow_mut().extend(n.key().ok())))?;
//!     factory.start();
//!     // Unbounded `wait_for_sync` would wait through every retry of an
//!     // unreachable server; this returns its last error instead.
//!     factory.wait_for_sync_timeout(Duration::from_secs(30)).await?;
//!     let web = LabelSelector::parse("app=web")?;
//!     let names = pods
//!         .lister()
//!         .list_in(Some("default"), &web)
//!         .iter()
//!         .map(|p| p.name().to_owned())
//!         .collect();
//!     Ok(names)
//! }
//! // In the app: wasm_bindgen_futures::spawn_local(async { let _ = web_pods().await; });
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod api;
pub mod cache;
#[cfg(all(target_arch = "wasm32", feature = "js"))]
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
