//! `KubeClient` and `ResourceClient`: the REST client for JS — configuration,
//! CRUD on any resource, and watches as async iterables.

use std::cell::RefCell;
use std::rc::Rc;

use futures::StreamExt;
use js_sys::{Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::abort::{request_signal, signal_option, unless_aborted, unless_cut, Cut, Signal};
use super::error::{from_rest, KubeErrorInit};
use super::object::to_js_owned;
use super::options::{self, millis};
use super::promise::{future_to_promise, rejecting};
use super::selector::label_selector_query;
use crate::api::{Api, Deleted, Discovery};
use crate::rest::{
    Cause, Client, Config, CredentialsMode, DeleteParams, Error, ListParams, ObjectList,
    PatchParams, PatchType, PostParams, Preconditions, PropagationPolicy, RateLimit, Request,
    Status, WatchEvent, WatchParams, WatchStream, WatchTransportMode,
};

#[wasm_bindgen(typescript_custom_section)]
const CLIENT_TS: &'static str = r#"
/** Object metadata as the API server sends it. */
export interface ObjectMeta {
  name: string;
  namespace?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  generation?: number | undefined;
  creationTimestamp?: string | undefined;
  deletionTimestamp?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[] | undefined;
  [field: string]: unknown;
}

/**
 * Any Kubernetes object. Bring precise typings (e.g. `kubernetes-types`' `Pod`, or an interface of your own) through
 * the generic parameters: any object type fits them, and `Pod & KubeObject` also types `metadata.name` as present,
 * as it is in every object the server sends.
 */
export interface KubeObject {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** How to reach and authenticate to the API server. */
export interface ClientOptions {
  /** Base URL, may carry a path prefix (`http://127.0.0.1:8001`, `https://dash.example/k8s`); an absolute path (`/k8s`) is resolved against the page. `//host` and `/\host` are refused: a browser sends them, with the token, to another host. */
  server: string;
  /** A fixed bearer token. */
  token?: string | undefined;
  /**
   * Called before every request for a fresh bearer token (token rotation). One that throws or
   * rejects fails the request unsent with reason `Credentials` (an informer tries again after its backoff).
   */
  tokenProvider?: (() => Promise<string> | string) | undefined;
  /** Headers sent with every request (e.g. `Impersonate-User`). */
  headers?: Record<string, string> | undefined;
  /** `fetch` credentials mode; `include` for cookie-authenticated proxies. */
  credentials?: 'omit' | 'same-origin' | 'include' | undefined;
  /**
   * How long a call may take, in ms (default 60,000), retries and the waits between them included (client-go's
   * `Timeout`): a retry whose wait would end past it is not made, and the call fails with the error that called
   * for it; a try still waiting at the end fails with `Timeout`. It covers a whole response, but a list's body
   * only until it begins: a list that keeps arriving is never cut off, one that stalls for this long between
   * parts fails with `Timeout`. 0 or `Infinity`: no limit (a WebSocket handshake still gets 30 s; a
   * `tokenProvider` then gets as long as it takes). Watches have it until their response begins, then their own
   * idle limit; a log's body has none (as client-go's `Stream`): `return()` ends it.
   */
  timeoutMs?: number | undefined;
  /**
   * Client-side rate limit in requests per second (default 20; watches are exempt). As client-go's
   * `QPS`: 0 keeps the default, a negative value or `Infinity` turns throttling off.
   */
  qps?: number | undefined;
  /** Requests the rate limit lets through at once (default 50; 0 keeps the default). */
  burst?: number | undefined;
  /** At most this many requests waiting for response headers at once (edge runtimes allow six); the rest queue. */
  maxInFlight?: number | undefined;
  /** Retries (default 10), all within `timeoutMs`: of reads on 429/5xx/network errors (not on a connection refused, or a server name that did not resolve, where the transport tells: the Node transport and Node's `fetch` do, a browser's `fetch` does not, so there those are retried too); of writes only when the server asked (a 429, or a 5xx, with `Retry-After` or the `Status`'s `details.retryAfterSeconds`, which a page can read where a cross-origin response hides the header), as client-go does. An informer's list and watch are retried by the informer instead, with its backoff, so that its `status` and `error` listeners show a failure as it happens. */
  maxRetries?: number | undefined;
  /** Longest accepted (non-watch) response body in bytes (default 512 MiB, at least 1024, `Infinity` for no limit); a longer one fails with reason `ResponseTooLarge`. */
  maxResponseBytes?: number | undefined;
  /** What carries watches: `auto` (default) uses `fetch`, and in a browser page or worker sends watches beyond `fetchWatchesPerOrigin` on an HTTP/1.1 origin over WebSocket (browsers allow six connections per origin); `fetch` or `websocket` force one. */
  watchTransport?: 'auto' | 'fetch' | 'websocket' | undefined;
  /** With `watchTransport: 'auto'`, at most this many fetch watches per HTTP/1.1 origin (default 4). */
  fetchWatchesPerOrigin?: number | undefined;
  /** What carries the requests: `fetch` (the default in browsers, workers and edge runtimes), `node` (`node:http`/`node:https`, the default of the package's Node entry), or your own `Transport`. */
  transport?: 'fetch' | 'node' | Transport | undefined;
  /**
   * Your own `fetch` for every request (custom auth or tracing, an mTLS-capable `fetch` in Node, a service
   * binding in workerd: `(input, init) => env.API.fetch(input, init)`). Called with `this` undefined; it gets
   * the URL and a `RequestInit` with `method`, `headers`, `body`, `credentials` and an abort `signal`, and must
   * resolve to a `Response` whose `body` is a `ReadableStream`. Watches then never use WebSocket (it would go
   * around your `fetch`). Not together with a `transport` other than `'fetch'`.
   */
  fetch?: ((input: string, init: RequestInit) => Promise<Response>) | undefined;
  /** TLS settings for an `https` server; Node transport only. */
  tls?: TlsOptions | undefined;
  /**
   * API server warnings (`Warning` headers: deprecated APIs and fields, admission webhooks), each distinct
   * text once per client, as kubectl shows them. Default: `console.warn('Warning: ' + text)`; `false` ignores them.
   */
  onWarning?: (((warning: ApiWarning) => void) | false) | undefined;
}

/** Which resource a `ResourceClient` addresses. */
export interface ResourceRef {
  /** API group; empty or absent for the core group. */
  group?: string | undefined;
  version: string;
  /** Plural resource name, e.g. `pods`, `deployments`, `widgets`. */
  resource?: string | undefined;
  /** Instead of `resource`: a built-in kind (`Pod`, `Deployment`); for CRDs resolve with `client.resourceFor`. */
  kind?: string | undefined;
  /** Namespace; absent for cluster-scoped resources or all namespaces. Ignored for a cluster-scoped resource. */
  namespace?: string | undefined;
  /**
   * Whether the resource is namespaced. Known for built-in resources and in
   * what `client.resourceFor` returns (spread it in); otherwise assumed
   * `true`, so give `namespaced: false` for a cluster-scoped custom resource.
   * A namespaced resource needs a namespace (here or per call) for `get`,
   * `create`, `replace`, `patch` and `delete`; a cluster-scoped one ignores it.
   */
  namespaced?: boolean | undefined;
}

/** Options of `deleteCollection`: which objects, and how they are deleted. */
export interface DeleteCollectionOptions extends DeleteOptions {
  /** Delete in this namespace instead of the client's (`''`, every namespace, is refused for a namespaced resource: the API server deletes collections one namespace at a time). */
  namespace?: string | undefined;
  /** A selector string, or an API `LabelSelector` object. */
  labelSelector?: string | LabelSelectorObject | undefined;
  fieldSelector?: string | undefined;
}

/** Options of `get`. */
export interface GetOptions {
  /** Read this subresource of the object (`status`, `scale`) instead of the object. */
  subresource?: string | undefined;
  /**
   * `'0'`: any version the server has at hand (its watch cache), as client-go's `GetOptions.ResourceVersion`;
   * unset reads the latest.
   */
  resourceVersion?: string | undefined;
  /**
   * Cancels the call: the request in flight is aborted, a wait before a retry ends, and the promise rejects
   * with a `KubeError` whose reason is `Aborted` (its `cause` is the signal's reason). Already aborted: it
   * rejects at once, without a request. `AbortSignal.timeout(ms)` gives a call its own deadline.
   */
  signal?: AbortSignal | undefined;
}

/** Options of a list call. */
export interface ListOptions {
  /** List in this namespace instead of the client's; `''` lists every namespace (client-go's `NamespaceAll`). */
  namespace?: string | undefined;
  /** A selector string, or an API `LabelSelector` object such as a Deployment's `spec.selector`. */
  labelSelector?: string | LabelSelectorObject | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  resourceVersion?: string | undefined;
  /** How `resourceVersion` applies: `NotOlderThan` or `Exact` (the server's rules). */
  resourceVersionMatch?: 'NotOlderThan' | 'Exact' | undefined;
  /**
   * Cancels the call: the request in flight is aborted, a wait before a retry ends, and the promise rejects
   * with a `KubeError` whose reason is `Aborted` (its `cause` is the signal's reason). Already aborted: it
   * rejects at once, without a request. `AbortSignal.timeout(ms)` gives a call its own deadline.
   */
  signal?: AbortSignal | undefined;
}

/** One page of a list. */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
  /** Items left out of `items` because they are not valid objects (e.g. bad metadata): their key, as far as known, and why. */
  invalid?: { key: string; message: string }[];
}

/** Options of a watch. */
export interface WatchOptions {
  /** Watch this namespace instead of the client's; `''` watches every namespace (client-go's `NamespaceAll`). */
  namespace?: string | undefined;
  /** A selector string, or an API `LabelSelector` object such as a Deployment's `spec.selector`. */
  labelSelector?: string | LabelSelectorObject | undefined;
  fieldSelector?: string | undefined;
  resourceVersion?: string | undefined;
  allowWatchBookmarks?: boolean | undefined;
  /**
   * Start with the current objects as `ADDED` events, ended by a bookmark with the
   * `k8s.io/initial-events-end` annotation (a watch-list; bookmarks are asked for with it).
   */
  sendInitialEvents?: boolean | undefined;
  timeoutSeconds?: number | undefined;
  /**
   * Ends the watch: the request is aborted and the pending (or next) `next()` rejects with a `KubeError` whose
   * reason is `Aborted` (its `cause` is the signal's reason); later calls report `done`. Already aborted: the
   * first `next()` rejects, without a request. `return()` (or `break`) ends it quietly instead.
   */
  signal?: AbortSignal | undefined;
}

/**
 * One watch event: a change with its object, or a bookmark, which carries only the version to resume from (and,
 * ending a watch's initial events, the `k8s.io/initial-events-end` annotation). An `ERROR` event ends the iteration
 * with a `KubeError`.
 */
export type WatchEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T } | { type: 'BOOKMARK'; object: WatchBookmark };

