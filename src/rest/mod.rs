//! The REST layer: configuration, requests over the global `fetch`, typed errors
//! decoded from `Status`, retries and client-side rate limiting, and the watch
//! stream (byte framer → [`WatchEvent`](object) decoder).
//!
//! Objects are kept as raw JSON plus the parsed metadata the cache needs
//! ([`KubeObject`]); full decoding happens only on demand.

mod error;
mod object;

pub use error::Error;
pub use object::{KubeObject, ObjectMeta, OwnerReference};
