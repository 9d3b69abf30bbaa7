//! The [`Client`]: turns [`Request`]s into HTTP exchanges over a
//! [`Transport`], with authentication, rate limiting, timeouts and retries,
//! all waiting on the client's [`SharedClock`] (so native tests use a
//! `FakeClock`).
//!
//! Retry rules (client-go `rest/with_retry.go`, RC-04, widened as the
//! browser needs): a retryable request (GET — get, list, establishing a
//! watch — or one that opted in) is retried up to `max_retries` times on 429,
//! on 500/502/503/504 (and any 5xx carrying `Retry-After`), and on network
//! errors other than a connection that was never made (refused, a name that
//! did not resolve: client-go retries only connections lost on the way; a
//! browser's `fetch` cannot tell them apart, so there every network error is
//! retried). The wait is the server's `Retry-After` (header, else
//! `details.retryAfterSeconds`) when given, else capped exponential backoff
//! with jitter. client-go retries only when `Retry-After` is present; a
//! browser also meets proxies and load balancers that answer 502/503 without
//! it, hence the backoff. Any other request (create, update, patch,
//! delete) is retried only when the server asked for it: a 429, or a 5xx
//! with `Retry-After`, as client-go's `IsNextRetry` does for a request whose
//! body it can send again; never on a network error, which may have come
//! after the server acted.
//!
//! The timeout bounds the whole call, retries and their waits included, as
//! client-go's `Request.request` wraps its retry loop in one
//! `context.WithTimeout`: a wait that would outlast it ends the call at once
//! with the failure that called for it, and a try cut short by it ends the
//! call with [`Error::Timeout`] (never retried). What it bounds is the wait
//! for an answer: a whole body, but a LIST's or a stream's only until their
//! headers (a LIST then gets the timeout for each next part of its body).
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt;
use serde::de::DeserializeOwned;

use crate::rt::{Instant, Rng, SharedClock};

use super::config::{Auth, Config};
use super::limiter::TokenBucket;
use super::list::ObjectList;
use super::list_decoder::{ListDecoder, ListHooks};
use super::object::KubeObject;
use super::request::Request;
use super::transport::{BodyStream, HttpRequest, HttpResponse, Transport};
use super::watch::WatchStream;
use super::watch_transport::FetchLease;
use super::Error;

/// A complete (non-watch) response.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status (2xx).
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        super::transport::find_header(&self.headers, name)
    }
}

/// A Kubernetes REST client. Cheap to clone (shared inside); single-threaded.
///
/// Built from a [`Config`] with `Client::new` in wasm (requests go through
/// the global `fetch`), or over any [`Transport`](super::Transport) with
/// [`with_transport`](Self::with_transport).
///
/// ```no_run
/// use kubewasm::rest::Request;
/// use kubewasm::{Client, Error, ListParams};
///
/// async fn first_pods(client: &Client) -> Result<(), Error> {
///     let params = ListParams {
///         limit: Some(50),
///         ..Default::default()
///     };
///     let req = Request::get()
///         .core()
///         .namespace("default")
///         .resource("pods")
///         .list_params(&params);
///     let page = client.send_list(&req).await?;
///     for pod in &page.items {
///         println!("{} at {}", pod.name(), pod.resource_version());
///     }
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct Client(Rc<Inner>);

struct Inner {
    config: Config,
    transport: Rc<dyn Transport>,
    clock: SharedClock,
    limiter: Option<TokenBucket>,
    rng: RefCell<Rng>,
    gate: Option<Rc<Gate>>,
    /// The last try met no server (a network error).
    lost: std::cell::Cell<bool>,
    /// Told when a try gets an answer after `lost`: the server is back.
    reached: crate::rt::Notify,
}

/// Caps the requests waiting for headers (`Config::max_in_flight`).
struct Gate {
    cap: usize,
    in_flight: std::cell::Cell<usize>,
    freed: crate::rt::Notify,
}

/// Holds one of the gate's slots until dropped.
struct Permit(Rc<Gate>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0
            .in_flight
            .set(self.0.in_flight.get().saturating_sub(1));
        self.0.freed.notify_waiters();
    }
}

