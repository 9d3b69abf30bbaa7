//! Property tests of the watch framer, the event and list decoders and the
//! JSON validation behind them, on hostile input: arbitrary bytes, arbitrary
//! chunkings, mutated valid events and generated near-JSON. Never a panic;
//! every object accepted is JSON that `serde_json` reads (the wasm suite
//! checks a sample with `JSON.parse`); validation agrees with `serde_json`.
//!
//! `PROPTEST_CASES` sets the number of cases per property (256 by default);
//! BENCHMARKS.md records a long run.
use proptest::prelude::*;
use serde_json::Value;

use crate::rest::watch::{decode_event, EventDecoder};
use crate::rest::{decode_list, Error, KubeObject, WatchEvent};

/// Valid watch lines of the shapes servers send: escapes, surrogate pairs,
/// every number form, nulls, managedFields, owner references, bookmarks and
/// an in-band error.
const EVENTS: &[&str] = &[
    r#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"café-☕","namespace":"日本","uid":"u-1","resourceVersion":"12","generation":3,"creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"wëb","tier":"fe"},"annotations":{"note":"a \"quoted\" \\ {not a brace} \u00e9 \ud83d\ude00 \/ \b\f\n\r\t"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u-0","controller":true,"blockOwnerDeletion":null}],"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{"replicas":-0,"ratio":0.25,"big":1.5e+300,"tiny":-2E-308,"int":12345678901234567890,"flags":[true,false,null],"empty":{},"list":[]},"status":{"phase":"Running"}}}"#,
    r#"{ "object" : { "metadata" : { "name" : "b" , "resourceVersion" : "13" } , "data" : { "k" : "v" } } , "type" : "MODIFIED" }"#,
    r#"{"type":"DELETED","object":{"kind":"ConfigMap","metadata":{"name":"c","namespace":"n","resourceVersion":"14","labels":null,"ownerReferences":null,"managedFields":null}}}"#,
    r#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"15","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
    r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old","reason":"Expired","code":410}}"#,
];

const LIST: &str = r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"99","continue":"t"},"items":[{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":"1"}},"spec":{"n":[1,2.5,-3e2]}},{"metadata":{"name":"b\u00e9","namespace":"n"},"status":{"s":"\ud83d\ude00"}}]}"#;

/// Bytes that matter to a JSON scanner, to mutate with.
const INTERESTING: &[u8] =
    b"{}[],:\"\\/ \t\r\n0123456789-+.eEtrufalsn\x00\x01\x1f\x7f\x80\xc3\xa9\xed\xa0\xf0\xff";

/// One edit of a byte string.
#[derive(Debug, Clone)]
enum Edit {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    /// Copy `len` bytes from one spot to another.
    Splice(usize, usize, usize),
    Truncate(usize),
}

fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![3 => prop::sample::select(INTERESTING), 1 => any::<u8>()]
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = any::<prop::sample::Index>();
    prop_oneof![
        4 => (at.clone(), byte()).prop_map(|(i, b)| Edit::Replace(i.index(1 << 20), b)),
        3 => (at.clone(), byte()).prop_map(|(i, b)| Edit::Insert(i.index(1 << 20), b)),
        3 => at.clone().prop_map(|i| Edit::Delete(i.index(1 << 20))),
        1 => (at.clone(), at.clone(), 1usize..40)
            .prop_map(|(a, b, n)| Edit::Splice(a.index(1 << 20), b.index(1 << 20), n)),
        1 => at.prop_map(|i| Edit::Truncate(i.index(1 << 20))),
    ]
}

fn apply(mut b: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let n = b.len().max(1);
        match *e {
            Edit::Replace(i, c) => {
                if let Some(x) = b.get_mut(i % n) {
                    *x = c;
                }
            }
            Edit::Insert(i, c) => b.insert(i % (b.len() + 1), c),
            Edit::Delete(i) => {
                if !b.is_empty() {
                    b.remove(i % n);
                }
            }
            Edit::Splice(from, to, len) => {
                let from = from % n;
                let piece: Vec<u8> = b.iter().skip(from).take(len).copied().collect();
                let to = to % (b.len() + 1);
                b.splice(to..to, piece);
            }
            Edit::Truncate(i) => b.truncate(i % (b.len() + 1)),
        }
    }
    b
}