/** The object of a `BOOKMARK` event. */
export interface WatchBookmark {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion: string; annotations?: Record<string, string> };
}

/** `T` without the members `K` (unlike `Omit`, it keeps the named members of a type with an index signature). */
type Without<T, K> = { [P in keyof T as P extends K ? never : P]: T[P] };

/**
 * `T`'s named members without its index signatures: an interface (as `kubernetes-types` declares its objects) has
 * none, so it is assignable to this where it is not to `T`.
 */
type Named<T> = { [P in keyof T as string extends P ? never : number extends P ? never : symbol extends P ? never : P]: T[P] };

/** The type of `T`'s `metadata`, present. */
type MetaOf<T> = T extends { metadata?: infer M } ? Exclude<M, undefined> : never;

/** What `create` takes: an object whose name may be left to the server through `metadata.generateName`. */
export type NewObject<T extends object = KubeObject> = Without<T, 'metadata'> & {
  metadata: Without<MetaOf<T>, 'name'> & { name?: string | undefined; generateName?: string | undefined };
};

/**
 * What `create` and `replace` also take: a `T` as a typed variable holds it, e.g. a `kubernetes-types` `ConfigMap`
 * for a client of `ConfigMap & KubeObject`, or a client-node `V1Pod` for an untyped client. Index signatures are
 * dropped (an interface has none), `metadata` and its `name` may be absent (as `kubernetes-types` declares them;
 * `replace` without a name rejects with `Invalid`), and the timestamps the server sets are not checked (client-node
 * types them as `Date`, which is sent as its JSON string).
 */
