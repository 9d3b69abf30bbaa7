//! End-to-end tests of kubewasm-sim over real HTTP: the binary is started on
//! port 0 and driven with a tiny HTTP/1.1 client over `TcpStream` (std only).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A running sim, killed on drop.
struct Sim {
    child: Child,
    addr: String,
}

impl Sim {
    fn start(args: &[&str]) -> Sim {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubewasm-sim"))
            .args(["--port", "0"])
            .args(args)
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

    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
        let mut s = self.connect();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).expect("write");
        s.write_all(body).expect("write body");
        let mut r = BufReader::new(s);
        let (code, headers) = read_head(&mut r);
        let body = if header(&headers, "transfer-encoding").is_some() {
            let mut out = Vec::new();
            while let Chunk::Data(d) = read_chunk(&mut r) {
                out.extend(d);
            }
            out
        } else {
            let len: usize = header(&headers, "content-length")
                .and_then(|l| l.parse().ok())
                .unwrap_or(0);
            let mut b = vec![0; len];
            r.read_exact(&mut b).expect("body");
            b
        };
        Resp {
            code,
            headers,
            body,
        }
    }

    fn get(&self, path: &str) -> Resp {
        self.request("GET", path, &[], b"")
    }

    fn json(&self, method: &str, path: &str, body: Value) -> Resp {
        self.request(
            method,
            path,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
    }

    fn control(&self, path: &str, body: Value) -> Value {
        let r = self.json("POST", path, body);
        assert_eq!(r.code, 200, "{path}: {}", r.text());
        r.value()
    }

    fn stats(&self) -> Value {
        self.get("/sim/stats").value()
    }

    fn rv(&self) -> String {
        self.stats()["resourceVersion"]
            .as_str()
            .expect("rv")
            .to_string()
    }

    fn watch(&self, path: &str, headers: &[(&str, &str)]) -> Watch {
        let mut s = self.connect();
        let mut head = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).expect("write");
        let mut r = BufReader::new(s);
        let (code, headers) = read_head(&mut r);
        Watch {
            r,
            code,
            headers,
            pending: Vec::new(),
            chunk_sizes: Vec::new(),
        }
    }

    fn wait_for(&self, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let s = self.stats();
            if cond(&s) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "timed out waiting for {what}: {s}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Resp {
    code: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn value(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn read_head(r: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    r.read_line(&mut line).expect("status line");
    let code = line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).expect("header");
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    (code, headers)
}

enum Chunk {
    Data(Vec<u8>),
    /// The terminating zero chunk: a clean end.
    End,
    /// The connection closed without one: an abrupt end.
    Abrupt,
}

fn read_chunk(r: &mut impl BufRead) -> Chunk {
    let mut size = String::new();
    match r.read_line(&mut size) {
        Ok(0) | Err(_) => return Chunk::Abrupt,
        Ok(_) => {}
    }
    let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
        return Chunk::Abrupt;
    };
    if n == 0 {
        let mut crlf = String::new();
        let _ = r.read_line(&mut crlf);
        return Chunk::End;
    }
    let mut data = vec![0; n + 2];
    if r.read_exact(&mut data).is_err() {
        return Chunk::Abrupt;
    }
    data.truncate(n);
    Chunk::Data(data)
}

/// A watch stream read line by line.
struct Watch {
    r: BufReader<TcpStream>,
    code: u16,
    headers: Vec<(String, String)>,
    pending: Vec<u8>,
    chunk_sizes: Vec<usize>,
}

#[derive(Debug, PartialEq)]
enum Line {
    Event(Value),
    /// Not JSON.
    Garbage(String),
    End,
    Abrupt,
}

impl Watch {
    fn next(&mut self) -> Line {
        loop {
            if let Some(i) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=i).collect();
                return match serde_json::from_slice(&line) {
                    Ok(v) => Line::Event(v),
                    Err(_) => Line::Garbage(String::from_utf8_lossy(&line).into_owned()),
                };
            }
            match read_chunk(&mut self.r) {
                Chunk::Data(d) => {
                    self.chunk_sizes.push(d.len());
                    self.pending.extend(d);
                }
                Chunk::End => return Line::End,
                Chunk::Abrupt => return Line::Abrupt,
            }
        }
    }

    fn event(&mut self) -> Value {
        match self.next() {
            Line::Event(v) => v,
            other => panic!("expected an event, got {other:?}"),
        }
    }

    /// The next event that is not a bookmark.
    fn change(&mut self) -> Value {
        loop {
            let e = self.event();
            if e["type"] != "BOOKMARK" {
                return e;
            }
        }
    }
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": "t"}}, "data": {"k": "v"}})
}

fn rv_of(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("rv")
}

