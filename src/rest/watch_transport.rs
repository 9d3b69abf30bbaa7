//! Which connection carries a watch: `fetch` (a streamed response) or a
//! WebSocket, and the per-origin budget that chooses between them.
//!
//! # Why
//! A browser keeps at most six HTTP/1.1 connections per origin, shared by
//! every tab of the profile, and a fetch watch holds one for as long as it
//! lives. With six watches open, every further request to that origin —
//! lists, writes, the page's own HTML — waits for one to end. WebSockets
//! come from a separate pool, so watches beyond a budget go over WebSocket;
//! over HTTP/2 or HTTP/3 requests share one connection and fetch watches are
//! not capped.
//!
//! # What the API server does (read from its source)
//! - **Same URL.** The watch handler (`apiserver/pkg/endpoints/handlers/watch.go`)
//!   checks whether the request is a WebSocket upgrade (`Connection` lists
//!   `upgrade`, `Upgrade: websocket`); if so, it serves the same watch through
//!   `golang.org/x/net/websocket` instead of a chunked response. Each watch
//!   event is encoded on its own and sent as **one message**: the JSON of
//!   `{"type":…,"object":…}` with its trailing newline, in **text** frames for
//!   JSON (binary frames for binary encodings such as protobuf). The server
//!   reads nothing from the client except to notice that it closed. When the
//!   watch ends (timeout, the watch channel closing) the handler returns and
//!   x/net closes with code 1000; errors such as a too-old resourceVersion
//!   arrive as an `ERROR` event first, as on the HTTP watch.
//! - **Bearer token in a subprotocol.** Browsers cannot set headers on a
//!   WebSocket. The authenticator in
//!   `apiserver/pkg/authentication/request/websocket/protocol.go` accepts
//!   `Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.<token>`
//!   (unpadded base64url of the token, which must be UTF-8). It refuses two
//!   such entries, and a token entry with **no other subprotocol** ("missing
//!   additional subprotocol"), because the token entry is removed from the
//!   header after authentication and something must be left to echo.
//! - **Which subprotocol is echoed.** x/net's server handshake splits the
//!   (rewritten) header on commas; with more than one entry left it fails
//!   the handshake (400), with exactly one it echoes that one. A browser
//!   fails the connection when it offered subprotocols and none of them is
//!   echoed, so a client sends **the token plus exactly one other name**. The
//!   watch handler never looks at that name; we offer [`WATCH_SUBPROTOCOL`].
//!   Without a token we offer nothing and nothing is echoed; cookies (a proxy
//!   in front that authenticates by session) go along as with `fetch`.
//! - **Origin.** x/net's default handshake check refuses a request without an
//!   `Origin` header (403). Browsers always send one; Node's `WebSocket`
//!   sends none, one more reason to keep `fetch` outside browsers.
//! - **Extra headers cannot travel**: `Impersonate-User`, a custom
//!   `User-Agent` and the like need `fetch`.
//! - **`kubectl proxy`** handles upgrades apart from other requests: it dials
//!   the API server directly over HTTP/1.1 (its upgrade transport bypasses
//!   HTTP/2), adds its own credentials to the cloned request (the client's
//!   `Sec-WebSocket-Protocol` and `Origin` pass through), relays the
//!   server's raw `101` answer and then copies bytes both ways. A failed
//!   upgrade (say 401) is relayed as an HTTP answer, which a browser reports
//!   only as a failed handshake: the status code is never visible to the page.
//!
//! # How failures map
//! The WebSocket stream is decoded by the same [`EventDecoder`](super::EventDecoder)
//! inside the same [`WatchStream`](super::WatchStream) (idle watchdog, drop =
//! close), so the reflector sees the same events and errors from either
//! transport: a clean close (1000, 1001, or 1005 closed cleanly) ends the
//! stream like a finished response body; any other close (1006 when the
//! connection died without a close frame, 1011, …) is an
//! [`Error::Network`] like a reset fetch body, with the code in the message.
//! A failed handshake is a network error too, since the browser does not say
//! why (refused upgrade, 401/403, a proxy without WebSocket support, the
//! network); establishing is retried like a fetch watch's network errors.
//! When a forced WebSocket's retries are spent, one fetch of the same watch
//! asks the server why: its HTTP error, if any, is the watch's error.
//! A browser WebSocket cannot be paused: messages the consumer has not read
//! yet beyond [`SocketRequest::max_queued_bytes`] end the watch with a
//! network error (the reflector then resumes from its last resourceVersion),
//! so memory stays bounded.
//!
//! # The budget
//! [`WatchTransportMode::Auto`] (the default) counts the open fetch watches
//! per origin (per JS thread: every client of a page shares the count) and,
//! only where the host shares a browser's connection pool (a page, a
//! dedicated or shared worker), sends watches beyond
//! [`Config::fetch_watches_per_origin`](super::Config::fetch_watches_per_origin)
//! (default 4, so lists and writes keep two connections) over WebSocket —
//! unless Resource Timing shows that an earlier request to the origin used
//! HTTP/2 or HTTP/3, or the request needs headers. If a WebSocket cannot be
//! opened in this mode, the watch goes over fetch after all and WebSocket is
//! not tried on that origin again for a minute, unless that fetch could not
//! reach the server either or was refused too (an outage, or a request the
//! server refuses, is not WebSocket's failure). Node and edge runtimes keep
//! fetch. [`WatchStream::transport`](super::WatchStream::transport) tells
//! which transport a watch got and why.
//!
//! WebSocket is the slower transport (BENCHMARKS.md): Chromium dispatches
//! every message as its own task, which caps ~3 KB events near 20k/s against
//! 55–70k/s over fetch. Hence fetch first, WebSocket only beyond the budget.
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt;

