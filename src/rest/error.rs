//! One error type for the whole client, with the Kubernetes `Status` decoded.
//!
//! client-go distinguishes API errors (a `Status` from the server, classified
//! by reason and code) from transport failures. The browser adds two kinds Go
//! does not need: [`Error::Aborted`] (the host cancelled the fetch) and
//! network failures that hide their cause (CORS, DNS and refused connections all
//! look alike to `fetch`).
use std::fmt;

use serde::{Deserialize, Serialize};

/// The longest excerpt of a bad body or line kept in an error.
const EXCERPT_MAX: usize = 120;

/// The error a platform reported under one of ours (a JS host's `Error`),
/// handed on as the `cause` of the error the caller sees. Opaque to the
/// client: it compares equal to any other cause, so errors compare by what
/// the client knows of them.
#[derive(Clone)]
pub struct Cause(std::rc::Rc<CauseValue>);

/// What a [`Cause`] holds: a JS value in wasm (only JS hosts give causes).
#[cfg(target_arch = "wasm32")]
pub type CauseValue = wasm_bindgen::JsValue;
/// What a [`Cause`] holds: a JS value in wasm (only JS hosts give causes).
#[cfg(not(target_arch = "wasm32"))]
pub type CauseValue = ();

impl Cause {
    /// Wrap a platform error.
    pub fn new(value: CauseValue) -> Self {
        Cause(std::rc::Rc::new(value))
    }

    /// The platform error.
    pub fn value(&self) -> &CauseValue {
        &self.0
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cause(..)")
    }
}

impl PartialEq for Cause {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Every failure the client reports.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The API server (or a proxy in front of it) answered with an error.
    Api(Box<ApiError>),
    /// The request never got an HTTP response (connection refused, DNS, CORS,
    /// a reset mid-body: `fetch` does not tell these apart).
    Network {
        /// What the platform reported.
        message: String,
        /// The transport could tell that no connection was made at all (it
        /// was refused, or the host name did not resolve): the client does
        /// not retry it, as client-go retries only connections lost on the
        /// way. False where the host hides the cause (a browser's `fetch`).
        unreachable: bool,
        /// The platform's own error, when there is one to hand on.
        cause: Option<Cause>,
    },
    /// No response (or, on a watch, no bytes) within the configured time.
    Timeout {
        /// What timed out.
        message: String,
    },
    /// The request was cancelled by the host (an `AbortSignal` not owned by
    /// this client, a page unloading).
    Aborted,
    /// Bytes that could not be decoded as the expected JSON.
    Decode {
        /// What went wrong.
        message: String,
        /// A short excerpt of the offending input.
        excerpt: String,
    },
    /// The [`Config`](super::Config) is unusable.
    InvalidConfig {
        /// Which setting and why.
        message: String,
    },
    /// The token provider failed (threw, rejected): the request was not
    /// sent. An identity provider that is down for a moment is not a
    /// configuration error, so this is not reported as `Invalid`; like
    /// client-go's failing exec credential plugin it fails the request, and
    /// an informer tries again after its backoff. Reason `Credentials`.
    Credentials {
        /// Which provider failed, and what it said.
        message: String,
        /// What the provider threw, when there is one to hand on.
        cause: Option<Cause>,
    },
    /// The request could not be built (bad name, unserializable body, …).
    InvalidRequest {
        /// What is wrong with it.
        message: String,
    },
    /// The transport failed in a way that retrying cannot fix (a server
    /// certificate the client does not trust, a connection closed for
    /// good): reported at once, with reason `Invalid`.
    Refused {
        /// The transport's own description.
        message: String,
    },
    /// A watch line exceeded the configured maximum line size.
    LineTooLong {
        /// The configured maximum in bytes.
        limit: usize,
    },
    /// A (non-watch) response body exceeded
    /// [`Config::max_response_bytes`](super::Config::max_response_bytes);
    /// the rest of it was not read.
    ResponseTooLarge {
        /// The configured maximum in bytes.
        limit: usize,
    },
}