impl Gate {
    async fn acquire(self: &Rc<Self>) -> Permit {
        loop {
            let wait = self.freed.notified();
            if self.in_flight.get() < self.cap {
                self.in_flight.set(self.in_flight.get() + 1);
                return Permit(self.clone());
            }
            wait.await;
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.0.config)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client over the global `fetch` with the real clock.
    ///
    /// `fetch` exists only in wasm32 builds: natively (a host `cargo check`,
    /// native tests) this compiles, so the same code checks on every
    /// target, but returns [`Error::InvalidConfig`]; give
    /// [`Client::with_transport`] a transport there.
    pub fn new(config: Config) -> Result<Self, Error> {
        #[cfg(target_arch = "wasm32")]
        return Self::with_transport(
            config,
            Rc::new(super::FetchTransport::new()),
            crate::rt::real_clock(),
        );
        #[cfg(not(target_arch = "wasm32"))]
        {
            config.validate()?;
            Err(Error::invalid_config(
                "Client::new sends over fetch, which only wasm32 builds have; \
                 natively, use Client::with_transport",
            ))
        }
    }

    /// A client over any transport and clock (tests use the fake transport
    /// and clock of the `testing` feature).
    pub fn with_transport(
        config: Config,
        transport: Rc<dyn Transport>,
        clock: SharedClock,
    ) -> Result<Self, Error> {
        config.validate()?;
        let config_gate = config.max_in_flight.map(|cap| {
            Rc::new(Gate {
                cap: cap.max(1),
                in_flight: std::cell::Cell::new(0),
                freed: crate::rt::Notify::new(),
            })
        });
        let limiter = config
            .rate_limit
            .map(|rl| TokenBucket::new(rl, clock.clone()));
        // Jitter only; seeded from the thread generator so tests can fix it
        // with `rt::seed_thread_rng`.
        let seed = (crate::rt::random_f64() * u64::MAX as f64) as u64;
        Ok(Client(Rc::new(Inner {
            config,
            transport,
            clock,
            limiter,
            rng: RefCell::new(Rng::with_seed(seed)),
            gate: config_gate,
            lost: std::cell::Cell::new(false),
            reached: crate::rt::Notify::new(),
        })))
    }

    /// Completes when a request of this client (or of a clone) gets an
    /// answer after one met no server: an informer waiting out a backoff
    /// after a network error tries again then, rather than at the step an
    /// outage grew its backoff to.
    pub fn reached_again(&self) -> impl std::future::Future<Output = ()> + 'static {
        self.0.reached.notified()
    }

