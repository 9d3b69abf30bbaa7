//! `GET …/pods/{name}/log`: a deterministic, growing log per container.
//!
//! A container's log starts the first time it is asked for, with
//! [`INITIAL_LINES`] lines, and grows by one line every [`LINE_EVERY`].
//! Line `k` of a container instance always reads the same
//! (`{container} [{restart}] line {k}: {words}`), so any read is a window of
//! one fixed sequence; its timestamp is the instance's start plus `k` steps.
//! `POST /sim/restart-container` ends the current instance: its log becomes
//! the `previous` one, a new instance starts at line 0, and followed streams
//! of the old instance end (as a kubelet's do when the container exits).
//!
//! Options as `PodLogOptions`: `container` (required when the pod has
//! several: 400 naming them), `follow`, `previous` (400 when the container
//! never restarted), `sinceSeconds`, `tailLines`, `timestamps`
//! (RFC 3339 with nanoseconds, then a space), `limitBytes` (the body stops
//! there, mid-line if need be). Bad values are 422 `Invalid`.

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::http::{frame_chunk, write_stream_head, Request, Response, END_CHUNK};
use crate::state::{lock, Sim};
use crate::status::ApiError;

/// Lines a container has written when its log is first read.
pub const INITIAL_LINES: u64 = 10;
/// One more line this often.
pub const LINE_EVERY: Duration = Duration::from_millis(100);

const WORDS: &[&str] = &[
    "GET",
    "/healthz",
    "200",
    "reconciled",
    "synced",
    "cache",
    "warm",
    "request",
    "served",
    "ready",
    "tick",
    "flush",
    "leader",
    "lease",
    "renewed",
    "queue",
    "drained",
    "ok",
];

/// One run of a container.
#[derive(Clone, Debug)]
struct Instance {
    restart: u32,
    started: Instant,
    /// Wall-clock ms of the start, for timestamps.
    started_ms: u64,
}

impl Instance {
    fn new(restart: u32) -> Instance {
        Instance {
            restart,
            started: Instant::now(),
            started_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
        }
    }

    /// Lines written by `now`.
    fn lines_at(&self, now: Instant) -> u64 {
        let step = LINE_EVERY.as_millis().max(1);
        INITIAL_LINES + (now.saturating_duration_since(self.started).as_millis() / step) as u64
    }

    /// Wall-clock ms of line `k` (the initial lines are spread before the start).
    fn line_ms(&self, k: u64) -> u64 {
        let step = LINE_EVERY.as_millis() as u64;
        (self.started_ms + k * step).saturating_sub(INITIAL_LINES * step)
    }
}

/// A container's current run and the one before it (with its final count).
#[derive(Clone, Debug)]
struct Container {
    current: Instance,
    previous: Option<(Instance, u64)>,
}

/// Every container log the sim has been asked for.
#[derive(Default)]
pub struct Logs {
    containers: HashMap<(String, String, String), Container>,
}

impl Logs {
    fn entry(&mut self, ns: &str, pod: &str, c: &str) -> &mut Container {
        self.containers
            .entry((ns.to_string(), pod.to_string(), c.to_string()))
            .or_insert_with(|| Container {
                current: Instance::new(0),
                previous: None,
            })
    }

    /// End the current run of a container; returns its new restart count.
    pub fn restart(&mut self, ns: &str, pod: &str, c: &str) -> u32 {
        let entry = self.entry(ns, pod, c);
        let now = Instant::now();
        let old = entry.current.clone();
        let count = old.lines_at(now);
        entry.current = Instance::new(old.restart + 1);
        entry.previous = Some((old, count));
        entry.current.restart
    }

    /// Forget every log (a new seed).
    pub fn clear(&mut self) {
        self.containers.clear();
    }
}

fn line_text(ns: &str, pod: &str, c: &str, inst: &Instance, k: u64) -> String {
    // A stable hash of the line's identity picks its words.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in ns.bytes().chain(pod.bytes()).chain(c.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h ^= u64::from(inst.restart).wrapping_mul(0x9E37_79B9) ^ k.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let w = |i: u64| WORDS[((h >> (i * 8)) % WORDS.len() as u64) as usize];
    format!(
        "{c} [{}] line {k}: {} {} {}",
        inst.restart,
        w(0),
        w(1),
        w(2)
    )
}

/// `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ` for wall-clock ms.
fn rfc3339_nanos(ms: u64) -> String {
    let secs = crate::clock::rfc3339(ms / 1000);
    format!(
        "{}.{:09}Z",
        secs.trim_end_matches('Z'),
        (ms % 1000) * 1_000_000
    )
}

/// A validated log request.
pub struct LogRequest {
    ns: String,
    pod: String,
    container: String,
    follow: bool,
    previous: bool,
    since_seconds: Option<u64>,
    tail_lines: Option<u64>,
    timestamps: bool,
    limit_bytes: Option<u64>,
}

fn number(req: &Request, name: &str, min: i64) -> Result<Option<u64>, ApiError> {
    match req.param(name).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => match s.parse::<i64>() {
            Ok(n) if n >= min => Ok(Some(n as u64)),
            Ok(_) => Err(ApiError::new(
                422,
                "Invalid",
                format!("PodLogOptions \"\" is invalid: {name}: Invalid value: {s}: must be greater than or equal to {min}"),
            )),
            Err(_) => Err(ApiError::bad_request(format!("invalid {name} {s:?}"))),
        },
    }
}