/// An error answer from the API server: the decoded `Status`, or for a
/// non-`Status` body (a proxy's HTML 502) the HTTP code and a short excerpt.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ApiError {
    /// HTTP status code (for a watch `ERROR` event: the `Status.code`).
    pub code: u16,
    /// `Status.reason` (`NotFound`, `Conflict`, `Expired`, …); for a
    /// non-`Status` body, derived from the HTTP code as client-go does.
    pub reason: String,
    /// `Status.message`, or an excerpt of a non-`Status` body.
    pub message: String,
    /// `Status.details`, when the server sent them.
    pub details: Option<StatusDetails>,
    /// How long the server asked the client to wait: the `Retry-After` header,
    /// else `details.retryAfterSeconds`.
    pub retry_after_seconds: Option<u32>,
    /// Whether the body was a real `Status` object.
    pub is_status: bool,
    /// `Status.metadata`: on a 410 `Expired` answer to a paginated list, the
    /// token that continues it (at the current state, not the list's).
    pub metadata: StatusMeta,
    /// For a 404 to a list or watch, the request (`list deployments: GET
    /// /api/v1/deployments`, kubectl's "(get deployments)"): the error's
    /// text names it, while `message` stays the server's.
    pub request: Option<String>,
}

/// The Kubernetes `Status` object (`meta/v1`), as errors and watch `ERROR`
/// events carry it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// `"Success"` or `"Failure"`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Machine-readable reason (`NotFound`, `AlreadyExists`, `Conflict`,
    /// `Expired`, `Gone`, `TooManyRequests`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Extra data for the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The HTTP status code this status corresponds to (0 if unset).
    #[serde(default)]
    pub code: u16,
}

/// `Status.metadata` (a `ListMeta`): what a client needs of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatusMeta {
    /// `resourceVersion`, rarely set on a failure.
    pub resource_version: String,
    /// `continue`: the API server sets it on a 410 `Expired` answer to a
    /// paginated list, so a pager that accepts an inconsistent list can go on.
    pub continue_token: String,
}

impl StatusMeta {
    /// Whether neither member is set.
    pub fn is_empty(&self) -> bool {
        self.resource_version.is_empty() && self.continue_token.is_empty()
    }

    /// The `metadata` of a `Status` body (empty when it has none, or one
    /// that cannot be read: the error is reported either way).
    fn of(body: &[u8]) -> StatusMeta {
        super::scan::find_path(body, &["metadata"])
            .and_then(|m| {
                let mut r = super::Reader::new(m, "Status.metadata");
                r.or_null(status_meta).ok().flatten()
            })
            .unwrap_or_default()
    }
}

/// `Status.details`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// Name of the resource concerned.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// API group of the resource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// Kind (or resource) of the object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// UID of the object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// Individual causes (validation failures, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    /// Seconds the client should wait before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

/// One entry of `Status.details.causes`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCause {
    /// Machine-readable cause (`FieldValueInvalid`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The field path concerned.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// A bounded, lossy-UTF-8 excerpt of `input` (never panics on short or
/// non-UTF-8 input).
pub(crate) fn excerpt(input: &[u8]) -> String {
    let cut = input.len().min(EXCERPT_MAX);
    let mut s = String::from_utf8_lossy(input.get(..cut).unwrap_or(input)).into_owned();
    if input.len() > EXCERPT_MAX {
        s.push('…');
    }
    s
}

/// The reason client-go assigns to an HTTP code when the body is not a
/// `Status` (`NewGenericServerResponse`).
pub(crate) fn reason_for_code(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Gone",
        413 => "RequestEntityTooLarge",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        // A gateway's 502, or any other server error without a Status.
        _ if (500..600).contains(&code) => "InternalError",
        _ => "Unknown",
    }
}

impl Status {
    /// Parse a `Status` from a body; `None` unless it is a JSON object with
    /// `kind: "Status"` (a bare object with another kind is not a status).
    pub fn from_body(body: &[u8]) -> Option<Status> {
        // `kind` is read from the bytes, so only `Status` itself is decoded:
        // a flattened probe struct pulled serde's buffering deserializer
        // (about 10 KB) into the wasm module for this one check.
        if super::scan::find_path(body, &["kind"])? != b"\"Status\"" {
            return None;
        }
        Status::from_json(body).ok()
    }

    /// Read a `Status` document as Go's `encoding/json` would: unknown
    /// members skipped, `null` read as empty, a member of the wrong type (or
    /// a code out of range) an error. Read by the scan reader rather than
    /// the `serde` derive, which would bring `serde_json`'s deserializer into
    /// the wasm module for the one document every error path decodes.
    pub(crate) fn from_json(body: &[u8]) -> Result<Status, Error> {
        let mut r = super::Reader::new(body, "Status");
        let mut s = Status::default();
        r.object(|key, r| {
            match key {
                b"status" => s.status = r.string()?,
                b"message" => s.message = r.string()?,
                b"reason" => s.reason = r.string()?,
                b"code" => s.code = r.integer(0, u16::MAX.into())? as u16,
                b"details" => s.details = r.or_null(details)?,
                _ => r.skip()?,
            }
            Ok(())
        })?;
        r.end()?;
        Ok(s)
    }
}

