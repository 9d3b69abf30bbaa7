//! API label selectors (`metav1.LabelSelector`: `matchLabels` and
//! `matchExpressions`, as in a Deployment's `spec.selector`) turned into a
//! [`LabelSelector`] with client-go's `LabelSelectorAsSelector` rules:
//! a null selector matches nothing, an empty one everything, `matchLabels`
//! become equality requirements, and the four expression operators map to
//! `in`, `notin`, exists and does-not-exist. Any other operator, or values
//! that do not fit the operator, is an error rather than a guess.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::rest::Reader;

use super::selector::{
    validate_label_key, validate_label_value, LabelSelector, Operator, Requirement, SelectorError,
    SelectorErrorKind, MAX_SELECTOR_BYTES,
};

/// `metav1.LabelSelector`, as found in workload specs. Deserializes from
/// the API's JSON (`{"matchLabels": {...}, "matchExpressions": [...]}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorSpec {
    /// Labels that must be present with exactly these values.
    #[serde(default)]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// Further requirements, all of which must hold.
    #[serde(default)]
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

/// One entry of `matchExpressions`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct LabelSelectorRequirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// Non-empty for `In`/`NotIn`; empty or absent for the other two.
    #[serde(default)]
    pub values: Option<Vec<String>>,
}

impl LabelSelector {
    /// The selector an API `LabelSelector` stands for (client-go's
    /// `LabelSelectorAsSelector`): `None` (a null selector) matches
    /// nothing, an empty one everything.
    pub fn from_spec(spec: Option<&LabelSelectorSpec>) -> Result<Self, SelectorError> {
        let Some(spec) = spec else {
            return Ok(LabelSelector::nothing());
        };
        let labels = spec.match_labels.iter().flatten();
        let exprs = spec.match_expressions.iter().flatten();
        let mut size = 0usize;
        let mut requirements = Vec::new();
        for (index, (key, value)) in labels.enumerate() {
            size += key.len() + value.len();
            check_size(size, index)?;
            requirements.push(requirement(
                index,
                key,
                Operator::Equals,
                std::slice::from_ref(value),
            )?);
        }
        let offset = requirements.len();
        for (i, expr) in exprs.enumerate() {
            let index = offset + i;
            let values = expr.values.as_deref().unwrap_or_default();
            size += expr.key.len() + values.iter().map(String::len).sum::<usize>();
            check_size(size, index)?;
            let op = match expr.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(invalid(
                        format!("{other:?} is not a valid label selector operator"),
                        index,
                    ))
                }
            };
            requirements.push(requirement(index, &expr.key, op, values)?);
        }
        crate::rt::sort::sort(&mut requirements);
        requirements.dedup();
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }

    /// [`LabelSelector::from_spec`] on the JSON of an API selector; JSON
    /// `null` matches nothing.
    pub fn from_spec_json(value: &serde_json::Value) -> Result<Self, SelectorError> {
        let text = serde_json::to_vec(value)
            .map_err(|e| invalid(format!("not a label selector object: {e}"), 0))?;
        Self::from_spec(LabelSelectorSpec::from_json(&text)?.as_ref())
    }
}

impl LabelSelectorSpec {
    /// Read the JSON text of an API selector with the scan reader (`null`
    /// members are empty, unknown members skipped; `key` and `operator` are
    /// required in each expression). `None` for JSON `null`.
    pub(crate) fn from_json(text: &[u8]) -> Result<Option<Self>, SelectorError> {
        let mut r = Reader::new(text, "label selector");
        let read = |r: &mut Reader<'_>| -> Result<Option<Self>, crate::rest::Error> {
            if r.null() {
                r.end()?;
                return Ok(None);
            }
            let mut spec = LabelSelectorSpec::default();
            r.object(|key, r| {
                match key {
                    b"matchLabels" => {
                        spec.match_labels = r.or_null(|r| {
                            let mut m = BTreeMap::new();
                            r.object(|k, r| {
                                m.insert(String::from_utf8_lossy(k).into_owned(), r.string()?);
                                Ok(())
                            })?;
                            Ok(m)
                        })?
                    }
                    b"matchExpressions" => {
                        spec.match_expressions = r.or_null(|r| {
                            let mut v = Vec::new();
                            r.array(|r| {
                                v.push(expression(r)?);
                                Ok(())
                            })?;
                            Ok(v)
                        })?
                    }
                    _ => r.skip()?,
                }
                Ok(())
            })?;
            r.end()?;
            Ok(Some(spec))
        };
        read(&mut r).map_err(|e| invalid(format!("not a label selector object: {e}"), 0))
    }
}

