use std::rc::Rc;
use std::time::Duration;

use futures::StreamExt;

use crate::rest::fake_transport::BodySender;
use crate::rest::watch::{decode_event, EventDecoder};
use crate::rest::{Error, FakeResponse, FakeTransport, WatchEvent, WatchStream};
use crate::rt::{run_until_stalled, spawn_local, FakeClock};

const INPUT: &str = concat!(
    r#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"café-☕","namespace":"日本","resourceVersion":"1","labels":{"app":"wëb"}},"spec":{"note":"🚀 \"quoted\" \\ {not a brace}"}}}"#,
    "\r\n\n",
    r#"{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"café-☕","namespace":"日本","resourceVersion":"2"},"status":{"message":"ünïcödé ✓"}}}"#,
    "\n   \n",
    r#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"3","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
    "\n",
    r#"{"type":"DELETED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"café-☕","namespace":"日本","resourceVersion":"4"}}}"#,
    "\n",
    r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old résource version","reason":"Expired","code":410}}"#,
);

fn decode_chunks(chunks: &[&[u8]]) -> Vec<Result<WatchEvent, Error>> {
    let mut d = EventDecoder::new(1 << 20);
    for c in chunks {
        d.push(c);
    }
    d.finish();
    std::iter::from_fn(|| d.next_event()).collect()
}

/// RC-02: identical events for every split position (including inside every
/// multi-byte character) into two and into three chunks.
#[test]
fn rc_02_framer_gives_identical_events_for_every_split() {
    let bytes = INPUT.as_bytes();
    let whole = decode_chunks(&[bytes]);
    assert_eq!(whole.len(), 5);
    let names: Vec<_> = whole
        .iter()
        .map(|e| e.as_ref().expect("ok").type_name())
        .collect();
    assert_eq!(names, ["ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"]);
    let WatchEvent::Added(o) = whole[0].as_ref().expect("ok") else {
        panic!("not added")
    };
    assert_eq!(o.name(), "café-☕");
    assert_eq!(o.namespace(), Some("日本"));
    assert_eq!(o.meta().labels().get("app"), Some("wëb"));
    assert!(whole[2].as_ref().expect("ok").is_initial_events_end());
    match whole[4].as_ref().expect("ok") {
        WatchEvent::Error(s) => assert_eq!((s.code, s.reason.as_str()), (410, "Expired")),
        other => panic!("{other:?}"),
    }
    for i in 0..=bytes.len() {
        assert_eq!(
            decode_chunks(&[&bytes[..i], &bytes[i..]]),
            whole,
            "split at {i}"
        );
    }
    for i in (0..=bytes.len()).step_by(7) {
        for j in i..=bytes.len() {
            assert_eq!(
                decode_chunks(&[&bytes[..i], &bytes[i..j], &bytes[j..]]),
                whole,
                "split at {i},{j}"
            );
        }
    }
    // Byte by byte.
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode_chunks(&singles), whole);
}

