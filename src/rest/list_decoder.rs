//! A LIST body decoded as it arrives. The API server's watch cache answers a
//! `resourceVersion=0` list in one response whatever the `limit`, so a big
//! collection's first list can be hundreds of megabytes; wasm memory never
//! shrinks, so holding that body while decoding it would be the page's cost
//! for its whole life. Here each item is cut out of the stream, decoded into
//! its own [`KubeObject`] (one copy of its bytes) and the chunk it came in is
//! let go: what is held at any moment is the items decoded so far plus at
//! most one unfinished item.
//!
//! Only the framing is incremental: where a member or an item starts and
//! ends is found by brackets and quotes, resumably across chunks, and each
//! complete piece is then validated by the same scanner that validates a
//! whole body. The list's `metadata` may come before or after `items`.
use std::rc::Rc;

use super::list::{key_hint, ObjectList};
use super::object::KubeObject;
use super::scan::{self, Reader};
use super::Error;

/// What is told a page's continue token as soon as it is decoded.
pub type OnContinue = Rc<dyn Fn(&str)>;

/// What the caller keeps of each item as it is decoded (`None` drops it):
/// lets a cache transform items, or swap in the copy it already holds,
/// before the next one arrives, so a list never holds its raw items all at
/// once.
pub type OnItem = Rc<dyn Fn(KubeObject) -> Option<KubeObject>>;

/// Callbacks the LIST decoder calls while a page arrives.
#[derive(Clone, Default)]
pub struct ListHooks {
    /// Told the continue token as soon as it is decoded (before the items
    /// when `metadata` comes first, as the API server writes it), so the
    /// next page can be requested while this one arrives. Not called on
    /// the last page.
    pub on_continue: Option<OnContinue>,
    /// Maps each valid item as it is decoded.
    pub on_item: Option<OnItem>,
}

impl std::fmt::Debug for ListHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListHooks")
            .field("on_continue", &self.on_continue.is_some())
            .field("on_item", &self.on_item.is_some())
            .finish()
    }
}

