//! Watches over WebSocket, as the API server serves them: the same watch URL
//! with `Upgrade: websocket`, one watch event per message.
//!
//! The handshake follows what the API server does (its watch handler hands a
//! WebSocket request to `golang.org/x/net/websocket`, behind the bearer-token
//! subprotocol authenticator):
//! - `Sec-WebSocket-Protocol` may carry the token as
//!   `base64url.bearer.authorization.k8s.io.<base64url(token), no padding>`.
//!   That entry is removed before the handshake is answered; it needs at
//!   least one other subprotocol next to it ("missing additional
//!   subprotocol" → 401), and two token entries are refused.
//! - Of what remains, at most one subprotocol is accepted (x/net answers 400
//!   to more) and that one is echoed, as browsers require.
//! - Frames are written by `tungstenite`; the handshake itself is this
//!   module's, because the sim's own HTTP parser has already read the request.
//!
//! Faults: `splitChunks` fragments every message into 1–7-byte frames,
//! `webSocketBinary` sends binary instead of text frames; drops and the
//! malformed message end the socket without a close frame, a clean end (a
//! timeout, a 410 ERROR event) sends close 1000.

use std::io::{self, Write};
use std::net::TcpStream;
use std::time::Duration;

use tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tungstenite::protocol::frame::{CloseFrame, Frame};
use tungstenite::protocol::{Role, WebSocket};
use tungstenite::Message;

use crate::http::{pieces, Request};
use crate::rng::Rng;
use crate::status::ApiError;

/// The subprotocol prefix of a bearer token.
pub const BEARER_PREFIX: &str = "base64url.bearer.authorization.k8s.io.";

/// A checked WebSocket handshake request.
#[derive(Debug, PartialEq)]
pub struct Upgrade {
    /// `Sec-WebSocket-Key`.
    pub key: String,
    /// The subprotocol to echo (what is left after the token entry).
    pub protocol: Option<String>,
    /// The bearer token carried in the subprotocol list.
    pub token: Option<String>,
}

/// Whether a request asks to upgrade to WebSocket (as the API server's
/// `wsstream.IsWebSocketRequest`: `Connection` lists `upgrade` and
/// `Upgrade` is `websocket`).
pub fn is_upgrade(req: &Request) -> bool {
    let connection = req.header("connection").is_some_and(|c| {
        c.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
    });
    connection
        && req
            .header("upgrade")
            .is_some_and(|u| u.trim().eq_ignore_ascii_case("websocket"))
}

/// Decode unpadded base64url (Go's `RawURLEncoding`).
fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // A lone trailing character (6 bits) cannot end a valid encoding; other
    // leftover bits are ignored, as Go's non-strict decoder does.
    (bits < 6).then_some(out)
}

/// Check the handshake headers and pull the token out of the subprotocols.
pub fn parse(req: &Request) -> Result<Upgrade, ApiError> {
    if req.method != "GET" {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "a WebSocket upgrade must be a GET",
        ));
    }
    if req.header("sec-websocket-version").map(str::trim) != Some("13") {
        return Err(ApiError::bad_request(
            "unsupported Sec-WebSocket-Version (want 13)",
        ));
    }
    let key = req
        .header("sec-websocket-key")
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ApiError::bad_request("missing Sec-WebSocket-Key"))?
        .to_string();
    let unauthorized = |msg: &str| ApiError::new(401, "Unauthorized", msg);
    let mut token = None;
    let mut others = Vec::new();
    // The header may appear several times; together they are one list.
    let lists = req
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("sec-websocket-protocol"));
    for p in lists.flat_map(|(_, v)| v.split(',')).map(str::trim) {
        if p.is_empty() {
            continue;
        }
        let Some(encoded) = p.strip_prefix(BEARER_PREFIX) else {
            others.push(p.to_string());
            continue;
        };
        if token.is_some() {
            return Err(unauthorized(
                "multiple base64.bearer.authorization tokens specified",
            ));
        }
        let raw = base64url_decode(encoded)
            .ok_or_else(|| unauthorized("invalid base64.bearer.authorization token encoding"))?;
        let t = String::from_utf8(raw)
            .map_err(|_| unauthorized("invalid base64.bearer.authorization token"))?;
        token = Some(t);
    }
    if token.as_deref().is_some_and(|t| !t.is_empty()) && others.is_empty() {
        return Err(unauthorized("missing additional subprotocol"));
    }
    if others.len() > 1 {
        return Err(ApiError::bad_request(
            "more than one WebSocket subprotocol besides the token (the API server accepts one)",
        ));
    }
    Ok(Upgrade {
        key,
        protocol: others.pop(),
        token: token.filter(|t| !t.is_empty()),
    })
}