use crate::rt::Instant;

use super::client::Client;
use super::config::Auth;
use super::request::Request;
use super::transport::{BodyStream, SocketRequest};
use super::watch::WatchStream;
use super::Error;

/// The subprotocol prefix that carries a bearer token.
pub const BEARER_PROTOCOL_PREFIX: &str = "base64url.bearer.authorization.k8s.io.";

/// The one subprotocol offered next to the token (any single name works: the
/// API server echoes it and its watch handler ignores it).
pub const WATCH_SUBPROTOCOL: &str = "kubewasm.watch";

/// How long WebSocket is not tried again on an origin after it failed in
/// [`WatchTransportMode::Auto`].
const WEBSOCKET_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Which transport watches use ([`Config::watch_transport`](super::Config::watch_transport)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WatchTransportMode {
    /// `fetch`, except beyond the per-origin budget in a browser (see the
    /// module docs).
    #[default]
    Auto,
    /// Always `fetch`.
    Fetch,
    /// Always WebSocket (fails where the host has none).
    WebSocket,
}

/// The transport that carries one watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchTransport {
    /// A streamed `fetch` response.
    Fetch,
    /// A WebSocket, one event per message.
    WebSocket,
}

impl WatchTransport {
    /// `"fetch"` or `"websocket"`.
    pub fn as_str(self) -> &'static str {
        match self {
            WatchTransport::Fetch => "fetch",
            WatchTransport::WebSocket => "websocket",
        }
    }
}

/// Why a watch got its transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportReason {
    /// [`Config::watch_transport`](super::Config::watch_transport) forced it.
    Configured,
    /// The host has no shared per-origin connection pool (Node, workerd).
    NotLimited,
    /// The host has no WebSocket.
    NoWebSocket,
    /// The request carries headers a WebSocket cannot send.
    NeedsHeaders,
    /// The origin speaks HTTP/2 or HTTP/3: fetch watches are not capped.
    Multiplexed,
    /// Fewer fetch watches than the budget are open on the origin.
    WithinBudget,
    /// The budget of fetch watches is spent: WebSocket.
    OverBudget,
    /// The budget is spent, but WebSocket failed on this origin recently:
    /// fetch, which may wait for a free connection.
    WebSocketFailed,
}

