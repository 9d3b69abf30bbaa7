//! `Config::max_in_flight`: never more requests waiting for headers than the
//! cap; the rest queue and proceed as slots free up.

use std::cell::Cell;
use std::rc::Rc;

use crate::rest::{Client, Config, FakeResponse, FakeTransport, Request};
use crate::rt::{run_until_stalled, spawn_local, FakeClock};

#[test]
fn at_most_cap_requests_wait_for_headers() {
    let t = FakeTransport::new();
    let clock = FakeClock::new();
    let mut cfg = Config::new("http://k8s.test");
    cfg.rate_limit = None;
    cfg.max_in_flight = Some(2);
    let c = Client::with_transport(cfg, Rc::new(t.clone()), clock.shared()).expect("client");
    let replies: Vec<_> = (0..5).map(|_| t.push_pending()).collect();
    let done = Rc::new(Cell::new(0));
    for i in 0..5 {
        let (c, done) = (c.clone(), done.clone());
        spawn_local(async move {
            let r = c
                .send(&Request::get().core().resource("pods").name(format!("p{i}")))
                .await;
            assert!(r.is_ok(), "{r:?}");
            done.set(done.get() + 1);
        });
    }
    run_until_stalled();
    assert_eq!(t.request_count(), 2, "only the cap reaches the transport");
    let mut replies = replies.into_iter();
    for expected_sent in [3, 4, 5, 5, 5] {
        if let Some(r) = replies.next() {
            r.respond(FakeResponse::json(
                200,
                &serde_json::json!({"metadata": {"name": "p"}}),
            ));
        }
        run_until_stalled();
        assert!(t.in_flight() <= 2);
        assert_eq!(t.request_count(), expected_sent);
    }
    assert_eq!(done.get(), 5);
}
