//! A pull reader for small documents read once (discovery): the scanner's
//! validation with the caller walking the members it wants, in place of a
//! `serde` derive per document type (each one a few KB of wasm).
//!
//! Like Go's `encoding/json` (the API server's own decoder), `null` reads as
//! the empty value of what was expected, unknown members are skipped (still
//! validated), and a value of another type is an error.

use super::{Fail, Scanner};
use crate::rest::Error;

/// What reads one member of an object: its key and the reader at its value.
type MemberFn<'f, 'a> = dyn FnMut(&[u8], &mut Reader<'a>) -> Result<(), Error> + 'f;

/// Reads one JSON document; errors are decode errors that name the document.
pub(crate) struct Reader<'a> {
    s: Scanner<'a>,
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `input`; `what` names the document in errors.
    pub(crate) fn new(input: &'a [u8], what: &'static str) -> Self {
        Reader {
            s: Scanner::new(input),
            what,
        }
    }

    fn fail(&self, f: Fail) -> Error {
        Error::decode(
            format!("{}: {} at byte {}", self.what, f.what, f.at),
            self.s.b,
        )
    }

    fn check<T>(&self, r: Result<T, Fail>) -> Result<T, Error> {
        r.map_err(|f| self.fail(f))
    }

    /// `None` for `null` (consumed), else what `read` makes of the value.
    pub(crate) fn or_null<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        if self.null() {
            Ok(None)
        } else {
            read(self).map(Some)
        }
    }

    /// At `null`: consumes it.
    pub(crate) fn null(&mut self) -> bool {
        self.s.skip_ws();
        if self
            .s
            .b
            .get(self.s.pos..)
            .is_some_and(|b| b.starts_with(b"null"))
        {
            self.s.pos += 4;
            true
        } else {
            false
        }
    }

    /// An object (or `null`, which has no members): `f(key, reader)` must
    /// read or [`skip`](Self::skip) each member's value.
    pub(crate) fn object(
        &mut self,
        mut f: impl FnMut(&[u8], &mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.object_dyn(&mut f)
    }

    /// An array (or `null`, which has no elements): `f` reads each element.
    pub(crate) fn array(
        &mut self,
        mut f: impl FnMut(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if self.null() {
            return Ok(());
        }
        self.container(b'[', b']', "expected an array", &mut f)
    }

    // The walks take the callers' closures as `dyn`: one copy of each in the
    // module instead of one per call site.
    fn object_dyn(&mut self, f: &mut MemberFn<'_, 'a>) -> Result<(), Error> {
        if self.null() {
            return Ok(());
        }
        self.container(b'{', b'}', "expected an object", &mut |r| {
            let key = r.s.string();
            let key = r.check(key)?.to_cow()?;
            let colon = r.s.expect(b':', "expected ':'");
            r.check(colon)?;
            r.s.skip_ws();
            f(key.as_bytes(), r)
        })
    }

    /// The shared walk of an object's members or an array's elements.
    fn container(
        &mut self,
        open: u8,
        close: u8,
        expected: &'static str,
        each: &mut dyn FnMut(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let opened = self.s.expect(open, expected);
        self.check(opened)?;
        if self.s.depth >= super::MAX_DEPTH {
            let e = self.s.err("nesting deeper than 10000 levels");
            return self.check(e);
        }
        self.s.skip_ws();
        if self.s.peek() == Some(close) {
            self.s.pos += 1;
            return Ok(());
        }
        self.s.depth += 1;
        loop {
            self.s.skip_ws();
            each(self)?;
            self.s.skip_ws();
            match self.s.peek() {
                Some(b',') => self.s.pos += 1,
                Some(c) if c == close => {
                    self.s.pos += 1;
                    self.s.depth -= 1;
                    return Ok(());
                }
                _ => {
                    let e = self.s.err("expected ',' or the end of the object or array");
                    return self.check(e);
                }
            }
        }
    }

    /// A string (`null` reads as empty).
    pub(crate) fn string(&mut self) -> Result<String, Error> {
        if self.null() {
            return Ok(String::new());
        }
        let span = self.s.string();
        Ok(self.check(span)?.to_cow()?.into_owned())
    }

    /// An array of strings (`null` reads as empty).
    pub(crate) fn strings(&mut self) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        self.array(|r| {
            out.push(r.string()?);
            Ok(())
        })?;
        Ok(out)
    }

    /// A boolean (`null` reads as `false`).
    pub(crate) fn bool(&mut self) -> Result<bool, Error> {
        let v = self.s.value();
        match self.check(v)? {
            b"true" => Ok(true),
            b"false" | b"null" => Ok(false),
            _ => {
                let e = self.s.err("expected a boolean");
                self.check(e)
            }
        }
    }

    /// An integer within `min..=max` (`null` reads as 0). A fraction or
    /// exponent is an error even when the value is whole, as Go refuses
    /// `1.0` for an integer field.
    pub(crate) fn integer(&mut self, min: i64, max: i64) -> Result<i64, Error> {
        let v = self.s.value();
        let v = self.check(v)?;
        if v == b"null" {
            return Ok(0);
        }
        let n = std::str::from_utf8(v)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .filter(|n| (min..=max).contains(n));
        match n {
            Some(n) => Ok(n),
            None => {
                let e = self.s.err("expected an integer in range");
                self.check(e)
            }
        }
    }

    /// Validates and skips one value of any type.
    pub(crate) fn skip(&mut self) -> Result<(), Error> {
        let v = self.s.value();
        self.check(v).map(|_| ())
    }

    /// Only whitespace may follow the document.
    pub(crate) fn end(&mut self) -> Result<(), Error> {
        let e = self.s.end();
        self.check(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(input: &[u8]) -> Result<(String, Vec<String>, bool), Error> {
        let mut r = Reader::new(input, "test");
        let (mut name, mut list, mut flag) = (String::new(), Vec::new(), false);
        r.object(|key, r| match key {
            b"name" => r.string().map(|s| name = s),
            b"list" => r.strings().map(|l| list = l),
            b"flag" => r.bool().map(|b| flag = b),
            _ => r.skip(),
        })?;
        r.end()?;
        Ok((name, list, flag))
    }

    #[test]
    fn reads_members_in_any_order_and_skips_the_rest() {
        let got = names(
            br#" {"x":{"a":[1,{"b":null}]},"list":["a","\u00e9"],"n\u0061me":"p","flag":true} "#,
        );
        assert_eq!(
            got.unwrap(),
            ("p".into(), vec!["a".into(), "é".into()], true)
        );
        assert_eq!(names(b"null").unwrap(), (String::new(), vec![], false));
        let nulls = names(br#"{"name":null,"list":null,"flag":null}"#).unwrap();
        assert_eq!(nulls, (String::new(), vec![], false));
        assert_eq!(names(br#"{"list":[]}"#).unwrap().1, Vec::<String>::new());
    }

    #[test]
    fn refuses_other_types_and_broken_documents() {
        for bad in [
            &br#"{"name":5}"#[..],
            br#"{"list":"a"}"#,
            br#"{"list":[1]}"#,
            br#"{"flag":"yes"}"#,
            br#"{"x":[1,}"#,
            br#"{"name":"a"} x"#,
            br#"{"name":"a""#,
            br#"["name"]"#,
            b"<html>",
            b"",
        ] {
            let e = names(bad).unwrap_err().to_string();
            assert!(e.contains("test: "), "{e}");
        }
    }
}