/// `Status.metadata` at the reader.
fn status_meta(r: &mut super::Reader<'_>) -> Result<StatusMeta, Error> {
    let mut m = StatusMeta::default();
    r.object(|key, r| {
        match key {
            b"resourceVersion" => m.resource_version = r.string()?,
            b"continue" => m.continue_token = r.string()?,
            _ => r.skip()?,
        }
        Ok(())
    })?;
    Ok(m)
}

/// `Status.details` at the reader.
fn details(r: &mut super::Reader<'_>) -> Result<StatusDetails, Error> {
    let mut d = StatusDetails::default();
    r.object(|key, r| {
        match key {
            b"name" => d.name = r.string()?,
            b"group" => d.group = r.string()?,
            b"kind" => d.kind = r.string()?,
            b"uid" => d.uid = r.string()?,
            b"retryAfterSeconds" => {
                d.retry_after_seconds = r
                    .or_null(|r| r.integer(0, u32::MAX.into()))?
                    .map(|n| n as u32)
            }
            b"causes" => {
                d.causes.clear();
                r.array(|r| {
                    let mut c = StatusCause::default();
                    r.object(|key, r| {
                        match key {
                            b"reason" => c.reason = r.string()?,
                            b"message" => c.message = r.string()?,
                            b"field" => c.field = r.string()?,
                            _ => r.skip()?,
                        }
                        Ok(())
                    })?;
                    d.causes.push(c);
                    Ok(())
                })?
            }
            _ => r.skip()?,
        }
        Ok(())
    })?;
    Ok(d)
}

impl Error {
    /// A decode error with a bounded excerpt of `input`.
    pub fn decode(message: impl Into<String>, input: &[u8]) -> Self {
        Error::Decode {
            message: message.into(),
            excerpt: excerpt(input),
        }
    }

    /// A network error.
    pub fn network(message: impl Into<String>) -> Self {
        Error::Network {
            message: message.into(),
            unreachable: false,
            cause: None,
        }
    }

    /// A network error that made no connection (see
    /// [`Error::Network::unreachable`](Error::Network)).
    pub fn unreachable(message: impl Into<String>) -> Self {
        Error::Network {
            message: message.into(),
            unreachable: true,
            cause: None,
        }
    }

    /// This error with the platform's own error as its cause (kept on
    /// network and credential failures; the others have none).
    pub fn with_cause(mut self, cause: Cause) -> Self {
        if let Error::Network { cause: c, .. } | Error::Credentials { cause: c, .. } = &mut self {
            *c = Some(cause);
        }
        self
    }

    /// The platform's error behind this one (see [`Error::with_cause`]).
    pub fn cause(&self) -> Option<&Cause> {
        match self {
            Error::Network { cause, .. } | Error::Credentials { cause, .. } => cause.as_ref(),
            _ => None,
        }
    }

    /// A timeout error.
    pub fn timeout(message: impl Into<String>) -> Self {
        Error::Timeout {
            message: message.into(),
        }
    }

    /// An invalid-config error.
    pub fn invalid_config(message: impl Into<String>) -> Self {
        Error::InvalidConfig {
            message: message.into(),
        }
    }

    /// A token provider's failure (see [`Error::Credentials`]).
    pub fn credentials(message: impl Into<String>) -> Self {
        Error::Credentials {
            message: message.into(),
            cause: None,
        }
    }

