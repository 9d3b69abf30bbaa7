//! A validating JSON scanner: finds the byte ranges of the values the client
//! needs (a watch envelope's `type` and `object`, an object's `apiVersion`,
//! `kind` and `metadata`, a list's `items`) without building a tree.
//!
//! Why: a pod is ~2–3 KB of which the cache needs the ~300 bytes of
//! metadata it indexes. Building a tree of `spec`/`status` costs more than
//! everything else on the watch path, so the rest is only validated here,
//! in one tight loop per value, and kept as bytes (see `object.rs`).
//!
//! Validation is complete: an accepted input is JSON that `JSON.parse` and
//! `serde_json` both read (the grammar, string escapes, `\u` surrogate
//! pairs, no raw control characters, numbers within `f64`, UTF-8), so a
//! cached object never fails to materialize later in a render loop. Stricter
//! than `JSON.parse` in three ways, each shared with `serde_json` or the API
//! server's own decoder: lone surrogates, numbers beyond `f64`'s range, and
//! nesting deeper than [`MAX_DEPTH`] (`serde_json` itself stops at 128 levels
//! unless told otherwise).
use super::Error;

mod reader;
pub(crate) use reader::Reader;

/// Byte ranges of one Kubernetes object inside a buffer.
#[derive(Debug)]
pub(crate) struct ObjectSpan<'a> {
    /// The whole object, `{` to `}`.
    pub raw: &'a [u8],
    /// `apiVersion` string contents (still JSON-escaped if `*_escaped`).
    pub api_version: Option<StrSpan<'a>>,
    /// `kind` string contents.
    pub kind: Option<StrSpan<'a>>,
    /// The scanned `metadata`.
    pub metadata: Option<MetaSpan<'a>>,
    /// The `metadata` value's bytes (for byte-level rewrites such as
    /// metadata-only objects).
    pub metadata_raw: Option<&'a [u8]>,
    /// Every top-level member as offsets from the object's first byte, four
    /// per member (key start and end inside the quotes, value start and end),
    /// in order: lets JS materialize one member at a time. Empty if an offset
    /// does not fit in a `u32`.
    pub layout: Vec<u32>,
}

/// The contents of a JSON string without its quotes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StrSpan<'a> {
    /// Bytes between the quotes.
    pub bytes: &'a [u8],
    /// Whether they contain a backslash escape.
    pub escaped: bool,
}

impl<'a> StrSpan<'a> {
    /// The string value, borrowed when it has no escapes.
    pub fn to_cow(self) -> Result<std::borrow::Cow<'a, str>, Error> {
        if self.escaped {
            return self.to_str().map(|s| std::borrow::Cow::Owned(s.into()));
        }
        std::str::from_utf8(self.bytes)
            .map(std::borrow::Cow::Borrowed)
            .map_err(|_| Error::decode("invalid UTF-8 in string", self.bytes))
    }

    /// The string value.
    pub fn to_str(self) -> Result<Box<str>, Error> {
        if !self.escaped {
            return std::str::from_utf8(self.bytes)
                .map(Box::from)
                .map_err(|_| Error::decode("invalid UTF-8 in string", self.bytes));
        }
        unescape(self.bytes)
            .map(String::into_boxed_str)
            .map_err(|f| {
                Error::decode(
                    format!("bad string: {} at byte {}", f.what, f.at),
                    self.bytes,
                )
            })
    }
}

/// A string's contents with its escapes decoded, under the rules the scan
/// validates them by (`\u` surrogates only as a high-low pair).
fn unescape(b: &[u8]) -> Result<String, Fail> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(rest) = b.get(i..).filter(|r| !r.is_empty()) {
        let plain = rest.iter().position(|&c| c == b'\\').unwrap_or(rest.len());
        out.extend_from_slice(rest.get(..plain).unwrap_or_default());
        let at = i + plain;
        if at >= b.len() {
            break;
        }
        let end = escape_end(b, at + 1)?;
        let c = match b.get(at + 1) {
            Some(b'u') => {
                let hi = u32::from(hex4(b, at + 2).unwrap_or(0));
                let code = if (0xD800..0xDC00).contains(&hi) {
                    let lo = u32::from(hex4(b, at + 8).unwrap_or(0));
                    0x10000 + ((hi - 0xD800) << 10) + lo.wrapping_sub(0xDC00)
                } else {
                    hi
                };
                char::from_u32(code).ok_or(Fail {
                    what: "invalid \\u escape",
                    at,
                })?
            }
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(&c) => char::from(c),
            None => break,
        };
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        i = end;
    }
    String::from_utf8(out).map_err(|e| Fail {
        what: "invalid UTF-8 in string",
        at: e.utf8_error().valid_up_to(),
    })
}

/// `s` as a JSON string literal, escaped as `serde_json` writes one: `"`,
/// `\\` and control characters only (`\\n`-style where JSON has a short
/// form, else `\\u00XX`).
pub(crate) fn quote(s: &str) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(b'"');
    for &c in s.as_bytes() {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..=0x1f => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xf)],
            ]),
            _ => out.push(c),
        }
    }
    out.push(b'"');
    out
}

/// The value of one JSON string document (`"..."`, whitespace around it
/// allowed); `None` for anything else.
pub(crate) fn json_string(quoted: &[u8]) -> Option<String> {
    let mut s = Scanner::new(quoted);
    s.skip_ws();
    let span = s.string().ok()?;
    s.end().ok()?;
    span.to_str().ok().map(String::from)
}

