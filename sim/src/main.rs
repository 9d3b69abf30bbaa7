//! kubewasm-sim: a simulated Kubernetes API server for kubewasm's demo, tests
//! and benchmarks. See README.md for the protocol, flags and control endpoints.

mod api;
mod control;
mod discovery;
mod http;
mod patch;
mod resources;
mod seed;
mod selectors;
mod state;
mod watch;

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use api::Reply;
use http::{read_request, write_response, Request};
use state::{lock, Shared, State};

struct Options {
    addr: String,
    port: u16,
    seed: u64,
    namespaces: usize,
    pods: usize,
    pod_bytes: usize,
    churn: f64,
    token: Option<String>,
    history: usize,
    static_dir: Option<PathBuf>,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        addr: "127.0.0.1".into(),
        port: 0,
        seed: 1,
        namespaces: 3,
        pods: 30,
        pod_bytes: 2500,
        churn: 0.0,
        token: None,
        history: 100_000,
        static_dir: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--addr" => o.addr = val("--addr")?,
            "--port" => o.port = val("--port")?.parse().map_err(|e| format!("--port: {e}"))?,
            "--seed" => o.seed = val("--seed")?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--namespaces" => o.namespaces = val("--namespaces")?.parse().map_err(|e| format!("--namespaces: {e}"))?,
            "--pods" => o.pods = val("--pods")?.parse().map_err(|e| format!("--pods: {e}"))?,
            "--pod-bytes" => o.pod_bytes = val("--pod-bytes")?.parse().map_err(|e| format!("--pod-bytes: {e}"))?,
            "--churn-per-sec" => o.churn = val("--churn-per-sec")?.parse().map_err(|e| format!("--churn-per-sec: {e}"))?,
            "--token" => o.token = Some(val("--token")?),
            "--history" => o.history = val("--history")?.parse().map_err(|e| format!("--history: {e}"))?,
            "--static-dir" => o.static_dir = Some(PathBuf::from(val("--static-dir")?)),
            "--help" | "-h" => {
                return Err("usage: kubewasm-sim [--addr A] [--port P] [--seed N] [--namespaces N] [--pods N] [--pod-bytes N] [--churn-per-sec R] [--token T] [--history N] [--static-dir DIR]".into())
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(o)
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut st = State::new(opts.history);
    seed::seed(
        &mut st,
        opts.seed,
        opts.namespaces,
        opts.pods,
        opts.pod_bytes,
    );
    st.churn_per_sec = opts.churn;
    st.churn_seed = opts.seed;
    let state: Shared = Arc::new((Mutex::new(st), Condvar::new()));
    let listener = match TcpListener::bind((opts.addr.as_str(), opts.port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "kubewasm-sim: cannot listen on {}:{}: {e}",
                opts.addr, opts.port
            );
            std::process::exit(1);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(opts.port);
    println!("LISTENING http://{}:{port}", opts.addr);
    let _ = std::io::stdout().flush();
    eprintln!(
        "kubewasm-sim: {} pods in {} namespaces, churn {}/s",
        opts.pods, opts.namespaces, opts.churn
    );
    {
        let s = state.clone();
        std::thread::spawn(move || control::churn_loop(s));
    }
    let token = Arc::new(opts.token);
    let static_dir = Arc::new(opts.static_dir);
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let (state, token, static_dir) = (state.clone(), token.clone(), static_dir.clone());
        std::thread::spawn(move || {
            let _ = stream.set_nodelay(true);
            serve_connection(&state, stream, token.as_deref(), static_dir.as_deref());
        });
    }
}

struct InFlight<'a>(&'a Shared, bool);

impl InFlight<'_> {
    fn start(state: &Shared) -> InFlight<'_> {
        let mut st = lock(state);
        st.stats.in_flight += 1;
        st.stats.requests += 1;
        st.stats.max_in_flight = st.stats.max_in_flight.max(st.stats.in_flight);
        InFlight(state, true)
    }
    fn headers_sent(&mut self) {
        if self.1 {
            self.1 = false;
            lock(self.0).stats.in_flight -= 1;
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.headers_sent();
    }
}

fn serve_connection(
    state: &Shared,
    stream: TcpStream,
    token: Option<&str>,
    static_dir: Option<&Path>,
) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut stream = stream;
    loop {
        let req = match read_request(&mut reader) {
            Ok(Some(r)) => r,
            _ => return,
        };
        let keep_going = handle(state, &mut stream, &req, token, static_dir);
        if !keep_going {
            return;
        }
    }
}