impl TransportReason {
    /// A short machine-readable name (`"over-budget"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TransportReason::Configured => "configured",
            TransportReason::NotLimited => "not-limited",
            TransportReason::NoWebSocket => "no-websocket",
            TransportReason::NeedsHeaders => "needs-headers",
            TransportReason::Multiplexed => "multiplexed",
            TransportReason::WithinBudget => "within-budget",
            TransportReason::OverBudget => "over-budget",
            TransportReason::WebSocketFailed => "websocket-failed",
        }
    }
}

/// The transport a watch got, and why ([`WatchStream::transport`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportChoice {
    /// The transport.
    pub transport: WatchTransport,
    /// Why.
    pub reason: TransportReason,
    /// The origin (`scheme://host:port`; empty for the page's own origin).
    pub origin: String,
    /// Fetch watches open on the origin when this one was placed (itself
    /// not counted).
    pub fetch_watches: usize,
    /// The budget in force.
    pub budget: usize,
    /// The client's transport's [name](super::Transport::name), which
    /// carries the watch when it is not a WebSocket.
    pub http_name: String,
}

impl TransportChoice {
    /// What carries the watch, as a status shows it: `websocket`, or the
    /// client's transport (`fetch`, `node`, `worker`, …).
    pub fn carrier(&self) -> &str {
        match self.transport {
            WatchTransport::WebSocket => "websocket",
            WatchTransport::Fetch => &self.http_name,
        }
    }

    /// Whether the per-origin budget decided, which a status display should
    /// point out: the watch went over WebSocket because fetch connections
    /// ran out, or over fetch beyond the budget because WebSocket failed.
    pub fn budget_forced(&self) -> bool {
        matches!(
            self.reason,
            TransportReason::OverBudget | TransportReason::WebSocketFailed
        )
    }
}

#[derive(Default)]
struct OriginState {
    fetch_watches: usize,
    /// The last protocol Resource Timing reported (`http/1.1`, `h2`, `h3`).
    protocol: Option<String>,
    websocket_failed_at: Option<Instant>,
    /// Counts the marks above, so a watch clears only the one it set.
    websocket_failures: u64,
}

thread_local! {
    // Per thread = per JS realm: every client of a page shares one budget,
    // as they share the browser's connections.
    static ORIGINS: RefCell<HashMap<String, OriginState>> = RefCell::new(HashMap::new());
    // WebSocket watches open in this realm, every origin together.
    static SOCKETS: Cell<usize> = const { Cell::new(0) };
}

/// The most WebSocket watches a page opens in `auto` mode. Chromium refuses
/// a page's WebSockets past 255, and a refused one would send its watch to
/// fetch, past the origin's budget, where it holds one of the browser's six
/// connections: past this many, a watch waits (its informer backs off and
/// tries again) instead. The rest of the 255 is left to the app.
pub const MAX_PAGE_WEBSOCKETS: usize = 200;

/// Counts one open WebSocket watch while its stream lives.
struct SocketCount;

impl SocketCount {
    fn open() -> SocketCount {
        SOCKETS.with(|n| n.set(n.get() + 1));
        SocketCount
    }
}

