//! Label and field selectors: parsing with Kubernetes' grammar and validation,
//! matching, and a canonical string form (equal selectors print equally, so
//! the informer factory can key on it).
//!
//! Parsing is linear in the input (selectors come from users, e.g. a
//! dashboard's filter field on every keystroke) and refuses inputs over
//! [`MAX_SELECTOR_BYTES`].

use std::fmt;
use std::iter::Peekable;
use std::num::IntErrorKind;
use std::str::Chars;

use crate::rest::KubeObject;

/// The longest label or field selector accepted, in bytes of UTF-8: 64 KiB.
/// Generous: a selector travels in a URL query, which proxies commonly cap
/// at 8–16 KB, and the longest realistic one (a set of a few hundred
/// names) is a fraction of it; the cap bounds what a hostile or runaway
/// input costs.
pub const MAX_SELECTOR_BYTES: usize = 64 * 1024;

/// A selector that could not be parsed, with the character offset of the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorError {
    /// What is wrong.
    pub message: String,
    /// Character offset into the input.
    pub position: usize,
    /// Which kind of problem.
    pub kind: SelectorErrorKind,
}

/// The kinds of [`SelectorError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectorErrorKind {
    /// The input does not follow the selector grammar, or a key or value is
    /// invalid.
    Syntax,
    /// The input is longer than [`MAX_SELECTOR_BYTES`]; `position` is the
    /// first character past the limit.
    TooLong,
    /// A selector object (`matchLabels` / `matchExpressions`) has an
    /// unknown operator, values that do not fit its operator, or an invalid
    /// key or value; `position` is the offending requirement's index
    /// (`matchLabels` entries first, in key order, then the expressions).
    Invalid,
}

impl SelectorError {
    fn syntax(message: impl Into<String>, position: usize) -> Self {
        SelectorError {
            message: message.into(),
            position,
            kind: SelectorErrorKind::Syntax,
        }
    }
}

/// Refuse an input over [`MAX_SELECTOR_BYTES`], before any other work.
fn check_length(input: &str) -> Result<(), SelectorError> {
    if input.len() <= MAX_SELECTOR_BYTES {
        return Ok(());
    }
    // Characters that fit wholly within the limit.
    let position = input
        .char_indices()
        .take_while(|(i, c)| i + c.len_utf8() <= MAX_SELECTOR_BYTES)
        .count();
    Err(SelectorError {
        message: format!(
            "selector is {} bytes long, over the limit of {MAX_SELECTOR_BYTES}",
            input.len()
        ),
        position,
        kind: SelectorErrorKind::TooLong,
    })
}

#[cfg(test)]
thread_local! {
    /// Characters the parsers have stepped over (tests assert linearity).
    static STEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A character cursor that knows its character offset, so positions cost
/// nothing to compute (counting from the start per token is quadratic).
struct Cursor<'a> {
    chars: Peekable<Chars<'a>>,
    /// Characters consumed.
    pos: usize,
    /// Bytes consumed.
    byte: usize,
}

impl<'a> Cursor<'a> {
    fn new(input: &'a str) -> Self {
        Cursor {
            chars: input.chars().peekable(),
            pos: 0,
            byte: 0,
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        self.pos += 1;
        self.byte += c.len_utf8();
        #[cfg(test)]
        STEPS.with(|s| s.set(s.get() + 1));
        Some(c)
    }
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
    /// `key>N`: the label is present, its value an integer, and greater
    /// than `N` (the one value, an integer).
    GreaterThan,
    /// `key<N`: the label is present, its value an integer, and less than
    /// `N`.
    LessThan,
}

/// One requirement: key, operator, values (sorted, deduplicated).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub op: Operator,
    /// The values (one for `=`/`!=`/`>`/`<`, none for exists). For `>` and
    /// `<` it is an integer, kept as written (`007` prints as `007`).
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
            Operator::GreaterThan | Operator::LessThan => {
                // As client-go: a missing label, a label value or a bound
                // that is not a 64-bit integer does not match (not an error).
                let (Some(have), [bound]) = (v, self.values.as_slice()) else {
                    return false;
                };
                let (Ok(have), Ok(bound)) = (have.parse::<i64>(), bound.parse::<i64>()) else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    have > bound
                } else {
                    have < bound
                }
            }
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
            Operator::GreaterThan => write!(f, "{}>{}", self.key, first),
            Operator::LessThan => write!(f, "{}<{}", self.key, first),
        }
    }
}

/// A parsed label selector: all requirements must hold (comma = AND).
/// The empty selector matches everything; [`LabelSelector::nothing`]
/// matches no object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    pub(super) requirements: Vec<Requirement>,
    /// client-go's `labels.Nothing()`: what a null API selector means.
    pub(super) nothing: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Eq,
    DoubleEq,
    NotEq,
    Bang,
    /// `>`.
    Gt,
    /// `<`.
    Lt,
    Open,
    Close,
    Comma,
}

