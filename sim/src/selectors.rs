//! Label and field selectors, parsed with the Kubernetes grammar.
//!
//! Label selectors follow `k8s.io/apimachinery/pkg/labels`: a lexer that
//! splits identifiers at whitespace and the symbols `! = ( ) , < >`, then
//! requirements `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (..)`,
//! `key notin (..)`, `key>n`, `key<n`, joined by commas. Keys must be
//! qualified names and values valid label values; anything else is an error
//! (the API answers 400 BadRequest). Field selectors are `field=v`,
//! `field==v`, `field!=v` terms with `\,` `\=` `\\` escapes; which fields are
//! allowed is the resource's business (see resources.rs).

use std::collections::BTreeMap;

/// Labels of one object.
pub type Labels = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq,
    Ne,
    In,
    NotIn,
    Exists,
    NotExists,
    Gt,
    Lt,
}

#[derive(Debug, Clone, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

impl Requirement {
    fn matches(&self, labels: &Labels) -> bool {
        let got = labels.get(&self.key);
        match self.op {
            Op::Eq | Op::In => got.is_some_and(|v| self.values.contains(v)),
            Op::Ne | Op::NotIn => !got.is_some_and(|v| self.values.contains(v)),
            Op::Exists => got.is_some(),
            Op::NotExists => got.is_none(),
            Op::Gt | Op::Lt => {
                let (Some(have), Some(want)) = (
                    got.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.op == Op::Gt {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

/// A parsed label selector: every requirement must hold. Empty matches all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Requirement>);

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Gt,
    Lt,
    Open,
    Close,
    Comma,
    End,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Ident(s) => s.clone(),
            Token::Not => "!".into(),
            Token::Eq => "=".into(),
            Token::DoubleEq => "==".into(),
            Token::NotEq => "!=".into(),
            Token::Gt => ">".into(),
            Token::Lt => "<".into(),
            Token::Open => "(".into(),
            Token::Close => ")".into(),
            Token::Comma => ",".into(),
            Token::End => "end of string".into(),
        }
    }
}

fn is_special(c: char) -> bool {
    matches!(c, '!' | '=' | '(' | ')' | ',' | '<' | '>')
}

fn lex(s: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if is_special(c) {
            chars.next();
            let next_eq = chars.peek() == Some(&'=');
            let tok = match c {
                '!' if next_eq => Token::NotEq,
                '!' => Token::Not,
                '=' if next_eq => Token::DoubleEq,
                '=' => Token::Eq,
                '(' => Token::Open,
                ')' => Token::Close,
                ',' => Token::Comma,
                '<' => Token::Lt,
                _ => Token::Gt,
            };
            if matches!(tok, Token::NotEq | Token::DoubleEq) {
                chars.next();
            }
            out.push(tok);
            continue;
        }
        let mut ident = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || is_special(c) {
                break;
            }
            ident.push(c);
            chars.next();
        }
        out.push(Token::Ident(ident));
    }
    out.push(Token::End);
    out
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        self.tokens.get(self.pos).unwrap_or(&Token::End)
    }
    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        self.pos += 1;
        t
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let negated = if *self.peek() == Token::Not {
            self.next();
            true
        } else {
            false
        };
        let key = match self.next() {
            Token::Ident(k) => k,
            other => {
                return Err(format!(
                    "found '{}', expected: identifier",
                    other.describe()
                ))
            }
        };
        validate_key(&key)?;
        if negated {
            return match self.peek() {
                Token::Comma | Token::End => Ok(Requirement {
                    key,
                    op: Op::NotExists,
                    values: vec![],
                }),
                other => Err(format!(
                    "found '{}', expected: ',' or end of string",
                    other.describe()
                )),
            };
        }
        let op = match self.peek() {
            Token::Comma | Token::End => {
                return Ok(Requirement {
                    key,
                    op: Op::Exists,
                    values: vec![],
                })
            }
            Token::Eq | Token::DoubleEq => Op::Eq,
            Token::NotEq => Op::Ne,
            Token::Gt => Op::Gt,
            Token::Lt => Op::Lt,
            Token::Ident(w) if w == "in" => Op::In,
            Token::Ident(w) if w == "notin" => Op::NotIn,
            other => {
                return Err(format!(
                    "found '{}', expected: in, notin, =, ==, !=, gt, lt",
                    other.describe()
                ))
            }
        };
        self.next();
        let values = match op {
            Op::In | Op::NotIn => self.set()?,
            _ => vec![self.exact_value()?],
        };
        for v in &values {
            validate_value(v)?;
        }
        if matches!(op, Op::Gt | Op::Lt) && values.iter().any(|v| v.parse::<i64>().is_err()) {
            return Err(format!(
                "for 'Gt', 'Lt' operators, the value must be an integer: {values:?}"
            ));
        }
        Ok(Requirement { key, op, values })
    }

    fn exact_value(&mut self) -> Result<String, String> {
        match self.peek() {
            Token::Comma | Token::End => Ok(String::new()),
            Token::Ident(_) => match self.next() {
                Token::Ident(v) => Ok(v),
                _ => Err("found unexpected token, expected: identifier".into()),
            },
            other => Err(format!(
                "found '{}', expected: identifier",
                other.describe()
            )),
        }
    }

    /// `( v1, v2, ... )`, as k8s: `()` is the set {""} and empty members are "".
    fn set(&mut self) -> Result<Vec<String>, String> {
        match self.next() {
            Token::Open => {}
            other => return Err(format!("found '{}', expected: '('", other.describe())),
        }
        let mut values = Vec::new();
        let mut current: Option<String> = None;
        loop {
            match self.next() {
                Token::Ident(v) => {
                    if current.is_some() {
                        return Err(format!("found '{v}', expected: ',' or ')'"));
                    }
                    current = Some(v);
                }
                Token::Comma => values.push(current.take().unwrap_or_default()),
                Token::Close => {
                    values.push(current.take().unwrap_or_default());
                    return Ok(values);
                }
                other => {
                    return Err(format!(
                        "found '{}', expected: ',', ')' or identifier",
                        other.describe()
                    ))
                }
            }
        }
    }
}

