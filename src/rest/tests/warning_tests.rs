//! Warning headers reach the configured handler from every kind of response.
use std::cell::RefCell;
use std::rc::Rc;

use serde_json::json;

use crate::rest::{
    Client, Config, DedupWarnings, FakeResponse, FakeTransport, Request, SharedWarningHandler,
    Warning, WatchParams,
};
use crate::rt::{block_on, FakeClock};

fn client(seen: &Rc<RefCell<Vec<String>>>, dedup: bool) -> (Client, FakeTransport) {
    let sink = seen.clone();
    let record = move |w: &Warning| sink.borrow_mut().push(format!("{} {}", w.code, w.text));
    let handler = if dedup {
        SharedWarningHandler::new(DedupWarnings::new(record))
    } else {
        SharedWarningHandler::new(record)
    };
    let config = Config {
        rate_limit: None,
        max_retries: 0,
        warning_handler: Some(handler),
        ..Config::new("https://k8s.example")
    };
    let t = FakeTransport::new();
    let c = Client::with_transport(config, Rc::new(t.clone()), FakeClock::new().shared()).unwrap();
    (c, t)
}

fn deprecated() -> FakeResponse {
    FakeResponse::json(200, &json!({"kind": "Pod", "metadata": {"name": "a"}})).header(
        "Warning",
        r#"299 - "v1beta1 is deprecated", 299 - "second""#,
    )
}

#[test]
fn warnings_of_successes_errors_and_watches_reach_the_handler() {
    let seen: Rc<RefCell<Vec<String>>> = Rc::default();
    let (c, t) = client(&seen, false);
    let get = Request::get().namespace("ns").resource("pods").name("a");
    t.push(deprecated());
    block_on(c.send_object(&get)).unwrap();
    assert_eq!(*seen.borrow(), ["299 v1beta1 is deprecated", "299 second"]);

    seen.borrow_mut().clear();
    t.push(
        FakeResponse::status(422, "Invalid", "denied")
            .header("Warning", r#"299 - "admission: label missing""#),
    );
    assert!(block_on(c.send_object(&get)).is_err());
    assert_eq!(*seen.borrow(), ["299 admission: label missing"]);

    seen.borrow_mut().clear();
    t.push(
        FakeResponse::new(200)
            .header("Warning", r#"199 agent "not from the API server""#)
            .body(""),
    );
    let watch = Request::get()
        .resource("pods")
        .watch_params(&WatchParams::default());
    block_on(c.watch(&watch)).unwrap();
    assert_eq!(*seen.borrow(), ["199 not from the API server"]);
}

#[test]
fn dedup_handler_sees_each_message_once_across_requests() {
    let seen: Rc<RefCell<Vec<String>>> = Rc::default();
    let (c, t) = client(&seen, true);
    let get = Request::get().namespace("ns").resource("pods").name("a");
    for _ in 0..3 {
        t.push(deprecated());
        block_on(c.send_object(&get)).unwrap();
    }
    assert_eq!(*seen.borrow(), ["299 v1beta1 is deprecated", "299 second"]);
}
