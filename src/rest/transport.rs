//! The transport seam: one HTTP exchange, with the response body as a stream
//! of byte chunks. [`FetchTransport`](super::FetchTransport) implements it over
//! the global `fetch` in wasm; [`FakeTransport`](super::FakeTransport) scripts
//! it for native tests of every layer above.
//!
//! Cancellation is by drop: dropping the future returned by
//! [`Transport::send`] or the [`BodyStream`] of a response must abort the
//! underlying request. Timeouts are the [`Client`](super::Client)'s job (on its
//! clock), so transports need none of their own.
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::stream::LocalBoxStream;

use super::config::CredentialsMode;
use super::request::Method;
use super::Error;

/// A response body: byte chunks as they arrive; an `Err` item is a failure
/// mid-body (a reset connection) and ends it; end of stream is a clean close.
pub type BodyStream = LocalBoxStream<'static, Result<Vec<u8>, Error>>;

/// One HTTP request as the transport sees it (URL complete, headers final).
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// Method.
    pub method: Method,
    /// Absolute (or page-relative) URL.
    pub url: String,
    /// Headers, including `Authorization` and `Content-Type`.
    pub headers: Vec<(String, String)>,
    /// Body bytes (shared, so retries do not copy them).
    pub body: Option<Rc<[u8]>>,
    /// `fetch` credentials mode.
    pub credentials: CredentialsMode,
    /// Whether this is a watch (a long-lived streamed response).
    pub is_watch: bool,
}

impl HttpRequest {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

/// An HTTP response: status, headers, and the body still to be read.
pub struct HttpResponse {
    /// HTTP status code.
    pub status: u16,
    /// Response headers (names lower-case as `fetch` reports them).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: BodyStream,
}

impl HttpResponse {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// `Retry-After` in whole seconds, if present and numeric (the HTTP-date
    /// form is not used by the API server).
    pub fn retry_after_seconds(&self) -> Option<u32> {
        self.header("retry-after")
            .and_then(|v| v.trim().parse::<u32>().ok())
    }
}

impl std::fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpResponse")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

/// Whether a transport's error `code` says no connection was made: Node's
/// for a refused connection, a host with no route, or a name that did not
/// resolve (`ECONNREFUSED`, `EHOSTUNREACH`, `ENETUNREACH`, `ENOTFOUND`,
/// `EAI_AGAIN`, `EAI_FAIL`, `EAI_NONAME`), and Bun's `ConnectionRefused`.
/// Such a failure is reported as [`Error::unreachable`], which the client
/// does not retry.
pub fn is_unreachable_code(code: &str) -> bool {
    matches!(
        code,
        "ECONNREFUSED"
            | "EHOSTUNREACH"
            | "ENETUNREACH"
            | "ENOTFOUND"
            | "EAI_AGAIN"
            | "EAI_FAIL"
            | "EAI_NONAME"
            | "ConnectionRefused"
    )
}

pub(crate) fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Performs HTTP exchanges. Implementations must abort the request when the
/// returned future or the response body is dropped.
///
/// The methods with defaults serve watches over WebSocket (see
/// `watch_transport.rs`); a transport without WebSocket keeps them.
pub trait Transport {
    /// Send `req`; resolves once the response headers are in.
    fn send(&self, req: HttpRequest) -> LocalBoxFuture<'static, Result<HttpResponse, Error>>;

    /// Open a WebSocket; resolves once it is open. The stream yields one
    /// item per message (its bytes), ends on a clean close,
    /// and ends with an `Err` on any other close. Dropping the future or the
    /// stream closes the socket.
    fn open_websocket(
        &self,
        req: SocketRequest,
    ) -> LocalBoxFuture<'static, Result<BodyStream, Error>> {
        let _ = req;
        Box::pin(async {
            Err(Error::invalid_config(
                "this transport cannot open a WebSocket",
            ))
        })
    }

    /// What the status of a watch this transport carries calls it.
    fn name(&self) -> String {
        "custom".to_owned()
    }

    /// Whether [`open_websocket`](Self::open_websocket) can work here.
    fn supports_websocket(&self) -> bool {
        false
    }

    /// Whether requests share a browser's per-host connection pool (six
    /// connections per origin over HTTP/1.1), so long-lived watches must be
    /// budgeted. False in Node and edge runtimes.
    fn is_connection_limited(&self) -> bool {
        false
    }

    /// The protocol (`http/1.1`, `h2`, `h3`) an earlier request to `origin`
    /// used, when the host tells (`""` = the page's own origin).
    fn origin_protocol(&self, origin: &str) -> Option<String> {
        let _ = origin;
        None
    }

    /// One of `budget` fetch-watch slots for `origin` shared by every page
    /// and worker of this site (a browser's connection pool is shared by
    /// its tabs): `None` when the host cannot share them (each client then
    /// counts its own), `Some(None)` when all are taken, `Some(Some(slot))`
    /// otherwise; dropping the slot frees it.
    fn take_watch_slot(
        &self,
        origin: &str,
        budget: usize,
    ) -> LocalBoxFuture<'static, Option<Option<WatchSlot>>> {
        let _ = (origin, budget);
        Box::pin(async { None })
    }
}

/// A fetch-watch slot held across pages (see [`Transport::take_watch_slot`]);
/// freed when dropped.
pub struct WatchSlot(pub Box<dyn std::any::Any>);

impl std::fmt::Debug for WatchSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WatchSlot")
    }
}

/// A WebSocket to open for a watch.
#[derive(Debug, Clone, PartialEq)]
pub struct SocketRequest {
    /// The watch URL as for `fetch` (`http(s)://…` or an absolute path); the
    /// transport turns it into `ws(s)://`.
    pub url: String,
    /// Subprotocols to offer (the bearer token travels in one).
    pub protocols: Vec<String>,
    /// Messages received and not yet read beyond this many bytes end the
    /// socket with an error (a browser WebSocket cannot be paused).
    pub max_queued_bytes: usize,
}