/// A watch line's envelope.
pub(crate) struct Envelope<'a> {
    pub event_type: &'a [u8],
    pub object: Option<ObjectSpan<'a>>,
}

/// The metadata fields the cache needs, as spans (values not yet unescaped).
#[derive(Debug, Default)]
pub(crate) struct MetaSpan<'a> {
    pub name: Option<StrSpan<'a>>,
    pub generate_name: Option<StrSpan<'a>>,
    pub namespace: Option<StrSpan<'a>>,
    pub uid: Option<StrSpan<'a>>,
    pub resource_version: Option<StrSpan<'a>>,
    pub creation_timestamp: Option<StrSpan<'a>>,
    pub deletion_timestamp: Option<StrSpan<'a>>,
    /// The `generation` number literal.
    pub generation: Option<&'a [u8]>,
    pub labels: Vec<(StrSpan<'a>, StrSpan<'a>)>,
    pub owner_references: Vec<OwnerRefSpan<'a>>,
    /// The whole `"managedFields": …` member (key to the end of the value),
    /// so it can be cut out of the bytes without re-encoding the object.
    pub managed_fields: Option<&'a [u8]>,
}

/// One `ownerReferences` entry as spans.
#[derive(Debug, Default)]
pub(crate) struct OwnerRefSpan<'a> {
    pub api_version: Option<StrSpan<'a>>,
    pub kind: Option<StrSpan<'a>>,
    pub name: Option<StrSpan<'a>>,
    pub uid: Option<StrSpan<'a>>,
    pub controller: Option<bool>,
    pub block_owner_deletion: Option<bool>,
}

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    /// Objects and arrays open around `pos` (the members being iterated),
    /// so the nesting limit counts them too.
    depth: usize,
}

/// Why scanning failed and where (turned into an [`Error::Decode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fail {
    what: &'static str,
    at: usize,
}

/// Deepest nesting of objects and arrays accepted: Go's `encoding/json`
/// limit, which the API server's decoder shares, so every object a server
/// can store is accepted. (`serde_json` stops at 128 by default: decoding
/// a deeper object into a Rust type needs `disable_recursion_limit`.)
pub(crate) const MAX_DEPTH: usize = 10_000;

/// Whether a byte ends a run of plain string contents: `"`, `\`, a
/// control character (which JSON forbids raw inside strings), or the start
/// of a multi-byte UTF-8 sequence (validated apart).
const STR_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i < 0x20 || i >= 0x80;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Position of the first [`STR_STOP`] byte at or after `i` (or the end):
/// eight bytes per step, since most of an object's bytes are ASCII string
/// contents.
#[inline(always)]
fn skip_plain(b: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    // A fixed-size word: `copy_from_slice` of the runtime-length `get(i..i + 8)`
    // stayed an out-of-line call in the size-optimized wasm build (~5 % of a flood).
    while let Some(w) = b.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let x = u64::from_le_bytes(*w);
        let q = x ^ (LO * u64::from(b'"'));
        let s = x ^ (LO * u64::from(b'\\'));
        // High bit set in each byte that is zero (q, s), below 0x20 or at
        // least 0x80 (x). A borrow can also flag a byte above a true hit,
        // never below one, so the lowest flag is exact.
        let hit =
            ((q.wrapping_sub(LO) & !q) | (s.wrapping_sub(LO) & !s) | x.wrapping_sub(LO * 0x20) | x)
                & HI;
        if hit != 0 {
            return i + (hit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if STR_STOP[usize::from(c)] {
            break;
        }
        i += 1;
    }
    i
}

#[inline]
fn hex4(b: &[u8], i: usize) -> Option<u16> {
    let h = b.get(i..i + 4)?;
    let mut n: u16 = 0;
    for &c in h {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        n = (n << 4) | u16::from(d);
    }
    Some(n)
}

/// At the byte after a backslash: the position after the escape. `\u`
/// surrogates must come as a high-low pair, as `serde_json` requires for a
/// string (`JSON.parse` would also take a lone one).
#[inline]
fn escape_end(b: &[u8], i: usize) -> Result<usize, Fail> {
    let bad = |what| Err(Fail { what, at: i });
    match b.get(i) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(i + 1),
        Some(b'u') => match hex4(b, i + 1) {
            None => bad("invalid \\u escape"),
            Some(0xDC00..=0xDFFF) => bad("lone low surrogate in a \\u escape"),
            Some(0xD800..=0xDBFF) => {
                if b.get(i + 5) == Some(&b'\\')
                    && b.get(i + 6) == Some(&b'u')
                    && matches!(hex4(b, i + 7), Some(0xDC00..=0xDFFF))
                {
                    Ok(i + 11)
                } else {
                    bad("lone high surrogate in a \\u escape")
                }
            }
            Some(_) => Ok(i + 5),
        },
        _ => bad("invalid escape"),
    }
}

/// At a `"`: the position after the string (fully validated), and whether
/// it has escapes. Inlined into the value loop: most values and every key
/// are short strings, where a call and a returned span cost more than the
/// scan itself.
#[inline(always)]
fn string_end(b: &[u8], open: usize) -> Result<(usize, bool), Fail> {
    let mut i = open + 1;
    let mut escaped = false;
    loop {
        i = skip_plain(b, i);
        match b.get(i) {
            Some(b'"') => return Ok((i + 1, escaped)),
            Some(b'\\') => {
                escaped = true;
                i = escape_end(b, i + 1)?;
            }
            Some(&c) if c >= 0x80 => i = utf8_end(b, i)?,
            Some(_) => {
                return Err(Fail {
                    what: "control character in a string",
                    at: i,
                })
            }
            None => {
                return Err(Fail {
                    what: "unterminated string",
                    at: open,
                })
            }
        }
    }
}

