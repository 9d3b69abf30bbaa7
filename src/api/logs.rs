//! Pod logs (`GET …/pods/{name}/log`, client-go's `GetLogs(…).Stream`): the
//! body streamed line by line, with the options of `PodLogOptions`.
//!
//! Memory is bounded whatever the server sends: a line longer than
//! [`LogParams::max_line_bytes`] is handed out in pieces of at most that
//! size (cut at a UTF-8 character boundary), so a container writing one
//! endless line never makes the client buffer it. Bytes that are not UTF-8
//! become U+FFFD (a log is text a person reads, not data to reject).
//!
//! A followed log is a long-lived connection, like a watch: it is counted in
//! the per-origin connection budget (see `rest/watch_transport.rs`), so
//! watches opened while it lasts go over WebSocket sooner in a browser.

use futures::stream::LocalBoxStream;
use futures::StreamExt;

use crate::rest::{BodyStream, Client, Error, Request};

/// The default [`LogParams::max_line_bytes`]: 64 KiB.
pub const DEFAULT_MAX_LOG_LINE_BYTES: usize = 64 * 1024;

/// What to read of a container's log (`PodLogOptions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogParams {
    /// The container; required by the server when the pod has several.
    pub container: Option<String>,
    /// Keep the stream open and receive lines as they are written, until
    /// the container stops or the stream is dropped.
    pub follow: bool,
    /// The previous (terminated) instance of the container, after a restart.
    pub previous: bool,
    /// Only lines written in the last this many seconds (≥ 1).
    pub since_seconds: Option<i64>,
    /// Only the last this many lines (≥ 0).
    pub tail_lines: Option<i64>,
    /// Prefix each line with its RFC 3339 timestamp.
    pub timestamps: bool,
    /// The server stops after this many bytes (≥ 1), possibly mid-line.
    pub limit_bytes: Option<i64>,
    /// Longest line handed out; longer ones come in pieces this long.
    pub max_line_bytes: usize,
}

impl Default for LogParams {
    fn default() -> Self {
        LogParams {
            container: None,
            follow: false,
            previous: false,
            since_seconds: None,
            tail_lines: None,
            timestamps: false,
            limit_bytes: None,
            max_line_bytes: DEFAULT_MAX_LOG_LINE_BYTES,
        }
    }
}

impl LogParams {
    /// Refuse values the API server would refuse, before any request.
    pub fn validate(&self) -> Result<(), Error> {
        let positive = |name: &str, v: Option<i64>, min: i64| match v {
            Some(n) if n < min => Err(Error::invalid_request(format!(
                "{name} must be at least {min}, not {n}"
            ))),
            _ => Ok(()),
        };
        positive("sinceSeconds", self.since_seconds, 1)?;
        positive("tailLines", self.tail_lines, 0)?;
        positive("limitBytes", self.limit_bytes, 1)?;
        if self.max_line_bytes < 16 {
            return Err(Error::invalid_request(
                "the line limit (`maxLineBytes`) must be at least 16 bytes",
            ));
        }
        Ok(())
    }

    fn query(&self) -> Vec<(String, String)> {
        let mut q = Vec::new();
        if let Some(c) = &self.container {
            q.push(("container".into(), c.clone()));
        }
        for (name, on) in [
            ("follow", self.follow),
            ("previous", self.previous),
            ("timestamps", self.timestamps),
        ] {
            if on {
                q.push((name.into(), "true".into()));
            }
        }
        for (name, v) in [
            ("sinceSeconds", self.since_seconds),
            ("tailLines", self.tail_lines),
            ("limitBytes", self.limit_bytes),
        ] {
            if let Some(v) = v {
                q.push((name.into(), v.to_string()));
            }
        }
        q
    }
}

/// The lines of a log: each without its newline; an `Err` ends it.
pub type LogLines = LocalBoxStream<'static, Result<String, Error>>;

/// Open the log of pod `name` in `namespace`. Resolves once the server
/// answered; errors (no such pod, a container name needed, no previous
/// instance) are typed as for any request.
pub async fn pod_logs(
    client: &Client,
    namespace: &str,
    name: &str,
    params: &LogParams,
) -> Result<LogLines, Error> {
    params.validate()?;
    // Refused here: an empty segment would make another URL (`/api/v1/pods/p/log`).
    if namespace.is_empty() {
        return Err(Error::invalid_request(format!(
            "pods is namespaced: the log of {name:?} needs a namespace"
        )));
    }
    if name.is_empty() {
        return Err(Error::invalid_request("a log needs a pod name"));
    }
    let req = Request::get()
        .core()
        .namespace(namespace)
        .resource("pods")
        .name(name)
        .subresource("log")
        .query_pairs(params.query())
        .header("Accept", "text/plain, */*");
    let body = if params.follow {
        let url = req.url(&client.config().base_url)?;
        let lease = crate::rest::stream_lease(client, &url).await;
        lease.hold(client.stream_body(&req, true).await?)
    } else {
        client.stream(&req).await?
    };
    Ok(lines(body, params.max_line_bytes))
}

