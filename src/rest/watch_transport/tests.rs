//! The transport choice and the per-origin budget, with a scripted host
//! that pretends to be a browser (pooled connections, WebSocket, Resource
//! Timing). Each test runs on its own thread, so each has its own budget.
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::mpsc;
use futures::future::LocalBoxFuture;
use futures::StreamExt;

use super::*;
use crate::rest::fake_transport::BodySender;
use crate::rest::{
    Config, FakeResponse, FakeTransport, HttpRequest, HttpResponse, Transport, WatchEvent,
};
use crate::rt::Backoff;
use crate::rt::{run_until_stalled, spawn_local, FakeClock};

type Sender = mpsc::UnboundedSender<Result<Vec<u8>, Error>>;

/// A browser-like host: fetch from a [`FakeTransport`], WebSockets scripted.
#[derive(Default)]
struct Host {
    http: FakeTransport,
    limited: bool,
    no_websocket: bool,
    protocol: RefCell<Option<String>>,
    /// Outcomes of the next handshakes (`Ok` when empty).
    handshakes: RefCell<VecDeque<Error>>,
    opened: RefCell<Vec<SocketRequest>>,
    sockets: RefCell<Vec<Sender>>,
    /// The bodies of fetch watches, fed by the test.
    bodies: Rc<RefCell<Vec<BodySender>>>,
}

impl Transport for Host {
    fn send(&self, req: HttpRequest) -> LocalBoxFuture<'static, Result<HttpResponse, Error>> {
        self.http.send(req)
    }
    fn open_websocket(
        &self,
        req: SocketRequest,
    ) -> LocalBoxFuture<'static, Result<BodyStream, Error>> {
        self.opened.borrow_mut().push(req);
        if let Some(e) = self.handshakes.borrow_mut().pop_front() {
            return Box::pin(async move { Err(e) });
        }
        let (tx, rx) = mpsc::unbounded();
        self.sockets.borrow_mut().push(tx);
        Box::pin(async move { Ok(rx.boxed_local()) })
    }
    fn supports_websocket(&self) -> bool {
        !self.no_websocket
    }
    fn is_connection_limited(&self) -> bool {
        self.limited
    }
    fn origin_protocol(&self, _origin: &str) -> Option<String> {
        self.protocol.borrow().clone()
    }
}

impl Host {
    fn new(limited: bool, no_websocket: bool) -> Rc<Host> {
        let host = Host {
            limited,
            no_websocket,
            ..Host::default()
        };
        host.stream_fetches();
        Rc::new(host)
    }

    /// Every fetch from now on gets a streaming 200 whose body the test holds.
    fn stream_fetches(&self) {
        let bodies = self.bodies.clone();
        self.http.set_handler(move |_| {
            let (resp, tx) = FakeResponse::streaming(200);
            bodies.borrow_mut().push(tx);
            Some(Ok(resp))
        });
    }

    fn browser() -> Rc<Host> {
        Host::new(true, false)
    }

    /// Sockets whose reader is still there.
    fn open_sockets(&self) -> usize {
        self.sockets
            .borrow()
            .iter()
            .filter(|s| !s.is_closed())
            .count()
    }

    fn socket(&self, i: usize) -> Sender {
        self.sockets.borrow()[i].clone()
    }
}

const BASE: &str = "http://k8s.example:8001";

fn config(mode: WatchTransportMode) -> Config {
    Config {
        watch_transport: mode,
        rate_limit: None,
        backoff: Backoff {
            jitter: 0.0,
            ..crate::rest::DEFAULT_RETRY_BACKOFF
        },
        ..Config::new(BASE).bearer_token("tok/en")
    }
}

fn client(host: &Rc<Host>, cfg: Config) -> (Client, FakeClock) {
    let clock = FakeClock::new();
    let c = Client::with_transport(cfg, host.clone(), clock.shared()).expect("client");
    (c, clock)
}