fn lex(input: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let mut cur = Cursor::new(input);
    loop {
        let at = cur.pos;
        let Some(c) = cur.next() else {
            return out;
        };
        let tok = match c {
            c if c.is_whitespace() => continue,
            ',' => Tok::Comma,
            '(' => Tok::Open,
            ')' => Tok::Close,
            '>' => Tok::Gt,
            '<' => Tok::Lt,
            '=' | '!' => {
                let double = cur.peek() == Some('=');
                if double {
                    cur.next();
                }
                match (c, double) {
                    ('=', true) => Tok::DoubleEq,
                    ('=', false) => Tok::Eq,
                    (_, true) => Tok::NotEq,
                    (_, false) => Tok::Bang,
                }
            }
            _ => {
                let mut s = String::from(c);
                while let Some(c) = cur.peek() {
                    if c.is_whitespace() || matches!(c, ',' | '(' | ')' | '=' | '!' | '>' | '<') {
                        break;
                    }
                    s.push(c);
                    cur.next();
                }
                Tok::Ident(s)
            }
        };
        out.push((tok, at));
    }
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
        Err(SelectorError::syntax(message, self.pos()))
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
                validate_label_key(&k).map_err(|message| SelectorError::syntax(message, pos))?;
                Ok(k)
            }
            _ => Err(SelectorError::syntax("expected a label key", pos)),
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
        validate_label_value(&v).map_err(|message| SelectorError::syntax(message, pos))?;
        Ok(v)
    }

    /// The one value after `key>` / `key<` (`sym`, whose token is at
    /// `op_pos`): as client-go, a 64-bit integer (`strconv.ParseInt`) that is
    /// also a valid label value, so digits only, without a sign.
    fn integer(&mut self, key: &str, sym: char, op_pos: usize) -> Result<String, SelectorError> {
        let pos = self.pos();
        let v = match self.peek() {
            Some(Tok::Ident(v)) => v.clone(),
            // `>=` lexes as `>` then `=`, as in client-go: not an operator.
            Some(Tok::Eq | Tok::DoubleEq) => {
                let (bound, other) = if sym == '>' {
                    ("N-1", "at least")
                } else {
                    ("N+1", "at most")
                };
                return Err(SelectorError::syntax(
                    format!(
                        "'{sym}=' is not a label selector operator: '{sym}' is strict, \
                         so for \"{other} N\" write {key}{sym}{bound}"
                    ),
                    op_pos,
                ));
            }
            Some(Tok::Open) => {
                return self.err(format!("'{sym}' takes one integer, not a set of values"))
            }
            _ => return self.err(format!("expected an integer after '{sym}'")),
        };
        self.i += 1;
        let invalid = |why: &str| {
            Err(SelectorError::syntax(
                format!("invalid value {v:?} for '{sym}': {why}"),
                pos,
            ))
        };
        match v.parse::<i64>() {
            Ok(_) if v.starts_with(['-', '+']) => {
                return invalid(
                    "a sign is not allowed (the value must also be a label value, \
                     which starts with a letter or digit)",
                )
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    IntErrorKind::PosOverflow | IntErrorKind::NegOverflow
                ) =>
            {
                return invalid("out of range of a 64-bit integer")
            }
            Err(_) => return invalid("must be an integer"),
        }
        // Leading zeros can make it too long for a label value.
        validate_label_value(&v).map_err(|message| SelectorError::syntax(message, pos))?;
        if let Some(Tok::Ident(_)) = self.peek() {
            return self.err(format!(
                "'{sym}' takes exactly one integer (or a ',' is missing)"
            ));
        }
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
            Some(Tok::Gt) => Operator::GreaterThan,
            Some(Tok::Lt) => Operator::LessThan,
            Some(Tok::Ident(w)) if w == "in" => Operator::In,
            Some(Tok::Ident(w)) if w == "notin" => Operator::NotIn,
            _ => return self.err("expected one of =, ==, !=, >, <, in, notin, or ','"),
        };
        let op_pos = self.pos();
        self.i += 1;
        let mut values = match op {
            Operator::In | Operator::NotIn => {
                if self.next() != Some(Tok::Open) {
                    self.i -= 1;
                    return self.err("expected '(' after in/notin");
                }
                let mut vals = Vec::new();
                loop {
                    let pos = self.pos();
                    match self.peek() {
                        // An empty item is the empty value, as labels.Parse
                        // reads `()`, `(,b)`, `(a,,b)` and `(a,)`.
                        Some(Tok::Comma | Tok::Close) => vals.push(String::new()),
                        Some(Tok::Ident(_)) => {
                            if let Some(Tok::Ident(v)) = self.next() {
                                validate_label_value(&v)
                                    .map_err(|message| SelectorError::syntax(message, pos))?;
                                vals.push(v);
                            }
                        }
                        _ => return self.err("expected a value in the set"),
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
            Operator::GreaterThan => vec![self.integer(&key, '>', op_pos)?],
            Operator::LessThan => vec![self.integer(&key, '<', op_pos)?],
            _ => vec![self.value()?],
        };
        crate::rt::sort::sort(&mut values);
        values.dedup();
        Ok(Requirement { key, op, values })
    }
}

impl LabelSelector {
    /// Parse a selector (`app=web,tier in (fe,be),!legacy,gen>1`); at most
    /// [`MAX_SELECTOR_BYTES`] long.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        check_length(input)?;
        let toks = lex(input);
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
        crate::rt::sort::sort(&mut requirements);
        requirements.dedup();
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }

    /// The selector that matches no object (client-go's `labels.Nothing()`,
    /// what a null `metav1.LabelSelector` means). It has no string form:
    /// it prints as `<nothing>`, which no server or parser accepts, so it
    /// can never widen into "everything" on the way to a query.
    pub fn nothing() -> Self {
        LabelSelector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Whether this is [`LabelSelector::nothing`].
    pub fn is_nothing(&self) -> bool {
        self.nothing
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
        crate::rt::sort::sort(&mut requirements);
        LabelSelector {
            requirements,
            nothing: false,
        }
    }

    /// Whether the selector has no requirements (matches everything);
    /// false for [`LabelSelector::nothing`].
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// The requirements in canonical order.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether an object's labels satisfy every requirement.
    pub fn matches(&self, obj: &KubeObject) -> bool {
        if self.nothing {
            return false;
        }
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
        if self.nothing {
            return f.write_str("<nothing>");
        }
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
    /// The value to compare with (escapes undone).
    pub value: String,
}

/// A parsed field selector (`metadata.name=a,status.phase!=Running`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parse a field selector; at most [`MAX_SELECTOR_BYTES`] long.
    ///
    /// Kubernetes' grammar (`fields.ParseSelector`): requirements split at
    /// unescaped commas (empty ones are skipped); each splits at its first
    /// `!=`, `==` or `=`; in a value, `\\`, `\,` and `\=` stand for
    /// themselves and an unescaped `,` or `=` is an error. Beyond it, the
    /// field must be a dotted path and whitespace around a field or value is
    /// ignored.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        check_length(input)?;
        let mut requirements = Vec::new();
        let mut cur = Cursor::new(input);
        loop {
            let (pos, from) = (cur.pos, cur.byte);
            let mut escaped = false;
            while let Some(c) = cur.peek() {
                if c == ',' && !escaped {
                    break;
                }
                escaped = c == '\\' && !escaped;
                cur.next();
            }
            let part = input.get(from..cur.byte).unwrap_or_default();
            if !part.trim().is_empty() {
                requirements.push(Self::requirement(part, pos)?);
            }
            // The ',' (or the end).
            if cur.next().is_none() {
                break;
            }
        }
        crate::rt::sort::sort(&mut requirements);
        requirements.dedup();
        Ok(FieldSelector { requirements })
    }

    /// One `field=value` / `field==value` / `field!=value` starting at
    /// character `pos`.
    fn requirement(part: &str, pos: usize) -> Result<FieldRequirement, SelectorError> {
        // The first operator from the left; at one spot `!=` and `==` win
        // over `=`, so `a==b` is not `a` = `=b`.
        let split = part.char_indices().find_map(|(i, _)| {
            let rest = part.get(i..)?;
            [("!=", false), ("==", true), ("=", true)]
                .into_iter()
                .find(|(op, _)| rest.starts_with(op))
                .map(|(op, equals)| (i, op.len(), equals))
        });
        let Some((at, op_len, equals)) = split else {
            return Err(SelectorError::syntax(
                format!("invalid field selector requirement {part:?}: expected =, == or !="),
                pos,
            ));
        };
        let field_text = part.get(..at).unwrap_or_default();
        let value_text = part.get(at + op_len..).unwrap_or_default();
        let field = field_text.trim();
        if field.is_empty()
            || !field.split('.').all(|s| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            })
        {
            return Err(SelectorError::syntax(
                format!("invalid field path {field:?}"),
                pos,
            ));
        }
        let value = value_text.trim();
        let leading = value_text.chars().take_while(|c| c.is_whitespace()).count();
        let value_pos = pos + field_text.chars().count() + op_len + leading;
        Ok(FieldRequirement {
            field: field.to_owned(),
            equals,
            value: unescape_field_value(value, value_pos)?,
        })
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
            let equal = match r.field.as_str() {
                "metadata.name" => obj.name() == r.value,
                "metadata.namespace" => obj.namespace().unwrap_or("") == r.value,
                path => obj.field_value(path).as_deref().unwrap_or("") == r.value,
            };
            equal == r.equals
        })
    }

    /// The namespace an equality requirement on `metadata.namespace` names
    /// (the last, if several): a lister can read that namespace's index
    /// instead of every object.
    pub fn namespace_equal(&self) -> Option<&str> {
        self.requirements
            .iter()
            .rev()
            .find(|r| r.equals && r.field == "metadata.namespace")
            .map(|r| r.value.as_str())
    }
}

