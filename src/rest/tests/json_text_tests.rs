//! The JSON text helpers that stand in for `serde_json` in the wasm module
//! (string unescaping and quoting, the number range check, the `Status`
//! and list-metadata readers) agree with `serde_json` or Go on every case,
//! including generated ones.
use proptest::prelude::*;

use crate::rest::scan::{json_string, quote};
use crate::rest::{decode_list, Status, StatusCause, StatusDetails};

/// Characters whose escaping or decoding has a special case.
const TRICKY: &[char] = &[
    '"',
    '\\',
    '/',
    '\u{0}',
    '\u{8}',
    '\u{c}',
    '\n',
    '\r',
    '\t',
    '\u{1f}',
    '\u{7f}',
    'é',
    '☕',
    '\u{ffff}',
    '😀',
    '\u{10ffff}',
    'a',
];

fn tricky_string() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TRICKY), 0..12).prop_map(String::from_iter)
}

proptest! {
    #[test]
    fn quoting_matches_serde_json(s in tricky_string()) {
        let ours = quote(&s);
        prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&s).unwrap());
    }

    #[test]
    fn unescaping_matches_serde_json(s in tricky_string(), ascii in any::<bool>()) {
        // Both writers' escapes: serde_json's (short forms) and `\uXXXX` for
        // every non-ASCII character, surrogate pairs included.
        let mut text = String::from_utf8(quote(&s)).unwrap();
        if ascii {
            text = text
                .chars()
                .flat_map(|c| {
                    if c.is_ascii() {
                        vec![c.to_string()]
                    } else {
                        let mut units = [0u16; 2];
                        c.encode_utf16(&mut units)
                            .iter()
                            .map(|u| format!("\\u{u:04X}"))
                            .collect()
                    }
                })
                .collect();
        }
        prop_assert_eq!(json_string(text.as_bytes()), Some(s.clone()));
        prop_assert_eq!(serde_json::from_str::<String>(&text).unwrap(), s);
    }

    #[test]
    fn numbers_out_of_f64_range_are_refused_as_by_correct_rounding(
        digits in "[1-9][0-9]{0,20}",
        point in 0usize..22,
        exp in 280i32..330,
    ) {
        let point = point.min(digits.len());
        let int = if point == 0 { "0" } else { &digits[..point] };
        let text = format!("{int}.{}0e{exp}", &digits[point..]);
        let finite = text.parse::<f64>().unwrap().is_finite();
        let doc = format!("[{text}]");
        prop_assert_eq!(crate::rest::scan::check_value(doc.as_bytes()).is_ok(), finite, "{}", text);
    }
}

#[test]
fn the_f64_boundary_is_the_midpoint_above_max() {
    for (text, ok) in [
        ("1.7976931348623157e308", true),
        ("1.7976931348623158e308", true),
        ("179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791", true),
        ("179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792", false),
        ("1.7976931348623159e308", false),
        ("-1.8e308", false),
        ("1e309", false),
        ("0.0000001e315", true),
        ("1e-400", true),
        ("0e999999999999999999999", true),
        ("12e99999999999999999999999", false),
    ] {
        let finite = text.parse::<f64>().is_ok_and(f64::is_finite);
        assert_eq!(finite, ok, "{text}: core's parse");
        assert_eq!(crate::rest::scan::check_value(text.as_bytes()).is_ok(), ok, "{text}");
    }
}

#[test]
fn bad_strings_are_refused() {
    for bad in [
        r#""\ud800""#,
        r#""\udc00x""#,
        r#""\x""#,
        "\"a",
        "\"a\" x",
        "1",
        "null",
    ] {
        assert_eq!(json_string(bad.as_bytes()), None, "{bad}");
    }
    assert_eq!(json_string(br#" "a\u00e9" "#).as_deref(), Some("aé"));
}

#[test]
fn status_documents_are_read_like_the_derive_read_them() {
    let body = br#"{"kind":"Status","apiVersion":"v1","metadata":{"continue":"t0k","x":[1]},"status":"Failure",
        "message":"pods \"a\" is invalid","reason":"Invalid","code":422,
        "details":{"name":"a","group":"","kind":"pods","uid":"u","retryAfterSeconds":3,
        "causes":[{"reason":"FieldValueInvalid","message":"bad","field":"spec.x","extra":[1]},{}]}}"#;
    let s = Status::from_body(body).expect("a status");
    assert_eq!(
        s,
        Status {
            status: "Failure".into(),
            message: "pods \"a\" is invalid".into(),
            reason: "Invalid".into(),
            code: 422,
            details: Some(StatusDetails {
                name: "a".into(),
                group: String::new(),
                kind: "pods".into(),
                uid: "u".into(),
                causes: vec![
                    StatusCause {
                        reason: "FieldValueInvalid".into(),
                        message: "bad".into(),
                        field: "spec.x".into(),
                    },
                    StatusCause::default(),
                ],
                retry_after_seconds: Some(3),
            }),
        }
    );
    assert_eq!(serde_json::from_slice::<Status>(body).expect("serde"), s);
    // Nulls are empty; no details stays `None`.
    let s = Status::from_body(
        br#"{"kind":"Status","message":null,"details":null,"code":null,"metadata":null}"#,
    )
    .expect("a status");
    assert_eq!(s, Status::default());
    // A member of the wrong type, or a code out of range, is not a status.
    for bad in [
        &br#"{"kind":"Status","code":"410"}"#[..],
        br#"{"kind":"Status","code":70000}"#,
        br#"{"kind":"Status","code":-1}"#,
        br#"{"kind":"Status","code":410.0}"#,
        br#"{"kind":"Status","message":1}"#,
        br#"{"kind":"Status","details":{"retryAfterSeconds":-3}}"#,
        br#"{"kind":"Status","details":{"causes":{}}}"#,
        br#"{"kind":"Status","reason":"x"} trailing"#,
    ] {
        assert_eq!(
            Status::from_body(bad),
            None,
            "{}",
            String::from_utf8_lossy(bad)
        );
        assert!(serde_json::from_slice::<Status>(bad).is_err());
    }
}

#[test]
fn list_metadata_is_read_with_nulls_as_empty() {
    let list = decode_list(
        br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"c\u0041","remainingItemCount":12,"selfLink":"x"},"items":[]}"#,
    )
    .expect("list");
    assert_eq!(list.resource_version, "7");
    assert_eq!(list.continue_token.as_deref(), Some("cA"));
    assert_eq!(list.remaining_item_count, Some(12));
    let list = decode_list(br#"{"metadata":{"resourceVersion":null,"continue":"","remainingItemCount":null},"items":null}"#)
        .expect("list");
    assert_eq!(list.resource_version, "");
    assert_eq!(list.continue_token, None);
    assert_eq!(list.remaining_item_count, None);
    for bad in [
        &br#"{"metadata":{"remainingItemCount":1.5},"items":[]}"#[..],
        br#"{"metadata":{"continue":1},"items":[]}"#,
        br#"{"metadata":[],"items":[]}"#,
    ] {
        assert!(
            decode_list(bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}
