//! Just enough HTTP/1.1 over `std::net`: parse a request (Content-Length or
//! chunked bodies, `Expect: 100-continue`, size limits), write a complete
//! response, and write chunked streams.
//!
//! A fault may ask for every body to be written in tiny pieces, each its own
//! write (and, on chunked streams, its own chunk), so clients see bodies split
//! at every kind of boundary.

use std::io::{self, BufRead, Read, Write};

use crate::cors;
use crate::rng::Rng;

/// Largest request body accepted.
pub const MAX_BODY: usize = 64 << 20;
const MAX_LINE: usize = 64 << 10;
const MAX_HEADERS: usize = 128;

/// One parsed request.
#[derive(Debug, Default)]
pub struct Request {
    /// GET, POST, ...
    pub method: String,
    /// The percent-decoded path.
    pub path: String,
    /// Decoded query parameters, in order.
    pub query: Vec<(String, String)>,
    /// Headers as sent.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Whether the connection may serve another request afterwards.
    pub keep_alive: bool,
}

impl Request {
    /// A header, case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first query parameter of that name.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A boolean query parameter (`true`/`1`).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.param(name), Some("true" | "1"))
    }
}

/// Why a request could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The connection failed or closed mid-request: just close.
    Io,
    /// Malformed or too large: answer with this code and message, then close.
    Bad(u16, &'static str),
}

impl From<io::Error> for ReadError {
    fn from(_: io::Error) -> Self {
        ReadError::Io
    }
}

/// Decode `%XX` escapes (and `+` as space when `plus` is set).
pub fn percent_decode(s: &str, plus: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' if plus => out.push(b' '),
            b'%' => {
                let hex = b
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn read_line(r: &mut impl BufRead, what: &'static str) -> Result<Option<String>, ReadError> {
    let mut buf = Vec::new();
    let n = r.take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE {
        return Err(ReadError::Bad(431, what));
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

fn read_chunked(r: &mut impl BufRead) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    loop {
        let line = read_line(r, "chunk header too long")?.ok_or(ReadError::Io)?;
        let size_hex = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| ReadError::Bad(400, "bad chunk size"))?;
        if size == 0 {
            // Trailers until the empty line.
            while let Some(l) = read_line(r, "trailer too long")? {
                if l.is_empty() {
                    break;
                }
            }
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(ReadError::Bad(413, "request body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(body.get_mut(start..).unwrap_or_default())?;
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf)?;
    }
}

/// Read one request; `Ok(None)` on a clean close before a request line.
/// `w` receives the interim `100 Continue` when the client asks for it.
pub fn read_request(
    r: &mut impl BufRead,
    w: &mut impl Write,
) -> Result<Option<Request>, ReadError> {
    let line = loop {
        match read_line(r, "request line too long")? {
            None => return Ok(None),
            Some(l) if l.is_empty() => continue, // tolerate stray CRLFs between requests
            Some(l) => break l,
        }
    };
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(ReadError::Bad(400, "malformed request line"));
    };
    let http10 = parts.next() == Some("HTTP/1.0");
    let mut headers = Vec::new();
    loop {
        let Some(h) = read_line(r, "header line too long")? else {
            return Err(ReadError::Io);
        };
        if h.is_empty() {
            break;
        }
        if headers.len() >= MAX_HEADERS {
            return Err(ReadError::Bad(431, "too many headers"));
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut req = Request {
        method: method.to_string(),
        headers,
        ..Request::default()
    };
    let connection = req.header("connection").unwrap_or("").to_ascii_lowercase();
    req.keep_alive = if http10 {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    };
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    let len = match req.header("content-length") {
        Some(v) => Some(
            v.parse::<usize>()
                .map_err(|_| ReadError::Bad(400, "bad content-length"))?,
        ),
        None => None,
    };
    if len.is_some_and(|l| l > MAX_BODY) {
        return Err(ReadError::Bad(413, "request body too large"));
    }
    let has_body = chunked || len.is_some_and(|l| l > 0);
    if has_body
        && req
            .header("expect")
            .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        w.flush()?;
    }
    req.body = if chunked {
        read_chunked(r)?
    } else {
        let mut body = vec![0; len.unwrap_or(0)];
        r.read_exact(&mut body)?;
        body
    };
    let (path, qs) = target.split_once('?').unwrap_or((target, ""));
    req.path = percent_decode(path, false);
    req.query = qs
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (percent_decode(k, true), percent_decode(v, true)),
            None => (percent_decode(kv, true), String::new()),
        })
        .collect();
    Ok(Some(req))
}

/// The reason phrase of a status code.
pub fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        410 => "Gone",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// A complete (non-streamed) response.
#[derive(Debug)]
pub struct Response {
    /// Status code.
    pub code: u16,
    /// Content-Type.
    pub content_type: &'static str,
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response.
    pub fn json(code: u16, body: Vec<u8>) -> Response {
        Response {
            code,
            content_type: "application/json",
            headers: Vec::new(),
            body,
        }
    }

    /// Add a header.
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }
}

/// Split `data` into 1..=7-byte pieces.
pub fn pieces<'a>(data: &'a [u8], rng: &'a mut Rng) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = data;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = (1 + rng.index(7)).min(rest.len());
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Some(head)
    })
}