/// At a `"`: the string's contents (fully validated) and the position
/// after its closing quote.
#[inline]
fn string_at(b: &[u8], open: usize) -> Result<(StrSpan<'_>, usize), Fail> {
    let (end, escaped) = string_end(b, open)?;
    let span = StrSpan {
        bytes: b.get(open + 1..end - 1).unwrap_or_default(),
        escaped,
    };
    Ok((span, end))
}

/// At a byte ≥ 0x80: the position after the UTF-8 sequence it starts, per
/// the standard's table (no overlong forms, surrogates or code points past
/// U+10FFFF). Multi-byte text occurs only inside strings, so validating it
/// here validates the whole input without a separate pass.
#[inline]
fn utf8_end(b: &[u8], i: usize) -> Result<usize, Fail> {
    let cont = |k: usize| matches!(b.get(i + k), Some(0x80..=0xBF));
    let second = b.get(i + 1).copied().unwrap_or(0);
    let len = match b.get(i) {
        Some(0xC2..=0xDF) => 2,
        Some(0xE0) if matches!(second, 0xA0..=0xBF) => 3,
        Some(0xE1..=0xEC | 0xEE..=0xEF) => 3,
        Some(0xED) if matches!(second, 0x80..=0x9F) => 3,
        Some(0xF0) if matches!(second, 0x90..=0xBF) => 4,
        Some(0xF1..=0xF3) => 4,
        Some(0xF4) if matches!(second, 0x80..=0x8F) => 4,
        _ => 0,
    };
    if len > 0 && (1..len).all(cont) {
        Ok(i + len)
    } else {
        Err(Fail {
            what: "invalid UTF-8",
            at: i,
        })
    }
}

#[inline]
fn digits_end(b: &[u8], mut i: usize) -> usize {
    while let Some(b'0'..=b'9') = b.get(i) {
        i += 1;
    }
    i
}

/// At a `-` or digit: the position after a number in JSON's grammar
/// (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`). A number
/// beyond `f64`'s range is refused, as `serde_json` and Go refuse it
/// (`JSON.parse` would make it `Infinity`).
#[inline]
fn number_end(b: &[u8], start: usize) -> Result<usize, Fail> {
    let bad = |at| {
        Err(Fail {
            what: "invalid number",
            at,
        })
    };
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_end(b, i + 1),
        _ => return bad(i),
    }
    if b.get(i) == Some(&b'.') {
        if !matches!(b.get(i + 1), Some(b'0'..=b'9')) {
            return bad(i + 1);
        }
        i = digits_end(b, i + 1);
    }
    let mut exponent = false;
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        if !matches!(b.get(i), Some(b'0'..=b'9')) {
            return bad(i);
        }
        i = digits_end(b, i);
        exponent = true;
    }
    // Only an exponent or over 300 digits can leave f64's range.
    if (exponent || i - start > 300) && !in_f64_range(b.get(start..i).unwrap_or_default()) {
        return Err(Fail {
            what: "number out of range",
            at: start,
        });
    }
    Ok(i)
}

/// Whether a number (valid per the grammar) is finite as an `f64`, that is
/// below 2^1024 − 2^970, the midpoint between `f64::MAX` and 2^1024 where
/// round-to-nearest-even (`f64::MAX`'s last bit is odd) starts rounding up to
/// infinity, as Go's `strconv.ParseFloat` rounds.
#[cold]
fn in_f64_range(text: &[u8]) -> bool {
    /// The midpoint's decimal digits (it is an integer of 309 digits).
    const LIMIT: &[u8] = b"179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
    let (mantissa, exp) = match text.iter().position(|&c| c == b'e' || c == b'E') {
        Some(e) => (
            text.get(..e).unwrap_or_default(),
            text.get(e + 1..).unwrap_or_default(),
        ),
        None => (text, &b""[..]),
    };
    // The significant digits, and how many of them stand before the point.
    let mut digits: Vec<u8> = Vec::with_capacity(mantissa.len());
    let mut int_len: i64 = 0;
    let mut before_point = true;
    for &c in mantissa {
        match c {
            b'.' => before_point = false,
            b'0'..=b'9' => {
                if digits.is_empty() && c == b'0' {
                    if !before_point {
                        int_len -= 1;
                    }
                    continue;
                }
                digits.push(c);
                if before_point {
                    int_len += 1;
                }
            }
            _ => {}
        }
    }
    if digits.is_empty() {
        return true;
    }
    // A huge exponent is clamped: far past either end, its digits do not
    // matter.
    let mut e: i64 = 0;
    let negative = exp.first() == Some(&b'-');
    for &c in exp.iter().filter(|c| c.is_ascii_digit()) {
        e = e
            .saturating_mul(10)
            .saturating_add(i64::from(c - b'0'))
            .min(1 << 60);
    }
    let magnitude = int_len.saturating_add(if negative { -e } else { e });
    match magnitude.cmp(&309) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => {
            while digits.last() == Some(&b'0') {
                digits.pop();
            }
            // Both have 309 digits before the point: compare as decimals.
            digits.as_slice() < LIMIT
        }
    }
}

