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
  /** Machine-readable reason: a Kubernetes `Status.reason` (`NotFound`, `Conflict`, `Expired`, …) or a client-side one (`Invalid`, `Network`, `Timeout`, `Aborted`, `Decode`). */
  readonly reason: string;
  /** The decoded `Status` object when the server sent one. */
  readonly status?: unknown;
  /** For selector and option errors: the character offset of the problem. */
  readonly position?: number;
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
