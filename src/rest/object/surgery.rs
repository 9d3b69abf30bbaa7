//! Byte-level JSON surgery on an object's raw text: where its members sit,
//! and rewrites that cut bytes instead of re-encoding (dropping
//! `managedFields`, keeping only the metadata).

use std::rc::Rc;

use super::super::scan::{self, ObjectSpan};
use super::KubeObject;

/// Byte ranges inside an object's raw JSON.
#[derive(Clone, Default)]
pub(super) struct Spans {
    pub(super) metadata: Option<(usize, usize)>,
    pub(super) managed_fields: Option<(usize, usize)>,
    /// Top-level members as byte offsets, four per member: key start and
    /// end (inside the quotes), value start and end. Empty if unknown.
    pub(super) layout: Vec<u32>,
}

impl Spans {
    /// The spans of a scanned object (its layout is moved out of `span`).
    pub(super) fn of(raw: &[u8], span: &mut ObjectSpan<'_>) -> Spans {
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
pub(crate) fn layout_member<'a>(
    raw: &'a [u8],
    layout: &[u32],
    i: usize,
) -> Option<(&'a str, &'a str)> {
    let at = |k: usize| {
        layout
            .get(i.checked_mul(4)?.checked_add(k)?)
            .map(|&o| o as usize)
    };
    let text = |a: usize, b: usize| std::str::from_utf8(raw.get(a..b)?).ok();
    Some((text(at(0)?, at(1)?)?, text(at(2)?, at(3)?)?))
}

/// The range to remove from `raw` to drop the object member at
/// `start..end` and one adjacent comma, so the rest stays valid JSON;
/// always within `raw`.
fn cut_range(raw: &[u8], start: usize, end: usize) -> (usize, usize) {
    let is_ws = crate::rest::scan::is_ws;
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
    let to = to.min(raw.len());
    (from.min(to), to)
}

impl KubeObject {
    /// Where each top-level member sits in [`raw`](Self::raw): byte offsets,
    /// four per member (key start and end inside the quotes, value start and
    /// end), in document order. Empty if unknown. A reader can take
    /// one member at a time with [`member`](Self::member).
    pub fn layout(&self) -> &[u32] {
        &self.0.spans.layout
    }

    /// Top-level member `i` (in [`layout`](Self::layout) order): its key as
    /// written between its quotes (escapes not decoded) and its value's JSON
    /// text; `None` past the last member.
    pub fn member(&self, i: usize) -> Option<(&str, &str)> {
        layout_member(&self.0.raw, &self.0.spans.layout, i)
    }

    /// This object without `metadata.managedFields`, cut out of the bytes
    /// (no re-encoding; the parsed metadata is reused). The object itself
    /// when it has none.
    #[must_use]
    pub fn without_managed_fields(mut self) -> KubeObject {
        let Some((start, end)) = self.0.spans.managed_fields else {
            return self;
        };
        let (from, to) = cut_range(&self.0.raw, start, end);
        let spans = self.0.spans.after_cut(from, to);
        // In place when this is the only owner and nothing has been built
        // from its bytes yet (a freshly decoded object, the usual case): the
        // tail moves down, nothing is allocated.
        if let Some(inner) = Rc::get_mut(&mut self.0).filter(|i| i.extension.get().is_none()) {
            let mut raw = std::mem::take(&mut inner.raw).into_vec();
            raw.drain(from..to);
            inner.raw = raw.into_boxed_slice();
            inner.spans = spans;
            return self;
        }
        let raw = &self.0.raw;
        let mut out = Vec::with_capacity(raw.len() - (to - from));
        out.extend_from_slice(raw.get(..from).unwrap_or_default());
        out.extend_from_slice(raw.get(to..).unwrap_or_default());
        self.with_bytes(out.into_boxed_slice(), spans)
    }

    /// The same object with new bytes (a rewrite that leaves the parsed
    /// metadata valid): moves the metadata out when this is the only owner.
    fn with_bytes(self, raw: Box<[u8]>, spans: Spans) -> KubeObject {
        match Rc::try_unwrap(self.0) {
            Ok(mut inner) => {
                // Taken, not moved: `Inner` has a `Drop` (which tells any extension).
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
    #[must_use]
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
                member(&mut raw, name, &scan::quote(value));
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
            // The only owner is cut in place, to the same bytes.
            let unique = KubeObject::from_json(raw.as_bytes())
                .expect("valid")
                .without_managed_fields();
            assert_eq!(unique.raw(), stripped.raw(), "{raw}");
            assert_layout(&unique);
            assert_eq!(unique.meta(), &before, "{raw}");
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
}
