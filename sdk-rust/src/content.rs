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
