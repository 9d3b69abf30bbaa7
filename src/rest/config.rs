//! Client configuration: where the API server is, how to authenticate, and the
//! limits (timeouts, rate limit, retries, watch line size).
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use futures::future::LocalBoxFuture;

use super::watch_transport::WatchTransportMode;
use super::Error;
use crate::rt::Backoff;

/// Supplies a bearer token per request, so rotated tokens (OIDC refresh, a
/// dashboard backend handing out short-lived tokens) are picked up without
/// rebuilding the client. Called once per request attempt; cache inside if
/// fetching a token is expensive.
pub trait TokenProvider {
    /// The token to send now (without the `Bearer ` prefix).
    fn token(&self) -> LocalBoxFuture<'static, Result<String, Error>>;
}

impl<F, Fut> TokenProvider for F
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<String, Error>> + 'static,
{
    fn token(&self) -> LocalBoxFuture<'static, Result<String, Error>> {
        Box::pin(self())
    }
}

/// How requests authenticate.
#[derive(Clone, Default)]
pub enum Auth {
    /// No `Authorization` header (a `kubectl proxy`, cookie-authenticated
    /// proxies with [`CredentialsMode::Include`]).
    #[default]
    None,
    /// A fixed bearer token.
    Bearer(String),
    /// A token fetched per request.
    Provider(Rc<dyn TokenProvider>),
}

impl Auth {
    /// Wrap a token provider (a closure returning a future works).
    pub fn provider(p: impl TokenProvider + 'static) -> Self {
        Auth::Provider(Rc::new(p))
    }
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::None => write!(f, "None"),
            // Never print the token.
            Auth::Bearer(_) => write!(f, "Bearer(<redacted>)"),
            Auth::Provider(_) => write!(f, "Provider(..)"),
        }
    }
}

/// The `credentials` mode of `fetch` (whether cookies and HTTP auth go along).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CredentialsMode {
    /// Only to the same origin (the `fetch` default).
    #[default]
    SameOrigin,
    /// Never.
    Omit,
    /// Always, also cross-origin (cookie-authenticated proxies; the server
    /// must then answer CORS with a concrete origin, not `*`).
    Include,
}

/// Client-side token bucket: at most `burst` requests at once, refilled at
/// `qps` per second. Watches are exempt (as in client-go): they are long-lived
/// and gating them would delay every informer start behind ordinary requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// Sustained requests per second (> 0).
    pub qps: f64,
    /// Bucket size (≥ 1).
    pub burst: u32,
}

impl Default for RateLimit {
    /// 20 QPS, burst 50. client-go defaults to 5/10, tuned for controllers
    /// sharing a cluster; a dashboard starting a dozen informers with paged
    /// lists plus discovery would wait seconds at 5/10 before showing
    /// anything. 20/50 lets such a start-up through at once, keeps a steady
    /// UI far below it, and still stops a runaway loop from hammering a
    /// shared API server with hundreds of requests per second.
    fn default() -> Self {
        RateLimit {
            qps: 20.0,
            burst: 50,
        }
    }
}

/// The REST client's retry backoff when the server gave no `Retry-After`:
/// 200 ms doubling to 2 s, +0–20 % jitter. Ten retries span about 15 s,
/// close to client-go's ten 1 s waits, so a dead server or a CORS
/// misconfiguration (both look like network errors) is reported within
/// seconds, while a blip is retried quickly.
pub const DEFAULT_RETRY_BACKOFF: Backoff = Backoff {
    initial: Duration::from_millis(200),
    factor: 2.0,
    max: Duration::from_secs(2),
    jitter: 0.2,
};

/// The default [`Config::max_response_bytes`]: 512 MiB.
///
/// The largest body a client meets is a whole LIST in one response: the API
/// server ignores `limit` when it answers resourceVersion `0` from its watch
/// cache, and relists at a concrete resourceVersion go unpaginated unless
/// the server was seen paginating. 512 MiB holds such a list of ~100,000
/// pods of ~5 KB. A body is held whole in wasm memory, which never shrinks
/// and is at most 4 GiB, so a larger default would let one runaway
/// response (a broken proxy, an endless body) cost a page most of its
/// memory for good.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 512 * 1024 * 1024;

