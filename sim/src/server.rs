//! Connections and request dispatch: one thread per connection (keep-alive
//! honoured), CORS preflights, the bearer token, who may use `/sim/*`, API
//! faults (latency, 429, 500, split bodies), the in-flight counters, response
//! compression, and the hand-off to the API routes, the watch streamer, the
//! control endpoints and static files.

use std::io::BufReader;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::api::{self, Reply};
use crate::faults::Injected;
use crate::http::{
    read_request, write_response, write_response_with_cors, ReadError, Request, Response,
};
use crate::rng::Rng;
use crate::state::{lock, Sim};
use crate::status::ApiError;
use crate::{compress, control, cors, statics, watch, ws};

/// Accept connections forever.
pub fn run(listener: TcpListener, sim: Arc<Sim>) {
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let sim = sim.clone();
        let spawned = std::thread::Builder::new()
            .name("kubewasm-sim-conn".into())
            .spawn(move || connection(&sim, stream));
        if let Err(e) = spawned {
            eprintln!("kubewasm-sim: cannot start a connection thread: {e}");
        }
    }
}

fn connection(sim: &Arc<Sim>, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut out = stream;
    loop {
        let req = match read_request(&mut reader, &mut out) {
            Ok(Some(r)) => r,
            Ok(None) | Err(ReadError::Io) => return,
            Err(ReadError::Bad(code, msg)) => {
                let e = ApiError::new(code, "BadRequest", msg);
                let _ = write_response(&mut out, &api::error_response(&e), false, None);
                return;
            }
        };
        let keep_going = handle(sim, &mut out, &req);
        if !keep_going || !req.keep_alive {
            return;
        }
    }
}

/// Whether a path belongs to the Kubernetes API.
fn is_api(path: &str) -> bool {
    path == "/api" || path == "/apis" || path.starts_with("/api/") || path.starts_with("/apis/")
}

/// Marks an API request answered when its headers go out (or it fails).
struct InFlight<'a> {
    sim: &'a Sim,
    open: bool,
}

impl InFlight<'_> {
    fn answered(&mut self) {
        if std::mem::take(&mut self.open) {
            self.sim.request_answered();
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.answered();
    }
}

/// Handle one request; false when the connection must close.
fn handle(sim: &Arc<Sim>, out: &mut TcpStream, req: &Request) -> bool {
    let path = req.path.as_str();
    let keep = req.keep_alive;
    if path == "/sim" || path.starts_with("/sim/") {
        return admin_request(sim, out, req);
    }
    if req.method == "OPTIONS" {
        let resp = Response {
            code: 204,
            content_type: "text/plain",
            headers: cors::preflight_headers(req.header("access-control-request-headers")),
            body: Vec::new(),
        };
        return write_response(out, &resp, keep, None).is_ok();
    }
    match path {
        "/version" => {
            let body = br#"{"major":"1","minor":"33","gitVersion":"v1.33.0-kubewasm-sim","gitCommit":"0000000000000000000000000000000000000000","gitTreeState":"clean","buildDate":"2026-01-01T00:00:00Z","goVersion":"go1.24","compiler":"gc","platform":"linux/amd64"}"#;
            return write_response(out, &Response::json(200, body.to_vec()), keep, None).is_ok();
        }
        "/healthz" | "/readyz" | "/livez" => {
            let resp = Response {
                code: 200,
                content_type: "text/plain; charset=utf-8",
                headers: Vec::new(),
                body: b"ok".to_vec(),
            };
            return write_response(out, &resp, keep, None).is_ok();
        }
        _ => {}
    }
    if path == "/openapi" || path.starts_with("/openapi/") {
        let e = ApiError::new(404, "NotFound", "the simulator serves no OpenAPI documents");
        return write_response(out, &api::error_response(&e), keep, None).is_ok();
    }
    if !is_api(path) {
        return write_response(
            out,
            &statics::serve(sim.static_dir.as_deref(), req),
            keep,
            None,
        )
        .is_ok();
    }
    api_request(sim, out, req)
}