#[test]
fn listening_line_auth_cors_and_preflight() {
    let sim = Sim::start(&["--token", "s3cret"]);
    let r = sim.get("/api/v1/pods");
    assert_eq!(r.code, 401);
    assert_eq!(r.value()["reason"], "Unauthorized");
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let ok = sim.request(
        "GET",
        "/api/v1/pods",
        &[("Authorization", "Bearer s3cret")],
        b"",
    );
    assert_eq!(ok.code, 200);
    assert_eq!(ok.value()["items"].as_array().map(Vec::len), Some(30));
    assert!(ok
        .header("access-control-expose-headers")
        .is_some_and(|h| h.contains("Retry-After")));
    assert_eq!(sim.get("/sim/stats").code, 200, "control needs no token");
    let pre = sim.request(
        "OPTIONS",
        "/api/v1/pods",
        &[
            ("Origin", "http://x"),
            ("Access-Control-Request-Method", "PATCH"),
            ("Access-Control-Request-Headers", "x-custom"),
        ],
        b"",
    );
    assert_eq!(pre.code, 204);
    assert!(pre
        .header("access-control-allow-methods")
        .is_some_and(|m| m.contains("PATCH")));
    let allowed = pre.header("access-control-allow-headers").unwrap_or("");
    assert!(
        allowed.contains("Authorization") && allowed.contains("x-custom"),
        "{allowed}"
    );
}

