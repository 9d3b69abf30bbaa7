//! The wasm-bindgen surface exported to TypeScript.
//!
//! Everything here is glue: JS values in, calls into the layers below, JS
//! values out. Option objects are read field by field (absent fields take the
//! documented defaults, wrong types become a `KubeError` with reason
//! `Invalid`), so a bad argument from JS can never panic the module.
//! Typings come from `typescript_custom_section` blocks next to the code they
//! describe, so the `.d.ts` has no `any` in the public surface.
//!
//! A panic or a trap poisons the module: every later call throws a
//! `KubeError` with reason `Poisoned` (see `poison.rs`).

mod abort;
mod cache_shape;
mod changes;
mod client;
mod discovery;
mod error;
mod frame;
mod informer;
mod keys;
mod logs;
mod object;
mod options;
mod persist;
mod poison;
mod promise;
mod retry;
mod selector;
mod snapshot;
mod transport;
mod warnings;
mod workqueue;

pub use client::{is_status, KubeClient, ResourceClient, WatchIterator};
pub use error::KubeErrorInit;
pub use informer::{Informer, InformerFactory, Lister, ScopedView};
pub use keys::{key_of, split_key};
pub use logs::LogStream;
pub use persist::clear_persisted;
pub use retry::retry_now;
pub use workqueue::{WorkQueue, WorkerPoolHandle};
