//! LIST responses: the items as [`KubeObject`]s (each one copy of its bytes,
//! metadata parsed, the rest validated) and the list metadata the pager and
//! reflector need. Bodies are decoded as they stream in (`list_decoder.rs`).
use super::object::KubeObject;
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

/// Decode a whole LIST response body (a body that arrives in chunks is
/// better fed to a `ListDecoder` as it comes).
#[cfg(any(test, feature = "testing"))]
pub fn decode_list(body: &[u8]) -> Result<ObjectList, Error> {
    let mut d = super::list_decoder::ListDecoder::new();
    d.feed(body.to_vec())?;
    d.finish()
}

/// `namespace/name` of an item that could not be decoded, read leniently
/// (the item may hold what the decoder refused): the string values of
/// `metadata.name` and `metadata.namespace`, found by brackets and quotes.
pub(super) fn key_hint(raw: &[u8]) -> String {
    let (mut name, mut ns) = (String::new(), String::new());
    // The key each open object is at (None inside arrays).
    let mut keys: Vec<Option<&[u8]>> = Vec::new();
    let mut i = 0;
    while let Some(&c) = raw.get(i) {
        match c {
            b'{' => keys.push(None),
            b'[' => keys.push(None),
            b'}' | b']' => {
                keys.pop();
            }
            b'"' => {
                let start = i;
                i += 1;
                while let Some(&c) = raw.get(i) {
                    match c {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                let quoted = raw.get(start..=i).unwrap_or_default();
                let text = raw.get(start + 1..i).unwrap_or_default();
                let mut j = i + 1;
                while raw.get(j).is_some_and(u8::is_ascii_whitespace) {
                    j += 1;
                }
                if raw.get(j) == Some(&b':') {
                    if let Some(k) = keys.last_mut() {
                        *k = Some(text);
                    }
                } else if keys.len() == 2 && keys[0] == Some(b"metadata".as_slice()) {
                    let value = || crate::rest::scan::json_string(quoted).unwrap_or_default();
                    match keys[1] {
                        Some(b"name") => name = value(),
                        Some(b"namespace") => ns = value(),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
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
        // An item with bad metadata is left out and reported as a decode error.
        let bad = decode_list(br#"{"items":[{"metadata":{"name":5}}]}"#).expect("ok");
        assert!(bad.items.is_empty());
        assert!(matches!(bad.invalid[..], [(_, Error::Decode { .. })]));
    }
}

#[cfg(test)]
mod skip_tests {
    use super::*;

    #[test]
    fn an_item_that_is_valid_json_but_not_a_cacheable_object_is_left_out_and_named() {
        let body = br#"{"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[
            {"metadata":{"name":"a","namespace":"n","resourceVersion":"1"}},
            {"metadata":{"name":"b","namespace":"n","generation":1e400}},
            {"metadata":{"name":7,"namespace":"n"}},
            {"metadata":{"name":"c","namespace":"n","resourceVersion":"3"}},
            {}, {"metadata":null}, {"metadata":{"namespace":"n","name":""}}]}"#;
        let l = decode_list(body).expect("the list as a whole decodes");
        let names: Vec<&str> = l.items.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["a", "c"]);
        let keys: Vec<&str> = l.invalid.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["n/b", "n/", "", "", "n/"]);
        assert!(l.invalid[2..]
            .iter()
            .all(|(_, e)| e.to_string().contains("without metadata.name")));
    }

    #[test]
    fn invalid_json_inside_an_item_skips_the_item_and_broken_brackets_fail_the_list() {
        let l = decode_list(
            br#"{"items":[{"metadata":{"name":"a","annotations":{"x":"\q"}}},{"metadata":{"name":"b"}}]}"#,
        )
        .expect("the item's extent is clear");
        assert_eq!(l.items.len(), 1);
        assert_eq!(l.invalid.len(), 1);
        assert_eq!(l.invalid[0].0, "a");
        assert!(decode_list(br#"{"items":[{"metadata":{"name":"a"}},{"metadata":"#).is_err());
        assert!(decode_list(br#"{"items":[{"metadata":{"name":"a"}]}"#).is_err());
    }
}
