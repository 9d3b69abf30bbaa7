//! [`Transport`] over a JavaScript object (wasm32 only): the seam through
//! which the package's Node entry plugs in its `node:http`/`node:https`
//! transport, and through which a user can bring any other.
//!
//! The object has one method, `request(req)`, returning (a promise of) a
//! response `{ status, headers, read() }`. `read()` returns the next body
//! chunk (a `Uint8Array`), `null` at the end, or a promise of either; a
//! transport that has a chunk buffered returns it directly, so a busy stream
//! costs no promise per chunk. Reading is pulled by Rust, one chunk at a
//! time: a transport stops reading its socket while chunks wait unread, which
//! is how a slow consumer holds the server back.
//!
//! Cancellation: every request carries an `AbortSignal` that is aborted when
//! the send future or the body is dropped before the end, as with `fetch`.
use futures::future::LocalBoxFuture;
use futures::StreamExt;
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortController;

use super::config::CredentialsMode;
use super::transport::{BodyStream, HttpRequest, HttpResponse, Transport};
use super::{Cause, Error};

/// A transport implemented in JavaScript: `{ request(req) }` (see the module
/// docs for the protocol).
#[derive(Debug, Clone)]
pub struct JsTransport {
    target: JsValue,
    request: Function,
}

impl JsTransport {
    /// Wrap a JS object with a `request` method; `None` if it has none.
    pub fn new(target: JsValue) -> Option<Self> {
        let request = Reflect::get(&target, &JsValue::from_str("request"))
            .ok()?
            .dyn_into::<Function>()
            .ok()?;
        Some(JsTransport { target, request })
    }
}

/// Aborts its controller when dropped, unless the exchange finished.
struct AbortGuard(Option<AbortController>);

impl Drop for AbortGuard {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.abort();
        }
    }
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn set(o: &Object, key: &str, value: &JsValue) {
    // Setting a fresh plain object's property cannot fail.
    let _ = Reflect::set(o, &JsValue::from_str(key), value);
}

/// A transport's failure as a client error: `AbortError` → aborted; one
/// marked `retryable: false` (a TLS certificate the client does not trust)
/// → refused, reported at once; one whose `code` says no connection was
/// made (`ECONNREFUSED`, `ENOTFOUND`, …) → a network error the client does
/// not retry; anything else → network error, which the client retries.
fn classify(v: JsValue) -> Error {
    if get(&v, "name").as_string().as_deref() == Some("AbortError") {
        return Error::Aborted;
    }
    let mut msg = match get(&v, "message").as_string() {
        Some(m) => m,
        None => v.as_string().unwrap_or_else(|| format!("{v:?}")),
    };
    let code = get(&v, "code").as_string();
    if let Some(code) = &code {
        if !msg.contains(code.as_str()) {
            msg = if msg.is_empty() {
                code.clone()
            } else {
                format!("{msg} ({code})")
            };
        }
    }
    if get(&v, "reason").as_string().as_deref() == Some("Credentials") {
        // A credential source of the transport's own (a kubeconfig's exec
        // plugin) failed: as a `tokenProvider` that throws.
        let msg = msg.strip_prefix("getting credentials: ").unwrap_or(&msg);
        Error::credentials(msg).with_cause(Cause::new(v))
    } else if get(&v, "retryable").as_bool() == Some(false) {
        Error::Refused { message: msg }
    } else if code
        .as_deref()
        .is_some_and(super::transport::is_unreachable_code)
    {
        Error::unreachable(msg).with_cause(Cause::new(v))
    } else {
        Error::network(msg).with_cause(Cause::new(v))
    }
}

fn request_object(req: &HttpRequest, signal: &JsValue) -> Object {
    let r = Object::new();
    set(&r, "method", &JsValue::from_str(req.method.as_str()));
    set(&r, "url", &JsValue::from_str(&req.url));
    let headers = Object::new();
    for (k, v) in &req.headers {
        set(&headers, k, &JsValue::from_str(v));
    }
    set(&r, "headers", &headers);
    if let Some(body) = &req.body {
        set(&r, "body", &Uint8Array::from(&body[..]));
    }
    set(&r, "watch", &JsValue::from_bool(req.is_watch));
    let credentials = match req.credentials {
        CredentialsMode::SameOrigin => "same-origin",
        CredentialsMode::Omit => "omit",
        CredentialsMode::Include => "include",
    };
    set(&r, "credentials", &JsValue::from_str(credentials));
    set(&r, "signal", signal);
    r
}

