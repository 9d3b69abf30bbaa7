//! A structural JSON scanner: finds the byte ranges of the values the client
//! needs (a watch envelope's `type` and `object`, an object's `apiVersion`,
//! `kind` and `metadata`, a list's `items`) without building a tree.
//!
//! Why: a pod is ~2–3 KB of which the cache needs the ~300 bytes of
//! metadata it indexes. Validating and skipping `spec`/`status` with a full
//! parser costs more than everything else on the watch path, so the rest is
//! skipped structurally here (strings, escapes and bracket nesting are
//! honoured; the bytes must be UTF-8), and only `metadata` goes through
//! `serde_json` (see `object.rs`). A syntax error hidden inside `spec` is
//! therefore reported when the object is decoded, not when it arrives; API
//! servers do not produce such bytes, and truncation or garbage at the
//! structural level (what broken connections and proxies produce) is
//! caught here.
use super::Error;

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
        let mut quoted = Vec::with_capacity(self.bytes.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(self.bytes);
        quoted.push(b'"');
        serde_json::from_slice::<String>(&quoted)
            .map(String::into_boxed_str)
            .map_err(|e| Error::decode(format!("bad string: {e}"), self.bytes))
    }
}

/// A watch line's envelope.
pub(crate) struct Envelope<'a> {
    pub event_type: &'a [u8],
    pub object: Option<ObjectSpan<'a>>,
}

/// A list response's parts.
pub(crate) struct ListSpan<'a> {
    pub api_version: Option<StrSpan<'a>>,
    pub kind: Option<StrSpan<'a>>,
    pub metadata: Option<&'a [u8]>,
    pub items: Vec<ObjectSpan<'a>>,
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
}

/// Why scanning failed (turned into an [`Error::Decode`] with an excerpt).
type Fail = &'static str;

impl<'a> Scanner<'a> {
    fn new(b: &'a [u8]) -> Self {
        Scanner { b, pos: 0 }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    #[inline]
    fn expect(&mut self, c: u8, what: Fail) -> Result<(), Fail> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(what)
        }
    }

    /// At a `"`: skip the string, returning its contents.
    #[inline]
    fn string(&mut self) -> Result<StrSpan<'a>, Fail> {
        if self.peek() != Some(b'"') {
            return Err("expected a string");
        }
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        let b = self.b;
        loop {
            match b.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(StrSpan {
                        bytes: b.get(start..i).unwrap_or_default(),
                        escaped,
                    });
                }
                Some(b'\\') => {
                    escaped = true;
                    i += 2;
                }
                Some(_) => i += 1,
                None => return Err("unterminated string"),
            }
        }
    }

    /// Skip one value of any type, returning its bytes.
    fn value(&mut self) -> Result<&'a [u8], Fail> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            Some(b'"') => {
                self.string()?;
            }
            Some(b'{' | b'[') => self.container()?,
            Some(b't' | b'f' | b'n' | b'-' | b'0'..=b'9') => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    if !(c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-')) {
                        return Err("invalid literal");
                    }
                    self.pos += 1;
                }
            }
            Some(_) => return Err("expected a value"),
            None => return Err("unexpected end of input"),
        }
        Ok(self.b.get(start..self.pos).unwrap_or_default())
    }

    /// At `{` or `[`: skip to the matching close, checking bracket types
    /// (a bit stack of the open kinds, 128 levels deep; deeper nesting is
    /// only counted).
    fn container(&mut self) -> Result<(), Fail> {
        let b = self.b;
        let mut i = self.pos;
        let mut depth: u32 = 0;
        // bit set = '[' open, clear = '{' open.
        let mut kinds: u128 = 0;
        loop {
            let Some(&c) = b.get(i) else {
                return Err("unexpected end of input inside an object or array");
            };
            match c {
                b'"' => {
                    i += 1;
                    loop {
                        match b.get(i) {
                            Some(b'"') => break,
                            Some(b'\\') => i += 2,
                            Some(_) => i += 1,
                            None => return Err("unterminated string"),
                        }
                    }
                }
                b'{' | b'[' => {
                    if depth < 128 {
                        kinds = (kinds << 1) | u128::from(c == b'[');
                    }
                    depth += 1;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return Err("unbalanced brackets");
                    }
                    if depth <= 128 {
                        if (kinds & 1 == 1) != (c == b']') {
                            return Err("mismatched brackets");
                        }
                        kinds >>= 1;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// Iterate an object's members: `f(key, scanner_at_value)` must consume
    /// the value.
    fn members(
        &mut self,
        mut f: impl FnMut(&'a [u8], &mut Self) -> Result<(), Fail>,
    ) -> Result<(), Fail> {
        self.expect(b'{', "expected an object")?;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
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
                    return Ok(());
                }
                _ => return Err("expected ',' or '}'"),
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
                    Err("expected a string")
                }
            }
            _ => Err("expected a string"),
        }
    }

    /// A boolean or `null`.
    fn opt_bool(&mut self) -> Result<Option<bool>, Fail> {
        match self.value()? {
            b"true" => Ok(Some(true)),
            b"false" => Ok(Some(false)),
            b"null" => Ok(None),
            _ => Err("expected a boolean"),
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
                    return Ok(());
                }
                _ => return Err("expected ',' or ']' in ownerReferences"),
            }
        }
    }

    /// Scan `metadata`, keeping only what the cache needs; annotations and
    /// managedFields (often most of the metadata) are skipped structurally.
    fn meta(&mut self) -> Result<MetaSpan<'a>, Fail> {
        let mut m = MetaSpan::default();
        self.skip_ws();
        if self.peek() == Some(b'n') {
            return if self.value()? == b"null" {
                Ok(m)
            } else {
                Err("metadata is not an object")
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
            Err("trailing characters")
        }
    }
}

