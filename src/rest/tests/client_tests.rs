use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;

use crate::rest::{
    Client, Config, Error, FakeResponse, FakeTransport, ListParams, Method, RateLimit, Request,
    WatchParams,
};
use crate::rt::Backoff;
use crate::rt::{run_until_stalled, spawn_local, Clock, FakeClock};

fn setup(config: Config) -> (Client, FakeTransport, FakeClock) {
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let c = Client::with_transport(config, Rc::new(t.clone()), clock.shared()).expect("client");
    (c, t, clock)
}

fn config() -> Config {
    Config {
        backoff: Backoff {
            jitter: 0.0,
            ..crate::rest::DEFAULT_RETRY_BACKOFF
        },
        rate_limit: None,
        ..Config::new("https://k8s.example/prefix")
    }
}

/// Run `f` as a task; the result slot fills when it completes.
fn start<T: 'static>(f: impl Future<Output = T> + 'static) -> Rc<RefCell<Option<T>>> {
    let slot = Rc::new(RefCell::new(None));
    let s = slot.clone();
    spawn_local(async move {
        *s.borrow_mut() = Some(f.await);
    });
    run_until_stalled();
    slot
}

fn pod(name: &str) -> FakeResponse {
    FakeResponse::json(200, &json!({"kind": "Pod", "metadata": {"name": name}}))
}

fn get_pod(c: &Client) -> impl Future<Output = Result<crate::rest::KubeObject, Error>> {
    let c = c.clone();
    async move {
        c.send_object(&Request::get().namespace("ns").resource("pods").name("a"))
            .await
    }
}

/// RC-04: a 429 is retried after exactly its Retry-After.
#[test]
fn rc_04_retry_after_is_honoured() {
    let (c, t, clock) = setup(config());
    t.push(FakeResponse::status(429, "TooManyRequests", "slow down").header("Retry-After", "3"));
    t.push(pod("a"));
    let r = start(get_pod(&c));
    assert_eq!(t.request_count(), 1);
    clock.advance(Duration::from_millis(2999));
    run_until_stalled();
    assert_eq!(t.request_count(), 1, "not before Retry-After");
    clock.advance(Duration::from_millis(1));
    run_until_stalled();
    assert_eq!(t.request_count(), 2);
    assert_eq!(
        r.borrow_mut().take().expect("done").expect("ok").name(),
        "a"
    );
}

/// RC-04: 5xx without Retry-After backs off exponentially, up to max_retries,
/// then the last error is returned.
#[test]
fn rc_04_max_retries_with_capped_backoff() {
    let (c, t, clock) = setup(Config {
        max_retries: 3,
        ..config()
    });
    for _ in 0..4 {
        t.push(FakeResponse::status(503, "ServiceUnavailable", "busy"));
    }
    t.push(pod("never"));
    let r = start(get_pod(&c));
    let mut waits = Vec::new();
    while r.borrow().is_none() {
        let before = clock.now();
        let next = clock.next_deadline().expect("a retry timer");
        clock.set(next);
        run_until_stalled();
        waits.push(next - before);
    }
    assert_eq!(
        waits,
        [200, 400, 800].map(Duration::from_millis).to_vec(),
        "200 ms doubling"
    );
    assert_eq!(t.request_count(), 4, "1 try + 3 retries");
    let err = r.borrow_mut().take().expect("done").expect_err("fails");
    assert_eq!(err.code(), Some(503));
}