/// JSON's whitespace (not form feed or vertical tab, which Rust's ASCII
/// whitespace also has).
#[inline]
pub(crate) fn is_ws(c: &u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

#[inline]
fn ws_end(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = b.get(i) {
        i += 1;
    }
    i
}

/// Open objects and arrays of one value: one bit each (set = array), the
/// innermost 128 in a register, deeper levels spilled to the heap.
struct Nest {
    top: u128,
    depth: usize,
    limit: usize,
    spill: Vec<u128>,
}

impl Nest {
    #[inline]
    fn push(&mut self, array: bool, at: usize) -> Result<(), Fail> {
        if self.depth >= self.limit {
            return Err(Fail {
                what: "nesting deeper than 10000 levels",
                at,
            });
        }
        if self.depth > 0 && self.depth.is_multiple_of(128) {
            self.spill.push(self.top);
            self.top = 0;
        }
        self.top = (self.top << 1) | u128::from(array);
        self.depth += 1;
        Ok(())
    }

    #[inline]
    fn in_array(&self) -> bool {
        self.top & 1 == 1
    }

    #[inline]
    fn pop(&mut self) {
        self.top >>= 1;
        self.depth -= 1;
        if self.depth > 0 && self.depth.is_multiple_of(128) {
            self.top = self.spill.pop().unwrap_or_default();
        }
    }
}

/// At an object's key (after `{` or `,` and whitespace): the position after
/// the key, its `:` and the whitespace before the value.
#[inline(always)]
fn key_end(b: &[u8], i: usize) -> Result<usize, Fail> {
    if b.get(i) != Some(&b'"') {
        return Err(Fail {
            what: "expected a string key",
            at: i,
        });
    }
    let (i, _) = string_end(b, i)?;
    let i = ws_end(b, i);
    if b.get(i) != Some(&b':') {
        return Err(Fail {
            what: "expected ':'",
            at: i,
        });
    }
    Ok(ws_end(b, i + 1))
}

/// At the first byte of a value (whitespace skipped): validate the whole
/// value per the JSON grammar and return the position after it. One loop
/// with an explicit stack, no recursion, so depth costs no call stack.
/// `depth` is the nesting already open around the value.
fn value_end(b: &[u8], mut i: usize, depth: usize) -> Result<usize, Fail> {
    let mut nest = Nest {
        top: 0,
        depth: 0,
        limit: MAX_DEPTH.saturating_sub(depth),
        spill: Vec::new(),
    };
    loop {
        // A value starts at `i`.
        match b.get(i) {
            Some(b'"') => i = string_end(b, i)?.0,
            Some(&c @ (b'{' | b'[')) => {
                let array = c == b'[';
                nest.push(array, i)?;
                i = ws_end(b, i + 1);
                let close = if array { b']' } else { b'}' };
                if b.get(i) == Some(&close) {
                    nest.pop();
                    i += 1;
                } else {
                    if !array {
                        i = key_end(b, i)?;
                    }
                    continue;
                }
            }
            Some(b't') if b.get(i..i + 4) == Some(b"true") => i += 4,
            Some(b'f') if b.get(i..i + 5) == Some(b"false") => i += 5,
            Some(b'n') if b.get(i..i + 4) == Some(b"null") => i += 4,
            Some(b'-' | b'0'..=b'9') => i = number_end(b, i)?,
            Some(_) => {
                return Err(Fail {
                    what: "expected a value",
                    at: i,
                })
            }
            None => {
                return Err(Fail {
                    what: "unexpected end of input",
                    at: i,
                })
            }
        }
        // After a value: close what ends here, then on to the next value.
        loop {
            if nest.depth == 0 {
                return Ok(i);
            }
            i = ws_end(b, i);
            match b.get(i) {
                Some(b',') => {
                    i = ws_end(b, i + 1);
                    if !nest.in_array() {
                        i = key_end(b, i)?;
                    }
                    break;
                }
                Some(b']') if nest.in_array() => {
                    nest.pop();
                    i += 1;
                }
                Some(b'}') if !nest.in_array() => {
                    nest.pop();
                    i += 1;
                }
                Some(_) => {
                    return Err(Fail {
                        what: if nest.in_array() {
                            "expected ',' or ']'"
                        } else {
                            "expected ',' or '}'"
                        },
                        at: i,
                    })
                }
                None => {
                    return Err(Fail {
                        what: "unexpected end of input inside an object or array",
                        at: i,
                    })
                }
            }
        }
    }
}

impl<'a> Scanner<'a> {
    fn new(b: &'a [u8]) -> Self {
        Scanner {
            b,
            pos: 0,
            depth: 0,
        }
    }

    /// A failure at the current position.
    #[inline]
    fn err<T>(&self, what: &'static str) -> Result<T, Fail> {
        Err(Fail { what, at: self.pos })
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        self.pos = ws_end(self.b, self.pos);
    }

    #[inline]
    fn expect(&mut self, c: u8, what: &'static str) -> Result<(), Fail> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            self.err(what)
        }
    }

    /// At a `"`: the string's contents (validated), moving past it.
    #[inline]
    fn string(&mut self) -> Result<StrSpan<'a>, Fail> {
        if self.peek() != Some(b'"') {
            return self.err("expected a string");
        }
        let (span, end) = string_at(self.b, self.pos)?;
        self.pos = end;
        Ok(span)
    }

    /// Validate one value of any type, returning its bytes.
    fn value(&mut self) -> Result<&'a [u8], Fail> {
        self.skip_ws();
        let start = self.pos;
        self.pos = value_end(self.b, start, self.depth)?;
        Ok(self.b.get(start..self.pos).unwrap_or_default())
    }

    /// Iterate an object's members: `f(key, scanner_at_value)` must consume
    /// the value.
    fn members(
        &mut self,
        mut f: impl FnMut(&'a [u8], &mut Self) -> Result<(), Fail>,
    ) -> Result<(), Fail> {
        self.expect(b'{', "expected an object")?;
        if self.depth >= MAX_DEPTH {
            return self.err("nesting deeper than 10000 levels");
        }
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        self.depth += 1;
        loop {
            self.skip_ws();
            let key = self.string()?;
            self.expect(b':', "expected ':'")?;
            self.skip_ws();
            f(key.bytes, self)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return self.err("expected ',' or '}'"),
            }
        }
    }

    /// Parse a Kubernetes object at the current position.
    fn object(&mut self) -> Result<ObjectSpan<'a>, Fail> {
        self.skip_ws();
        let start = self.pos;
        let mut span = ObjectSpan {
            raw: &[],
            api_version: None,
            kind: None,
            metadata: None,
            metadata_raw: None,
            layout: Vec::with_capacity(20),
        };
        let mut layout_ok = true;
        self.members(|key, s| {
            let from = s.pos;
            match key {
                b"apiVersion" if s.peek() == Some(b'"') => span.api_version = Some(s.string()?),
                b"kind" if s.peek() == Some(b'"') => span.kind = Some(s.string()?),
                b"metadata" => {
                    span.metadata = Some(s.meta()?);
                    span.metadata_raw = s.b.get(from..s.pos);
                }
                _ => {
                    s.value()?;
                }
            }
            // The key's contents end at its closing quote, which precedes the ':'.
            let key_start = (key.as_ptr() as usize).saturating_sub(s.b.as_ptr() as usize);
            let offsets = [key_start, key_start + key.len(), from, s.pos];
            for o in offsets {
                match o.checked_sub(start).and_then(|o| u32::try_from(o).ok()) {
                    Some(o) => span.layout.push(o),
                    None => layout_ok = false,
                }
            }
            Ok(())
        })?;
        if !layout_ok {
            span.layout.clear();
        }
        span.raw = self.b.get(start..self.pos).unwrap_or_default();
        Ok(span)
    }

    /// A string or `null` (→ `None`); anything else is an error.
    fn opt_string(&mut self) -> Result<Option<StrSpan<'a>>, Fail> {
        match self.peek() {
            Some(b'"') => self.string().map(Some),
            Some(b'n') => {
                if self.value()? == b"null" {
                    Ok(None)
                } else {
                    self.err("expected a string")
                }
            }
            _ => self.err("expected a string"),
        }
    }

    /// A boolean or `null`.
    fn opt_bool(&mut self) -> Result<Option<bool>, Fail> {
        match self.value()? {
            b"true" => Ok(Some(true)),
            b"false" => Ok(Some(false)),
            b"null" => Ok(None),
            _ => self.err("expected a boolean"),
        }
    }

    /// `ownerReferences`: an array of objects, or `null`.
    fn owner_refs(&mut self, out: &mut Vec<OwnerRefSpan<'a>>) -> Result<(), Fail> {
        self.skip_ws();
        if self.peek() == Some(b'n') {
            self.opt_bool()?;
            return Ok(());
        }
        self.expect(b'[', "ownerReferences is not an array")?;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        self.depth += 1;
        loop {
            let mut r = OwnerRefSpan::default();
            self.members(|key, s| {
                match key {
                    b"apiVersion" => r.api_version = s.opt_string()?,
                    b"kind" => r.kind = s.opt_string()?,
                    b"name" => r.name = s.opt_string()?,
                    b"uid" => r.uid = s.opt_string()?,
                    b"controller" => r.controller = s.opt_bool()?,
                    b"blockOwnerDeletion" => r.block_owner_deletion = s.opt_bool()?,
                    _ => {
                        s.value()?;
                    }
                }
                Ok(())
            })?;
            out.push(r);
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                }
                Some(b']') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return self.err("expected ',' or ']' in ownerReferences"),
            }
        }
    }

    /// Scan `metadata`, keeping only what the cache needs; annotations and
    /// managedFields (often most of the metadata) are only validated.
    fn meta(&mut self) -> Result<MetaSpan<'a>, Fail> {
        let mut m = MetaSpan::default();
        self.skip_ws();
        if self.peek() == Some(b'n') {
            return if self.value()? == b"null" {
                Ok(m)
            } else {
                self.err("metadata is not an object")
            };
        }
        self.members(|key, s| {
            match key {
                b"name" => m.name = s.opt_string()?,
                b"generateName" => m.generate_name = s.opt_string()?,
                b"namespace" => m.namespace = s.opt_string()?,
                b"uid" => m.uid = s.opt_string()?,
                b"resourceVersion" => m.resource_version = s.opt_string()?,
                b"creationTimestamp" => m.creation_timestamp = s.opt_string()?,
                b"deletionTimestamp" => m.deletion_timestamp = s.opt_string()?,
                b"generation" => {
                    let v = s.value()?;
                    m.generation = (v != b"null").then_some(v);
                }
                b"labels" => {
                    if s.peek() == Some(b'n') {
                        s.opt_string()?;
                    } else {
                        s.members(|k, s| {
                            let v = s.string()?;
                            let k = StrSpan {
                                bytes: k,
                                escaped: k.contains(&b'\\'),
                            };
                            m.labels.push((k, v));
                            Ok(())
                        })?;
                    }
                }
                b"ownerReferences" => s.owner_refs(&mut m.owner_references)?,
                b"managedFields" => {
                    // The key's opening quote sits just before its contents.
                    let key_start = (key.as_ptr() as usize)
                        .saturating_sub(s.b.as_ptr() as usize)
                        .saturating_sub(1);
                    s.value()?;
                    m.managed_fields = s.b.get(key_start..s.pos);
                }
                _ => {
                    s.value()?;
                }
            }
            Ok(())
        })?;
        Ok(m)
    }

    fn end(&mut self) -> Result<(), Fail> {
        self.skip_ws();
        if self.pos == self.b.len() {
            Ok(())
        } else {
            self.err("trailing characters")
        }
    }
}

