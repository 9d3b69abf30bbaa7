//! LIST responses: the items as [`KubeObject`]s (each one copy of its bytes,
//! metadata parsed, the rest validated) and the list metadata the pager and
//! reflector need.
use serde::Deserialize;

use super::object::KubeObject;
use super::scan;
use super::Error;

/// One page of a LIST.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObjectList {
    /// `apiVersion` of the list (`v1`).
    pub api_version: String,
    /// `kind` of the list (`PodList`).
    pub kind: String,
    /// `metadata.resourceVersion`: the state the list reflects.
    pub resource_version: String,
    /// `metadata.continue`: the token for the next page (`None` on the last).
    pub continue_token: Option<String>,
    /// `metadata.remainingItemCount`, when the server estimates it.
    pub remaining_item_count: Option<i64>,
    /// The items, in server order.
    pub items: Vec<KubeObject>,
    /// Items that are well-formed JSON but not objects the cache can hold
    /// (bad metadata), left out of `items`: what is known of each one's
    /// key (`namespace/name`, possibly partial) and why.
    pub invalid: Vec<(String, Error)>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ListMeta {
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
    #[serde(default)]
    remaining_item_count: Option<i64>,
}

/// The continue token of an undecoded list body, read from its leading
/// `metadata` without decoding the items (lets a caller request the next
/// page before decoding this one).
pub fn peek_continue(body: &[u8]) -> Option<String> {
    scan::peek_list_continue(body)
}

/// Decode a LIST response body.
pub fn decode_list(body: &[u8]) -> Result<ObjectList, Error> {
    let span = scan::parse_list(body)?;
    let meta: ListMeta = match span.metadata {
        None => ListMeta::default(),
        Some(m) => serde_json::from_slice::<Option<ListMeta>>(m)
            .map_err(|e| Error::decode(format!("invalid list metadata: {e}"), m))?
            .unwrap_or_default(),
    };
    let mut items = Vec::with_capacity(span.items.len());
    let mut invalid = Vec::new();
    for item in span.items {
        let raw = item.raw;
        match KubeObject::from_span(item) {
            Ok(o) => items.push(o),
            Err(e) => invalid.push((key_hint(raw), e)),
        }
    }
    let text = |s: Option<scan::StrSpan<'_>>| -> Result<String, Error> {
        s.map_or_else(|| Ok(String::new()), |s| s.to_str().map(String::from))
    };
    Ok(ObjectList {
        api_version: text(span.api_version)?,
        kind: text(span.kind)?,
        resource_version: meta.resource_version.unwrap_or_default(),
        continue_token: meta.continue_token.filter(|c| !c.is_empty()),
        remaining_item_count: meta.remaining_item_count,
        items,
        invalid,
    })
}

/// `namespace/name` of an item that could not be decoded, as far as its
/// metadata can be read as plain strings.
fn key_hint(raw: &[u8]) -> String {
    let text = |path: &[&str]| {
        scan::find_path(raw, path)
            .and_then(|v| serde_json::from_slice::<String>(v).ok())
            .unwrap_or_default()
    };
    let (ns, name) = (
        text(&["metadata", "namespace"]),
        text(&["metadata", "name"]),
    );
    if ns.is_empty() {
        name
    } else {
        format!("{ns}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg_decodes_items_and_paging_metadata() {
        let body = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"tok","remainingItemCount":3},"items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"n","resourceVersion":"5"},"spec":{}},{"metadata":{"name":"b"}}]}"#;
        let l = decode_list(body).expect("valid");
        assert_eq!(l.kind, "PodList");
        assert_eq!(l.resource_version, "77");
        assert_eq!(l.continue_token.as_deref(), Some("tok"));
        assert_eq!(l.remaining_item_count, Some(3));
        let names: Vec<_> = l.items.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(l.items[0].resource_version(), "5");
        assert!(l.items[0].raw().ends_with(br#""spec":{}}"#));
        let last = decode_list(br#"{"metadata":{"continue":""},"items":[]}"#).expect("ok");
        assert_eq!(last.continue_token, None);
        assert!(matches!(
            decode_list(br#"{"items":[{"metadata":{"name":5}}]}"#),
            Err(Error::Decode { .. })
        ));
    }
}
