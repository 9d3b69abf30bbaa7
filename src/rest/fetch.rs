//! [`Transport`] over the global `fetch` (wasm32 only).
//!
//! `fetch` is looked up on `globalThis`, never on `window`, so the same code
//! runs in a page, a Web Worker, Node and edge runtimes. Each request
//! gets its own `AbortController`; a guard aborts it when the send future or
//! the response body is dropped, which closes the connection (a dropped
//! watch frees its server-side watcher at once). The body is read one chunk
//! at a time (into one reused buffer where the body is a byte stream, see
//! `bodyReader` in `src/rt/host.js`), each copied once into wasm memory.
use futures::future::LocalBoxFuture;
use futures::StreamExt;
use js_sys::{Function, Reflect, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, ReadableStream, RequestCredentials, RequestInit, Response,
};

use super::config::CredentialsMode;
use super::transport::{
    BodyStream, HttpRequest, HttpResponse, SocketRequest, Transport, WatchSlot,
};
use super::{Cause, Error};

/// The `fetch`-based transport: over `globalThis.fetch`, or a `fetch` the
/// user supplies (custom auth or tracing, an mTLS-capable `fetch` in Node,
/// a service binding's `fetch` in workerd). One per client is plenty.
#[derive(Debug, Clone, Default)]
pub struct FetchTransport {
    fetch: Option<Function>,
}

impl FetchTransport {
    /// A transport over `globalThis.fetch`.
    pub fn new() -> Self {
        FetchTransport::default()
    }

    /// A transport over `fetch`, called as `fetch(url, init)` with
    /// `this` undefined (bind it if it needs a receiver, as a workerd
    /// service binding's does). It must resolve to a `Response`, or an
    /// object with its `status`, `headers` and `body` (a `ReadableStream`).
    pub fn with_fetch(fetch: Function) -> Self {
        FetchTransport { fetch: Some(fetch) }
    }
}

/// Aborts its controller when dropped (unless the exchange finished).
struct AbortGuard(Option<AbortController>);

impl Drop for AbortGuard {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.abort();
        }
    }
}

fn js_message(v: &JsValue) -> String {
    if let Some(e) = v.dyn_ref::<js_sys::Error>() {
        let msg: String = e.message().into();
        // Node reports the real cause (ECONNREFUSED, …) on `cause`.
        let cause = Reflect::get(v, &JsValue::from_str("cause"))
            .ok()
            .filter(|c| !c.is_undefined() && !c.is_null())
            .map(|c| {
                Reflect::get(&c, &JsValue::from_str("message"))
                    .ok()
                    .and_then(|m| m.as_string())
                    .unwrap_or_else(|| format!("{c:?}"))
            });
        match cause {
            Some(c) => format!("{msg} ({c})"),
            None => msg,
        }
    } else {
        v.as_string().unwrap_or_else(|| format!("{v:?}"))
    }
}

fn is_abort(v: &JsValue) -> bool {
    Reflect::get(v, &JsValue::from_str("name"))
        .ok()
        .and_then(|n| n.as_string())
        .is_some_and(|n| n == "AbortError")
}

fn classify(v: JsValue) -> Error {
    if is_abort(&v) {
        Error::Aborted
    } else if let Some(code) = untrusted_certificate(&v) {
        // Retrying cannot make the certificate trusted: reported at once.
        let msg = js_message(&v);
        let message = if msg.contains(&code) {
            format!("TLS: {msg}")
        } else {
            format!("TLS: {msg} ({code})")
        };
        Error::Refused { message }
    } else if unreachable(&v) {
        Error::unreachable(js_message(&v)).with_cause(Cause::new(v))
    } else {
        // A TypeError: a browser hides whether it was DNS, refusal or CORS,
        // so the client retries it (within its timeout).
        Error::network(js_message(&v)).with_cause(Cause::new(v))
    }
}

