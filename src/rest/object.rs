use std::any::Any;
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::{Rc, Weak};

use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::scan::{self, MetaSpan, ObjectSpan, StrSpan};
use super::Error;

/// One Kubernetes object as the client holds it: the raw JSON exactly as the
/// server sent it, plus the metadata the cache needs, parsed once.
///
/// Why not a `serde_json::Value`: turning every event into a tree (and later
/// into a JS object) is the expensive step of a watch; the cache only needs the
/// key, resourceVersion, labels and owner references. Full decoding happens on
/// demand with [`decode`](KubeObject::decode).
///
/// Cloning is a reference-count bump and objects are immutable, so handing a
/// cached object to a handler can never mutate the cache.
#[derive(Clone)]
pub struct KubeObject(Rc<Inner>);

struct Inner {
    raw: Box<[u8]>,
    api_version: Box<str>,
    kind: Box<str>,
    meta: ObjectMeta,
    /// Where `metadata`'s value and the `managedFields` member sit in `raw`,
    /// so the ready-made transforms cut bytes instead of re-encoding.
    spans: Spans,
    attachment: OnceCell<Rc<dyn Attachment>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(a) = self.attachment.get() {
            a.released(&self.raw, &self.spans.layout);
        }
    }
}

/// What a layer above keeps on one object version (the JS layer: the JS
/// object built for it) in [`KubeObject::attachment`].
pub trait Attachment: Any {
    /// Called once, when the version's last handle is dropped and before its
    /// bytes are freed, with its raw JSON and [`layout`](KubeObject::layout):
    /// an attachment that reads the bytes lazily takes what it still needs.
    fn released(&self, _raw: &[u8], _layout: &[u32]) {}
}

/// A handle that does not keep an object version alive (see
/// [`KubeObject::downgrade`]).
#[derive(Clone)]
pub struct WeakKubeObject(Weak<Inner>);

impl WeakKubeObject {
    /// The version, if some [`KubeObject`] handle still holds it.
    pub fn upgrade(&self) -> Option<KubeObject> {
        self.0.upgrade().map(KubeObject)
    }
}

/// Byte ranges inside an object's raw JSON.
#[derive(Clone, Default)]
struct Spans {
    metadata: Option<(usize, usize)>,
    managed_fields: Option<(usize, usize)>,
    /// Top-level members as byte offsets, four per member: key start and
    /// end (inside the quotes), value start and end. Empty if unknown.
    layout: Vec<u32>,
}

impl Spans {
    /// The spans of a scanned object (its layout is moved out of `span`).
    fn of(raw: &[u8], span: &mut ObjectSpan<'_>) -> Spans {
        Spans {
            metadata: span.metadata_raw.and_then(|m| range_in(raw, m)),
            managed_fields: span
                .metadata
                .as_ref()
                .and_then(|m| m.managed_fields)
                .and_then(|m| range_in(raw, m)),
            layout: std::mem::take(&mut span.layout),
        }
    }

    /// The spans after the bytes `from..to` were removed (a cut inside one
    /// member's value: every offset at or past `to` moves back).
    fn after_cut(&self, from: usize, to: usize) -> Spans {
        let removed = to - from;
        let at = |o: usize| if o >= to { o - removed } else { o };
        let to32 = u32::try_from(to).unwrap_or(u32::MAX);
        let removed32 = u32::try_from(removed).unwrap_or(0);
        Spans {
            metadata: self.metadata.map(|(a, b)| (at(a), at(b))),
            managed_fields: None,
            layout: self
                .layout
                .iter()
                .map(|&o| if o >= to32 { o - removed32 } else { o })
                .collect(),
        }
    }
}

/// The range `part` occupies inside `whole`, if it is a sub-slice of it.
fn range_in(whole: &[u8], part: &[u8]) -> Option<(usize, usize)> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some((start, end))
}

/// Top-level member `i` of `raw` by its `layout` (four byte offsets per
/// member): the key as written between its quotes (escapes not decoded) and
/// the value's JSON text. `None` when `i` is out of range or the offsets do
/// not fall on UTF-8 boundaries (never for a layout the scanner recorded).
pub fn layout_member<'a>(raw: &'a [u8], layout: &[u32], i: usize) -> Option<(&'a str, &'a str)> {
    let at = |k: usize| {
        layout
            .get(i.checked_mul(4)?.checked_add(k)?)
            .map(|&o| o as usize)
    };
    let text = |a: usize, b: usize| std::str::from_utf8(raw.get(a..b)?).ok();
    Some((text(at(0)?, at(1)?)?, text(at(2)?, at(3)?)?))
}