export type ObjectInput<T extends object = KubeObject> = Named<Without<T, 'metadata'>> & {
  metadata?: (Named<Without<MetaOf<T>, 'name' | 'generateName' | 'creationTimestamp' | 'deletionTimestamp'>> & {
    name?: string | undefined;
    generateName?: string | undefined;
  }) | undefined;
};

/** Options of writes. */
export interface WriteOptions {
  /** Ask the server to check the write without persisting it: `true`, or the API's own `['All']`. Anything else is refused. */
  dryRun?: boolean | ['All'] | [] | undefined;
  fieldManager?: string | undefined;
  force?: boolean | undefined;
  /**
   * For `replace` and `patch`: write this subresource of the object, e.g.
   * `'status'` (client-go's `UpdateStatus`; a write to the object itself
   * leaves a resource's status as it was) or `'scale'`.
   */
  subresource?: string | undefined;
  /**
   * Cancels the call: the request in flight is aborted, a wait before a retry ends, and the promise rejects
   * with a `KubeError` whose reason is `Aborted` (its `cause` is the signal's reason). Already aborted: it
   * rejects at once, without a request. `AbortSignal.timeout(ms)` gives a call its own deadline.
   */
  signal?: AbortSignal | undefined;
}

export type PatchKind = 'merge' | 'strategic' | 'json' | 'apply';

/** Options of a delete. */
export interface DeleteOptions {
  /** `v1` or `meta.k8s.io/v1`, as a `kubernetes-types` `V1DeleteOptions` carries it (optional; another is refused). */
  apiVersion?: string | undefined;
  /** `DeleteOptions`, as a `kubernetes-types` `V1DeleteOptions` carries it (optional; another is refused). */
  kind?: string | undefined;
  /**
   * Ask the server to check the delete without deleting: `true`, or the API's own `['All']` (`[]`: no). Typed as
   * `kubernetes-types` types it; another array is refused.
   */
  dryRun?: boolean | readonly string[] | undefined;
  /** Seconds the object may take to terminate (0: at once). */
  gracePeriodSeconds?: number | undefined;
  /**
   * What happens to dependents: the server's default for the resource when absent. Any string fits, as
   * `kubernetes-types` types it; one other than these three is refused.
   */
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground' | (string & {}) | undefined;
  /**
   * Delete only if the object still has this `uid` and/or `resourceVersion`;
   * otherwise the promise rejects with a 409 `Conflict` and nothing is deleted
   * (client-go's `DeleteOptions.Preconditions`).
   */
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
  /**
   * Cancels the call: the request in flight is aborted, a wait before a retry ends, and the promise rejects
   * with a `KubeError` whose reason is `Aborted` (its `cause` is the signal's reason). Already aborted: it
   * rejects at once, without a request. `AbortSignal.timeout(ms)` gives a call its own deadline.
   */
  signal?: AbortSignal | undefined;
}

/** The API server's `Status` object, e.g. what `delete` resolves with when the object was deleted at once. */
export interface Status {
  kind: 'Status';
  apiVersion?: string;
  /** A 410 `Expired` answer to a paginated list carries, in `continue`, a token that goes on with the list at the current state (inconsistent with its first pages). */
  metadata?: { resourceVersion?: string; continue?: string };
  /** `Success` or `Failure`. */
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  /** The object concerned: `name`, `group`, `kind` (the API server puts the plural resource name here) and `uid`. */
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: { reason?: string; message?: string; field?: string }[]; retryAfterSeconds?: number };
  code?: number;
}
"#;

/// The REST client: configuration shared by every resource client.
#[wasm_bindgen]
pub struct KubeClient {
    client: Client,
    discovery: Discovery,
}

impl KubeClient {
    /// The underlying Rust client (for informers).
    pub fn inner(&self) -> &Client {
        &self.client
    }

    /// The client's discovery cache (shared by its clones).
    pub fn discovery(&self) -> &Discovery {
        &self.discovery
    }
}

/// `server` is a path on the page's origin (`/k8s`, resolved by the host
/// per request) or an http(s) URL the host can parse, so a typo fails here
/// rather than as a network error on every request. (An empty one is
/// refused by the client's config with its own message.)
fn check_server(server: &str) -> Result<(), KubeErrorInit> {
    if server.is_empty() || server.starts_with('/') {
        return Ok(());
    }
    match web_sys::Url::new(server) {
        Ok(u) if matches!(u.protocol().as_str(), "http:" | "https:") => Ok(()),
        Ok(u) => Err(KubeErrorInit::invalid(format!(
            "option `server` must be an http or https URL, not {}",
            u.protocol()
        ))),
        Err(_) => Err(KubeErrorInit::invalid(format!(
            "option `server` is not a valid URL: {server:?}"
        ))),
    }
}

/// `ClientOptions`' members.
const CLIENT_OPTIONS: &[&str] = &[
    "server",
    "token",
    "tokenProvider",
    "headers",
    "credentials",
    "timeoutMs",
    "qps",
    "burst",
    "maxInFlight",
    "maxRetries",
    "maxResponseBytes",
    "watchTransport",
    "fetchWatchesPerOrigin",
    "transport",
    "fetch",
    "tls",
    "onWarning",
];

/// `ResourceRef`'s members, and those of `ApiResourceInfo` (what
/// `resourceFor` returns is spread into it).
const RESOURCE_REF: &[&str] = &[
    "group",
    "version",
    "resource",
    "kind",
    "namespace",
    "namespaced",
    "singular",
    "verbs",
    "shortNames",
    "subresources",
    "preferred",
];