/// RC-04: create/update/patch/delete are retried only when the server asked
/// (a 429, or a 5xx with Retry-After, as client-go does), unless opted in.
#[test]
fn rc_04_no_retry_for_post_unless_opted_in() {
    let (c, t, clock) = setup(config());
    let send = |method: Method| {
        let c2 = c.clone();
        start(async move {
            c2.send(
                &Request::new(method)
                    .resource("pods")
                    .name("a")
                    .json(&json!({})),
            )
            .await
        })
    };
    for method in [Method::Post, Method::Put, Method::Patch, Method::Delete] {
        // Not retried: a 5xx without Retry-After, a network error (either may
        // come after the server acted).
        for fail in [
            FakeResponse::status(500, "InternalError", "x"),
            FakeResponse::status(503, "ServiceUnavailable", "x"),
        ] {
            t.clear_requests();
            t.push(fail);
            let r = send(method);
            assert!(r.borrow().as_ref().expect("done").is_err());
            assert_eq!(t.request_count(), 1, "{method:?}");
        }
        t.clear_requests();
        t.push_error(Error::network("reset"));
        let r = send(method);
        assert!(r.borrow().as_ref().expect("done").is_err());
        assert_eq!(t.request_count(), 1, "{method:?} after a network error");
        // Retried after the wait the server gave: 429, and 5xx with Retry-After.
        for asked in [
            FakeResponse::status(429, "TooManyRequests", "x").header("Retry-After", "1"),
            FakeResponse::status(500, "InternalError", "x").header("Retry-After", "1"),
        ] {
            t.clear_requests();
            t.push(asked);
            t.push(pod("a"));
            let r = send(method);
            assert_eq!(t.request_count(), 1);
            clock.advance(Duration::from_secs(1));
            run_until_stalled();
            assert_eq!(t.request_count(), 2, "{method:?} retried once");
            assert!(r.borrow().as_ref().expect("done").is_ok());
            let reqs = t.requests();
            assert_eq!(reqs[0].body, reqs[1].body, "the body is sent again");
        }
    }
    t.clear_requests();
    t.push_error(Error::network("reset"));
    t.push(pod("b"));
    let c2 = c.clone();
    let r = start(async move {
        c2.send_object(
            &Request::post()
                .resource("pods")
                .json(&json!({}))
                .retry_non_idempotent(true),
        )
        .await
    });
    clock.advance(Duration::from_millis(200));
    run_until_stalled();
    assert_eq!(t.request_count(), 2);
    assert_eq!(
        r.borrow_mut().take().expect("done").expect("ok").name(),
        "b"
    );
    // The body is replayed on the retry.
    let reqs = t.requests();
    assert_eq!(reqs[0].body, reqs[1].body);
}

/// Network errors on GET are retried; non-retryable statuses are not.
#[test]
fn rc_04_network_errors_retry_client_errors_do_not() {
    let (c, t, clock) = setup(config());
    t.push_error(Error::network("refused"));
    t.push(pod("a"));
    let r = start(get_pod(&c));
    clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert!(r.borrow().as_ref().expect("done").is_ok());
    t.clear_requests();
    for (code, reason) in [
        (404, "NotFound"),
        (409, "Conflict"),
        (400, "BadRequest"),
        (501, "Unknown"),
    ] {
        t.push(FakeResponse::status(code, reason, "no"));
    }
    for _ in 0..4 {
        let r = start(get_pod(&c));
        assert!(r.borrow().as_ref().expect("done immediately").is_err());
    }
    assert_eq!(t.request_count(), 4);
}

/// A connection that was never made (refused, a name that did not resolve)
/// is not retried, as client-go retries only connections lost on the way;
/// one lost is.
#[test]
fn an_unreachable_server_is_reported_at_once() {
    let (c, t, _clock) = setup(config());
    t.push_error(Error::unreachable("connect ECONNREFUSED 127.0.0.1:1"));
    t.push(pod("never"));
    let r = start(get_pod(&c));
    let err = r
        .borrow_mut()
        .take()
        .expect("done at once")
        .expect_err("fails");
    assert!(err.is_network(), "{err}");
    assert!(err.to_string().contains("ECONNREFUSED"), "{err}");
    assert_eq!(t.request_count(), 1, "not retried");
}

/// `reached_again` completes when a request is answered after one met no
/// server, not at answers while nothing was lost.
#[test]
fn reached_again_tells_of_the_first_answer_after_a_network_error() {
    let (c, t, _clock) = setup(config());
    let reached = Rc::new(std::cell::Cell::new(0));
    let wait = |c: &Client| {
        let (r, f) = (reached.clone(), c.reached_again());
        crate::rt::spawn_local(async move {
            f.await;
            r.set(r.get() + 1);
        });
    };
    wait(&c);
    t.push(pod("a"));
    let _ = start(get_pod(&c));
    assert_eq!(reached.get(), 0, "nothing was lost");
    t.push_error(Error::unreachable("connect ECONNREFUSED 127.0.0.1:1"));
    let _ = start(get_pod(&c));
    assert_eq!(reached.get(), 0);
    // A clone (another informer of the factory) gets the answer.
    t.push(pod("a"));
    let _ = start(get_pod(&c.clone()));
    run_until_stalled();
    assert_eq!(reached.get(), 1);
}

