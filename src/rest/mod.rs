//! The REST layer: configuration, requests over the global `fetch`, typed errors
//! decoded from `Status`, retries and client-side rate limiting, and the watch
//! stream (byte framer → [`WatchEvent`] decoder).
//!
//! * [`Config`] → [`Client`] (cheap to clone) sends [`Request`]s built with
//!   the typed [`params`](ListParams) over a [`Transport`]: [`FetchTransport`]
//!   in wasm, `JsTransport` over a JS object (the package's Node entry plugs
//!   in its `node:http` one), a scripted fake in tests (the `testing`
//!   feature).
//! * Responses: raw bytes, a [`KubeObject`], any serde type, an
//!   [`ObjectList`] page, or a [`WatchStream`] of [`WatchEvent`]s, carried
//!   by `fetch` or, beyond a per-origin budget in browsers, a WebSocket
//!   ([`WatchTransportMode`], see `watch_transport.rs`).
//! * Everything that waits (timeouts, retries, the rate limiter, the watch
//!   idle watchdog) waits on the client's clock.
//!
//! Objects are kept as raw JSON plus the parsed metadata the cache needs
//! ([`KubeObject`]); the rest of each object is validated on arrival (invalid
//! JSON anywhere is a [`Error::Decode`]) and decoded on demand (see `scan.rs`
//! for why).

mod client;
mod config;
mod error;
#[cfg(any(test, feature = "testing"))]
mod fake_transport;
#[cfg(target_arch = "wasm32")]
mod fetch;
mod framer;
#[cfg(target_arch = "wasm32")]
mod js_transport;
mod limiter;
mod list;
mod list_decoder;
mod object;
mod params;
mod request;
mod scan;
mod transport;
mod warning;
#[cfg(all(doc, not(target_arch = "wasm32")))]
mod wasm_only_docs;
mod watch;
mod watch_transport;
#[cfg(target_arch = "wasm32")]
mod websocket;

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod fixtures;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use client::{Client, Response};
pub use config::{
    Auth, Config, CredentialsMode, RateLimit, TokenProvider, DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_RETRY_BACKOFF,
};
pub use error::{
    ApiError, Cause, Error, Status, StatusCause, StatusDetails, StatusMeta, MAX_RETRY_AFTER,
};
#[cfg(target_arch = "wasm32")]
pub use fetch::FetchTransport;
pub(crate) use framer::find_newline;
#[cfg(target_arch = "wasm32")]
pub use js_transport::JsTransport;
pub use list::ObjectList;
pub use list_decoder::{ListHooks, OnContinue, OnItem};
pub use object::{Extension, KubeObject, Labels, ObjectMeta, OwnerReference, WeakKubeObject};
pub use params::{
    DeleteParams, ListParams, PatchParams, PatchType, PostParams, Preconditions, PropagationPolicy,
    WatchParams,
};
pub use request::{Method, Request};
pub use transport::{
    is_unreachable_code, BodyStream, HttpRequest, HttpResponse, SocketRequest, Transport,
};
pub use warning::{
    parse_warning_headers, DedupWarnings, SharedWarningHandler, Warning, WarningHandler,
    MAX_REMEMBERED_WARNINGS,
};
#[cfg(all(doc, not(target_arch = "wasm32")))]
pub use wasm_only_docs::{FetchTransport, JsTransport};
pub use watch::{WatchEvent, WatchStream, INITIAL_EVENTS_END_ANNOTATION};
pub(crate) use watch_transport::stream_lease;
pub use watch_transport::{TransportChoice, TransportReason, WatchTransport, WatchTransportMode};

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) use fake_transport::{FakeResponse, FakeTransport};
#[cfg(test)]
pub(crate) use list::decode_list;
pub(crate) use scan::Reader;
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) use watch_transport::open_fetch_watches;

/// The REST layer's test support (see [`crate::testing`]).
#[cfg(feature = "testing")]
pub(crate) mod testing {
    pub use super::fake_transport::{BodySender, FakeResponse, FakeTransport, PendingReply};
    pub use super::list::decode_list;
    pub use super::list_decoder::ListDecoder;
    pub use super::watch::{decode_event, EventDecoder};
    pub use super::watch_transport::{bearer_subprotocol, open_fetch_watches, origin_of};
}