/// The decode error for a failed scan: what and where (with the bytes
/// around the spot), plus the usual excerpt of the input's start, which
/// names the event and object.
fn fail(input: &[u8], f: Fail) -> Error {
    let from = f.at.saturating_sub(16);
    let near = input
        .get(from..input.len().min(f.at + 16))
        .unwrap_or_default();
    Error::decode(
        format!(
            "{} at byte {} (near {:?})",
            f.what,
            f.at,
            String::from_utf8_lossy(near)
        ),
        input,
    )
}

/// Scan one object (the whole input must be one JSON object).
pub(crate) fn parse_object(input: &[u8]) -> Result<ObjectSpan<'_>, Error> {
    let mut s = Scanner::new(input);
    let span = s.object().map_err(|w| fail(input, w))?;
    s.end().map_err(|w| fail(input, w))?;
    Ok(span)
}

/// Whether `input` is the start of a JSON value cut short (it ends inside
/// an object, an array, a string, a number, a literal, an escape or a UTF-8
/// sequence), not a value with an error in it.
pub(crate) fn is_cut_short(input: &[u8]) -> bool {
    match value_end(input, ws_end(input, 0), 0) {
        Ok(_) => false,
        Err(f) if f.at >= input.len() || f.what == "unterminated string" => true,
        Err(f) => token_cut_short(input.get(f.at..).unwrap_or_default(), f.what),
    }
}