impl LabelSelector {
    /// Parse a label selector string.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut p = Parser {
            tokens: lex(s),
            pos: 0,
        };
        let mut reqs = Vec::new();
        if *p.peek() == Token::End {
            return Ok(LabelSelector(reqs));
        }
        loop {
            let req = p
                .requirement()
                .map_err(|e| format!("unable to parse requirement: {e}"))?;
            reqs.push(req);
            match p.next() {
                Token::End => break,
                Token::Comma => {}
                other => {
                    return Err(format!(
                        "found '{}', expected: ',' or end of string",
                        other.describe()
                    ))
                }
            }
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether the labels satisfy every requirement.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.0.iter().all(|r| r.matches(labels))
    }

    /// Whether it selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn dns_label_ok(s: &str, max: usize, extra: &[char]) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// A qualified name: `[prefix/]name`, prefix a DNS subdomain.
fn validate_key(k: &str) -> Result<(), String> {
    let (prefix, name) = match k.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    if let Some(p) = prefix {
        let ok = dns_label_ok(p, 253, &['-', '.']) && !p.chars().any(|c| c.is_ascii_uppercase());
        if !ok {
            return Err(format!(
                "invalid label key \"{k}\": prefix part must be a DNS subdomain"
            ));
        }
    }
    if !dns_label_ok(name, 63, &['-', '_', '.']) {
        return Err(format!(
            "invalid label key \"{k}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63)"
        ));
    }
    Ok(())
}

fn validate_value(v: &str) -> Result<(), String> {
    if v.is_empty() || dns_label_ok(v, 63, &['-', '_', '.']) {
        Ok(())
    } else {
        Err(format!(
            "invalid label value: \"{v}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63)"
        ))
    }
}

/// One field requirement.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldRequirement {
    /// The field label, e.g. `status.phase`.
    pub field: String,
    /// `=`/`==` (true) or `!=` (false).
    pub equal: bool,
    /// The (unescaped) value.
    pub value: String,
}

/// A parsed field selector: every requirement must hold. Empty matches all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(pub Vec<FieldRequirement>);

/// Split on separators not preceded by a backslash escape.
fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            cur.push('\\');
            cur.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    if escaped {
        cur.push('\\');
    }
    out.push(cur);
    out
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => out.push(e),
                Some(e) => return Err(format!("invalid field selector escape \\{e}")),
                None => return Err("invalid trailing \\ in field selector".into()),
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