/// The timeout bounds the whole call: a retry wait that would outlast it
/// ends the call with the failure that called for it.
#[test]
fn the_timeout_bounds_the_retries_and_their_waits() {
    let (c, t, clock) = setup(Config {
        timeout: Some(Duration::from_secs(1)),
        ..config()
    });
    for _ in 0..11 {
        t.push(FakeResponse::status(503, "ServiceUnavailable", "busy"));
    }
    let began = clock.now();
    let r = start(get_pod(&c));
    while r.borrow().is_none() {
        let next = clock.next_deadline().expect("a timer");
        clock.set(next);
        run_until_stalled();
    }
    // Tries at 0, 200 and 600 ms; the next wait (800 ms) would end past 1 s.
    assert_eq!(t.request_count(), 3);
    assert_eq!(clock.now() - began, Duration::from_millis(600));
    let err = r.borrow_mut().take().expect("done").expect_err("fails");
    assert_eq!(err.code(), Some(503), "{err}");
}

/// A try still waiting when the call's time is up ends it with a timeout
/// that says what the try before it met, and aborts it.
#[test]
fn a_retry_cut_short_by_the_timeout_says_what_came_before() {
    let (c, t, clock) = setup(Config {
        timeout: Some(Duration::from_secs(1)),
        ..config()
    });
    t.push_error(Error::network("connection reset"));
    let pending = t.push_pending();
    let r = start(get_pod(&c));
    clock.advance(Duration::from_millis(200));
    run_until_stalled();
    assert_eq!(t.request_count(), 2, "retried after 200 ms");
    clock.advance(Duration::from_millis(799));
    run_until_stalled();
    assert!(r.borrow().is_none(), "within the second");
    clock.advance(Duration::from_millis(1));
    run_until_stalled();
    let err = r.borrow_mut().take().expect("done").expect_err("a timeout");
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("no response headers within 1s, retries included (1 retry;"),
        "{text}"
    );
    assert!(text.contains("connection reset"), "{text}");
    assert!(pending.is_cancelled(), "the try was aborted");
}

