//! Watch events: decoding one line into a [`WatchEvent`], the push-style
//! [`EventDecoder`] (framer + decoder, used by the stream and benchmarks), and
//! [`WatchStream`], the `futures::Stream` over a response body with an idle
//! watchdog on the client's clock.
//!
//! Semantics follow client-go's watch decoder (RC-02) with one deliberate
//! difference: client-go turns an undecodable frame into a synthetic ERROR
//! event; here it is an `Err` item carrying the excerpt, after which the
//! stream ends either way. A failure mid-body (a reset connection) is also an
//! `Err` item ([`Error::Network`]) rather than a silent end, so the reflector
//! can tell a dead connection from a server that closed the watch cleanly.
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{FutureExt, Stream, StreamExt};

use crate::rt::{Instant, SharedClock, Sleep};

use super::error::Status;
use super::framer::LineFramer;
use super::object::KubeObject;
use super::scan;
use super::transport::BodyStream;
use super::watch_transport::TransportChoice;
use super::Error;

/// The annotation a bookmark carries at the end of `sendInitialEvents`.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// One watch event.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent {
    /// The object was created (or is part of the initial state).
    Added(KubeObject),
    /// The object changed.
    Modified(KubeObject),
    /// The object was deleted (carries its last state).
    Deleted(KubeObject),
    /// Progress marker: only `metadata.resourceVersion` (and annotations)
    /// are meaningful.
    Bookmark(KubeObject),
    /// The server reported an error in-band (e.g. 410 Expired).
    Error(Status),
}

impl WatchEvent {
    /// The object of an added/modified/deleted/bookmark event.
    pub fn object(&self) -> Option<&KubeObject> {
        match self {
            WatchEvent::Added(o)
            | WatchEvent::Modified(o)
            | WatchEvent::Deleted(o)
            | WatchEvent::Bookmark(o) => Some(o),
            WatchEvent::Error(_) => None,
        }
    }

    /// The wire name of the event type.
    pub fn type_name(&self) -> &'static str {
        match self {
            WatchEvent::Added(_) => "ADDED",
            WatchEvent::Modified(_) => "MODIFIED",
            WatchEvent::Deleted(_) => "DELETED",
            WatchEvent::Bookmark(_) => "BOOKMARK",
            WatchEvent::Error(_) => "ERROR",
        }
    }

    /// Whether this is the bookmark that ends `sendInitialEvents`.
    pub fn is_initial_events_end(&self) -> bool {
        match self {
            WatchEvent::Bookmark(o) => o
                .annotations()
                .get(INITIAL_EVENTS_END_ANNOTATION)
                .is_some_and(|v| v == "true"),
            _ => false,
        }
    }
}

/// Decode one watch line `{"type": …, "object": {…}}`.
///
/// Only the envelope and the object's `apiVersion`, `kind` and `metadata` are
/// parsed; the rest of the line is validated as JSON and the object kept as
/// raw bytes (see [`KubeObject`]). Invalid JSON anywhere in the line or an
/// unknown type is an [`Error::Decode`].
pub fn decode_event(line: &[u8]) -> Result<WatchEvent, Error> {
    let env = scan::parse_event(line)?;
    let obj = match env.object {
        Some(o) => o,
        None => return Err(Error::decode("watch event without an object", line)),
    };
    let make = |o: scan::ObjectSpan<'_>| KubeObject::from_span(o);
    Ok(match env.event_type {
        b"ADDED" => WatchEvent::Added(make(obj)?),
        b"MODIFIED" => WatchEvent::Modified(make(obj)?),
        b"DELETED" => WatchEvent::Deleted(make(obj)?),
        b"BOOKMARK" => WatchEvent::Bookmark(make(obj)?),
        b"ERROR" => match Status::from_json(obj.raw) {
            Ok(s) => WatchEvent::Error(s),
            Err(e) => return Err(Error::decode(format!("bad ERROR event status: {e}"), line)),
        },
        other => {
            return Err(Error::decode(
                format!(
                    "unknown watch event type {:?}",
                    String::from_utf8_lossy(other)
                ),
                line,
            ))
        }
    })
}

/// Framer + decoder driven by pushing chunks: the core of [`WatchStream`],
/// usable on its own (benchmarks, other body sources).
///
/// After the first error no more events are produced.
#[derive(Debug)]
pub struct EventDecoder {
    framer: LineFramer,
    events: VecDeque<Result<WatchEvent, Error>>,
    failed: bool,
}

impl EventDecoder {
    /// A decoder with the given maximum line size.
    pub fn new(max_line_bytes: usize) -> Self {
        EventDecoder {
            framer: LineFramer::new(max_line_bytes),
            events: VecDeque::new(),
            failed: false,
        }
    }