fn start<T: 'static>(f: impl Future<Output = T> + 'static) -> Rc<RefCell<Option<T>>> {
    let slot = Rc::new(RefCell::new(None));
    let s = slot.clone();
    spawn_local(async move {
        *s.borrow_mut() = Some(f.await);
    });
    run_until_stalled();
    slot
}

fn pods() -> Request {
    Request::get().resource("pods")
}

/// Open one watch; for a fetch watch, also the sender of its body.
fn open(c: &Client, host: &Host) -> (WatchStream, Option<BodySender>) {
    let before = host.bodies.borrow().len();
    let c2 = c.clone();
    let slot = start(async move { c2.watch(&pods()).await });
    let s = slot.borrow_mut().take().expect("opened").expect("watch");
    let after = host.bodies.borrow().len();
    let tx = (after > before).then(|| host.bodies.borrow_mut().remove(before));
    (s, tx)
}

fn transport(s: &WatchStream) -> (WatchTransport, TransportReason) {
    let c = s.transport().expect("choice");
    (c.transport, c.reason)
}

#[test]
fn past_the_page_s_websockets_a_watch_waits_instead_of_taking_a_connection() {
    // Chromium refuses a page's WebSockets past 255: a refused one would
    // fall back to fetch, past the budget, and hold a connection the page's
    // own requests need.
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::Auto);
    cfg.fetch_watches_per_origin = 0;
    let (c, _clock) = client(&host, cfg);
    let open: Vec<_> = (0..MAX_PAGE_WEBSOCKETS).map(|_| open(&c, &host)).collect();
    assert!(open
        .iter()
        .all(|(s, _)| transport(s) == (WatchTransport::WebSocket, TransportReason::OverBudget)));
    let c2 = c.clone();
    let refused = start(async move { c2.watch(&pods()).await.map(|_| ()) });
    let err = refused
        .borrow_mut()
        .take()
        .expect("at once")
        .expect_err("waits");
    assert!(matches!(err, Error::Network { .. }), "{err:?}");
    assert!(err.to_string().contains("WebSocket watches"), "{err}");
    assert_eq!(
        host.opened.borrow().len(),
        MAX_PAGE_WEBSOCKETS,
        "no handshake tried"
    );
    assert_eq!(host.http.request_count(), 0, "no fetch either");
    // One closes: the next watch opens.
    drop(open);
    let (s, _) = super::tests::open(&c, &host);
    assert_eq!(transport(&s).0, WatchTransport::WebSocket);
}

#[test]
fn budget_sends_the_fifth_watch_over_websocket_and_frees_on_drop() {
    let host = Host::browser();
    let (c, _clock) = client(&host, config(WatchTransportMode::Auto));
    let origin = "http://k8s.example:8001";
    let mut fetches = Vec::new();
    for i in 0..4 {
        let (s, tx) = open(&c, &host);
        assert_eq!(
            transport(&s),
            (WatchTransport::Fetch, TransportReason::WithinBudget)
        );
        assert_eq!(s.transport().map(|t| t.fetch_watches), Some(i));
        assert!(tx.is_some());
        fetches.push((s, tx));
    }
    assert_eq!(open_fetch_watches(origin), 4);
    let (ws, tx) = open(&c, &host);
    assert!(tx.is_none());
    let choice = ws.transport().expect("choice").clone();
    assert_eq!(choice.transport, WatchTransport::WebSocket);
    assert_eq!(choice.reason, TransportReason::OverBudget);
    assert!(choice.budget_forced());
    assert_eq!((choice.origin.as_str(), choice.budget), (origin, 4));
    // The token travels in the subprotocol, next to exactly one other name.
    let req = host.opened.borrow()[0].clone();
    assert_eq!(req.url, "http://k8s.example:8001/api/v1/pods?watch=true");
    assert_eq!(
        req.protocols,
        [
            WATCH_SUBPROTOCOL,
            "base64url.bearer.authorization.k8s.io.dG9rL2Vu"
        ]
    );
    assert_eq!(open_fetch_watches(origin), 4, "a WebSocket is not counted");

    // A fetch watch that ends frees its place at once.
    let (s0, tx0) = fetches.remove(0);
    drop(tx0);
    drop(s0);
    assert_eq!(open_fetch_watches(origin), 3);
    let (s, _tx) = open(&c, &host);
    assert_eq!(transport(&s).0, WatchTransport::Fetch);
    drop(ws);
    assert_eq!(
        host.open_sockets(),
        0,
        "dropping the stream closes the socket"
    );
}