/// RC-02: a malformed line or an unknown type is one error item, then the
/// stream ends; events before it are delivered.
#[test]
fn rc_02_malformed_line_and_unknown_type_end_the_stream() {
    let good = r#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#;
    for bad in [
        r#"{"type":"ADDED","object":{"metadata":{"name":"a"}}"#,
        "this is not json",
        r#"{"type":"RENAMED","object":{"metadata":{"name":"a"}}}"#,
        r#"{"type":"ADDED","object":{"metadata":{"name":7}}}"#,
        r#"{"type":"ADDED"}"#,
        r#"{"type":"ERROR","object":{"code":"x"}}"#,
        // Invalid JSON deep inside an object, where nothing reads it on
        // arrival: still refused, not cached to fail later in JS.
        r#"{"type":"MODIFIED","object":{"metadata":{"name":"a","annotations":{"x":"y",}}}}"#,
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"labels\":{\"k\u{1}\":\"v\"}}}}",
        r#"{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"n":01}}}"#,
        r#"{"type":"ADDED","object":{"metadata":{"name":"a"},"status":"\ud800"}}"#,
        r#"{"type":"ADDED","object":{"metadata":{"name":"a"}},"extra":[1,,2]}"#,
    ] {
        let input = format!("{good}\n{bad}\n{good}\n");
        let out = decode_chunks(&[input.as_bytes()]);
        assert_eq!(out.len(), 2, "{bad}");
        assert!(out[0].is_ok());
        match &out[1] {
            Err(Error::Decode { excerpt, .. }) => assert!(!excerpt.is_empty()),
            other => panic!("{bad}: {other:?}"),
        }
    }
    assert!(matches!(
        decode_event(br#"{"type":"RENAMED","object":{}}"#),
        Err(Error::Decode { message, .. }) if message.contains("RENAMED")
    ));
}

/// RC-02: a line over the maximum is a LineTooLong error item.
#[test]
fn rc_02_oversized_line_is_a_clear_error() {
    let mut d = EventDecoder::new(1024);
    let big = format!(
        r#"{{"type":"ADDED","object":{{"metadata":{{"name":"{}"}}}}}}"#,
        "x".repeat(2000)
    );
    d.push(br#"{"type":"ADDED","object":{"metadata":{"name":"ok"}}}"#);
    d.push(b"\n");
    for c in big.as_bytes().chunks(100) {
        d.push(c);
    }
    d.push(b"\n");
    assert!(d.next_event().expect("first").is_ok());
    assert_eq!(
        d.next_event(),
        Some(Err(Error::LineTooLong { limit: 1024 }))
    );
    assert_eq!(d.next_event(), None);
    assert!(Error::LineTooLong { limit: 1024 }
        .to_string()
        .contains("1024"));
}

fn stream_with(
    clock: &FakeClock,
    idle: Option<Duration>,
) -> (WatchStream, BodySender, FakeTransport) {
    let t = FakeTransport::new();
    let (resp, tx) = FakeResponse::streaming(200);
    t.push(resp);
    let http = crate::rt::block_on(crate::rest::Transport::send(
        &t,
        crate::rest::HttpRequest {
            method: crate::rest::Method::Get,
            url: "http://x/api/v1/pods?watch=true".into(),
            headers: vec![],
            body: None,
            credentials: Default::default(),
            is_watch: true,
        },
    ))
    .expect("response");
    (
        WatchStream::new(http.body, clock.shared(), 1 << 20, idle),
        tx,
        t,
    )
}

/// RC-02: clean close ends the stream; events arrive as chunks are fed.
#[test]
fn rc_02_stream_delivers_events_and_ends_on_clean_close() {
    let clock = FakeClock::new();
    let (mut w, tx, t) = stream_with(&clock, None);
    let got = Rc::new(std::cell::RefCell::new(Vec::new()));
    let g = got.clone();
    spawn_local(async move {
        while let Some(ev) = w.next().await {
            g.borrow_mut().push(ev.map(|e| e.type_name()));
        }
        g.borrow_mut().push(Ok("END"));
    });
    run_until_stalled();
    assert!(got.borrow().is_empty());
    tx.send(&br#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#[..30]);
    run_until_stalled();
    assert!(got.borrow().is_empty());
    tx.send(&br#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#[30..]);
    tx.send(&b"\n"[..]);
    run_until_stalled();
    assert_eq!(*got.borrow(), vec![Ok("ADDED")]);
    tx.close();
    run_until_stalled();
    assert_eq!(*got.borrow(), vec![Ok("ADDED"), Ok("END")]);
    assert_eq!(t.open_bodies(), 0);
}

/// The idle watchdog fires on the clock only when no bytes arrive.
#[test]
fn idle_timeout_yields_an_error_and_closes() {
    let clock = FakeClock::new();
    let (mut w, tx, t) = stream_with(&clock, Some(Duration::from_secs(30)));
    let got = Rc::new(std::cell::RefCell::new(Vec::new()));
    let g = got.clone();
    spawn_local(async move {
        while let Some(ev) = w.next().await {
            g.borrow_mut().push(ev.map(|e| e.type_name()));
        }
        g.borrow_mut().push(Ok("END"));
    });
    run_until_stalled();
    for _ in 0..5 {
        clock.advance(Duration::from_secs(20));
        tx.send(&b"\n"[..]); // keep-alive bytes reset the watchdog
        run_until_stalled();
    }
    assert!(got.borrow().is_empty(), "bytes kept it alive");
    clock.advance(Duration::from_secs(29));
    run_until_stalled();
    assert!(got.borrow().is_empty());
    clock.advance(Duration::from_secs(1));
    run_until_stalled();
    let got = got.borrow();
    assert!(matches!(got[0], Err(Error::Timeout { .. })), "{got:?}");
    assert_eq!(got[1], Ok("END"));
    assert!(tx.is_closed(), "the connection was dropped");
    assert_eq!(t.open_bodies(), 0);
    assert_eq!(clock.pending_timers(), 0);
}

/// A failure mid-body is an error item after the events before it.
#[test]
fn mid_body_failure_is_an_error_item() {
    let clock = FakeClock::new();
    let (mut w, tx, _t) = stream_with(&clock, None);
    tx.send(&b"{\"type\":\"ADDED\",\"object\":{}}\n{\"type\""[..]);
    tx.fail(Error::network("reset"));
    let out: Vec<_> = crate::rt::block_on(async { w.by_ref().collect::<Vec<_>>().await });
    assert_eq!(out.len(), 2);
    assert!(out[0].is_ok());
    assert_eq!(out[1], Err(Error::network("reset")));
}

/// Dropping the stream drops (aborts) the body.
#[test]
fn dropping_the_stream_closes_the_body() {
    let clock = FakeClock::new();
    let (w, tx, t) = stream_with(&clock, Some(Duration::from_secs(5)));
    assert_eq!(t.open_bodies(), 1);
    drop(w);
    assert_eq!(t.open_bodies(), 0);
    assert!(tx.is_closed());
}

/// A body that ends inside its last event (the connection was cut) ends
/// the stream as a close, as client-go reads `io.ErrUnexpectedEOF`, wherever
/// the cut falls (in a number, a literal, an escape or a UTF-8 sequence too);
/// a last line that is complete but wrong is still an error.
#[test]
fn a_body_cut_inside_its_last_event_ends_like_a_close() {
    let good = r#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#;
    let whole = r#"{"type":"MODIFIED","object":{"metadata":{"name":"b","labels":{"k":"v"}},"spec":{"n":[1,-2.5e3,true,false,null],"s":"\u00e9\ud83d\ude00\n é😀"}}}"#;
    // Every cut of the last event inside it (after its first byte).
    for cut in 1..whole.len() {
        let input = [good.as_bytes(), b"\n", &whole.as_bytes()[..cut]].concat();
        let out = decode_chunks(&[&input]);
        assert!(
            crate::rest::scan::is_cut_short(&whole.as_bytes()[..cut]),
            "cut at {cut}"
        );
        assert_eq!(out.len(), 1, "cut at {cut}: {out:?}");
        assert!(out[0].is_ok());
    }
    // A last line that ends in a wrong token, not a cut one: an error.
    for bad in [
        r#"{"type":"ADDED","object":{"x":tx"#,
        r#"{"type":"ADDED","object":{"x":nul "#,
        r#"{"type":"ADDED","object":{"x":"\q"#,
        r#"{"type":"ADDED","object":{"x":"\u12g"#,
        r#"{"type":"ADDED","object":{"x":"\ud83d\u0041"#,
        r#"{"type":"ADDED","object":{"x":"\ud83d\ux"#,
        r#"{"type":"ADDED","object":{"x":1e999"#,
    ]
    .iter()
    .map(|b| b.as_bytes().to_vec())
    .chain([
        b"{\"x\":\"\xC0".to_vec(),
        b"{\"x\":\"\xE0\x80".to_vec(),
        b"{\"x\":\"\xE2\x28".to_vec(),
    ]) {
        assert!(!crate::rest::scan::is_cut_short(&bad), "{bad:?}");
        let input = [good.as_bytes(), b"\n", &bad].concat();
        let out = decode_chunks(&[&input]);
        assert!(out.get(1).is_some_and(Result::is_err), "{bad:?}");
    }
    // The complete event without its newline is still an event.
    let out = decode_chunks(&[format!("{good}\n{whole}").as_bytes()]);
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(Result::is_ok));
    // Complete but wrong: an error.
    for bad in [
        "this is not json",
        r#"{"type":"ADDED","object":{"metadata":{"name":"a"}},"x":[1,,2]}"#,
    ] {
        let out = decode_chunks(&[format!("{good}\n{bad}").as_bytes()]);
        assert!(out.get(1).is_some_and(Result::is_err), "{bad}");
    }
}
