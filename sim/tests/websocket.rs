//! Watches over WebSocket, end to end: the binary is started on port 0, the
//! handshake is written by hand (so its headers can be checked), and frames
//! are read with tungstenite's client side.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tungstenite::protocol::frame::FrameSocket;
use tungstenite::protocol::{Role, WebSocket};
use tungstenite::Message;

const TOKEN: &str = "sim-ws-token";
const BEARER: &str = "base64url.bearer.authorization.k8s.io.";

/// A running sim (with `--token`), killed on drop.
struct Sim {
    child: Child,
    addr: String,
}

impl Sim {
    fn start() -> Sim {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubewasm-sim"))
            .args([
                "--port",
                "0",
                "--token",
                TOKEN,
                "--namespaces",
                "2",
                "--pods",
                "4",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kubewasm-sim");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("LISTENING line");
        let addr = line
            .trim()
            .strip_prefix("LISTENING http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Sim { child, addr }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        s
    }

    /// A plain HTTP request with the token; the JSON answer.
    fn http(&self, method: &str, path: &str, body: Value) -> Value {
        let mut s = self.connect();
        let body = body.to_string();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        s.write_all(head.as_bytes()).expect("write");
        let mut all = Vec::new();
        s.read_to_end(&mut all).expect("read");
        let text = String::from_utf8_lossy(&all);
        let (head, body) = text.split_once("\r\n\r\n").expect("head");
        assert!(head.starts_with("HTTP/1.1 2"), "{method} {path}: {text}");
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
    }

    fn stats(&self) -> Value {
        self.http("GET", "/sim/stats", json!({}))
    }

    fn rv(&self) -> String {
        self.stats()["resourceVersion"]
            .as_str()
            .expect("rv")
            .to_string()
    }

    fn open_watches(&self) -> i64 {
        self.stats()["openWatches"].as_i64().expect("openWatches")
    }

    fn wait_open_watches(&self, want: i64) {
        let start = Instant::now();
        while self.open_watches() != want {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "openWatches stayed at {} (want {want})",
                self.open_watches()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Send a WebSocket handshake for `path` with these subprotocol header
    /// values and extra headers; returns the status, the answer's headers and
    /// the stream positioned right after them.
    fn handshake(
        &self,
        path: &str,
        protocols: &[&str],
        extra: &[(&str, &str)],
    ) -> (u16, Vec<(String, String)>, TcpStream) {
        let mut s = self.connect();
        let mut head = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://page.example\r\n",
            self.addr
        );
        for p in protocols {
            head.push_str(&format!("Sec-WebSocket-Protocol: {p}\r\n"));
        }
        for (k, v) in extra {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).expect("write");
        // Byte by byte, so no frame that follows is buffered away.
        let mut raw = Vec::new();
        let mut b = [0u8; 1];
        while !raw.ends_with(b"\r\n\r\n") {
            match s.read(&mut b) {
                Ok(1) => raw.push(b[0]),
                _ => break,
            }
        }
        let text = String::from_utf8_lossy(&raw).into_owned();
        let mut lines = text.split("\r\n");
        let code = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("status line in {text:?}"));
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        (code, headers, s)
    }

    /// An accepted WebSocket watch with the token in the subprotocol.
    fn ws_watch(&self, path: &str) -> WebSocket<TcpStream> {
        let (code, headers, s) = self.handshake(path, &[&token_protocols()], &[]);
        assert_eq!(code, 101, "{headers:?}");
        WebSocket::from_raw_socket(s, Role::Client, None)
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn b64url(s: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let b = s.as_bytes();
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = c.iter().fold(0u32, |a, &x| (a << 8) | u32::from(x)) << (8 * (3 - c.len()));
        for i in 0..=c.len() {
            out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn token_protocols() -> String {
    format!("kubewasm.watch, {BEARER}{}", b64url(TOKEN))
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The next message's bytes, text or binary.
fn next_data(ws: &mut WebSocket<TcpStream>) -> Vec<u8> {
    loop {
        match ws.read().expect("message") {
            Message::Text(t) => return t.as_bytes().to_vec(),
            Message::Binary(b) => return b.to_vec(),
            Message::Close(c) => panic!("closed early: {c:?}"),
            _ => {}
        }
    }
}

fn create_configmap(sim: &Sim, ns: &str, name: &str) -> Value {
    sim.http(
        "POST",
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}),
    )
}

#[test]
fn events_arrive_one_per_message_and_the_protocol_is_echoed() {
    let sim = Sim::start();
    let rv = sim.rv();
    let path = format!("/api/v1/namespaces/ws/configmaps?watch=true&resourceVersion={rv}");
    let (code, headers, s) = sim.handshake(&path, &[&token_protocols()], &[]);
    assert_eq!(code, 101);
    assert_eq!(header(&headers, "upgrade"), Some("websocket"));
    assert_eq!(
        header(&headers, "sec-websocket-accept"),
        Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    );
    // The token entry is taken out; the other one is echoed.
    assert_eq!(
        header(&headers, "sec-websocket-protocol"),
        Some("kubewasm.watch")
    );
    let mut ws = WebSocket::from_raw_socket(s, Role::Client, None);
    sim.wait_open_watches(1);
    let created = create_configmap(&sim, "ws", "one");
    let msg = next_data(&mut ws);
    assert!(msg.ends_with(b"}\n"), "one JSON line per message");
    let ev: Value = serde_json::from_slice(&msg).expect("one whole event");
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"], created);

    // The client closes: the sim notices and unregisters the watch.
    ws.close(None).expect("close");
    let _ = ws.flush();
    sim.wait_open_watches(0);
}

#[test]
fn token_checks_follow_the_api_server() {
    let sim = Sim::start();
    let path = "/api/v1/configmaps?watch=1";
    // No token at all.
    assert_eq!(sim.handshake(path, &["kubewasm.watch"], &[]).0, 401);
    // A wrong token.
    let wrong = format!("kubewasm.watch, {BEARER}{}", b64url("nope"));
    assert_eq!(sim.handshake(path, &[&wrong], &[]).0, 401);
    // The token alone: nothing would be left to echo.
    let alone = format!("{BEARER}{}", b64url(TOKEN));
    assert_eq!(sim.handshake(path, &[&alone], &[]).0, 401);
    // Two other subprotocols: the API server accepts only one.
    let two = format!("a, b, {BEARER}{}", b64url(TOKEN));
    assert_eq!(sim.handshake(path, &[&two], &[]).0, 400);
    // The token in the header (non-browser clients), no subprotocol: none echoed.
    let auth = format!("Bearer {TOKEN}");
    let (code, headers, _s) = sim.handshake(path, &[], &[("Authorization", &auth)]);
    assert_eq!(code, 101);
    assert_eq!(header(&headers, "sec-websocket-protocol"), None);
    // Faults answer the handshake like any request.
    sim.http("POST", "/sim/faults", json!({"status500": {"count": 1}}));
    assert_eq!(sim.handshake(path, &[&token_protocols()], &[]).0, 500);
}

#[test]
fn compaction_is_an_error_event_then_a_clean_close() {
    let sim = Sim::start();
    let old = sim.rv();
    create_configmap(&sim, "ws", "c1");
    sim.http("POST", "/sim/compact", json!({}));
    let mut ws = sim.ws_watch(&format!(
        "/api/v1/namespaces/ws/configmaps?watch=1&resourceVersion={old}"
    ));
    let ev: Value = serde_json::from_slice(&next_data(&mut ws)).expect("json");
    assert_eq!(ev["type"], "ERROR");
    assert_eq!(ev["object"]["code"], 410);
    assert_eq!(ev["object"]["reason"], "Expired");
    match ws.read() {
        Ok(Message::Close(Some(f))) => assert_eq!(f.code, CloseCode::Normal),
        other => panic!("expected close 1000, got {other:?}"),
    }
}

#[test]
fn timeout_ends_with_close_1000() {
    let sim = Sim::start();
    let mut ws = sim.ws_watch(&format!(
        "/api/v1/namespaces/ws/configmaps?watch=1&timeoutSeconds=1&resourceVersion={}",
        sim.rv()
    ));
    let start = Instant::now();
    match ws.read() {
        Ok(Message::Close(Some(f))) => assert_eq!(f.code, CloseCode::Normal),
        other => panic!("expected close 1000, got {other:?}"),
    }
    assert!(start.elapsed() >= Duration::from_millis(900));
    sim.wait_open_watches(0);
}

#[test]
fn malformed_message_and_drops_end_without_a_close_frame() {
    let sim = Sim::start();
    sim.http("POST", "/sim/faults", json!({"malformedLineOnce": true}));
    let mut ws = sim.ws_watch("/api/v1/configmaps?watch=1");
    let bad = next_data(&mut ws);
    assert!(serde_json::from_slice::<Value>(&bad).is_err(), "{bad:?}");
    assert!(
        !matches!(ws.read(), Ok(Message::Close(_))),
        "an abrupt end has no close frame"
    );

    // dropWatchesAfterEvents: the initial ADDED events count.
    sim.http("POST", "/sim/faults", json!({"dropWatchesAfterEvents": 2}));
    let mut ws = sim.ws_watch("/api/v1/pods?watch=1");
    for _ in 0..2 {
        let ev: Value = serde_json::from_slice(&next_data(&mut ws)).expect("json");
        assert_eq!(ev["type"], "ADDED");
    }
    assert!(!matches!(ws.read(), Ok(Message::Close(_))));
    sim.http("POST", "/sim/faults/clear", json!({}));

    // /sim/drop-watches shuts the socket.
    let mut ws = sim.ws_watch(&format!(
        "/api/v1/configmaps?watch=1&resourceVersion={}",
        sim.rv()
    ));
    sim.wait_open_watches(1);
    assert_eq!(
        sim.http("POST", "/sim/drop-watches", json!({}))["dropped"],
        1
    );
    assert!(!matches!(ws.read(), Ok(Message::Close(_))));
    sim.wait_open_watches(0);
}

#[test]
fn split_fragments_messages_and_binary_frames_on_request() {
    let sim = Sim::start();
    sim.http(
        "POST",
        "/sim/faults",
        json!({"splitChunks": true, "webSocketBinary": true, "seed": 3}),
    );
    let (code, _, s) = sim.handshake(
        "/api/v1/namespaces/default/pods?watch=1",
        &[&token_protocols()],
        &[],
    );
    assert_eq!(code, 101);
    let mut frames = FrameSocket::new(s);
    // Reassemble the first message by hand, counting its frames.
    let mut msg = Vec::new();
    let mut count = 0;
    loop {
        let f = frames.read(None).expect("frame").expect("not closed");
        let want = if count == 0 {
            OpCode::Data(Data::Binary)
        } else {
            OpCode::Data(Data::Continue)
        };
        assert_eq!(f.header().opcode, want);
        assert!(f.payload().len() <= 7);
        msg.extend_from_slice(f.payload());
        count += 1;
        if f.header().is_final {
            break;
        }
    }
    assert!(count > 10, "a pod in {count} frames");
    let ev: Value = serde_json::from_slice(&msg).expect("whole event");
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["kind"], "Pod");
}

#[test]
fn a_watch_over_websocket_is_never_compressed() {
    let sim = Sim::start();
    sim.http(
        "POST",
        "/sim/seed",
        json!({"namespaces": 2, "pods": 300, "seed": 1}),
    );
    // What a browser sends on the handshake; the replay is far over the
    // 128 KiB past which a list would be gzipped.
    let (code, headers, s) = sim.handshake(
        "/api/v1/pods?watch=true",
        &[&token_protocols()],
        &[("Accept-Encoding", "gzip, deflate, br, zstd")],
    );
    assert_eq!(code, 101);
    assert_eq!(header(&headers, "content-encoding"), None);
    let mut ws = WebSocket::from_raw_socket(s, Role::Client, None);
    let mut bytes = 0;
    for _ in 0..300 {
        let msg = next_data(&mut ws);
        bytes += msg.len();
        let ev: Value = serde_json::from_slice(&msg).expect("a plain JSON event");
        assert_eq!(ev["type"], "ADDED");
    }
    assert!(bytes > 128 * 1024, "{bytes}");
    assert_eq!(sim.stats()["gzippedResponses"], 0);
}
