//! A parser for `text/event-stream` bodies (the WHATWG server-sent events
//! format), as the legacy MCP SSE transport receives them: bytes in,
//! complete events out.
//!
//! - Lines end in `\n`, `\r\n` or `\r`, also when a chunk boundary falls
//!   between the `\r` and the `\n`; a leading UTF-8 BOM is dropped.
//! - `event:`, `data:` (several join with `\n`), `id:` and comments (`:`)
//!   are understood; a single space after the colon is removed; `retry:`
//!   and unknown fields are ignored; a blank line dispatches the event.
//! - Memory is bounded: an event (its pending line plus its data) larger
//!   than the parser's limit is an error, not an allocation.
//! - Text must be UTF-8; anything else is an error naming the line.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `message` when the stream named none.
    pub event: String,
    pub data: String,
    pub id: Option<String>,
}

/// Why the stream cannot be read further.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// An event grew past the limit (bytes).
    TooLarge { limit: usize },
    /// A line is not UTF-8.
    NotUtf8,
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::TooLarge { limit } => {
                write!(f, "an SSE event is larger than {limit} bytes")
            }
            SseError::NotUtf8 => write!(f, "an SSE line is not UTF-8"),
        }
    }
}

impl std::error::Error for SseError {}

/// Incremental parser; feed it chunks with [`Parser::push`].
#[derive(Debug)]
pub struct Parser {
    limit: usize,
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` first in the next is part of it.
    after_cr: bool,
    started: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    failed: Option<SseError>,
}

impl Parser {
    /// A parser that refuses events larger than `limit` bytes.
    pub fn new(limit: usize) -> Parser {
        Parser {
            limit,
            line: Vec::new(),
            after_cr: false,
            started: false,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            failed: None,
        }
    }

    /// Parse `bytes`, appending every event they complete to `out`. After an
    /// error the parser stays failed and returns the same error.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        if !self.started && !bytes.is_empty() {
            // The BOM may itself be split; wait for three bytes.
            let have = self.line.len() + bytes.len();
            if have < 3 && b"\xEF\xBB\xBF".starts_with(&[&self.line[..], bytes].concat()) {
                self.line.extend_from_slice(bytes);
                return Ok(());
            }
            let mut head = std::mem::take(&mut self.line);
            head.extend_from_slice(bytes);
            self.started = true;
            let skip = if head.starts_with(b"\xEF\xBB\xBF") {
                3
            } else {
                0
            };
            let result = self.push(&head[skip..], out);
            return result;
        }
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (head, tail) = bytes.split_at(end);
            if let Err(error) = self.extend(head) {
                return self.fail(error);
            }
            let line = std::mem::take(&mut self.line);
            if let Err(error) = self.line_done(&line, out) {
                return self.fail(error);
            }
            let mut rest = &tail[1..];
            if tail[0] == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            bytes = rest;
        }
        if let Err(error) = self.extend(bytes) {
            return self.fail(error);
        }
        Ok(())
    }

    fn fail(&mut self, error: SseError) -> Result<(), SseError> {
        self.failed = Some(error.clone());
        self.line.clear();
        self.data.clear();
        Err(error)
    }

    fn extend(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.data.len() + self.line.len() + bytes.len() > self.limit {
            return Err(SseError::TooLarge { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        if line.is_empty() {
            if self.has_data {
                let mut data = std::mem::take(&mut self.data);
                // The spec appends '\n' per data line and drops the last one.
                if data.ends_with('\n') {
                    data.pop();
                }
                out.push(Event {
                    event: self
                        .event
                        .take()
                        .filter(|e| !e.is_empty())
                        .unwrap_or_else(|| "message".to_owned()),
                    data,
                    id: self.id.clone(),
                });
            }
            self.event = None;
            self.data.clear();
            self.has_data = false;
            return Ok(());
        }
        let text = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if text.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(SseError::TooLarge { limit: self.limit });
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            // An id with NUL is ignored, as the spec says.
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Result<Vec<Event>, SseError> {
        let mut parser = Parser::new(1 << 20);
        let mut out = Vec::new();
        for chunk in chunks {
            parser.push(chunk, &mut out)?;
        }
        Ok(out)
    }

    #[test]
    fn events_fields_and_line_endings() {
        let events = parse_chunks(&[
            b"\xEF\xBB\xBF: comment\r\nevent: endpoint\r\ndata: /messages?session_id=1\r\n\r\n",
            b"data: {\"a\":1}\n\ndata:x\ndata: y\rid: 7\r\r",
        ])
        .unwrap();
        assert_eq!(
            events,
            vec![
                Event {
                    event: "endpoint".into(),
                    data: "/messages?session_id=1".into(),
                    id: None
                },
                Event {
                    event: "message".into(),
                    data: "{\"a\":1}".into(),
                    id: None
                },
                Event {
                    event: "message".into(),
                    data: "x\ny".into(),
                    id: Some("7".into())
                },
            ]
        );
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let stream: &[u8] = b"\xEF\xBB\xBFevent: e\r\ndata: one\r\n\r\ndata: two\r\rdata: 3\n\n";
        let whole = parse_chunks(&[stream]).unwrap();
        assert_eq!(whole.len(), 3);
        for i in 0..stream.len() {
            for j in i..stream.len() {
                let got = parse_chunks(&[&stream[..i], &stream[i..j], &stream[j..]]).unwrap();
                assert_eq!(got, whole, "split at {i}/{j}");
            }
        }
    }

    #[test]
    fn limits_and_bad_text_are_errors() {
        let mut parser = Parser::new(16);
        let mut out = Vec::new();
        assert_eq!(
            parser.push(b"data: 0123456789abcdef", &mut out),
            Err(SseError::TooLarge { limit: 16 })
        );
        // Stays failed.
        assert!(parser.push(b"\n\n", &mut out).is_err());
        let mut parser = Parser::new(16);
        assert_eq!(
            parser.push(b"data: \xff\n", &mut out),
            Err(SseError::NotUtf8)
        );
        // Many data lines cannot add up past the limit either.
        let mut parser = Parser::new(16);
        let result = (0..10).try_for_each(|_| parser.push(b"data: abcd\n", &mut out));
        assert_eq!(result, Err(SseError::TooLarge { limit: 16 }));
        assert!(out.is_empty());
    }
}