/// Handle one request; false when the connection must close.
fn handle(
    state: &Shared,
    stream: &mut TcpStream,
    req: &Request,
    token: Option<&str>,
    static_dir: Option<&Path>,
) -> bool {
    if req.method == "OPTIONS" {
        let allow_headers = req
            .header("access-control-request-headers")
            .unwrap_or("Authorization, Content-Type, Accept");
        let extra = format!("Access-Control-Allow-Methods: GET, POST, PUT, PATCH, DELETE, OPTIONS\r\nAccess-Control-Allow-Headers: {allow_headers}, Authorization, Content-Type, Accept\r\nAccess-Control-Max-Age: 600\r\n");
        return write_response(stream, 204, "text/plain", &extra, b"").is_ok();
    }
    let is_api = req.path == "/api"
        || req.path == "/apis"
        || req.path.starts_with("/api/")
        || req.path.starts_with("/apis/");
    if req.path.starts_with("/sim/") {
        return send(stream, control::handle(state, req), state);
    }
    if req.path == "/version" {
        let body = br#"{"major":"1","minor":"33","gitVersion":"v1.33.0-kubewasm-sim","platform":"linux/amd64"}"#;
        return write_response(stream, 200, "application/json", "", body).is_ok();
    }
    if !is_api {
        return serve_static(stream, req, static_dir);
    }
    let mut in_flight = InFlight::start(state);
    if let Some(t) = token {
        let ok = req
            .header("authorization")
            .and_then(|h| h.strip_prefix("Bearer "))
            .is_some_and(|given| given == t);
        if !ok {
            in_flight.headers_sent();
            return send(
                stream,
                api::status(401, "Unauthorized", "Unauthorized"),
                state,
            );
        }
    }
    let (latency, fault) = {
        let mut st = lock(state);
        let latency = st.faults.latency_ms;
        let fault = if st.faults.status429 > 0 {
            st.faults.status429 -= 1;
            Some((429, st.faults.retry_after))
        } else if st.faults.status500 > 0 {
            st.faults.status500 -= 1;
            Some((500, 0))
        } else {
            None
        };
        (latency, fault)
    };
    if latency > 0 {
        std::thread::sleep(Duration::from_millis(latency));
    }
    if let Some((code, retry)) = fault {
        in_flight.headers_sent();
        let (reason, msg) = if code == 429 {
            (
                "TooManyRequests",
                "the server has received too many requests and has asked us to try again later",
            )
        } else {
            (
                "InternalError",
                "an error on the server has prevented the request from succeeding",
            )
        };
        let body = state::status_json(code, reason, msg);
        let extra = if code == 429 {
            format!("Retry-After: {retry}\r\n")
        } else {
            String::new()
        };
        return write_response(stream, code, "application/json", &extra, &body).is_ok();
    }
    match api::handle(state, req) {
        Reply::Watch(p) => {
            in_flight.headers_sent();
            let _ = watch::serve(state, stream, *p);
            false // watches end the connection
        }
        reply => {
            in_flight.headers_sent();
            send(stream, reply, state)
        }
    }
}

fn send(stream: &mut TcpStream, reply: Reply, _state: &Shared) -> bool {
    match reply {
        Reply::Full {
            code,
            content_type,
            headers,
            body,
        } => write_response(stream, code, content_type, &headers, &body).is_ok(),
        Reply::Watch(_) => false,
    }
}

fn serve_static(stream: &mut TcpStream, req: &Request, dir: Option<&Path>) -> bool {
    let Some(dir) = dir else {
        let body = b"kubewasm-sim: no --static-dir given";
        return write_response(stream, 404, "text/plain", "", body).is_ok();
    };
    let rel = req.path.trim_start_matches('/');
    if rel.split('/').any(|s| s == "..") {
        return write_response(stream, 400, "text/plain", "", b"bad path").is_ok();
    }
    let mut path = dir.join(rel);
    if path.is_dir() {
        path = path.join("index.html");
    }
    if !path.exists() && Path::new(rel).extension().is_none() {
        path = dir.join("index.html"); // single-page app fallback
    }
    let ctype = match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "application/octet-stream",
    };
    match std::fs::read(&path) {
        Ok(body) => {
            write_response(stream, 200, ctype, "Cache-Control: no-cache\r\n", &body).is_ok()
        }
        Err(_) => write_response(stream, 404, "text/plain", "", b"not found").is_ok(),
    }
}