#[test]
fn a_clean_body_end_releases_the_lease_before_the_stream_is_dropped() {
    let host = Host::browser();
    let (c, _clock) = client(&host, config(WatchTransportMode::Fetch));
    let (mut s, tx) = open(&c, &host);
    assert_eq!(
        transport(&s),
        (WatchTransport::Fetch, TransportReason::Configured)
    );
    assert_eq!(open_fetch_watches(BASE), 1);
    drop(tx);
    let end = start(async move { s.next().await.is_none() });
    assert_eq!(*end.borrow(), Some(true));
    assert_eq!(open_fetch_watches(BASE), 0);
}

#[test]
fn websocket_messages_decode_like_fetch_lines_and_closes_are_typed() {
    let host = Host::browser();
    let (c, _clock) = client(&host, config(WatchTransportMode::WebSocket));
    let (mut s, _) = open(&c, &host);
    assert_eq!(
        transport(&s),
        (WatchTransport::WebSocket, TransportReason::Configured)
    );
    let sock = host.socket(0);
    // One message per event; a message need not end in a newline.
    sock.unbounded_send(Ok(
        br#"{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"5"}}}"#
            .to_vec(),
    ))
    .unwrap();
    sock.unbounded_send(Ok(b"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"6\"}}}\n".to_vec()))
        .unwrap();
    sock.unbounded_send(Err(close_error(1006, "", false).expect("an error")))
        .unwrap();
    let got = start(async move {
        let mut out = Vec::new();
        while let Some(ev) = s.next().await {
            out.push(ev);
        }
        out
    });
    let got = got.borrow_mut().take().expect("ended");
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(matches!(&got[0], Ok(WatchEvent::Added(o)) if o.resource_version() == "5"));
    assert!(matches!(&got[1], Ok(WatchEvent::Modified(o)) if o.resource_version() == "6"));
    match &got[2] {
        Err(e) => {
            assert!(e.is_network(), "{e:?}");
            assert!(e.to_string().contains("1006"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn websocket_watch_has_the_idle_watchdog() {
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::WebSocket);
    cfg.watch_idle_timeout = Some(Duration::from_secs(30));
    let (c, clock) = client(&host, cfg);
    let (mut s, _) = open(&c, &host);
    let next = start(async move { s.next().await });
    clock.advance(Duration::from_secs(31));
    run_until_stalled();
    let got = next.borrow_mut().take().expect("watchdog fired");
    assert!(matches!(got, Some(Err(Error::Timeout { .. }))), "{got:?}");
    assert_eq!(host.open_sockets(), 0, "the watchdog closed the socket");
}

#[test]
fn hosts_without_a_shared_pool_keep_fetch() {
    let host = Host::new(false, false); // Node, workerd
    let (c, _clock) = client(&host, config(WatchTransportMode::Auto));
    let mut keep = Vec::new();
    for _ in 0..6 {
        let w = open(&c, &host);
        assert_eq!(
            transport(&w.0),
            (WatchTransport::Fetch, TransportReason::NotLimited)
        );
        keep.push(w);
    }
    assert!(host.opened.borrow().is_empty());
}

#[test]
fn an_accept_header_is_left_behind_past_the_budget_and_when_websocket_is_forced() {
    // A metadata-only watch: the `Accept` asks for PartialObjectMetadata.
    let metadata = || pods().header("Accept", "application/json;as=PartialObjectMetadata");
    let watch = |c: &Client| {
        let c = c.clone();
        let r = start(async move { c.watch(&metadata()).await });
        let s = r.borrow_mut().take().expect("opened").expect("watch");
        s
    };
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::Auto);
    cfg.fetch_watches_per_origin = 1;
    let (c, _clock) = client(&host, cfg.clone());
    let first = watch(&c);
    assert_eq!(
        transport(&first),
        (WatchTransport::Fetch, TransportReason::WithinBudget),
        "within the budget it asks over fetch"
    );
    let second = watch(&c);
    assert_eq!(
        transport(&second),
        (WatchTransport::WebSocket, TransportReason::OverBudget)
    );
    assert_eq!(open_fetch_watches(BASE), 1, "no connection past the budget");
    drop((first, second));

    let (c, _clock) = client(&host, config(WatchTransportMode::WebSocket));
    assert_eq!(transport(&watch(&c)).0, WatchTransport::WebSocket);
}

#[test]
fn multiplexed_origins_headers_and_missing_websocket_keep_fetch() {
    let host = Host::browser();
    *host.protocol.borrow_mut() = Some("h2".into());
    let mut cfg = config(WatchTransportMode::Auto);
    cfg.fetch_watches_per_origin = 1;
    let (c, _clock) = client(&host, cfg.clone());
    let a = open(&c, &host);
    let b = open(&c, &host);
    assert_eq!(transport(&a.0).1, TransportReason::WithinBudget);
    assert_eq!(
        transport(&b.0),
        (WatchTransport::Fetch, TransportReason::Multiplexed)
    );
    drop((a, b));

    let host = Host::browser();
    *host.protocol.borrow_mut() = Some("http/1.1".into());
    let (c, _clock) = client(&host, cfg.clone().header("Impersonate-User", "jane"));
    let a = open(&c, &host);
    let b = open(&c, &host);
    assert_eq!(
        transport(&b.0),
        (WatchTransport::Fetch, TransportReason::NeedsHeaders)
    );
    drop((a, b));
    // Forced, the same request is refused rather than sent without them.
    let mut forced = cfg.clone().header("Impersonate-User", "jane");
    forced.watch_transport = WatchTransportMode::WebSocket;
    let (c, _clock) = client(&host, forced);
    let c2 = c.clone();
    let r = start(async move { c2.watch(&pods()).await.map(|_| ()) });
    assert!(
        matches!(
            r.borrow_mut().take(),
            Some(Err(Error::InvalidConfig { .. }))
        ),
        "forced WebSocket with headers"
    );

    let host = Host::new(true, true);
    let (c, _clock) = client(&host, cfg);
    let _a = open(&c, &host);
    let b = open(&c, &host);
    assert_eq!(transport(&b.0).1, TransportReason::NoWebSocket);
}

/// A watch beyond a budget of 0 whose handshake fails, with its fallback
/// fetch answered by `answer`; returns the client and how the watch ended.
fn handshake_fails_and_fetch_gets(
    host: &Rc<Host>,
    answer: impl Fn() -> Result<FakeResponse, Error> + 'static,
) -> (Client, Result<WatchStream, Error>) {
    // A refused handshake is tried once more before the fallback.
    host.handshakes
        .borrow_mut()
        .push_back(handshake_error("ws://k8s.example:8001/api/v1/pods"));
    handshake_ends_and_fetch_gets(
        host,
        handshake_error("ws://k8s.example:8001/api/v1/pods"),
        answer,
    )
}

fn handshake_ends_and_fetch_gets(
    host: &Rc<Host>,
    handshake: Error,
    answer: impl Fn() -> Result<FakeResponse, Error> + 'static,
) -> (Client, Result<WatchStream, Error>) {
    let mut cfg = config(WatchTransportMode::Auto);
    cfg.fetch_watches_per_origin = 0;
    cfg.max_retries = 0;
    let (c, _clock) = client(host, cfg);
    host.handshakes.borrow_mut().push_back(handshake);
    host.http.set_handler(move |_| Some(answer()));
    let c2 = c.clone();
    let ended = start(async move { c2.watch(&pods()).await });
    let ended = ended.borrow_mut().take().expect("done");
    host.stream_fetches();
    (c, ended)
}

/// The next watch over the budget opens a WebSocket: no mark was kept.
fn websocket_is_tried_again(c: &Client, host: &Host) {
    let tried = host.opened.borrow().len();
    let (s, _) = open(c, host);
    assert_eq!(
        transport(&s),
        (WatchTransport::WebSocket, TransportReason::OverBudget)
    );
    assert_eq!(host.opened.borrow().len(), tried + 1);
}

#[test]
fn a_handshake_failing_while_fetch_fails_too_does_not_keep_websocket_off() {
    // The server is down: the handshake and the fetch it falls back to both
    // fail. Once it is back, watches beyond the budget use WebSocket again
    // at once instead of piling onto fetch for a minute.
    let host = Host::browser();
    let (c, ended) =
        handshake_fails_and_fetch_gets(&host, || Err(Error::network("connection refused")));
    let err = ended.err().expect("no watch");
    assert!(matches!(err, Error::Network { .. }), "{err:?}");
    assert_eq!(host.opened.borrow().len(), 2, "refused twice, then fetch");
    websocket_is_tried_again(&c, &host);
}

#[test]
fn a_handshake_failing_while_fetch_is_refused_too_does_not_keep_websocket_off() {
    // The server refuses the request itself (a resourceVersion a restarted
    // server does not have yet, a 504): it answered the upgrade the same
    // way, so WebSocket is tried again for the next watch.
    let host = Host::browser();
    let (c, ended) = handshake_fails_and_fetch_gets(&host, || {
        Ok(FakeResponse::status(
            504,
            "Timeout",
            "too large resource version",
        ))
    });
    assert_eq!(ended.err().and_then(|e| e.code()), Some(504));
    websocket_is_tried_again(&c, &host);
}

#[test]
fn a_handshake_timing_out_while_fetch_is_answered_keeps_websocket_off() {
    // The server answers fetch (even with an error): a proxy holds upgrades
    // back, so WebSocket is what failed, and it is not tried for a minute.
    let host = Host::browser();
    let (c, ended) =
        handshake_ends_and_fetch_gets(&host, Error::timeout("no upgrade in 30 s"), || {
            Ok(FakeResponse::status(403, "Forbidden", "no"))
        });
    assert_eq!(ended.err().and_then(|e| e.code()), Some(403));
    let (s, _) = open(&c, &host);
    assert_eq!(transport(&s).1, TransportReason::WebSocketFailed);
    assert_eq!(host.opened.borrow().len(), 1, "not tried again");
}

#[test]
fn auto_falls_back_to_fetch_when_the_handshake_fails_and_retries_a_minute_later() {
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::Auto);
    cfg.fetch_watches_per_origin = 0;
    let (c, clock) = client(&host, cfg);
    for _ in 0..2 {
        host.handshakes
            .borrow_mut()
            .push_back(handshake_error("ws://k8s.example:8001/api/v1/pods"));
    }
    let (s, tx) = open(&c, &host);
    assert!(tx.is_some());
    let choice = s.transport().expect("choice");
    assert_eq!(
        (choice.transport, choice.reason),
        (WatchTransport::Fetch, TransportReason::WebSocketFailed)
    );
    assert!(choice.budget_forced());
    assert_eq!(host.opened.borrow().len(), 2, "tried twice, then fetch");
    // Within the minute, WebSocket is not tried again.
    let (s2, _) = open(&c, &host);
    assert_eq!(transport(&s2).1, TransportReason::WebSocketFailed);
    assert_eq!(host.opened.borrow().len(), 2);
    clock.advance(Duration::from_secs(61));
    let (s3, _) = open(&c, &host);
    assert_eq!(
        transport(&s3),
        (WatchTransport::WebSocket, TransportReason::OverBudget)
    );
}

#[test]
fn a_handshake_refused_once_is_tried_again_before_fetch_takes_a_connection_past_the_budget() {
    // A handshake sent while the server was down, reported failed once it is
    // back: the second one opens, and the budget holds.
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::Auto);
    cfg.fetch_watches_per_origin = 0;
    let (c, _clock) = client(&host, cfg);
    host.handshakes
        .borrow_mut()
        .push_back(handshake_error("ws://k8s.example:8001/api/v1/pods"));
    let (s, _) = open(&c, &host);
    assert_eq!(
        transport(&s),
        (WatchTransport::WebSocket, TransportReason::OverBudget)
    );
    assert_eq!(host.opened.borrow().len(), 2);
    websocket_is_tried_again(&c, &host);
}

#[test]
fn auto_mode_tries_a_refused_handshake_again_at_once_for_a_caller_that_retries_itself_too() {
    // A reflector past the budget: the second handshake is not a retry of
    // the caller's but what keeps fetch from taking a connection.
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::Auto);
    cfg.fetch_watches_per_origin = 0;
    cfg.max_retries = 5;
    let (c, _clock) = client(&host, cfg);
    host.handshakes
        .borrow_mut()
        .push_back(handshake_error("ws://k8s.example:8001/api/v1/pods"));
    let c2 = c.clone();
    let r = start(async move { c2.watch(&pods().network_errors_to_caller()).await });
    let s = r.borrow_mut().take().expect("opened with no wait");
    let s = s.expect("the second handshake opens");
    assert_eq!(
        transport(&s),
        (WatchTransport::WebSocket, TransportReason::OverBudget)
    );
    assert_eq!(host.opened.borrow().len(), 2);
}