#[test]
fn control_endpoints_refuse_other_origins_and_carry_no_cors() {
    let sim = Sim::start(&[]);
    let own = format!("http://{}", sim.addr);
    let pods = || sim.stats()["objects"]["pods"].clone();
    let before = pods();
    // A page of another origin: a "simple" POST (text/plain, no preflight)
    // would run even though CORS hides the answer, so it must be refused.
    for origin in ["http://evil.example", "null"] {
        let r = sim.request(
            "POST",
            "/sim/seed",
            &[("Origin", origin), ("Content-Type", "text/plain")],
            br#"{"pods":1,"namespaces":1}"#,
        );
        assert_eq!(r.code, 403, "{origin}: {}", r.text());
        assert_eq!(r.value()["reason"], "Forbidden");
        assert_eq!(r.header("access-control-allow-origin"), None);
    }
    let nocors = sim.request(
        "GET",
        "/sim/state",
        &[("Sec-Fetch-Site", "cross-site")],
        b"",
    );
    assert_eq!(nocors.code, 403);
    assert_eq!(pods(), before, "nothing was re-seeded");
    // No preflight answer for another origin.
    let pre = sim.request(
        "OPTIONS",
        "/sim/faults",
        &[
            ("Origin", "http://evil.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
        b"",
    );
    assert!(pre.code >= 400, "preflight refused, got {}", pre.code);
    assert_eq!(pre.header("access-control-allow-origin"), None);
    assert_eq!(pre.header("access-control-allow-methods"), None);
    // Same origin (the dashboard the sim serves) and non-browser clients work,
    // without CORS headers.
    for headers in [&[("Origin", own.as_str())][..], &[]] {
        let r = sim.request(
            "POST",
            "/sim/churn/steps",
            headers,
            br#"{"steps":1,"seed":3}"#,
        );
        assert_eq!(r.code, 200, "{}", r.text());
        assert_eq!(r.header("access-control-allow-origin"), None);
        assert_eq!(r.header("access-control-expose-headers"), None);
    }
    // The API keeps its CORS behaviour.
    let api = sim.request(
        "GET",
        "/api/v1/pods",
        &[("Origin", "http://evil.example")],
        b"",
    );
    assert_eq!(api.code, 200);
    assert_eq!(api.header("access-control-allow-origin"), Some("*"));
    let api_pre = sim.request(
        "OPTIONS",
        "/api/v1/pods",
        &[
            ("Origin", "http://evil.example"),
            ("Access-Control-Request-Method", "GET"),
        ],
        b"",
    );
    assert_eq!(api_pre.code, 204);
    assert_eq!(api_pre.header("access-control-allow-origin"), Some("*"));
}

#[test]
fn control_endpoints_take_cross_origin_requests_only_with_the_token() {
    // The wasm suites in Chromium run on another origin and hold the token.
    let sim = Sim::start(&["--token", "s3cret"]);
    let other = ("Origin", "http://127.0.0.1:1");
    let pre = sim.request(
        "OPTIONS",
        "/sim/faults",
        &[
            other,
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "authorization, content-type",
            ),
        ],
        b"",
    );
    assert_eq!(pre.code, 204);
    assert_eq!(pre.header("access-control-allow-origin"), Some("*"));
    assert!(pre
        .header("access-control-allow-headers")
        .is_some_and(|h| h.contains("Authorization")));
    let with = sim.request(
        "POST",
        "/sim/faults",
        &[other, ("Authorization", "Bearer s3cret")],
        br#"{"latencyMs":1}"#,
    );
    assert_eq!(with.code, 200, "{}", with.text());
    assert_eq!(with.header("access-control-allow-origin"), Some("*"));
    for auth in [&[("Authorization", "Bearer wrong")][..], &[]] {
        let mut h = vec![other];
        h.extend_from_slice(auth);
        let r = sim.request("POST", "/sim/faults/clear", &h, b"");
        assert_eq!(r.code, 403);
        assert_eq!(r.header("access-control-allow-origin"), None);
    }
    assert_eq!(sim.get("/sim/faults").value()["latencyMs"], 1, "still set");
}

#[test]
fn pg_list_pages_over_a_snapshot_and_expired_token_is_410() {
    let sim = Sim::start(&["--pods", "50"]);
    let want: Vec<String> = sim.get("/sim/state?resource=pods").value()["items"]
        .as_object()
        .expect("items")
        .keys()
        .cloned()
        .collect();
    let mut got = Vec::new();
    let mut path = "/api/v1/pods?limit=7".to_string();
    let mut pages = 0;
    let mut first_rv = None;
    loop {
        let page = sim.get(&path).value();
        pages += 1;
        let rv = page["metadata"]["resourceVersion"].clone();
        assert_eq!(
            *first_rv.get_or_insert(rv.clone()),
            rv,
            "one snapshot RV for every page"
        );
        for p in page["items"].as_array().expect("items") {
            got.push(format!(
                "{}/{}",
                p["metadata"]["namespace"].as_str().unwrap_or(""),
                p["metadata"]["name"].as_str().unwrap_or("")
            ));
        }
        if pages == 1 {
            // A write between pages does not show up in the snapshot.
            sim.control("/sim/churn/steps", json!({"steps": 20, "seed": 3}));
            assert_eq!(page["metadata"]["remainingItemCount"], 43);
        }
        match page["metadata"]["continue"].as_str() {
            Some(c) => path = format!("/api/v1/pods?limit=7&continue={c}"),
            None => break,
        }
    }
    assert_eq!(pages, 8);
    assert_eq!(got, want);

    let first = sim.get("/api/v1/pods?limit=5").value();
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("token")
        .to_string();
    sim.control("/sim/compact", json!({}));
    let r = sim.get(&format!("/api/v1/pods?limit=5&continue={token}"));
    assert_eq!(r.code, 410);
    assert_eq!(r.value()["reason"], "Expired");
}

#[test]
fn ls_selectors_filter_and_malformed_ones_are_400() {
    let sim = Sim::start(&["--pods", "60"]);
    let web = sim.get("/api/v1/pods?labelSelector=app%3Dweb").value();
    let items = web["items"].as_array().expect("items");
    assert!(!items.is_empty());
    assert!(items
        .iter()
        .all(|p| p["metadata"]["labels"]["app"] == "web"));
    let notin = sim
        .get("/api/v1/pods?labelSelector=app%20notin%20(web)%2Ctier")
        .value();
    assert!(notin["items"]
        .as_array()
        .expect("items")
        .iter()
        .all(|p| p["metadata"]["labels"]["app"] != "web"));
    let running = sim
        .get("/api/v1/pods?fieldSelector=status.phase%3DRunning")
        .value();
    assert!(running["items"]
        .as_array()
        .expect("items")
        .iter()
        .all(|p| p["status"]["phase"] == "Running"));
    for bad in [
        "labelSelector=app%20in%20(",
        "labelSelector=a%20b",
        "labelSelector=%3Dx",
        "fieldSelector=spec.bogus%3D1",
        "fieldSelector=nonsense",
    ] {
        let r = sim.get(&format!("/api/v1/pods?{bad}"));
        assert_eq!(r.code, 400, "{bad}");
        assert_eq!(r.value()["reason"], "BadRequest");
    }
}

#[test]
fn crud_patch_types_and_status_errors() {
    let sim = Sim::start(&[]);
    let base = "/api/v1/namespaces/t/configmaps";
    let created = sim.json("POST", base, cm("a"));
    assert_eq!(created.code, 201);
    let c = created.value();
    assert!(c["metadata"]["uid"].is_string() && c["metadata"]["creationTimestamp"].is_string());
    assert_eq!(
        sim.json("POST", base, cm("a")).value()["reason"],
        "AlreadyExists"
    );
    let r = sim.request(
        "POST",
        base,
        &[("Content-Type", "application/json")],
        b"{not json",
    );
    assert_eq!(
        (r.code, r.value()["reason"].as_str()),
        (400, Some("BadRequest"))
    );

    let mut stale = c.clone();
    stale["data"]["k"] = json!("2");
    assert_eq!(
        sim.json("PUT", &format!("{base}/a"), stale.clone()).code,
        200
    );
    let conflict = sim.json("PUT", &format!("{base}/a"), stale);
    assert_eq!(
        (conflict.code, conflict.value()["reason"].as_str()),
        (409, Some("Conflict"))
    );
    assert_eq!(sim.json("PUT", &format!("{base}/zz"), cm("zz")).code, 404);

    let patch = |ctype: &str, body: Value, query: &str| {
        sim.request(
            "PATCH",
            &format!("{base}/a{query}"),
            &[("Content-Type", ctype)],
            body.to_string().as_bytes(),
        )
    };
    assert_eq!(
        patch(
            "application/merge-patch+json",
            json!({"data": {"m": "1"}}),
            ""
        )
        .value()["data"]["m"],
        "1"
    );
    assert_eq!(
        patch(
            "application/strategic-merge-patch+json",
            json!({"data": {"s": "1"}}),
            ""
        )
        .value()["data"]["s"],
        "1"
    );
    assert_eq!(
        patch(
            "application/json-patch+json",
            json!([{"op": "add", "path": "/data/j", "value": "1"}]),
            ""
        )
        .value()["data"]["j"],
        "1"
    );
    assert_eq!(
        patch(
            "application/json-patch+json",
            json!([{"op": "remove", "path": "/nope"}]),
            ""
        )
        .code,
        422
    );
    assert_eq!(
        patch(
            "application/apply-patch+yaml",
            json!({"data": {"x": "1"}}),
            ""
        )
        .code,
        400,
        "apply needs a fieldManager"
    );
    assert_eq!(
        patch(
            "application/apply-patch+yaml",
            json!({"data": {"x": "1"}}),
            "?fieldManager=t"
        )
        .value()["data"]["x"],
        "1"
    );
    assert_eq!(patch("text/plain", json!({}), "").code, 415);
    let applied = sim.request(
        "PATCH",
        &format!("{base}/new?fieldManager=t"),
        &[("Content-Type", "application/apply-patch+yaml")],
        cm("new").to_string().as_bytes(),
    );
    assert_eq!(applied.code, 201, "apply creates: {}", applied.text());
    assert_eq!(
        sim.request(
            "PATCH",
            &format!("{base}/none"),
            &[("Content-Type", "application/merge-patch+json")],
            b"{}"
        )
        .code,
        404
    );

    let deleted = sim.request("DELETE", &format!("{base}/a"), &[], b"");
    assert_eq!(deleted.code, 200);
    let status = deleted.value();
    assert_eq!(
        (
            &status["kind"],
            &status["status"],
            &status["details"]["name"],
            &status["details"]["kind"]
        ),
        (
            &json!("Status"),
            &json!("Success"),
            &json!("a"),
            &json!("configmaps")
        ),
        "a configmap's deletion answers a Status"
    );
    let pods = "/api/v1/namespaces/t/pods";
    let body =
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    assert_eq!(
        sim.request(
            "POST",
            pods,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes()
        )
        .code,
        201
    );
    let pod = sim
        .request("DELETE", &format!("{pods}/p"), &[], b"")
        .value();
    assert_eq!(
        (&pod["kind"], &pod["metadata"]["name"]),
        (&json!("Pod"), &json!("p")),
        "a pod's deletion answers the pod"
    );
    assert_eq!(
        sim.request("DELETE", &format!("{base}/a"), &[], b"").code,
        404
    );
    let gone = sim.get(&format!("{base}/a"));
    assert_eq!(
        (gone.code, gone.value()["reason"].as_str()),
        (404, Some("NotFound"))
    );
    let coll = sim
        .request("DELETE", &format!("{base}?labelSelector=app%3Dt"), &[], b"")
        .value();
    assert_eq!(
        coll["items"].as_array().map(Vec::len),
        Some(1),
        "the applied one"
    );

    // Status and scale subresources.
    let dep = "/apis/apps/v1/namespaces/default/deployments/web";
    let scale = sim.get(&format!("{dep}/scale")).value();
    assert_eq!(scale["kind"], "Scale");
    let scaled = sim.request(
        "PATCH",
        &format!("{dep}/scale"),
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"spec":{"replicas":7}}"#,
    );
    assert_eq!(scaled.value()["spec"]["replicas"], 7);
    let d = sim.get(dep).value();
    assert_eq!(d["spec"]["replicas"], 7);
    assert_eq!(d["metadata"]["generation"], 2);
    let mut with_status = d.clone();
    with_status["status"]["readyReplicas"] = json!(0);
    let put = sim.json("PUT", dep, with_status.clone()).value();
    assert_eq!(
        put["status"], d["status"],
        "main resource writes keep status"
    );
    with_status["metadata"]["resourceVersion"] = put["metadata"]["resourceVersion"].clone();
    let put = sim
        .json("PUT", &format!("{dep}/status"), with_status)
        .value();
    assert_eq!(
        put["status"]["readyReplicas"], 0,
        "the status subresource writes it"
    );
}

