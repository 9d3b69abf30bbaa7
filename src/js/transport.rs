//! Which transport a `KubeClient` uses: `fetch` (the default of the web and
//! bundler entries; the global one or the `fetch` option's), or a JS object
//! implementing `Transport` — the Node entry passes its
//! `node:http`/`node:https` one (pkg-template/node.js).

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::error::KubeErrorInit;
use super::options;
use crate::rest::{FetchTransport, JsTransport, Transport};

#[wasm_bindgen(typescript_custom_section)]
const TRANSPORT_TS: &'static str = r#"
/** TLS settings of the Node transport (what a kubeconfig's cluster and user entries carry). */
export interface TlsOptions {
  /** CA certificates (PEM) to trust instead of Node's built-in list. */
  ca?: string | Uint8Array | (string | Uint8Array)[] | undefined;
  /** Client certificate chain (PEM), with `key`. */
  cert?: string | Uint8Array | undefined;
  /** Private key (PEM) of the client certificate. */
  key?: string | Uint8Array | undefined;
  /** Server name for SNI and certificate verification, when it differs from the URL's host (kubeconfig `tls-server-name`). */
  serverName?: string | undefined;
  /** Accept any server certificate. Never for production: anyone on the path can read and change the traffic. */
  insecureSkipTlsVerify?: boolean | undefined;
}

/** One request as kubewasm hands it to a `Transport`. */
export interface TransportRequest {
  method: string;
  /** Absolute URL, query included. */
  url: string;
  /** Final headers, `Authorization` included. */
  headers: Record<string, string>;
  body?: Uint8Array;
  /** A watch: a long-lived, streamed response. */
  watch: boolean;
  /** The client's `credentials` option, for a transport built on `fetch` (the Node transport has no cookies to send). */
  credentials: 'omit' | 'same-origin' | 'include';
  /** Aborted when kubewasm drops the request or stops reading the body before its end: close the connection then. */
  signal: AbortSignal;
}

/** A response whose body kubewasm pulls chunk by chunk. */
export interface TransportResponse {
  status: number;
  /** Header names in any case; repeated headers as arrays. */
  headers: Record<string, string | string[]>;
  /**
   * The next body chunk, `null` at the end, or a promise of either. Return a buffered chunk directly (no promise).
   * kubewasm copies each chunk before it calls `read` again, so chunks may be views of one buffer used again.
   * Stop reading the connection while chunks wait unread: that is how a slow consumer holds the server back.
   * Reject with `name: 'AbortError'` after `signal` aborted, or with any error when the connection fails mid-body.
   */
  read(): Uint8Array | null | Promise<Uint8Array | null>;
}

/**
 * Carries kubewasm's HTTP exchanges. Reject `request` with an error whose `name` is `AbortError` when aborted;
 * with `retryable: false` for a failure retrying cannot fix (an untrusted certificate: reported as `KubeError`
 * reason `Invalid`); with `reason: 'Credentials'` when the credentials to send could not be had (reported with
 * that reason, not retried); any other rejection is a network error (reason `Network`), retried for idempotent
 * requests unless its `code` says no connection was made (`ECONNREFUSED`, `EHOSTUNREACH`, `ENETUNREACH`,
 * `ENOTFOUND`, `EAI_AGAIN`, `EAI_FAIL`, `EAI_NONAME`, as Node's errors carry them): a server that is down is
 * reported at once.
 */
export interface Transport {
  /** Send one request; resolve once the response headers are in. */
  request(req: TransportRequest): Promise<TransportResponse>;
  /** What an informer's `status.transport` calls the watches this transport carries (at most 64 characters; default `custom`). */
  readonly name?: string | undefined;
}

/**
 * What carries a watch: `fetch`; `websocket` once a page's fetch watches on an HTTP/1.1 origin reached the budget
 * (see the client's `watchTransport`); `node` for the Node entry's `node:http`/`node:https` transport; `worker` when
 * a tab's informers are served by the worker of `kubewasm/shared` (its `host` says which); or the `name` of a
 * transport passed as the client's `transport` (`custom` when it has none).
 */
export type WatchCarrier = 'fetch' | 'websocket' | 'node' | 'worker' | 'custom' | (string & {});
"#;

/// The transport named by the `transport` option (absent: `fetch`).
pub fn from_options(opts: &JsValue) -> Result<Rc<dyn Transport>, KubeErrorInit> {
    let transport = options::prop(opts, "transport");
    // `tls` is consumed by the Node entry when it builds its transport; left
    // here it would be silently ignored, so refuse it.
    if options::prop(opts, "tls").is_some() {
        return Err(KubeErrorInit::invalid(
            "option `tls` needs the Node transport: import the package's Node entry (`kubewasm` in Node) and leave `transport` unset or 'node'",
        ));
    }
    if let Some(f) = options::function(opts, "fetch")? {
        let named = transport.as_ref().map(JsValue::as_string);
        return match named {
            None => Ok(Rc::new(FetchTransport::with_fetch(f))),
            Some(Some(t)) if t == "fetch" => Ok(Rc::new(FetchTransport::with_fetch(f))),
            _ => Err(KubeErrorInit::invalid(
                "option `fetch` replaces the transport: leave `transport` unset or 'fetch'",
            )),
        };
    }
    match transport {
        None => Ok(Rc::new(FetchTransport::new())),
        Some(v) => match v.as_string().as_deref() {
            Some("fetch") => Ok(Rc::new(FetchTransport::new())),
            Some("node") => Err(KubeErrorInit::invalid(
                "transport 'node' is provided by the package's Node entry (`kubewasm` imported in Node)",
            )),
            Some(other) => Err(KubeErrorInit::invalid(format!(
                "option `transport` must be 'fetch', 'node' or an object with a request() method, not {other:?}"
            ))),
            None => JsTransport::new(v)
                .map(|t| Rc::new(t) as Rc<dyn Transport>)
                .ok_or_else(|| {
                    KubeErrorInit::invalid(
                        "option `transport` must be 'fetch', 'node' or an object with a request() method",
                    )
                }),
        },
    }
}