// The one-shot requests' options take an abort `signal` too.

/// `GetOptions`' members.
const GET_OPTIONS: &[&str] = &["subresource", "resourceVersion", "signal"];

/// `ListOptions`' members.
const LIST_OPTIONS: &[&str] = &[
    "namespace",
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "resourceVersion",
    "resourceVersionMatch",
    "signal",
];

/// `WatchOptions`' members.
const WATCH_OPTIONS: &[&str] = &[
    "namespace",
    "labelSelector",
    "fieldSelector",
    "resourceVersion",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "timeoutSeconds",
    "signal",
];

/// `WriteOptions`' members.
const WRITE_OPTIONS: &[&str] = &["dryRun", "fieldManager", "force", "subresource", "signal"];

/// `DeleteOptions`' members.
const DELETE_OPTIONS: &[&str] = &[
    "apiVersion",
    "kind",
    "dryRun",
    "gracePeriodSeconds",
    "propagationPolicy",
    "preconditions",
    "signal",
];

/// `DeleteCollectionOptions`' members: `DeleteOptions`' and the selection.
const DELETE_COLLECTION_OPTIONS: &[&str] = &[
    "apiVersion",
    "kind",
    "dryRun",
    "gracePeriodSeconds",
    "propagationPolicy",
    "preconditions",
    "signal",
    "namespace",
    "labelSelector",
    "fieldSelector",
];

fn config_from_js(opts: &JsValue) -> Result<Config, KubeErrorInit> {
    options::known_members(opts, CLIENT_OPTIONS, "client")?;
    let server = options::string(opts, "server")?.unwrap_or_default();
    check_server(&server)?;
    let mut config = Config::new(server);
    if let Some(t) = options::string(opts, "token")? {
        config = config.bearer_token(t);
    }
    if let Some(provider) = options::function(opts, "tokenProvider")? {
        let provider = Rc::new(provider);
        config = config.token_provider(move || {
            let provider = provider.clone();
            async move {
                // A provider that fails is an identity provider out of
                // reach for now, not a bad config: the request fails and
                // an informer tries again after its backoff.
                let failed = |how: &str, e: JsValue| {
                    Error::credentials(format!("tokenProvider {how}: {}", options::thrown_text(&e)))
                        .with_cause(Cause::new(e))
                };
                let mut v = provider
                    .call0(&JsValue::NULL)
                    .map_err(|e| failed("threw", e))?;
                if let Some(p) = v.dyn_ref::<Promise>() {
                    v = JsFuture::from(p.clone())
                        .await
                        .map_err(|e| failed("rejected", e))?;
                }
                v.as_string()
                    .ok_or_else(|| Error::invalid_config("tokenProvider must return a string"))
            }
        });
    }
    if let Some(h) = options::prop(opts, "headers") {
        let entries = Object::entries(h.unchecked_ref());
        for e in entries.iter() {
            let k = Reflect::get_u32(&e, 0).ok().and_then(|v| v.as_string());
            let v = Reflect::get_u32(&e, 1).ok().and_then(|v| v.as_string());
            match (k, v) {
                (Some(k), Some(v)) => config = config.header(k, v),
                _ => {
                    return Err(KubeErrorInit::invalid(
                        "option `headers` must map strings to strings",
                    ))
                }
            }
        }
    }
    config.credentials = match options::string(opts, "credentials")?.as_deref() {
        None | Some("same-origin") => CredentialsMode::SameOrigin,
        Some("omit") => CredentialsMode::Omit,
        Some("include") => CredentialsMode::Include,
        Some(other) => {
            return Err(KubeErrorInit::invalid(format!(
                "option `credentials` must be omit, same-origin or include, not {other:?}"
            )))
        }
    };
    // 0 and Infinity turn the limit off, as a zero `Timeout` does in client-go.
    match options::number_or_infinity(opts, "timeoutMs")? {
        Some(ms) if ms == 0.0 || ms.is_infinite() => config.timeout = None,
        Some(ms) => config.timeout = Some(millis(ms.max(1.0))),
        None => {}
    }
    // As client-go's `QPS`: 0 keeps the default, a negative value (or
    // Infinity) turns client-side throttling off.
    let d = RateLimit::default();
    config.rate_limit =
        options::token_bucket(opts, d.qps, d.burst)?.map(|(qps, burst)| RateLimit { qps, burst });
    if let Some(n) = options::number(opts, "maxInFlight")? {
        config.max_in_flight = Some(n.clamp(1.0, 1e6) as usize);
    }
    if let Some(n) = options::number(opts, "maxRetries")? {
        config.max_retries = n.min(1000.0) as u32;
    }
    if let Some(n) = options::number_or_infinity(opts, "maxResponseBytes")? {
        if n < 1024.0 {
            return Err(KubeErrorInit::invalid(
                "option `maxResponseBytes` must be at least 1024",
            ));
        }
        // Saturates at usize::MAX (4 GiB in wasm), which no body reaches.
        config.max_response_bytes = n as usize;
    }
    config.watch_transport = match options::string(opts, "watchTransport")?.as_deref() {
        None | Some("auto") => WatchTransportMode::Auto,
        Some("fetch") => WatchTransportMode::Fetch,
        Some("websocket") => WatchTransportMode::WebSocket,
        Some(other) => {
            return Err(KubeErrorInit::invalid(format!(
                "option `watchTransport` must be auto, fetch or websocket, not {other:?}"
            )))
        }
    };
    if let Some(n) = options::number(opts, "fetchWatchesPerOrigin")? {
        config.fetch_watches_per_origin = n.clamp(0.0, 1e6) as usize;
    }
    config.warning_handler = super::warnings::from_options(opts)?;
    Ok(config)
}