fn fail(input: &[u8], what: Fail) -> Error {
    Error::decode(what, input)
}

fn check_utf8(input: &[u8]) -> Result<(), Error> {
    std::str::from_utf8(input)
        .map(|_| ())
        .map_err(|e| Error::decode(format!("invalid UTF-8: {e}"), input))
}

/// Scan one object (the whole input must be one JSON object).
pub(crate) fn parse_object(input: &[u8]) -> Result<ObjectSpan<'_>, Error> {
    check_utf8(input)?;
    let mut s = Scanner::new(input);
    let span = s.object().map_err(|w| fail(input, w))?;
    s.end().map_err(|w| fail(input, w))?;
    Ok(span)
}

/// Scan a watch line `{"type":"…","object":{…}}` (members in any order).
pub(crate) fn parse_event(line: &[u8]) -> Result<Envelope<'_>, Error> {
    check_utf8(line)?;
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
                    _ => return Err("watch event object is not an object"),
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
        return Err(fail(line, "watch event without a type"));
    }
    Ok(env)
}

/// The `metadata.continue` token of a list response, found without
/// scanning `items` when `metadata` comes first (as the API server writes
/// it). `None` when there is none, when `items` comes first, or when the
/// body is malformed (the full decode reports that).
pub(crate) fn peek_list_continue(body: &[u8]) -> Option<String> {
    let mut s = Scanner::new(body);
    let mut token = None;
    // The callback stops the scan (with a dummy failure) once it has its answer.
    let _ = s.members(|key, s| match key {
        b"metadata" => {
            s.skip_ws();
            if s.peek() == Some(b'{') {
                s.members(|k, s| {
                    if k == b"continue" && s.peek() == Some(b'"') {
                        token = s.string()?.to_str().ok().map(String::from);
                    } else {
                        s.value()?;
                    }
                    Ok(())
                })?;
            }
            Err("done")
        }
        b"items" => Err("done"),
        _ => s.value().map(|_| ()),
    });
    token.filter(|t| !t.is_empty())
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

/// Scan a list response `{"kind":…,"metadata":{…},"items":[…]}`.
pub(crate) fn parse_list(body: &[u8]) -> Result<ListSpan<'_>, Error> {
    check_utf8(body)?;
    let mut s = Scanner::new(body);
    let mut list = ListSpan {
        api_version: None,
        kind: None,
        metadata: None,
        items: Vec::new(),
    };
    s.members(|key, s| {
        match key {
            b"apiVersion" if s.peek() == Some(b'"') => list.api_version = Some(s.string()?),
            b"kind" if s.peek() == Some(b'"') => list.kind = Some(s.string()?),
            b"metadata" => list.metadata = Some(s.value()?),
            b"items" => match s.peek() {
                Some(b'n') => {
                    s.value()?;
                }
                _ => {
                    s.expect(b'[', "items is not an array")?;
                    s.skip_ws();
                    if s.peek() == Some(b']') {
                        s.pos += 1;
                    } else {
                        loop {
                            list.items.push(s.object()?);
                            s.skip_ws();
                            match s.peek() {
                                Some(b',') => s.pos += 1,
                                Some(b']') => {
                                    s.pos += 1;
                                    break;
                                }
                                _ => return Err("expected ',' or ']' in items"),
                            }
                        }
                    }
                }
            },
            _ => {
                s.value()?;
            }
        }
        Ok(())
    })
    .and_then(|()| s.end())
    .map_err(|w| fail(body, w))?;
    Ok(list)
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

    #[test]
    fn list_items_and_metadata() {
        let body = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"c"},"items":[{"metadata":{"name":"a"}}, {"metadata":{"name":"b"}}]}"#;
        let l = parse_list(body).expect("valid");
        assert_eq!(l.items.len(), 2);
        assert_eq!(l.items[1].raw, br#"{"metadata":{"name":"b"}}"#);
        assert_eq!(l.kind.expect("kind").bytes, b"PodList");
        assert!(l.metadata.is_some());
        assert!(parse_list(br#"{"items":null}"#)
            .expect("ok")
            .items
            .is_empty());
        assert!(parse_list(br#"{"items":[}"#).is_err());
        assert!(parse_list(br#"{"items":[1]}"#).is_err());
    }

    #[test]
    fn peek_list_continue_reads_only_the_leading_metadata() {
        let c = |b: &str| super::peek_list_continue(b.as_bytes());
        assert_eq!(
            c(
                r#"{"kind":"PodList","metadata":{"resourceVersion":"9","continue":"tok"},"items":[{"x":"#
            ),
            Some("tok".into()),
            "items are never scanned, so a truncated body still gives the token"
        );
        assert_eq!(c(r#"{"metadata":{"continue":""},"items":[]}"#), None);
        assert_eq!(
            c(r#"{"metadata":{"resourceVersion":"9"},"items":[]}"#),
            None
        );
        assert_eq!(c(r#"{"items":[],"metadata":{"continue":"late"}}"#), None);
        assert_eq!(c(r#"{"metadata":null,"items":[]}"#), None);
        assert_eq!(c("garbage"), None);
        assert_eq!(
            c(r#"{"metadata":{"continue":"a\"b"}}"#),
            Some("a\"b".into())
        );
    }
}