/// Split a body into lines of at most `max` bytes (longer ones in pieces).
pub fn lines(body: BodyStream, max: usize) -> LogLines {
    let max = max.max(4);
    let state = (
        body,
        LineSplitter::new(max),
        std::collections::VecDeque::new(),
        false,
    );
    futures::stream::unfold(
        state,
        |(mut body, mut split, mut ready, mut ended)| async move {
            loop {
                if let Some(line) = ready.pop_front() {
                    return Some((Ok(line), (body, split, ready, ended)));
                }
                if ended {
                    return None;
                }
                match body.next().await {
                    Some(Ok(chunk)) => split.feed(&chunk, &mut ready),
                    Some(Err(e)) => return Some((Err(e), (body, split, ready, true))),
                    None => {
                        ended = true;
                        split.finish(&mut ready);
                    }
                }
            }
        },
    )
    .boxed_local()
}

/// Cuts bytes into lines, holding at most `max` bytes of an unfinished one.
struct LineSplitter {
    carry: Vec<u8>,
    max: usize,
}

impl LineSplitter {
    fn new(max: usize) -> Self {
        LineSplitter {
            carry: Vec::new(),
            max,
        }
    }

    fn feed(&mut self, mut chunk: &[u8], out: &mut std::collections::VecDeque<String>) {
        while !chunk.is_empty() {
            match crate::rest::find_newline(chunk) {
                Some(i) => {
                    self.push(&chunk[..i], out);
                    let line = std::mem::take(&mut self.carry);
                    out.push_back(text(line.strip_suffix(b"\r").unwrap_or(&line)));
                    chunk = &chunk[i + 1..];
                }
                None => {
                    self.push(chunk, out);
                    chunk = &[];
                }
            }
        }
    }

    /// Append to the unfinished line, handing out full pieces as it grows.
    fn push(&mut self, mut bytes: &[u8], out: &mut std::collections::VecDeque<String>) {
        while self.carry.len() + bytes.len() > self.max {
            let room = self.max - self.carry.len();
            self.carry.extend_from_slice(&bytes[..room]);
            bytes = &bytes[room..];
            // Keep an incomplete UTF-8 character for the next piece.
            let cut = utf8_boundary(&self.carry);
            let rest = self.carry.split_off(cut);
            out.push_back(text(&self.carry));
            self.carry = rest;
        }
        self.carry.extend_from_slice(bytes);
    }

    fn finish(&mut self, out: &mut std::collections::VecDeque<String>) {
        if !self.carry.is_empty() {
            let line = std::mem::take(&mut self.carry);
            out.push_back(text(line.strip_suffix(b"\r").unwrap_or(&line)));
        }
    }
}