#[wasm_bindgen]
impl KubeClient {
    /// Create a client. Throws `KubeError` (reason `Invalid`) on bad options.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "ClientOptions")] opts: JsValue,
    ) -> Result<KubeClient, JsValue> {
        let config = config_from_js(&opts)?;
        let transport = super::transport::from_options(&opts)?;
        let client = Client::with_transport(config, transport, crate::rt::real_clock())
            .map_err(|e| from_rest(&e))?;
        let discovery = Discovery::new(client.clone());
        Ok(KubeClient { client, discovery })
    }

    /// A client for one resource (any group/version/resource, CRDs
    /// included), in `namespace` or across all namespaces. A namespaced
    /// resource needs a namespace (here or per call) for the verbs on one
    /// object and for create; a cluster-scoped one ignores it.
    #[wasm_bindgen(unchecked_return_type = "ResourceClient")]
    pub fn resource(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ResourceRef")] r: JsValue,
    ) -> Result<ResourceClient, JsValue> {
        options::known_members(&r, RESOURCE_REF, "resource")?;
        let resource = super::discovery::api_resource(&r)?;
        let namespace = options::string(&r, "namespace")?.unwrap_or_default();
        Ok(ResourceClient {
            api: Api::namespaced(self.client.clone(), resource, &namespace),
        })
    }
}

/// CRUD and watch on one resource through its handle ([`Api`]), so the
/// scope rules are the Rust API's. Objects are plain JSON objects owned by
/// the caller (mutable: read, modify, `replace`).
#[wasm_bindgen]
pub struct ResourceClient {
    api: Api,
}

impl ResourceClient {
    /// A collection verb's scope: the options' namespace, `""` for every
    /// namespace (client-go's `NamespaceAll`), else the client's.
    fn collection(&self, namespace: Option<&str>) -> Api {
        match namespace {
            Some("") => self.api.all_namespaces(),
            Some(ns) => self.api.in_namespace(ns),
            None => self.api.clone(),
        }
    }

    /// The handle for one call: `namespace` when given, else the client's.
    fn scoped(&self, namespace: Option<&str>) -> Api {
        match namespace.filter(|n| !n.is_empty()) {
            Some(ns) => self.api.in_namespace(ns),
            None => self.api.clone(),
        }
    }

    /// Create (`POST` to the collection) or replace (`PUT` to the object
    /// named by `metadata.name`) with the object as the body; the namespace
    /// comes from `metadata.namespace` or the client's.
    fn write(&self, replace: bool, obj: &JsValue, opts: &JsValue) -> Result<Promise, JsValue> {
        let WriteParams {
            dry_run,
            field_manager,
            subresource,
            ..
        } = write_params(opts)?;
        if !replace && !subresource.is_empty() {
            return Err(KubeErrorInit::invalid(
                "option `subresource` applies to replace and patch, not create",
            )
            .into());
        }
        if !is_plain_object(obj) {
            return Err(KubeErrorInit::invalid("the object to write must be an object").into());
        }
        let meta = options::prop(obj, "metadata");
        let field = |k: &str| {
            meta.as_ref()
                .and_then(|m| options::string(m, k).ok().flatten())
        };
        let api = self.scoped(field("namespace").as_deref());
        let name = if replace {
            field("name").ok_or_else(|| KubeErrorInit::invalid("metadata.name is required"))?
        } else {
            String::new()
        };
        let body = json_body(obj)?;
        let params = PostParams {
            dry_run,
            field_manager,
        };
        let signal = request_signal(opts)?;
        Ok(future_to_promise(unless_aborted(signal, async move {
            let o = if replace {
                api.replace_json(&name, &subresource, body, &params).await
            } else {
                api.create_json(body, &params).await
            };
            o.map(|o| to_js_owned(&o)).map_err(|e| from_rest(&e))
        })))
    }
}

fn delete_params(opts: &JsValue) -> Result<DeleteParams, KubeErrorInit> {
    // A `kubernetes-types` `V1DeleteOptions` carries its type: taken when it
    // names this type, refused when it names another (another object passed
    // by mistake).
    if let Some(kind) = options::string(opts, "kind")? {
        if kind != "DeleteOptions" {
            return Err(KubeErrorInit::invalid(format!(
                "option `kind` must be DeleteOptions, not {kind:?}"
            )));
        }
    }
    if let Some(v) = options::string(opts, "apiVersion")? {
        if !matches!(v.as_str(), "v1" | "meta.k8s.io/v1") {
            return Err(KubeErrorInit::invalid(format!(
                "option `apiVersion` of DeleteOptions must be v1 or meta.k8s.io/v1, not {v:?}"
            )));
        }
    }
    let propagation_policy = match options::string(opts, "propagationPolicy")?.as_deref() {
        None => None,
        Some("Orphan") => Some(PropagationPolicy::Orphan),
        Some("Background") => Some(PropagationPolicy::Background),
        Some("Foreground") => Some(PropagationPolicy::Foreground),
        Some(other) => {
            return Err(KubeErrorInit::invalid(format!(
                "option `propagationPolicy` must be Orphan, Background or Foreground, not {other:?}"
            )))
        }
    };
    Ok(DeleteParams {
        propagation_policy,
        grace_period_seconds: options::number(opts, "gracePeriodSeconds")?
            .map(|n| n.min(u32::MAX as f64) as u32),
        dry_run: options::dry_run(opts)?,
        preconditions: match options::prop(opts, "preconditions") {
            None => None,
            Some(p) if p.is_object() => Some(Preconditions {
                uid: options::known_members(&p, &["uid", "resourceVersion"], "preconditions")
                    .and_then(|()| options::string(&p, "uid"))?,
                resource_version: options::string(&p, "resourceVersion")?,
            }),
            Some(_) => {
                return Err(KubeErrorInit::invalid(
                    "option `preconditions` must be an object ({ uid, resourceVersion })",
                ))
            }
        },
    })
}

/// The options of a write ([`WriteOptions`] in the typings).
struct WriteParams {
    dry_run: bool,
    field_manager: Option<String>,
    force: bool,
    /// Empty for the object itself.
    subresource: String,
}