/// Whether a failed `fetch` says no connection was made, where the host
/// tells: Node's `fetch` puts the socket error's code (`ECONNREFUSED`,
/// `ENOTFOUND`, …) on the error's `cause`, Bun on the error; Deno has no
/// code, and says so in its cause's message; a port the host's `fetch`
/// refuses to use (Node's "bad port", Deno's "Requests to port … are
/// blocked") is never connected to either.
fn unreachable(v: &JsValue) -> bool {
    let text = |o: &JsValue, k: &str| {
        Reflect::get(o, &JsValue::from_str(k))
            .ok()
            .and_then(|c| c.as_string())
    };
    let cause = Reflect::get(v, &JsValue::from_str("cause"))
        .ok()
        .filter(|c| c.is_object());
    let mut errors = cause.iter().chain(std::iter::once(v));
    errors.any(|e| {
        text(e, "code").is_some_and(|c| super::transport::is_unreachable_code(&c))
            || text(e, "message").is_some_and(|m| never_connected(&m))
    })
}

/// The messages of hosts whose `fetch` errors carry no code for a
/// connection never made.
fn never_connected(message: &str) -> bool {
    message == "bad port"
        || (message.contains("Requests to port ") && message.ends_with(" are blocked"))
        || message.contains("client error (Connect): tcp connect error")
        || message.contains("client error (Connect): dns error")
}

/// What a failed `fetch` says of a certificate the client does not trust,
/// or one the server refused, when it says so: Node's `fetch` puts OpenSSL's
/// verification code on the error's `cause`, Bun on the error, and Deno's
/// message names an invalid peer certificate (a browser tells nothing of it).
fn untrusted_certificate(v: &JsValue) -> Option<String> {
    let field = |o: &JsValue, k: &str| {
        Reflect::get(o, &JsValue::from_str(k))
            .ok()
            .and_then(|c| c.as_string())
    };
    let cause = Reflect::get(v, &JsValue::from_str("cause"))
        .ok()
        .filter(|c| c.is_object());
    let is_cert_code = |c: &str| {
        c.contains("CERT") || c.ends_with("_CA") || c == "UNABLE_TO_VERIFY_LEAF_SIGNATURE"
    };
    let code = cause
        .as_ref()
        .and_then(|c| field(c, "code"))
        .into_iter()
        .chain(field(v, "code"))
        .find(|c| is_cert_code(c));
    if code.is_some() {
        return code;
    }
    let said =
        |o: &JsValue| field(o, "message").is_some_and(|m| m.contains("invalid peer certificate"));
    (said(v) || cause.as_ref().is_some_and(said)).then(|| "invalid peer certificate".to_owned())
}

fn js_err(what: &str, v: JsValue) -> Error {
    Error::network(format!("{what}: {}", js_message(&v)))
}

async fn send(req: HttpRequest, custom: Option<Function>) -> Result<HttpResponse, Error> {
    let global = js_sys::global();
    // The global `fetch` needs the global as `this`; a supplied one gets none.
    let (fetch, this) = match custom {
        Some(f) => (f, JsValue::UNDEFINED),
        None => (
            Reflect::get(&global, &JsValue::from_str("fetch"))
                .ok()
                .and_then(|f| f.dyn_into::<Function>().ok())
                .ok_or_else(|| Error::invalid_config("this JavaScript host has no global fetch"))?,
            global.clone().into(),
        ),
    };
    let controller = AbortController::new().map_err(|e| js_err("AbortController", e))?;
    let guard = AbortGuard(Some(controller.clone()));

    let headers = Headers::new().map_err(|e| js_err("Headers", e))?;
    for (k, v) in &req.headers {
        headers
            .append(k, v)
            .map_err(|e| Error::invalid_request(format!("header {k}: {}", js_message(&e))))?;
    }
    let init = RequestInit::new();
    init.set_method(req.method.as_str());
    init.set_headers(&headers);
    init.set_signal(Some(&controller.signal()));
    init.set_credentials(match req.credentials {
        CredentialsMode::SameOrigin => RequestCredentials::SameOrigin,
        CredentialsMode::Omit => RequestCredentials::Omit,
        CredentialsMode::Include => RequestCredentials::Include,
    });
    if let Some(body) = &req.body {
        init.set_body(&Uint8Array::from(&body[..]));
    }
    let promise = fetch
        .call2(&this, &JsValue::from_str(&req.url), &init)
        .map_err(classify)?;
    let resp = JsFuture::from(js_sys::Promise::resolve(&promise))
        .await
        .map_err(classify)?;
    let resp = as_response(resp)?;

    let mut out_headers = Vec::new();
    if let Ok(Some(iter)) = js_sys::try_iter(&resp.headers()) {
        for entry in iter.flatten() {
            let pair = js_sys::Array::from(&entry);
            if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
                out_headers.push((k, v));
            }
        }
    }
    let status = resp.status();
    let body: BodyStream = match resp.body() {
        None => futures::stream::empty().boxed_local(),
        Some(stream) => {
            let reader =
                body_reader(&stream).map_err(|_| Error::network("response body cannot be read"))?;
            body_stream(reader, guard)
        }
    };
    Ok(HttpResponse {
        status,
        headers: out_headers,
        body,
    })
}

