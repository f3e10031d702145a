//! Reading text formats as a stream (a gzip stream, say) in bounded memory: a whitespace
//! tokeniser that never holds more than one token, a line reader with a length cap, and a check
//! before a growing list doubles. With them, memory follows the size of the mesh being read, not of
//! its text: a file of blank space or one endless line is an error, not gigabytes.

use crate::error::IoError;
use std::io::BufRead;

/// The longest token a text mesh format has: a number with many digits, or a keyword.
const MAX_TOKEN: usize = 128;

/// The longest line read whole (an OBJ polygon of a few hundred thousand corners).
pub const MAX_LINE: usize = 16 << 20;

/// Whitespace-separated tokens of a stream, one at a time, with the line each is on.
pub struct Tokens<R> {
    input: R,
    token: Vec<u8>,
    /// the line of the last token (1-based)
    pub line: usize,
    /// whether the last token was the first of its line
    pub first_on_line: bool,
    line_has_token: bool,
}

impl<R: BufRead> Tokens<R> {
    pub fn new(input: R) -> Tokens<R> {
        Tokens {
            input,
            token: Vec::with_capacity(MAX_TOKEN),
            line: 1,
            first_on_line: false,
            line_has_token: false,
        }
    }

    /// The next token, or `None` at the end of the stream. A token longer than any number or
    /// keyword, or one that is not UTF-8, is an error naming its line.
    pub fn next_token(&mut self, file: &str) -> Result<Option<&str>, IoError> {
        self.token.clear();
        let err = |line: usize, message: String| IoError::Parse {
            file: file.to_string(),
            location: format!("line {line}"),
            message,
        };
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(err(self.line, e.to_string())),
            };
            if buf.is_empty() {
                break;
            }
            let mut used = 0;
            let mut ended = false;
            for &b in buf {
                if b.is_ascii_whitespace() {
                    if !self.token.is_empty() {
                        // leave the separator: its newline is counted with the next token
                        ended = true;
                        break;
                    }
                    if b == b'\n' {
                        self.line += 1;
                        self.line_has_token = false;
                    }
                } else {
                    if self.token.len() == MAX_TOKEN {
                        return Err(err(
                            self.line,
                            format!("a word longer than {MAX_TOKEN} characters"),
                        ));
                    }
                    self.token.push(b);
                }
                used += 1;
            }
            self.input.consume(used);
            if ended {
                break;
            }
        }
        if self.token.is_empty() {
            return Ok(None);
        }
        self.first_on_line = !self.line_has_token;
        self.line_has_token = true;
        let line = self.line;
        std::str::from_utf8(&self.token)
            .map(Some)
            .map_err(|_| err(line, "not valid UTF-8 text".into()))
    }
}

/// Reads one line into `out` (cleared first) like [`BufRead::read_line`], but refuses a line
/// longer than [`MAX_LINE`] bytes. Returns the bytes read; 0 at the end of the stream.
pub fn read_line_capped(input: &mut impl BufRead, out: &mut String) -> std::io::Result<usize> {
    use std::io::Read;
    out.clear();
    let n = input.by_ref().take(MAX_LINE as u64).read_line(out)?;
    if n == MAX_LINE && !out.ends_with('\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a line longer than {} MB", MAX_LINE >> 20),
        ));
    }
    Ok(n)
}

/// Makes room for `n` more elements of `v`: when they do not fit, checks the doubling against the
/// host's memory first, so that a stream of more elements than fit is an error naming `what`.
pub fn room<T>(v: &mut Vec<T>, n: usize, what: &str, file: &str) -> Result<(), IoError> {
    if v.capacity() - v.len() >= n {
        return Ok(());
    }
    let more = v.capacity().max(1024).max(n);
    rxpipe_core::limits::check_host((more * std::mem::size_of::<T>()) as u64, || {
        format!("reading more than {} {what}", v.len())
    })
    .map_err(|e| IoError::Unsupported {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    v.reserve_exact(more);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &[u8]) -> Result<Vec<(String, usize, bool)>, IoError> {
        let mut t = Tokens::new(text);
        let mut out = Vec::new();
        while let Some(s) = t.next_token("f")? {
            let s = s.to_string();
            out.push((s, t.line, t.first_on_line));
        }
        Ok(out)
    }

    #[test]
    fn tokens_lines_and_firsts() {
        let got = all(b"  a b\n\n c\r\nd  e\n").unwrap();
        let want = [
            ("a", 1, true),
            ("b", 1, false),
            ("c", 3, true),
            ("d", 4, true),
            ("e", 4, false),
        ];
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0.as_str(), g.1, g.2), w);
        }
        assert!(all(b"").unwrap().is_empty());
        assert!(all(b" \n\t ").unwrap().is_empty());
    }

    #[test]
    fn tokens_across_buffer_refills() {
        // a reader that hands out 3 bytes at a time
        let text = b"12345 678\n9 0123456789";
        let r = std::io::BufReader::with_capacity(3, &text[..]);
        let mut t = Tokens::new(r);
        let mut got = Vec::new();
        while let Some(s) = t.next_token("f").unwrap() {
            got.push(s.to_string());
        }
        assert_eq!(got, ["12345", "678", "9", "0123456789"]);
    }

    #[test]
    fn an_endless_word_and_bad_bytes_are_errors_naming_the_line() {
        let long = [b"a\n".as_slice(), &[b'x'; 1000]].concat();
        let e = all(&long).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("longer than"), "{e}");
        let e = all(b"ok \xff\xfe").unwrap_err().to_string();
        assert!(e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn lines_are_capped() {
        let mut s = String::new();
        let mut r: &[u8] = b"one\ntwo";
        assert_eq!(read_line_capped(&mut r, &mut s).unwrap(), 4);
        assert_eq!(s, "one\n");
        assert_eq!(read_line_capped(&mut r, &mut s).unwrap(), 3);
        assert_eq!(read_line_capped(&mut r, &mut s).unwrap(), 0);
        let long = vec![b' '; MAX_LINE + 10];
        let mut r: &[u8] = &long;
        assert!(read_line_capped(&mut r, &mut s).is_err());
    }
}