#[test]
fn forced_websocket_retries_failed_handshakes_with_backoff() {
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::WebSocket);
    cfg.max_retries = 2;
    let (c, clock) = client(&host, cfg);
    for _ in 0..3 {
        host.handshakes
            .borrow_mut()
            .push_back(handshake_error("ws://x"));
    }
    let c2 = c.clone();
    let r = start(async move { c2.watch(&pods()).await.map(|_| ()) });
    assert_eq!(host.opened.borrow().len(), 1);
    clock.advance(Duration::from_millis(200));
    run_until_stalled();
    assert_eq!(host.opened.borrow().len(), 2);
    clock.advance(Duration::from_millis(400));
    run_until_stalled();
    assert_eq!(host.opened.borrow().len(), 3);
    let got = r.borrow_mut().take().expect("gave up");
    assert!(matches!(got, Err(Error::Network { .. })), "{got:?}");
    // The fetch that asked why opened (the server answers watches): closed
    // again, and the handshake failure stands.
    assert_eq!(host.http.request_count(), 1);
    assert_eq!(host.http.open_bodies(), 0);
}

#[test]
fn forced_websocket_leaves_a_failed_handshake_to_a_caller_that_retries_itself() {
    // A reflector reports each network error and backs off: retried here,
    // its status would read `watching` for the whole series of handshakes.
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::WebSocket);
    cfg.max_retries = 5;
    let (c, _clock) = client(&host, cfg);
    host.handshakes
        .borrow_mut()
        .push_back(handshake_error("ws://x"));
    host.http
        .set_handler(|_| Some(Err(Error::network("connection refused"))));
    let c2 = c.clone();
    let r = start(async move {
        c2.watch(&pods().network_errors_to_caller())
            .await
            .map(|_| ())
    });
    let got = r.borrow_mut().take().expect("failed at once");
    assert!(matches!(got, Err(Error::Network { .. })), "{got:?}");
    assert_eq!(host.opened.borrow().len(), 1, "one handshake");
}