/// A `Response`, or (from a supplied `fetch`, perhaps of another realm or
/// a polyfill) an object with a numeric `status` and a `headers` object,
/// used through the same members.
fn as_response(v: JsValue) -> Result<Response, Error> {
    if v.is_instance_of::<Response>() {
        return Ok(v.unchecked_into());
    }
    let member = |name: &str| Reflect::get(&v, &JsValue::from_str(name)).ok();
    let status_ok = member("status")
        .and_then(|s| s.as_f64())
        .is_some_and(|s| (100.0..=599.0).contains(&s));
    let headers_ok = member("headers").is_some_and(|h| h.is_object());
    // No body, or a `ReadableStream` (what `getReader` is called on).
    let body_ok = member("body").is_none_or(|b| {
        b.is_null()
            || b.is_undefined()
            || Reflect::get(&b, &JsValue::from_str("getReader")).is_ok_and(|g| g.is_function())
    });
    if !(v.is_object() && status_ok && headers_ok && body_ok) {
        return Err(Error::network(
            "fetch resolved to something that is not a Response",
        ));
    }
    Ok(v.unchecked_into())
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/rt/host.js")]
extern "C" {
    /// A response body's reader (see `bodyReader` in `src/rt/host.js`).
    type BodyReader;
    #[wasm_bindgen(js_name = bodyReader, catch)]
    fn body_reader(stream: &ReadableStream) -> Result<BodyReader, JsValue>;
    /// The next chunk, or `null` at the end.
    #[wasm_bindgen(method)]
    fn read(this: &BodyReader) -> js_sys::Promise;
}

fn body_stream(reader: BodyReader, guard: AbortGuard) -> BodyStream {
    // The guard lives in the stream state: dropping the stream aborts.
    futures::stream::unfold(Some((reader, guard)), |state| async move {
        let (reader, mut guard) = state?;
        let value = match JsFuture::from(reader.read()).await {
            Ok(r) => r,
            Err(e) => return Some((Err(classify(e)), None)),
        };
        if value.is_null() {
            // Finished: nothing left to abort.
            guard.0 = None;
            return None;
        }
        // Copied before the next read: the chunk's buffer is read into again.
        let Some(chunk) = super::js_transport::bytes_of(&value) else {
            return Some((Err(Error::network("body chunk is not a Uint8Array")), None));
        };
        Some((Ok(chunk), Some((reader, guard))))
    })
    .boxed_local()
}

impl Transport for FetchTransport {
    fn send(&self, req: HttpRequest) -> LocalBoxFuture<'static, Result<HttpResponse, Error>> {
        Box::pin(send(req, self.fetch.clone()))
    }

    // Watches over WebSocket live in websocket.rs.
    fn open_websocket(
        &self,
        req: SocketRequest,
    ) -> LocalBoxFuture<'static, Result<BodyStream, Error>> {
        super::websocket::open(req)
    }

    fn name(&self) -> String {
        "fetch".to_owned()
    }

    // A supplied `fetch` carries every request (its auth, tracing, routing);
    // a WebSocket would go around it.
    fn supports_websocket(&self) -> bool {
        self.fetch.is_none() && super::websocket::supported()
    }

    fn is_connection_limited(&self) -> bool {
        super::websocket::connection_limited()
    }

    fn origin_protocol(&self, origin: &str) -> Option<String> {
        super::websocket::origin_protocol(origin)
    }

    fn take_watch_slot(
        &self,
        origin: &str,
        budget: usize,
    ) -> LocalBoxFuture<'static, Option<Option<WatchSlot>>> {
        Box::pin(take_slot(origin.to_string(), budget))
    }
}