/// Everything a [`Client`](super::Client) needs to know.
#[derive(Debug, Clone)]
pub struct Config {
    /// Base URL of the API server, possibly with a path prefix
    /// (`https://host:6443`, `http://127.0.0.1:8001`, `https://dash/k8s`),
    /// or an absolute path (`/k8s`) resolved against the page's origin
    /// (pages only: workers and Node have no document base).
    pub base_url: String,
    /// Authentication.
    pub auth: Auth,
    /// Headers added to every request (e.g. `Impersonate-User`).
    pub headers: Vec<(String, String)>,
    /// `User-Agent` to send. `None` (the default) leaves the platform's:
    /// browsers ignore or refuse a custom one, and the header would force a
    /// CORS preflight.
    pub user_agent: Option<String>,
    /// Timeout of a non-watch request (until its body is read) and of
    /// establishing a watch (until its headers arrive), retries and the
    /// waits between them included. A LIST's body, which is decoded as it
    /// streams in, may take longer: the limit is then on each wait for more
    /// of it. Default 60 s; `None` waits forever.
    pub timeout: Option<Duration>,
    /// `fetch` credentials mode.
    pub credentials: CredentialsMode,
    /// Client-side rate limit; `None` disables it.
    pub rate_limit: Option<RateLimit>,
    /// How many times an idempotent request is retried (client-go: 10).
    pub max_retries: u32,
    /// Backoff between retries without `Retry-After` (default
    /// [`DEFAULT_RETRY_BACKOFF`]).
    pub backoff: Backoff,
    /// A watch that receives no bytes for this long ends with a timeout
    /// error, so a dead connection never hangs an informer. Default 11 min:
    /// longer than the reflector's longest server-side watch timeout (10 min),
    /// so only a dead stream trips it; ask for bookmarks and set a shorter one
    /// per request ([`Request::idle_timeout`](super::Request::idle_timeout))
    /// for quicker detection. `None` disables it.
    pub watch_idle_timeout: Option<Duration>,
    /// Longest accepted watch line (one event); longer ends the watch with
    /// [`Error::LineTooLong`]. Default 16 MiB.
    pub max_line_bytes: usize,
    /// Longest accepted body of a non-watch response; reading stops there
    /// with [`Error::ResponseTooLarge`] (an error answer's body is cut to
    /// 1 MiB instead, keeping its status code). Default
    /// [`DEFAULT_MAX_RESPONSE_BYTES`] (512 MiB).
    pub max_response_bytes: usize,
    /// At most this many requests waiting for response headers at once; the
    /// rest queue in order. Edge runtimes cap concurrent connections waiting
    /// for headers (six on Cloudflare Workers), and a page with many informers
    /// can exceed a browser's per-host limit; `None` (the default) = no cap.
    pub max_in_flight: Option<usize>,
    /// Which transport carries watches: `fetch`, WebSocket, or (the default)
    /// fetch up to [`fetch_watches_per_origin`](Self::fetch_watches_per_origin)
    /// in a browser and WebSocket beyond (see `watch_transport.rs`).
    pub watch_transport: WatchTransportMode,
    /// In [`WatchTransportMode::Auto`], at most this many fetch watches per
    /// HTTP/1.1 origin (the browser allows six connections; the rest stay
    /// for lists and writes). Default 4.
    pub fetch_watches_per_origin: usize,
    /// Receives the `Warning` headers of every response (deprecations,
    /// admission warnings); `None` (the default) ignores them. Wrap the
    /// handler in [`DedupWarnings`](super::DedupWarnings) to see each
    /// message once, as kubectl does.
    pub warning_handler: Option<super::SharedWarningHandler>,
}

impl Config {
    /// A configuration with the defaults for `base_url`.
    pub fn new(base_url: impl Into<String>) -> Self {
        Config {
            base_url: base_url.into(),
            auth: Auth::None,
            headers: Vec::new(),
            user_agent: None,
            timeout: Some(Duration::from_secs(60)),
            credentials: CredentialsMode::default(),
            rate_limit: Some(RateLimit::default()),
            max_retries: 10,
            backoff: DEFAULT_RETRY_BACKOFF,
            watch_idle_timeout: Some(Duration::from_secs(11 * 60)),
            max_line_bytes: 16 * 1024 * 1024,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_in_flight: None,
            watch_transport: WatchTransportMode::Auto,
            fetch_watches_per_origin: 4,
            warning_handler: None,
        }
    }

