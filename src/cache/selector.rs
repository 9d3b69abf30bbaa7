//! Label and field selectors: parsing with Kubernetes' grammar and validation,
//! matching, and a canonical string form (equal selectors print equally, so
//! the informer factory can key on it).

use std::fmt;

use crate::rest::KubeObject;

/// A selector that could not be parsed, with the character offset of the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorError {
    /// What is wrong.
    pub message: String,
    /// Character offset into the input.
    pub position: usize,
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at position {})", self.message, self.position)
    }
}

impl std::error::Error for SelectorError {}

/// One operator of a label requirement.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operator {
    /// `key=value` / `key==value`.
    Equals,
    /// `key!=value` (also matches objects without the label).
    NotEquals,
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)` (also matches objects without the label).
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
}

/// One requirement: key, operator, values (sorted, deduplicated).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub op: Operator,
    /// The values (one for `=`/`!=`, none for exists).
    pub values: Vec<String>,
}

impl Requirement {
    fn matches(&self, labels: &crate::rest::Labels) -> bool {
        let v = labels.get(&self.key);
        match self.op {
            Operator::Equals | Operator::In => {
                v.is_some_and(|v| self.values.iter().any(|x| x == v))
            }
            Operator::NotEquals | Operator::NotIn => {
                !v.is_some_and(|v| self.values.iter().any(|x| x == v))
            }
            Operator::Exists => v.is_some(),
            Operator::DoesNotExist => v.is_none(),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.values.first().map(String::as_str).unwrap_or("");
        match self.op {
            Operator::Equals => write!(f, "{}={}", self.key, first),
            Operator::NotEquals => write!(f, "{}!={}", self.key, first),
            Operator::In => write!(f, "{} in ({})", self.key, self.values.join(",")),
            Operator::NotIn => write!(f, "{} notin ({})", self.key, self.values.join(",")),
            Operator::Exists => write!(f, "{}", self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
        }
    }
}

/// A parsed label selector: all requirements must hold (comma = AND).
/// The empty selector matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Eq,
    DoubleEq,
    NotEq,
    Bang,
    Open,
    Close,
    Comma,
}

fn lex(input: &str) -> Result<Vec<(Tok, usize)>, SelectorError> {
    let chars: Vec<(usize, char)> = input.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&(pos, c)) = chars.get(i) {
        let cpos = input[..pos].chars().count();
        match c {
            c if c.is_whitespace() => i += 1,
            ',' => {
                out.push((Tok::Comma, cpos));
                i += 1;
            }
            '(' => {
                out.push((Tok::Open, cpos));
                i += 1;
            }
            ')' => {
                out.push((Tok::Close, cpos));
                i += 1;
            }
            '=' => {
                if chars.get(i + 1).map(|x| x.1) == Some('=') {
                    out.push((Tok::DoubleEq, cpos));
                    i += 2;
                } else {
                    out.push((Tok::Eq, cpos));
                    i += 1;
                }
            }
            '!' => {
                if chars.get(i + 1).map(|x| x.1) == Some('=') {
                    out.push((Tok::NotEq, cpos));
                    i += 2;
                } else {
                    out.push((Tok::Bang, cpos));
                    i += 1;
                }
            }
            _ => {
                let start = i;
                while let Some(&(_, c)) = chars.get(i) {
                    if c.is_whitespace() || matches!(c, ',' | '(' | ')' | '=' | '!') {
                        break;
                    }
                    i += 1;
                }
                let s: String = chars[start..i].iter().map(|x| x.1).collect();
                out.push((Tok::Ident(s), cpos));
            }
        }
    }
    Ok(out)
}

fn is_name_part(s: &str, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// Validate a label key: `[prefix/]name`, prefix a DNS subdomain (≤ 253),
/// name ≤ 63 characters of `[A-Za-z0-9._-]` starting and ending alphanumeric.
pub fn validate_label_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        if !is_dns_subdomain(p) {
            return Err(format!("invalid label key {key:?}: prefix must be a DNS subdomain (lowercase, at most 253 characters)"));
        }
    }
    if !is_name_part(name, 63) {
        return Err(format!("invalid label key {key:?}: name must be at most 63 characters, alphanumeric with '-', '_' or '.' inside"));
    }
    Ok(())
}

/// Validate a label value: empty, or ≤ 63 characters of `[A-Za-z0-9._-]`
/// starting and ending alphanumeric.
pub fn validate_label_value(v: &str) -> Result<(), String> {
    if v.is_empty() || is_name_part(v, 63) {
        Ok(())
    } else {
        Err(format!("invalid label value {v:?}: at most 63 characters, alphanumeric with '-', '_' or '.' inside"))
    }
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    i: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.0)
    }
    fn pos(&self) -> usize {
        self.toks.get(self.i).map_or(self.end, |t| t.1)
    }
    fn err<T>(&self, message: impl Into<String>) -> Result<T, SelectorError> {
        Err(SelectorError {
            message: message.into(),
            position: self.pos(),
        })
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.i).map(|t| t.0.clone());
        self.i += 1;
        t
    }

    fn key(&mut self) -> Result<String, SelectorError> {
        let pos = self.pos();
        match self.next() {
            Some(Tok::Ident(k)) => {
                validate_label_key(&k).map_err(|message| SelectorError {
                    message,
                    position: pos,
                })?;
                Ok(k)
            }
            _ => Err(SelectorError {
                message: "expected a label key".into(),
                position: pos,
            }),
        }
    }

    fn value(&mut self) -> Result<String, SelectorError> {
        let pos = self.pos();
        let v = match self.peek() {
            Some(Tok::Ident(v)) => {
                let v = v.clone();
                self.i += 1;
                v
            }
            // An empty value (`key=` followed by `,` or the end) is allowed.
            Some(Tok::Comma) | None => String::new(),
            _ => return self.err("expected a label value"),
        };
        validate_label_value(&v).map_err(|message| SelectorError {
            message,
            position: pos,
        })?;
        Ok(v)
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        if self.peek() == Some(&Tok::Bang) {
            self.i += 1;
            let key = self.key()?;
            return Ok(Requirement {
                key,
                op: Operator::DoesNotExist,
                values: vec![],
            });
        }
        let key = self.key()?;
        let op = match self.peek() {
            None | Some(Tok::Comma) => {
                return Ok(Requirement {
                    key,
                    op: Operator::Exists,
                    values: vec![],
                })
            }
            Some(Tok::Eq) | Some(Tok::DoubleEq) => Operator::Equals,
            Some(Tok::NotEq) => Operator::NotEquals,
            Some(Tok::Ident(w)) if w == "in" => Operator::In,
            Some(Tok::Ident(w)) if w == "notin" => Operator::NotIn,
            _ => return self.err("expected one of =, ==, !=, in, notin, or ','"),
        };
        self.i += 1;
        let mut values = match op {
            Operator::In | Operator::NotIn => {
                if self.next() != Some(Tok::Open) {
                    self.i -= 1;
                    return self.err("expected '(' after in/notin");
                }
                let mut vals = Vec::new();
                loop {
                    if self.peek() == Some(&Tok::Close) && vals.is_empty() {
                        return self.err("expected at least one value in the set");
                    }
                    let pos = self.pos();
                    match self.next() {
                        Some(Tok::Ident(v)) => {
                            validate_label_value(&v).map_err(|message| SelectorError {
                                message,
                                position: pos,
                            })?;
                            vals.push(v);
                        }
                        _ => {
                            self.i -= 1;
                            return self.err("expected a value in the set");
                        }
                    }
                    match self.next() {
                        Some(Tok::Comma) => continue,
                        Some(Tok::Close) => break,
                        _ => {
                            self.i = self.i.saturating_sub(1);
                            return self.err("expected ',' or ')' in the set");
                        }
                    }
                }
                vals
            }
            _ => vec![self.value()?],
        };
        values.sort();
        values.dedup();
        Ok(Requirement { key, op, values })
    }
}

impl LabelSelector {
    /// Parse a selector (`app=web,tier in (fe,be),!legacy`).
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let toks = lex(input)?;
        let mut p = Parser {
            toks,
            i: 0,
            end: input.chars().count(),
        };
        let mut requirements = Vec::new();
        if p.peek().is_none() {
            return Ok(LabelSelector::default());
        }
        loop {
            requirements.push(p.requirement()?);
            match p.next() {
                None => break,
                Some(Tok::Comma) => {
                    if p.peek().is_none() {
                        return p.err("expected a requirement after ','");
                    }
                }
                Some(_) => {
                    p.i -= 1;
                    return p.err("expected ',' between requirements");
                }
            }
        }
        requirements.sort();
        requirements.dedup();
        Ok(LabelSelector { requirements })
    }

    /// The selector matching objects whose labels include all of `pairs`.
    pub fn from_equalities<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut requirements: Vec<Requirement> = pairs
            .into_iter()
            .map(|(k, v)| Requirement {
                key: k.into(),
                op: Operator::Equals,
                values: vec![v.into()],
            })
            .collect();
        requirements.sort();
        LabelSelector { requirements }
    }

    /// Whether the selector has no requirements (matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements in canonical order.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether an object's labels satisfy every requirement.
    pub fn matches(&self, obj: &KubeObject) -> bool {
        let labels = obj.meta().labels();
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// The first `key=value` equality requirement, which an index on that
    /// label can serve.
    pub fn first_equality(&self) -> Option<(&str, &str)> {
        self.requirements
            .iter()
            .find_map(|r| match (&r.op, r.values.as_slice()) {
                (Operator::Equals, [v]) => Some((r.key.as_str(), v.as_str())),
                (Operator::In, [v]) => Some((r.key.as_str(), v.as_str())),
                _ => None,
            })
    }
}

impl fmt::Display for LabelSelector {
    /// Canonical form: requirements sorted, values sorted, `=` for equality.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// One field requirement.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldRequirement {
    /// Dotted path (`metadata.name`, `status.phase`).
    pub field: String,
    /// `true` for `=`/`==`, `false` for `!=`.
    pub equals: bool,
    /// The value to compare with.
    pub value: String,
}

/// A parsed field selector (`metadata.name=a,status.phase!=Running`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parse a field selector.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        if input.trim().is_empty() {
            return Ok(FieldSelector::default());
        }
        let mut offset = 0;
        for part in input.split(',') {
            let pos = input[..offset].chars().count();
            offset += part.len() + 1;
            let (field, equals, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(SelectorError {
                    message: format!(
                        "invalid field selector requirement {part:?}: expected =, == or !="
                    ),
                    position: pos,
                });
            };
            let field = field.trim();
            if field.is_empty()
                || !field.split('.').all(|s| {
                    !s.is_empty()
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                })
            {
                return Err(SelectorError {
                    message: format!("invalid field path {field:?}"),
                    position: pos,
                });
            }
            requirements.push(FieldRequirement {
                field: field.to_owned(),
                equals,
                value: value.trim().to_owned(),
            });
        }
        requirements.sort();
        requirements.dedup();
        Ok(FieldSelector { requirements })
    }

    /// Whether the selector has no requirements.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether the object satisfies every requirement. `metadata.name` and
    /// `metadata.namespace` read parsed metadata; other paths are read from
    /// the object's bytes (absent or `null` fields compare as the empty string).
    pub fn matches(&self, obj: &KubeObject) -> bool {
        self.requirements.iter().all(|r| {
            let actual: String = match r.field.as_str() {
                "metadata.name" => obj.name().to_owned(),
                "metadata.namespace" => obj.namespace().unwrap_or("").to_owned(),
                path => obj.field_text(path).unwrap_or_default(),
            };
            (actual == r.value) == r.equals
        })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(
                f,
                "{}{}{}",
                r.field,
                if r.equals { "=" } else { "!=" },
                r.value
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(labels: serde_json::Value) -> KubeObject {
        KubeObject::from_value(&json!({"metadata": {"name": "p", "namespace": "ns", "labels": labels}, "status": {"phase": "Running"}})).unwrap()
    }

    #[test]
    fn ls_valid_selectors_parse_match_and_print_canonically() {
        let p = pod(json!({"app": "web", "tier": "fe", "example.com/team": "a"}));
        for (sel, matches, canonical) in [
            ("", true, ""),
            ("app=web", true, "app=web"),
            ("app==web", true, "app=web"),
            ("app!=web", false, "app!=web"),
            ("tier, app = web", true, "app=web,tier"),
            ("app in (api, web)", true, "app in (api,web)"),
            ("app in (web,api,web)", true, "app in (api,web)"),
            ("app notin (web)", false, "app notin (web)"),
            ("missing notin (x)", true, "missing notin (x)"),
            ("!legacy", true, "!legacy"),
            ("!app", false, "!app"),
            ("example.com/team=a", true, "example.com/team=a"),
            ("app=", false, "app="),
            ("missing!=x", true, "missing!=x"),
        ] {
            let s = LabelSelector::parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(s.matches(&p), matches, "{sel}");
            assert_eq!(s.to_string(), canonical, "{sel}");
            assert_eq!(
                LabelSelector::parse(&s.to_string()).unwrap(),
                s,
                "round trip of {sel}"
            );
        }
        assert_eq!(
            LabelSelector::parse("b=1,a=2").unwrap(),
            LabelSelector::parse("a=2, b==1").unwrap()
        );
    }

    #[test]
    fn ls_invalid_selectors_report_the_position() {
        for (sel, pos) in [
            ("app in (", 8),
            ("app in ()", 8),
            ("app in web", 7),
            ("app=web,", 8),
            (",app", 0),
            ("app=we b", 7),
            ("-app=x", 0),
            ("app=-x", 4),
            ("Example.com/a=b", 0),
            ("a b", 2),
            ("app >= 1", 4),
            ("app notin (a b)", 13),
        ] {
            let e = LabelSelector::parse(sel).expect_err(sel);
            assert_eq!(e.position, pos, "{sel}: {e}");
        }
        let long = format!("{}=x", "a".repeat(64));
        assert!(LabelSelector::parse(&long).is_err());
        let longval = format!("a={}", "b".repeat(64));
        assert!(LabelSelector::parse(&longval).is_err());
    }

    #[test]
    fn ls_field_selectors() {
        let p = pod(json!({}));
        assert!(
            FieldSelector::parse("metadata.name=p,metadata.namespace==ns")
                .unwrap()
                .matches(&p)
        );
        assert!(FieldSelector::parse("status.phase=Running")
            .unwrap()
            .matches(&p));
        assert!(!FieldSelector::parse("status.phase!=Running")
            .unwrap()
            .matches(&p));
        assert!(
            FieldSelector::parse("spec.nodeName=").unwrap().matches(&p),
            "absent compares as empty"
        );
        let e = FieldSelector::parse("metadata.name=a,bogus").unwrap_err();
        assert_eq!(e.position, 16);
        assert_eq!(
            FieldSelector::parse("b=1,a=2").unwrap().to_string(),
            "a=2,b=1"
        );
    }
}