impl FieldSelector {
    /// Parse a field selector string.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        if s.trim().is_empty() {
            return Ok(FieldSelector(out));
        }
        for term in split_unescaped(s, ',') {
            // The first unescaped operator splits the term.
            let (field, equal, raw) = find_op(&term)
                .ok_or_else(|| format!("invalid field selector: '{term}' has no operator"))?;
            let field = field.trim();
            if field.is_empty()
                || !field
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_')
            {
                return Err(format!("invalid field selector: bad field '{field}'"));
            }
            out.push(FieldRequirement {
                field: field.to_string(),
                equal,
                value: unescape(raw)?,
            });
        }
        Ok(FieldSelector(out))
    }

    /// Whether every requirement holds, `get` giving a field's value ("" when unset).
    pub fn matches<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0
            .iter()
            .all(|r| (get(&r.field).unwrap_or("") == r.value) == r.equal)
    }

    /// The fields named.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|r| r.field.as_str())
    }

    /// The value required by `field=value`, if any.
    #[cfg(test)]
    pub fn required(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|r| r.equal && r.field == field)
            .map(|r| r.value.as_str())
    }
}

fn find_op(term: &str) -> Option<(&str, bool, &str)> {
    let b = term.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'!' if b.get(i + 1) == Some(&b'=') => {
                return Some((&term[..i], false, &term[i + 2..]))
            }
            b'=' if b.get(i + 1) == Some(&b'=') => return Some((&term[..i], true, &term[i + 2..])),
            b'=' => return Some((&term[..i], true, &term[i + 1..])),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn ls_label_selector_operators_match() {
        let l = labels(&[
            ("app", "web"),
            ("tier", "fe"),
            ("n", "5"),
            ("example.com/x", "y"),
        ]);
        for (sel, want) in [
            ("", true),
            ("app=web", true),
            ("app = web", true),
            ("app==web,tier=fe", true),
            ("app!=web", false),
            ("app!=api", true),
            ("missing!=x", true),
            ("app in (web, api)", true),
            ("app in(api)", false),
            ("app notin (web)", false),
            ("missing notin (web)", true),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("missing", false),
            ("n>4", true),
            ("n<5", false),
            ("missing>1", false),
            ("example.com/x=y", true),
            ("app=", false),
            ("missing=", false),
            ("app in (web,)", true),
            ("app, !missing, tier in (fe)", true),
        ] {
            let parsed = LabelSelector::parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(parsed.matches(&l), want, "{sel}");
        }
    }

    #[test]
    fn ls_malformed_label_selectors_are_rejected() {
        for bad in [
            "=web",
            "a b=c",
            "app in web",
            "app in (web",
            "app=we b",
            ",",
            "app,",
            "app=-x",
            "app=x-",
            "!",
            "!app=x",
            "app===x",
            "Bad_Prefix/x=y",
            "a/b/c",
            "app in (a b)",
            "n>x",
            "app=(x)",
            "app)",
            &format!("{}=x", "k".repeat(64)),
            &format!("k={}", "v".repeat(64)),
        ] {
            assert!(
                LabelSelector::parse(bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn field_selectors_parse_escape_and_match() {
        let s = FieldSelector::parse("metadata.name=a\\,b,status.phase!=Pending").unwrap();
        assert_eq!(s.0.len(), 2);
        assert_eq!(s.0[0].value, "a,b");
        assert_eq!(s.required("metadata.name"), Some("a,b"));
        let get = |f: &str| match f {
            "metadata.name" => Some("a,b"),
            "status.phase" => Some("Running"),
            _ => None,
        };
        assert!(s.matches(get));
        let s = FieldSelector::parse("status.phase==Running,spec.nodeName=").unwrap();
        assert!(s.matches(get), "unset field equals the empty string");
        assert!(!FieldSelector::parse("metadata.name!=a\\,b")
            .unwrap()
            .matches(get));
        for bad in ["nonsense", "=x", "a b=c", "x=\\q"] {
            assert!(FieldSelector::parse(bad).is_err(), "{bad}");
        }
    }
}