/// Write the `101 Switching Protocols` answer.
pub fn accept(w: &mut impl Write, up: &Upgrade) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n",
        tungstenite::handshake::derive_accept_key(up.key.as_bytes())
    );
    if let Some(p) = &up.protocol {
        head.push_str("Sec-WebSocket-Protocol: ");
        head.push_str(p);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())?;
    w.flush()
}

fn to_io(e: tungstenite::Error) -> io::Error {
    match e {
        tungstenite::Error::Io(e) => e,
        other => io::Error::new(io::ErrorKind::ConnectionAborted, other.to_string()),
    }
}

/// The server side of one upgraded watch connection: one watch event per
/// message.
pub struct Socket<'a> {
    ws: WebSocket<&'a mut TcpStream>,
    split: Option<Rng>,
    binary: bool,
}

impl<'a> Socket<'a> {
    /// Wrap a connection whose handshake was answered.
    pub fn new(stream: &'a mut TcpStream, split: Option<Rng>, binary: bool) -> Self {
        Socket {
            ws: WebSocket::from_raw_socket(stream, Role::Server, None),
            split,
            binary,
        }
    }

    fn opcode(&self) -> OpCode {
        OpCode::Data(if self.binary {
            Data::Binary
        } else {
            Data::Text
        })
    }

    /// Queue one message made of `parts` (written out when the buffer fills
    /// or on [`flush`](Self::flush)).
    pub fn message(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        let data = parts.concat();
        let op = self.opcode();
        let Some(rng) = &mut self.split else {
            // A raw frame: the bytes are JSON the store produced, so they are
            // not validated as UTF-8 once more per message.
            return self
                .ws
                .write(Message::Frame(Frame::message(data, op, true)))
                .map_err(to_io);
        };
        let frags: Vec<Vec<u8>> = pieces(&data, rng).map(<[u8]>::to_vec).collect();
        let n = frags.len();
        for (i, f) in frags.into_iter().enumerate() {
            let code = if i == 0 {
                op
            } else {
                OpCode::Data(Data::Continue)
            };
            self.ws
                .write(Message::Frame(Frame::message(f, code, i + 1 == n)))
                .map_err(to_io)?;
            self.ws.flush().map_err(to_io)?;
        }
        Ok(())
    }

    /// Write out everything queued.
    pub fn flush(&mut self) -> io::Result<()> {
        self.ws.flush().map_err(to_io)
    }