/// Everything the layers above do with an accepted object, checked against
/// `serde_json`: the bytes, each member by layout, the parsed metadata, and
/// the byte-level rewrites.
fn check_object(o: &KubeObject) {
    let v: Value = serde_json::from_slice(o.raw())
        .unwrap_or_else(|e| panic!("accepted invalid JSON ({e}): {:?}", o.raw_str()));
    let map = v.as_object().expect("an object");
    let mut members = 0;
    while let Some((key, value)) = o.member(members) {
        let key: String = serde_json::from_str(&format!("\"{key}\"")).expect("key");
        let value: Value = serde_json::from_str(value).expect("member value");
        assert!(map.contains_key(&key), "{key} in {}", o.raw_str());
        if member_count(o, &key) == 1 {
            assert_eq!(map.get(&key), Some(&value), "{key}");
        }
        members += 1;
    }
    assert!(members >= map.len(), "{}", o.raw_str());
    if let Some(meta) = map.get("metadata").and_then(Value::as_object) {
        if let Some(name) = meta.get("name").and_then(Value::as_str) {
            assert_eq!(o.name(), name);
        }
        if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
            let ours: Vec<_> = o.meta().labels().iter().collect();
            let mut theirs: Vec<_> = labels
                .iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect();
            theirs.sort_unstable();
            assert_eq!(ours, theirs);
        }
    }
    for rewritten in [
        o.clone().without_managed_fields(),
        o.clone().metadata_only(),
    ] {
        serde_json::from_slice::<Value>(rewritten.raw())
            .unwrap_or_else(|e| panic!("rewrite is invalid ({e}): {:?}", rewritten.raw_str()));
    }
    let _ = o.annotations();
    let _ = o.field_text("spec.replicas");
    let _ = o.field_text("metadata");
}

fn check_events(events: &[Result<WatchEvent, Error>]) {
    for ev in events.iter().flatten() {
        if let Some(o) = ev.object() {
            check_object(o);
        }
    }
}

/// The decoder's output for `chunks`, with a small line limit so that
/// limit is exercised too.
fn decode_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Result<WatchEvent, Error>> {
    let mut d = EventDecoder::new(2048);
    for c in chunks {
        d.push(c);
    }
    d.finish();
    std::iter::from_fn(|| d.next_event()).collect()
}

/// `bytes` cut at the given points.
fn cut<'a>(bytes: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut prev = 0;
    for a in at.into_iter().chain([bytes.len()]) {
        out.push(&bytes[prev..a]);
        prev = a;
    }
    out
}

/// What may follow a line: line endings, blank and keep-alive lines, or
/// nothing (two events run together).
const SEPARATORS: &[&[u8]] = &[b"\n", b"\r\n", b"\n\n", b"\n  \n", b""];

fn stream() -> impl Strategy<Value = Vec<u8>> {
    let line = (
        prop::sample::select(EVENTS),
        prop::collection::vec(edit(), 0..3),
    )
        .prop_map(|(l, edits)| apply(l.as_bytes().to_vec(), &edits));
    let sep = prop::sample::select(SEPARATORS);
    prop::collection::vec((line, sep), 0..6).prop_map(|parts| {
        let mut out = Vec::new();
        for (l, s) in parts {
            out.extend_from_slice(&l);
            out.extend_from_slice(s);
        }
        out
    })
}

/// Near-JSON text: mostly valid values in every form, with invalid pieces
/// mixed in at every level (the differential test's input).
fn json_text() -> impl Strategy<Value = String> {
    let num = "-?(0|[1-9][0-9]{0,3}|0[0-9])(\\.[0-9]{0,3})?([eE][+-]?[0-9]{0,3})?";
    let piece = prop::sample::select(vec![
        "a",
        "é",
        "😀",
        " ",
        "\u{7f}",
        "\\\"",
        "\\\\",
        "\\/",
        "\\b",
        "\\f",
        "\\n",
        "\\r",
        "\\t",
        "\\u00e9",
        "\\u20AC",
        "\\ud83d\\ude00",
        "\\ud83d",
        "\\ude00",
        "\\ud83d\\u0041",
        "\\u12",
        "\\x",
        "\u{1}",
        "\t",
        "\\",
    ]);
    let string = prop::collection::vec(piece, 0..4).prop_map(|p| format!("\"{}\"", p.concat()));
    let literal = prop::sample::select(vec!["true", "false", "null", "tru", "nul", "True"]);
    let ws = prop::sample::select(vec!["", "", " ", "\n\t", "\r"]);
    let leaf = prop_oneof![
        num.prop_map(String::from),
        string.clone(),
        literal.prop_map(String::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        // Separators and the ends of a list: mostly right, sometimes a
        // comma missing, doubled, leading or trailing.
        let sep = prop::sample::select(vec![",", ",", ",", "", ",,"]);
        let end = prop::sample::select(vec!["", "", "", "", ","]);
        let items =
            |open: &str, parts: Vec<(String, &str)>, (head, tail): (&str, &str), close: &str| {
                let mut s = format!("{open}{head}");
                for (i, (v, sep)) in parts.iter().enumerate() {
                    if i > 0 {
                        s.push_str(sep);
                    }
                    s.push_str(v);
                }
                format!("{s}{tail}{close}")
            };
        prop_oneof![
            (
                prop::collection::vec((inner.clone(), sep.clone()), 0..5),
                ws.clone(),
                (end.clone(), end.clone())
            )
                .prop_map(move |(parts, w, ends)| {
                    let parts = parts
                        .into_iter()
                        .map(|(v, s)| (format!("{w}{v}"), s))
                        .collect();
                    items("[", parts, ends, "]")
                }),
            (
                prop::collection::vec((string.clone(), inner, sep), 0..5),
                ws.clone(),
                (end.clone(), end)
            )
                .prop_map(move |(members, w, ends)| {
                    let parts = members
                        .into_iter()
                        .map(|(k, v, s)| (format!("{w}{k}{w}:{w}{v}"), s))
                        .collect();
                    items("{", parts, ends, "}")
                }),
        ]
    })
}

