//! Byte-level newline framer for watch streams.
//!
//! Works on bytes, not text: `\n` never occurs inside a multi-byte UTF-8
//! sequence, so a chunk boundary anywhere (mid-character included) needs no
//! special care, and no UTF-8 decoding happens here at all. Lines that lie
//! wholly inside one chunk are handed out as slices of that chunk (no copy);
//! only a line straddling chunks is assembled in a carry buffer.
use super::Error;

/// Splits a byte stream into lines: strips a trailing `\r`, skips blank
/// lines, and refuses lines longer than a maximum.
#[derive(Debug)]
pub struct LineFramer {
    carry: Vec<u8>,
    max: usize,
}

/// Position of the first `\n` in `hay`, eight bytes at a time.
#[inline]
pub(crate) fn find_newline(hay: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    // Fixed-size words: a `copy_from_slice` into a buffer per word stayed an
    // out-of-line call in the size-optimized wasm build (~5 % of a flood).
    let (words, rest) = hay.as_chunks::<8>();
    let mut base = 0;
    for w in words {
        let x = u64::from_le_bytes(*w) ^ NL;
        if (x.wrapping_sub(LO) & !x & HI) != 0 {
            // A zero byte exists; find the exact one.
            return w.iter().position(|&b| b == b'\n').map(|i| base + i);
        }
        base += 8;
    }
    rest.iter().position(|&b| b == b'\n').map(|i| base + i)
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // A line of only whitespace is blank (keep-alive newlines).
    if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        &[]
    } else {
        line
    }
}

impl LineFramer {
    /// A framer refusing lines longer than `max_line` bytes.
    pub fn new(max_line: usize) -> Self {
        LineFramer {
            carry: Vec::new(),
            max: max_line,
        }
    }

    /// Feed one chunk; `on_line` is called for every complete non-blank line
    /// (without its line ending). Stops at the first error (from `on_line` or
    /// [`Error::LineTooLong`]); the framer should then be discarded.
    pub fn push(
        &mut self,
        chunk: &[u8],
        mut on_line: impl FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut rest = chunk;
        if !self.carry.is_empty() {
            match find_newline(rest) {
                None => {
                    if self.carry.len() + rest.len() > self.max.saturating_add(1) {
                        return Err(Error::LineTooLong { limit: self.max });
                    }
                    self.carry.extend_from_slice(rest);
                    return Ok(());
                }
                Some(i) => {
                    if self.carry.len() + i > self.max.saturating_add(1) {
                        return Err(Error::LineTooLong { limit: self.max });
                    }
                    self.carry.extend_from_slice(&rest[..i]);
                    rest = &rest[i + 1..];
                    let line = std::mem::take(&mut self.carry);
                    self.emit(&line, &mut on_line)?;
                    // Keep the allocation for the next straddling line.
                    self.carry = line;
                    self.carry.clear();
                }
            }
        }
        while let Some(i) = find_newline(rest) {
            self.emit(&rest[..i], &mut on_line)?;
            rest = &rest[i + 1..];
        }
        // +1: a `\r` before the coming `\n` does not count against the limit.
        if rest.len() > self.max.saturating_add(1) {
            return Err(Error::LineTooLong { limit: self.max });
        }
        self.carry.extend_from_slice(rest);
        Ok(())
    }

    fn emit(
        &self,
        line: &[u8],
        on_line: &mut impl FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let line = trim_line(line);
        if line.len() > self.max {
            return Err(Error::LineTooLong { limit: self.max });
        }
        if line.is_empty() {
            Ok(())
        } else {
            on_line(line)
        }
    }

    /// End of stream: a final line without a newline is still a line.
    pub fn finish(
        &mut self,
        mut on_line: impl FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let line = std::mem::take(&mut self.carry);
        self.emit(&line, &mut on_line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(chunks: &[&[u8]], max: usize) -> Result<Vec<Vec<u8>>, Error> {
        let mut f = LineFramer::new(max);
        let mut out = Vec::new();
        for c in chunks {
            f.push(c, |l| {
                out.push(l.to_vec());
                Ok(())
            })?;
        }
        f.finish(|l| {
            out.push(l.to_vec());
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn newline_search_matches_naive() {
        let mut data = vec![b'a'; 100];
        assert_eq!(find_newline(&data), None);
        for i in 0..100 {
            data[i] = b'\n';
            assert_eq!(find_newline(&data), Some(i));
            assert_eq!(find_newline(&data[..i]), None);
            data[i] = 0x8a; // a byte that differs from \n only in the high bit
        }
        assert_eq!(find_newline(&data), None);
    }

    #[test]
    fn no_limit_at_all_is_a_limit_of_usize_max() {
        // A line split across chunks, with the largest limit a caller can set.
        let lines = collect(&[b"{\"a\":", b"1}\n{", b"}"], usize::MAX).expect("ok");
        assert_eq!(lines, vec![b"{\"a\":1}".to_vec(), b"{}".to_vec()]);
    }

    #[test]
    fn rc_02_crlf_blank_lines_and_unterminated_last_line() {
        let lines = collect(&[b"a\r\n\r\n\n  \nb\nc"], 1024).expect("ok");
        assert_eq!(lines, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    }

    #[test]
    fn rc_02_line_limit_is_enforced_across_chunks() {
        // Exactly at the limit passes, with and without \r.
        let ok = collect(&[b"12345", b"678\r\n", b"12345678\n"], 8).expect("ok");
        assert_eq!(ok.len(), 2);
        for chunks in [
            &[&b"123456789\n"[..]][..],
            &[b"1234", b"56789"],
            &[b"1234", b"56", b"789\n"],
            &[b"123456789"],
        ] {
            assert_eq!(
                collect(chunks, 8),
                Err(Error::LineTooLong { limit: 8 }),
                "{chunks:?}"
            );
        }
    }
}
