//! Streaming a watch: chunked JSON lines, one chunk per event (or, over
//! WebSocket, one message per event: see `ws.rs`), written as soon as events
//! exist (everything available at once goes out in one
//! write). Replay from the history, the current state first when no RV is
//! given, `sendInitialEvents` with the `k8s.io/initial-events-end` bookmark,
//! periodic bookmarks, `timeoutSeconds`, 410 for a compacted RV, and the
//! watch faults (split chunks, a malformed line, drop after N events, drop
//! on demand).
//!
//! Events are serialized once, when written to the store; every watcher
//! frames the same shared bytes between a constant prefix and suffix.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::http::{frame_chunk, pieces, write_stream_head, END_CHUNK};
use crate::resources::RESOURCES;
use crate::rng::Rng;
use crate::state::{lock, Sim};
use crate::status::ApiError;
use crate::store::{EventType, Filter, Obj, Since};
use crate::ws;

/// History entries looked at per lock hold.
const MAX_SCAN: usize = 4096;
/// Bytes gathered before a write.
const WRITE_BATCH: usize = 256 << 10;
/// How often an idle watch checks that its client is still there.
const IDLE_CHECK: Duration = Duration::from_millis(200);

/// A parsed watch request.
#[derive(Debug, Default)]
pub struct WatchParams {
    /// What to watch.
    pub filter: Filter,
    /// Start after this RV; None (no RV or "0") = the current state first.
    pub from_rv: Option<u64>,
    /// allowWatchBookmarks.
    pub bookmarks: bool,
    /// sendInitialEvents (with resourceVersionMatch=NotOlderThan).
    pub send_initial: bool,
    /// timeoutSeconds.
    pub timeout: Option<Duration>,
    /// Objects as `PartialObjectMetadata` (see partial.rs).
    pub partial: bool,
}

fn prefix(kind: &str) -> Vec<u8> {
    format!("{{\"type\":\"{kind}\",\"object\":").into_bytes()
}

/// One watch line (without framing) for an arbitrary object, `type` first
/// like every other line.
fn line(kind: &str, object: &serde_json::Value) -> Vec<u8> {
    let mut l = prefix(kind);
    l.extend_from_slice(&serde_json::to_vec(object).unwrap_or_default());
    l.extend_from_slice(b"}\n");
    l
}

fn bookmark(res: usize, rv: u64, initial_end: bool, partial: bool) -> Vec<u8> {
    let (kind, api_version) = match RESOURCES.get(res) {
        _ if partial => ("PartialObjectMetadata", "meta.k8s.io/v1".to_string()),
        Some(r) => (r.kind, r.api_version()),
        None => ("", String::new()),
    };
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    line(
        "BOOKMARK",
        &json!({"kind": kind, "apiVersion": api_version, "metadata": meta}),
    )
}

/// Whether the peer has closed its side (checked while idle).
pub fn peer_closed(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 1];
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let closed = match stream.peek(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != io::ErrorKind::WouldBlock,
    };
    let _ = stream.set_nonblocking(false);
    closed
}

/// Why a stream ends early.
enum End {
    /// Close without the final chunk (a fault or a dropped watch).
    Abrupt,
}

/// A chunked HTTP response body: one chunk per line.
struct HttpOut<'a> {
    stream: &'a mut TcpStream,
    probe: TcpStream,
    split: Option<Rng>,
    buf: Vec<u8>,
}

