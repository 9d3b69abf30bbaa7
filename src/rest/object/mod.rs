//! One Kubernetes object as the client holds it, one file per concern:
//!
//! * this file — the shared, immutable handle ([`KubeObject`]), its
//!   constructors and readers;
//! * `meta.rs` — the parsed metadata ([`ObjectMeta`], [`Labels`]) in one
//!   buffer per object;
//! * `surgery.rs` — where the top-level members sit in the raw bytes, and
//!   the rewrites that cut bytes instead of re-encoding;
//! * `extension.rs` — the per-version slot a layer above fills
//!   ([`Extension`]).

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::{Rc, Weak};

use serde::de::DeserializeOwned;

use super::scan::{self, ObjectSpan, StrSpan};
use super::Error;

mod extension;
mod meta;
mod surgery;

pub use extension::Extension;
pub use meta::{Labels, ObjectMeta, OwnerReference};
use surgery::Spans;

use meta::{interned, parse_meta};

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
    /// Shared between objects (see `meta::interned`).
    api_version: Rc<str>,
    kind: Rc<str>,
    meta: ObjectMeta,
    /// Where `metadata`'s value and the `managedFields` member sit in `raw`,
    /// so the ready-made transforms cut bytes instead of re-encoding.
    spans: Spans,
    /// The slot a layer above fills (see [`Extension`]).
    extension: OnceCell<Rc<dyn Extension>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(e) = self.extension.get() {
            e.released(&self.raw, &self.spans.layout);
        }
    }
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

impl KubeObject {
    fn build(
        raw: Box<[u8]>,
        api_version: Rc<str>,
        kind: Rc<str>,
        meta: ObjectMeta,
        spans: Spans,
    ) -> Self {
        KubeObject(Rc::new(Inner {
            raw,
            api_version,
            kind,
            meta,
            spans,
            extension: OnceCell::new(),
        }))
    }

    /// Build from a span found by the scanner, copying its bytes once.
    pub(crate) fn from_span(mut span: ObjectSpan<'_>) -> Result<Self, Error> {
        let spans = Spans::of(span.raw, &mut span);
        let meta = parse_meta(span.metadata)?;
        let api_version = interned(span.api_version)?;
        let kind = interned(span.kind)?;
        Ok(Self::build(
            Box::from(span.raw),
            api_version,
            kind,
            meta,
            spans,
        ))
    }