/// Whether `tail`, where the scan failed with `what`, is the start of the
/// token the scan expected there rather than a wrong token: a literal, the
/// rest of an escape after its backslash, or a UTF-8 sequence.
fn token_cut_short(tail: &[u8], what: &str) -> bool {
    let hex = |c: &u8| c.is_ascii_hexdigit();
    match what {
        "expected a value" => [&b"true"[..], b"false", b"null"]
            .iter()
            .any(|lit| tail.len() < lit.len() && lit.starts_with(tail)),
        "invalid \\u escape" => tail.len() < 5 && tail.iter().skip(1).all(hex),
        // A high surrogate whose low half was cut: `u` and four hex digits,
        // then part of `\uDC00`..`\uDFFF`.
        "lone high surrogate in a \\u escape" => {
            let low = tail.get(5..).unwrap_or_default();
            low.len() < 6
                && low.first().is_none_or(|&c| c == b'\\')
                && low.get(1).is_none_or(|&c| c == b'u')
                && low.get(2).is_none_or(|c| c.eq_ignore_ascii_case(&b'd'))
                && low
                    .get(3)
                    .is_none_or(|&c| matches!(c, b'c'..=b'f' | b'C'..=b'F'))
                && low.iter().skip(4).all(hex)
        }
        "invalid UTF-8" => {
            let (Some(&lead), rest) = (tail.first(), tail.get(1..).unwrap_or_default()) else {
                return false;
            };
            let need = match lead {
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF4 => 4,
                _ => 0,
            };
            // Shorter than its lead byte says, and what is there is right.
            let second = match lead {
                0xE0 => 0xA0..=0xBF,
                0xED => 0x80..=0x9F,
                0xF0 => 0x90..=0xBF,
                0xF4 => 0x80..=0x8F,
                _ => 0x80..=0xBF,
            };
            tail.len() < need
                && rest.first().is_none_or(|c| second.contains(c))
                && rest.iter().skip(1).all(|c| (0x80..=0xBF).contains(c))
        }
        _ => false,
    }
}

/// Validate that `input` is exactly one JSON value (whitespace around it
/// allowed).
pub(crate) fn check_value(input: &[u8]) -> Result<(), Error> {
    let mut s = Scanner::new(input);
    s.value().and_then(|_| s.end()).map_err(|w| fail(input, w))
}

/// Scan a watch line `{"type":"…","object":{…}}` (members in any order).
pub(crate) fn parse_event(line: &[u8]) -> Result<Envelope<'_>, Error> {
    let mut s = Scanner::new(line);
    let mut env = Envelope {
        event_type: &[],
        object: None,
    };
    let mut seen_type = false;
    s.members(|key, s| {
        match key {
            b"type" => {
                env.event_type = s.string()?.bytes;
                seen_type = true;
            }
            b"object" => {
                s.skip_ws();
                env.object = match s.peek() {
                    Some(b'{') => Some(s.object()?),
                    _ => return s.err("watch event object is not an object"),
                };
            }
            _ => {
                s.value()?;
            }
        }
        Ok(())
    })
    .and_then(|()| s.end())
    .map_err(|w| fail(line, w))?;
    if !seen_type {
        return Err(Error::decode("watch event without a type", line));
    }
    Ok(env)
}

