use std::time::Duration;

use crate::rest::{ApiError, Error, Status};

fn status_body(code: u16, reason: &str, extra: &str) -> Vec<u8> {
    format!(
        r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"m-{reason}","reason":"{reason}","code":{code}{extra}}}"#
    )
    .into_bytes()
}

/// Classification from Status bodies: each helper matches its own reason only.
#[test]
fn classifies_status_bodies() {
    type Check = fn(&Error) -> bool;
    let checks: [(&str, Check); 7] = [
        ("not_found", Error::is_not_found),
        ("conflict", Error::is_conflict),
        ("already_exists", Error::is_already_exists),
        ("gone", Error::is_gone),
        ("too_many", Error::is_too_many_requests),
        ("unauthorized", Error::is_unauthorized),
        ("forbidden", Error::is_forbidden),
    ];
    let cases = [
        (404, "NotFound", "not_found"),
        (409, "Conflict", "conflict"),
        (409, "AlreadyExists", "already_exists"),
        (410, "Expired", "gone"),
        (410, "Gone", "gone"),
        (429, "TooManyRequests", "too_many"),
        (401, "Unauthorized", "unauthorized"),
        (403, "Forbidden", "forbidden"),
    ];
    for (code, reason, want) in cases {
        let e = Error::from_response(code, &status_body(code, reason, ""), None);
        let api = e.api().expect("api error");
        assert!(api.is_status);
        assert_eq!((api.code, api.reason.as_str()), (code, reason));
        assert_eq!(api.message, format!("m-{reason}"));
        for (name, f) in checks {
            assert_eq!(f(&e), name == want, "{reason} vs {name}");
        }
    }
}

#[test]
fn status_details_and_retry_after() {
    let body = status_body(
        429,
        "TooManyRequests",
        r#","details":{"name":"p","kind":"pods","retryAfterSeconds":3,"causes":[{"reason":"X","message":"y","field":"spec"}]}"#,
    );
    let e = Error::from_response(429, &body, None);
    assert_eq!(e.retry_after(), Some(Duration::from_secs(3)));
    let d = e.api().and_then(|a| a.details.clone()).expect("details");
    assert_eq!((d.name.as_str(), d.causes[0].field.as_str()), ("p", "spec"));
    // The Retry-After header wins over the details.
    let e = Error::from_response(429, &body, Some(7));
    assert_eq!(e.retry_after(), Some(Duration::from_secs(7)));
    // The HTTP code is authoritative over Status.code.
    let e = Error::from_response(500, &status_body(0, "InternalError", ""), None);
    assert_eq!(e.code(), Some(500));
    assert!(e.is_server_error());
}

/// A proxy's HTML 502 (or an empty body) becomes an API error with the code,
/// client-go's generic reason and a short excerpt.
#[test]
fn classifies_non_status_bodies() {
    let html = format!(
        "<html><head><title>502 Bad Gateway</title></head><body>{}</body></html>",
        "x".repeat(500)
    );
    let e = Error::from_response(502, html.as_bytes(), Some(2));
    let a = e.api().expect("api");
    assert_eq!(a.code, 502);
    assert_eq!(a.reason, "InternalError");
    assert!(!a.is_status);
    assert!(a.message.contains("502 Bad Gateway"));
    assert!(a.message.len() < 300, "excerpt is bounded");
    assert_eq!(e.retry_after(), Some(Duration::from_secs(2)));
    let e = Error::from_response(404, b"404 page not found\n", None);
    assert!(e.is_not_found());
    assert_eq!(e.reason(), Some("NotFound"));
    let e = Error::from_response(403, b"", None);
    assert!(e.is_forbidden() && !e.is_not_found());
    assert_eq!(
        Error::from_response(418, b"teapot", None).reason(),
        Some("Unknown")
    );
    // A 410 on a paginated list keeps the token that goes on with it.
    let body =
        br#"{"kind":"Status","metadata":{"continue":"t0k","x":1},"code":410,"reason":"Expired"}"#;
    let e = Error::from_response(410, body, None);
    assert_eq!(e.api().expect("api").metadata.continue_token, "t0k");
    let body = br#"{"kind":"Status","metadata":null,"code":410,"reason":"Expired"}"#;
    assert!(Error::from_response(410, body, None)
        .api()
        .expect("api")
        .metadata
        .is_empty());
    let e = Error::from_response(410, b"{\"kind\":\"Other\"}", None);
    assert!(e.is_gone());
    // JSON that is not a Status is not treated as one.
    assert!(!e.api().expect("api").is_status);
    // `kind` anywhere among the members, with whitespace, still marks a Status.
    let body =
        br#" { "code" : 404 , "reason" : "NotFound" , "kind" : "Status" , "message" : "gone" } "#;
    let s = Status::from_body(body).expect("a Status");
    assert_eq!(
        (s.code, s.reason.as_str(), s.message.as_str()),
        (404, "NotFound", "gone")
    );
    assert_eq!(
        Status::from_body(br#"{"kind":"Status","code":"x"}"#),
        None,
        "badly typed fields"
    );
    assert_eq!(Status::from_body(br#"{"kind":["Status"]}"#), None);
    // Garbage bytes never panic.
    let e = Error::from_response(500, b"\xff\xfe\x00", None);
    assert!(e.is_server_error());
}

#[test]
fn watch_error_status_converts_to_api_error() {
    let s: Status = serde_json::from_slice(&status_body(410, "Expired", "")).expect("status");
    let e = Error::from(s);
    assert!(e.is_gone());
    assert_eq!(e.code(), Some(410));
    let e = Error::from(Status {
        message: "boom".into(),
        ..Default::default()
    });
    assert_eq!((e.code(), e.reason()), (Some(500), Some("InternalError")));
    let e = Error::decode("bad", &[b'a'; 500]);
    assert!(matches!(&e, Error::Decode { excerpt, .. } if excerpt.chars().count() == 121));
}

#[test]
fn wrapping_errors_name_their_source() {
    use std::error::Error as _;
    let api = Error::Api(Box::new(ApiError {
        code: 409,
        reason: "Conflict".into(),
        message: "the object has been modified".into(),
        ..Default::default()
    }));
    let source = api.source().expect("an API error wraps its status");
    assert_eq!(
        source.to_string(),
        "Conflict (409): the object has been modified"
    );
    assert!(Error::Aborted.source().is_none());
}

#[test]
fn a_network_error_says_so_once() {
    assert_eq!(
        Error::network("connection refused").to_string(),
        "network error: connection refused"
    );
    // Chromium's message for a failed body read already says it.
    assert_eq!(Error::network("network error").to_string(), "network error");
}

/// A token provider that failed is not a bad config: its own reason and a
/// message that says credentials were being fetched, with the cause.
#[test]
fn a_failing_token_provider_is_a_credentials_error_not_an_invalid_config() {
    let e = Error::credentials("tokenProvider threw: idp unavailable");
    assert_eq!(e.reported_reason(), "Credentials");
    assert_eq!(
        e.to_string(),
        "getting credentials: tokenProvider threw: idp unavailable"
    );
    assert_eq!(e.code(), None);
}
