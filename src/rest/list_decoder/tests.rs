use std::cell::RefCell;
use std::rc::Rc;

use super::*;
use crate::rest::decode_list;

const LIST: &str = r#" {"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"tok","remainingItemCount":3},"items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"n","resourceVersion":"5"},"spec":{"x":"}]\"{["}},
 {"metadata":{"name":"bad","namespace":"n","generation":1e400}} ,{"metadata":{"name":"b","namespace":"n","labels":{"k":"v"}},"n":[1,-2.5e3,true,null]}],"extra":[{"a":"]"}],"num":12} "#;

/// What a decoded list says, compared across ways of feeding it.
fn summary(l: &ObjectList) -> String {
    let items: Vec<String> = l
        .items
        .iter()
        .map(|o| format!("{}@{}:{}", o.name(), o.resource_version(), o.raw().len()))
        .collect();
    let invalid: Vec<&str> = l.invalid.iter().map(|(k, _)| k.as_str()).collect();
    format!(
        "{}|{}|{}|{:?}|{:?}|{items:?}|{invalid:?}",
        l.api_version, l.kind, l.resource_version, l.continue_token, l.remaining_item_count
    )
}

fn decode_in(chunks: &[&[u8]]) -> Result<ObjectList, Error> {
    let mut d = ListDecoder::new();
    for c in chunks {
        d.feed(c.to_vec())?;
    }
    d.finish()
}