#[test]
fn watch_replays_from_rv_streams_live_events_one_chunk_each() {
    let sim = Sim::start(&[]);
    let base = "/api/v1/namespaces/w/configmaps";
    sim.json("POST", base, cm("before"));
    let start = sim.rv();
    sim.json("POST", base, cm("a"));
    let mut w = sim.watch(&format!("{base}?watch=1&resourceVersion={start}"), &[]);
    assert_eq!(w.code, 200);
    assert!(header(&w.headers, "transfer-encoding").is_some_and(|t| t.contains("chunked")));
    let replayed = w.change();
    assert_eq!(
        (
            replayed["type"].as_str(),
            replayed["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("a"))
    );
    sim.request(
        "PATCH",
        &format!("{base}/a"),
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"data":{"k":"2"}}"#,
    );
    sim.request("DELETE", &format!("{base}/a"), &[], b"");
    let m = w.change();
    let d = w.change();
    assert_eq!(
        (m["type"].as_str(), d["type"].as_str()),
        (Some("MODIFIED"), Some("DELETED"))
    );
    assert!(
        rv_of(&replayed["object"]) < rv_of(&m["object"])
            && rv_of(&m["object"]) < rv_of(&d["object"])
    );
    // Each event is one chunk holding exactly one line.
    assert_eq!(w.chunk_sizes.len(), 3);
    assert_eq!(sim.stats()["openWatches"], 1);
    drop(w);
    sim.wait_for("the watch to close", |s| s["openWatches"] == 0);
}

#[test]
fn watch_from_a_compacted_rv_gets_one_410_error_then_a_clean_end() {
    let sim = Sim::start(&[]);
    let old = sim.rv();
    sim.json("POST", "/api/v1/namespaces/x/configmaps", cm("a"));
    sim.control("/sim/compact", json!({}));
    let mut w = sim.watch(
        &format!("/api/v1/configmaps?watch=1&resourceVersion={old}"),
        &[],
    );
    assert_eq!(w.code, 200);
    let e = w.event();
    assert_eq!(e["type"], "ERROR");
    assert_eq!(
        (e["object"]["code"].as_u64(), e["object"]["reason"].as_str()),
        (Some(410), Some("Expired"))
    );
    assert_eq!(w.next(), Line::End);
    let exact = sim.get(&format!(
        "/api/v1/configmaps?resourceVersion={old}&resourceVersionMatch=Exact"
    ));
    assert_eq!(exact.code, 410);
}

#[test]
fn watch_from_an_rv_the_store_has_not_reached_is_a_504_too_large() {
    let sim = Sim::start(&[]);
    let ahead = rv_of(&sim.get("/api/v1/configmaps").value()) + 1000;
    assert_eq!(sim.rv().parse::<u64>().ok(), Some(ahead - 1000));
    let r = sim.get(&format!(
        "/api/v1/configmaps?watch=1&resourceVersion={ahead}"
    ));
    assert_eq!(r.code, 504, "{}", r.text());
    let v = r.value();
    assert_eq!(v["reason"], "Timeout");
    assert_eq!(
        v["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    // The current RV itself is fine.
    let now = sim.rv();
    let w = sim.watch(
        &format!("/api/v1/configmaps?watch=1&resourceVersion={now}"),
        &[],
    );
    assert_eq!(w.code, 200);
}

#[test]
fn watch_list_initial_events_bookmarks_and_timeout() {
    let sim = Sim::start(&["--namespaces", "2"]);
    let bad = sim.get("/api/v1/pods?watch=1&sendInitialEvents=true");
    assert_eq!(bad.code, 422, "needs NotOlderThan and bookmarks");
    let mut w = sim.watch("/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2", &[]);
    let mut added = 0;
    let end = loop {
        let e = w.event();
        if e["type"] == "ADDED" {
            added += 1;
        } else {
            break e;
        }
    };
    assert_eq!(added, 30);
    assert_eq!(end["type"], "BOOKMARK");
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(end["object"]["kind"], "Pod");
    let started = Instant::now();
    let mut bookmarks = 0;
    loop {
        match w.next() {
            Line::Event(e) if e["type"] == "BOOKMARK" => {
                assert!(e["object"]["metadata"]["resourceVersion"].is_string());
                bookmarks += 1;
            }
            Line::End => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(bookmarks >= 1, "periodic bookmarks");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(5),
        "closed after timeoutSeconds: {took:?}"
    );
}

#[test]
fn selector_watch_turns_label_changes_into_added_and_deleted() {
    let sim = Sim::start(&[]);
    let base = "/api/v1/namespaces/s/configmaps";
    sim.json("POST", base, cm("a"));
    let mut w = sim.watch(
        &format!(
            "{base}?watch=1&resourceVersion={}&labelSelector=app%3Dt",
            sim.rv()
        ),
        &[],
    );
    let relabel = |app: &str| {
        sim.request(
            "PATCH",
            &format!("{base}/a"),
            &[("Content-Type", "application/merge-patch+json")],
            json!({"metadata": {"labels": {"app": app}}})
                .to_string()
                .as_bytes(),
        )
    };
    relabel("other");
    relabel("t");
    assert_eq!(w.change()["type"], "DELETED");
    assert_eq!(w.change()["type"], "ADDED");
}

#[test]
fn faults_429_500_latency_and_in_flight_counting() {
    let sim = Sim::start(&[]);
    sim.control(
        "/sim/faults",
        json!({"status429": {"count": 1, "retryAfterSeconds": 3}, "status500": {"count": 1}}),
    );
    let r = sim.get("/api/v1/pods");
    assert_eq!((r.code, r.header("retry-after")), (429, Some("3")));
    assert_eq!(r.value()["reason"], "TooManyRequests");
    let r = sim.get("/api/v1/pods");
    assert_eq!(
        (r.code, r.value()["reason"].as_str()),
        (500, Some("InternalError"))
    );
    assert_eq!(sim.get("/api/v1/pods").code, 200);

    sim.control("/sim/faults", json!({"latencyMs": 400}));
    sim.control("/sim/stats/reset", json!({}));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let addr = sim.addr.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).expect("connect");
                s.write_all(
                    b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                )
                .expect("write");
                let mut out = Vec::new();
                let _ = s.read_to_end(&mut out);
                out
            })
        })
        .collect();
    let during = sim.wait_for("3 requests in flight", |s| s["inFlight"] == 3);
    assert_eq!(during["maxInFlight"], 3);
    for t in threads {
        assert!(t.join().expect("thread").starts_with(b"HTTP/1.1 200"));
    }
    let after = sim.stats();
    assert_eq!(
        (after["inFlight"].as_i64(), after["maxInFlight"].as_i64()),
        (Some(0), Some(3))
    );
    sim.control("/sim/faults/clear", json!({}));
    let typo = sim.json("POST", "/sim/faults", json!({"status492": {"count": 1}}));
    assert_eq!(typo.code, 400, "unknown faults are rejected, not ignored");
}