    /// Parse an object from its JSON bytes, keeping the bytes (no copy).
    ///
    /// The input must be a JSON object; `apiVersion`, `kind` and `metadata`
    /// are decoded, the rest is validated as JSON and kept as is (whitespace
    /// around the object is dropped).
    pub fn from_json_vec(mut raw: Vec<u8>) -> Result<Self, Error> {
        // Keep only the object: its layout counts from its `{`.
        let is_ws = crate::rest::scan::is_ws;
        raw.truncate(raw.iter().rposition(|c| !is_ws(c)).map_or(0, |i| i + 1));
        let lead = raw.iter().take_while(|c| is_ws(c)).count();
        raw.drain(..lead);
        let (api_version, kind, spans, meta) = {
            let mut span = scan::parse_object(&raw)?;
            (
                interned(span.api_version)?,
                interned(span.kind)?,
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
        self.field_value(path).map(std::borrow::Cow::into_owned)
    }

    /// [`field_text`](KubeObject::field_text), borrowed from the bytes
    /// unless the string has escapes to decode.
    pub fn field_value(&self, path: &str) -> Option<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        let (first, rest) = match path.split_once('.') {
            Some((first, rest)) => (first, Some(rest)),
            None => (path, None),
        };
        // The first step through the top-level layout the scanner recorded:
        // a path into `status` does not scan `spec` (most of a pod's bytes).
        let top = match self.top_level(first) {
            Some(found) => found?,
            None => scan::find_path(&self.0.raw, &[first])?,
        };
        let v = match rest {
            Some(rest) => scan::find_path(top, &rest.split('.').collect::<Vec<_>>())?,
            None => top,
        };
        match v.first() {
            Some(b'"') => {
                let inner = v.get(1..v.len().saturating_sub(1)).unwrap_or_default();
                let span = StrSpan {
                    bytes: inner,
                    escaped: inner.contains(&b'\\'),
                };
                span.to_cow().ok()
            }
            Some(b'n') => None,
            _ => std::str::from_utf8(v).ok().map(Cow::Borrowed),
        }
    }

    /// The value of top-level member `key` by the layout (the last one of a
    /// repeated key, as a JSON parser keeps): `Some(None)` when absent,
    /// `None` when the layout cannot tell (none recorded, or an escaped key).
    fn top_level(&self, key: &str) -> Option<Option<&[u8]>> {
        let layout = &self.0.spans.layout;
        if layout.is_empty() {
            return None;
        }
        let mut found = None;
        for i in 0..layout.len() / 4 {
            let (k, v) = surgery::layout_member(&self.0.raw, layout, i)?;
            if k.contains('\\') {
                return None;
            }
            if k == key {
                found = Some(v.as_bytes());
            }
        }
        Some(found)
    }

    /// Decode into a `serde_json::Value`.
    pub fn to_value(&self) -> Result<serde_json::Value, Error> {
        self.decode()
    }

    /// `metadata.annotations`, parsed on demand from the raw bytes (empty
    /// when absent or not a map of strings).
    pub fn annotations(&self) -> BTreeMap<String, String> {
        let read = |v: &[u8]| {
            let mut out = BTreeMap::new();
            let mut r = scan::Reader::new(v, "annotations");
            r.object(|key, r| {
                let key = String::from_utf8_lossy(key).into_owned();
                out.insert(key, r.string()?);
                Ok(())
            })?;
            Ok::<_, Error>(out)
        };
        scan::find_path(&self.0.raw, &["metadata", "annotations"])
            .and_then(|v| read(v).ok())
            .unwrap_or_default()
    }

    /// Whether two handles point at the same cached version (identity, O(1)).
    pub fn ptr_eq(&self, other: &KubeObject) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// Whether `other` is this very version: the same handle, or the same
    /// `resourceVersion` with the [same content](Self::same_content). A
    /// server that changes an object without a new version (an aggregated
    /// API, a proxy) is believed, as client-go stores what it is sent.
    pub fn same_version(&self, other: &KubeObject) -> bool {
        self.ptr_eq(other)
            || (self.resource_version() == other.resource_version() && self.same_content(other))
    }

    /// Whether `other` has the same members with the same bytes, where a
    /// top-level `apiVersion` or `kind` only one of the two has does not
    /// count: the API server leaves them out of a list's items and sends them
    /// with watch events, so a relisted copy of a watched version would
    /// otherwise differ.
    pub fn same_content(&self, other: &KubeObject) -> bool {
        if self.ptr_eq(other) || self.raw() == other.raw() {
            return true;
        }
        if self.layout().is_empty() || other.layout().is_empty() {
            return false;
        }
        let agree = |a: &str, b: &str| a == b || a.is_empty() || b.is_empty();
        agree(self.api_version(), other.api_version())
            && agree(self.kind(), other.kind())
            && self.untyped_members().eq(other.untyped_members())
    }

    /// Top-level members but `apiVersion` and `kind`, in document order.
    fn untyped_members(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        (0..)
            .map_while(move |i| self.member(i))
            .filter(|(k, _)| *k != "apiVersion" && *k != "kind")
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
            + m.heap_bytes()
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
    fn shared_kinds_stay_right_past_the_few_kept_and_for_long_names() {
        let long = "K".repeat(1000);
        let kinds: Vec<String> = (0..40).map(|i| format!("Kind{i}")).chain([long]).collect();
        // Twice round: the second pass meets names that were kept, replaced
        // and never kept.
        for _ in 0..2 {
            for (i, k) in kinds.iter().enumerate() {
                let raw = format!(
                    r#"{{"apiVersion":"g/v{}","kind":"{k}","metadata":{{"name":"a"}}}}"#,
                    i % 3
                );
                let o = KubeObject::from_json(raw.as_bytes()).expect("valid");
                assert_eq!(o.kind(), k);
                assert_eq!(o.api_version(), format!("g/v{}", i % 3));
            }
        }
        // Escapes are decoded before sharing.
        let o = KubeObject::from_json(br#"{"kind":"P\u006fd","metadata":{}}"#).expect("valid");
        assert_eq!(o.kind(), "Pod");
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
        // Already in order, a key three times: still the last.
        let sorted =
            KubeObject::from_json(br#"{"metadata":{"labels":{"a":"1","a":"2","a":"3","b":"x"}}}"#)
                .expect("valid");
        let labels: Vec<_> = sorted.meta().labels().iter().collect();
        assert_eq!(labels, vec![("a", "3"), ("b", "x")]);
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
        assert_eq!(
            o.field_text("status").as_deref(),
            Some(r#"{"phase":"Running","phase":"Failed"}"#)
        );
        assert!(matches!(
            o.field_value("status.phase"),
            Some(std::borrow::Cow::Borrowed("Failed"))
        ));
        // A repeated top-level member: the last one, as by a full scan; an
        // escaped key is read by the scan.
        let o = KubeObject::from_json(
            br#"{"metadata":{"name":"a"},"status":{"phase":"A"},"st\u0061tus":{"phase":"B"},"spec":{},"status":{"phase":"C"}}"#,
        )
        .expect("valid");
        assert_eq!(o.field_text("status.phase").as_deref(), Some("C"));
        assert_eq!(o.field_text("spec.phase"), None);
        assert_eq!(o.field_text("nothing.here"), None);
    }
}
