//! API server warnings: the `Warning` response headers (RFC 7234 section
//! 5.5, `299 - "text"`) the API server sends for deprecated APIs and from
//! admission webhooks, parsed as client-go's `net.ParseWarningHeaders` does
//! and handed to a [`WarningHandler`].
//!
//! Every response is inspected, error answers included, as client-go does.
//! [`DedupWarnings`] passes each distinct message on once, like client-go's
//! warning writer with `Deduplicate` (what kubectl uses); unlike it, the set
//! of messages seen is bounded, so a server sending a new message per
//! request cannot grow memory without limit.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::rc::Rc;

/// One warning from a `Warning` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The warn-code: 299 ("miscellaneous persistent warning") from the API
    /// server; 100–299 are accepted.
    pub code: u16,
    /// The warn-agent (`-` from the API server).
    pub agent: String,
    /// The text, unquoted.
    pub text: String,
}

/// Receives the warnings of each response, in header order.
pub trait WarningHandler {
    /// Called once per warning of a response.
    fn handle_warning(&self, warning: &Warning);
}

impl<F: Fn(&Warning)> WarningHandler for F {
    fn handle_warning(&self, warning: &Warning) {
        self(warning)
    }
}

/// A shareable handler in a [`Config`](super::Config).
#[derive(Clone)]
pub struct SharedWarningHandler(pub Rc<dyn WarningHandler>);

impl SharedWarningHandler {
    /// Wrap a handler (a closure taking `&Warning` works).
    pub fn new(h: impl WarningHandler + 'static) -> Self {
        SharedWarningHandler(Rc::new(h))
    }
}

impl fmt::Debug for SharedWarningHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedWarningHandler(..)")
    }
}

/// How many distinct messages [`DedupWarnings`] remembers: far more than
/// the deprecations and admission warnings a session meets; past it the
/// oldest is forgotten (and would be passed on again).
pub const MAX_REMEMBERED_WARNINGS: usize = 1024;

/// Passes on code-299 warnings with a non-empty text, each distinct text
/// once (client-go's `NewWarningWriter` with `Deduplicate: true`).
pub struct DedupWarnings<H> {
    inner: H,
    seen: RefCell<Seen>,
}

#[derive(Default)]
struct Seen {
    set: HashSet<Rc<str>>,
    order: VecDeque<Rc<str>>,
}

impl<H: WarningHandler> DedupWarnings<H> {
    /// Deduplicate what reaches `inner`.
    pub fn new(inner: H) -> Self {
        DedupWarnings {
            inner,
            seen: RefCell::default(),
        }
    }
}

impl<H: WarningHandler> WarningHandler for DedupWarnings<H> {
    fn handle_warning(&self, warning: &Warning) {
        if warning.code != 299 || warning.text.is_empty() {
            return;
        }
        {
            let mut seen = self.seen.borrow_mut();
            if seen.set.contains(warning.text.as_str()) {
                return;
            }
            if seen.order.len() >= MAX_REMEMBERED_WARNINGS {
                if let Some(old) = seen.order.pop_front() {
                    seen.set.remove(&old);
                }
            }
            let text: Rc<str> = Rc::from(warning.text.as_str());
            seen.set.insert(text.clone());
            seen.order.push_back(text);
        }
        // Outside the borrow: the handler may cause another request.
        self.inner.handle_warning(warning);
    }
}

/// Every warning in `headers` (each `Warning` header may hold several,
/// comma-separated, and a host joins repeated headers with `, `). A
/// malformed one ends the parse of its header; the warnings before it are
/// kept (client-go does the same).
pub fn parse_warning_headers(headers: &[(String, String)]) -> Vec<Warning> {
    let mut out = Vec::new();
    for (name, value) in headers {
        if !name.eq_ignore_ascii_case("warning") {
            continue;
        }
        let mut rest = value.as_str();
        while !rest.trim().is_empty() {
            match parse_one(rest) {
                Some((w, remainder)) => {
                    out.push(w);
                    rest = remainder;
                }
                None => break,
            }
        }
    }
    out
}

/// `code SP agent SP "text" [SP "date"] [, …]` → the warning and what
/// follows its comma.
fn parse_one(header: &str) -> Option<(Warning, &str)> {
    let s = header.trim();
    let (code, s) = s.split_once(' ')?;
    let (agent, s) = s.split_once(' ')?;
    let b = code.as_bytes();
    if b.len() != 3 || !(b'1'..=b'2').contains(&b[0]) || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let code: u16 = code.parse().ok()?;
    if agent.is_empty() || agent.chars().any(char::is_control) {
        return None;
    }
    let (text, after) = quoted(s)?;
    let mut rest = after.trim_start();
    if let Some(date) = rest.strip_prefix('"') {
        let end = date.find('"')?;
        rest = date[end + 1..].trim_start();
    }
    if !rest.is_empty() {
        rest = rest.strip_prefix(',')?.trim_start();
    }
    Some((
        Warning {
            code,
            agent: agent.to_owned(),
            text,
        },
        rest,
    ))
}