/// `raw` without the object member at `start..end`, and one adjacent comma
/// so the result stays valid JSON; also returns the range removed.
fn cut_member(raw: &[u8], start: usize, end: usize) -> (Vec<u8>, usize, usize) {
    let is_ws = |c: &u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t');
    let before = raw.get(..start).unwrap_or_default();
    let after = raw.get(end..).unwrap_or_default();
    let (from, to) = match before.iter().rposition(|c| !is_ws(c)) {
        // A preceding member: drop the comma before this one.
        Some(i) if before.get(i) == Some(&b',') => (i, end),
        // The first member: drop the comma after it, if any.
        _ => match after.iter().position(|c| !is_ws(c)) {
            Some(j) if after.get(j) == Some(&b',') => (start, end + j + 1),
            _ => (start, end),
        },
    };
    let mut out = Vec::with_capacity(raw.len() - (to - from));
    out.extend_from_slice(raw.get(..from).unwrap_or_default());
    out.extend_from_slice(raw.get(to..).unwrap_or_default());
    (out, from, to)
}

/// The parsed part of `metadata` that the cache, selectors and indexes use.
///
/// Annotations are not kept here (they can be large, e.g. the last-applied
/// configuration); read them on demand with [`KubeObject::annotations`].
///
/// The strings live in one buffer addressed by ranges: an object's metadata
/// is one allocation, not one per field, which matters on a busy watch
/// where every event builds one and frees the version it replaces.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ObjectMeta {
    text: Box<str>,
    name: Span,
    generate_name: Option<Span>,
    namespace: Option<Span>,
    uid: Span,
    resource_version: Span,
    generation: Option<i64>,
    creation_timestamp: Option<Span>,
    deletion_timestamp: Option<Span>,
    labels: Labels,
    owner_references: Box<[OwnerReference]>,
}

/// A range of a text buffer.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Span(u32, u32);

impl Span {
    fn of(text: &str, s: Span) -> &str {
        text.get(s.0 as usize..s.1 as usize).unwrap_or_default()
    }
}

/// Appends strings to one buffer, handing out their ranges.
#[derive(Default)]
struct TextBuilder(String);

impl TextBuilder {
    fn push(&mut self, s: &str) -> Span {
        let start = self.0.len();
        self.0.push_str(s);
        // Metadata over 4 GiB cannot be decoded in the first place.
        let at = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Span(at(start), at(self.0.len()))
    }
}

/// Labels as a compact sorted list (cheaper than a map for the handful of
/// labels an object carries, and ordered for canonical output): keys and
/// values in one buffer, `(key start, key end = value start, value end)`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Labels {
    text: Box<str>,
    pairs: Box<[(u32, u32, u32)]>,
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl fmt::Debug for ObjectMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectMeta")
            .field("name", &self.name())
            .field("generate_name", &self.generate_name())
            .field("namespace", &self.namespace())
            .field("uid", &self.uid())
            .field("resource_version", &self.resource_version())
            .field("generation", &self.generation)
            .field("creation_timestamp", &self.creation_timestamp())
            .field("deletion_timestamp", &self.deletion_timestamp())
            .field("labels", &self.labels)
            .field("owner_references", &self.owner_references)
            .finish()
    }
}

/// A reference from an object to its owner (`metadata.ownerReferences[]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// The owner's `apiVersion`.
    #[serde(default)]
    pub api_version: String,
    /// The owner's `kind`.
    #[serde(default)]
    pub kind: String,
    /// The owner's name.
    #[serde(default)]
    pub name: String,
    /// The owner's uid.
    #[serde(default)]
    pub uid: String,
    /// Whether the owner is the managing controller.
    #[serde(default)]
    pub controller: Option<bool>,
    /// Whether deletion of the owner is blocked until this object is gone.
    #[serde(default)]
    pub block_owner_deletion: Option<bool>,
}

impl Labels {
    /// Build from any pairs; later duplicates win, the result is sorted by key.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let map: BTreeMap<String, String> = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Self::from_sorted(map.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// Build from pairs already sorted by key, without duplicates.
    fn from_sorted<'a>(pairs: impl ExactSizeIterator<Item = (&'a str, &'a str)> + Clone) -> Self {
        let bytes: usize = pairs.clone().map(|(k, v)| k.len() + v.len()).sum();
        let mut text = TextBuilder(String::with_capacity(bytes));
        let mut out = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let key = text.push(k);
            let value = text.push(v);
            out.push((key.0, key.1, value.1));
        }
        Labels {
            text: text.0.into_boxed_str(),
            pairs: out.into_boxed_slice(),
        }
    }

    fn pair(&self, p: &(u32, u32, u32)) -> (&str, &str) {
        (
            Span::of(&self.text, Span(p.0, p.1)),
            Span::of(&self.text, Span(p.1, p.2)),
        )
    }

    /// The value of label `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        let i = self
            .pairs
            .binary_search_by(|p| self.pair(p).0.cmp(key))
            .ok()?;
        self.pairs.get(i).map(|p| self.pair(p).1)
    }

    /// Whether label `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Labels in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|p| self.pair(p))
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Heap bytes held.
    fn heap_bytes(&self) -> usize {
        self.text.len() + self.pairs.len() * std::mem::size_of::<(u32, u32, u32)>()
    }
}