/// A `/sim/*` control request: no CORS headers unless it is a cross-origin
/// request holding the sim's token (see `cors::admin_access`).
fn admin_request(sim: &Arc<Sim>, out: &mut TcpStream, req: &Request) -> bool {
    let keep = req.keep_alive;
    let cors_headers = match cors::admin_access(req, sim.token.as_deref()) {
        cors::Admin::Local => "",
        cors::Admin::TokenCrossOrigin => cors::HEADERS,
        cors::Admin::Refused => {
            let e = ApiError::new(
                403,
                "Forbidden",
                "the /sim control endpoints do not accept requests from other origins",
            );
            return write_response_with_cors(out, &api::error_response(&e), keep, None, "").is_ok();
        }
    };
    let resp = if req.method == "OPTIONS" {
        Response {
            code: 204,
            content_type: "text/plain",
            // Only a token-holding cross-origin caller gets a preflight answer.
            headers: if cors_headers.is_empty() {
                Vec::new()
            } else {
                cors::preflight_headers(req.header("access-control-request-headers"))
            },
            body: Vec::new(),
        }
    } else {
        control::handle(sim, req)
    };
    write_response_with_cors(out, &resp, keep, None, cors_headers).is_ok()
}

/// An API object's response as the API server sends it: gzipped when large
/// and the client accepts it (and compression is on).
fn encoded(sim: &Sim, req: &Request, mut resp: Response) -> Response {
    if sim.compression && compress::gzip(&mut resp, req) {
        sim.stats.gzipped.fetch_add(1, Ordering::Relaxed);
    }
    resp
}

fn api_request(sim: &Sim, out: &mut TcpStream, req: &Request) -> bool {
    // A refused upgrade closes the connection, as the API server's does
    // (some clients wait for the close before failing the handshake).
    let keep = req.keep_alive && !ws::is_upgrade(req);
    sim.request_started();
    let mut in_flight = InFlight { sim, open: true };
    // A WebSocket watch: the handshake is checked before anything else, and
    // a browser's token travels in a subprotocol (see ws.rs).
    let upgrade = if ws::is_upgrade(req) {
        match ws::parse(req) {
            Ok(up) => Some(up),
            Err(e) => {
                let resp = encoded(sim, req, api::error_response(&e));
                in_flight.answered();
                let _ = write_response(out, &resp, false, None);
                return false;
            }
        }
    } else {
        None
    };
    if let Some(t) = &sim.token {
        let by_protocol = upgrade
            .as_ref()
            .is_some_and(|u| u.token.as_deref() == Some(t.as_str()));
        if !by_protocol && !cors::has_token(req, t) {
            let e = ApiError::new(401, "Unauthorized", "Unauthorized");
            let resp = encoded(sim, req, api::error_response(&e));
            in_flight.answered();
            return write_response(out, &resp, keep, None).is_ok();
        }
    }
    let (latency, forced, split) = {
        let mut f = lock(&sim.faults);
        let forced = f.take_error();
        let split = f.split_chunks.then(|| {
            Rng(f.seed
                ^ sim
                    .stats
                    .requests
                    .load(Ordering::Relaxed)
                    .wrapping_mul(0x9E37_79B9))
        });
        (f.latency_ms, forced, split)
    };
    if latency > 0 {
        std::thread::sleep(Duration::from_millis(latency));
    }
    let mut split = split;
    if let Some(forced) = forced {
        let e = match forced {
            Injected::TooManyRequests(secs) => {
                let mut e = ApiError::new(
                    429,
                    "TooManyRequests",
                    "the server has received too many requests and has asked us to try again later",
                );
                e.details = serde_json::json!({"retryAfterSeconds": secs});
                e
            }
            Injected::Internal => ApiError::new(
                500,
                "InternalError",
                "Internal error occurred: injected by kubewasm-sim",
            ),
        };
        let resp = encoded(sim, req, api::error_response(&e));
        in_flight.answered();
        return write_response(out, &resp, keep, split.as_mut()).is_ok();
    }
    match api::handle(sim, req) {
        Reply::Full(resp) => {
            let resp = encoded(sim, req, resp);
            in_flight.answered();
            write_response(out, &resp, keep, split.as_mut()).is_ok()
        }
        Reply::Streamed(resp) => {
            in_flight.answered();
            write_response(out, &resp, keep, split.as_mut()).is_ok()
        }
        Reply::Watch(p) => {
            in_flight.answered();
            if let Err(e) = watch::serve(sim, out, *p, upgrade) {
                // Clients going away mid-stream is normal; anything else is worth a line.
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::BrokenPipe
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::NotConnected
                ) {
                    eprintln!("kubewasm-sim: watch ended: {e}");
                }
            }
            false // a watch always ends its connection
        }
        Reply::Log(l) => {
            in_flight.answered();
            let _ = l.follow(sim, out);
            false // a followed log ends its connection too
        }
    }
}