    /// Note what a try met: an answer, or no server.
    fn note_reach(&self, answered: bool) {
        if answered {
            if self.0.lost.replace(false) {
                self.0.reached.notify_waiters();
            }
        } else {
            self.0.lost.set(true);
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.0.config
    }

    /// The clock every wait of this client uses.
    pub fn clock(&self) -> &SharedClock {
        &self.0.clock
    }

    /// Send a non-watch request and read the whole body. Non-2xx answers
    /// become [`Error::Api`].
    pub async fn send(&self, req: &Request) -> Result<Response, Error> {
        if req.is_watch() {
            return Err(Error::invalid_request(
                "a watch request must be sent with Client::watch",
            ));
        }
        let (resp, body) = self.execute(req, &Want::Bytes).await?;
        Ok(Response {
            status: resp.status,
            headers: resp.headers,
            body: body.into_bytes(),
        })
    }

    /// Send and return the body bytes.
    pub async fn send_bytes(&self, req: &Request) -> Result<Vec<u8>, Error> {
        Ok(self.send(req).await?.body)
    }

    /// Send and decode the body as one object.
    pub async fn send_object(&self, req: &Request) -> Result<KubeObject, Error> {
        let obj = KubeObject::from_json_vec(self.send_bytes(req).await?)?;
        failure_status(&obj).map_or(Ok(obj), Err)
    }

    /// Send and decode the body into any serde type.
    pub async fn send_json<T: DeserializeOwned>(&self, req: &Request) -> Result<T, Error> {
        let body = self.send_bytes(req).await?;
        serde_json::from_slice(&body).map_err(|e| Error::decode(format!("{e}"), &body))
    }

    /// Send a LIST and decode the page as it arrives (the whole body is
    /// never held: see `list_decoder.rs`).
    pub async fn send_list(&self, req: &Request) -> Result<ObjectList, Error> {
        self.list_streamed(req, ListHooks::default()).await
    }

    /// [`send_list`](Self::send_list), calling `hooks` as the page arrives
    /// (a retried request calls them again for the new attempt).
    pub async fn send_list_with(
        &self,
        req: &Request,
        hooks: ListHooks,
    ) -> Result<ObjectList, Error> {
        self.list_streamed(req, hooks).await
    }

    async fn list_streamed(&self, req: &Request, hooks: ListHooks) -> Result<ObjectList, Error> {
        if req.is_watch() {
            return Err(Error::invalid_request(
                "a watch request must be sent with Client::watch",
            ));
        }
        match self.execute(req, &Want::List(hooks)).await?.1 {
            Body::List(l) => Ok(l),
            // Only a 204 has no list body.
            _ => ListDecoder::new().finish(),
        }
    }

    /// Open a watch (the request is marked as one if it was not). Resolves
    /// once the server answered 200; the events follow on the stream. Not
    /// rate limited; establishing it is retried like a GET.
    ///
    /// The transport (`fetch` or WebSocket) follows
    /// [`Config::watch_transport`] and the per-origin budget
    /// (`watch_transport.rs`); [`WatchStream::transport`] tells which.
    pub async fn watch(&self, req: &Request) -> Result<WatchStream, Error> {
        let req = if req.is_watch() {
            req.clone()
        } else {
            req.clone().watch()
        };
        super::watch_transport::watch(self, req).await
    }

    /// Send a non-watch request and hand back its body unread, as it
    /// arrives (client-go's `Request.Stream`): pod logs, proxied files. A
    /// non-2xx answer is an [`Error::Api`] as for [`send`](Self::send); the
    /// timeout covers only the wait for the response headers, and dropping
    /// the stream aborts the request. Retried and rate limited like `send`.
    pub async fn stream(&self, req: &Request) -> Result<BodyStream, Error> {
        self.stream_body(req, false).await
    }

    /// [`stream`](Self::stream); `long_lived` tells the transport the body
    /// may stay open indefinitely (a followed log), as a watch's does.
    pub(crate) async fn stream_body(
        &self,
        req: &Request,
        long_lived: bool,
    ) -> Result<BodyStream, Error> {
        if req.is_watch() {
            return Err(Error::invalid_request(
                "a watch request must be sent with Client::watch",
            ));
        }
        let (resp, _) = self.execute(req, &Want::Body { long_lived }).await?;
        Ok(resp.body)
    }

    /// A watch over `fetch`; `lease` counts it in the budget while the
    /// response body is open.
    pub(super) async fn fetch_watch(
        &self,
        req: &Request,
        lease: FetchLease,
    ) -> Result<WatchStream, Error> {
        let (resp, _) = self.execute(req, &Want::Stream).await?;
        Ok(self.watch_stream(lease.hold(resp.body), req))
    }

    /// Decode `body` as the events of the watch `req`.
    pub(super) fn watch_stream(&self, body: BodyStream, req: &Request) -> WatchStream {
        WatchStream::new(
            body,
            self.0.clock.clone(),
            self.0.config.max_line_bytes,
            req.idle_timeout_override()
                .or(self.0.config.watch_idle_timeout),
        )
    }

    /// Hand the `Warning` headers of a response to the configured handler.
    pub(super) fn warn(&self, headers: &[(String, String)]) {
        if let Some(h) = &self.0.config.warning_handler {
            for w in super::warning::parse_warning_headers(headers) {
                h.0.handle_warning(&w);
            }
        }
    }

    /// The transport.
    pub(super) fn transport(&self) -> &Rc<dyn Transport> {
        &self.0.transport
    }

    /// The wait before retry number `attempt` without `Retry-After`.
    pub(super) fn retry_delay(&self, attempt: u32) -> Duration {
        let r = self.0.rng.borrow_mut().next_f64();
        self.0.config.backoff.delay(attempt, r)
    }

    async fn headers(&self, req: &Request) -> Result<Vec<(String, String)>, Error> {
        let cfg = &self.0.config;
        let mut h = Vec::with_capacity(4 + cfg.headers.len() + req.headers().len());
        h.push(("Accept".to_string(), "application/json".to_string()));
        if let Some(ct) = req.content_type() {
            h.push(("Content-Type".into(), ct.into()));
        }
        match &cfg.auth {
            Auth::None => {}
            Auth::Bearer(t) => h.push(("Authorization".into(), format!("Bearer {t}"))),
            Auth::Provider(p) => {
                let t = p.token().await?;
                if t.contains(['\r', '\n']) {
                    return Err(Error::invalid_config(
                        "token provider returned a multi-line token",
                    ));
                }
                if !t.is_empty() {
                    h.push(("Authorization".into(), format!("Bearer {t}")));
                }
            }
        }
        if let Some(ua) = &cfg.user_agent {
            h.push(("User-Agent".into(), ua.clone()));
        }
        // Later headers override earlier ones of the same name.
        for (k, v) in cfg.headers.iter().chain(req.headers()) {
            h.retain(|(hk, _)| !hk.eq_ignore_ascii_case(k));
            h.push((k.clone(), v.clone()));
        }
        Ok(h)
    }

    /// One attempt: send, and for non-watches read the body, all within
    /// `limit` (what is left of the request's `timeout`, which a timeout's
    /// message names). A LIST streams: `limit` covers its headers, and then
    /// `timeout` each wait for more of the body, not the whole transfer, so a
    /// collection of any size can arrive as long as it keeps arriving.
    /// Returns the response and (non-watch) its body; non-success statuses
    /// come back as `Ok` for the caller to classify.
    async fn attempt(
        &self,
        http: HttpRequest,
        want: &Want,
        limit: Option<Duration>,
        timeout: Option<Duration>,
    ) -> Result<(HttpResponse, Body), Error> {
        let watch = matches!(want, Want::Stream);
        let transport = self.0.transport.clone();
        let gate = self.0.gate.clone();
        let max_body = self.0.config.max_response_bytes;
        // Whether the headers came, for a timeout to say which part was late.
        let headers_in = std::cell::Cell::new(false);
        let got_headers = &headers_in;
        let work = async move {
            // The slot is held only until the response headers arrive.
            let permit = match &gate {
                Some(g) => Some(g.acquire().await),
                None => None,
            };
            let mut resp = transport.send(http).await?;
            got_headers.set(true);
            drop(permit);
            let ok = if watch {
                resp.status == 200
            } else {
                (200..300).contains(&resp.status)
            };
            let body = match want {
                _ if !ok => Body::Bytes(
                    read_error_body(&mut resp.body, max_body.min(ERROR_BODY_MAX)).await?,
                ),
                Want::Stream | Want::List(_) | Want::Body { .. } => Body::None,
                Want::Bytes => Body::Bytes(read_body(&mut resp.body, max_body).await?),
            };
            Ok::<_, Error>((resp, body))
        };
        let (mut resp, body) = match limit {
            None => work.await?,
            Some(d) => {
                let work = Box::pin(work);
                match select(work, self.0.clock.sleep(d)).await {
                    Either::Left((r, _)) => r?,
                    Either::Right(_) => {
                        let t = timeout.unwrap_or(d);
                        return Err(Error::timeout(if headers_in.get() {
                            format!("the response body did not complete within {t:?}")
                        } else {
                            format!("no response headers within {t:?}")
                        }));
                    }
                }
            }
        };
        match want {
            Want::List(hooks) if (200..300).contains(&resp.status) => {
                let list = read_list(
                    &mut resp.body,
                    max_body,
                    hooks.clone(),
                    &self.0.clock,
                    timeout,
                )
                .await?;
                Ok((resp, Body::List(list)))
            }
            _ => Ok((resp, body)),
        }
    }

    /// Wait for the rate limiter (watches are exempt), until `deadline` if
    /// one is given; false when the deadline came first.
    async fn throttle(&self, watch: bool, deadline: Option<Instant>) -> bool {
        let Some(l) = self.0.limiter.as_ref().filter(|_| !watch) else {
            return true;
        };
        match deadline {
            None => {
                l.acquire().await;
                true
            }
            Some(d) => {
                let wait = self.0.clock.sleep_until(d);
                matches!(select(Box::pin(l.acquire()), wait).await, Either::Left(_))
            }
        }
    }

    async fn execute(&self, req: &Request, want: &Want) -> Result<(HttpResponse, Body), Error> {
        let watch = matches!(want, Want::Stream);
        let long_lived = watch || matches!(want, Want::Body { long_lived: true });
        let cfg = &self.0.config;
        let clock = &self.0.clock;
        let url = req.url(&cfg.base_url)?;
        let timeout = req.timeout_override().or(cfg.timeout);
        // The timeout bounds the whole call, retries and their waits
        // included (client-go wraps its retry loop in one
        // `context.WithTimeout`). It starts once the first try is through
        // the rate limiter, as client-go's does, so that a throttled client
        // does not time out before it sent anything.
        self.throttle(watch, None).await;
        let deadline = timeout.map(|d| clock.now() + d);
        let left = || deadline.map(|d| d.saturating_duration_since(clock.now()));
        let mut retries = 0u32;
        // The failure of the try before, for a timeout to say what it cut short.
        let mut previous: Option<Error> = None;
        loop {
            // A token provider gets the timeout too (an exec plugin or a
            // refresh that never answers), as client-go's covers its auth;
            // the answer then has its own.
            let headers = match left() {
                None => self.headers(req).await?,
                Some(d) => match select(Box::pin(self.headers(req)), clock.sleep(d)).await {
                    Either::Left((h, _)) => h?,
                    Either::Right(_) => {
                        return Err(out_of_time(
                            format!(
                                "the token provider gave no token within {:?}",
                                timeout.unwrap_or(d)
                            ),
                            retries,
                            previous.as_ref(),
                        ))
                    }
                },
            };
            let http = HttpRequest {
                method: req.method(),
                url: url.clone(),
                headers,
                body: req.body_bytes().cloned(),
                credentials: cfg.credentials,
                is_watch: long_lived,
            };
            let attempt = self.attempt(http, want, left(), timeout).await;
            match &attempt {
                Ok(_) => self.note_reach(true),
                Err(e) if e.is_network() => self.note_reach(false),
                Err(_) => {}
            }
            let err = match attempt {
                Ok((resp, body)) => {
                    self.warn(&resp.headers);
                    let ok = if watch {
                        resp.status == 200
                    } else {
                        (200..300).contains(&resp.status)
                    };
                    if ok {
                        return Ok((resp, body));
                    }
                    let retry_after = resp.retry_after_seconds();
                    let mut err =
                        Error::from_response(resp.status, &body.into_bytes(), retry_after);
                    // As kubectl's "(get deployments)": what was not found.
                    if let (404, Error::Api(api)) = (resp.status, &mut err) {
                        api.request = req.collection_context();
                    }
                    err
                }
                Err(Error::Timeout { message })
                    if retries > 0 && left() == Some(Duration::ZERO) =>
                {
                    return Err(out_of_time(message, retries, previous.as_ref()))
                }
                Err(e) => e,
            };
            let may_retry = if req.is_retryable() {
                let to_caller = if err.is_network() {
                    req.leaves_network_errors_to_caller()
                } else {
                    req.leaves_server_errors_to_caller()
                };
                // A version newer than the server has is the caller's to
                // handle (a reflector lists at the newest instead): waiting
                // cannot help a server whose versions went backwards.
                is_retryable_error(&err)
                    && (!to_caller
                        || (server_asked_to_retry(&err)
                            && !req.leaves_waits_to_caller()
                            && !err.is_too_large_resource_version()))
            } else {
                server_asked_to_retry(&err)
            };
            if !may_retry || retries >= cfg.max_retries {
                return Err(err);
            }
            let wait = match err.retry_after() {
                Some(d) => d,
                None => {
                    let r = self.0.rng.borrow_mut().next_f64();
                    cfg.backoff.delay(retries, r)
                }
            };
            // A wait that would outlast the timeout ends the call now, with
            // the failure that called for it rather than a timeout later.
            if left().is_some_and(|l| wait >= l) {
                return Err(err);
            }
            retries += 1;
            clock.sleep(wait).await;
            if !self.throttle(watch, deadline).await {
                return Err(out_of_time(
                    format!(
                        "no answer within {:?}: the rate limiter held the next try",
                        timeout.unwrap_or_default()
                    ),
                    retries,
                    Some(&err),
                ));
            }
            previous = Some(err);
        }
    }
}

/// The timeout of a call: `what` did not happen within the call's time, and
/// after retries, the failure before tells why it retried.
fn out_of_time(what: String, retries: u32, previous: Option<&Error>) -> Error {
    if retries == 0 {
        return Error::timeout(what);
    }
    let before = previous.map_or_else(String::new, |e| format!("; the try before: {e}"));
    Error::timeout(format!(
        "{what}, retries included ({retries} {}{before})",
        if retries == 1 { "retry" } else { "retries" }
    ))
}

/// What a successful answer's body is read as.
enum Want {
    /// A watch: the body stays open for the caller.
    Stream,
    /// Any other streamed body (client-go's `Stream`): rate limited and
    /// accepted on any 2xx like a plain request, left open for the caller;
    /// `long_lived` marks it for the transport as a watch is marked.
    Body { long_lived: bool },
    /// The whole body.
    Bytes,
    /// A LIST, decoded as it arrives.
    List(ListHooks),
}

/// A body as read for a [`Want`] (error answers are always bytes).
enum Body {
    None,
    Bytes(Vec<u8>),
    List(ObjectList),
}

impl Body {
    fn into_bytes(self) -> Vec<u8> {
        match self {
            Body::Bytes(b) => b,
            Body::None | Body::List(_) => Vec::new(),
        }
    }
}

/// Whether a failed attempt may be retried (for a retryable request).
pub fn is_retryable_error(err: &Error) -> bool {
    match err {
        // client-go retries connections lost on the way, not refused ones
        // (`isErrRetryableFunc` in `Request.request`): a server that is
        // down is reported at once.
        Error::Network { unreachable, .. } => !unreachable,
        Error::Api(a) => {
            matches!(a.code, 429 | 500 | 502 | 503 | 504)
                || (a.code >= 500 && a.retry_after_seconds.is_some())
        }
        _ => false,
    }
}

/// Whether the server told the client to come back later: a 429 or a 5xx
/// with `Retry-After` (client-go's `checkWait`), which a request that is not
/// retryable by itself may also follow. The `Status`'s
/// `details.retryAfterSeconds` counts too: a page cannot read the header of
/// a cross-origin response the server did not expose it on.
fn server_asked_to_retry(err: &Error) -> bool {
    matches!(err, Error::Api(a) if (a.code == 429 || a.code >= 500) && a.retry_after_seconds.is_some())
}

/// How much of an error answer's body is read: a `Status` is small, and
/// what matters of a proxy's error page is its status code and first lines.
const ERROR_BODY_MAX: usize = 1024 * 1024;

/// The whole body, or [`Error::ResponseTooLarge`] as soon as it exceeds
/// `limit` (the caller then drops the stream, which aborts the request).
async fn read_body(body: &mut BodyStream, limit: usize) -> Result<Vec<u8>, Error> {
    let mut out: Vec<u8> = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        if out.len().saturating_add(chunk.len()) > limit {
            return Err(Error::ResponseTooLarge { limit });
        }
        if out.is_empty() {
            out = chunk;
        } else {
            out.extend_from_slice(&chunk);
        }
    }
    Ok(out)
}