impl ObjectMeta {
    /// `metadata.name` (empty when absent).
    pub fn name(&self) -> &str {
        Span::of(&self.text, self.name)
    }
    /// `metadata.generateName`.
    pub fn generate_name(&self) -> Option<&str> {
        self.generate_name.map(|s| Span::of(&self.text, s))
    }
    /// `metadata.namespace`; `None` for cluster-scoped objects (an empty string
    /// from the server is treated as absent, as the API server does).
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.map(|s| Span::of(&self.text, s))
    }
    /// `metadata.uid` (empty when absent).
    pub fn uid(&self) -> &str {
        Span::of(&self.text, self.uid)
    }
    /// `metadata.resourceVersion` (empty when absent). Opaque: compare only for
    /// equality, never order.
    pub fn resource_version(&self) -> &str {
        Span::of(&self.text, self.resource_version)
    }
    /// `metadata.generation`.
    pub fn generation(&self) -> Option<i64> {
        self.generation
    }
    /// `metadata.creationTimestamp` as sent (RFC 3339).
    pub fn creation_timestamp(&self) -> Option<&str> {
        self.creation_timestamp.map(|s| Span::of(&self.text, s))
    }
    /// `metadata.deletionTimestamp` as sent (RFC 3339).
    pub fn deletion_timestamp(&self) -> Option<&str> {
        self.deletion_timestamp.map(|s| Span::of(&self.text, s))
    }
    /// `metadata.labels`.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }
    /// `metadata.ownerReferences`.
    pub fn owner_references(&self) -> &[OwnerReference] {
        &self.owner_references
    }
}

/// Parse the metadata value (`{…}` or `null`) found by the scanner: the
/// fields the cache needs are taken from the scan, annotations and
/// managedFields are skipped, and only `ownerReferences` goes through serde.
fn parse_meta(m: Option<MetaSpan<'_>>) -> Result<ObjectMeta, Error> {
    let Some(m) = m else {
        return Ok(ObjectMeta::default());
    };
    let generation = match m.generation {
        None => None,
        Some(g) => Some(
            std::str::from_utf8(g)
                .ok()
                .and_then(|g| g.parse::<i64>().ok())
                .ok_or_else(|| Error::decode("metadata.generation is not an integer", g))?,
        ),
    };
    let fields = [
        m.name,
        m.generate_name,
        m.namespace,
        m.uid,
        m.resource_version,
        m.creation_timestamp,
        m.deletion_timestamp,
    ];
    let bytes = fields.iter().flatten().map(|s| s.bytes.len()).sum();
    let mut text = TextBuilder(String::with_capacity(bytes));
    let mut push = |s: Option<StrSpan<'_>>| -> Result<Option<Span>, Error> {
        match s {
            Some(s) => Ok(Some(text.push(&s.to_cow()?))),
            None => Ok(None),
        }
    };
    // Absent and empty are the same for the optional fields, as on the server.
    let non_empty = |s: Option<Span>| s.filter(|s| s.1 > s.0);
    let name = push(m.name)?.unwrap_or_default();
    let generate_name = non_empty(push(m.generate_name)?);
    let namespace = non_empty(push(m.namespace)?);
    let uid = push(m.uid)?.unwrap_or_default();
    let resource_version = push(m.resource_version)?.unwrap_or_default();
    let creation_timestamp = non_empty(push(m.creation_timestamp)?);
    let deletion_timestamp = non_empty(push(m.deletion_timestamp)?);

    let mut labels = Vec::with_capacity(m.labels.len());
    for (k, v) in m.labels {
        labels.push((k.to_cow()?, v.to_cow()?));
    }
    // Sorted for binary search; of duplicate keys the last one wins, as in
    // a JSON decoder (reverse, stable sort, keep the first of each key).
    labels.reverse();
    labels.sort_by(|a, b| a.0.cmp(&b.0));
    labels.dedup_by(|later, earlier| later.0 == earlier.0);
    let labels = Labels::from_sorted(labels.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));

    let mut owner_references = Vec::with_capacity(m.owner_references.len());
    for r in m.owner_references {
        let text = |s: Option<StrSpan<'_>>| -> Result<String, Error> {
            s.map_or_else(|| Ok(String::new()), |s| s.to_cow().map(String::from))
        };
        owner_references.push(OwnerReference {
            api_version: text(r.api_version)?,
            kind: text(r.kind)?,
            name: text(r.name)?,
            uid: text(r.uid)?,
            controller: r.controller,
            block_owner_deletion: r.block_owner_deletion,
        });
    }
    Ok(ObjectMeta {
        text: text.0.into_boxed_str(),
        name,
        generate_name,
        namespace,
        uid,
        resource_version,
        generation,
        creation_timestamp,
        deletion_timestamp,
        labels,
        owner_references: owner_references.into_boxed_slice(),
    })
}

