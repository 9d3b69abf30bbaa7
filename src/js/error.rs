use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/kube_error.js")]
extern "C" {
    #[wasm_bindgen(js_name = makeKubeError)]
    fn make_kube_error(
        message: &str,
        code: u16,
        reason: &str,
        status: JsValue,
        position: Option<u32>,
    ) -> JsValue;
}

#[wasm_bindgen(typescript_custom_section)]
const KUBE_ERROR_TS: &'static str = r#"
/** Every error kubewasm throws or rejects with. */
export declare class KubeError extends Error {
  /** HTTP status code from the API server (0 for client-side errors). */
  readonly code: number;
  /** Machine-readable reason: a Kubernetes `Status.reason` (`NotFound`, `Conflict`, `Expired`, …) or a client-side one (`Invalid`, `Network`, `Timeout`, `Aborted`, `Decode`, `Credentials` when a `tokenProvider` or a kubeconfig's credential plugin failed, `LineTooLong`, `ResponseTooLarge`, `Poisoned` after a panic or trap: every later call fails too; `OptionsConflict` when an informer's scope is asked for again with other cache options, or an index name is given another function (client-go's indexer conflict); `TransformFailed` and `IndexFailed` for an object an informer skipped because its `transform` or an index function threw or returned something unusable). */
  readonly reason: string;
  /** The decoded `Status` object when the server sent one. */
  readonly status?: Status | undefined;
  /** For selector and option errors: the character offset of the problem. */
  readonly position?: number;
  /**
   * What lies under the error, when the platform gave one: for `Network` the transport's own error (Node's, with
   * its `code` such as `ECONNREFUSED`), for `Credentials` what the token provider threw, for `Aborted` the
   * signal's reason.
   */
  readonly cause?: unknown;
}
"#;

/// The fields of a `KubeError` (built on the Rust side, thrown on the JS side).
#[derive(Debug, Clone, Default)]
pub struct KubeErrorInit {
    /// Human-readable message.
    pub message: String,
    /// HTTP status code, 0 for client-side errors.
    pub code: u16,
    /// Machine-readable reason.
    pub reason: String,
    /// Offset into the offending input, for parse errors.
    pub position: Option<u32>,
    /// The server's `Status` object, if any.
    pub status: Option<JsValue>,
}

impl KubeErrorInit {
    /// A client-side error for a bad argument.
    pub fn invalid(message: impl Into<String>) -> Self {
        KubeErrorInit {
            message: message.into(),
            reason: "Invalid".into(),
            ..Default::default()
        }
    }

    /// The JS `KubeError` instance.
    pub fn into_js(self) -> JsValue {
        make_kube_error(
            &self.message,
            self.code,
            &self.reason,
            self.status.unwrap_or(JsValue::UNDEFINED),
            self.position,
        )
    }
}

impl From<KubeErrorInit> for JsValue {
    fn from(e: KubeErrorInit) -> JsValue {
        e.into_js()
    }
}

/// The `KubeError` for a REST-layer error.
pub fn from_rest(e: &crate::rest::Error) -> JsValue {
    use crate::rest::Error as E;
    let code = e.code().unwrap_or(0);
    let reason = e.reported_reason().to_string();
    let status = match e {
        E::Api(a) if a.is_status => Some(
            status_object(
                &crate::rest::Status {
                    status: "Failure".into(),
                    message: a.message.clone(),
                    reason: a.reason.clone(),
                    details: a.details.clone(),
                    code: a.code,
                },
                &a.metadata,
            )
            .into(),
        ),
        _ => None,
    };
    let err = KubeErrorInit {
        message: e.to_string(),
        code,
        reason,
        position: None,
        status,
    }
    .into_js();
    // The platform's own error (Node's with its `code`), as `fetch` hands it on.
    if let Some(cause) = e.cause().map(|c| c.value()) {
        // A fresh error object: setting a member cannot fail.
        let _ = js_sys::Reflect::set(&err, &JsValue::from_str("cause"), cause);
    }
    err
}

/// A `Status` as a plain JS object with the members its JSON has, in the
/// same order (`kind`, `apiVersion` and `metadata` always, so `isStatus`
/// knows it; empty strings, absent details and no causes left out; `code`
/// always present).
pub(crate) fn status_object(
    s: &crate::rest::Status,
    meta: &crate::rest::StatusMeta,
) -> js_sys::Object {
    use js_sys::{Array, Object, Reflect};
    let set = |o: &Object, key: &str, v: &JsValue| {
        let _ = Reflect::set(o, &JsValue::from_str(key), v);
    };
    let text = |o: &Object, key: &str, v: &str| {
        if !v.is_empty() {
            set(o, key, &JsValue::from_str(v));
        }
    };
    let o = Object::new();
    set(&o, "kind", &JsValue::from_str("Status"));
    set(&o, "apiVersion", &JsValue::from_str("v1"));
    let metadata = Object::new();
    text(&metadata, "resourceVersion", &meta.resource_version);
    text(&metadata, "continue", &meta.continue_token);
    set(&o, "metadata", &metadata);
    text(&o, "status", &s.status);
    text(&o, "message", &s.message);
    text(&o, "reason", &s.reason);
    if let Some(d) = &s.details {
        let details = Object::new();
        text(&details, "name", &d.name);
        text(&details, "group", &d.group);
        text(&details, "kind", &d.kind);
        text(&details, "uid", &d.uid);
        if !d.causes.is_empty() {
            let causes = Array::new();
            for c in &d.causes {
                let cause = Object::new();
                text(&cause, "reason", &c.reason);
                text(&cause, "message", &c.message);
                text(&cause, "field", &c.field);
                causes.push(&cause);
            }
            set(&details, "causes", &causes);
        }
        if let Some(secs) = d.retry_after_seconds {
            set(&details, "retryAfterSeconds", &JsValue::from(secs));
        }
        set(&o, "details", &details);
    }
    set(&o, "code", &JsValue::from(s.code));
    o
}
