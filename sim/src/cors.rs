//! CORS: every API response may be read cross-origin (the wasm tests and the
//! dashboard run on other origins), and preflights are answered for any
//! method and header a client asks for.
//!
//! The `/sim/*` control endpoints are different: they rewrite the cluster, so
//! a page of another origin must not reach them. They carry no CORS headers,
//! and a request a browser marks as cross-origin is refused before it runs
//! (CORS alone only hides the answer: a "simple" cross-origin POST would still
//! be executed). The one exception is a cross-origin request with the sim's
//! bearer token, which only a test the token was given to can send (the wasm
//! suites in Chromium run on another origin).

use crate::http::Request;

/// Headers on every response.
pub const HEADERS: &str = "Access-Control-Allow-Origin: *\r\nAccess-Control-Expose-Headers: Retry-After, Content-Type, Content-Length, Warning, Audit-Id, Date\r\n";

/// Extra headers of a preflight (OPTIONS) answer. Requested headers are
/// echoed on top of the ones every client needs.
pub fn preflight_headers(requested: Option<&str>) -> Vec<(&'static str, String)> {
    let mut allow =
        String::from("Authorization, Content-Type, Accept, Impersonate-User, Impersonate-Group");
    if let Some(extra) = requested.map(str::trim).filter(|s| !s.is_empty()) {
        allow.push_str(", ");
        allow.extend(extra.chars().filter(|c| !c.is_control()));
    }
    vec![
        (
            "Access-Control-Allow-Methods",
            "GET, POST, PUT, PATCH, DELETE, OPTIONS".to_string(),
        ),
        ("Access-Control-Allow-Headers", allow),
        ("Access-Control-Max-Age", "600".to_string()),
    ]
}

/// How a `/sim/*` request may be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admin {
    /// Same-origin, or not from a browser page (curl, Node, tests): served
    /// without CORS headers.
    Local,
    /// From another origin with the sim's bearer token, or the preflight of
    /// such a request when the sim has a token: served with CORS headers.
    TokenCrossOrigin,
    /// From another origin without the token: refused (403) without CORS
    /// headers.
    Refused,
}

/// Whether the request comes from a page of another origin. Browsers send
/// `Origin` on every cross-origin fetch and every POST; `Sec-Fetch-Site`
/// also covers no-cors GETs (an `<img>` pointing at the sim).
fn cross_origin(req: &Request) -> bool {
    if matches!(
        req.header("sec-fetch-site").map(str::trim),
        Some(s) if s.eq_ignore_ascii_case("cross-site") || s.eq_ignore_ascii_case("same-site")
    ) {
        return true;
    }
    let Some(origin) = req.header("origin").map(str::trim) else {
        return false;
    };
    // An `Origin` that is not this server (including "null" from sandboxed
    // frames and file: pages) is another origin.
    let host = req.header("host").map(str::trim).unwrap_or("");
    let own = origin
        .strip_prefix("http://")
        .is_some_and(|h| !host.is_empty() && h.eq_ignore_ascii_case(host));
    !own
}

/// Whether the request carries `Authorization: Bearer <token>`.
pub fn has_token(req: &Request, token: &str) -> bool {
    req.header("authorization")
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::trim)
        == Some(token)
}

/// Decide how a `/sim/*` request is answered; `token` is the sim's `--token`.
pub fn admin_access(req: &Request, token: Option<&str>) -> Admin {
    if !cross_origin(req) {
        return Admin::Local;
    }
    match token {
        // A preflight never carries credentials; the request it announces is
        // checked for the token when it arrives.
        Some(_) if req.method == "OPTIONS" => Admin::TokenCrossOrigin,
        Some(t) if has_token(req, t) => Admin::TokenCrossOrigin,
        _ => Admin::Refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, headers: &[(&str, &str)]) -> Request {
        Request {
            method: method.into(),
            path: "/sim/seed".into(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
            ..Request::default()
        }
    }

    #[test]
    fn admin_access_by_origin_and_token() {
        let host = ("Host", "127.0.0.1:8080");
        let same = ("Origin", "http://127.0.0.1:8080");
        let other = ("Origin", "http://evil.example");
        let bearer = ("Authorization", "Bearer t");
        assert_eq!(admin_access(&req("POST", &[host]), None), Admin::Local);
        assert_eq!(
            admin_access(&req("POST", &[host, same]), None),
            Admin::Local
        );
        assert_eq!(
            admin_access(&req("POST", &[host, other]), None),
            Admin::Refused
        );
        assert_eq!(
            admin_access(&req("POST", &[host, ("Origin", "null")]), None),
            Admin::Refused
        );
        assert_eq!(
            admin_access(&req("GET", &[host, ("Sec-Fetch-Site", "cross-site")]), None),
            Admin::Refused
        );
        // Without a sim token, a bearer header proves nothing.
        assert_eq!(
            admin_access(&req("POST", &[host, other, bearer]), None),
            Admin::Refused
        );
        assert_eq!(
            admin_access(&req("POST", &[host, other, bearer]), Some("t")),
            Admin::TokenCrossOrigin
        );
        assert_eq!(
            admin_access(
                &req("POST", &[host, other, ("Authorization", "Bearer x")]),
                Some("t")
            ),
            Admin::Refused
        );
        assert_eq!(
            admin_access(&req("OPTIONS", &[host, other]), Some("t")),
            Admin::TokenCrossOrigin
        );
        assert_eq!(
            admin_access(&req("OPTIONS", &[host, other]), None),
            Admin::Refused
        );
    }

    #[test]
    fn preflight_echoes_requested_headers() {
        let h = preflight_headers(Some("X-Custom, x-other"));
        let allow = &h
            .iter()
            .find(|(k, _)| *k == "Access-Control-Allow-Headers")
            .unwrap()
            .1;
        assert!(allow.contains("Authorization") && allow.contains("X-Custom, x-other"));
        assert!(HEADERS.contains("Retry-After"));
    }
}