#[test]
fn forced_websocket_learns_why_handshakes_fail_from_one_fetch() {
    // A restarted server does not have the watch's resourceVersion: it
    // refuses before the upgrade, which a browser reports as a failed
    // handshake. The fetch shows the 504, which makes the reflector relist.
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::WebSocket);
    cfg.max_retries = 0;
    let (c, _clock) = client(&host, cfg);
    host.handshakes
        .borrow_mut()
        .push_back(handshake_error("ws://x"));
    host.http.set_handler(|_| {
        Some(Ok(FakeResponse::status(
            504,
            "Timeout",
            "Too large resource version: 110, current: 3",
        )))
    });
    let c2 = c.clone();
    let r = start(async move { c2.watch(&pods()).await.map(|_| ()) });
    run_until_stalled();
    let got = r.borrow_mut().take().expect("done");
    match got {
        Err(e) => assert!(e.is_too_large_resource_version(), "{e:?}"),
        Ok(()) => panic!("the watch opened"),
    }
    assert_eq!(host.http.request_count(), 1);
}

#[test]
fn no_token_no_subprotocol() {
    let host = Host::browser();
    let mut cfg = config(WatchTransportMode::WebSocket);
    cfg.auth = Auth::None;
    let (c, _clock) = client(&host, cfg);
    let _w = open(&c, &host);
    assert!(host.opened.borrow()[0].protocols.is_empty());
}