/// Where the lines of a watch go: chunks of an HTTP response, or messages
/// on a WebSocket (see `ws.rs`).
enum Out<'a> {
    Http(HttpOut<'a>),
    Ws(Box<ws::Socket<'a>>),
}

impl Out<'_> {
    /// Queue one line (one chunk, or one message) made of `parts`.
    fn line(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        let h = match self {
            Out::Ws(s) => return s.message(parts),
            Out::Http(h) => h,
        };
        if let Some(rng) = &mut h.split {
            let whole = parts.concat();
            for piece in pieces(&whole, rng) {
                let mut out = Vec::with_capacity(16);
                frame_chunk(&mut out, &[piece]);
                h.stream.write_all(&out)?;
                h.stream.flush()?;
            }
            return Ok(());
        }
        frame_chunk(&mut h.buf, parts);
        if h.buf.len() >= WRITE_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::Ws(s) => s.flush(),
            Out::Http(h) => {
                if !h.buf.is_empty() {
                    h.stream.write_all(&h.buf)?;
                    h.buf.clear();
                }
                h.stream.flush()
            }
        }
    }

    /// End cleanly: the terminating chunk, or close 1000.
    fn finish(&mut self) -> io::Result<()> {
        match self {
            Out::Ws(s) => {
                s.flush()?;
                s.finish()
            }
            Out::Http(h) => {
                h.buf.extend_from_slice(END_CHUNK);
                self.flush()
            }
        }
    }

    fn peer_closed(&mut self) -> bool {
        match self {
            Out::Ws(s) => s.peer_closed(),
            Out::Http(h) => peer_closed(&h.probe),
        }
    }
}

struct Writer<'a> {
    out: Out<'a>,
    prefixes: [Vec<u8>; 3],
    sent: u64,
    drop_after: Option<u64>,
    /// Objects go out as `PartialObjectMetadata`.
    partial: bool,
}

impl Writer<'_> {
    /// Queue one line-object (prefix + object + `}\n`) as one chunk.
    fn event(&mut self, kind: EventType, obj: &Obj) -> io::Result<Result<(), End>> {
        let idx = match kind {
            EventType::Added => 0,
            EventType::Modified => 1,
            EventType::Deleted => 2,
        };
        let pre = self
            .prefixes
            .get(idx)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if self.partial {
            let partial = crate::partial::object(&obj.bytes);
            self.out.line(&[pre, &partial, b"}\n"])?;
        } else {
            self.out.line(&[pre, &obj.bytes, b"}\n"])?;
        }
        self.sent += 1;
        if self.drop_after.is_some_and(|n| self.sent >= n) {
            self.flush()?;
            return Ok(Err(End::Abrupt));
        }
        Ok(Ok(()))
    }

    /// Queue an arbitrary line as one chunk.
    fn raw(&mut self, line: &[u8]) -> io::Result<()> {
        self.out.line(&[line])
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// End cleanly with the terminating chunk.
    fn finish(&mut self) -> io::Result<()> {
        self.out.finish()
    }
}

struct Registration<'a> {
    sim: &'a Sim,
    id: u64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.sim.close_watch(self.id);
    }
}

fn expired_line(from: u64, oldest: u64) -> Vec<u8> {
    let e = ApiError::expired(format!("too old resource version: {from} ({oldest})"));
    line("ERROR", &e.to_value())
}