fn write_params(opts: &JsValue) -> Result<WriteParams, KubeErrorInit> {
    options::known_members(opts, WRITE_OPTIONS, "write")?;
    let subresource = options::string(opts, "subresource")?.unwrap_or_default();
    Ok(WriteParams {
        dry_run: options::dry_run(opts)?,
        field_manager: options::string(opts, "fieldManager")?,
        force: options::flag(opts, "force", false)?,
        subresource,
    })
}

/// An object that is not an array (nor `null`).
fn is_plain_object(v: &JsValue) -> bool {
    v.is_object() && !js_sys::Array::is_array(v)
}

/// The JSON text of a JS value (`JSON.stringify`'s output is always valid
/// JSON), passed through to the request body as is.
fn json_body(value: &JsValue) -> Result<Vec<u8>, KubeErrorInit> {
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .map(String::into_bytes)
        .ok_or_else(|| KubeErrorInit::invalid("the object could not be serialized to JSON"))
}

#[wasm_bindgen]
impl ResourceClient {
    /// Get one object by name, in `namespace` or the client's; with
    /// `{ subresource: 'status' | 'scale' }`, that subresource of it
    /// (client-go's `Get` with subresources).
    #[wasm_bindgen(unchecked_return_type = "Promise<KubeObject>")]
    pub fn get(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string | null")] namespace: Option<JsValue>,
        #[wasm_bindgen(unchecked_optional_param_type = "GetOptions")] opts: Option<JsValue>,
    ) -> Promise {
        rejecting((|| {
            let name = options::string_arg(&name, "name")?;
            let namespace = options::opt_string_arg(&namespace.unwrap_or_default(), "namespace")?;
            let opts = opts.unwrap_or_default();
            options::known_members(&opts, GET_OPTIONS, "get")?;
            let sub = options::string(&opts, "subresource")?.unwrap_or_default();
            let rv = options::string(&opts, "resourceVersion")?;
            let api = self.scoped(namespace.as_deref());
            let signal = request_signal(&opts)?;
            Ok(future_to_promise(unless_aborted(signal, async move {
                let o = api
                    .get_at(&name, &sub, rv.as_deref())
                    .await
                    .map_err(|e| from_rest(&e))?;
                Ok(to_js_owned(&o))
            })))
        })())
    }

    /// List one page (or everything when no `limit` is given), in the
    /// options' `namespace` or the client's.
    #[wasm_bindgen(unchecked_return_type = "Promise<ListResult<KubeObject>>")]
    pub fn list(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ListOptions")] opts: JsValue,
    ) -> Promise {
        rejecting((|| {
            options::known_members(&opts, LIST_OPTIONS, "list")?;
            let p = ListParams {
                label_selector: label_selector_query(&opts, "labelSelector")?,
                field_selector: options::string(&opts, "fieldSelector")?,
                limit: options::whole_number(&opts, "limit", u32::MAX)?,
                continue_token: options::string(&opts, "continue")?,
                resource_version: options::string(&opts, "resourceVersion")?,
                resource_version_match: options::string(&opts, "resourceVersionMatch")?,
                ..Default::default()
            };
            let namespace = options::string(&opts, "namespace")?;
            let api = self.collection(namespace.as_deref());
            let signal = request_signal(&opts)?;
            Ok(future_to_promise(unless_aborted(signal, async move {
                let list = api.list(&p).await.map_err(|e| from_rest(&e))?;
                Ok(list_to_js(&list))
            })))
        })())
    }

    /// Create an object.
    #[wasm_bindgen(unchecked_return_type = "Promise<KubeObject>")]
    pub fn create(
        &self,
        #[wasm_bindgen(unchecked_param_type = "NewObject")] obj: JsValue,
        #[wasm_bindgen(unchecked_param_type = "WriteOptions")] opts: JsValue,
    ) -> Promise {
        rejecting(self.write(false, &obj, &opts))
    }

    /// Replace an object (optimistic concurrency through `metadata.resourceVersion`).
    #[wasm_bindgen(unchecked_return_type = "Promise<KubeObject>")]
    pub fn replace(
        &self,
        #[wasm_bindgen(unchecked_param_type = "KubeObject")] obj: JsValue,
        #[wasm_bindgen(unchecked_param_type = "WriteOptions")] opts: JsValue,
    ) -> Promise {
        rejecting(self.write(true, &obj, &opts))
    }

    /// Patch an object (in `namespace` or the client's): `merge`,
    /// `strategic`, `json` (a JSON Patch array) or `apply` (server-side
    /// apply; needs `fieldManager`).
    #[wasm_bindgen(unchecked_return_type = "Promise<KubeObject>")]
    pub fn patch(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | null | undefined")] namespace: JsValue,
        #[wasm_bindgen(unchecked_param_type = "object")] patch: JsValue,
        #[wasm_bindgen(unchecked_param_type = "PatchKind")] kind: JsValue,
        #[wasm_bindgen(unchecked_param_type = "WriteOptions")] opts: JsValue,
    ) -> Promise {
        rejecting((|| {
            let name = options::string_arg(&name, "name")?;
            let namespace = options::opt_string_arg(&namespace, "namespace")?;
            let kind = options::string_arg(&kind, "kind")?;
            let kind = match kind.as_str() {
                "merge" => PatchType::Merge,
                "strategic" => PatchType::Strategic,
                "json" => PatchType::Json,
                "apply" => PatchType::Apply,
                other => {
                    return Err(KubeErrorInit::invalid(format!(
                        "patch type must be merge, strategic, json or apply, not {other:?}"
                    ))
                    .into())
                }
            };
            let WriteParams {
                dry_run,
                field_manager,
                force,
                subresource,
            } = write_params(&opts)?;
            // What the server would refuse anyway, refused before a request.
            let ok = match kind {
                PatchType::Json => js_sys::Array::is_array(&patch),
                _ => is_plain_object(&patch),
            };
            if !ok {
                let want = if kind == PatchType::Json {
                    "a JSON Patch must be an array of operations"
                } else {
                    "the patch must be an object"
                };
                return Err(KubeErrorInit::invalid(want).into());
            }
            let body = json_body(&patch)?;
            let params = PatchParams {
                dry_run,
                field_manager,
                force,
            };
            let api = self.scoped(namespace.as_deref());
            let signal = request_signal(&opts)?;
            Ok(future_to_promise(unless_aborted(signal, async move {
                let o = api
                    .patch_json(&name, &subresource, body, kind, &params)
                    .await
                    .map_err(|e| from_rest(&e))?;
                Ok(to_js_owned(&o))
            })))
        })())
    }

