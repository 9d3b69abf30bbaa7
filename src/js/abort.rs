//! Per-call cancellation: the `signal` option (an `AbortSignal`, as `fetch`
//! takes one) of one-shot requests and of `waitForSync` — what a Go caller
//! does with a context it cancels.
//!
//! The signal is read through its members (`aborted`, `reason`,
//! `addEventListener`), not checked with `instanceof`, so that a signal made
//! in another realm (a test environment's own globals) works too.

use std::future::Future;

use futures::channel::oneshot;
use futures::future::{select, Either};
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::error::KubeErrorInit;
use super::options;

/// An `AbortSignal` given to one call.
#[derive(Clone)]
pub struct Signal(JsValue);

/// The `signal` member of `opts`: `None` when absent (or `undefined`/`null`),
/// `Invalid` when it is not an `AbortSignal`.
pub fn signal_option(opts: &JsValue) -> Result<Option<Signal>, KubeErrorInit> {
    let Some(v) = options::prop(opts, "signal") else {
        return Ok(None);
    };
    let member = |name: &str| Reflect::get(&v, &JsValue::from_str(name)).ok();
    let looks_right = v.is_object()
        && member("aborted").is_some_and(|a| a.as_bool().is_some())
        && member("addEventListener").is_some_and(|f| f.is_function())
        && member("removeEventListener").is_some_and(|f| f.is_function());
    if !looks_right {
        return Err(KubeErrorInit::invalid(
            "option `signal` must be an AbortSignal",
        ));
    }
    Ok(Some(Signal(v)))
}

/// The `signal` option of a one-shot request: an already aborted one fails
/// the call at once, before any request (its promise rejects with the
/// `Aborted` error).
pub fn request_signal(opts: &JsValue) -> Result<Option<Signal>, JsValue> {
    match signal_option(opts)? {
        Some(s) if s.aborted() => Err(s.error()),
        s => Ok(s),
    }
}

impl Signal {
    /// Whether the signal has aborted.
    pub fn aborted(&self) -> bool {
        Reflect::get(&self.0, &JsValue::from_str("aborted"))
            .ok()
            .and_then(|a| a.as_bool())
            .unwrap_or(false)
    }

    /// What a request cancelled by this signal rejects with: a `KubeError`
    /// with reason `Aborted` (client-go returns the context's error), its
    /// message naming the signal's reason, which is also its `cause`.
    pub fn error(&self) -> JsValue {
        let reason = Reflect::get(&self.0, &JsValue::from_str("reason"))
            .ok()
            .filter(|r| !r.is_undefined());
        let message = match &reason {
            Some(r) => format!("request aborted by its signal: {}", options::thrown_text(r)),
            None => "request aborted by its signal".to_owned(),
        };
        let err = KubeErrorInit {
            message,
            reason: "Aborted".into(),
            ..Default::default()
        }
        .into_js();
        if let Some(r) = reason {
            // A fresh error object: setting a member cannot fail.
            let _ = Reflect::set(&err, &JsValue::from_str("cause"), &r);
        }
        err
    }

    /// Resolves once the signal aborts (at once if it has). The listener it
    /// adds is removed when the future completes or is dropped, so a signal
    /// that outlives many calls collects none.
    pub fn until_aborted(&self) -> impl Future<Output = ()> + 'static {
        let target = self.0.clone();
        let already = self.aborted();
        async move {
            if already {
                return;
            }
            let Some((listener, rx)) = Listener::add(&target) else {
                // A signal whose addEventListener throws cannot abort the call.
                return futures::future::pending().await;
            };
            let _ = rx.await;
            drop(listener);
        }
    }
}

/// An `abort` listener, removed when dropped.
struct Listener {
    target: JsValue,
    callback: Function,
    _closure: Closure<dyn FnMut()>,
}

impl Listener {
    fn add(target: &JsValue) -> Option<(Listener, oneshot::Receiver<()>)> {
        let (tx, rx) = oneshot::channel();
        let mut tx = Some(tx);
        let closure = Closure::<dyn FnMut()>::new(move || {
            if let Some(tx) = tx.take() {
                let _ = tx.send(());
            }
        });
        let callback: Function = closure.as_ref().unchecked_ref::<Function>().clone();
        let add: Function = Reflect::get(target, &JsValue::from_str("addEventListener"))
            .ok()?
            .dyn_into()
            .ok()?;
        let opts = Object::new();
        let _ = Reflect::set(&opts, &JsValue::from_str("once"), &JsValue::TRUE);
        add.call3(target, &JsValue::from_str("abort"), &callback, &opts)
            .ok()?;
        Some((
            Listener {
                target: target.clone(),
                callback,
                _closure: closure,
            },
            rx,
        ))
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(remove) = Reflect::get(&self.target, &JsValue::from_str("removeEventListener"))
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
        {
            let _ = remove.call2(&self.target, &JsValue::from_str("abort"), &self.callback);
        }
    }
}