/// A LIST body decoded chunk by chunk; [`Error::ResponseTooLarge`] as soon
/// as it exceeds `limit` (the decoded items count against it as the body
/// they came from would), [`Error::Timeout`] when no more of it arrives for
/// `idle`.
async fn read_list(
    body: &mut BodyStream,
    limit: usize,
    hooks: ListHooks,
    clock: &SharedClock,
    idle: Option<Duration>,
) -> Result<ObjectList, Error> {
    let mut decoder = ListDecoder::with_hooks(hooks);
    let mut read = 0usize;
    loop {
        let next = match idle {
            None => body.next().await,
            Some(d) => match select(body.next(), clock.sleep(d)).await {
                Either::Left((next, _)) => next,
                Either::Right(_) => {
                    return Err(Error::timeout(format!(
                        "no more of the list for {d:?} after {read} bytes"
                    )))
                }
            },
        };
        let Some(chunk) = next else { break };
        let chunk = chunk?;
        read = read.saturating_add(chunk.len());
        if read > limit {
            return Err(Error::ResponseTooLarge { limit });
        }
        decoder.feed(chunk)?;
    }
    decoder.finish()
}

/// An error answer's body, cut to `limit` bytes (the rest is not read).
async fn read_error_body(body: &mut BodyStream, limit: usize) -> Result<Vec<u8>, Error> {
    let mut out: Vec<u8> = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        let room = limit.saturating_sub(out.len());
        out.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

/// The error a body that is a failure `Status` stands for, where an object
/// was expected (a server or proxy that answers a failure with 200), as
/// client-go's `Result.Into` reads one: any status but `Success`.
fn failure_status(obj: &KubeObject) -> Option<Error> {
    if obj.kind() != "Status" || obj.api_version() != "v1" {
        return None;
    }
    let status = super::Status::from_json(obj.raw()).ok()?;
    (status.status != "Success").then(|| Error::from_status(status))
}