    /// A clean end: close 1000, then wait briefly for the client's close so
    /// the browser reports a clean close.
    pub fn finish(&mut self) -> io::Result<()> {
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        match self.ws.close(Some(frame)) {
            Ok(()) => {}
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                return Ok(())
            }
            Err(e) => return Err(to_io(e)),
        }
        self.flush()?;
        let _ = self
            .ws
            .get_mut()
            .set_read_timeout(Some(Duration::from_secs(1)));
        // Until the client's close arrives (tungstenite then reports
        // ConnectionClosed), a timeout, or an error.
        while self.ws.read().is_ok() {}
        Ok(())
    }

    /// Whether the client closed (or sent its close frame). Reads whatever
    /// the client sent without blocking; clients send nothing but control
    /// frames on a watch.
    pub fn peer_closed(&mut self) -> bool {
        if self.ws.get_mut().set_nonblocking(true).is_err() {
            return true;
        }
        let closed = loop {
            match self.ws.read() {
                Ok(Message::Close(_)) => {
                    // Answer the close so the client sees a clean one.
                    let _ = self.ws.flush();
                    break true;
                }
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                    break false
                }
                Err(_) => break true,
            }
        };
        let _ = self.ws.get_mut().set_nonblocking(false);
        closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(protocols: &[&str]) -> Request {
        let mut headers = vec![
            ("Connection".to_string(), "keep-alive, Upgrade".to_string()),
            ("Upgrade".to_string(), "websocket".to_string()),
            ("Sec-WebSocket-Version".to_string(), "13".to_string()),
            (
                "Sec-WebSocket-Key".to_string(),
                "dGhlIHNhbXBsZSBub25jZQ==".to_string(),
            ),
        ];
        for p in protocols {
            headers.push(("Sec-WebSocket-Protocol".to_string(), (*p).to_string()));
        }
        Request {
            method: "GET".into(),
            headers,
            ..Request::default()
        }
    }

    #[test]
    fn token_is_taken_out_of_the_subprotocols() {
        let r = req(&["base64url.bearer.authorization.k8s.io.c2VjcmV0, k8s.watch"]);
        assert!(is_upgrade(&r));
        let up = parse(&r).unwrap();
        assert_eq!(up.token.as_deref(), Some("secret"));
        assert_eq!(up.protocol.as_deref(), Some("k8s.watch"));
        // Split over two header lines, in the other order.
        let up = parse(&req(&[
            "k8s.watch",
            "base64url.bearer.authorization.k8s.io.c2VjcmV0",
        ]))
        .unwrap();
        assert_eq!(up.token.as_deref(), Some("secret"));
        let up = parse(&req(&[])).unwrap();
        assert_eq!((up.token, up.protocol), (None, None));
        let mut out = Vec::new();
        accept(
            &mut out,
            &Upgrade {
                key: "dGhlIHNhbXBsZSBub25jZQ==".into(),
                protocol: Some("k8s.watch".into()),
                token: None,
            },
        )
        .unwrap();
        let head = String::from_utf8(out).unwrap();
        // RFC 6455's sample key and answer.
        assert!(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
        assert!(head.contains("Sec-WebSocket-Protocol: k8s.watch\r\n"));
    }

    #[test]
    fn handshake_errors_match_the_api_server() {
        let code = |ps: &[&str]| parse(&req(ps)).unwrap_err().code;
        assert_eq!(
            code(&["base64url.bearer.authorization.k8s.io.c2VjcmV0"]),
            401
        );
        assert_eq!(
            code(&["a, base64url.bearer.authorization.k8s.io.c2VjcmV0, base64url.bearer.authorization.k8s.io.c2VjcmV0"]),
            401
        );
        assert_eq!(
            code(&["a, base64url.bearer.authorization.k8s.io.c2V*"]),
            401
        );
        assert_eq!(code(&["a, b"]), 400);
        let mut r = req(&[]);
        r.headers.retain(|(k, _)| k != "Sec-WebSocket-Version");
        assert_eq!(parse(&r).unwrap_err().code, 400);
        let mut r = req(&[]);
        r.headers.retain(|(k, _)| k != "Upgrade");
        assert!(!is_upgrade(&r));
    }

    #[test]
    fn base64url_round_trips() {
        assert_eq!(base64url_decode("c2VjcmV0").unwrap(), b"secret");
        assert_eq!(base64url_decode("YQ").unwrap(), b"a");
        assert_eq!(base64url_decode("YWI").unwrap(), b"ab");
        assert_eq!(base64url_decode("-_8").unwrap(), [0xfb, 0xff]);
        assert!(base64url_decode("Y").is_none());
        assert!(base64url_decode("YQ==").is_none());
    }
}
