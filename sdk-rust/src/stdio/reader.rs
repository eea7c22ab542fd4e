//! NDJSON line reading with the frame cap enforced while reading, so an
//! oversized frame is detected without buffering it whole.

use std::io::{self, BufRead};

/// One read attempt.
pub(crate) enum Line {
    /// A complete line (without its `\n`), `size` bytes on the wire
    /// counting the newline.
    Frame(Vec<u8>),
    /// The line grew past the cap; `size` counts what was read so far.
    TooLarge { size: usize },
    /// End of input.
    Eof,
}

/// Reads the next line of at most `limit` bytes including its `\n`.
/// A last line without a newline at EOF counts without one.
pub(crate) fn read_line(input: &mut impl BufRead, limit: usize) -> io::Result<Line> {
    let mut line = Vec::new();
    loop {
        let available = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if line.is_empty() {
                Line::Eof
            } else {
                Line::Frame(line)
            });
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(at) => {
                let size = line.len() + at + 1;
                if size > limit {
                    return Ok(Line::TooLarge { size });
                }
                line.extend_from_slice(&available[..at]);
                input.consume(at + 1);
                return Ok(Line::Frame(line));
            }
            None => {
                let n = available.len();
                if line.len() + n > limit {
                    return Ok(Line::TooLarge {
                        size: line.len() + n,
                    });
                }
                line.extend_from_slice(available);
                input.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Vec<String> {
        let mut r = io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            match read_line(&mut r, limit).unwrap() {
                Line::Frame(l) => out.push(String::from_utf8(l).unwrap()),
                Line::TooLarge { size } => {
                    out.push(format!("too large at {size}"));
                    return out;
                }
                Line::Eof => return out,
            }
        }
    }

    #[test]
    fn splits_lines_and_keeps_a_last_unterminated_one() {
        assert_eq!(
            lines(b"ab\r\n\ncdefgh\nxyz", 100),
            ["ab\r", "", "cdefgh", "xyz"]
        );
    }

    #[test]
    fn the_newline_counts_toward_the_cap() {
        assert_eq!(lines(b"abcd\n", 5), ["abcd"]);
        assert_eq!(lines(b"abcde\n", 5), ["too large at 6"]);
        assert_eq!(lines(b"abcdefghij", 5)[0], "too large at 8");
    }
}