/// Response headers from `{ name: value | value[] }` (Node's shape).
fn headers_of(v: &JsValue) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if !v.is_object() {
        return out;
    }
    for entry in Object::entries(v.unchecked_ref()).iter() {
        let pair = Array::from(&entry);
        let Some(name) = pair.get(0).as_string() else {
            continue;
        };
        let value = pair.get(1);
        let value = if Array::is_array(&value) {
            Array::from(&value)
                .iter()
                .filter_map(|s| s.as_string())
                .collect::<Vec<_>>()
                .join(", ")
        } else if let Some(s) = value.as_string() {
            s
        } else {
            continue;
        };
        out.push((name.to_ascii_lowercase(), value));
    }
    out
}

async fn send(target: JsValue, request: Function, req: HttpRequest) -> Result<HttpResponse, Error> {
    let controller = AbortController::new()
        .map_err(|e| Error::network(format!("AbortController: {}", classify(e))))?;
    let guard = AbortGuard(Some(controller.clone()));
    let r = request_object(&req, &controller.signal());
    let p = request.call1(&target, &r).map_err(classify)?;
    let resp = JsFuture::from(Promise::resolve(&p))
        .await
        .map_err(classify)?;
    let status = get(&resp, "status")
        .as_f64()
        .filter(|s| (100.0..=999.0).contains(s) && s.fract() == 0.0)
        .ok_or_else(|| Error::network("transport response has no valid `status`"))?
        as u16;
    let headers = headers_of(&get(&resp, "headers"));
    let read: Function = get(&resp, "read")
        .dyn_into()
        .map_err(|_| Error::network("transport response has no `read` method"))?;
    Ok(HttpResponse {
        status,
        headers,
        body: body_stream(resp, read, guard),
    })
}

/// A chunk, the end (`None`), or a wrong value.
fn chunk_of(v: JsValue) -> Result<Option<Vec<u8>>, Error> {
    if v.is_null() || v.is_undefined() {
        return Ok(None);
    }
    // Copied now: a transport may reuse the chunk's buffer for its next read.
    match bytes_of(&v) {
        Some(bytes) => Ok(Some(bytes)),
        None => Err(Error::network("transport body chunk is not a Uint8Array")),
    }
}

/// The bytes of a `Uint8Array`, copied, also one made in another realm
/// (a test environment such as jsdom gives the page its own globals, so
/// Node's buffers fail `instanceof Uint8Array` there).
pub(super) fn bytes_of(v: &JsValue) -> Option<Vec<u8>> {
    if let Some(a) = v.dyn_ref::<Uint8Array>() {
        return Some(a.to_vec());
    }
    if !js_sys::ArrayBuffer::is_view(v) {
        return None;
    }
    let whole = |key| {
        get(v, key)
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 0.0)
    };
    let (offset, len) = (whole("byteOffset")?, whole("byteLength")?);
    if offset > f64::from(u32::MAX) || len > f64::from(u32::MAX) {
        return None;
    }
    if len == 0.0 {
        // Also what a detached buffer's view reports: nothing to view.
        return Some(Vec::new());
    }
    // Constructed through `Reflect` so that a view whose members lie gives
    // an error here rather than an exception through the module.
    let args = js_sys::Array::of3(&get(v, "buffer"), &offset.into(), &len.into());
    let ctor = Uint8Array::new_with_length(0).constructor();
    let view = js_sys::Reflect::construct(&ctor, &args).ok()?;
    Some(view.unchecked_into::<Uint8Array>().to_vec())
}

fn body_stream(resp: JsValue, read: Function, guard: AbortGuard) -> BodyStream {
    // The guard lives in the stream state: dropping the stream aborts.
    futures::stream::unfold(Some((resp, read, guard)), |state| async move {
        let (resp, read, mut guard) = state?;
        let mut v = match read.call0(&resp) {
            Ok(v) => v,
            Err(e) => return Some((Err(classify(e)), None)),
        };
        // A buffered chunk comes back as is; otherwise a promise of one.
        if !(v.is_null() || v.is_undefined() || v.is_instance_of::<Uint8Array>()) {
            v = match JsFuture::from(Promise::resolve(&v)).await {
                Ok(v) => v,
                Err(e) => return Some((Err(classify(e)), None)),
            };
        }
        match chunk_of(v) {
            Ok(Some(chunk)) => Some((Ok(chunk), Some((resp, read, guard)))),
            Ok(None) => {
                // Finished: nothing left to abort.
                guard.0 = None;
                None
            }
            Err(e) => Some((Err(e), None)),
        }
    })
    .boxed_local()
}

impl Transport for JsTransport {
    fn send(&self, req: HttpRequest) -> LocalBoxFuture<'static, Result<HttpResponse, Error>> {
        Box::pin(send(self.target.clone(), self.request.clone(), req))
    }

    // The object's own `name` (the Node entry's is `node`).
    fn name(&self) -> String {
        get(&self.target, "name")
            .as_string()
            .filter(|n| !n.is_empty() && n.len() <= 64)
            .unwrap_or_else(|| "custom".to_owned())
    }
}