/// Check a log request against the pod (its containers) and the options.
pub fn parse(sim: &Sim, ns: &str, pod: &Value, req: &Request) -> Result<LogRequest, ApiError> {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let containers: Vec<&str> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let container = match req.param("container").filter(|c| !c.is_empty()) {
        Some(c) if containers.contains(&c) => c.to_string(),
        Some(c) => {
            return Err(ApiError::bad_request(format!(
                "container {c} is not valid for pod {name}"
            )))
        }
        None if containers.len() == 1 => containers[0].to_string(),
        None => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                containers.join(" ")
            )))
        }
    };
    let r = LogRequest {
        ns: ns.to_string(),
        pod: name.to_string(),
        follow: req.flag("follow"),
        previous: req.flag("previous"),
        since_seconds: number(req, "sinceSeconds", 1)?,
        tail_lines: number(req, "tailLines", 0)?,
        timestamps: req.flag("timestamps"),
        limit_bytes: number(req, "limitBytes", 1)?,
        container,
    };
    if r.previous {
        let mut logs = lock(&sim.logs);
        if logs.entry(ns, name, &r.container).previous.is_none() {
            return Err(ApiError::bad_request(format!(
                "previous terminated container \"{}\" in pod \"{name}\" not found",
                r.container
            )));
        }
    }
    Ok(r)
}

impl LogRequest {
    /// The instance read, the first line to send and the last line written.
    fn window(&self, sim: &Sim) -> (Instance, u64, u64) {
        let mut logs = lock(&sim.logs);
        let c = logs.entry(&self.ns, &self.pod, &self.container);
        let now = Instant::now();
        let (inst, end) = match (&c.previous, self.previous) {
            (Some((p, n)), true) => (p.clone(), *n),
            _ => (c.current.clone(), c.current.lines_at(now)),
        };
        let mut first = 0;
        if let Some(s) = self.since_seconds {
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0);
            let from = wall.saturating_sub(s * 1000);
            while first < end && inst.line_ms(first) < from {
                first += 1;
            }
        }
        if let Some(t) = self.tail_lines {
            first = first.max(end.saturating_sub(t));
        }
        (inst, first, end)
    }

    fn line(&self, inst: &Instance, k: u64) -> String {
        let text = line_text(&self.ns, &self.pod, &self.container, inst, k);
        if self.timestamps {
            format!("{} {text}\n", rfc3339_nanos(inst.line_ms(k)))
        } else {
            format!("{text}\n")
        }
    }

    /// Whether the stream is to stay open.
    pub fn follows(&self) -> bool {
        self.follow && !self.previous
    }

    /// The whole answer of a request that does not follow.
    pub fn body(&self, sim: &Sim) -> Response {
        let (inst, first, end) = self.window(sim);
        let mut body = Vec::new();
        for k in first..end {
            body.extend_from_slice(self.line(&inst, k).as_bytes());
        }
        if let Some(limit) = self.limit_bytes {
            body.truncate(limit.min(usize::MAX as u64) as usize);
        }
        Response {
            code: 200,
            content_type: "text/plain",
            headers: Vec::new(),
            body,
        }
    }

    /// Follow the log until the container restarts, the pod goes away, the
    /// byte limit is reached or the client leaves.
    pub fn follow(&self, sim: &Sim, stream: &mut TcpStream) -> io::Result<()> {
        write_stream_head(stream, "text/plain")?;
        let (inst, mut next, _) = self.window(sim);
        let mut sent = 0u64;
        let limit = self.limit_bytes.unwrap_or(u64::MAX);
        loop {
            let (current, end) = {
                let mut logs = lock(&sim.logs);
                let c = logs.entry(&self.ns, &self.pod, &self.container);
                match &c.previous {
                    // Restarted since: the old run's lines up to its end.
                    Some((p, n)) if p.restart == inst.restart => (false, *n),
                    _ => (true, inst.lines_at(Instant::now())),
                }
            };
            let mut out = Vec::new();
            while next < end && sent < limit {
                let line = self.line(&inst, next);
                let room = (limit - sent).min(line.len() as u64) as usize;
                frame_chunk(&mut out, &[&line.as_bytes()[..room]]);
                sent += room as u64;
                next += 1;
            }
            let gone = lock(&sim.store)
                .get(crate::resources::ids::PODS, &self.ns, &self.pod)
                .is_none();
            if !current || sent >= limit || gone {
                out.extend_from_slice(END_CHUNK);
                stream.write_all(&out)?;
                return stream.flush();
            }
            if !out.is_empty() {
                stream.write_all(&out)?;
                stream.flush()?;
            }
            if crate::watch::peer_closed(stream) {
                return Ok(());
            }
            std::thread::sleep(LINE_EVERY / 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_stable_and_timestamps_well_formed() {
        let inst = Instance::new(0);
        let a = line_text("ns", "p", "c", &inst, 3);
        assert_eq!(a, line_text("ns", "p", "c", &inst, 3));
        assert!(a.starts_with("c [0] line 3: "));
        assert_ne!(a, line_text("ns", "p", "c", &inst, 4));
        let ts = rfc3339_nanos(1_767_225_600_123);
        assert_eq!(ts, "2026-01-01T00:00:00.123000000Z");
        assert!(inst.lines_at(inst.started) == INITIAL_LINES);
        assert!(inst.line_ms(INITIAL_LINES) == inst.started_ms);
    }

    #[test]
    fn a_restart_keeps_the_old_run_as_previous() {
        let mut logs = Logs::default();
        logs.entry("ns", "p", "c");
        assert_eq!(logs.restart("ns", "p", "c"), 1);
        let c = logs.entry("ns", "p", "c");
        let (prev, n) = c.previous.clone().unwrap();
        assert_eq!(prev.restart, 0);
        assert!(n >= INITIAL_LINES);
        assert_eq!(c.current.restart, 1);
    }
}