#[test]
fn faults_split_chunks_keep_bodies_and_lines_intact() {
    let sim = Sim::start(&[]);
    let whole = sim.get("/api/v1/pods").value();
    sim.control("/sim/faults", json!({"splitChunks": true, "seed": 7}));
    assert_eq!(sim.get("/api/v1/pods").value()["items"], whole["items"]);
    let mut w = sim.watch("/api/v1/pods?watch=1", &[]);
    for _ in 0..30 {
        assert_eq!(w.event()["type"], "ADDED");
    }
    assert!(w.chunk_sizes.len() > 30 * 100, "tiny chunks");
    assert!(w.chunk_sizes.iter().all(|&n| (1..=7).contains(&n)));
}

#[test]
fn faults_drop_after_events_malformed_line_and_drop_watches() {
    let sim = Sim::start(&[]);
    sim.control("/sim/faults", json!({"dropWatchesAfterEvents": 2}));
    let mut w = sim.watch("/api/v1/pods?watch=1", &[]);
    w.event();
    w.event();
    assert_eq!(
        w.next(),
        Line::Abrupt,
        "closed mid-stream without the last chunk"
    );

    sim.control("/sim/faults", json!({"malformedLineOnce": true}));
    let mut w = sim.watch("/api/v1/pods?watch=1&resourceVersion=1", &[]);
    assert!(matches!(w.next(), Line::Garbage(_)));
    assert_eq!(w.next(), Line::Abrupt);
    let mut w = sim.watch(
        &format!("/api/v1/pods?watch=1&resourceVersion={}", sim.rv()),
        &[],
    );
    sim.control("/sim/churn/steps", json!({"steps": 3, "seed": 1}));
    assert!(matches!(w.next(), Line::Event(_)), "only once");

    sim.control("/sim/faults/clear", json!({}));
    let mut a = sim.watch(
        "/api/v1/configmaps?watch=1&resourceVersion=1&allowWatchBookmarks=true",
        &[],
    );
    let mut b = sim.watch("/api/v1/pods?watch=1", &[]);
    sim.wait_for("watches open", |s| s["openWatches"] == 3);
    let dropped = sim.control("/sim/drop-watches", json!({}));
    assert_eq!(dropped["dropped"], 3);
    for w in [&mut a, &mut b] {
        loop {
            match w.next() {
                Line::Event(_) => continue,
                end => {
                    assert_eq!(end, Line::Abrupt);
                    break;
                }
            }
        }
    }
    sim.wait_for("watches closed", |s| s["openWatches"] == 0);
}