fn str_or_empty(s: Option<StrSpan<'_>>) -> Result<Box<str>, Error> {
    s.map_or_else(|| Ok(Box::default()), StrSpan::to_str)
}

impl KubeObject {
    fn build(
        raw: Box<[u8]>,
        api_version: Box<str>,
        kind: Box<str>,
        meta: ObjectMeta,
        spans: Spans,
    ) -> Self {
        KubeObject(Rc::new(Inner {
            raw,
            api_version,
            kind,
            meta,
            spans,
            attachment: OnceCell::new(),
        }))
    }

    /// Build from a span found by the scanner, copying its bytes once.
    pub(crate) fn from_span(mut span: ObjectSpan<'_>) -> Result<Self, Error> {
        let spans = Spans::of(span.raw, &mut span);
        let meta = parse_meta(span.metadata)?;
        let api_version = str_or_empty(span.api_version)?;
        let kind = str_or_empty(span.kind)?;
        Ok(Self::build(
            Box::from(span.raw),
            api_version,
            kind,
            meta,
            spans,
        ))
    }

    /// This object without `metadata.managedFields`, cut out of the bytes
    /// (no re-encoding; the parsed metadata is reused). The object itself
    /// when it has none.
    pub fn without_managed_fields(self) -> KubeObject {
        let Some((start, end)) = self.0.spans.managed_fields else {
            return self;
        };
        let (raw, from, to) = cut_member(&self.0.raw, start, end);
        let raw = raw.into_boxed_slice();
        let spans = self.0.spans.after_cut(from, to);
        self.with_bytes(raw, spans)
    }

    /// The same object with new bytes (a rewrite that leaves the parsed
    /// metadata valid): moves the metadata out when this is the only owner.
    fn with_bytes(self, raw: Box<[u8]>, spans: Spans) -> KubeObject {
        match Rc::try_unwrap(self.0) {
            Ok(mut inner) => {
                // Taken, not moved: `Inner` has a `Drop` (which tells any attachment).
                let api_version = std::mem::take(&mut inner.api_version);
                let kind = std::mem::take(&mut inner.kind);
                let meta = std::mem::take(&mut inner.meta);
                Self::build(raw, api_version, kind, meta, spans)
            }
            Err(shared) => Self::build(
                raw,
                shared.api_version.clone(),
                shared.kind.clone(),
                shared.meta.clone(),
                spans,
            ),
        }
    }

    /// Only `apiVersion`, `kind` and `metadata` (without managedFields), for
    /// metadata-only caches; built from the bytes, not re-encoded.
    pub fn metadata_only(self) -> KubeObject {
        let obj = self.without_managed_fields();
        let meta_bytes = obj
            .0
            .spans
            .metadata
            .and_then(|(a, b)| obj.0.raw.get(a..b))
            .unwrap_or(b"{}");
        let mut raw = Vec::with_capacity(meta_bytes.len() + 64);
        let mut layout = Vec::with_capacity(12);
        // Appends `"name":value` and records its offsets.
        let mut member = |raw: &mut Vec<u8>, name: &str, value: &[u8]| {
            if raw.len() > 1 {
                raw.push(b',');
            }
            raw.push(b'"');
            let ks = raw.len();
            raw.extend_from_slice(name.as_bytes());
            let ke = raw.len();
            raw.extend_from_slice(b"\":");
            let vs = raw.len();
            raw.extend_from_slice(value);
            for o in [ks, ke, vs, raw.len()] {
                layout.push(u32::try_from(o).unwrap_or(u32::MAX));
            }
            (vs, raw.len())
        };
        raw.push(b'{');
        for (name, value) in [("apiVersion", obj.api_version()), ("kind", obj.kind())] {
            if !value.is_empty() {
                // Serializing a str cannot fail; an empty value is the fallback.
                let quoted = serde_json::to_string(value).unwrap_or_default();
                member(&mut raw, name, quoted.as_bytes());
            }
        }
        let metadata = member(&mut raw, "metadata", meta_bytes);
        raw.push(b'}');
        let spans = Spans {
            metadata: Some(metadata),
            managed_fields: None,
            layout,
        };
        obj.with_bytes(raw.into_boxed_slice(), spans)
    }