    /// An invalid-request error.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Error::InvalidRequest {
            message: message.into(),
        }
    }

    /// The API error for a `Status` (a watch `ERROR` event, or a body that
    /// was one). `code` falls back to 500 when the status carries none, as
    /// client-go does for watch errors.
    pub fn from_status(status: Status) -> Self {
        let code = if status.code == 0 { 500 } else { status.code };
        let retry_after_seconds = status.details.as_ref().and_then(|d| d.retry_after_seconds);
        let reason = if status.reason.is_empty() {
            reason_for_code(code).to_string()
        } else {
            status.reason
        };
        Error::Api(Box::new(ApiError {
            code,
            reason,
            message: status.message,
            details: status.details,
            retry_after_seconds,
            is_status: true,
            metadata: StatusMeta::default(),
            request: None,
        }))
    }

    /// The error for an HTTP response with a non-2xx `code` and `body`:
    /// a decoded `Status` when the body is one, otherwise an API error with
    /// the code, client-go's reason for it and a short excerpt of the body.
    /// `retry_after` is the parsed `Retry-After` header, which wins over the
    /// status details.
    pub fn from_response(code: u16, body: &[u8], retry_after: Option<u32>) -> Self {
        match Status::from_body(body) {
            Some(status) => {
                let mut err = Error::from_status(Status {
                    // The HTTP code is authoritative for an HTTP response.
                    code,
                    ..status
                });
                if let Error::Api(api) = &mut err {
                    if let Some(s) = retry_after {
                        api.retry_after_seconds = Some(s);
                    }
                    api.metadata = StatusMeta::of(body);
                }
                err
            }
            None => {
                let text = excerpt(body);
                let message = if text.trim().is_empty() {
                    format!("the server responded with HTTP {code} and an empty body")
                } else {
                    format!("the server responded with HTTP {code}: {}", text.trim())
                };
                Error::Api(Box::new(ApiError {
                    code,
                    reason: reason_for_code(code).to_string(),
                    message,
                    details: None,
                    retry_after_seconds: retry_after,
                    is_status: false,
                    metadata: StatusMeta::default(),
                    request: None,
                }))
            }
        }
    }

    /// The API error, if this is one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(a) => Some(a),
            _ => None,
        }
    }

    /// The HTTP code of an API error.
    pub fn code(&self) -> Option<u16> {
        self.api().map(|a| a.code)
    }

    /// The `Status.reason` of an API error.
    pub fn reason(&self) -> Option<&str> {
        self.api().map(|a| a.reason.as_str())
    }

    /// What a client reports as this error's reason: the server's `reason`
    /// for an API error, else the kind of failure (`Network`, `Timeout`,
    /// `Aborted`, `Decode`, `Credentials`, `Invalid`, `LineTooLong`,
    /// `ResponseTooLarge`).
    pub fn reported_reason(&self) -> &str {
        match self {
            Error::Api(a) => &a.reason,
            Error::Network { .. } => "Network",
            Error::Timeout { .. } => "Timeout",
            Error::Aborted => "Aborted",
            Error::Decode { .. } => "Decode",
            Error::Credentials { .. } => "Credentials",
            Error::InvalidConfig { .. } | Error::InvalidRequest { .. } | Error::Refused { .. } => {
                "Invalid"
            }
            Error::LineTooLong { .. } => "LineTooLong",
            Error::ResponseTooLarge { .. } => "ResponseTooLarge",
        }
    }

    fn has(&self, reason: &str, code: u16) -> bool {
        // client-go's `ReasonForError` checks the reason; a non-Status body
        // only has a code, so fall back to it when the reason is generic.
        match self.api() {
            Some(a) if a.reason == reason => true,
            Some(a) => a.code == code && (a.reason == "Unknown" || !a.is_status),
            None => false,
        }
    }

    /// 404 NotFound.
    pub fn is_not_found(&self) -> bool {
        self.has("NotFound", 404)
    }

    /// 409 Conflict (a stale resourceVersion on update).
    pub fn is_conflict(&self) -> bool {
        self.has("Conflict", 409)
    }

    /// 409 AlreadyExists (create of an existing name).
    pub fn is_already_exists(&self) -> bool {
        matches!(self.api(), Some(a) if a.reason == "AlreadyExists")
    }

    /// 410: the resourceVersion is too old (`Expired`) or `Gone`: relist.
    pub fn is_gone(&self) -> bool {
        matches!(self.api(), Some(a) if a.reason == "Expired" || a.reason == "Gone" || a.code == 410)
    }

    /// 429 TooManyRequests.
    pub fn is_too_many_requests(&self) -> bool {
        self.has("TooManyRequests", 429)
    }

    /// 401 Unauthorized.
    pub fn is_unauthorized(&self) -> bool {
        self.has("Unauthorized", 401)
    }

    /// 403 Forbidden.
    pub fn is_forbidden(&self) -> bool {
        self.has("Forbidden", 403)
    }

    /// A 5xx answer.
    pub fn is_server_error(&self) -> bool {
        matches!(self.api(), Some(a) if a.code >= 500)
    }

    /// The server's answer to a resourceVersion newer than it has (client-go's
    /// `isTooLargeResourceVersionError`): a `ResourceVersionTooLarge` cause,
    /// or a 504 `Timeout` saying "Too large resource version".
    pub fn is_too_large_resource_version(&self) -> bool {
        const PHRASE: &str = "Too large resource version";
        let Some(a) = self.api() else { return false };
        let causes = a
            .details
            .as_ref()
            .map(|d| d.causes.as_slice())
            .unwrap_or(&[]);
        if causes.iter().any(|c| c.reason == "ResourceVersionTooLarge") {
            return true;
        }
        let timeout = a.code == 504 || a.reason == "Timeout";
        timeout && (a.message.contains(PHRASE) || causes.iter().any(|c| c.message.contains(PHRASE)))
    }

    /// A network failure (no HTTP response).
    pub fn is_network(&self) -> bool {
        matches!(self, Error::Network { .. })
    }

    /// A timeout (request or watch idle).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// A server error that asks the client to come back later (a 5xx with
    /// `Retry-After`), as a proxy in maintenance or an overloaded server
    /// answers; not a resourceVersion the server does not have, which the
    /// API server answers with a `Retry-After` too but which waiting does
    /// not mend.
    pub fn asks_to_wait(&self) -> bool {
        self.code().is_some_and(|c| c >= 500)
            && self.retry_after().is_some()
            && !self.is_too_large_resource_version()
    }

    /// How long the server asked to wait before retrying, if it did, at
    /// most [`MAX_RETRY_AFTER`]: a server or proxy asking for a day would
    /// otherwise hold the request (and an informer) that long.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.api()
            .and_then(|a| a.retry_after_seconds)
            .map(|s| std::time::Duration::from_secs(u64::from(s)).min(MAX_RETRY_AFTER))
    }
}