#[test]
fn discovery_legacy_and_aggregated() {
    let sim = Sim::start(&[]);
    assert_eq!(sim.get("/api").value()["versions"], json!(["v1"]));
    let groups = sim.get("/apis").value();
    assert!(groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .any(|g| g["name"] == "demo.kubewasm.dev"));
    let crd = sim.get("/apis/demo.kubewasm.dev/v1").value();
    assert_eq!(crd["resources"][0]["kind"], "Widget");
    let media = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let agg = sim.request(
        "GET",
        "/apis",
        &[("Accept", &format!("{media},application/json"))],
        b"",
    );
    assert_eq!(agg.header("content-type"), Some(media));
    assert_eq!(agg.value()["kind"], "APIGroupDiscoveryList");
    let core = sim
        .request("GET", "/api", &[("Accept", media)], b"")
        .value();
    assert_eq!(
        core["items"][0]["versions"][0]["resources"][0]["resource"],
        "pods"
    );
    assert_eq!(sim.get("/apis/nope/v1").code, 404);
    assert_eq!(sim.get("/api/v1/nope").code, 404);
}

#[test]
fn flood_reaches_a_fast_reader_in_order() {
    let sim = Sim::start(&["--pods", "500", "--pod-bytes", "3000"]);
    let rv = sim.rv();
    let mut w = sim.watch(&format!("/api/v1/pods?watch=1&resourceVersion={rv}"), &[]);
    sim.wait_for("the watch", |s| s["openWatches"] == 1);
    const N: u64 = 5_000;
    let started = Instant::now();
    sim.control("/sim/flood", json!({"resource": "pods", "events": N}));
    let mut last = 0;
    for _ in 0..N {
        let e = w.event();
        assert_eq!(e["type"], "MODIFIED");
        let rv = rv_of(&e["object"]);
        assert!(rv > last);
        last = rv;
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "flood: {N} events of ~3 KB in {secs:.2}s = {:.0} events/s (debug test client)",
        N as f64 / secs
    );
    assert_eq!(sim.stats()["floodEvents"], N);
}