/// Holds a Web Lock until dropped.
struct HeldLock(std::rc::Rc<std::cell::RefCell<Option<Function>>>);

impl Drop for HeldLock {
    fn drop(&mut self) {
        let release = self.0.borrow_mut().take();
        if let Some(f) = release {
            let _ = f.call0(&JsValue::UNDEFINED);
        }
    }
}

thread_local! {
    /// A function that does nothing, for rejections nobody needs to see: one
    /// for the module, since each request's would be a closure of its own.
    static IGNORE: JsValue = Closure::<dyn Fn(JsValue)>::new(|_: JsValue| {}).into_js_value();
}

/// A slot among `budget` Web Locks named after `origin`: the browser shares
/// them with every page and worker of this site and frees a closed tab's.
async fn take_slot(origin: String, budget: usize) -> Option<Option<WatchSlot>> {
    use std::cell::RefCell;
    use std::rc::Rc;
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into())
        .ok()
        .filter(JsValue::is_object)?;
    let locks = Reflect::get(&navigator, &"locks".into())
        .ok()
        .filter(JsValue::is_object)?;
    let request: Function = Reflect::get(&locks, &"request".into())
        .ok()?
        .dyn_into()
        .ok()?;
    for i in 0..budget {
        let name = JsValue::from(format!("kubewasm fetch watch {origin} #{i}"));
        let opts = js_sys::Object::new();
        Reflect::set(&opts, &"ifAvailable".into(), &JsValue::TRUE).ok()?;
        let release: Rc<RefCell<Option<Function>>> = Rc::default();
        let (tx, rx) = futures::channel::oneshot::channel::<bool>();
        let held = release.clone();
        let mut tx = Some(tx);
        // Owned by JS (collected with the function): a `once_into_js`
        // closure keeps itself alive until it is called, and a lock request
        // that fails never calls it.
        let granted = Closure::<dyn FnMut(JsValue) -> JsValue>::new(move |lock: JsValue| {
            let got = !lock.is_null() && !lock.is_undefined();
            // Nobody waits for a lock granted after the request was given up:
            // it is let go at once (it is shared with every tab of the origin).
            let wanted = tx.take().is_some_and(|tx| tx.send(got).is_ok());
            if !got || !wanted {
                return JsValue::UNDEFINED;
            }
            // The lock is held until this promise settles: when the slot drops.
            js_sys::Promise::new(&mut |resolve, _| {
                *held.borrow_mut() = Some(resolve);
            })
            .into()
        })
        .into_js_value();
        let pending = request.call3(&locks, &name, &opts, &granted).ok()?;
        // A rejected request (no lock manager here) must not surface as unhandled.
        if let Ok(catch) =
            Reflect::get(&pending, &"catch".into()).and_then(|f| f.dyn_into::<Function>())
        {
            IGNORE.with(|ignore| catch.call1(&pending, ignore).ok());
        }
        // Held from here: a request given up after the grant lets the lock go.
        let slot = HeldLock(release);
        match rx.await {
            Ok(true) => return Some(Some(WatchSlot(Box::new(slot)))),
            Ok(false) => continue,
            Err(_) => return None,
        }
    }
    Some(None)
}