/// The request timeout is measured on the clock and drops (aborts) the fetch.
#[test]
fn timeout_aborts_the_request() {
    let (c, t, clock) = setup(Config {
        timeout: Some(Duration::from_secs(10)),
        ..config()
    });
    let pending = t.push_pending();
    let r = start(get_pod(&c));
    clock.advance(Duration::from_secs(9));
    run_until_stalled();
    assert!(r.borrow().is_none());
    assert!(!pending.is_cancelled());
    clock.advance(Duration::from_secs(1));
    run_until_stalled();
    let err = r.borrow_mut().take().expect("done").expect_err("a timeout");
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(
        err.to_string().contains("no response headers within 10s"),
        "{err}"
    );
    assert!(pending.is_cancelled(), "the transport future was dropped");
    assert_eq!(t.request_count(), 1, "a timeout is not retried");
    assert_eq!(t.in_flight(), 0);

    // Headers in time, a body that stops short: the message says which.
    let (resp, body) = FakeResponse::streaming(200);
    t.push(resp);
    let r = start(get_pod(&c));
    body.send(&br#"{"metadata":"#[..]);
    run_until_stalled();
    clock.advance(Duration::from_secs(10));
    run_until_stalled();
    let err = r.borrow_mut().take().expect("done").expect_err("a timeout");
    assert!(
        err.to_string()
            .contains("the response body did not complete within 10s"),
        "{err}"
    );
    assert!(body.is_closed(), "the stalled body was dropped");
}

/// Dropping the request future aborts the exchange.
#[test]
fn dropping_the_request_aborts_it() {
    let (c, t, _clock) = setup(config());
    let pending = t.push_pending();
    let handle = {
        let c = c.clone();
        spawn_local(async move {
            let _ = c.send(&Request::get().resource("pods")).await;
        })
    };
    run_until_stalled();
    assert_eq!(t.in_flight(), 1);
    handle.abort();
    run_until_stalled();
    assert!(pending.is_cancelled());
    assert_eq!(t.in_flight(), 0);
}

/// The token provider is asked once per attempt (rotation is picked up),
/// headers are assembled in order and later ones win.
#[test]
fn token_provider_is_called_per_request() {
    let calls = Rc::new(Cell::new(0u32));
    let k = calls.clone();
    let mut cfg = config()
        .token_provider(move || {
            k.set(k.get() + 1);
            let n = k.get();
            async move { Ok(format!("tok-{n}")) }
        })
        .header("Impersonate-User", "alice");
    cfg.user_agent = Some("kubewasm-test".into());
    let (c, t, clock) = setup(cfg);
    t.push(pod("a"));
    t.push_error(Error::network("x"));
    t.push(pod("a"));
    let _ = start(get_pod(&c));
    let _ = start(get_pod(&c));
    clock.advance(Duration::from_secs(1));
    run_until_stalled();
    let auth: Vec<_> = t
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap_or("").to_string())
        .collect();
    assert_eq!(auth, ["Bearer tok-1", "Bearer tok-2", "Bearer tok-3"]);
    assert_eq!(calls.get(), 3);
    let r = t.last_request().expect("req");
    assert_eq!(r.header("accept"), Some("application/json"));
    assert_eq!(r.header("impersonate-user"), Some("alice"));
    assert_eq!(r.header("user-agent"), Some("kubewasm-test"));
    assert_eq!(
        r.url,
        "https://k8s.example/prefix/api/v1/namespaces/ns/pods/a"
    );
    // A failing provider fails the request without sending it, with its error.
    let (c, t, _clock) = setup(
        config().token_provider(|| async { Err::<String, _>(Error::credentials("no token")) }),
    );
    let r = start(get_pod(&c));
    assert!(matches!(
        r.borrow_mut().take().expect("done"),
        Err(Error::Credentials { .. })
    ));
    assert_eq!(t.request_count(), 0);
}

/// A token provider that never answers fails the request at the timeout,
/// unsent, instead of leaving it pending for ever.
#[test]
fn a_token_provider_that_never_answers_times_out() {
    let (c, t, clock) = setup(Config {
        timeout: Some(Duration::from_secs(2)),
        ..config().token_provider(futures::future::pending::<Result<String, Error>>)
    });
    let r = start(get_pod(&c));
    run_until_stalled();
    clock.advance(Duration::from_millis(1_900));
    run_until_stalled();
    assert!(r.borrow().is_none(), "still waiting within the timeout");
    clock.advance(Duration::from_millis(200));
    run_until_stalled();
    let err = r.borrow_mut().take().expect("done").expect_err("an error");
    assert!(err.is_timeout(), "{err}");
    assert!(err.to_string().contains("token provider"), "{err}");
    assert_eq!(t.request_count(), 0);
}

/// RC-04: the client-side limiter paces requests on the clock; watches are
/// exempt.
#[test]
fn rc_04_rate_limiter_paces_requests_but_not_watches() {
    let (c, t, clock) = setup(Config {
        rate_limit: Some(RateLimit { qps: 2.0, burst: 2 }),
        ..config()
    });
    t.set_handler(|req| {
        Some(Ok(if req.is_watch {
            FakeResponse::streaming(200).0
        } else {
            FakeResponse::json(200, &json!({"metadata": {"name": "x"}}))
        }))
    });
    let done: Vec<_> = (0..4).map(|_| start(get_pod(&c))).collect();
    let finished = || done.iter().filter(|d| d.borrow().is_some()).count();
    assert_eq!(finished(), 2, "burst of 2");
    for _ in 0..3 {
        let c = c.clone();
        let _ = start(async move { c.watch(&Request::get().resource("pods")).await.map(|_| ()) });
    }
    assert_eq!(t.request_count(), 5, "watches are not limited");
    clock.advance(Duration::from_millis(499));
    run_until_stalled();
    assert_eq!(finished(), 2);
    clock.advance(Duration::from_millis(1));
    run_until_stalled();
    assert_eq!(finished(), 3);
    clock.advance(Duration::from_millis(500));
    run_until_stalled();
    assert_eq!(finished(), 4);
}