#[test]
fn churn_steps_and_seed_are_deterministic() {
    let (a, b) = (Sim::start(&["--seed", "4"]), Sim::start(&["--seed", "4"]));
    for s in [&a, &b] {
        s.control(
            "/sim/seed",
            json!({"namespaces": 2, "pods": 40, "seed": 9, "podBytes": 2500}),
        );
        s.control("/sim/churn/steps", json!({"steps": 200, "seed": 5}));
    }
    let (sa, sb) = (
        a.get("/sim/state?resource=pods").value(),
        b.get("/sim/state?resource=pods").value(),
    );
    assert_eq!(sa, sb);
    // Same objects too, apart from the wall-clock timestamps of churn writes.
    let shape = |s: &Sim| -> Vec<Value> {
        s.get("/api/v1/pods").value()["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|p| {
                json!([
                    p["metadata"]["name"],
                    p["metadata"]["labels"],
                    p["metadata"]["uid"],
                    p["spec"]["containers"],
                    p["status"]["phase"],
                    p["status"]["containerStatuses"][0]["restartCount"]
                ])
            })
            .collect()
    };
    assert_eq!(shape(&a), shape(&b));
    assert_eq!(a.get("/sim/state?resource=nope").code, 400);
}

#[test]
fn bad_requests_never_kill_the_server() {
    let sim = Sim::start(&[]);
    for raw in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nContent-Length: zz\r\n\r\n",
        b"\xff\xfe\r\n\r\n",
    ] {
        let mut s = sim.connect();
        s.write_all(raw).expect("write");
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
    }
    for (m, p, body) in [
        ("POST", "/api/v1/namespaces/x/pods", &b"[1,2"[..]),
        ("PUT", "/api/v1/namespaces/x/pods/p", b"\"str\""),
        ("PATCH", "/api/v1/namespaces/default/pods/p", b"{}"),
        ("GET", "/api/v1/pods?limit=abc", b""),
        ("GET", "/api/v1/pods?watch=1&resourceVersion=abc", b""),
        ("GET", "/api/v1/pods?continue=%%%", b""),
        ("POST", "/sim/seed", b"[]"),
        ("POST", "/sim/churn", br#"{"perSec": -1}"#),
        ("GET", "/api/v1/namespaces/a/pods/b/c/d/e", b""),
    ] {
        let r = sim.request(m, p, &[("Content-Type", "application/json")], body);
        assert!((400..500).contains(&r.code), "{m} {p}: {}", r.code);
        assert_eq!(r.value()["kind"], "Status", "{m} {p}");
    }
    assert_eq!(sim.get("/api/v1/pods").code, 200, "still serving");
}