    /// Feed one chunk of the body.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.failed {
            return;
        }
        let events = &mut self.events;
        let r = self.framer.push(chunk, |line| {
            events.push_back(Ok(decode_event(line)?));
            Ok(())
        });
        if let Err(e) = r {
            self.fail(e);
        }
    }

    /// The body ended cleanly: decode a final unterminated line.
    pub fn finish(&mut self) {
        if self.failed {
            return;
        }
        let events = &mut self.events;
        let r = self.framer.finish(|line| match decode_event(line) {
            Ok(ev) => {
                events.push_back(Ok(ev));
                Ok(())
            }
            // A body that ends inside its last event: the connection was cut,
            // as client-go reads `io.ErrUnexpectedEOF`; the watch just ends
            // (and is opened again from the last event's version).
            Err(_) if super::scan::is_cut_short(line) => Ok(()),
            Err(e) => Err(e),
        });
        if let Err(e) = r {
            self.fail(e);
        }
    }

    /// Record a terminal error (after the events already decoded).
    pub fn fail(&mut self, err: Error) {
        if !self.failed {
            self.failed = true;
            self.events.push_back(Err(err));
        }
    }

    /// Whether a terminal error was recorded.
    pub fn has_failed(&self) -> bool {
        self.failed
    }

    /// The next decoded event, if any.
    pub fn next_event(&mut self) -> Option<Result<WatchEvent, Error>> {
        self.events.pop_front()
    }
}

/// A watch as a stream of events. Ends after a clean close or after the
/// first `Err` item (malformed line, unknown type, line too long, connection
/// failure, idle timeout). Dropping it aborts the underlying request.
pub struct WatchStream {
    body: Option<BodyStream>,
    decoder: EventDecoder,
    clock: SharedClock,
    idle: Option<Duration>,
    last_bytes: Instant,
    timer: Option<Sleep>,
    done: bool,
    transport: Option<TransportChoice>,
}

impl WatchStream {
    /// A watch over `body`. `idle_timeout`: no bytes for this long (on
    /// `clock`) ends the stream with [`Error::Timeout`].
    pub fn new(
        body: BodyStream,
        clock: SharedClock,
        max_line_bytes: usize,
        idle_timeout: Option<Duration>,
    ) -> Self {
        let last_bytes = clock.now();
        WatchStream {
            body: Some(body),
            decoder: EventDecoder::new(max_line_bytes),
            clock,
            idle: idle_timeout,
            last_bytes,
            timer: None,
            done: false,
            transport: None,
        }
    }

    /// Which transport carries this watch and why; `None` for a stream not
    /// opened by [`Client::watch`](super::Client::watch).
    pub fn transport(&self) -> Option<&TransportChoice> {
        self.transport.as_ref()
    }

    pub(super) fn set_transport(&mut self, choice: TransportChoice) {
        self.transport = Some(choice);
    }

    /// Whether the underlying connection is still open.
    pub fn is_open(&self) -> bool {
        self.body.is_some()
    }

    /// Close the connection now (same as dropping the stream).
    pub fn close(&mut self) {
        self.body = None;
        self.timer = None;
        self.done = true;
    }

    /// Poll the idle watchdog; `Ready` means it expired.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(idle) = self.idle else {
            return Poll::Pending;
        };
        loop {
            let deadline = self.last_bytes + idle;
            if self.clock.now() >= deadline {
                return Poll::Ready(());
            }
            // The timer is armed once and re-armed only when it fires early
            // (bytes arrived meanwhile), so chunks cost no timer churn.
            let timer = self
                .timer
                .get_or_insert_with(|| self.clock.sleep_until(deadline));
            match timer.poll_unpin(cx) {
                Poll::Ready(()) => self.timer = None,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Stream for WatchStream {
    type Item = Result<WatchEvent, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(ev) = this.decoder.next_event() {
                if ev.is_err() {
                    this.close();
                }
                return Poll::Ready(Some(ev));
            }
            if this.done || this.decoder.has_failed() {
                this.close();
                return Poll::Ready(None);
            }
            let Some(body) = this.body.as_mut() else {
                this.done = true;
                continue;
            };
            match body.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.last_bytes = this.clock.now();
                    this.decoder.push(&chunk);
                }
                Poll::Ready(Some(Err(e))) => {
                    this.body = None;
                    this.decoder.fail(e);
                }
                Poll::Ready(None) => {
                    this.body = None;
                    this.decoder.finish();
                    this.done = true;
                }
                Poll::Pending => {
                    if this.poll_idle(cx).is_ready() {
                        let idle = this.idle.unwrap_or_default();
                        this.body = None;
                        this.decoder.fail(Error::timeout(format!(
                            "watch received no bytes for {idle:?}"
                        )));
                        continue;
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}
