//! Streaming a watch: replay from history, live events, bookmarks, initial
//! events for watch-list, timeouts, 410 for compacted RVs, and faults.

use std::io;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::api::WatchParams;
use crate::http::{write_chunk, write_chunked_end, write_chunked_head};
use crate::resources::RESOURCES;
use crate::seed::Rng;
use crate::state::{lock, status_json, Shared};

struct WatchGuard {
    state: Shared,
    id: u64,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        let mut st = lock(&self.state);
        st.stats.open_watches -= 1;
        st.watch_progress.remove(&self.id);
        drop(st);
        self.state.1.notify_all();
    }
}

fn line(kind: &str, obj: &Value) -> Vec<u8> {
    let mut l = serde_json::to_vec(&json!({"type": kind, "object": obj})).unwrap_or_default();
    l.push(b'\n');
    l
}

fn bookmark(res: usize, rv: u64, initial_end: bool) -> Vec<u8> {
    let r = &RESOURCES[res];
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    line(
        "BOOKMARK",
        &json!({"kind": r.kind, "apiVersion": r.api_version(), "metadata": meta}),
    )
}

/// Whether the peer has closed its side (checked while idle).
fn peer_closed(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 1];
    let _ = stream.set_nonblocking(true);
    let closed = matches!(stream.peek(&mut buf), Ok(0));
    let _ = stream.set_nonblocking(false);
    closed
}

struct Writer<'a> {
    stream: &'a mut TcpStream,
    split: Option<Rng>,
}

impl Writer<'_> {
    fn send(&mut self, data: &[u8]) -> io::Result<()> {
        match &mut self.split {
            None => write_chunk(self.stream, data),
            Some(rng) => {
                let mut rest = data;
                while !rest.is_empty() {
                    let n = (1 + rng.below(7) as usize).min(rest.len());
                    write_chunk(self.stream, &rest[..n])?;
                    rest = &rest[n..];
                }
                Ok(())
            }
        }
    }
}

pub fn serve(state: &Shared, stream: &mut TcpStream, p: WatchParams) -> io::Result<()> {
    let (id, drop_gen, faults) = {
        let mut st = lock(state);
        st.stats.open_watches += 1;
        let id = st.next_watch_id;
        st.next_watch_id += 1;
        let faults = st.faults.clone();
        st.faults.malformed_line_once = false;
        (id, st.drop_gen, faults)
    };
    let _guard = WatchGuard {
        state: state.clone(),
        id,
    };
    write_chunked_head(stream, "application/json")?;
    let split = faults.split_chunks.then_some(Rng(faults.seed ^ id));
    let mut w = Writer { stream, split };
    if faults.malformed_line_once {
        w.send(b"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\n")?;
        return Ok(()); // abrupt close
    }
    let deadline = p
        .timeout_secs
        .map(|s| Instant::now() + Duration::from_secs(s));
    let matches = |o: &Value| {
        p.ns.as_deref()
            .is_none_or(|n| o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(n))
            && p.name
                .as_deref()
                .is_none_or(|n| o.pointer("/metadata/name").and_then(Value::as_str) == Some(n))
            && p.labels.matches(o)
            && p.fields.matches(o)
    };
    let mut sent_events = 0u64;
    // Where the stream starts.
    let mut last = {
        let st = lock(state);
        match p.from_rv {
            Some(rv) if rv > 0 && !p.send_initial => {
                if rv < st.oldest_rv {
                    let status = status_json(
                        410,
                        "Expired",
                        &format!("too old resource version: {rv} ({})", st.oldest_rv),
                    );
                    let mut l = b"{\"type\":\"ERROR\",\"object\":".to_vec();
                    l.extend_from_slice(&status);
                    l.extend_from_slice(b"}\n");
                    drop(st);
                    w.send(&l)?;
                    return write_chunked_end(w.stream);
                }
                rv
            }
            _ => {
                // No RV, RV "0", or watch-list: the current state as ADDED first.
                let rv = st.rv;
                let initial: Vec<Arc<Vec<u8>>> = st.objects[p.res]
                    .values()
                    .filter(|o| matches(&o.value))
                    .map(|o| {
                        let mut l = b"{\"type\":\"ADDED\",\"object\":".to_vec();
                        l.extend_from_slice(&o.bytes);
                        l.extend_from_slice(b"}\n");
                        Arc::new(l)
                    })
                    .collect();
                drop(st);
                for l in initial {
                    w.send(&l)?;
                }
                if p.send_initial {
                    w.send(&bookmark(p.res, rv, true))?;
                }
                rv
            }
        }
    };
    let mut last_bookmark = Instant::now();
    loop {
        let mut batch: Vec<Arc<Vec<u8>>> = Vec::new();
        let mut close_abruptly = false;
        let mut expired = false;
        {
            let mut st = lock(state);
            loop {
                if st.drop_gen != drop_gen {
                    close_abruptly = true;
                    break;
                }
                if last < st.oldest_rv && st.rv > last {
                    expired = true;
                    break;
                }
                let start = st.history.partition_point(|e| e.rv <= last);
                if start < st.history.len() {
                    for e in st.history.iter().skip(start).take(2000) {
                        if e.res == p.res && matches(&e.obj) {
                            batch.push(e.line.clone());
                        }
                        last = e.rv;
                    }
                    break;
                }
                if deadline.is_some_and(|d| Instant::now() >= d)
                    || last_bookmark.elapsed() >= Duration::from_secs(1)
                {
                    break;
                }
                st.watch_progress.insert(id, last);
                let (g, _) = match state.1.wait_timeout(st, Duration::from_millis(200)) {
                    Ok(x) => x,
                    Err(p) => p.into_inner(),
                };
                st = g;
                if peer_closed(w.stream) {
                    return Ok(());
                }
            }
            st.watch_progress.insert(id, last);
        }
        if close_abruptly {
            return Ok(());
        }
        if expired {
            let status = status_json(410, "Expired", &format!("too old resource version: {last}"));
            let mut l = b"{\"type\":\"ERROR\",\"object\":".to_vec();
            l.extend_from_slice(&status);
            l.extend_from_slice(b"}\n");
            w.send(&l)?;
            return write_chunked_end(w.stream);
        }
        for l in &batch {
            w.send(l)?;
            sent_events += 1;
            if faults.drop_after_events.is_some_and(|n| sent_events >= n) {
                return Ok(()); // abrupt close mid-stream
            }
        }
        state.1.notify_all();
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return write_chunked_end(w.stream);
        }
        if batch.is_empty() && last_bookmark.elapsed() >= Duration::from_secs(1) {
            if p.bookmarks {
                w.send(&bookmark(p.res, last, false))?;
            }
            last_bookmark = Instant::now();
            if peer_closed(w.stream) {
                return Ok(());
            }
        }
    }
}