/// One `matchExpressions` entry at the reader.
fn expression(r: &mut Reader<'_>) -> Result<LabelSelectorRequirement, crate::rest::Error> {
    let mut e = LabelSelectorRequirement::default();
    let (mut key, mut operator) = (false, false);
    r.object(|k, r| {
        match k {
            b"key" => (e.key, key) = (r.string()?, true),
            b"operator" => (e.operator, operator) = (r.string()?, true),
            b"values" => e.values = r.or_null(Reader::strings)?,
            _ => r.skip()?,
        }
        Ok(())
    })?;
    match (key, operator) {
        (true, true) => Ok(e),
        (false, _) => Err(crate::rest::Error::decode("missing field `key`", b"")),
        (_, false) => Err(crate::rest::Error::decode("missing field `operator`", b"")),
    }
}

fn invalid(message: impl Into<String>, position: usize) -> SelectorError {
    SelectorError {
        message: message.into(),
        position,
        kind: SelectorErrorKind::Invalid,
    }
}

/// Bound what one object may cost, like the string form's byte limit.
fn check_size(size: usize, index: usize) -> Result<(), SelectorError> {
    if size <= MAX_SELECTOR_BYTES {
        return Ok(());
    }
    Err(SelectorError {
        message: format!("label selector is over the limit of {MAX_SELECTOR_BYTES} bytes"),
        position: index,
        kind: SelectorErrorKind::TooLong,
    })
}