    /// Parse an object from its JSON bytes, keeping the bytes (no copy).
    ///
    /// The input must be a JSON object; `apiVersion`, `kind` and `metadata`
    /// are decoded, the rest is validated as JSON and kept as is (whitespace
    /// around the object is dropped).
    pub fn from_json_vec(mut raw: Vec<u8>) -> Result<Self, Error> {
        // Keep only the object: its layout counts from its `{`.
        let is_ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
        raw.truncate(raw.iter().rposition(|c| !is_ws(c)).map_or(0, |i| i + 1));
        let lead = raw.iter().take_while(|c| is_ws(c)).count();
        raw.drain(..lead);
        let (api_version, kind, spans, meta) = {
            let mut span = scan::parse_object(&raw)?;
            (
                str_or_empty(span.api_version)?,
                str_or_empty(span.kind)?,
                Spans::of(&raw, &mut span),
                parse_meta(span.metadata)?,
            )
        };
        Ok(Self::build(
            raw.into_boxed_slice(),
            api_version,
            kind,
            meta,
            spans,
        ))
    }

    /// Parse an object from borrowed JSON bytes (copies them once).
    pub fn from_json(raw: &[u8]) -> Result<Self, Error> {
        Self::from_json_vec(raw.to_vec())
    }

    /// Build from a `serde_json::Value` (tests, and objects created locally).
    pub fn from_value(value: &serde_json::Value) -> Result<Self, Error> {
        match serde_json::to_vec(value) {
            Ok(raw) => Self::from_json_vec(raw),
            Err(e) => Err(Error::decode(format!("unserializable value: {e}"), b"")),
        }
    }

    /// The raw JSON bytes of the object exactly as received (from its `{`
    /// to its `}`).
    pub fn raw(&self) -> &[u8] {
        &self.0.raw
    }

    /// The raw JSON as text (the bytes were validated as JSON, hence UTF-8, on
    /// construction; this never fails in practice and falls back to lossless
    /// empty output rather than panicking).
    pub fn raw_str(&self) -> &str {
        std::str::from_utf8(&self.0.raw).unwrap_or("")
    }

    /// Where each top-level member sits in [`raw`](Self::raw): byte offsets,
    /// four per member (key start and end inside the quotes, value start and
    /// end), in document order. Empty if unknown. The JS layer uses it to
    /// parse one member at a time, on first access.
    pub fn layout(&self) -> &[u32] {
        &self.0.spans.layout
    }

    /// Top-level member `i` (in [`layout`](Self::layout) order): its key as
    /// written and its value's JSON text (see [`layout_member`]).
    pub fn member(&self, i: usize) -> Option<(&str, &str)> {
        layout_member(&self.0.raw, &self.0.spans.layout, i)
    }

    /// `apiVersion` (empty when absent).
    pub fn api_version(&self) -> &str {
        &self.0.api_version
    }

    /// `kind` (empty when absent).
    pub fn kind(&self) -> &str {
        &self.0.kind
    }

    /// The parsed metadata.
    pub fn meta(&self) -> &ObjectMeta {
        &self.0.meta
    }

    /// Shorthand for `meta().name()`.
    pub fn name(&self) -> &str {
        self.0.meta.name()
    }

    /// Shorthand for `meta().namespace()`.
    pub fn namespace(&self) -> Option<&str> {
        self.0.meta.namespace()
    }

    /// Shorthand for `meta().resource_version()`.
    pub fn resource_version(&self) -> &str {
        self.0.meta.resource_version()
    }

    /// Decode the whole object into any serde type (e.g. k8s-openapi's `Pod`).
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_slice(&self.0.raw)
            .map_err(|e| Error::decode(format!("decode: {e}"), &self.0.raw))
    }

    /// The value at a dotted field path (`status.phase`, `spec.nodeName`) as
    /// text, read from the bytes without decoding the object: a string's
    /// contents, a number's or boolean's literal, an object's or array's
    /// JSON; `None` when absent or `null`. What field selectors compare.
    pub fn field_text(&self, path: &str) -> Option<String> {
        let segments: Vec<&str> = path.split('.').collect();
        let v = scan::find_path(&self.0.raw, &segments)?;
        match v.first() {
            Some(b'"') => {
                let inner = v.get(1..v.len().saturating_sub(1)).unwrap_or_default();
                let span = StrSpan {
                    bytes: inner,
                    escaped: inner.contains(&b'\\'),
                };
                span.to_str().ok().map(String::from)
            }
            Some(b'n') => None,
            _ => std::str::from_utf8(v).ok().map(str::to_owned),
        }
    }

    /// Decode into a `serde_json::Value`.
    pub fn to_value(&self) -> Result<serde_json::Value, Error> {
        self.decode()
    }

    /// `metadata.annotations`, parsed on demand from the raw bytes.
    pub fn annotations(&self) -> BTreeMap<String, String> {
        #[derive(Deserialize)]
        struct H {
            #[serde(default)]
            metadata: Option<M>,
        }
        #[derive(Deserialize)]
        struct M {
            #[serde(default)]
            annotations: Option<BTreeMap<String, String>>,
        }
        serde_json::from_slice::<H>(&self.0.raw)
            .ok()
            .and_then(|h| h.metadata)
            .and_then(|m| m.annotations)
            .unwrap_or_default()
    }

    /// Whether two handles point at the same cached version (identity, O(1)).
    pub fn ptr_eq(&self, other: &KubeObject) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// The per-version attachment slot, initialized on first use: the JS layer
    /// keeps the one materialized JS object per object version here, so repeated
    /// reads return the same JS object. Returns `None` if the slot already holds
    /// a value of another type.
    pub fn attachment<T: Attachment>(&self, init: impl FnOnce() -> T) -> Option<Rc<T>> {
        let any: Rc<dyn Any> = self
            .0
            .attachment
            .get_or_init(|| Rc::new(init()) as Rc<dyn Attachment>)
            .clone();
        any.downcast::<T>().ok()
    }

    /// A handle that does not keep this version alive.
    pub fn downgrade(&self) -> WeakKubeObject {
        WeakKubeObject(Rc::downgrade(&self.0))
    }

    /// Approximate heap bytes held by this object (raw JSON plus parsed
    /// metadata), for memory reporting.
    pub fn approx_heap_bytes(&self) -> usize {
        let m = &self.0.meta;
        std::mem::size_of::<Inner>()
            + self.0.raw.len()
            + self.0.spans.layout.len() * 4
            + self.0.api_version.len()
            + self.0.kind.len()
            + m.text.len()
            + m.labels.heap_bytes()
            + m.owner_references.len() * std::mem::size_of::<OwnerReference>()
            + m.owner_references
                .iter()
                .map(|r| r.api_version.len() + r.kind.len() + r.name.len() + r.uid.len())
                .sum::<usize>()
    }
}

