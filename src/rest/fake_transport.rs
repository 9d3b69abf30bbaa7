//! A scripted [`Transport`] for native tests of the layers above (the api
//! layer, reflector, informers): queue responses, stream bodies chunk by chunk
//! from the test, and inspect the requests that were made.
//!
//! ```
//! use kubewasm::testing::{FakeResponse, FakeTransport};
//! let t = FakeTransport::new();
//! t.push(FakeResponse::json(200, &serde_json::json!({"kind": "Pod"})));
//! let (watch, tx) = FakeResponse::streaming(200);
//! t.push(watch);
//! tx.send(b"{\"type\":\"ADDED\",".to_vec());
//! // … later in the test: tx.send(rest_of_line); drop(tx) closes cleanly.
//! # let _ = t.requests();
//! ```
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use futures::channel::{mpsc, oneshot};
use futures::future::LocalBoxFuture;
use futures::{FutureExt, Stream, StreamExt};

use super::error::Status;
use super::transport::{BodyStream, HttpRequest, HttpResponse, Transport};
use super::Error;

/// A scripted response: status, headers and a body (fixed chunks or a
/// stream fed by a [`BodySender`]).
pub struct FakeResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: FakeBody,
}

enum FakeBody {
    Chunks(Vec<Vec<u8>>),
    Stream(mpsc::UnboundedReceiver<Result<Vec<u8>, Error>>),
}

impl FakeResponse {
    /// An empty response with `status`.
    pub fn new(status: u16) -> Self {
        FakeResponse {
            status,
            headers: Vec::new(),
            body: FakeBody::Chunks(Vec::new()),
        }
    }

    /// `status` with a JSON body.
    pub fn json(status: u16, value: &serde_json::Value) -> Self {
        Self::new(status)
            .header("content-type", "application/json")
            .body(value.to_string().into_bytes())
    }

    /// An error answer with a `Status` body.
    pub fn status(code: u16, reason: &str, message: &str) -> Self {
        let s = Status {
            status: "Failure".into(),
            message: message.into(),
            reason: reason.into(),
            details: None,
            code,
        };
        let mut v = serde_json::to_value(&s).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("kind".into(), "Status".into());
            o.insert("apiVersion".into(), "v1".into());
        }
        Self::json(code, &v)
    }

    /// Add a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// The whole body as one chunk.
    #[must_use]
    pub fn body(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.body = FakeBody::Chunks(vec![bytes.into()]);
        self
    }

    /// The body as the given chunks.
    #[must_use]
    pub fn chunks(mut self, chunks: Vec<Vec<u8>>) -> Self {
        self.body = FakeBody::Chunks(chunks);
        self
    }

    /// A response whose body the test feeds through the returned sender.
    pub fn streaming(status: u16) -> (Self, BodySender) {
        let (tx, rx) = mpsc::unbounded();
        (
            FakeResponse {
                status,
                headers: Vec::new(),
                body: FakeBody::Stream(rx),
            },
            BodySender { tx },
        )
    }
}

/// Feeds a streamed [`FakeResponse`] body. Dropping it (or
/// [`close`](BodySender::close)) ends the body cleanly.
pub struct BodySender {
    tx: mpsc::UnboundedSender<Result<Vec<u8>, Error>>,
}

impl BodySender {
    /// Deliver one chunk. Returns false once the reader has gone away.
    pub fn send(&self, chunk: impl Into<Vec<u8>>) -> bool {
        self.tx.unbounded_send(Ok(chunk.into())).is_ok()
    }

    /// Fail the body mid-stream (a reset connection).
    pub fn fail(&self, err: Error) -> bool {
        self.tx.unbounded_send(Err(err)).is_ok()
    }

    /// End the body cleanly.
    pub fn close(self) {}

    /// Whether the reader dropped the body (the request was aborted).
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Completes a response queued with [`FakeTransport::push_pending`]. Dropping
/// it without answering leaves the request hanging (for timeout tests).
pub struct PendingReply {
    tx: oneshot::Sender<Result<FakeResponse, Error>>,
}

impl PendingReply {
    /// Answer now.
    pub fn respond(self, resp: FakeResponse) {
        let _ = self.tx.send(Ok(resp));
    }

    /// Fail the request now.
    pub fn fail(self, err: Error) {
        let _ = self.tx.send(Err(err));
    }

