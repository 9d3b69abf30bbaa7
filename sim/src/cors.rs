//! CORS: every response may be read cross-origin (the wasm tests and the
//! dashboard run on other origins), and preflights are answered for any
//! method and header a client asks for.

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

#[cfg(test)]
mod tests {
    use super::*;

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