#[test]
fn static_dir_is_served_beside_the_api() {
    let dir = std::env::temp_dir().join(format!("kubewasm-sim-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("index.html"), "<title>dash</title>").expect("write");
    std::fs::write(dir.join("app.wasm"), b"\0asm").expect("write");
    let sim = Sim::start(&["--static-dir", dir.to_str().expect("utf8")]);
    let r = sim.get("/");
    assert_eq!((r.code, r.text().as_str()), (200, "<title>dash</title>"));
    assert_eq!(
        sim.get("/app.wasm").header("content-type"),
        Some("application/wasm")
    );
    assert_eq!(sim.get("/api/v1/pods").code, 200);
    assert_eq!(sim.get("/openapi/v2").code, 404);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_watch_is_noticed_while_other_resources_churn() {
    let sim = Sim::start(&["--churn-per-sec", "300"]);
    let w = sim.watch("/api/v1/namespaces/quiet/configmaps?watch=1", &[]);
    assert_eq!(w.code, 200);
    sim.wait_for("the watch", |s| s["openWatches"] == 1);
    drop(w);
    sim.wait_for("the watch to close", |s| s["openWatches"] == 0);
    assert!(
        sim.stats()["churnSteps"].as_u64().unwrap_or(0) > 0,
        "churn was running"
    );
}

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut out)
        .expect("a gzip body");
    out
}

fn gzipped(sim: &Sim) -> u64 {
    sim.stats()["gzippedResponses"].as_u64().expect("counter")
}

#[test]
fn large_responses_are_gzipped_as_the_api_server_does() {
    // 300 pods of ~2.5 KB: a list of about 750 KB, far over the 128 KiB threshold.
    let sim = Sim::start(&["--pods", "300"]);
    let plain = sim.get("/api/v1/pods");
    assert!(plain.body.len() > 128 * 1024, "{}", plain.body.len());
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(plain.header("vary"), None);

    let gz = sim.request("GET", "/api/v1/pods", &[("Accept-Encoding", "gzip")], b"");
    assert_eq!(gz.code, 200);
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(gz.header("vary"), Some("Accept-Encoding"));
    assert_eq!(gz.header("content-type"), Some("application/json"));
    assert_eq!(
        gz.header("content-length"),
        Some(gz.body.len().to_string().as_str()),
        "the length of the compressed body"
    );
    assert!(gz.body.len() * 4 < plain.body.len(), "{}", gz.body.len());
    assert_eq!(gunzip(&gz.body), plain.body, "the same JSON, byte for byte");
    assert_eq!(gzipped(&sim), 1);

    // A browser's header counts; q-values and other spellings do not, as in
    // the API server (which splits at commas and compares each token whole).
    let browser = sim.request(
        "GET",
        "/api/v1/pods",
        &[("Accept-Encoding", "gzip, deflate, br, zstd")],
        b"",
    );
    assert_eq!(browser.header("content-encoding"), Some("gzip"));
    for other in ["identity", "deflate, br", "gzip;q=1.0", "x-gzip", "*"] {
        let r = sim.request("GET", "/api/v1/pods", &[("Accept-Encoding", other)], b"");
        assert_eq!(r.header("content-encoding"), None, "{other}");
        assert_eq!(r.header("vary"), None, "{other}");
        assert_eq!(r.body, plain.body, "{other}");
    }
    assert_eq!(gzipped(&sim), 2);

    // Small answers go as they are: a page, an object, an error, discovery.
    let ae = [("Accept-Encoding", "gzip")];
    let page = sim.request("GET", "/api/v1/pods?limit=5", &ae, b"");
    assert_eq!(page.value()["items"].as_array().map(Vec::len), Some(5));
    let meta = &page.value()["items"][0]["metadata"];
    let (ns, name) = (meta["namespace"].as_str(), meta["name"].as_str());
    let one = sim.request(
        "GET",
        &format!(
            "/api/v1/namespaces/{}/pods/{}",
            ns.expect("ns"),
            name.expect("name")
        ),
        &ae,
        b"",
    );
    let missing = sim.request("GET", "/api/v1/namespaces/default/pods/nope", &ae, b"");
    let discovery = sim.request("GET", "/apis/apps/v1", &ae, b"");
    for (what, r, code) in [
        ("page", &page, 200),
        ("object", &one, 200),
        ("error", &missing, 404),
        ("discovery", &discovery, 200),
    ] {
        assert_eq!(r.code, code, "{what}");
        assert_eq!(r.header("content-encoding"), None, "{what}");
        assert_eq!(r.header("vary"), None, "{what}");
        assert!(r.value().is_object(), "{what}");
    }

    // A watch is never compressed, however much it replays.
    let mut w = sim.watch("/api/v1/pods?watch=1", &ae);
    assert_eq!(w.code, 200);
    assert_eq!(header(&w.headers, "content-encoding"), None);
    assert_eq!(header(&w.headers, "vary"), None);
    for _ in 0..300 {
        assert_eq!(w.event()["type"], "ADDED");
    }
    assert!(w.chunk_sizes.iter().sum::<usize>() > 128 * 1024);
    assert_eq!(gzipped(&sim), 2);

    // Bodies split by the fault are the compressed bytes, cut anywhere.
    sim.control("/sim/faults", json!({"splitChunks": true, "seed": 3}));
    let split = sim.request("GET", "/api/v1/pods", &ae, b"");
    assert_eq!(split.header("content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&split.body), plain.body);
    sim.control("/sim/faults/clear", json!({}));

    // `POST /sim/stats/reset` clears the counter.
    sim.control("/sim/stats/reset", json!({}));
    assert_eq!(gzipped(&sim), 0);
}

#[test]
fn no_compression_turns_gzip_off() {
    let sim = Sim::start(&["--pods", "300", "--no-compression"]);
    let r = sim.request("GET", "/api/v1/pods", &[("Accept-Encoding", "gzip")], b"");
    assert_eq!(r.code, 200);
    assert!(r.body.len() > 128 * 1024);
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(r.header("vary"), None);
    assert_eq!(r.value()["items"].as_array().map(Vec::len), Some(300));
    assert_eq!(gzipped(&sim), 0);
}
