//! Paging externalised values out of the host (`host/content/read`) with
//! every check of the upstream reader (§8): echoed ref and offset, utf8
//! encoding, size caps, strictly increasing progress, final length and
//! sha256.

use crate::error::Error;
use crate::host::HostLink;
use base64::Engine as _;
use reasonix_protocol::types::{
    ContentEncoding, ContentReadParams, ExternalizedField, RawJson, raw_json,
};
use reasonix_protocol::{CONTENT_REF_CHUNK_BYTES, CONTENT_REF_OBJECT_BYTES, ErrorReason};
use sha2::{Digest, Sha256};

fn violation(message: String) -> Error {
    Error::protocol(ErrorReason::ProtocolError, message)
}

/// Reads the whole object `field` names.
pub(crate) fn read_all(link: &dyn HostLink, field: &ExternalizedField) -> Result<Vec<u8>, Error> {
    let reference = &field.content_ref;
    if field.total_bytes > CONTENT_REF_OBJECT_BYTES as u64 {
        return Err(Error::protocol(
            ErrorReason::FrameTooLarge,
            format!(
                "content {reference} is {} bytes; limit is {CONTENT_REF_OBJECT_BYTES}",
                field.total_bytes
            ),
        ));
    }
    let mut data = Vec::with_capacity(field.total_bytes as usize);
    let mut offset = 0u64;
    loop {
        let chunk = link.content_read(ContentReadParams {
            content_ref: reference.clone(),
            offset,
        })?;
        if chunk.content_ref != *reference || chunk.offset != offset {
            return Err(violation(format!(
                "host/content/read answered {}@{} for {reference}@{offset}",
                chunk.content_ref, chunk.offset
            )));
        }
        if chunk.encoding != ContentEncoding::Utf8 {
            return Err(violation("content encoding is not utf8".into()));
        }
        if chunk.total_bytes != field.total_bytes {
            return Err(violation(format!(
                "content {reference} reports {} bytes, the descriptor {}",
                chunk.total_bytes, field.total_bytes
            )));
        }
        if !chunk.sha256.eq_ignore_ascii_case(&field.sha256) {
            return Err(violation(format!(
                "content {reference} reports another sha256 than its descriptor"
            )));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(chunk.data_base64.as_bytes())
            .map_err(|e| violation(format!("content {reference}: dataBase64: {e}")))?;
        if bytes.len() > CONTENT_REF_CHUNK_BYTES {
            return Err(violation(format!(
                "content {reference}: a chunk of {} bytes exceeds {CONTENT_REF_CHUNK_BYTES}",
                bytes.len()
            )));
        }
        data.extend_from_slice(&bytes);
        if data.len() as u64 > field.total_bytes {
            return Err(violation(format!(
                "content {reference} is longer than its {} bytes",
                field.total_bytes
            )));
        }
        match chunk.next_offset {
            Some(next) => {
                if next <= offset || next != data.len() as u64 {
                    return Err(violation(format!(
                        "content {reference}: nextOffset {next} after offset {offset} is no progress"
                    )));
                }
                offset = next;
            }
            None => break,
        }
    }
    if data.len() as u64 != field.total_bytes {
        return Err(violation(format!(
            "content {reference} ended after {} of {} bytes",
            data.len(),
            field.total_bytes
        )));
    }
    let digest = hex::encode(Sha256::digest(&data));
    if !digest.eq_ignore_ascii_case(&field.sha256) {
        return Err(violation(format!("content {reference}: sha256 mismatch")));
    }
    Ok(data)
}

/// The inline value of an externalisable field (`/payload`), paging it in
/// when the host externalised it. Returns the value and whether it was paged.
pub(crate) fn resolve_field(
    link: &dyn HostLink,
    pointer: &str,
    inline: RawJson,
    externalized: &[ExternalizedField],
) -> Result<(RawJson, bool), Error> {
    match externalized {
        [] => Ok((inline, false)),
        [field] => {
            if field.json_pointer != pointer {
                return Err(violation(format!(
                    "externalized pointer {} is not {pointer}",
                    field.json_pointer
                )));
            }
            if inline.get().trim() != "null" {
                return Err(violation(format!(
                    "{pointer} is both inline and externalized"
                )));
            }
            let bytes = read_all(link, field)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| violation(format!("content for {pointer} is not UTF-8")))?;
            let raw = raw_json(&text)
                .map_err(|e| violation(format!("content for {pointer} is not JSON: {e}")))?;
            Ok((raw, true))
        }
        _ => Err(violation(format!(
            "{} externalized descriptors; exactly one is allowed",
            externalized.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::LogLevel;
    use reasonix_protocol::types::{
        ContentReadResult, UIPublishParams, UIPublishResult, UIRequestParams, UIRequestResult,
    };
    use std::sync::Mutex;

    /// Changes an answer before the store returns it.
    type Tamper = fn(&mut ContentReadResult);

    /// Serves one object in `chunk`-byte pieces, with `tamper` applied to
    /// each answer before it is returned.
    struct Store {
        data: Vec<u8>,
        chunk: usize,
        tamper: Tamper,
        reads: Mutex<usize>,
    }

    impl HostLink for Store {
        fn content_read(&self, p: ContentReadParams) -> Result<ContentReadResult, Error> {
            *self.reads.lock().unwrap() += 1;
            let start = p.offset as usize;
            let end = (start + self.chunk).min(self.data.len());
            let mut r = ContentReadResult {
                content_ref: p.content_ref,
                offset: p.offset,
                data_base64: base64::engine::general_purpose::STANDARD
                    .encode(&self.data[start..end]),
                next_offset: (end < self.data.len()).then_some(end as u64),
                total_bytes: self.data.len() as u64,
                sha256: hex::encode(Sha256::digest(&self.data)),
                encoding: ContentEncoding::Utf8,
            };
            (self.tamper)(&mut r);
            Ok(r)
        }
        fn ui_publish(&self, _: UIPublishParams) -> Result<UIPublishResult, Error> {
            unreachable!()
        }
        fn ui_request(&self, _: UIRequestParams) -> Result<UIRequestResult, Error> {
            unreachable!()
        }
        fn log(&self, _: LogLevel, _: &str) {}
    }

    fn store(data: &[u8], chunk: usize, tamper: Tamper) -> Store {
        Store {
            data: data.to_vec(),
            chunk,
            tamper,
            reads: Mutex::new(0),
        }
    }

    fn field(data: &[u8]) -> ExternalizedField {
        ExternalizedField {
            json_pointer: "/payload".into(),
            content_ref: "content_0123456789abcdef01234567".into(),
            total_bytes: data.len() as u64,
            sha256: hex::encode(Sha256::digest(data)),
        }
    }

    fn error_text(s: &Store, f: &ExternalizedField) -> String {
        read_all(s, f).unwrap_err().to_string()
    }

    #[test]
    fn pages_through_chunks_and_verifies() {
        let data = br#"{"text":"0123456789abcdef"}"#;
        let s = store(data, 5, |_| {});
        assert_eq!(read_all(&s, &field(data)).unwrap(), data);
        assert_eq!(*s.reads.lock().unwrap(), data.len().div_ceil(5));
    }

    #[test]
    fn every_reader_check_fires() {
        let data = b"0123456789";
        let f = field(data);
        let cases: [(Tamper, &str); 5] = [
            (|r| r.offset += 1, "answered"),
            (|r| r.total_bytes += 1, "reports 11 bytes"),
            (|r| r.sha256 = "0".repeat(64), "another sha256"),
            (|r| r.next_offset = Some(r.offset), "no progress"),
            (|r| r.data_base64 = "***".into(), "dataBase64"),
        ];
        for (tamper, expected) in cases {
            let text = error_text(&store(data, 4, tamper), &f);
            assert!(text.contains(expected), "{expected:?} not in {text:?}");
        }
        // Other bytes served under the descriptor's length and digest.
        let liar = store(b"9876543210", 4, |r| {
            r.sha256 = hex::encode(Sha256::digest(b"0123456789"));
        });
        let text = error_text(&liar, &f);
        assert!(text.contains("sha256 mismatch"), "{text}");
        // Ending early.
        let text = error_text(&store(data, 4, |r| r.next_offset = None), &f);
        assert!(text.contains("ended after 4 of 10"), "{text}");
        // Objects over the cap are refused before any read.
        let mut huge = f.clone();
        huge.total_bytes = CONTENT_REF_OBJECT_BYTES as u64 + 1;
        let s = store(data, 4, |_| {});
        assert_eq!(
            read_all(&s, &huge).unwrap_err().wire_reason(),
            ErrorReason::FrameTooLarge
        );
        assert_eq!(*s.reads.lock().unwrap(), 0);
    }

    #[test]
    fn resolve_rules_for_the_payload_field() {
        let data = br#"{"text":"hi"}"#;
        let s = store(data, 100, |_| {});
        let null = raw_json("null").unwrap();
        let (raw, paged) = resolve_field(&s, "/payload", null.clone(), &[field(data)]).unwrap();
        assert_eq!((raw.get(), paged), (r#"{"text":"hi"}"#, true));
        let inline = raw_json(r#"{"text":"x"}"#).unwrap();
        let (raw, paged) = resolve_field(&s, "/payload", inline.clone(), &[]).unwrap();
        assert_eq!((raw.get(), paged), (r#"{"text":"x"}"#, false));
        assert!(resolve_field(&s, "/payload", inline, &[field(data)]).is_err());
        let mut wrong = field(data);
        wrong.json_pointer = "/replacement".into();
        assert!(resolve_field(&s, "/payload", null.clone(), &[wrong]).is_err());
        assert!(resolve_field(&s, "/payload", null, &[field(data), field(data)]).is_err());
    }
}