/// RC-03: a non-200 watch answer is an API error from its Status; a watch
/// stream carries the events; the watch URL has watch=true.
#[test]
fn rc_03_watch_errors_and_events() {
    let (c, t, _clock) = setup(config());
    t.push(FakeResponse::status(410, "Expired", "too old"));
    let c2 = c.clone();
    let r = start(async move {
        c2.watch(&Request::get().resource("pods").watch_params(&WatchParams {
            resource_version: Some("5".into()),
            ..Default::default()
        }))
        .await
        .map(|_| ())
    });
    let err = r.borrow_mut().take().expect("done").expect_err("410");
    assert!(err.is_gone(), "{err:?}");
    assert_eq!(t.request_count(), 1, "410 is not retried");
    assert_eq!(
        t.last_request().expect("req").url,
        "https://k8s.example/prefix/api/v1/pods?watch=true&resourceVersion=5"
    );

    let (resp, tx) = FakeResponse::streaming(200);
    t.push(resp);
    let c2 = c.clone();
    let events = start(async move {
        let w = c2.watch(&Request::get().resource("pods")).await?;
        Ok::<_, Error>(
            w.map(|e| e.map(|e| e.type_name()))
                .collect::<Vec<_>>()
                .await,
        )
    });
    tx.send(&b"{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}\n"[..]);
    drop(tx);
    run_until_stalled();
    let events = events.borrow_mut().take().expect("done").expect("ok");
    assert_eq!(events, vec![Ok("ADDED"), Ok("ERROR")]);
    assert_eq!(t.open_bodies(), 0);
}

/// LIST pages decode; the request carries the list parameters.
#[test]
fn send_list_decodes_a_page() {
    let (c, t, _clock) = setup(config());
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "PodList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "9", "continue": "next"},
                "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]}),
    ));
    let c2 = c.clone();
    let r = start(async move {
        c2.send_list(&Request::get().resource("pods").list_params(&ListParams {
            limit: Some(2),
            ..Default::default()
        }))
        .await
    });
    let page = r.borrow_mut().take().expect("done").expect("ok");
    assert_eq!(page.items.len(), 2);
    assert_eq!(page.continue_token.as_deref(), Some("next"));
    assert!(t
        .last_request()
        .expect("req")
        .url
        .ends_with("/api/v1/pods?limit=2"));
    // A watch request cannot be sent as a plain request.
    let r = start(async move { c.send(&Request::get().resource("pods").watch()).await });
    assert!(matches!(
        r.borrow_mut().take().expect("done"),
        Err(Error::InvalidRequest { .. })
    ));
}