/// The longest prefix of `b` not ending inside a UTF-8 character (all of
/// it when the tail is not the start of a valid character).
fn utf8_boundary(b: &[u8]) -> usize {
    let len = b.len();
    for back in 1..=3.min(len) {
        let byte = b[len - back];
        if byte & 0xC0 != 0x80 {
            // A lead byte: is its character complete?
            let need = match byte {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if need > back { len - back } else { len };
        }
    }
    len
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::rt::block_on;

    fn split(chunks: &[&[u8]], max: usize) -> Vec<String> {
        let owned: Vec<Result<Vec<u8>, Error>> = chunks.iter().map(|c| Ok(c.to_vec())).collect();
        let body: BodyStream = futures::stream::iter(owned).boxed_local();
        block_on(lines(body, max).map(|l| l.unwrap()).collect::<Vec<_>>())
    }

    #[test]
    fn lines_across_chunks_crlf_and_a_final_line_without_newline() {
        assert_eq!(
            split(&[b"one\ntw", b"o\r\n\nthr", b"ee"], 1024),
            ["one", "two", "", "three"]
        );
        assert!(split(&[], 1024).is_empty());
    }

    #[test]
    fn long_lines_come_in_bounded_pieces_cut_at_characters() {
        let long = "ab".repeat(50);
        let got = split(&[long.as_bytes(), b"\nend\n"], 16);
        assert!(got.iter().all(|l| l.len() <= 16), "{got:?}");
        assert_eq!(got[..got.len() - 1].concat(), long);
        assert_eq!(got.last().map(String::as_str), Some("end"));
        // A 3-byte character straddling the limit moves whole to the next piece.
        let s = format!("{}€€", "x".repeat(14));
        let got = split(&[s.as_bytes(), b"\n"], 16);
        assert_eq!(got, ["x".repeat(14).as_str(), "€€"]);
        // Split across chunks byte by byte.
        let bytes = s.as_bytes();
        let pieces: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(split(&pieces, 16).concat(), s);
    }

    #[test]
    fn invalid_utf8_is_replaced_and_errors_end_the_stream() {
        assert_eq!(split(&[b"a\xffb\n"], 64), ["a\u{FFFD}b"]);
        let body: BodyStream = futures::stream::iter(vec![
            Ok(b"first\nsecond".to_vec()),
            Err(Error::network("reset")),
        ])
        .boxed_local();
        let got: Vec<Result<String, Error>> = block_on(lines(body, 64).collect());
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].as_deref().ok(), Some("first"));
        assert!(matches!(got[1], Err(Error::Network { .. })));
    }

    #[test]
    fn params_become_the_query_and_bad_values_are_refused() {
        let p = LogParams {
            container: Some("app".into()),
            follow: true,
            timestamps: true,
            tail_lines: Some(10),
            since_seconds: Some(60),
            limit_bytes: Some(4096),
            previous: true,
            ..Default::default()
        };
        let q: Vec<String> = p.query().iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            q,
            [
                "container=app",
                "follow=true",
                "previous=true",
                "timestamps=true",
                "sinceSeconds=60",
                "tailLines=10",
                "limitBytes=4096"
            ]
        );
        assert!(LogParams::default().query().is_empty());
        for bad in [
            LogParams {
                tail_lines: Some(-1),
                ..Default::default()
            },
            LogParams {
                since_seconds: Some(0),
                ..Default::default()
            },
            LogParams {
                limit_bytes: Some(0),
                ..Default::default()
            },
            LogParams {
                max_line_bytes: 3,
                ..Default::default()
            },
        ] {
            assert!(
                matches!(bad.validate(), Err(Error::InvalidRequest { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_followed_log_is_counted_in_the_connection_budget_while_open() {
        use crate::rest::{open_fetch_watches, Config, FakeResponse, FakeTransport};
        use std::rc::Rc;
        let t = FakeTransport::new();
        let mut cfg = Config::new("http://logs.test");
        cfg.rate_limit = None;
        let c = Client::with_transport(
            cfg,
            Rc::new(t.clone()),
            crate::rt::FakeClock::new().shared(),
        )
        .unwrap();
        let (resp, body) = FakeResponse::streaming(200);
        t.push(resp);
        let follow = LogParams {
            follow: true,
            container: Some("app".into()),
            ..Default::default()
        };
        let mut lines = block_on(pod_logs(&c, "ns", "p", &follow)).unwrap();
        let url = t.last_request().unwrap().url;
        assert!(
            url.starts_with("http://logs.test/api/v1/namespaces/ns/pods/p/log?"),
            "{url}"
        );
        assert!(
            url.contains("container=app") && url.contains("follow=true"),
            "{url}"
        );
        assert!(
            t.last_request().unwrap().is_watch,
            "long-lived for the transport"
        );
        assert_eq!(open_fetch_watches("http://logs.test"), 1);
        body.send(b"a\nb".to_vec());
        assert_eq!(block_on(lines.next()).unwrap().unwrap(), "a");
        drop(lines);
        assert_eq!(
            open_fetch_watches("http://logs.test"),
            0,
            "freed with the stream"
        );
        // Without follow: not counted.
        t.push(FakeResponse::new(200).body("x\n"));
        let once = block_on(pod_logs(&c, "ns", "p", &LogParams::default())).unwrap();
        assert_eq!(open_fetch_watches("http://logs.test"), 0);
        assert_eq!(block_on(once.collect::<Vec<_>>()).len(), 1);
        // An error answer is typed.
        t.push(FakeResponse::status(
            400,
            "BadRequest",
            "a container name must be specified",
        ));
        let err = block_on(pod_logs(&c, "ns", "p", &LogParams::default()))
            .err()
            .unwrap();
        assert_eq!(err.code(), Some(400));
        // No namespace or no name: refused, nothing sent.
        let sent = t.request_count();
        for (ns, pod, needle) in [("", "p", "needs a namespace"), ("ns", "", "pod name")] {
            let err = block_on(pod_logs(&c, ns, pod, &LogParams::default()))
                .err()
                .unwrap();
            assert!(err.to_string().contains(needle), "{err}");
        }
        assert_eq!(t.request_count(), sent);
    }
}