    /// Delete an object (in `namespace` or the client's). Resolves with the
    /// object while its deletion is pending, or as the server returned it
    /// (pods, persistent volumes and claims, namespaces), and with a
    /// `Status` (`kind: 'Status'`, `status: 'Success'`) when it was deleted
    /// at once; `isStatus` tells them apart.
    #[wasm_bindgen(
        unchecked_return_type = "Promise<KubeObject | Status>",
        js_name = "delete"
    )]
    pub fn delete_(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | null | undefined")] namespace: JsValue,
        #[wasm_bindgen(unchecked_param_type = "DeleteOptions")] opts: JsValue,
    ) -> Promise {
        rejecting((|| {
            let name = options::string_arg(&name, "name")?;
            let namespace = options::opt_string_arg(&namespace, "namespace")?;
            options::known_members(&opts, DELETE_OPTIONS, "delete")?;
            let params = delete_params(&opts)?;
            let api = self.scoped(namespace.as_deref());
            let signal = request_signal(&opts)?;
            Ok(future_to_promise(unless_aborted(signal, async move {
                match api.delete(&name, &params).await {
                    Ok(Deleted::Object(o)) => Ok(to_js_owned(&o)),
                    Ok(Deleted::Status(s)) => status_to_js(&s),
                    Err(e) => Err(from_rest(&e)),
                }
            })))
        })())
    }

    /// Delete every object matching the options' selectors, in their
    /// `namespace` or the client's (a namespaced resource needs one: the API
    /// server deletes collections in one namespace only): client-go's
    /// `DeleteCollection`. Resolves with what the server deleted, or was
    /// deleting, as a list.
    #[wasm_bindgen(
        js_name = deleteCollection,
        unchecked_return_type = "Promise<ListResult<KubeObject>>"
    )]
    pub fn delete_collection(
        &self,
        #[wasm_bindgen(unchecked_param_type = "DeleteCollectionOptions")] opts: JsValue,
    ) -> Promise {
        rejecting((|| {
            options::known_members(&opts, DELETE_COLLECTION_OPTIONS, "deleteCollection")?;
            let list = ListParams {
                label_selector: label_selector_query(&opts, "labelSelector")?,
                field_selector: options::string(&opts, "fieldSelector")?,
                ..Default::default()
            };
            let params = delete_params(&opts)?;
            let namespace = options::string(&opts, "namespace")?;
            let api = self.collection(namespace.as_deref());
            let signal = request_signal(&opts)?;
            Ok(future_to_promise(unless_aborted(signal, async move {
                let deleted = api
                    .delete_collection(&list, &params)
                    .await
                    .map_err(|e| from_rest(&e))?;
                Ok(list_to_js(&deleted))
            })))
        })())
    }

    /// Watch changes as an async iterable of events. Breaking out of the loop
    /// (or calling `return()`) aborts the request, and so does the options'
    /// `signal` (the pending `next()` rejects with `Aborted`); `transport`
    /// tells what carries it once the first event was asked for.
    #[wasm_bindgen(
        unchecked_return_type = "AsyncIterableIterator<WatchEvent<KubeObject>> & { readonly transport: WatchCarrier | undefined; return(): Promise<IteratorResult<WatchEvent<KubeObject>, undefined>> }"
    )]
    pub fn watch(
        &self,
        #[wasm_bindgen(unchecked_param_type = "WatchOptions")] opts: JsValue,
    ) -> Result<JsValue, JsValue> {
        options::known_members(&opts, WATCH_OPTIONS, "watch")?;
        let flag = |name: &str| options::flag(&opts, name, false);
        let send_initial_events = flag("sendInitialEvents")?;
        let p = WatchParams {
            label_selector: label_selector_query(&opts, "labelSelector")?,
            field_selector: options::string(&opts, "fieldSelector")?,
            resource_version: options::string(&opts, "resourceVersion")?,
            // A watch-list: the API server requires both with it.
            resource_version_match: send_initial_events.then(|| "NotOlderThan".to_owned()),
            send_initial_events: send_initial_events.then_some(true),
            allow_watch_bookmarks: flag("allowWatchBookmarks")? || send_initial_events,
            timeout_seconds: options::whole_number(&opts, "timeoutSeconds", u32::MAX)?,
        };
        let namespace = options::string(&opts, "namespace")?;
        let req = self
            .collection(namespace.as_deref())
            .collection_request(Request::get())
            .watch_params(&p);
        let iter = WatchIterator {
            client: self.api.client().clone(),
            req: Rc::new(req),
            stream: Rc::new(RefCell::new(None)),
            done: Rc::new(std::cell::Cell::new(false)),
            transport: Rc::new(RefCell::new(None)),
            stop: crate::rt::Notify::new(),
            signal: signal_option(&opts)?,
        };
        Ok(async_iterable(iter.into()))
    }
}

/// A list as `list` resolves with it ([`ListResult`] in the typings).
fn list_to_js(list: &ObjectList) -> JsValue {
    let items: js_sys::Array = list.items.iter().map(to_js_owned).collect();
    let out = Object::new();
    let _ = Reflect::set(&out, &"items".into(), &items);
    let _ = Reflect::set(
        &out,
        &"resourceVersion".into(),
        &JsValue::from_str(&list.resource_version),
    );
    if let Some(c) = &list.continue_token {
        let _ = Reflect::set(&out, &"continue".into(), &JsValue::from_str(c));
    }
    if !list.invalid.is_empty() {
        // Items that are not objects the client can hold: reported, not dropped silently.
        let bad: js_sys::Array = list
            .invalid
            .iter()
            .map(|(key, e)| -> JsValue {
                let o = Object::new();
                let _ = Reflect::set(&o, &"key".into(), &key.into());
                let _ = Reflect::set(&o, &"message".into(), &e.to_string().into());
                o.into()
            })
            .collect();
        let _ = Reflect::set(&out, &"invalid".into(), &bad);
    }
    if let Some(n) = list.remaining_item_count {
        let _ = Reflect::set(
            &out,
            &"remainingItemCount".into(),
            &JsValue::from_f64(n as f64),
        );
    }
    out.into()
}