#[test]
fn helpers() {
    assert_eq!(
        origin_of("HTTPS://K8s.Example:6443/prefix/api?x"),
        "https://k8s.example:6443"
    );
    assert_eq!(origin_of("http://h"), "http://h");
    assert_eq!(origin_of("/k8s/api/v1/pods"), "");
    assert_eq!(
        websocket_url("https://h:6443/api/v1/pods?watch=true").as_deref(),
        Some("wss://h:6443/api/v1/pods?watch=true")
    );
    assert_eq!(websocket_url("http://h/x").as_deref(), Some("ws://h/x"));
    assert_eq!(websocket_url("/x"), None);
    // Unpadded base64url, as Go's RawURLEncoding.
    assert_eq!(
        bearer_subprotocol("a"),
        format!("{BEARER_PROTOCOL_PREFIX}YQ")
    );
    assert_eq!(
        bearer_subprotocol("ab?"),
        format!("{BEARER_PROTOCOL_PREFIX}YWI_")
    );
    assert_eq!(
        bearer_subprotocol("\u{fb}\u{ff}"),
        format!("{BEARER_PROTOCOL_PREFIX}w7vDvw")
    );
    for clean in [(1000, true), (1001, false), (1005, true)] {
        assert!(close_error(clean.0, "", clean.1).is_none(), "{clean:?}");
    }
    for bad in [(1005, false), (1006, false), (1011, true), (4000, true)] {
        let e = close_error(bad.0, "bye", bad.1).expect("error");
        assert!(e.is_network() && e.to_string().contains("bye"), "{e}");
    }
    assert!(is_multiplexed("h2") && is_multiplexed("h3-29") && !is_multiplexed("http/1.1"));
}

/// A thread that ends with a watch task still pending drops its lease while
/// the thread's other locals are being torn down: that must not abort.
#[test]
fn a_lease_dropped_during_thread_teardown_is_harmless() {
    std::thread::spawn(|| {
        // The pool first, then the budget: torn down in the other order, so
        // the budget is gone when the pending task (and its lease) drops.
        spawn_local(async {});
        run_until_stalled();
        let lease = FetchLease::take("https://k8s.example", None);
        assert_eq!(open_fetch_watches("https://k8s.example"), 1);
        spawn_local(async move {
            let _held = lease;
            futures::future::pending::<()>().await;
        });
        run_until_stalled();
    })
    .join()
    .expect("the thread ends without a panic");
}