impl Drop for SocketCount {
    fn drop(&mut self) {
        SOCKETS.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

fn with_origin<R>(origin: &str, f: impl FnOnce(&mut OriginState) -> R) -> R {
    ORIGINS.with(|o| f(o.borrow_mut().entry(origin.to_string()).or_default()))
}

/// Fetch watches open on `origin` from this thread's clients (`""` = the
/// page's own origin, for base URLs that are paths).
pub fn open_fetch_watches(origin: &str) -> usize {
    ORIGINS.with(|o| o.borrow().get(origin).map_or(0, |s| s.fetch_watches))
}

/// Counts one open fetch watch while it lives (and holds its cross-page
/// slot, where the host shares them).
pub(crate) struct FetchLease {
    origin: String,
    /// Held for its `Drop`, which frees the slot.
    _slot: Option<super::transport::WatchSlot>,
}

impl FetchLease {
    fn take(origin: &str, slot: Option<super::transport::WatchSlot>) -> Self {
        with_origin(origin, |s| s.fetch_watches += 1);
        FetchLease {
            origin: origin.to_string(),
            _slot: slot,
        }
    }

    /// Keep the lease for as long as `body` is open.
    pub(crate) fn hold(self, body: BodyStream) -> BodyStream {
        body.map(move |item| {
            let _lease = &self;
            item
        })
        .boxed_local()
    }
}

impl Drop for FetchLease {
    fn drop(&mut self) {
        // `try_`: a lease can be dropped while its thread tears down its
        // thread-locals (a native thread ending with a watch task pending),
        // when the count is gone already; a panic there aborts the process.
        let _ = ORIGINS.try_with(|o| {
            if let Ok(mut o) = o.try_borrow_mut() {
                if let Some(s) = o.get_mut(&self.origin) {
                    s.fetch_watches = s.fetch_watches.saturating_sub(1);
                }
            }
        });
    }
}

/// Counts a long-lived non-watch stream to `url` (a followed log) in the
/// per-origin budget as a fetch watch is counted, holding one of the slots
/// the host shares across pages where it has them. It never waits: when
/// every slot is taken it is counted beyond the budget, and the watches
/// opened meanwhile go over WebSocket.
pub(crate) async fn stream_lease(client: &Client, url: &str) -> FetchLease {
    let origin = origin_of(url);
    let budget = client.config().fetch_watches_per_origin;
    let slot = client
        .transport()
        .take_watch_slot(&origin, budget)
        .await
        .flatten();
    FetchLease::take(&origin, slot)
}

/// `scheme://host[:port]` of an absolute URL, lower-cased; `""` for a path
/// (the page's own origin).
pub fn origin_of(url: &str) -> String {
    for scheme in ["https://", "http://"] {
        let Some(head) = url.get(..scheme.len()) else {
            continue;
        };
        if head.eq_ignore_ascii_case(scheme) {
            let rest = url.get(scheme.len()..).unwrap_or("");
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            return format!("{scheme}{}", rest.get(..end).unwrap_or("")).to_ascii_lowercase();
        }
    }
    String::new()
}

/// The `ws(s)://` form of an absolute `http(s)://` URL; `None` for a path.
#[cfg(any(target_arch = "wasm32", test))]
pub fn websocket_url(url: &str) -> Option<String> {
    for (http, ws) in [("https://", "wss://"), ("http://", "ws://")] {
        if url
            .get(..http.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(http))
        {
            return Some(format!("{ws}{}", url.get(http.len()..).unwrap_or("")));
        }
    }
    None
}

/// Whether a Resource Timing protocol name means one multiplexed
/// connection (`h2`, `h3`, `h3-29`, …).
fn is_multiplexed(protocol: &str) -> bool {
    protocol == "h2" || protocol.starts_with("h3")
}

/// Unpadded base64url (what the API server's authenticator decodes).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            let idx = ((n >> (18 - 6 * i)) & 63) as usize;
            out.push(char::from(ALPHABET.get(idx).copied().unwrap_or(b'A')));
        }
    }
    out
}

/// The subprotocol that carries `token`.
pub fn bearer_subprotocol(token: &str) -> String {
    format!("{BEARER_PROTOCOL_PREFIX}{}", base64url(token.as_bytes()))
}

/// How a close ends the stream: `None` for a clean end, else the error.
#[cfg(any(target_arch = "wasm32", test))]
pub fn close_error(code: u16, reason: &str, was_clean: bool) -> Option<Error> {
    let what = match code {
        1000 | 1001 => return None,
        1005 if was_clean => return None,
        1005 => "closed without a status",
        1006 => "the connection was lost without a close frame",
        1002 => "protocol error",
        1003 => "unsupported data",
        1007 => "invalid message data",
        1008 => "policy violation",
        1009 => "message too big",
        1011 => "server error",
        1015 => "TLS handshake failed",
        _ => "closed",
    };
    let reason = if reason.is_empty() {
        String::new()
    } else {
        format!(" ({reason})")
    };
    Some(Error::network(format!(
        "WebSocket watch closed with code {code}{reason}: {what}"
    )))
}