    /// Set a fixed bearer token.
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.auth = Auth::Bearer(token.into());
        self
    }

    /// Set a per-request token provider.
    #[must_use]
    pub fn token_provider(mut self, p: impl TokenProvider + 'static) -> Self {
        self.auth = Auth::provider(p);
        self
    }

    /// Add a header to every request.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Check that the settings are usable.
    pub fn validate(&self) -> Result<(), Error> {
        let url = self.base_url.as_str();
        let rest = if let Some(r) = url.strip_prefix("https://") {
            r
        } else if let Some(r) = url.strip_prefix("http://") {
            r
        } else if is_scheme_relative(url) {
            // A URL parser reads `//host` (and, for http(s), `/\host`) as
            // another origin: the bearer token would go there.
            return Err(Error::invalid_config(format!(
                "the server URL {url:?} starts with // or /\\, which resolves to another host; \
                 write the origin in full (https://host) or a path on this one (/k8s)"
            )));
        } else if url.starts_with('/') {
            "host"
        } else {
            return Err(Error::invalid_config(format!(
                "the server URL {url:?} must start with http://, https:// or /"
            )));
        };
        // `http:///host` and `http://\host` name a host after all (URL
        // parsers skip extra slashes and backslashes): refuse the ambiguity.
        if rest.is_empty() || rest.starts_with(['/', '\\']) {
            return Err(Error::invalid_config(format!(
                "the server URL {url:?} has no host"
            )));
        }
        if url.contains(['?', '#']) || url.chars().any(char::is_whitespace) {
            return Err(Error::invalid_config(format!(
                "the server URL {url:?} must not contain a query, fragment or whitespace"
            )));
        }
        if let Auth::Bearer(t) = &self.auth {
            if t.is_empty() || t.contains(['\r', '\n']) {
                return Err(Error::invalid_config("bearer token is empty or multi-line"));
            }
        }
        for (k, v) in &self.headers {
            if k.is_empty()
                || !k.bytes().all(|b| b.is_ascii_graphic() && b != b':')
                || v.contains(['\r', '\n'])
            {
                return Err(Error::invalid_config(format!("invalid header {k:?}")));
            }
        }
        if let Some(rl) = &self.rate_limit {
            if !(rl.qps.is_finite() && rl.qps > 0.0) || rl.burst == 0 {
                return Err(Error::invalid_config(
                    "rate_limit needs qps > 0 and burst >= 1 (use None to disable)",
                ));
            }
        }
        if self.timeout == Some(Duration::ZERO) || self.watch_idle_timeout == Some(Duration::ZERO) {
            return Err(Error::invalid_config(
                "zero timeouts are not allowed (use None to disable)",
            ));
        }
        let b = &self.backoff;
        if !(b.factor.is_finite() && b.factor >= 1.0 && b.jitter.is_finite() && b.jitter >= 0.0) {
            return Err(Error::invalid_config(
                "backoff needs factor >= 1 and jitter >= 0",
            ));
        }
        if self.max_line_bytes < 1024 {
            return Err(Error::invalid_config(
                "max_line_bytes must be at least 1024",
            ));
        }
        if self.max_response_bytes < 1024 {
            return Err(Error::invalid_config(
                "max_response_bytes must be at least 1024",
            ));
        }
        Ok(())
    }
}

/// Whether `url` starts like a scheme-relative URL (`//host`, `/\\host`,
/// `\\\\host`, `\\/host`): a browser resolves it against the page's
/// scheme only, to whatever host follows.
pub(crate) fn is_scheme_relative(url: &str) -> bool {
    let b = url.as_bytes();
    matches!(b.first(), Some(b'/' | b'\\')) && matches!(b.get(1), Some(b'/' | b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_validation() {
        assert!(Config::new("https://k8s:6443/prefix/").validate().is_ok());
        assert!(Config::new("http://127.0.0.1:8001").validate().is_ok());
        assert!(Config::new("/k8s").validate().is_ok());
        for bad in [
            Config::new("k8s:6443"),
            Config::new("https://"),
            Config::new("http:///x"),
            Config::new("https://h/?q=1"),
            Config::new("http://\\h"),
            Config::new("https://h").bearer_token(""),
            Config::new("https://h").header("bad header", "v"),
            Config::new("https://h").header("X", "a\nb"),
            Config {
                rate_limit: Some(RateLimit { qps: 0.0, burst: 1 }),
                ..Config::new("https://h")
            },
            Config {
                timeout: Some(Duration::ZERO),
                ..Config::new("https://h")
            },
            Config {
                max_line_bytes: 10,
                ..Config::new("https://h")
            },
            Config {
                max_response_bytes: 1023,
                ..Config::new("https://h")
            },
        ] {
            assert!(
                matches!(bad.validate(), Err(Error::InvalidConfig { .. })),
                "{bad:?}"
            );
        }
        assert!(
            !format!("{:?}", Config::new("https://h").bearer_token("s3cret")).contains("s3cret")
        );
    }

    #[test]
    fn scheme_relative_base_urls_are_refused() {
        for bad in [
            "//evil.example",
            "//evil.example/k8s",
            "/\\evil.example",
            "\\\\evil.example",
            "\\/evil.example",
            "///evil.example",
            "//",
        ] {
            let e = Config::new(bad).validate().expect_err(bad);
            assert!(
                matches!(&e, Error::InvalidConfig { message } if message.contains("another host")),
                "{bad}: {e}"
            );
        }
        for ok in ["/", "/k8s", "/k8s//x", "/k8s/\\x", "https://h//x"] {
            assert!(Config::new(ok).validate().is_ok(), "{ok}");
        }
    }

    #[test]
    fn rc_04_default_retry_backoff_spans_about_fifteen_seconds() {
        let d = DEFAULT_RETRY_BACKOFF;
        let total: Duration = (0..10).map(|i| d.delay(i, 0.0)).sum();
        assert_eq!(
            total,
            Duration::from_millis(200 + 400 + 800 + 1600 + 6 * 2000)
        );
        assert_eq!(d.delay(9, 0.5), Duration::from_millis(2200));
    }
}