/// `work`, unless `signal` aborts first: then `work` is dropped, and with it
/// the request in flight (the transport aborts it) or the wait before a
/// retry, and the call rejects with [`Signal::error`].
pub async fn unless_aborted<F>(signal: Option<Signal>, work: F) -> Result<JsValue, JsValue>
where
    F: Future<Output = Result<JsValue, JsValue>>,
{
    let Some(signal) = signal else {
        return work.await;
    };
    match select(Box::pin(work), Box::pin(signal.until_aborted())).await {
        Either::Left((r, _)) => r,
        Either::Right(_) => Err(signal.error()),
    }
}

/// What ended a pending read of a watch or a log before it completed.
pub enum Cut {
    /// `return()` (or `break` in `for await`): the iteration ends quietly.
    Returned,
    /// The `signal` aborted: the read rejects with [`Signal::error`].
    Aborted,
}

/// `op`, unless `return()` notifies `stop` or `signal` aborts first; either
/// drops `op`, and with it the request it holds.
pub async fn unless_cut<T>(
    op: impl Future<Output = T>,
    stop: &crate::rt::Notify,
    signal: Option<&Signal>,
) -> Result<T, Cut> {
    let returned = stop.notified();
    let aborted: futures::future::LocalBoxFuture<'static, ()> = match signal {
        Some(s) => Box::pin(s.until_aborted()),
        None => Box::pin(futures::future::pending()),
    };
    match select(Box::pin(op), select(returned, aborted)).await {
        Either::Left((v, _)) => Ok(v),
        Either::Right((Either::Left(_), _)) => Err(Cut::Returned),
        Either::Right((Either::Right(_), _)) => Err(Cut::Aborted),
    }
}

/// The options of `waitForSync` (client-go's `WaitForCacheSync(stopCh)`):
/// `{ signal, timeoutMs }`. Returns what ends the wait early, if anything:
/// the signal aborting or the time running out. Anything but an options
/// object, and members it does not know, are refused, so that a timeout
/// passed as a number is not silently ignored.
pub fn sync_wait_limit(
    opts: Option<JsValue>,
) -> Result<Option<futures::future::LocalBoxFuture<'static, ()>>, JsValue> {
    let Some(opts) = opts.filter(|o| !o.is_undefined() && !o.is_null()) else {
        return Ok(None);
    };
    if !opts.is_object() || opts.is_function() || js_sys::Array::is_array(&opts) {
        return Err(KubeErrorInit::invalid(format!(
            "waitForSync takes an options object ({{ signal, timeoutMs }}), not {}",
            options::thrown_text(&opts)
        ))
        .into());
    }
    options::known_members(&opts, &["signal", "timeoutMs"], "waitForSync")?;
    let signal = signal_option(&opts)?;
    // 0 is no limit, as the client's `timeoutMs` reads it.
    let timeout = options::number_or_infinity(&opts, "timeoutMs")?
        .filter(|ms| ms.is_finite() && *ms > 0.0)
        .map(options::millis);
    let stop: futures::future::LocalBoxFuture<'static, ()> = match (signal, timeout) {
        (None, None) => return Ok(None),
        (Some(s), None) => Box::pin(s.until_aborted()),
        (None, Some(t)) => crate::rt::real_clock().sleep(t),
        (Some(s), Some(t)) => {
            let aborted = s.until_aborted();
            let timer = crate::rt::real_clock().sleep(t);
            Box::pin(async move {
                select(Box::pin(aborted), timer).await;
            })
        }
    };
    Ok(Some(stop))
}

/// The promise of a `waitForSync`: what `wait()` resolves to, or `false`
/// once the limits of `opts` end the wait first (see `sync_wait_limit`,
/// which refuses a bad `opts` before anything waits).
pub fn sync_wait_promise<F>(opts: Option<JsValue>, wait: impl FnOnce() -> F) -> js_sys::Promise
where
    F: Future<Output = bool> + 'static,
{
    match sync_wait_limit(opts) {
        Err(e) => js_sys::Promise::reject(&e),
        Ok(stop) => {
            let wait = wait();
            super::promise::future_to_promise(async move {
                Ok(sync_wait_until(wait, stop).await.into())
            })
        }
    }
}

/// `wait` (a sync wait's result), or `false` once `stop` fires first.
async fn sync_wait_until<F>(
    wait: F,
    stop: Option<futures::future::LocalBoxFuture<'static, ()>>,
) -> bool
where
    F: Future<Output = bool>,
{
    let Some(stop) = stop else {
        return wait.await;
    };
    match select(Box::pin(wait), stop).await {
        Either::Left((synced, _)) => synced,
        Either::Right(_) => false,
    }
}
