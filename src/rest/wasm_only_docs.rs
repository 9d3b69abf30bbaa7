//! What host documentation shows of the wasm32-only transports, so that
//! `cargo doc` (and rust-analyzer) on any target lists them; the real
//! definitions are in `fetch.rs` and `js_transport.rs`. Compiled only by
//! rustdoc on a non-wasm target: there is nothing here to call.

/// The [`Transport`](super::Transport) over `globalThis.fetch`, the one
/// [`Client::new`](super::Client::new) uses (wasm32 only; in a native build,
/// give [`Client::with_transport`](super::Client::with_transport) a transport
/// of your own).
#[derive(Debug, Clone, Default)]
pub struct FetchTransport;

/// A [`Transport`](super::Transport) implemented by a JavaScript object with a
/// `request(req)` method (wasm32 only), e.g. the npm package's `node:http`
/// transport.
#[derive(Debug, Clone)]
pub struct JsTransport;