impl PartialEq for KubeObject {
    /// Objects are equal when their JSON bytes are identical.
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other) || self.0.raw == other.0.raw
    }
}

impl Eq for KubeObject {}

impl fmt::Debug for KubeObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeObject")
            .field("kind", &self.kind())
            .field("namespace", &self.namespace())
            .field("name", &self.name())
            .field("resourceVersion", &self.resource_version())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_metadata_and_keeps_raw_bytes() {
        let raw = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p\u00e9","namespace":"ns","uid":"u1","resourceVersion":"42","generation":3,"labels":{"b":"2","a":"1"},"annotations":{"x":"y"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u0","controller":true}]},"spec":{"containers":[]}}"#;
        let o = KubeObject::from_json(raw).expect("valid");
        assert_eq!(o.raw(), raw);
        assert_eq!(o.kind(), "Pod");
        assert_eq!(o.name(), "pé");
        assert_eq!(o.namespace(), Some("ns"));
        assert_eq!(o.resource_version(), "42");
        assert_eq!(o.meta().generation(), Some(3));
        let labels: Vec<_> = o.meta().labels().iter().collect();
        assert_eq!(labels, vec![("a", "1"), ("b", "2")]);
        assert_eq!(o.meta().owner_references()[0].controller, Some(true));
        assert_eq!(o.annotations().get("x").map(String::as_str), Some("y"));
        let v: serde_json::Value = o.decode().expect("decode");
        assert_eq!(v["spec"], json!({"containers": []}));
    }

    #[test]
    fn bad_input_is_a_typed_error_not_a_panic() {
        for bad in [
            &b"not json"[..],
            b"[1,2]",
            b"{\"metadata\":5}",
            b"{\"metadata\":{\"name\":1}}",
            b"\xff\xfe",
            b"",
        ] {
            match KubeObject::from_json(bad) {
                Err(Error::Decode { .. }) => {}
                other => panic!("expected decode error for {bad:?}, got {other:?}"),
            }
        }
    }

    #[test]
    fn empty_namespace_is_cluster_scoped_and_attachment_is_per_version() {
        let o = KubeObject::from_value(&json!({"metadata": {"name": "n", "namespace": ""}}))
            .expect("valid");
        assert_eq!(o.namespace(), None);
        let a = o.attachment(|| Num(5)).expect("Num");
        let b = o.clone().attachment(|| Num(6)).expect("Num");
        assert!(Rc::ptr_eq(&a, &b));
        assert_eq!(b.0, 5);
        assert!(o.attachment(|| Other).is_none());
    }

    struct Num(u32);
    impl Attachment for Num {}
    struct Other;
    impl Attachment for Other {}

    /// Records the bytes it is released with.
    struct Spy(Rc<std::cell::RefCell<Vec<Vec<u8>>>>);
    impl Attachment for Spy {
        fn released(&self, raw: &[u8], layout: &[u32]) {
            assert_eq!(layout.len(), 8, "two members");
            self.0.borrow_mut().push(raw.to_vec());
        }
    }

    #[test]
    fn an_attachment_is_told_once_when_the_last_handle_goes_and_weak_handles_do_not_keep_it() {
        let raw = br#"{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"x":1}}"#;
        let o = KubeObject::from_json(raw).expect("valid");
        let log = Rc::new(std::cell::RefCell::new(Vec::new()));
        let spy = Spy(log.clone());
        assert!(o.attachment(|| spy).is_some());
        let weak = o.downgrade();
        let other = o.clone();
        drop(o);
        assert!(log.borrow().is_empty(), "a handle is left");
        assert!(weak.upgrade().is_some_and(|u| u.ptr_eq(&other)));
        drop(other);
        assert_eq!(
            *log.borrow(),
            vec![raw.to_vec()],
            "told once, with the bytes"
        );
        assert!(weak.upgrade().is_none());
        // Without an attachment nothing is called and nothing fails.
        drop(KubeObject::from_json(raw).expect("valid"));
    }

    #[test]
    fn metadata_scan_edge_cases() {
        // Duplicate label keys: the last wins; escapes are decoded; nulls are absent.
        let o = KubeObject::from_json(
            br#"{"metadata":{"name":"a\"b","labels":{"k":"1","j":"x","k":"2"},"namespace":null,"generation":null,"annotations":{"a":{"nested":[1,2,{"x":"}"}]}},"managedFields":[{"f":{}}],"ownerReferences":null,"finalizers":["x"]},"kind":"Pod"}"#,
        )
        .expect("valid");
        assert_eq!(o.name(), "a\"b");
        assert_eq!(o.namespace(), None);
        assert_eq!(o.meta().generation(), None);
        let labels: Vec<_> = o.meta().labels().iter().collect();
        assert_eq!(labels, vec![("j", "x"), ("k", "2")]);
        assert!(o.meta().owner_references().is_empty());
        assert_eq!(o.kind(), "Pod");
        for bad in [
            &br#"{"metadata":{"generation":1.5}}"#[..],
            br#"{"metadata":{"labels":{"a":1}}}"#,
            br#"{"metadata":{"ownerReferences":[{"controller":"yes"}]}}"#,
            br#"{"metadata":{"uid":["x"]}}"#,
            br#"{"metadata":[]}"#,
            br#"{"metadata":{"name":"\u00zz"}}"#,
        ] {
            assert!(
                matches!(KubeObject::from_json(bad), Err(Error::Decode { .. })),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(KubeObject::from_json(br#"{"metadata":null}"#).is_ok());
    }

    /// The expected JSON after dropping managedFields, by re-encoding.
    fn reencoded_without_mf(raw: &str) -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(raw).expect("json");
        if let Some(m) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            m.remove("managedFields");
        }
        v
    }

    /// The layout names every top-level member, and each value range parses
    /// to that member's value.
    fn assert_layout(o: &KubeObject) {
        let v: serde_json::Value = serde_json::from_slice(o.raw()).expect("json");
        let map = v.as_object().expect("object");
        let l = o.layout();
        assert_eq!(l.len(), map.len() * 4, "{}", o.raw_str());
        for m in l.chunks(4) {
            let r = |a: u32, b: u32| o.raw().get(a as usize..b as usize).expect("in range");
            let key = std::str::from_utf8(r(m[0], m[1])).expect("utf8");
            let val: serde_json::Value = serde_json::from_slice(r(m[2], m[3])).expect("value");
            assert_eq!(Some(&val), map.get(key), "{key} in {}", o.raw_str());
        }
    }

    #[test]
    fn managed_fields_are_cut_from_the_bytes_wherever_they_sit() {
        for raw in [
            // first, middle, last and only member; odd whitespace; a string
            // holding braces and escaped quotes inside managedFields.
            r#"{"kind":"Pod","metadata":{"managedFields":[{"f":"}\"{"}],"name":"a","namespace":"n","resourceVersion":"3"},"spec":{}}"#,
            r#"{"metadata":{"name":"a" , "managedFields" : [ {"x":1} ] , "labels":{"k":"v"}},"status":{"managedFields":1}}"#,
            r#"{"metadata":{"name":"a","labels":{"k":"v"},"managedFields":null}}"#,
            r#"{"metadata":{ "managedFields":[] }}"#,
            r#"{"metadata":{"name":"a"}}"#,
            r#"{"metadata":null}"#,
        ] {
            let o = KubeObject::from_json(raw.as_bytes()).expect("valid");
            assert_layout(&o);
            let before = o.meta().clone();
            let stripped = o.clone().without_managed_fields();
            assert_layout(&stripped);
            let v: serde_json::Value = serde_json::from_slice(stripped.raw())
                .unwrap_or_else(|e| panic!("{raw}: {e}: {}", stripped.raw_str()));
            assert_eq!(v, reencoded_without_mf(raw), "{raw}");
            assert_eq!(stripped.meta(), &before, "{raw}");
            // The stripped bytes scan to the same metadata again.
            let again = KubeObject::from_json(stripped.raw()).expect("rescan");
            assert_eq!(again.meta(), &before, "{raw}");
            // The original is untouched (it was shared).
            assert_eq!(o.raw_str(), raw);
            // Cutting twice is a no-op.
            let twice = stripped.clone().without_managed_fields();
            assert_eq!(twice.raw(), stripped.raw());

            let meta_only = o.clone().metadata_only();
            let mv: serde_json::Value = serde_json::from_slice(meta_only.raw())
                .unwrap_or_else(|e| panic!("{raw}: {e}: {}", meta_only.raw_str()));
            let full = reencoded_without_mf(raw);
            let mut expect = serde_json::Map::new();
            for k in ["apiVersion", "kind"] {
                if let Some(x) = full.get(k) {
                    expect.insert(k.into(), x.clone());
                }
            }
            expect.insert(
                "metadata".into(),
                full.get("metadata")
                    .cloned()
                    .unwrap_or(serde_json::json!({})),
            );
            assert_eq!(mv, serde_json::Value::Object(expect), "{raw}");
            assert_layout(&meta_only);
            assert_eq!(meta_only.meta(), &before);
        }
    }

    #[test]
    fn metadata_only_escapes_kind_and_api_version() {
        let raw = r#"{"apiVersion":"x/v\"1","kind":"K\\ind","metadata":{"name":"a"},"spec":{"big":[1,2,3]}}"#;
        let o = KubeObject::from_json(raw.as_bytes())
            .expect("valid")
            .metadata_only();
        let v: serde_json::Value = serde_json::from_slice(o.raw()).expect("json");
        assert_eq!(
            v,
            serde_json::json!({"apiVersion":"x/v\"1","kind":"K\\ind","metadata":{"name":"a"}})
        );
    }

    #[test]
    fn whitespace_around_a_body_is_dropped_so_the_layout_fits_the_bytes() {
        let o = KubeObject::from_json(b" \r\n\t{\"a\" : 1 ,\"metadata\":{\"name\":\"n\"}} \n")
            .expect("valid");
        assert_eq!(o.raw_str(), "{\"a\" : 1 ,\"metadata\":{\"name\":\"n\"}}");
        assert_eq!(o.member(0), Some(("a", "1")));
        assert_eq!(o.member(1), Some(("metadata", "{\"name\":\"n\"}")));
        let meta_only = o.metadata_only();
        assert_eq!(meta_only.raw_str(), "{\"metadata\":{\"name\":\"n\"}}");
        assert!(KubeObject::from_json(b" \n ").is_err());
    }

    #[test]
    fn members_by_layout_with_multibyte_text() {
        let raw = r#"{"métadata":"😀","metadata":{"name":"ü"},"spec":{"x":"日本"},"k\"q":1}"#;
        let o = KubeObject::from_json(raw.as_bytes()).expect("valid");
        let got: Vec<(&str, &str)> = (0..).map_while(|i| o.member(i)).collect();
        assert_eq!(
            got,
            vec![
                ("métadata", r#""😀""#),
                ("metadata", r#"{"name":"ü"}"#),
                ("spec", r#"{"x":"日本"}"#),
                (r#"k\"q"#, "1"),
            ]
        );
        assert_eq!(o.member(4), None);
        assert_eq!(o.member(usize::MAX), None);
        // A layout that does not fit the bytes is refused, not a panic.
        assert_eq!(layout_member(b"{}", &[0, 1, 1, 9], 0), None);
        assert_eq!(layout_member("é".as_bytes(), &[0, 1, 0, 2], 0), None);
    }

    #[test]
    fn field_text_reads_paths_from_the_bytes() {
        let o = KubeObject::from_json(
            br#"{"metadata":{"name":"a"},"spec":{"nodeName":"n\u00e9-1","replicas":3,"paused":false,"x":null,"obj":{"k":[1, 2]}},"status":{"phase":"Running","phase":"Failed"}}"#,
        )
        .expect("valid");
        assert_eq!(o.field_text("spec.nodeName").as_deref(), Some("né-1"));
        assert_eq!(o.field_text("spec.replicas").as_deref(), Some("3"));
        assert_eq!(o.field_text("spec.paused").as_deref(), Some("false"));
        assert_eq!(o.field_text("spec.x"), None, "null is absent");
        assert_eq!(o.field_text("spec.obj").as_deref(), Some(r#"{"k":[1, 2]}"#));
        assert_eq!(
            o.field_text("status.phase").as_deref(),
            Some("Failed"),
            "the last duplicate wins"
        );
        assert_eq!(o.field_text("spec.missing"), None);
        assert_eq!(
            o.field_text("spec.replicas.deeper"),
            None,
            "a step into a number"
        );
        assert_eq!(o.field_text("metadata.name").as_deref(), Some("a"));
        assert_eq!(o.field_text(""), None);
    }
}