/// The bytes of the value at `path` (member names, outermost first) inside
/// the JSON object `input`; `None` when a step is missing or not an object.
/// Of duplicate members the last one counts, as in a JSON decoder.
pub(crate) fn find_path<'a>(input: &'a [u8], path: &[&str]) -> Option<&'a [u8]> {
    let mut cur = input;
    for seg in path {
        let mut s = Scanner::new(cur);
        s.skip_ws();
        if s.peek() != Some(b'{') {
            return None;
        }
        let mut found = None;
        s.members(|key, s| {
            let v = s.value()?;
            if key == seg.as_bytes() {
                found = Some(v);
            }
            Ok(())
        })
        .ok()?;
        cur = found?;
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_spans_in_any_member_order() {
        let line = br#" {"object":{"spec":{"a":["}",{"b":"\"]"}]},"kind":"P\u006fd","metadata":{"name":"x"},"apiVersion":"v1"} , "type":"ADDED"} "#;
        let env = parse_event(line).expect("valid");
        assert_eq!(env.event_type, b"ADDED");
        let o = env.object.expect("object");
        assert_eq!(o.metadata.expect("meta").name.expect("name").bytes, b"x");
        assert_eq!(o.kind.expect("kind").to_str().expect("str").as_ref(), "Pod");
        assert_eq!(
            o.api_version.expect("av").to_str().expect("str").as_ref(),
            "v1"
        );
        assert!(o.raw.starts_with(b"{\"spec\"") && o.raw.ends_with(b"\"v1\"}"));
    }

    #[test]
    fn structural_errors_are_caught() {
        for bad in [
            &br#"{"type":"ADDED","object":{"a":[1}}}"#[..],
            br#"{"type":"ADDED","object":{"a":"unterminated}}"#,
            br#"{"type":"ADDED","object":{"a":1}"#,
            br#"{"type":"ADDED","object":{"a":1}}}"#,
            br#"{"type":"ADDED","object":[]}"#,
            br#"{"type":"ADDED","object":{"a" 1}}"#,
            br#"{"type":"ADDED","object":{"a":1,}}"#,
            br#"{"type":"ADDED","object":{"a":x}}"#,
            br#"{"object":{}}"#,
            b"not json",
            b"{\"type\":\"ADDED\",\"object\":{\"a\":\"\xff\"}}",
            b"",
        ] {
            assert!(
                matches!(parse_event(bad), Err(Error::Decode { .. })),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// Whether `input` is one valid JSON value (whitespace around it allowed).
    fn valid(input: &[u8]) -> Result<(), Fail> {
        let i = ws_end(input, 0);
        let end = value_end(input, i, 0)?;
        if ws_end(input, end) == input.len() {
            Ok(())
        } else {
            Err(Fail {
                what: "trailing characters",
                at: end,
            })
        }
    }

    #[test]
    fn values_are_validated_fully() {
        for ok in [
            r#""""#,
            r#""a\"\\\/\b\f\n\r\t\u00e9\u20AC""#,
            r#""\ud83d\ude00 pair""#,
            "\"\u{7f} DEL and \u{e9}\"",
            "0",
            "-0",
            "10",
            "-1.5e-3",
            "1E+2",
            "0.0e0",
            "1e-400",
            "123456789012345678901234567890",
            "true",
            "false",
            "null",
            " [ 1 , [ ] , { } , { \"a\" : [ null ] } ] ",
            r#"{"a":{"b":[true,false,null,"x",1]},"":0}"#,
        ] {
            assert_eq!(valid(ok.as_bytes()), Ok(()), "{ok}");
            // The oracle agrees.
            serde_json::from_str::<serde_json::Value>(ok).expect(ok);
        }
        for (bad, at) in [
            ("\"a\u{1}b\"", 2),
            ("\"tab\tinside\"", 4),
            (r#""\x""#, 2),
            (r#""\u12""#, 2),
            (r#""\u12G4""#, 2),
            (r#""\ud83d""#, 2),
            (r#""\ud83d\u0041""#, 2),
            (r#""\ud83d\ud83d""#, 2),
            (r#""\ude00""#, 2),
            (r#""unterminated"#, 0),
            ("01", 1),
            ("1.", 2),
            (".5", 0),
            ("-", 1),
            ("-a", 1),
            ("1e", 2),
            ("1e+", 3),
            ("+1", 0),
            ("1e400", 0),
            ("-1e400", 0),
            ("tru", 0),
            ("True", 0),
            ("nul", 0),
            ("truex", 4),
            ("[1,]", 3),
            ("[,1]", 1),
            ("[1 2]", 3),
            ("{,}", 1),
            (r#"{"a"}"#, 4),
            (r#"{"a":1,}"#, 7),
            ("{1:2}", 1),
            (r#"{"a":1]"#, 6),
            ("[1}", 2),
            ("[[[", 3),
            ("", 0),
            ("NaN", 0),
            ("Infinity", 0),
        ] {
            let e = valid(bad.as_bytes()).expect_err(bad);
            assert_eq!(e.at, at, "{bad}: {e:?}");
            assert!(
                serde_json::from_str::<serde_json::Value>(bad).is_err(),
                "the oracle refuses {bad} too"
            );
        }
    }

    #[test]
    fn plain_string_bytes_are_skipped_exactly_up_to_the_first_stop() {
        // Fillers next to the stop bytes in value.
        for fill in [b'a', b'!', b'#', b'[', b']', b' ', 0x7f] {
            let mut data = vec![fill; 40];
            assert_eq!(skip_plain(&data, 0), 40);
            for stop in [b'"', b'\\', 0, 0x1f, b'\n', 0x80, 0xc3, 0xff] {
                for p in 0..40 {
                    data[p] = stop;
                    // And a second stop later, which must not hide the first.
                    let later = (p + 3).min(39);
                    let before = data[later];
                    data[later] = b'"';
                    for from in [0, p.saturating_sub(5), p] {
                        assert_eq!(
                            skip_plain(&data, from),
                            p,
                            "{fill:#x} {stop:#x} at {p} from {from}"
                        );
                    }
                    data[later] = before;
                    data[p] = fill;
                }
            }
        }
    }

    #[test]
    fn utf8_is_validated_inside_strings_and_refused_outside() {
        for ok in [
            "\"é日😀\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}\"",
            "[\"a\",\"é\"]",
        ] {
            assert_eq!(valid(ok.as_bytes()), Ok(()), "{ok}");
        }
        for (bad, at) in [
            (&b"\"\xc3\""[..], 1),
            (b"\"\xc0\x80\"", 1),
            (b"\"\xe0\x80\x80\"", 1),
            (b"\"\xed\xa0\x80\"", 1),
            (b"\"\xf4\x90\x80\x80\"", 1),
            (b"\"\xf5\x80\x80\x80\"", 1),
            (b"\"ab\x80\"", 3),
            (b"\"\xe6\x97\"", 1),
            (b"\"\xff\"", 1),
            ("[é]".as_bytes(), 1),
            (b"{\"a\":1}\xc3\xa9", 7),
        ] {
            let e = valid(bad).expect_err(&String::from_utf8_lossy(bad));
            assert_eq!(e.at, at, "{bad:?}: {e:?}");
            assert!(
                std::str::from_utf8(bad).is_err()
                    || serde_json::from_slice::<serde_json::Value>(bad).is_err()
            );
        }
        let Err(e) = parse_event(b"{\"type\":\"ADDED\",\"object\":{\"k\":\"\xe6\x97\"}}") else {
            panic!("accepted a truncated character")
        };
        assert!(e.to_string().contains("invalid UTF-8 at byte 31"), "{e}");
    }

    #[test]
    fn nesting_is_limited_to_go_s_depth_without_recursion() {
        let nested = |n: usize| {
            let mut v = "[".repeat(n);
            v.push_str(&"]".repeat(n));
            v
        };
        assert_eq!(valid(nested(MAX_DEPTH).as_bytes()), Ok(()));
        let e = valid(nested(MAX_DEPTH + 1).as_bytes()).expect_err("too deep");
        assert_eq!(e.at, MAX_DEPTH);
        // Objects and arrays mixed across the 128-level register boundary
        // keep their kinds: a mismatch deep down is still caught.
        let mut mixed = String::new();
        for i in 0..300 {
            mixed.push_str(if i % 3 == 0 { "{\"k\":" } else { "[" });
        }
        let close: String = (0..300)
            .rev()
            .map(|i| if i % 3 == 0 { "}" } else { "]" })
            .collect();
        assert_eq!(valid(format!("{mixed}1{close}").as_bytes()), Ok(()));
        let mut swapped = close.clone().into_bytes();
        swapped[200] = if swapped[200] == b'}' { b']' } else { b'}' };
        let swapped = String::from_utf8(swapped).expect("ascii");
        assert!(valid(format!("{mixed}1{swapped}").as_bytes()).is_err());
        // The members open around a value count towards the limit.
        let deep_event = format!(
            r#"{{"type":"ADDED","object":{{"spec":{}}}}}"#,
            nested(MAX_DEPTH - 2)
        );
        assert!(parse_event(deep_event.as_bytes()).is_ok());
        let too_deep = format!(
            r#"{{"type":"ADDED","object":{{"spec":{}}}}}"#,
            nested(MAX_DEPTH - 1)
        );
        assert!(parse_event(too_deep.as_bytes()).is_err());
    }

    #[test]
    fn invalid_json_anywhere_in_an_object_is_a_decode_error_with_its_position() {
        for bad in [
            // Inside the annotations the scanner used to skip by brackets.
            &br#"{"metadata":{"name":"a","annotations":{"x":tru}}}"#[..],
            br#"{"metadata":{"name":"a","annotations":{"x":"y",}}}"#,
            br#"{"metadata":{"managedFields":[{"f":01}]}}"#,
            b"{\"metadata\":{\"name\":\"a\",\"annotations\":{\"k\x01\":\"v\"}}}",
            b"{\"spec\":{\"k\":\"v\x1f\"}}",
            br#"{"spec":{"k":"\q"}}"#,
            br#"{"status":{"n":1.e5}}"#,
            br#"{"status":[1 2]}"#,
            br#"{"kind":"Pod","apiVersion":"v1","x":nul}"#,
        ] {
            let e = parse_object(bad).expect_err(&String::from_utf8_lossy(bad));
            let Error::Decode { message, .. } = &e else {
                panic!("{e:?}")
            };
            assert!(message.contains(" at byte "), "{message}");
        }
        let e = parse_object(br#"{"metadata":{"annotations":{"x":tru}}}"#).expect_err("bad");
        assert!(e.to_string().contains("expected a value at byte 32"), "{e}");
    }
}