/// A field selector value with Kubernetes' escapes undone (`fields.UnescapeValue`);
/// `pos` is the character offset of `text` for errors.
fn unescape_field_value(text: &str, pos: usize) -> Result<String, SelectorError> {
    let mut out = String::with_capacity(text.len());
    let mut escaped = false;
    for (i, c) in text.chars().enumerate() {
        if escaped {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(SelectorError::syntax(
                    format!("invalid escape sequence \\{c} in a field selector value"),
                    pos + i - 1,
                ));
            }
            out.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, ',' | '=') {
            return Err(SelectorError::syntax(
                format!("unescaped {c:?} in a field selector value (write \\{c})"),
                pos + i,
            ));
        } else {
            out.push(c);
        }
    }
    if escaped {
        return Err(SelectorError::syntax(
            "a field selector value ends in a lone backslash",
            pos + text.chars().count() - 1,
        ));
    }
    Ok(out)
}

/// Escape `\`, `,` and `=` in a field selector value (`fields.EscapeValue`).
fn escape_field_value(v: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for c in v.chars() {
        if matches!(c, '\\' | ',' | '=') {
            f.write_str("\\")?;
        }
        write!(f, "{c}")?;
    }
    Ok(())
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}{}", r.field, if r.equals { "=" } else { "!=" })?;
            escape_field_value(&r.value, f)?;
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

    /// labels.Parse reads an empty item of a set as the empty value.
    #[test]
    fn ls_empty_items_in_a_set_are_the_empty_value() {
        let empty = pod(json!({"a": ""}));
        let b = pod(json!({"a": "b"}));
        let c = pod(json!({"a": "c"}));
        for (sel, printed, matches_empty, matches_b, matches_c) in [
            ("a in ()", "a in ()", true, false, false),
            ("a in (,b)", "a in (,b)", true, true, false),
            ("a in (b,,c)", "a in (,b,c)", true, true, true),
            ("a in (b,)", "a in (,b)", true, true, false),
            ("a notin ()", "a notin ()", false, true, true),
        ] {
            let s = LabelSelector::parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(s.to_string(), printed, "{sel}");
            assert_eq!(
                LabelSelector::parse(printed).as_ref(),
                Ok(&s),
                "{sel} round trip"
            );
            assert_eq!(s.matches(&empty), matches_empty, "{sel} on a=\"\"");
            assert_eq!(s.matches(&b), matches_b, "{sel} on a=b");
            assert_eq!(s.matches(&c), matches_c, "{sel} on a=c");
        }
    }

    #[test]
    fn ls_invalid_selectors_report_the_position() {
        for (sel, pos) in [
            ("app in (", 8),
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

    /// A pod in `ns` named `name` with `labels`, for the lister.
    fn named_pod(name: &str, labels: serde_json::Value) -> KubeObject {
        KubeObject::from_value(
            &json!({"metadata": {"name": name, "namespace": "ns", "labels": labels}}),
        )
        .unwrap()
    }

    #[test]
    fn ls_gt_and_lt_parse_match_and_print_like_client_go() {
        // (selector, canonical form, label `gen` of the object or absent,
        // whether it matches)
        for (sel, canonical, gen, matches) in [
            ("gen>1", "gen>1", Some("2"), true),
            ("gen>1", "gen>1", Some("1"), false),
            ("gen>1", "gen>1", Some("0"), false),
            ("gen>1", "gen>1", None, false),
            ("gen<1", "gen<1", Some("0"), true),
            ("gen<1", "gen<1", Some("1"), false),
            ("gen<1", "gen<1", Some("2"), false),
            // Absent is not "less than": unlike `!=`/`notin`.
            ("gen<1", "gen<1", None, false),
            // Not an integer: no match, no error.
            ("gen>1", "gen>1", Some("v2"), false),
            ("gen<1", "gen<1", Some("v0"), false),
            ("gen<1", "gen<1", Some(""), false),
            ("gen>1", "gen>1", Some("1.5"), false),
            // Compared as integers, not strings ("10" < "9" as text).
            ("gen>9", "gen>9", Some("10"), true),
            ("gen<10", "gen<10", Some("9"), true),
            // Leading zeros are integers too (and kept as written).
            ("gen>007", "gen>007", Some("8"), true),
            ("gen>7", "gen>7", Some("007"), false),
            ("gen>7", "gen>7", Some("008"), true),
            // Negative label values (possible in a local cache) compare as
            // numbers; `-` and `+` parse as in strconv.ParseInt.
            ("gen>0", "gen>0", Some("-1"), false),
            ("gen<0", "gen<0", Some("-1"), true),
            ("gen<0", "gen<0", Some("-9223372036854775808"), true),
            ("gen>0", "gen>0", Some("+5"), true),
            // A label value out of the 64-bit range does not match.
            ("gen>0", "gen>0", Some("9223372036854775808"), false),
            ("gen<1", "gen<1", Some("-9223372036854775809"), false),
            // The 64-bit bounds themselves.
            (
                "gen<9223372036854775807",
                "gen<9223372036854775807",
                Some("9223372036854775806"),
                true,
            ),
            (
                "gen<9223372036854775807",
                "gen<9223372036854775807",
                Some("9223372036854775807"),
                false,
            ),
            (
                "gen>9223372036854775807",
                "gen>9223372036854775807",
                Some("9223372036854775807"),
                false,
            ),
            ("gen>0", "gen>0", Some("9223372036854775807"), true),
            // Whitespace around the operator, as for the others.
            ("gen > 1", "gen>1", Some("2"), true),
            ("  gen\t<\t10 ", "gen<10", Some("2"), true),
            // Combined requirements: all must hold.
            ("app=web,gen>1", "app=web,gen>1", Some("2"), true),
            ("app=web,gen>1", "app=web,gen>1", Some("1"), false),
            ("gen>1, app = web", "app=web,gen>1", Some("3"), true),
            ("app=db,gen>1", "app=db,gen>1", Some("3"), false),
            ("gen>1,gen<3", "gen>1,gen<3", Some("2"), true),
            ("gen>1,gen<3", "gen>1,gen<3", Some("3"), false),
            ("gen>1,gen", "gen,gen>1", Some("2"), true),
            // `key>1,2` is `key>1` and "label 2 exists", as in client-go.
            ("gen>1,2", "2,gen>1", Some("5"), false),
            ("gen>1,!2", "!2,gen>1", Some("5"), true),
            ("example.com/gen>1", "example.com/gen>1", None, false),
        ] {
            let labels = match gen {
                Some(g) => json!({"app": "web", "gen": g}),
                None => json!({"app": "web"}),
            };
            let s = LabelSelector::parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(s.matches(&pod(labels)), matches, "{sel} on gen={gen:?}");
            assert_eq!(s.to_string(), canonical, "{sel}");
            assert_eq!(
                LabelSelector::parse(&s.to_string()).unwrap(),
                s,
                "round trip of {sel}"
            );
        }
        let s = LabelSelector::parse("example.com/gen<1").unwrap();
        assert!(s.matches(&pod(json!({"example.com/gen": "0"}))));
        let s = LabelSelector::parse("gen < 1").unwrap();
        let [r] = s.requirements() else {
            panic!("one requirement");
        };
        assert_eq!(
            (r.key.as_str(), &r.op, r.values.as_slice()),
            ("gen", &Operator::LessThan, ["1".to_owned()].as_slice())
        );
        // Not an equality: no index bucket can serve it.
        assert_eq!(
            LabelSelector::parse("gen>1").unwrap().first_equality(),
            None
        );
        assert_eq!(
            LabelSelector::parse("gen>1,app=web")
                .unwrap()
                .first_equality(),
            Some(("app", "web"))
        );
        // Hand-built requirements with a bound that is not an integer, or
        // not exactly one value, match nothing rather than panic.
        for values in [
            vec![],
            vec!["x".to_owned()],
            vec!["1".to_owned(), "2".to_owned()],
        ] {
            for op in [Operator::GreaterThan, Operator::LessThan] {
                let s = LabelSelector {
                    requirements: vec![Requirement {
                        key: "gen".into(),
                        op,
                        values: values.clone(),
                    }],
                    nothing: false,
                };
                assert!(!s.matches(&pod(json!({"gen": "0"}))), "{values:?}");
                assert!(!s.matches(&pod(json!({"gen": "5"}))), "{values:?}");
            }
        }
    }

    #[test]
    fn ls_gt_and_lt_errors_name_the_real_problem() {
        // (selector, position, text the message must contain)
        for (sel, pos, needle) in [
            // No value.
            ("gen>", 4, "expected an integer after '>'"),
            ("gen<", 4, "expected an integer after '<'"),
            ("gen> ", 5, "expected an integer after '>'"),
            ("gen>,app=web", 4, "expected an integer after '>'"),
            ("gen>)", 4, "expected an integer after '>'"),
            ("gen>!x", 4, "expected an integer after '>'"),
            ("gen<>1", 4, "expected an integer after '<'"),
            ("gen><1", 4, "expected an integer after '>'"),
            // Not operators: `>=`, `<=`, `>==`, `=>`, `=<`.
            ("gen>=1", 3, "'>=' is not a label selector operator"),
            ("gen<=1", 3, "'<=' is not a label selector operator"),
            ("gen >= 1", 4, "gen>N-1"),
            ("gen<=1", 3, "gen<N+1"),
            ("gen>==1", 3, "'>=' is not a label selector operator"),
            ("gen>=", 3, "'>=' is not a label selector operator"),
            ("gen=>1", 4, "expected a label value"),
            ("gen=<1", 4, "expected a label value"),
            // Not exactly one value.
            ("gen>1 2", 6, "'>' takes exactly one integer"),
            ("gen<1 x", 6, "'<' takes exactly one integer"),
            ("gen>(1,2)", 4, "'>' takes one integer, not a set"),
            ("gen in (1) >2", 11, "expected ',' between requirements"),
            ("gen>1>2", 5, "expected ',' between requirements"),
            // Not an integer.
            (
                "gen>x",
                4,
                r#"invalid value "x" for '>': must be an integer"#,
            ),
            (
                "gen<1.5",
                4,
                r#"invalid value "1.5" for '<': must be an integer"#,
            ),
            ("gen>1e3", 4, "must be an integer"),
            ("gen>0x10", 4, "must be an integer"),
            ("gen>1_000", 4, "must be an integer"),
            ("gen>in", 4, "must be an integer"),
            ("gen> -x", 5, "must be an integer"),
            ("gen>-", 4, "must be an integer"),
            ("gen>١", 4, "must be an integer"),
            // Out of the 64-bit range.
            (
                "gen>9223372036854775808",
                4,
                "out of range of a 64-bit integer",
            ),
            (
                "gen<99999999999999999999999",
                4,
                "out of range of a 64-bit integer",
            ),
            (
                "gen<-9223372036854775809",
                4,
                "out of range of a 64-bit integer",
            ),
            // A sign: strconv.ParseInt takes it, a label value does not
            // (client-go checks both).
            ("gen>-1", 4, "a sign is not allowed"),
            ("gen<+1", 4, "a sign is not allowed"),
            ("gen>-9223372036854775808", 4, "a sign is not allowed"),
            // An integer, but too long for a label value.
            (
                "gen>0000000000000000000000000000000000000000000000000000000000000001",
                4,
                "invalid label value",
            ),
            // The key is checked as for the other operators.
            ("-gen>1", 0, r#"invalid label key "-gen""#),
            ("app=web, Example.com/gen<1", 9, "invalid label key"),
            (">1", 0, "expected a label key"),
            ("!gen>1", 4, "expected ',' between requirements"),
        ] {
            let e = LabelSelector::parse(sel).expect_err(sel);
            assert_eq!(
                (e.position, e.kind),
                (pos, SelectorErrorKind::Syntax),
                "{sel}: {e}"
            );
            assert!(e.message.contains(needle), "{sel}: {e}");
        }
        // The bound just inside the range parses (the overflow case above
        // is not an off-by-one).
        assert!(LabelSelector::parse("gen>9223372036854775807").is_ok());
        assert!(LabelSelector::parse(
            "gen>00000000000000000000000000000000000000000000000000000000000001"
        )
        .is_ok());
    }

    #[test]
    fn ls_gt_no_longer_reads_as_one_overlong_key() {
        // The user's report: `gen>1` was one token, refused as a key "name
        // must be at most 63 characters".
        assert!(LabelSelector::parse("gen>1").is_ok());
        for sel in [
            "gen>x",
            "gen>",
            "gen>=1",
            "gen>1 2",
            "gen>-1",
            "gen<9223372036854775808",
        ] {
            let e = LabelSelector::parse(sel).expect_err(sel);
            assert!(!e.message.contains("invalid label key"), "{sel}: {e}");
            assert!(!e.message.contains("63 characters"), "{sel}: {e}");
        }
        // Elsewhere `>`/`<` split tokens, so a value containing one is a
        // grammar error at the symbol, not a value "a>b" refused as a whole.
        let e = LabelSelector::parse("app=a>b").expect_err("a>b");
        assert_eq!(e.position, 5, "{e}");
        let e = LabelSelector::parse("app in (a<b)").expect_err("a<b");
        assert_eq!(e.position, 9, "{e}");
    }

    #[test]
    fn ls_gt_and_lt_in_a_lister_agree_with_matches_with_and_without_a_label_index() {
        use crate::cache::{Indexer, Lister};
        let pods = [
            named_pod("g0", json!({"app": "web", "gen": "0"})),
            named_pod("g1", json!({"app": "web", "gen": "1"})),
            named_pod("g2", json!({"app": "web", "gen": "2"})),
            named_pod("g10", json!({"app": "db", "gen": "10"})),
            named_pod("gx", json!({"app": "web", "gen": "x"})),
            named_pod("none", json!({"app": "web"})),
        ];
        let ix = Indexer::with_namespace_index();
        for p in &pods {
            ix.add(p.clone()).unwrap();
        }
        let lister = Lister::new(ix.reader());
        let list = |sel: &str| {
            let s = LabelSelector::parse(sel).unwrap();
            let mut got: Vec<String> = lister
                .list_in(Some("ns"), &s)
                .iter()
                .map(|o| o.name().to_owned())
                .collect();
            got.sort();
            let mut want: Vec<String> = pods
                .iter()
                .filter(|o| s.matches(o))
                .map(|o| o.name().to_owned())
                .collect();
            want.sort();
            assert_eq!(got, want, "{sel}");
            got
        };
        for indexed in ["", "app", "gen"] {
            if !indexed.is_empty() {
                ix.add_label_index(indexed).unwrap();
            }
            assert_eq!(list("gen>1"), ["g10", "g2"], "index {indexed:?}");
            assert_eq!(list("gen<2"), ["g0", "g1"], "index {indexed:?}");
            assert_eq!(list("app=web,gen>1"), ["g2"], "index {indexed:?}");
            assert_eq!(list("gen>1,gen<10"), ["g2"], "index {indexed:?}");
            assert_eq!(list("gen=1,gen<2"), ["g1"], "index {indexed:?}");
            assert_eq!(list("gen in (x),gen>0"), Vec::<String>::new());
            assert!(list("gen>10").is_empty(), "index {indexed:?}");
        }
    }

    #[test]
    fn field_selector_values_use_kubernetes_escapes() {
        let o =
            KubeObject::from_value(&json!({"metadata": {"name": "p"}, "spec": {"x": "a,b=c\\d"}}))
                .unwrap();
        let s = FieldSelector::parse(r"spec.x=a\,b\=c\\d").unwrap();
        assert!(s.matches(&o));
        assert_eq!(s.to_string(), r"spec.x=a\,b\=c\\d");
        assert_eq!(FieldSelector::parse(&s.to_string()).unwrap(), s);
        // `==` is one operator; the value may start with `=` only escaped.
        let eq = FieldSelector::parse(r"spec.x==\=").unwrap();
        assert_eq!(eq.to_string(), r"spec.x=\=");
        // Empty requirements are skipped, as Kubernetes does.
        assert_eq!(
            FieldSelector::parse(",metadata.name=p,,")
                .unwrap()
                .to_string(),
            "metadata.name=p"
        );
        for (bad, pos) in [
            ("a=b=c", 3),
            ("a!==b", 3),
            (r"a=b\q", 3),
            (r"a=b\", 3),
            ("x=1, a = é=", 10),
        ] {
            let e = FieldSelector::parse(bad).expect_err(bad);
            assert_eq!(
                (e.position, e.kind),
                (pos, SelectorErrorKind::Syntax),
                "{bad}: {e}"
            );
        }
    }

    /// Characters the parsers stepped over while running `f`.
    fn steps(f: impl FnOnce()) -> usize {
        STEPS.with(|s| s.set(0));
        f();
        STEPS.with(|s| s.get())
    }

    /// `pieces` joined by `,`, padded with spaces to exactly `bytes` bytes.
    fn padded(pieces: impl Iterator<Item = String>, bytes: usize) -> String {
        let mut s = String::new();
        for p in pieces {
            if s.len() + p.len() + 1 > bytes {
                break;
            }
            if !s.is_empty() {
                s.push(',');
            }
            s.push_str(&p);
        }
        let pad = bytes - s.len();
        s.push_str(&" ".repeat(pad));
        s
    }

    #[test]
    fn selectors_over_the_cap_are_refused_with_the_position_of_the_first_character_past_it() {
        let label = padded(
            (0..).map(|i| format!("k{i} in (v{i},w)")),
            MAX_SELECTOR_BYTES,
        );
        assert_eq!(label.len(), MAX_SELECTOR_BYTES);
        assert!(LabelSelector::parse(&label).is_ok(), "exactly at the cap");
        let field = padded((0..).map(|i| format!("status.f{i}!=é")), MAX_SELECTOR_BYTES);
        assert!(FieldSelector::parse(&field).is_ok(), "exactly at the cap");

        for (input, position) in [
            (format!("{label} "), MAX_SELECTOR_BYTES),
            (format!("{field}x"), field.chars().count()),
            // Multi-byte characters: only whole ones count as within the cap.
            (
                "é".repeat(MAX_SELECTOR_BYTES / 2 + 1),
                MAX_SELECTOR_BYTES / 2,
            ),
            ("€".repeat(MAX_SELECTOR_BYTES), MAX_SELECTOR_BYTES / 3),
        ] {
            for e in [
                LabelSelector::parse(&input).expect_err("too long"),
                FieldSelector::parse(&input).expect_err("too long"),
            ] {
                assert_eq!(e.kind, SelectorErrorKind::TooLong, "{e}");
                assert_eq!(e.position, position, "{e}");
            }
        }
        let e = LabelSelector::parse("a b").expect_err("syntax");
        assert_eq!(e.kind, SelectorErrorKind::Syntax);
    }

    #[test]
    fn parsing_steps_over_each_character_once() {
        // Many short tokens and multi-byte characters: counting positions
        // from the start for each token would step over ~n²/2 characters.
        let label = padded(
            (0..).map(|i| format!("k{i} notin (v{i}, w) , !x{i}")),
            MAX_SELECTOR_BYTES,
        );
        let n = label.chars().count();
        assert_eq!(steps(|| assert!(LabelSelector::parse(&label).is_ok())), n);
        let field = padded(
            (0..).map(|i| format!("spec.f{i}==ü{i}")),
            MAX_SELECTOR_BYTES,
        );
        let n = field.chars().count();
        assert_eq!(steps(|| assert!(FieldSelector::parse(&field).is_ok())), n);
        // An error late in a long input reports its position at the same cost.
        let bad = format!("{},=", label.trim_end());
        let e = steps(|| {
            let e = LabelSelector::parse(&bad).expect_err("bad");
            assert_eq!(e.position, bad.chars().count() - 1);
        });
        assert_eq!(e, bad.chars().count());
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

    /// Property tests (proptest is a native-only dev-dependency).
    #[cfg(not(target_arch = "wasm32"))]
    mod props {
        use super::*;
        use proptest::prelude::*;

        /// Inputs made of selector tokens, so the parsers get past the lexer.
        fn selectorish() -> impl Strategy<Value = String> {
            let tok = prop::sample::select(vec![
                "app",
                "in",
                "notin",
                "(",
                ")",
                ",",
                "=",
                "==",
                "!=",
                "!",
                " ",
                "\t",
                "x.y/z",
                "a-b",
                "_",
                "-",
                ".",
                "/",
                "é",
                "日本",
                "metadata.name",
                "status.phase",
                "\u{0}",
                "63",
                ">",
                "<",
                ">=",
                "1",
                "-1",
                "007",
                "9223372036854775807",
                "9223372036854775808",
                "",
            ]);
            prop::collection::vec(tok, 0..24).prop_map(|t| t.concat())
        }

        fn check_label(input: &str) {
            match LabelSelector::parse(input) {
                Ok(s) => {
                    let printed = s.to_string();
                    assert_eq!(
                        LabelSelector::parse(&printed).as_ref(),
                        Ok(&s),
                        "{input:?} printed as {printed:?}"
                    );
                }
                Err(e) => assert!(e.position <= input.chars().count(), "{input:?}: {e}"),
            }
        }

        fn check_field(input: &str) {
            match FieldSelector::parse(input) {
                Ok(s) => {
                    let printed = s.to_string();
                    assert_eq!(
                        FieldSelector::parse(&printed).as_ref(),
                        Ok(&s),
                        "{input:?} printed as {printed:?}"
                    );
                }
                Err(e) => assert!(e.position <= input.chars().count(), "{input:?}: {e}"),
            }
        }

        proptest! {
            /// `key>N` / `key<N` against a naive model of client-go:
            /// integers compare as integers, anything else never matches.
            #[test]
            fn gt_and_lt_match_like_a_naive_integer_comparison(
                bound in prop_oneof![0i64..20, Just(i64::MAX), Just(0)],
                near in -2i64..=2,
                far in any::<i64>(),
                pick in 0usize..6,
                present in any::<bool>(),
                greater in any::<bool>(),
            ) {
                // Often next to the bound, where an off-by-one would show.
                let have = match pick {
                    0 | 1 => bound.saturating_add(near).to_string(),
                    2 => far.to_string(),
                    3 => String::new(),
                    4 => format!("x{bound}"),
                    _ => "9223372036854775808".to_owned(),
                };
                let sym = if greater { '>' } else { '<' };
                let sel = LabelSelector::parse(&format!("gen{sym}{bound}")).unwrap();
                let labels = if present { json!({"gen": have}) } else { json!({}) };
                let want = present
                    && match have.parse::<i64>() {
                        Ok(h) if greater => h > bound,
                        Ok(h) => h < bound,
                        Err(_) => false,
                    };
                prop_assert_eq!(sel.matches(&pod(labels)), want, "{} on {:?}", sel, have);
            }

            #[test]
            fn label_selectors_never_panic_and_round_trip(input in any::<String>()) {
                check_label(&input);
            }

            #[test]
            fn label_selectors_of_tokens_never_panic_and_round_trip(input in selectorish()) {
                check_label(&input);
            }

            #[test]
            fn field_selectors_never_panic_and_round_trip(input in any::<String>()) {
                check_field(&input);
            }

            #[test]
            fn field_selectors_of_tokens_never_panic_and_round_trip(input in selectorish()) {
                check_field(&input);
            }
        }
    }
}
