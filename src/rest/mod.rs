//! The REST layer: configuration, requests over the global `fetch`, typed errors
//! decoded from `Status`, retries and client-side rate limiting, and the watch
//! stream (byte framer → [`WatchEvent`] decoder).
//!
//! * [`Config`] → [`Client`] (cheap to clone) sends [`Request`]s built with
//!   the typed [`params`](ListParams) over a [`Transport`]: [`FetchTransport`]
//!   in wasm, `JsTransport` over a JS object (the package's Node entry plugs
//!   in its `node:http` one), [`FakeTransport`] in native tests of every
//!   layer above.
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
mod watch;
mod watch_transport;
#[cfg(target_arch = "wasm32")]
mod websocket;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use client::{is_retryable_error, Client, Response};
pub use config::{
    Auth, Backoff, Config, CredentialsMode, RateLimit, TokenProvider, DEFAULT_MAX_RESPONSE_BYTES,
};
pub use error::{ApiError, Error, Status, StatusCause, StatusDetails};
pub use fake_transport::{BodySender, FakeResponse, FakeTransport, PendingReply};
#[cfg(target_arch = "wasm32")]
pub use fetch::FetchTransport;
pub use framer::LineFramer;
#[cfg(target_arch = "wasm32")]
pub use js_transport::JsTransport;
pub use limiter::TokenBucket;
pub use list::{decode_list, ObjectList};
pub use list_decoder::{ListDecoder, ListHooks, OnContinue, OnItem};
pub use object::{
    layout_member, Attachment, KubeObject, Labels, ObjectMeta, OwnerReference, WeakKubeObject,
};
pub use params::{
    DeleteParams, ListParams, PatchParams, PatchType, PostParams, PropagationPolicy, WatchParams,
};
pub use request::{encode_query_component, Method, Request};
pub use transport::{BodyStream, HttpRequest, HttpResponse, SocketRequest, Transport};
pub use watch::{
    decode_event, EventDecoder, WatchEvent, WatchStream, INITIAL_EVENTS_END_ANNOTATION,
};
pub use watch_transport::{
    bearer_subprotocol, close_error, handshake_error, open_fetch_watches, origin_of, websocket_url,
    TransportChoice, TransportReason, WatchTransport, WatchTransportMode, BEARER_PROTOCOL_PREFIX,
    WATCH_SUBPROTOCOL,
};