/// Stream a watch until it ends; the caller closes the connection after.
/// With `upgrade`, the handshake is answered and the events go out as
/// WebSocket messages instead of chunks.
pub fn serve(
    sim: &Sim,
    stream: &mut TcpStream,
    p: WatchParams,
    upgrade: Option<ws::Upgrade>,
) -> io::Result<()> {
    let faults = {
        let mut f = lock(&sim.faults);
        let snapshot = f.clone();
        f.malformed_line_once = false;
        snapshot
    };
    let drop_generation = sim.drop_generation.load(Ordering::SeqCst);
    let expire_generation = sim.expire_generation.load(Ordering::SeqCst);
    let start_rv = lock(&sim.store).rv;
    let id = sim.open_watch(stream.try_clone().ok(), p.from_rv.unwrap_or(start_rv));
    let _registration = Registration { sim, id };
    let split = faults
        .split_chunks
        .then(|| Rng(faults.seed ^ id.wrapping_mul(0x9E37_79B9)));
    let out = match upgrade {
        Some(up) => {
            ws::accept(stream, &up)?;
            Out::Ws(Box::new(ws::Socket::new(
                stream,
                split,
                faults.websocket_binary,
            )))
        }
        None => {
            write_stream_head(stream, "application/json")?;
            Out::Http(HttpOut {
                probe: stream.try_clone()?,
                stream,
                split,
                buf: Vec::with_capacity(64 << 10),
            })
        }
    };
    let mut w = Writer {
        out,
        prefixes: [
            prefix(EventType::Added.as_str()),
            prefix(EventType::Modified.as_str()),
            prefix(EventType::Deleted.as_str()),
        ],
        sent: 0,
        drop_after: faults.drop_after_events,
        partial: p.partial,
    };
    if faults.malformed_line_once {
        w.raw(b"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\n")?;
        return w.flush(); // and close abruptly
    }
    let deadline = p.timeout.map(|t| Instant::now() + t);
    let res = p.filter.res;

    // Where the stream starts: replay after an RV, or the current state first.
    let (mut last, initial) = {
        let st = lock(&sim.store);
        match p.from_rv {
            Some(rv) if !p.send_initial => {
                if rv < st.oldest_rv {
                    let l = expired_line(rv, st.oldest_rv);
                    drop(st);
                    w.raw(&l)?;
                    return w.finish();
                }
                (rv, Vec::new())
            }
            _ => (st.rv, st.items_at(st.rv, &p.filter).unwrap_or_default()),
        }
    };
    for obj in &initial {
        if let Err(End::Abrupt) = w.event(EventType::Added, obj)? {
            return Ok(());
        }
    }
    drop(initial);
    if p.send_initial {
        w.raw(&bookmark(res, last, true, p.partial))?;
    }
    w.flush()?;
    sim.watch_progress(id, last);

    let mut last_bookmark = Instant::now();
    let mut last_probe = Instant::now();
    loop {
        enum Step {
            Dropped,
            Expired(u64),
            Events(Vec<(EventType, Obj)>, u64),
            Idle,
        }
        let step = {
            let mut st = lock(&sim.store);
            let wake = Instant::now() + IDLE_CHECK;
            loop {
                if sim.drop_generation.load(Ordering::SeqCst) != drop_generation {
                    break Step::Dropped;
                }
                if sim.expire_generation.load(Ordering::SeqCst) != expire_generation {
                    break Step::Expired(st.oldest_rv);
                }
                match st.events_after(last, &p.filter, MAX_SCAN) {
                    Since::Expired(oldest) => break Step::Expired(oldest),
                    Since::Events(evs, scanned) if scanned > last => {
                        break Step::Events(evs, scanned)
                    }
                    Since::Events(..) => {}
                }
                let now = Instant::now();
                if now >= wake {
                    break Step::Idle;
                }
                st = match sim.changed.wait_timeout(st, wake - now) {
                    Ok((g, _)) => g,
                    Err(poisoned) => poisoned.into_inner().0,
                };
            }
        };
        match step {
            Step::Dropped => return Ok(()),
            Step::Expired(oldest) => {
                w.raw(&expired_line(last, oldest))?;
                return w.finish();
            }
            Step::Events(evs, scanned) => {
                for (kind, obj) in &evs {
                    if let Err(End::Abrupt) = w.event(*kind, obj)? {
                        return Ok(());
                    }
                }
                w.flush()?;
                last = scanned;
                sim.watch_progress(id, last);
            }
            Step::Idle => {}
        }
        // A client that went away is noticed even while other resources'
        // writes keep this watch scanning without writing anything.
        if last_probe.elapsed() >= IDLE_CHECK {
            if w.out.peer_closed() {
                return Ok(());
            }
            last_probe = Instant::now();
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return w.finish();
        }
        if p.bookmarks && last_bookmark.elapsed() >= sim.bookmark_interval {
            w.raw(&bookmark(res, last, false, p.partial))?;
            w.flush()?;
            last_bookmark = Instant::now();
        }
    }
}