    /// Whether the request was dropped (cancelled) by the client.
    pub fn is_cancelled(&self) -> bool {
        self.tx.is_canceled()
    }
}

enum Reply {
    Ready(Result<FakeResponse, Error>),
    Pending(oneshot::Receiver<Result<FakeResponse, Error>>),
}

type Handler = Box<dyn FnMut(&HttpRequest) -> Option<Result<FakeResponse, Error>>>;

#[derive(Default)]
struct Inner {
    queue: VecDeque<Reply>,
    handler: Option<Handler>,
    requests: Vec<HttpRequest>,
}

/// A scripted transport. Replies are used in the order they were pushed; when
/// the queue is empty the handler (if any) answers; otherwise the request
/// fails with a network error naming it. Cheap to clone (shared state).
#[derive(Clone, Default)]
pub struct FakeTransport {
    inner: Rc<RefCell<Inner>>,
    open_bodies: Rc<Cell<usize>>,
    in_flight: Rc<Cell<usize>>,
}

impl FakeTransport {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queue a response.
    pub fn push(&self, resp: FakeResponse) {
        self.inner
            .borrow_mut()
            .queue
            .push_back(Reply::Ready(Ok(resp)));
    }

    /// Queue a transport failure (e.g. [`Error::network`]).
    pub fn push_error(&self, err: Error) {
        self.inner
            .borrow_mut()
            .queue
            .push_back(Reply::Ready(Err(err)));
    }

    /// Queue a response the test completes later.
    pub fn push_pending(&self) -> PendingReply {
        let (tx, rx) = oneshot::channel();
        self.inner.borrow_mut().queue.push_back(Reply::Pending(rx));
        PendingReply { tx }
    }

    /// Answer requests the queue does not cover (return `None` to fall
    /// through to the "nothing scripted" network error).
    pub fn set_handler(
        &self,
        f: impl FnMut(&HttpRequest) -> Option<Result<FakeResponse, Error>> + 'static,
    ) {
        self.inner.borrow_mut().handler = Some(Box::new(f));
    }

    /// Every request sent so far, in order.
    pub fn requests(&self) -> Vec<HttpRequest> {
        self.inner.borrow().requests.clone()
    }

    /// How many requests were sent.
    pub fn request_count(&self) -> usize {
        self.inner.borrow().requests.len()
    }

    /// The last request sent.
    pub fn last_request(&self) -> Option<HttpRequest> {
        self.inner.borrow().requests.last().cloned()
    }

    /// Forget the recorded requests.
    pub fn clear_requests(&self) {
        self.inner.borrow_mut().requests.clear();
    }

    /// Replies still queued.
    pub fn queued(&self) -> usize {
        self.inner.borrow().queue.len()
    }

    /// Response bodies handed out and not yet dropped (open connections).
    pub fn open_bodies(&self) -> usize {
        self.open_bodies.get()
    }

    /// Sends whose future is neither resolved nor dropped.
    pub fn in_flight(&self) -> usize {
        self.in_flight.get()
    }
}

/// Counts a live object in a shared counter for as long as it exists.
struct Counted(Rc<Cell<usize>>);

impl Counted {
    fn new(c: &Rc<Cell<usize>>) -> Self {
        c.set(c.get() + 1);
        Counted(c.clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

struct CountedBody {
    inner: BodyStream,
    _open: Counted,
}

impl Stream for CountedBody {
    type Item = Result<Vec<u8>, Error>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

fn into_http(resp: FakeResponse, open: &Rc<Cell<usize>>) -> HttpResponse {
    let inner: BodyStream = match resp.body {
        FakeBody::Chunks(c) => futures::stream::iter(c.into_iter().map(Ok)).boxed_local(),
        FakeBody::Stream(rx) => rx.boxed_local(),
    };
    HttpResponse {
        status: resp.status,
        headers: resp.headers,
        body: CountedBody {
            inner,
            _open: Counted::new(open),
        }
        .boxed_local(),
    }
}

impl Transport for FakeTransport {
    fn send(&self, req: HttpRequest) -> LocalBoxFuture<'static, Result<HttpResponse, Error>> {
        let reply = {
            let mut inner = self.inner.borrow_mut();
            inner.requests.push(req.clone());
            match inner.queue.pop_front() {
                Some(r) => Some(r),
                None => inner
                    .handler
                    .as_mut()
                    .and_then(|h| h(&req))
                    .map(Reply::Ready),
            }
        };
        let open = self.open_bodies.clone();
        let flight = Counted::new(&self.in_flight);
        async move {
            let _flight = flight;
            let result = match reply {
                Some(Reply::Ready(r)) => r,
                Some(Reply::Pending(rx)) => match rx.await {
                    Ok(r) => r,
                    // The test dropped the PendingReply: hang like a dead server.
                    Err(_) => futures::future::pending().await,
                },
                None => Err(Error::network(format!(
                    "FakeTransport: no response scripted for {} {}",
                    req.method.as_str(),
                    req.url
                ))),
            };
            result.map(|r| into_http(r, &open))
        }
        .boxed_local()
    }
}