/// A `Status` as a plain JS object, shaped as the server sends it.
fn status_to_js(s: &Status) -> Result<JsValue, JsValue> {
    Ok(super::error::status_object(s, &Default::default()).into())
}

/// Whether a value is a `Status` object (`kind: 'Status'`), such as what
/// `ResourceClient.delete` resolves with when the object was deleted at once.
#[wasm_bindgen(js_name = isStatus, unchecked_return_type = "value is Status")]
pub fn is_status(value: &JsValue) -> bool {
    options::string(value, "kind")
        .ok()
        .flatten()
        .is_some_and(|k| k == "Status")
}

#[wasm_bindgen(module = "/src/js/objects.js")]
extern "C" {
    #[wasm_bindgen(js_name = asyncIterable)]
    fn async_iterable(it: JsValue) -> JsValue;
}

/// A watch as an async iterator: `for await (const ev of watch) …`.
#[wasm_bindgen]
pub struct WatchIterator {
    client: Client,
    req: Rc<Request>,
    stream: Rc<RefCell<Option<WatchStream>>>,
    done: Rc<std::cell::Cell<bool>>,
    transport: Rc<RefCell<Option<String>>>,
    /// Notified by `return()`: a pending `next()` ends and drops its request.
    stop: crate::rt::Notify,
    /// The `signal` option: aborting it ends the watch with an `Aborted` error.
    signal: Option<Signal>,
}

fn iter_result(value: JsValue, done: bool) -> JsValue {
    let o = Object::new();
    let _ = Reflect::set(&o, &"value".into(), &value);
    let _ = Reflect::set(&o, &"done".into(), &JsValue::from_bool(done));
    o.into()
}

#[wasm_bindgen]
impl WatchIterator {
    /// The next event; `done` when the server closed the watch.
    #[wasm_bindgen(
        unchecked_return_type = "Promise<IteratorResult<WatchEvent<KubeObject>, undefined>>"
    )]
    pub fn next(&self) -> Promise {
        let (client, req, stream, done, transport, stop, signal) = (
            self.client.clone(),
            self.req.clone(),
            self.stream.clone(),
            self.done.clone(),
            self.transport.clone(),
            self.stop.clone(),
            self.signal.clone(),
        );
        future_to_promise(async move {
            if done.get() {
                return Ok(iter_result(JsValue::UNDEFINED, true));
            }
            // Ends the watch for good; what the pending read resolves or rejects with.
            let cut = |how: Cut| {
                done.set(true);
                stream.borrow_mut().take();
                match (how, &signal) {
                    (Cut::Aborted, Some(s)) => Err(s.error()),
                    _ => Ok(iter_result(JsValue::UNDEFINED, true)),
                }
            };
            if signal.as_ref().is_some_and(Signal::aborted) {
                return cut(Cut::Aborted);
            }
            if stream.borrow().is_none() {
                let opened = match unless_cut(client.watch(&req), &stop, signal.as_ref()).await {
                    Ok(opened) => opened,
                    Err(how) => return cut(how),
                };
                let s = opened.map_err(|e| from_rest(&e))?;
                *transport.borrow_mut() = s.transport().map(|t| t.carrier().to_owned());
                if done.get() {
                    return Ok(iter_result(JsValue::UNDEFINED, true));
                }
                *stream.borrow_mut() = Some(s);
            }
            // Take the stream out while awaiting so `return()` can run meanwhile.
            let Some(mut s) = stream.borrow_mut().take() else {
                return Ok(iter_result(JsValue::UNDEFINED, true));
            };
            let item = match unless_cut(s.next(), &stop, signal.as_ref()).await {
                Ok(item) => item,
                // `s` goes, and its request with it.
                Err(how) => return cut(how),
            };
            match item {
                None => {
                    done.set(true);
                    Ok(iter_result(JsValue::UNDEFINED, true))
                }
                Some(Err(e)) => {
                    done.set(true);
                    Err(from_rest(&e))
                }
                Some(Ok(WatchEvent::Error(status))) => {
                    done.set(true);
                    Err(from_rest(&Error::from_status(status)))
                }
                Some(Ok(ev)) => {
                    let o = Object::new();
                    let _ = Reflect::set(&o, &"type".into(), &ev.type_name().into());
                    let obj = ev.object().map(to_js_owned).unwrap_or(JsValue::NULL);
                    let _ = Reflect::set(&o, &"object".into(), &obj);
                    if !done.get() {
                        *stream.borrow_mut() = Some(s);
                    }
                    Ok(iter_result(o.into(), false))
                }
            }
        })
    }

    /// What carries the watch once the first `next()` opened it (see
    /// `WatchCarrier` and `ClientOptions.watchTransport`).
    #[wasm_bindgen(getter, unchecked_return_type = "WatchCarrier | undefined")]
    pub fn transport(&self) -> JsValue {
        self.transport
            .borrow()
            .as_deref()
            .map_or(JsValue::UNDEFINED, JsValue::from_str)
    }

    /// Stop watching: aborts the request (also called by `break` in `for await`).
    #[wasm_bindgen(
        js_name = "return",
        unchecked_return_type = "Promise<IteratorResult<WatchEvent<KubeObject>, undefined>>"
    )]
    pub fn return_(&self) -> Promise {
        self.done.set(true);
        // Dropping the stream aborts its fetch; a pending `next()` drops the
        // one it holds (or the request still opening).
        self.stream.borrow_mut().take();
        self.stop.notify_waiters();
        Promise::resolve(&iter_result(JsValue::UNDEFINED, true))
    }
}