/// A body over `max_response_bytes` is a typed error; reading stops at the
/// chunk that crosses the limit (the request is aborted) and it is not
/// retried. Exactly at the limit is fine.
#[test]
fn response_bodies_over_the_limit_are_refused_and_the_rest_is_not_read() {
    let limit = 4096;
    let (c, t, _clock) = setup(Config {
        max_response_bytes: limit,
        ..config()
    });
    let list = |c: &Client| {
        let c = c.clone();
        async move { c.send_list(&Request::get().resource("pods")).await }
    };

    // Exactly at the limit, in chunks.
    let token = "x".repeat(limit - 100);
    let mut body =
        format!(r#"{{"kind":"PodList","items":[],"metadata":{{"continue":"{token}"}}}}"#);
    body.push_str(&" ".repeat(limit - body.len()));
    assert_eq!(body.len(), limit);
    t.push(
        FakeResponse::new(200).chunks(body.as_bytes().chunks(1000).map(<[u8]>::to_vec).collect()),
    );
    let r = start(list(&c));
    let page = r.borrow_mut().take().expect("done").expect("at the limit");
    assert_eq!(page.continue_token, Some(token));

    // One byte over, streamed: the error comes at the chunk that crosses
    // the limit, and the body is dropped without waiting for its end.
    let (resp, tx) = FakeResponse::streaming(200);
    t.push(resp);
    let r = start(list(&c));
    assert!(tx.send(vec![b' '; limit]));
    run_until_stalled();
    assert!(r.borrow().is_none(), "at the limit: still reading");
    assert!(!tx.is_closed());
    assert!(tx.send(vec![b' ']));
    run_until_stalled();
    assert_eq!(
        r.borrow_mut().take().expect("done"),
        Err(Error::ResponseTooLarge { limit })
    );
    assert!(tx.is_closed(), "the request was aborted");
    assert_eq!(t.request_count(), 2, "not retried");
    assert!(Error::ResponseTooLarge { limit }
        .to_string()
        .contains("max_response_bytes"));
}

/// An error answer's body is cut, not refused: its status code still
/// classifies it (a 503 is retried).
#[test]
fn a_long_error_body_is_cut_and_keeps_its_status_code() {
    let (c, t, clock) = setup(Config {
        max_response_bytes: 2048,
        ..config()
    });
    t.push(FakeResponse::new(503).body(vec![b'<'; 1 << 20]));
    t.push(pod("a"));
    let r = start(get_pod(&c));
    clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(t.request_count(), 2, "the 503 was retried");
    assert_eq!(
        r.borrow_mut().take().expect("done").expect("ok").name(),
        "a"
    );

    t.push(FakeResponse::status(404, "NotFound", &"n".repeat(4096)));
    let r = start(get_pod(&c));
    let e = r.borrow_mut().take().expect("done").expect_err("404");
    assert_eq!(e.code(), Some(404), "{e}");
}

#[test]
fn natively_client_new_is_a_typed_error_naming_with_transport() {
    // The same code checks on every target; only wasm32 has `fetch`.
    match Client::new(Config::new("https://cluster.example")) {
        Err(Error::InvalidConfig { message }) => {
            assert!(message.contains("with_transport"), "{message}")
        }
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
    // Configuration errors come first, as on wasm32.
    match Client::new(Config::new("cluster.example")) {
        Err(Error::InvalidConfig { message }) => {
            assert!(message.contains("must start with"), "{message}")
        }
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

/// A LIST streams: the timeout bounds each wait for more of the body, so a
/// big list that keeps arriving is not cut off, and one that stalls is.
#[test]
fn a_list_may_take_longer_than_the_timeout_while_it_keeps_arriving() {
    let (c, t, clock) = setup(Config {
        timeout: Some(Duration::from_secs(10)),
        ..config()
    });
    let list = |c: &Client| {
        let c = c.clone();
        async move { c.send_list(&Request::get().resource("pods")).await }
    };
    let (resp, body) = FakeResponse::streaming(200);
    t.push(resp);
    let r = start(list(&c));
    body.send(&br#"{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":["#[..]);
    for i in 0..5 {
        clock.advance(Duration::from_secs(8));
        run_until_stalled();
        let sep = if i == 0 { "" } else { "," };
        body.send(format!(r#"{sep}{{"metadata":{{"name":"p{i}"}}}}"#).into_bytes());
        run_until_stalled();
        assert!(r.borrow().is_none(), "40 s in all, never 10 s without data");
    }
    body.send(&b"]}"[..]);
    body.close();
    run_until_stalled();
    let l = r.borrow_mut().take().expect("done").expect("list");
    assert_eq!(l.items.len(), 5);
    assert_eq!(l.resource_version, "5");

    let (resp, body) = FakeResponse::streaming(200);
    t.push(resp);
    let r = start(list(&c));
    body.send(&br#"{"items":[{"metadata":{"name":"a"}}"#[..]);
    run_until_stalled();
    clock.advance(Duration::from_secs(10));
    run_until_stalled();
    assert!(matches!(
        r.borrow_mut().take().expect("done"),
        Err(Error::Timeout { .. })
    ));
    assert!(body.is_closed(), "the stalled body was dropped");
}

/// A failure `Status` answered with 200 is its error, as client-go's
/// `Result.Into` reads it; a `Status` of success stays an object.
#[test]
fn a_failure_status_with_200_is_an_error_not_an_object() {
    let (c, t, _clock) = setup(config());
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "message": "pods \"a\" not found", "code": 404}),
    ));
    let r = start(get_pod(&c));
    let e = r.borrow_mut().take().expect("done").expect_err("a failure");
    assert_eq!((e.code(), e.reason()), (Some(404), Some("NotFound")));
    t.push(FakeResponse::json(
        200,
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}),
    ));
    let r = start(get_pod(&c));
    assert_eq!(
        r.borrow_mut().take().expect("done").expect("kept").kind(),
        "Status"
    );
}

/// A Retry-After of a day is waited for at most a minute (by a request
/// whose timeout does not end it first).
#[test]
fn a_huge_retry_after_is_capped() {
    let (c, t, clock) = setup(Config {
        timeout: None,
        ..config()
    });
    t.push(FakeResponse::status(429, "TooManyRequests", "go away").header("Retry-After", "99999"));
    t.push(pod("a"));
    let r = start(get_pod(&c));
    clock.advance(crate::rest::MAX_RETRY_AFTER - Duration::from_millis(1));
    run_until_stalled();
    assert_eq!(t.request_count(), 1);
    clock.advance(Duration::from_millis(1));
    run_until_stalled();
    assert_eq!(t.request_count(), 2);
    assert!(r.borrow_mut().take().expect("done").is_ok());
}

/// A request marked `server_errors_to_caller` (a reflector's first page and
/// watch) gets a bare 500 back at once, for the reflector's own backoff and
/// status; a 5xx with `Retry-After` is retried.
#[test]
fn server_errors_to_caller_leaves_unasked_server_failures_to_the_caller() {
    let (c, t, clock) = setup(config());
    let list = Request::get()
        .namespace("ns")
        .resource("pods")
        .server_errors_to_caller();
    t.push(FakeResponse::status(500, "InternalError", "boom"));
    let c2 = c.clone();
    let l2 = list.clone();
    let r = start(async move { c2.send_bytes(&l2).await });
    assert_eq!(t.request_count(), 1);
    assert_eq!(
        r.borrow_mut().take().expect("done").unwrap_err().code(),
        Some(500)
    );
    // Asked to retry: it is.
    t.push(FakeResponse::status(503, "ServiceUnavailable", "later").header("Retry-After", "1"));
    t.push(pod("a"));
    let c2 = c.clone();
    let l2 = list.clone();
    let r = start(async move { c2.send_bytes(&l2).await });
    clock.advance(Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(t.request_count(), 3);
    assert!(r.borrow_mut().take().expect("done").is_ok());
    // A version newer than the server has, even with Retry-After: the
    // caller's (a reflector lists at the newest; waiting cannot help a
    // server whose versions went backwards).
    t.push(
        FakeResponse::status(
            504,
            "Timeout",
            "Too large resource version: 90, current: 12",
        )
        .header("Retry-After", "1"),
    );
    t.push(pod("a"));
    let r = start(async move { c.send_bytes(&list).await });
    run_until_stalled();
    assert_eq!(t.request_count(), 4);
    let e = r.borrow_mut().take().expect("done at once").unwrap_err();
    assert!(e.is_too_large_resource_version(), "{e:?}");
}

/// A request marked `waits_to_caller` too (a reflector's first page and
/// watch) gets a server's request to wait back at once, for the reflector to
/// wait and show; without it the client waits and retries.
#[test]
fn waits_to_caller_leaves_a_requested_wait_to_the_caller() {
    for (to_caller, requests, ok) in [(true, 1, false), (false, 2, true)] {
        let (c, t, clock) = setup(config());
        let mut list = Request::get()
            .namespace("ns")
            .resource("pods")
            .server_errors_to_caller();
        if to_caller {
            list = list.waits_to_caller();
        }
        t.push(FakeResponse::status(429, "TooManyRequests", "later").header("Retry-After", "2"));
        t.push(pod("a"));
        let r = start(async move { c.send_bytes(&list).await });
        run_until_stalled();
        clock.advance(Duration::from_secs(2));
        run_until_stalled();
        assert_eq!(t.request_count(), requests);
        let got = r.borrow_mut().take().expect("done");
        assert_eq!(got.is_ok(), ok, "{got:?}");
        if let Err(e) = got {
            assert_eq!(e.retry_after(), Some(Duration::from_secs(2)));
        }
    }
}

/// A failed connection goes to the caller at once only when it asks for that
/// too (a reflector: an unreachable server shows in its status at once); a
/// caller that only takes server errors (a discovery document) still gets
/// the client's retries.
#[test]
fn network_errors_to_caller_leaves_a_failed_connection_to_the_caller() {
    for (to_caller, requests, ok) in [(true, 1, false), (false, 2, true)] {
        let (c, t, clock) = setup(config());
        let mut list = Request::get()
            .namespace("ns")
            .resource("pods")
            .server_errors_to_caller();
        if to_caller {
            list = list.network_errors_to_caller();
        }
        t.push_error(Error::network("connection refused"));
        t.push(pod("a"));
        let r = start(async move { c.send_bytes(&list).await });
        run_until_stalled();
        clock.advance(Duration::from_secs(5));
        run_until_stalled();
        assert_eq!(t.request_count(), requests);
        let got = r.borrow_mut().take().expect("done");
        assert_eq!(got.is_ok(), ok, "{got:?}");
    }
}

/// The codes that say no connection was made, and some that do not.
#[test]
fn unreachable_codes() {
    for code in [
        "ECONNREFUSED",
        "ENOTFOUND",
        "EAI_AGAIN",
        "ConnectionRefused",
    ] {
        assert!(crate::rest::is_unreachable_code(code), "{code}");
    }
    for code in ["ECONNRESET", "EPIPE", "ETIMEDOUT", "UND_ERR_SOCKET", ""] {
        assert!(!crate::rest::is_unreachable_code(code), "{code}");
    }
}

/// A 404 to a list or watch says what was not found (kubectl's "(get
/// deployments)"): the server's message alone names nothing when the
/// resource is unknown, as for `deployments` with its group left off. The
/// note is the error's text only: its `Status` message stays the server's.
/// A 404 for one object says what the server said, which names it; one
/// relaying a note of its own (a shared worker's) is not noted again.
#[test]
fn a_404_to_a_list_or_watch_names_the_resource_and_path() {
    let (c, t, _clock) = setup(config());
    let unknown = "the server could not find the requested resource";
    t.push(FakeResponse::status(404, "NotFound", unknown));
    let c2 = c.clone();
    let r = start(async move {
        c2.send_list(
            &Request::get()
                .resource("deployments")
                .list_params(&ListParams {
                    limit: Some(500),
                    ..Default::default()
                }),
        )
        .await
        .map(|_| ())
    });
    let e = r.borrow_mut().take().expect("done").expect_err("404");
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!("API error: NotFound (404): {unknown} (list deployments: GET /api/v1/deployments)")
    );
    assert_eq!(e.api().expect("api").message, unknown);
    t.push(FakeResponse::status(404, "NotFound", unknown));
    let c2 = c.clone();
    let r = start(async move {
        c2.watch(
            &Request::get()
                .group_version("apps", "v1")
                .namespace("ns")
                .resource("deploymentz")
                .watch_params(&WatchParams::default()),
        )
        .await
        .map(|_| ())
    });
    let e = r.borrow_mut().take().expect("done").expect_err("404");
    assert_eq!(
        e.to_string(),
        format!(
            "API error: NotFound (404): {unknown} \
             (watch deploymentz: GET /apis/apps/v1/namespaces/ns/deploymentz)"
        )
    );
    assert_eq!(e.api().expect("api").message, unknown);
    t.push(FakeResponse::status(
        404,
        "NotFound",
        "pods \"a\" not found",
    ));
    let r = start(get_pod(&c));
    let e = r.borrow_mut().take().expect("done").expect_err("404");
    assert_eq!(e.api().expect("api").message, "pods \"a\" not found");
    assert_eq!(
        e.to_string(),
        "API error: NotFound (404): pods \"a\" not found"
    );
    // A message that names its request already (the worker's list, relayed
    // to a tab that watches): one note.
    let relayed = format!("upstream: {unknown} (list deployments: GET /api/v1/deployments)");
    t.push(FakeResponse::status(404, "NotFound", &relayed));
    let c2 = c.clone();
    let r = start(async move {
        c2.watch(
            &Request::get()
                .resource("deployments")
                .watch_params(&WatchParams::default()),
        )
        .await
        .map(|_| ())
    });
    let e = r.borrow_mut().take().expect("done").expect_err("404");
    assert_eq!(
        e.to_string(),
        format!("API error: NotFound (404): {relayed}")
    );
    assert_eq!(e.api().expect("api").message, relayed);
}