/// The error of a handshake that failed before the socket opened.
#[cfg(any(target_arch = "wasm32", test))]
pub fn handshake_error(url: &str) -> Error {
    Error::network(format!(
        "WebSocket handshake to {url} failed (the host does not say why: a refused upgrade, \
         401/403, a proxy without WebSocket support, or the network)"
    ))
}

/// Whether a request must go over fetch because of its headers. An
/// `Accept` is a preference a WebSocket watch does without: a metadata-only
/// informer's watch then gets whole objects, which it cuts down itself, so
/// past the budget it does not hold a connection the budget never counted.
fn needs_headers(client: &Client, req: &Request) -> bool {
    let cfg = client.config();
    !cfg.headers.is_empty()
        || cfg.user_agent.is_some()
        || req
            .headers()
            .iter()
            .any(|(k, _)| !k.eq_ignore_ascii_case("accept"))
}

/// Decide the transport of a watch to `origin`.
fn choose(client: &Client, req: &Request, origin: &str) -> TransportChoice {
    let cfg = client.config();
    let transport = client.transport();
    let fetch_watches = open_fetch_watches(origin);
    let choice = |t, reason| TransportChoice {
        transport: t,
        reason,
        origin: origin.to_string(),
        fetch_watches,
        budget: cfg.fetch_watches_per_origin,
        http_name: transport.name(),
    };
    use TransportReason as R;
    use WatchTransport::{Fetch, WebSocket};
    match cfg.watch_transport {
        WatchTransportMode::Fetch => return choice(Fetch, R::Configured),
        WatchTransportMode::WebSocket => return choice(WebSocket, R::Configured),
        WatchTransportMode::Auto => {}
    }
    if !transport.is_connection_limited() {
        return choice(Fetch, R::NotLimited);
    }
    if !transport.supports_websocket() {
        return choice(Fetch, R::NoWebSocket);
    }
    if needs_headers(client, req) {
        return choice(Fetch, R::NeedsHeaders);
    }
    if fetch_watches < cfg.fetch_watches_per_origin {
        return choice(Fetch, R::WithinBudget);
    }
    // Asked only at the budget: scanning Resource Timing is not free.
    let known = with_origin(origin, |s| s.protocol.clone());
    let protocol = match known.filter(|p| is_multiplexed(p)) {
        Some(p) => Some(p),
        None => {
            let p = transport.origin_protocol(origin);
            if let Some(p) = &p {
                with_origin(origin, |s| s.protocol = Some(p.clone()));
            }
            p
        }
    };
    if protocol.as_deref().is_some_and(is_multiplexed) {
        return choice(Fetch, R::Multiplexed);
    }
    let now = client.clock().now();
    let failed_recently = with_origin(origin, |s| {
        s.websocket_failed_at
            .is_some_and(|t| now < t + WEBSOCKET_RETRY_AFTER)
    });
    if failed_recently {
        return choice(Fetch, R::WebSocketFailed);
    }
    choice(WebSocket, R::OverBudget)
}

async fn subprotocols(auth: &Auth) -> Result<Vec<String>, Error> {
    let token = match auth {
        Auth::None => None,
        Auth::Bearer(t) => Some(t.clone()),
        Auth::Provider(p) => Some(p.token().await?).filter(|t| !t.is_empty()),
    };
    Ok(match token {
        Some(t) => vec![WATCH_SUBPROTOCOL.to_string(), bearer_subprotocol(&t)],
        None => Vec::new(),
    })
}

/// How long a WebSocket handshake may take when requests have no timeout.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(30);

/// How long the fetch that asks why a forced WebSocket's handshakes fail
/// may take to answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// How [`open_socket`] tries again a handshake that failed with a network
/// error (a refused upgrade, a server out of reach).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum HandshakeRetry {
    /// Not at all: the caller retries network errors itself (a reflector,
    /// which reports each and backs off, gets the first failed handshake as
    /// it would a fetch watch's).
    Never,
    /// Once more at once (auto mode, before the watch falls back to fetch
    /// past the budget): a handshake sent while the server was down can be
    /// reported failed after it is back, and its fallback would then hold
    /// one of the origin's connections; a proxy that refuses upgrades
    /// refuses the second as well.
    OnceAtOnce,
    /// Up to the client's `max_retries`, after its backoff, like a fetch
    /// watch's network errors (WebSocket forced).
    WithBackoff,
}