#[test]
fn a_whole_body_decodes_items_metadata_and_leaves_out_a_bad_item() {
    let l = decode_list(LIST.as_bytes()).expect("valid");
    assert_eq!(l.kind, "PodList");
    assert_eq!(l.api_version, "v1");
    assert_eq!(l.resource_version, "77");
    assert_eq!(l.continue_token.as_deref(), Some("tok"));
    assert_eq!(l.remaining_item_count, Some(3));
    let names: Vec<&str> = l.items.iter().map(|o| o.name()).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(l.items[0].raw().ends_with(br#""spec":{"x":"}]\"{["}}"#));
    assert_eq!(l.invalid.len(), 1);
    assert_eq!(l.invalid[0].0, "n/bad");
}

#[test]
fn every_split_of_the_body_decodes_to_the_same_list() {
    let body = LIST.as_bytes();
    let want = summary(&decode_list(body).expect("valid"));
    for i in 0..=body.len() {
        let got = decode_in(&[&body[..i], &body[i..]]).expect("valid");
        assert_eq!(summary(&got), want, "split at {i}");
    }
    // Two splits: every pair 7 bytes apart, and byte by byte.
    for i in 0..body.len().saturating_sub(7) {
        let got = decode_in(&[&body[..i], &body[i..i + 7], &body[i + 7..]]).expect("valid");
        assert_eq!(summary(&got), want, "splits at {i} and {}", i + 7);
    }
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(summary(&decode_in(&bytes).expect("valid")), want);
}

#[test]
fn a_body_cut_anywhere_is_an_error_never_a_shorter_list() {
    let body = LIST.trim().as_bytes();
    for i in 0..body.len() {
        for chunks in [vec![&body[..i]], body[..i].chunks(5).collect()] {
            let e = decode_in(&chunks).expect_err("a cut body is not a list");
            assert!(matches!(e, Error::Decode { .. }), "cut at {i}: {e:?}");
        }
    }
}

#[test]
fn items_before_metadata_and_members_in_any_order() {
    let body = br#"{"items":[{"metadata":{"name":"a","resourceVersion":"1"}}],"metadata":{"resourceVersion":"9","continue":"c"},"kind":"PodList"}"#;
    for i in 0..=body.len() {
        let l = decode_in(&[&body[..i], &body[i..]]).expect("valid");
        assert_eq!(l.resource_version, "9");
        assert_eq!(l.continue_token.as_deref(), Some("c"));
        assert_eq!(l.kind, "PodList");
        assert_eq!(l.items.len(), 1);
    }
    let empty = decode_list(br#"{"metadata":{"continue":""},"items":[]}"#).expect("ok");
    assert_eq!(empty.continue_token, None);
    assert!(empty.items.is_empty());
    assert!(decode_list(br#"{"items":null}"#)
        .expect("ok")
        .items
        .is_empty());
    assert!(decode_list(br#"{}"#).expect("ok").items.is_empty());
}

#[test]
fn syntax_errors_fail_the_list() {
    for bad in [
        "[]",
        r#"{"items":[}"#,
        r#"{"items":[1]}"#,
        r#"{"items":{}}"#,
        r#"{"items":[{"metadata":{"name":"a"}}}"#,
        r#"{"items":[{"metadata":{"name":"a"}]}"#,
        r#"{"items":[{"metadata":{"name":"a"}},{"metadata":"#,
        r#"{"items":[]} x"#,
        r#"{"items":[]"kind":"x"}"#,
        r#"{"kind":tru}"#,
        r#"{"kind":1.}"#,
        r#"{"metadata":{"resourceVersion":5}}"#,
        r#"{kind:"x"}"#,
        r#"{"kind" "x"}"#,
        r#"{"k\q":1}"#,
    ] {
        let e = decode_list(bad.as_bytes()).expect_err(bad);
        assert!(matches!(e, Error::Decode { .. }), "{bad}: {e:?}");
        assert!(
            e.to_string().contains("byte") || e.to_string().contains("metadata"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn the_continue_token_is_known_before_the_items_arrive() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let mut d = ListDecoder::with_hooks(ListHooks {
        on_continue: Some(Rc::new(move |t| s.borrow_mut().push(t.to_string()))),
        on_item: None,
    });
    let (head, items) = LIST.split_at(LIST.find("\"items\"").expect("items"));
    d.feed(head.as_bytes().to_vec()).expect("head");
    assert_eq!(*seen.borrow(), ["tok"]);
    assert_eq!(d.items_so_far(), 0);
    d.feed(items.as_bytes().to_vec()).expect("items");
    assert_eq!(d.finish().expect("list").items.len(), 2);
    assert_eq!(seen.borrow().len(), 1, "called once");

    let called = Rc::new(RefCell::new(false));
    let c = called.clone();
    let mut last = ListDecoder::with_hooks(ListHooks {
        on_continue: Some(Rc::new(move |_| *c.borrow_mut() = true)),
        on_item: None,
    });
    last.feed(br#"{"metadata":{"continue":""},"items":[]}"#.to_vec())
        .expect("ok");
    assert!(!*called.borrow(), "no token on the last page");
}

#[test]
fn what_is_held_between_chunks_is_at_most_one_unfinished_item() {
    let item = |i: usize| {
        format!(
            r#"{{"metadata":{{"name":"p{i}","namespace":"n","resourceVersion":"{i}"}},"spec":{{"pad":"{}"}}}}"#,
            "x".repeat(900)
        )
    };
    let items: Vec<String> = (0..200).map(item).collect();
    let body = format!(
        r#"{{"kind":"PodList","metadata":{{"resourceVersion":"500"}},"items":[{}]}}"#,
        items.join(",")
    );
    let longest = items.iter().map(String::len).max().unwrap_or_default();
    let mut d = ListDecoder::new();
    for chunk in body.as_bytes().chunks(700) {
        d.feed(chunk.to_vec()).expect("valid");
        assert!(d.buf.len() <= longest + 700, "held {} bytes", d.buf.len());
    }
    let l = d.finish().expect("valid");
    assert_eq!(l.items.len(), 200);
    assert_eq!(l.items[199].name(), "p199");
}

#[test]
fn a_long_string_split_into_many_chunks_is_scanned_once() {
    // 4 MB of string in 1-KB chunks: rescanning from the item's start on
    // every chunk would be ~8 billion byte steps; resuming is 4 million.
    let body = format!(
        r#"{{"items":[{{"metadata":{{"name":"big"}},"data":"{}\"{}"}}]}}"#,
        "y".repeat(2 << 20),
        "z".repeat(2 << 20)
    );
    let mut d = ListDecoder::new();
    for chunk in body.as_bytes().chunks(1024) {
        d.feed(chunk.to_vec()).expect("valid");
        assert!(d.extent.len <= d.buf.len());
    }
    assert_eq!(d.finish().expect("valid").items[0].name(), "big");
}

#[test]
fn each_item_goes_through_the_item_hook_as_it_is_decoded() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let mut d = ListDecoder::with_hooks(ListHooks {
        on_continue: None,
        // Keep `a`, drop everything else.
        on_item: Some(Rc::new(move |o: KubeObject| {
            s.borrow_mut().push(o.name().to_string());
            (o.name() == "a").then_some(o)
        })),
    });
    let (head, tail) = LIST.split_at(LIST.find("{\"metadata\":{\"name\":\"bad\"").expect("bad"));
    d.feed(head.as_bytes().to_vec()).expect("head");
    assert_eq!(*seen.borrow(), ["a"], "called before the rest arrives");
    d.feed(tail.as_bytes().to_vec()).expect("tail");
    let l = d.finish().expect("list");
    assert_eq!(*seen.borrow(), ["a", "b"], "an invalid item is not offered");
    let names: Vec<&str> = l.items.iter().map(|o| o.name()).collect();
    assert_eq!(names, ["a"]);
    assert_eq!(l.invalid.len(), 1);
}

#[test]
fn a_status_body_is_its_error_never_an_empty_list() {
    // A failure answered with 200 (a proxy, a broken server): taken as an
    // empty list it would empty the cache.
    let body = br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcd is down","reason":"InternalError","details":{"causes":[{"message":"x"}]},"code":500}"#;
    for split in [1, 7, body.len()] {
        let chunks: Vec<&[u8]> = body.chunks(split).collect();
        let e = decode_in(&chunks).expect_err("a Status is not a list");
        assert_eq!(
            (e.code(), e.reason()),
            (Some(500), Some("InternalError")),
            "{e}"
        );
        assert!(e.to_string().contains("etcd is down"), "{e}");
    }
    // Members in another order, the kind last.
    let late = br#"{"code":404,"reason":"NotFound","status":"Failure","kind":"Status"}"#;
    assert_eq!(decode_in(&[late]).unwrap_err().code(), Some(404));
    // Not a failure, still not a list.
    let success = br#"{"kind":"Status","apiVersion":"v1","status":"Success"}"#;
    let e = decode_in(&[success]).unwrap_err();
    assert!(matches!(e, Error::Decode { .. }), "{e:?}");
    // A list whose items carry a `status` member is a list.
    let list = br#"{"kind":"PodList","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a"},"status":{"phase":"Running"}}],"status":"odd"}"#;
    assert_eq!(decode_in(&[list]).unwrap().items.len(), 1);
}

#[test]
fn a_second_items_member_fails_the_list() {
    // Go and JSON.parse keep the last; the first one's items are already
    // handed on, so the list is refused rather than merged.
    let body =
        br#"{"metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"a"}}],"items":[]}"#;
    let e = decode_in(&[body]).unwrap_err();
    assert!(e.to_string().contains("two items"), "{e}");
    // One `items`, null, split anywhere (the check runs once per key).
    let null = br#"{"metadata":{"resourceVersion":"10"},"items":null}"#;
    for at in 0..=null.len() {
        let (a, b) = null.split_at(at);
        assert!(
            decode_in(&[a, b]).unwrap().items.is_empty(),
            "split at {at}"
        );
    }
    let bytes: Vec<&[u8]> = null.chunks(1).collect();
    assert!(decode_in(&bytes).is_ok());
}

#[test]
fn a_long_key_number_or_run_of_whitespace_between_members_is_scanned_once() {
    // Each resumes where the last chunk ended: the whitespace is taken as it
    // arrives, a key's and a number's progress is kept.
    let n = 1 << 20;
    let ws = format!(r#"{{"x":1,{}"items":[]}}"#, " \t\r\n".repeat(n / 4));
    let key = format!(r#"{{"{}":1,"items":[]}}"#, "k\\n".repeat(n / 3));
    let num = format!(r#"{{"x":1.{},"items":[]}}"#, "0".repeat(n));
    for (what, body) in [("whitespace", &ws), ("key", &key), ("number", &num)] {
        let mut d = ListDecoder::new();
        let mut fed = 0;
        for chunk in body.as_bytes().chunks(1024) {
            d.feed(chunk.to_vec()).expect("valid");
            fed += chunk.len();
            let progress = d.key_scan.next.max(d.extent.len);
            // What is held is the unfinished token, scanned up to its end.
            assert!(
                d.buf.is_empty() || progress >= d.buf.len().saturating_sub(1),
                "{what}: {} bytes held after {fed}, scanned to {progress}",
                d.buf.len()
            );
        }
        assert!(d.finish().expect(what).items.is_empty());
    }
}

#[test]
fn member_names_with_escapes_are_the_names_they_spell() {
    let body = br#"{"kind":"PodList","metadata":{"resourceVersion":"9"},"\u0069tems":[{"metadata":{"name":"a"}}],"k\"e\\y":[]}"#;
    let want = "|PodList|9|None|None|[\"a@:25\"]|[]";
    for i in 0..=body.len() {
        let got = decode_in(&[&body[..i], &body[i..]]).expect("valid");
        assert_eq!(summary(&got), want, "split at {i}");
    }
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(summary(&decode_in(&bytes).expect("valid")), want);
    // `"\u0069tems": []` after `items` is a second items member.
    assert!(decode_list(br#"{"items":[],"\u0069tems":[]}"#).is_err());
}

#[test]
fn only_json_whitespace_separates_the_lists_members() {
    for ws in [b'\x0c', b'\x0b'] {
        let body = [b"{\"items\":[]".as_slice(), &[ws], b"}"].concat();
        assert!(decode_list(&body).is_err(), "byte {ws:#x} accepted");
        let body = [b"{\"items\":[]".as_slice(), b" \t\r\n}"].concat();
        assert!(decode_list(&body).is_ok());
    }
}