/// How many top-level members of `o` are named `key`.
fn member_count(o: &KubeObject, key: &str) -> usize {
    (0..)
        .map_while(|i| o.member(i))
        .filter(|(k, _)| {
            serde_json::from_str::<String>(&format!("\"{k}\"")).is_ok_and(|k| k == key)
        })
        .count()
}

proptest! {
    /// Arbitrary bytes in arbitrary chunks: no panic, the same result as in
    /// one piece, and whatever is accepted is valid.
    #[test]
    fn arbitrary_bytes_in_any_chunking(
        bytes in prop::collection::vec(byte(), 0..600),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let whole = decode_chunks([&bytes[..]]);
        check_events(&whole);
        prop_assert_eq!(decode_chunks(cut(&bytes, &cuts)), whole);
        let _ = decode_list(&bytes);
        if let Ok(o) = KubeObject::from_json(&bytes) {
            check_object(&o);
        }
    }

    /// Streams of valid and mutated events, chunked anywhere (inside
    /// multi-byte characters and `\r\n` included): identical events, every
    /// accepted object valid, and an unmutated line always accepted.
    #[test]
    fn mutated_event_streams_in_any_chunking(
        bytes in stream(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let whole = decode_chunks([&bytes[..]]);
        check_events(&whole);
        prop_assert_eq!(decode_chunks(cut(&bytes, &cuts)), whole);
    }

    /// One mutated event or list decoded directly.
    #[test]
    fn mutated_events_and_lists(
        which in prop::sample::select(EVENTS),
        edits in prop::collection::vec(edit(), 1..6),
        list_edits in prop::collection::vec(edit(), 1..6),
    ) {
        if let Ok(ev) = decode_event(&apply(which.as_bytes().to_vec(), &edits)) {
            check_events(&[Ok(ev)]);
        }
        if let Ok(list) = decode_list(&apply(LIST.as_bytes().to_vec(), &list_edits)) {
            for o in &list.items {
                check_object(o);
            }
        }
    }

    /// Validation agrees with serde_json on near-JSON values, as an
    /// object member and after a few byte edits.
    #[test]
    fn validation_agrees_with_serde_json(
        value in json_text(),
        edits in prop::collection::vec(edit(), 0..3),
    ) {
        let mut doc = br#"{"kind":"X","v":"#.to_vec();
        doc.extend_from_slice(value.as_bytes());
        doc.push(b'}');
        let doc = apply(doc, &edits);
        let ours = KubeObject::from_json(&doc);
        let oracle = serde_json::from_slice::<Value>(&doc);
        // Beyond JSON, ours checks what it reads of a Kubernetes object
        // (`metadata`): compare only documents without one (edits rarely
        // make one).
        let plain = match &oracle {
            Ok(v) => v
                .as_object()
                .is_some_and(|m| m.keys().all(|k| k == "kind" || k == "v")),
            Err(_) => true,
        };
        if plain {
            prop_assert_eq!(
                ours.is_ok(),
                oracle.is_ok(),
                "{:?}: ours {:?}, serde_json {:?}",
                String::from_utf8_lossy(&doc),
                ours.as_ref().err(),
                oracle.as_ref().err()
            );
        }
        if let Ok(o) = ours {
            check_object(&o);
        }
    }
}

/// The valid inputs above are accepted whole (so the properties exercise
/// the accepting path, not only rejections).
#[test]
fn the_seed_inputs_are_valid() {
    for line in EVENTS {
        let ev = decode_event(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
        check_events(&[Ok(ev)]);
    }
    assert_eq!(decode_list(LIST.as_bytes()).expect("list").items.len(), 2);
}