impl HandshakeRetry {
    /// The policy for a watch: `forced` when WebSocket is configured rather
    /// than picked by the budget.
    fn for_watch(forced: bool, req: &Request) -> Self {
        match (forced, req.leaves_network_errors_to_caller()) {
            (false, _) => HandshakeRetry::OnceAtOnce,
            (true, true) => HandshakeRetry::Never,
            (true, false) => HandshakeRetry::WithBackoff,
        }
    }

    /// Whether a failure after `attempt` earlier retries is tried again.
    fn again(self, attempt: u32, max_retries: u32) -> bool {
        match self {
            HandshakeRetry::Never => false,
            HandshakeRetry::OnceAtOnce => attempt == 0,
            HandshakeRetry::WithBackoff => attempt < max_retries,
        }
    }
}

/// Open the WebSocket of a watch, trying a failed handshake again as
/// `retry` says.
async fn open_socket(
    client: &Client,
    req: &Request,
    url: &str,
    retry: HandshakeRetry,
) -> Result<BodyStream, Error> {
    let cfg = client.config();
    if needs_headers(client, req) {
        return Err(Error::invalid_config(
            "a WebSocket watch cannot send extra headers (headers, user_agent): \
             use the fetch transport",
        ));
    }
    if !client.transport().supports_websocket() {
        return Err(Error::invalid_config(
            "this host has no WebSocket (Node needs version 22, or 20/21 with \
             --experimental-websocket): use the fetch transport",
        ));
    }
    // As for a fetch watch, the request timeout bounds the handshakes and
    // the waits between them together. A proxy that never answers the
    // upgrade must not hold the watch for ever, with no request timeout
    // either (HANDSHAKE_LIMIT): in auto mode it falls back.
    let timeout = req.timeout_override().or(cfg.timeout);
    let clock = client.clock();
    let deadline = timeout.map(|d| clock.now() + d);
    let left = || deadline.map(|d| d.saturating_duration_since(clock.now()));
    let mut attempt = 0u32;
    loop {
        let sreq = SocketRequest {
            url: url.to_string(),
            protocols: subprotocols(&cfg.auth).await?,
            max_queued_bytes: cfg.max_line_bytes.saturating_mul(2).max(32 << 20),
        };
        let open = client.transport().open_websocket(sreq);
        let limit = left().unwrap_or(HANDSHAKE_LIMIT);
        let result = match select(open, clock.sleep(limit)).await {
            Either::Left((r, _)) => r,
            Either::Right(_) => Err(Error::timeout(format!(
                "WebSocket to {url} did not open within {:?}",
                timeout.unwrap_or(limit)
            ))),
        };
        match result {
            Ok(body) => return Ok(body),
            Err(e @ Error::Network { .. }) if retry.again(attempt, cfg.max_retries) => {
                if retry == HandshakeRetry::WithBackoff {
                    let wait = client.retry_delay(attempt);
                    // A wait that would outlast the timeout ends it now.
                    if left().is_some_and(|l| wait >= l) {
                        return Err(e);
                    }
                    clock.sleep(wait).await;
                }
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Open a watch over the transport the mode and budget pick.
pub(super) async fn watch(client: &Client, req: Request) -> Result<WatchStream, Error> {
    let url = req.url(&client.config().base_url)?;
    let origin = origin_of(&url);
    let mut choice = choose(client, &req, &origin);
    let mut slot = None;
    // The mark this watch's failed WebSocket set, when it falls back to fetch.
    let mut ws_failed_at = None;
    // Whether that handshake was answered with a failure (not timed out).
    let mut handshake_refused = false;
    if matches!(
        choice.reason,
        TransportReason::WithinBudget | TransportReason::OverBudget
    ) {
        // The budget decides: where the host shares slots across pages (a
        // browser's tabs share its connection pool), the shared count wins.
        let budget = client.config().fetch_watches_per_origin;
        if let Some(got) = client.transport().take_watch_slot(&origin, budget).await {
            match got {
                Some(s) => {
                    slot = Some(s);
                    choice.transport = WatchTransport::Fetch;
                    choice.reason = TransportReason::WithinBudget;
                }
                None => {
                    choice.transport = WatchTransport::WebSocket;
                    choice.reason = TransportReason::OverBudget;
                    choice.fetch_watches = choice.fetch_watches.max(budget);
                }
            }
        }
    }
    if choice.transport == WatchTransport::WebSocket
        && choice.reason != TransportReason::Configured
        && SOCKETS.with(Cell::get) >= MAX_PAGE_WEBSOCKETS
    {
        return Err(Error::network(format!(
            "this page holds {MAX_PAGE_WEBSOCKETS} WebSocket watches and the origin's {} fetch \
             watches: this one waits for one to close (release informers no longer shown, or \
             filter one informer with scoped views instead of making one per filter)",
            client.config().fetch_watches_per_origin
        )));
    }
    if choice.transport == WatchTransport::WebSocket {
        let forced = choice.reason == TransportReason::Configured;
        let retry = HandshakeRetry::for_watch(forced, &req);
        let opened = open_socket(client, &req, &url, retry).await;
        match opened {
            Ok(body) => {
                let count = SocketCount::open();
                // One event per message: each must end a line for the framer.
                let body = body
                    .map(move |m| {
                        let _open = &count;
                        m.map(|mut bytes| {
                            if bytes.last() != Some(&b'\n') {
                                bytes.push(b'\n');
                            }
                            bytes
                        })
                    })
                    .boxed_local();
                let mut s = client.watch_stream(body, &req);
                s.set_transport(choice);
                return Ok(s);
            }
            Err(e @ Error::Network { .. }) if forced => {
                // A browser does not say why a handshake failed. One fetch of
                // the same watch asks: its HTTP error (a resourceVersion a
                // restarted server does not have, an expired token) is the
                // watch's, so the reflector relists or reports it instead of
                // retrying the same handshake for ever. A fetch that opens is
                // closed again at once, and the handshake failure stands. It
                // gets little time: a proxy that holds streamed answers back
                // (one reason to force WebSocket) would not answer.
                let probe = req.clone().timeout(PROBE_TIMEOUT);
                let lease = FetchLease::take(&origin, None);
                return match client.fetch_watch(&probe, lease).await {
                    Err(http) if http.code().is_some() => Err(http),
                    _ => Err(e),
                };
            }
            Err(e) if forced => return Err(e),
            Err(e @ (Error::Network { .. } | Error::Timeout { .. })) => {
                let now = client.clock().now();
                handshake_refused = matches!(e, Error::Network { .. });
                ws_failed_at = Some(with_origin(&origin, |s| {
                    s.websocket_failed_at = Some(now);
                    s.websocket_failures += 1;
                    s.websocket_failures
                }));
                choice.transport = WatchTransport::Fetch;
                choice.reason = TransportReason::WebSocketFailed;
            }
            Err(e) => return Err(e),
        }
    }
    let lease = FetchLease::take(&origin, slot);
    let result = client.fetch_watch(&req, lease).await;
    let explained = match &result {
        // The server was out of reach, or refused the request itself (a
        // resourceVersion a restarted server does not have yet, an expired
        // token: its answer to the upgrade was the same), not WebSocket. A
        // handshake that timed out while the server answers fetch is a proxy
        // holding upgrades back: WebSocket's failure.
        Err(e) => matches!(e, Error::Network { .. }) || (handshake_refused && e.code().is_some()),
        // The same request works over fetch: WebSocket is what failed.
        Ok(_) => false,
    };
    if let (Some(mark), true) = (ws_failed_at, explained) {
        // Without this, every watch beyond the budget would go over fetch
        // for a minute after an outage or a server restart and take the
        // origin's last connections. (A fetch that timed out may only have
        // waited for a connection: the mark stays.)
        with_origin(&origin, |s| {
            if s.websocket_failures == mark {
                s.websocket_failed_at = None;
            }
        });
    }
    let mut s = result?;
    s.set_transport(choice);
    Ok(s)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