/// client-go's `labels.NewRequirement` checks: a valid key, the number of
/// values the operator takes, and each value valid.
fn requirement(
    index: usize,
    key: &str,
    op: Operator,
    values: &[String],
) -> Result<Requirement, SelectorError> {
    validate_label_key(key).map_err(|m| invalid(m, index))?;
    match op {
        Operator::In | Operator::NotIn if values.is_empty() => {
            return Err(invalid(
                format!("{key}: for 'In' and 'NotIn' the values must not be empty"),
                index,
            ))
        }
        Operator::Equals | Operator::NotEquals if values.len() != 1 => {
            return Err(invalid(
                format!("{key}: exactly one value is required for equality"),
                index,
            ))
        }
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
            return Err(invalid(
                format!("{key}: values must be empty for 'Exists' and 'DoesNotExist'"),
                index,
            ))
        }
        _ => {}
    }
    for v in values {
        validate_label_value(v).map_err(|m| invalid(m, index))?;
    }
    let mut values = values.to_vec();
    crate::rt::sort::sort(&mut values);
    values.dedup();
    Ok(Requirement {
        key: key.to_owned(),
        op,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::KubeObject;
    use serde_json::json;

    fn pod(labels: serde_json::Value) -> KubeObject {
        KubeObject::from_value(
            &json!({"metadata": {"name": "p", "namespace": "ns", "labels": labels}}),
        )
        .unwrap()
    }

    fn sel(v: serde_json::Value) -> Result<LabelSelector, SelectorError> {
        LabelSelector::from_spec_json(&v)
    }

    #[test]
    fn ls_08_null_matches_nothing_and_empty_matches_everything() {
        let p = pod(json!({"app": "web"}));
        let bare = pod(json!({}));
        let nothing = sel(json!(null)).unwrap();
        assert!(nothing.is_nothing());
        assert!(!nothing.is_empty());
        assert!(!nothing.matches(&p) && !nothing.matches(&bare));
        assert_eq!(nothing.to_string(), "<nothing>");
        assert!(LabelSelector::parse(&nothing.to_string()).is_err());
        assert_eq!(LabelSelector::from_spec(None).unwrap(), nothing);
        for empty in [
            json!({}),
            json!({"matchLabels": {}}),
            json!({"matchLabels": null, "matchExpressions": []}),
        ] {
            let s = sel(empty.clone()).unwrap();
            assert!(s.is_empty(), "{empty}");
            assert!(s.matches(&p) && s.matches(&bare), "{empty}");
            assert_eq!(s, LabelSelector::default());
        }
    }

    #[test]
    fn ls_08_every_operator_converts_like_its_string_form() {
        let cases = [
            (
                json!({"matchLabels": {"app": "web", "tier": "fe"}}),
                "app=web,tier=fe",
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api", "web"]}]}),
                "app in (api,web)",
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}),
                "app notin (db)",
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
                "app",
            ),
            (
                json!({"matchExpressions": [{"key": "legacy", "operator": "DoesNotExist", "values": []}]}),
                "!legacy",
            ),
            (
                json!({"matchLabels": {"app": "web"}, "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["fe"]},
                    {"key": "example.com/team", "operator": "Exists"},
                    {"key": "app", "operator": "Exists"}]}),
                "app=web,app,example.com/team,tier in (fe)",
            ),
        ];
        for (spec, canonical) in cases {
            let s = sel(spec.clone()).unwrap();
            assert_eq!(s.to_string(), canonical, "{spec}");
            assert_eq!(s, LabelSelector::parse(canonical).unwrap(), "{spec}");
        }
    }

    #[test]
    fn ls_08_matching_follows_each_operator() {
        let web_fe = pod(json!({"app": "web", "tier": "fe"}));
        let db = pod(json!({"app": "db"}));
        let bare = pod(json!({}));
        for (spec, expect) in [
            (json!({"matchLabels": {"app": "web"}}), [true, false, false]),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}),
                [true, true, false],
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}),
                [false, true, true],
            ),
            (
                json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
                [true, false, false],
            ),
            (
                json!({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}),
                [false, true, true],
            ),
            (
                json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["fe"]}]}),
                [false, false, false],
            ),
        ] {
            let s = sel(spec.clone()).unwrap();
            let got = [s.matches(&web_fe), s.matches(&db), s.matches(&bare)];
            assert_eq!(got, expect, "{spec}");
        }
    }

    #[test]
    fn ls_08_invalid_operators_values_and_keys_are_errors() {
        for (spec, index, needle) in [
            (
                json!({"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["x"]}]}),
                0,
                "not a valid label selector operator",
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "in", "values": ["x"]}]}),
                0,
                "not a valid label selector operator",
            ),
            (
                json!({"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "app", "operator": "In", "values": []}]}),
                1,
                "must not be empty",
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "NotIn"}]}),
                0,
                "must not be empty",
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]}),
                0,
                "must be empty",
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "DoesNotExist", "values": ["x"]}]}),
                0,
                "must be empty",
            ),
            (
                json!({"matchLabels": {"bad key": "x"}}),
                0,
                "invalid label key",
            ),
            (
                json!({"matchLabels": {"app": "-x"}}),
                0,
                "invalid label value",
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["ok", "not ok"]}]}),
                0,
                "invalid label value",
            ),
            (
                json!({"matchLabels": ["app"]}),
                0,
                "not a label selector object",
            ),
            (json!("app=web"), 0, "not a label selector object"),
        ] {
            let e = sel(spec.clone()).unwrap_err();
            assert_eq!(e.kind, SelectorErrorKind::Invalid, "{spec}");
            assert_eq!(e.position, index, "{spec}");
            assert!(e.message.contains(needle), "{spec}: {}", e.message);
        }
    }

    #[test]
    fn ls_08_an_oversized_object_is_refused() {
        let values: Vec<String> = (0..20_000).map(|i| format!("value-{i}")).collect();
        let e =
            sel(json!({"matchExpressions": [{"key": "app", "operator": "In", "values": values}]}))
                .unwrap_err();
        assert_eq!(e.kind, SelectorErrorKind::TooLong);
    }
}
