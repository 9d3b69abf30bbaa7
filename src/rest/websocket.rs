//! The browser side of WebSocket watches (wasm32 only): opening a
//! `WebSocket` on `globalThis`, its messages as a stream of bytes, closes
//! turned into typed errors, and the host facts the budget needs (whether
//! connections are pooled per origin, Resource Timing's protocol). See
//! `watch_transport.rs` for the protocol and the budget.
use std::cell::RefCell;
use std::collections::VecDeque;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures::future::{poll_fn, LocalBoxFuture};
use futures::{Stream, StreamExt};
use js_sys::{Array, ArrayBuffer, Function, Reflect, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{BinaryType, CloseEvent, MessageEvent, WebSocket};

use super::transport::{BodyStream, SocketRequest};
use super::watch_transport::{close_error, handshake_error, websocket_url};
use super::Error;

fn global_has(name: &str) -> bool {
    Reflect::get(&js_sys::global(), &JsValue::from_str(name))
        .is_ok_and(|v| !v.is_undefined() && !v.is_null())
}

/// Whether the host has a `WebSocket` constructor.
pub(super) fn supported() -> bool {
    global_has("WebSocket")
}

/// Whether requests share a browser's per-origin connection pool: a page
/// (it has a `document`) or a dedicated or shared worker. Node, Deno and
/// workerd have none of these.
pub(super) fn connection_limited() -> bool {
    global_has("document")
        || global_has("DedicatedWorkerGlobalScope")
        || global_has("SharedWorkerGlobalScope")
}

fn page_origin() -> Option<String> {
    let loc = Reflect::get(&js_sys::global(), &JsValue::from_str("location")).ok()?;
    Reflect::get(&loc, &JsValue::from_str("origin"))
        .ok()?
        .as_string()
}

/// The protocol of the latest Resource Timing entry for `origin` (`""` =
/// the page's own) that reports one. Cross-origin entries report it only
/// when the server allows (`Timing-Allow-Origin`).
pub(super) fn origin_protocol(origin: &str) -> Option<String> {
    let origin = if origin.is_empty() {
        page_origin()?
    } else {
        origin.to_string()
    };
    let perf = Reflect::get(&js_sys::global(), &JsValue::from_str("performance")).ok()?;
    let get: Function = Reflect::get(&perf, &JsValue::from_str("getEntriesByType"))
        .ok()?
        .dyn_into()
        .ok()?;
    let entries: Array = get
        .call1(&perf, &JsValue::from_str("resource"))
        .ok()?
        .dyn_into()
        .ok()?;
    let prefix = format!("{origin}/");
    // Newest first; the buffer holds a few hundred entries at most.
    (0..entries.length()).rev().take(500).find_map(|i| {
        let e = entries.get(i);
        let name = Reflect::get(&e, &JsValue::from_str("name"))
            .ok()?
            .as_string()?;
        if !name.starts_with(&prefix) {
            return None;
        }
        Reflect::get(&e, &JsValue::from_str("nextHopProtocol"))
            .ok()?
            .as_string()
            .filter(|p| !p.is_empty())
    })
}

/// `ws(s)://` for the watch URL; a path is resolved against the host's
/// `location` (pages and workers).
fn resolve(url: &str) -> Result<String, Error> {
    if let Some(u) = websocket_url(url) {
        return Ok(u);
    }
    let base = Reflect::get(&js_sys::global(), &JsValue::from_str("location"))
        .ok()
        .and_then(|l| Reflect::get(&l, &JsValue::from_str("href")).ok())
        .and_then(|h| h.as_string())
        .ok_or_else(|| {
            Error::invalid_config(format!("cannot resolve {url:?}: this host has no location"))
        })?;
    let u = web_sys::Url::new_with_base(url, &base)
        .map_err(|_| Error::invalid_config(format!("cannot resolve {url:?} against {base}")))?;
    websocket_url(&u.href())
        .ok_or_else(|| Error::invalid_config(format!("{url:?} is not an http(s) URL")))
}

/// What the event handlers share with the stream.
#[derive(Default)]
struct Shared {
    opened: bool,
    queue: VecDeque<Vec<u8>>,
    queued_bytes: usize,
    /// How the socket ended: `Ok` clean, `Err` otherwise.
    end: Option<Result<(), Error>>,
    /// The end was reported to the reader.
    finished: bool,
    waker: Option<Waker>,
}

impl Shared {
    fn wake(&mut self) {
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

/// The socket and its handlers; dropping it detaches them and closes the
/// socket (the server then frees its watcher).
struct Socket {
    ws: WebSocket,
    shared: Rc<RefCell<Shared>>,
    _on_open: Closure<dyn FnMut()>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
    _on_error: Closure<dyn FnMut()>,
}

impl Drop for Socket {
    fn drop(&mut self) {
        // Detached first, so no handler runs after its closure is freed.
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        self.ws.set_onerror(None);
        if self.ws.ready_state() <= WebSocket::OPEN {
            let _ = self.ws.close();
        }
    }
}

/// One message's bytes, ending in `\n` (the API server's JSON events already
/// do; the framer needs the line end).
fn message_bytes(data: &JsValue) -> Option<Vec<u8>> {
    let mut v = if let Some(s) = data.as_string() {
        s.into_bytes()
    } else {
        let buf = data.dyn_ref::<ArrayBuffer>()?;
        let arr = Uint8Array::new(buf);
        let len = arr.length() as usize;
        let mut v = Vec::with_capacity(len + 1);
        v.resize(len, 0);
        arr.copy_to(&mut v);
        v
    };
    if v.last() != Some(&b'\n') {
        v.push(b'\n');
    }
    Some(v)
}

fn open_socket(req: &SocketRequest) -> Result<Socket, Error> {
    if !supported() {
        return Err(Error::invalid_config(
            "this JavaScript host has no WebSocket",
        ));
    }
    let url = resolve(&req.url)?;
    let ws = if req.protocols.is_empty() {
        WebSocket::new(&url)
    } else {
        let protocols: Array = req.protocols.iter().map(|p| JsValue::from_str(p)).collect();
        WebSocket::new_with_str_sequence(&url, &protocols)
    }
    .map_err(|e| {
        // A SyntaxError: a bad URL or subprotocol (a token with odd bytes).
        let msg = e
            .dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .unwrap_or_default();
        Error::invalid_request(format!("cannot open a WebSocket to {url}: {msg}"))
    })?;
    ws.set_binary_type(BinaryType::Arraybuffer);
    let shared = Rc::new(RefCell::new(Shared::default()));

    let sh = shared.clone();
    let on_open = Closure::<dyn FnMut()>::new(move || {
        let mut s = sh.borrow_mut();
        s.opened = true;
        s.wake();
    });
    let sh = shared.clone();
    let socket = ws.clone();
    let limit = req.max_queued_bytes;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let mut s = sh.borrow_mut();
        if s.end.is_some() {
            return;
        }
        match message_bytes(&ev.data()) {
            Some(bytes) => {
                s.queued_bytes += bytes.len();
                s.queue.push_back(bytes);
                if s.queued_bytes > limit {
                    s.end = Some(Err(Error::network(format!(
                        "WebSocket watch closed: {} bytes of events were not read in time",
                        s.queued_bytes
                    ))));
                    let _ = socket.close();
                }
            }
            None => {
                s.end = Some(Err(Error::network(
                    "WebSocket message is neither text nor binary",
                )));
                let _ = socket.close();
            }
        }
        s.wake();
    });
    let sh = shared.clone();
    let target = url.clone();
    let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |ev: CloseEvent| {
        let mut s = sh.borrow_mut();
        if s.end.is_none() {
            s.end = Some(if s.opened {
                match close_error(ev.code(), &ev.reason(), ev.was_clean()) {
                    None => Ok(()),
                    Some(e) => Err(e),
                }
            } else {
                Err(handshake_error(&target))
            });
        }
        s.wake();
    });
    // A failed handshake: browsers follow the error with a close, Node's
    // WebSocket (undici) may not, so it ends the wait here. After the open,
    // the close that follows carries the code.
    let sh = shared.clone();
    let target = url.clone();
    let on_error = Closure::<dyn FnMut()>::new(move || {
        let mut s = sh.borrow_mut();
        if !s.opened && s.end.is_none() {
            s.end = Some(Err(handshake_error(&target)));
            s.wake();
        }
    });
    ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    ws.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    Ok(Socket {
        ws,
        shared,
        _on_open: on_open,
        _on_message: on_message,
        _on_close: on_close,
        _on_error: on_error,
    })
}

/// The messages of an open socket.
struct Messages(Socket);

impl Stream for Messages {
    type Item = Result<Vec<u8>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut s = self.0.shared.borrow_mut();
        if let Some(m) = s.queue.pop_front() {
            s.queued_bytes -= m.len();
            return Poll::Ready(Some(Ok(m)));
        }
        if s.finished {
            return Poll::Ready(None);
        }
        match s.end.take() {
            Some(end) => {
                s.finished = true;
                Poll::Ready(end.err().map(Err))
            }
            None => {
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Open a WebSocket and resolve once it is open (see
/// [`Transport::open_websocket`](super::Transport::open_websocket)).
pub(super) fn open(req: SocketRequest) -> LocalBoxFuture<'static, Result<BodyStream, Error>> {
    Box::pin(async move {
        let socket = open_socket(&req)?;
        poll_fn(|cx| {
            let mut s = socket.shared.borrow_mut();
            if s.opened {
                return Poll::Ready(Ok(()));
            }
            if let Some(end) = s.end.take() {
                // Closed before it opened.
                return Poll::Ready(Err(end.err().unwrap_or_else(|| handshake_error(&req.url))));
            }
            s.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await?;
        Ok(Messages(socket).boxed_local())
    })
}