/// Where the decoder is in `{"kind":…,"metadata":{…},"items":[…]}`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum At {
    /// Before the list's `{`.
    Open,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,`: a key.
    Key,
    /// At a member's value (after `:`).
    Value(Member),
    /// After `items` `[`: an item or `]`.
    FirstItem,
    /// After `,` in `items`: an item.
    Item,
    /// After an item: `,` or `]`.
    AfterItem,
    /// After a member's value: `,` or `}`.
    AfterMember,
    /// After the list's `}`: whitespace only.
    End,
}

/// The members the decoder keeps; the rest are validated and skipped.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Member {
    ApiVersion,
    Kind,
    Metadata,
    Items,
    /// `status`, `message`, `reason`, `code` or `details` (the key): kept
    /// (bounded) in case the body is a `Status`, not a list.
    StatusPart(&'static str),
    Other,
}

/// Most bytes of `Status` members kept from one body.
const MAX_STATUS_BYTES: usize = 64 << 10;

/// What the extent scan found so far in the value being collected, so a
/// value split over many chunks is scanned once, not once per chunk.
#[derive(Clone, Copy, Debug, Default)]
struct Extent {
    /// Bytes of the value scanned so far.
    len: usize,
    /// Open brackets.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// A number or literal (it ends at the first delimiter).
    scalar: bool,
}

/// Progress through an unfinished `"key" :`, in bytes from its opening
/// quote, so a key (or the whitespace after it) split over many chunks is
/// scanned once, not once per chunk.
#[derive(Clone, Copy, Debug, Default)]
struct KeyScan {
    /// Where to go on.
    next: usize,
    /// The closing quote, once found.
    close: Option<usize>,
}

/// `metadata` of a list, as far as the pager and reflector need it.
#[derive(Default)]
struct ListMeta {
    resource_version: String,
    continue_token: String,
    remaining_item_count: Option<i64>,
}

impl ListMeta {
    /// Read by the scan reader (`null` is empty, unknown members skipped).
    fn read(v: &[u8]) -> Result<ListMeta, Error> {
        let mut r = Reader::new(v, "list metadata");
        let mut m = ListMeta::default();
        r.object(|key, r| {
            match key {
                b"resourceVersion" => m.resource_version = r.string()?,
                b"continue" => m.continue_token = r.string()?,
                b"remainingItemCount" => {
                    m.remaining_item_count = r.or_null(|r| r.integer(i64::MIN, i64::MAX))?
                }
                _ => r.skip()?,
            }
            Ok(())
        })?;
        r.end()?;
        Ok(m)
    }
}

/// A list response decoded chunk by chunk ([`feed`](Self::feed), then
/// [`finish`](Self::finish)).
pub struct ListDecoder {
    /// Unconsumed input: an unfinished token, member or item.
    buf: Vec<u8>,
    /// Bytes of the body before `buf[0]` (for error positions).
    offset: usize,
    at: At,
    extent: Extent,
    key_scan: KeyScan,
    list: ObjectList,
    metadata_seen: bool,
    /// Whether an `items` member was seen (a second one is refused).
    items_seen: bool,
    /// The `Status` members seen, as `"key":value` JSON text.
    status_parts: Vec<u8>,
    hooks: ListHooks,
}

impl std::fmt::Debug for ListDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListDecoder")
            .field("at", &self.at)
            .field("offset", &self.offset)
            .field("buffered", &self.buf.len())
            .field("items", &self.list.items.len())
            .finish()
    }
}

impl Default for ListDecoder {
    fn default() -> Self {
        Self::new()
    }
}

/// What one step of the decoder did.
enum Step {
    /// Consumed this many bytes of `buf`.
    Took(usize),
    /// The next token is not complete yet.
    More,
}

impl ListDecoder {
    /// A decoder at the start of a body.
    pub fn new() -> Self {
        ListDecoder {
            buf: Vec::new(),
            offset: 0,
            at: At::Open,
            extent: Extent::default(),
            key_scan: KeyScan::default(),
            list: ObjectList::default(),
            metadata_seen: false,
            items_seen: false,
            status_parts: Vec::new(),
            hooks: ListHooks::default(),
        }
    }

    /// A decoder that calls `hooks` as the page arrives.
    pub fn with_hooks(hooks: ListHooks) -> Self {
        ListDecoder {
            hooks,
            ..Self::new()
        }
    }

    /// Items decoded so far.
    #[cfg(test)]
    pub fn items_so_far(&self) -> usize {
        self.list.items.len()
    }

    /// Decode what `chunk` completes. A syntax error fails the list (its
    /// extent is then unclear); an item that is well-formed but not an object
    /// the cache can hold is left out and recorded in
    /// [`ObjectList::invalid`].
    pub fn feed(&mut self, chunk: Vec<u8>) -> Result<(), Error> {
        if self.buf.is_empty() {
            self.buf = chunk;
        } else {
            self.buf.extend_from_slice(&chunk);
        }
        let mut pos = 0;
        let result = loop {
            match self.step(pos) {
                Ok(Step::Took(n)) => pos += n,
                Ok(Step::More) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.offset += pos;
        self.buf.drain(..pos);
        if self.buf.capacity() > 4 * self.buf.len().max(64 * 1024) {
            self.buf.shrink_to_fit();
        }
        result
    }

    /// The list, once the whole body was fed; an error when it ended early.
    pub fn finish(mut self) -> Result<ObjectList, Error> {
        // A number is the only value whose end is its input's end.
        if matches!(self.at, At::Value(_)) {
            self.buf.push(b' ');
            self.feed(Vec::new())?;
        }
        if self.at != At::End {
            return Err(self.fail("the list ends early", self.buf.len()));
        }
        if self.list.kind == "Status" {
            return Err(self.status_error());
        }
        Ok(self.list)
    }

    /// The body was a `Status`, not a list (a server or proxy answered a
    /// failure with 200): its error, as client-go's `Result.Into` makes one.
    /// Never a list: taking it as an empty one would empty a cache.
    fn status_error(&self) -> Error {
        let mut text = b"{".to_vec();
        text.extend_from_slice(&self.status_parts);
        text.push(b'}');
        match super::Status::from_json(&text) {
            Ok(st) if st.status != "Success" => Error::from_status(st),
            _ => Error::decode("expected a list, the server sent a Status", &text),
        }
    }

    fn fail(&self, what: &str, at: usize) -> Error {
        let from = at.saturating_sub(16);
        let near = self
            .buf
            .get(from..self.buf.len().min(at + 16))
            .unwrap_or_default();
        Error::decode(
            format!(
                "{what} at byte {} (near {:?})",
                self.offset + at,
                String::from_utf8_lossy(near)
            ),
            &self.buf,
        )
    }

    /// One token, member or item starting at `buf[pos..]`.
    ///
    /// Whitespace before an unfinished token is taken, so that it is not
    /// looked at again with the next chunk; the token's own progress is kept
    /// in `extent` and `key_scan`, relative to its start.
    fn step(&mut self, pos: usize) -> Result<Step, Error> {
        let rest = self.buf.get(pos..).unwrap_or_default();
        let Some(ws) = rest.iter().position(|c| !scan::is_ws(c)) else {
            return Ok(if rest.is_empty() {
                Step::More
            } else {
                Step::Took(rest.len())
            });
        };
        let (i, c) = (pos + ws, rest[ws]);
        let took = |n: usize| Ok(Step::Took(ws + n));
        let more = || Ok(if ws > 0 { Step::Took(ws) } else { Step::More });
        match self.at {
            At::End => Err(self.fail("trailing characters", i)),
            At::Open if c == b'{' => {
                self.at = At::FirstKey;
                took(1)
            }
            At::Open => Err(self.fail("a list is not an object", i)),
            At::FirstKey if c == b'}' => {
                self.at = At::End;
                took(1)
            }
            At::FirstKey | At::Key => match self.key(i)? {
                Some((Member::Items, _)) if std::mem::replace(&mut self.items_seen, true) => {
                    // Decoders differ on which of two to take (Go and
                    // JSON.parse: the last), and the first one's items are
                    // already handed on.
                    Err(self.fail("the list has two items members", i))
                }
                Some((member, n)) => {
                    self.at = At::Value(member);
                    took(n)
                }
                None => more(),
            },
            At::Value(Member::Items) if c == b'[' => {
                self.at = At::FirstItem;
                took(1)
            }
            At::Value(Member::Items) if c != b'n' => Err(self.fail("items is not an array", i)),
            At::Value(member) => match self.value_end(i)? {
                Some(n) => {
                    self.member(member, i, n)?;
                    self.at = At::AfterMember;
                    took(n)
                }
                None => more(),
            },
            At::FirstItem if c == b']' => {
                self.at = At::AfterMember;
                took(1)
            }
            At::FirstItem | At::Item if c != b'{' => Err(self.fail("an item is not an object", i)),
            At::FirstItem | At::Item => match self.value_end(i)? {
                Some(n) => {
                    self.item(i, n);
                    self.at = At::AfterItem;
                    took(n)
                }
                None => more(),
            },
            At::AfterItem => match c {
                b',' => {
                    self.at = At::Item;
                    took(1)
                }
                b']' => {
                    self.at = At::AfterMember;
                    took(1)
                }
                _ => Err(self.fail("expected ',' or ']' in items", i)),
            },
            At::AfterMember => match c {
                b',' => {
                    self.at = At::Key;
                    took(1)
                }
                b'}' => {
                    self.at = At::End;
                    took(1)
                }
                _ => Err(self.fail("expected ',' or '}'", i)),
            },
        }
    }

    /// A complete `"key" :` at `i`: which member, and its length with the
    /// colon and the whitespace around it. `None` until it is complete.
    /// (Out of line: a list has a handful of keys, and `step` runs per item.)
    #[inline(never)]
    fn key(&mut self, i: usize) -> Result<Option<(Member, usize)>, Error> {
        let b = self.buf.get(i..).unwrap_or_default();
        if b.first() != Some(&b'"') {
            return Err(self.fail("expected a string key", i));
        }
        let mut ks = self.key_scan;
        let close = match ks.close {
            Some(close) => close,
            None => match string_close(b, ks.next.max(1)) {
                Ok(close) => {
                    let key = b.get(..=close).unwrap_or_default();
                    scan::check_value(key).map_err(|_| self.fail("invalid key", i))?;
                    ks.close = Some(close);
                    close
                }
                Err(next) => {
                    self.key_scan = KeyScan { next, close: None };
                    return Ok(None);
                }
            },
        };
        let from = ks.next.max(close + 1);
        let after = b.get(from..).unwrap_or_default();
        let Some(ws) = after.iter().position(|c| !scan::is_ws(c)) else {
            self.key_scan = KeyScan {
                next: b.len(),
                close: Some(close),
            };
            return Ok(None);
        };
        self.key_scan = KeyScan::default();
        if after[ws] != b':' {
            return Err(self.fail("expected ':'", i + from + ws));
        }
        // A name written with escapes is the name it spells, as Go reads it.
        let raw = b.get(1..close).unwrap_or_default();
        let unescaped = raw
            .contains(&b'\\')
            .then(|| scan::json_string(b.get(..=close).unwrap_or_default()))
            .flatten();
        let name = unescaped.as_ref().map_or(raw, |s| s.as_bytes());
        let member = match name {
            b"apiVersion" => Member::ApiVersion,
            b"kind" => Member::Kind,
            b"metadata" => Member::Metadata,
            b"items" => Member::Items,
            b"status" => Member::StatusPart("status"),
            b"message" => Member::StatusPart("message"),
            b"reason" => Member::StatusPart("reason"),
            b"code" => Member::StatusPart("code"),
            b"details" => Member::StatusPart("details"),
            _ => Member::Other,
        };
        Ok(Some((member, from + ws + 1)))
    }

    /// The length of the value starting at `i`, once it is complete: by
    /// brackets and quotes, resuming where the previous chunk left off.
    fn value_end(&mut self, i: usize) -> Result<Option<usize>, Error> {
        let b = self.buf.get(i..).unwrap_or_default();
        let mut e = self.extent;
        if e.len == 0 {
            match b.first() {
                Some(b'{' | b'[') => {}
                Some(b'"') => {
                    e.in_string = true;
                    e.len = 1;
                }
                _ => return Ok(scalar_end(&mut self.extent, b)),
            }
        } else if e.scalar {
            return Ok(scalar_end(&mut self.extent, b));
        }
        let mut j = e.len;
        let found = loop {
            let Some(&c) = b.get(j) else { break None };
            j += 1;
            if e.in_string {
                if e.escaped {
                    e.escaped = false;
                } else if c == b'\\' {
                    e.escaped = true;
                } else if c == b'"' {
                    e.in_string = false;
                    if e.depth == 0 {
                        break Some(j);
                    }
                } else if let Some(k) = b
                    .get(j..)
                    .and_then(|s| s.iter().position(|&c| c == b'"' || c == b'\\'))
                {
                    j += k;
                } else {
                    j = b.len();
                }
                continue;
            }
            match c {
                b'"' => e.in_string = true,
                b'{' | b'[' => e.depth += 1,
                b'}' | b']' => {
                    e.depth = match e.depth.checked_sub(1) {
                        Some(d) => d,
                        None => return Err(self.fail("unbalanced brackets", i + j - 1)),
                    };
                    if e.depth == 0 {
                        break Some(j);
                    }
                }
                _ => {}
            }
        };
        e.len = j;
        self.extent = if found.is_some() {
            Extent::default()
        } else {
            e
        };
        Ok(found)
    }

    /// A complete member value `buf[i..i + n]`.
    fn member(&mut self, member: Member, i: usize, n: usize) -> Result<(), Error> {
        let v = self.buf.get(i..i + n).unwrap_or_default();
        scan::check_value(v).map_err(|e| self.fail(&format!("invalid value: {e}"), i))?;
        let text = || scan::json_string(v);
        match member {
            Member::ApiVersion => self.list.api_version = text().unwrap_or_default(),
            Member::Kind => self.list.kind = text().unwrap_or_default(),
            Member::Metadata => {
                let meta = ListMeta::read(v)?;
                self.list.resource_version = meta.resource_version;
                self.list.continue_token = Some(meta.continue_token).filter(|c| !c.is_empty());
                self.list.remaining_item_count = meta.remaining_item_count;
                if !std::mem::replace(&mut self.metadata_seen, true) {
                    if let (Some(f), Some(t)) = (&self.hooks.on_continue, &self.list.continue_token)
                    {
                        f(t);
                    }
                }
            }
            Member::StatusPart(key) => {
                if self.status_parts.len() + key.len() + v.len() + 4 < MAX_STATUS_BYTES {
                    if !self.status_parts.is_empty() {
                        self.status_parts.push(b',');
                    }
                    self.status_parts.push(b'"');
                    self.status_parts.extend_from_slice(key.as_bytes());
                    self.status_parts.extend_from_slice(b"\":");
                    self.status_parts.extend_from_slice(v);
                }
            }
            // `"items": null`
            Member::Items | Member::Other => {}
        }
        Ok(())
    }

    /// A complete item `buf[i..i + n]`: kept, or left out and named.
    fn item(&mut self, i: usize, n: usize) {
        let raw = self.buf.get(i..i + n).unwrap_or_default();
        let object = scan::parse_object(raw).and_then(KubeObject::from_span);
        match object.and_then(named) {
            Ok(o) => {
                let kept = match &self.hooks.on_item {
                    Some(f) => f(o),
                    None => Some(o),
                };
                self.list.items.extend(kept);
            }
            Err(e) => self.list.invalid.push((key_hint(raw), e)),
        }
    }
}

/// A list item must have a name: the API server names every object it
/// stores, so one without is not an object of the collection (`{}`, or
/// `"metadata": null`), and nothing could key or look it up.
fn named(o: KubeObject) -> Result<KubeObject, Error> {
    if o.name().is_empty() {
        return Err(Error::decode("a list item without metadata.name", o.raw()));
    }
    Ok(o)
}

/// The length of the number or literal `b` starts with, once its delimiter
/// has arrived; meanwhile `extent` keeps how far it was looked at.
#[cold]
fn scalar_end(extent: &mut Extent, b: &[u8]) -> Option<usize> {
    let from = extent.len;
    let end = b
        .get(from..)
        .unwrap_or_default()
        .iter()
        .position(|c| matches!(c, b',' | b'}' | b']') || scan::is_ws(c));
    *extent = match end {
        Some(_) => Extent::default(),
        None => Extent {
            len: b.len(),
            scalar: true,
            ..Extent::default()
        },
    };
    end.map(|k| from + k)
}

/// The index of the quote that closes a string whose content starts at
/// `from`; when the input ends first, where to go on once there is more
/// (past the end when it ends in a backslash: the escaped byte is skipped).
fn string_close(b: &[u8], from: usize) -> Result<usize, usize> {
    let mut j = from;
    loop {
        match b.get(j) {
            None => return Err(j),
            Some(b'\\') => j += 2,
            Some(b'"') => return Ok(j),
            Some(_) => j += 1,
        }
    }
}

#[cfg(test)]
mod tests;