/// An RFC 7230 quoted-string at the start of `s`: its unescaped content and
/// the rest. Control characters other than tab are refused.
fn quoted(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut text = String::new();
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        if c.is_control() && c != '\t' {
            return None;
        }
        if escaped {
            text.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' {
            return Some((text, &body[i + 1..]));
        } else {
            text.push(c);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: &str) -> Vec<(String, String)> {
        vec![("Warning".into(), v.into())]
    }

    fn texts(v: &str) -> Vec<(u16, String)> {
        parse_warning_headers(&h(v))
            .into_iter()
            .map(|w| (w.code, w.text))
            .collect()
    }

    #[test]
    fn parses_the_api_server_form_escapes_dates_and_lists() {
        let w = parse_warning_headers(&h(
            r#"299 - "policy/v1beta1 PodSecurityPolicy is deprecated""#,
        ));
        assert_eq!(
            w,
            vec![Warning {
                code: 299,
                agent: "-".into(),
                text: "policy/v1beta1 PodSecurityPolicy is deprecated".into()
            }]
        );
        assert_eq!(
            texts(r#"299 - "say \"hi\" \\ now""#),
            vec![(299, r#"say "hi" \ now"#.into())]
        );
        assert_eq!(
            texts(r#"299 - "a" "Wed, 21 Oct 2015 07:28:00 GMT", 199 host:80 "b",299 - "c""#),
            vec![(299, "a".into()), (199, "b".into()), (299, "c".into())]
        );
        // Repeated headers, any case, other headers ignored.
        let headers = vec![
            ("warning".to_string(), r#"299 - "one""#.to_string()),
            ("content-type".to_string(), "application/json".to_string()),
            ("WARNING".to_string(), r#"299 - "two""#.to_string()),
        ];
        let all: Vec<String> = parse_warning_headers(&headers)
            .into_iter()
            .map(|w| w.text)
            .collect();
        assert_eq!(all, ["one", "two"]);
    }

    #[test]
    fn malformed_warnings_end_their_header_keeping_earlier_ones() {
        for bad in [
            "",
            "299",
            "299 -",
            r#"300 - "code out of range""#,
            r#"29 - "two digits""#,
            r#"2x9 - "not digits""#,
            r#"299 - unquoted"#,
            r#"299 - "unterminated"#,
            "299 - \"control \u{1} char\"",
            r#"299 - "a" "unterminated date"#,
            r#"299 - "a" junk"#,
        ] {
            assert!(texts(bad).is_empty(), "{bad:?}");
        }
        assert_eq!(
            texts(r#"299 - "kept", garbage"#),
            vec![(299, "kept".into())]
        );
        assert_eq!(texts("299 - \"tab\tok\""), vec![(299, "tab\tok".into())]);
    }

    #[test]
    fn dedup_passes_each_299_message_once_and_stays_bounded() {
        let got: Rc<RefCell<Vec<String>>> = Rc::default();
        let sink = got.clone();
        let d = DedupWarnings::new(move |w: &Warning| sink.borrow_mut().push(w.text.clone()));
        for (code, text) in [
            (299, "a"),
            (299, "b"),
            (299, "a"),
            (199, "c"),
            (299, ""),
            (299, "b"),
        ] {
            d.handle_warning(&Warning {
                code,
                agent: "-".into(),
                text: text.into(),
            });
        }
        assert_eq!(*got.borrow(), ["a", "b"]);
        for i in 0..MAX_REMEMBERED_WARNINGS + 10 {
            d.handle_warning(&Warning {
                code: 299,
                agent: "-".into(),
                text: format!("m{i}"),
            });
        }
        assert_eq!(d.seen.borrow().set.len(), MAX_REMEMBERED_WARNINGS);
        assert_eq!(d.seen.borrow().order.len(), MAX_REMEMBERED_WARNINGS);
        // "a" was forgotten first, so it passes again.
        d.handle_warning(&Warning {
            code: 299,
            agent: "-".into(),
            text: "a".into(),
        });
        assert_eq!(got.borrow().last().map(String::as_str), Some("a"));
    }
}