/// The longest wait a `Retry-After` gets (the API server's own are a few
/// seconds).
pub const MAX_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

impl From<Status> for Error {
    fn from(s: Status) -> Self {
        Error::from_status(s)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.reason, self.code, self.message)?;
        match &self.request {
            // A server that relays another client's error (`kubewasm/shared`'s
            // worker) has named its request already.
            Some(request) if !names_request(&self.message) => write!(f, " ({request})"),
            _ => Ok(()),
        }
    }
}

/// Whether `message` ends with a request note as [`ApiError::request`]'s:
/// `(list pods: GET /…)` or `(watch pods: GET /…)`.
fn names_request(message: &str) -> bool {
    let Some(body) = message.strip_suffix(')') else {
        return false;
    };
    let Some((_, note)) = body.rsplit_once(" (") else {
        return false;
    };
    let Some(rest) = note
        .strip_prefix("list ")
        .or_else(|| note.strip_prefix("watch "))
    else {
        return false;
    };
    rest.split_once(": GET /")
        .is_some_and(|(resource, _)| !resource.is_empty() && !resource.contains(' '))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api(a) => write!(f, "API error: {a}"),
            // Chromium's own message for a failed body read is "network error".
            Error::Network { message, .. } if message.starts_with("network error") => {
                f.write_str(message)
            }
            Error::Network { message, .. } => write!(f, "network error: {message}"),
            Error::Timeout { message } => write!(f, "timeout: {message}"),
            Error::Aborted => write!(f, "request aborted"),
            Error::Decode { message, excerpt } => {
                write!(f, "decode error: {message} (input: {excerpt:?})")
            }
            Error::InvalidConfig { message } => write!(f, "invalid config: {message}"),
            Error::Credentials { message, .. } => write!(f, "getting credentials: {message}"),
            Error::InvalidRequest { message } => write!(f, "invalid request: {message}"),
            Error::Refused { message } => f.write_str(message),
            Error::LineTooLong { limit } => write!(
                f,
                "watch line longer than the maximum of {limit} bytes (raise Config::max_line_bytes)"
            ),
            Error::ResponseTooLarge { limit } => write!(
                f,
                "response body longer than the maximum of {limit} bytes (list in pages, or raise the client's limit: `maxResponseBytes` in JavaScript, `Config::max_response_bytes` in Rust)"
            ),
        }
    }
}

impl std::error::Error for ApiError {}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Api(a) => Some(a.as_ref()),
            _ => None,
        }
    }
}