/// Write a response with the CORS headers every API response carries. With
/// `split`, the body goes out in tiny separate writes.
pub fn write_response(
    w: &mut impl Write,
    resp: &Response,
    keep_alive: bool,
    split: Option<&mut Rng>,
) -> io::Result<()> {
    write_response_with_cors(w, resp, keep_alive, split, cors::HEADERS)
}

/// Write a response with the given CORS header lines (each ending in CRLF;
/// empty for none).
pub fn write_response_with_cors(
    w: &mut impl Write,
    resp: &Response,
    keep_alive: bool,
    split: Option<&mut Rng>,
    cors_headers: &str,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}",
        resp.code,
        reason(resp.code),
        resp.content_type,
        resp.body.len(),
        cors_headers
    );
    for (k, v) in &resp.headers {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    if !keep_alive {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    match split {
        None => {
            let mut all = head.into_bytes();
            all.extend_from_slice(&resp.body);
            w.write_all(&all)?;
        }
        Some(rng) => {
            w.write_all(head.as_bytes())?;
            w.flush()?;
            for piece in pieces(&resp.body, rng) {
                w.write_all(piece)?;
                w.flush()?;
            }
        }
    }
    w.flush()
}

/// Start a chunked streaming response (always closes the connection after).
pub fn write_stream_head(w: &mut impl Write, content_type: &str) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\nCache-Control: no-cache, private\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n{}\r\n",
        cors::HEADERS
    );
    w.write_all(head.as_bytes())?;
    w.flush()
}

/// Append `data` as one chunk to `out` (nothing for empty data, which
/// would end the stream).
pub fn frame_chunk(out: &mut Vec<u8>, data: &[&[u8]]) {
    let len: usize = data.iter().map(|d| d.len()).sum();
    if len == 0 {
        return;
    }
    out.extend_from_slice(format!("{len:x}\r\n").as_bytes());
    for d in data {
        out.extend_from_slice(d);
    }
    out.extend_from_slice(b"\r\n");
}

/// The last chunk of a stream.
pub const END_CHUNK: &[u8] = b"0\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn parse(raw: &[u8]) -> (Result<Option<Request>, ReadError>, Vec<u8>) {
        let mut out = Vec::new();
        let r = read_request(&mut BufReader::new(raw), &mut out);
        (r, out)
    }

    #[test]
    fn parses_query_headers_and_body() {
        let (r, _) = parse(b"POST /api/v1/pods?labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
        let r = r.unwrap().unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/api/v1/pods");
        assert_eq!(r.param("labelSelector"), Some("app=web,tier in (a)"));
        assert!(r.flag("watch"));
        assert_eq!(r.header("HOST"), Some("x"));
        assert_eq!(r.body, b"{}");
        assert!(r.keep_alive);
    }

    #[test]
    fn chunked_body_and_expect_continue() {
        let (r, out) = parse(b"PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n");
        let r = r.unwrap().unwrap();
        assert_eq!(r.body, b"abcde");
        assert!(!r.keep_alive);
        assert_eq!(out, b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        for raw in [
            &b"GARBAGE\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            b"GET / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        ] {
            assert!(matches!(parse(raw).0, Err(ReadError::Bad(..))), "{raw:?}");
        }
        assert!(matches!(parse(b"").0, Ok(None)));
        assert!(matches!(
            parse(b"GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab").0,
            Err(ReadError::Io)
        ));
        assert_eq!(percent_decode("%zz%4", false), "%zz%4");
    }

    #[test]
    fn split_responses_carry_the_same_bytes() {
        let resp = Response::json(200, b"{\"hello\":\"world\"}".to_vec());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_response(&mut a, &resp, true, None).unwrap();
        write_response(&mut b, &resp, true, Some(&mut Rng(3))).unwrap();
        assert_eq!(a, b);
        let mut rng = Rng(5);
        let ps: Vec<_> = pieces(b"0123456789abcdef", &mut rng).collect();
        assert!(ps.iter().all(|p| (1..=7).contains(&p.len())));
        assert_eq!(ps.concat(), b"0123456789abcdef");
    }
}
