//! Content-reference helpers: ref format, sha256 digests, the
//! externalisation threshold, and the envelope rule of spec §8.

use crate::limits::{CONTENT_REF_OBJECT_BYTES, EXTERNALIZE_FIELD_BYTES};
use crate::types::ExternalizedField;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// Prefix of every content reference the host mints.
pub const CONTENT_REF_PREFIX: &str = "content_";
/// Number of hex characters after the prefix.
pub const CONTENT_REF_HEX_LEN: usize = 24;

/// True for `content_` followed by exactly 24 lowercase hex characters.
pub fn is_content_ref(s: &str) -> bool {
    s.strip_prefix(CONTENT_REF_PREFIX)
        .is_some_and(|hex| hex.len() == CONTENT_REF_HEX_LEN && is_lower_hex(hex))
}

/// True for a sha256 digest as the wire carries it: 64 lowercase hex.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && is_lower_hex(s)
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A content reference from 12 random bytes: `content_` + 24 hex.
pub fn format_content_ref(random: [u8; 12]) -> String {
    format!("{CONTENT_REF_PREFIX}{}", hex::encode(random))
}

/// The lowercase hex sha256 of `bytes`, as the wire carries it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Whether a serialised field of `len` bytes must travel as a content
/// reference (strictly more than 65 536 bytes).
pub fn should_externalize(len: usize) -> bool {
    len > EXTERNALIZE_FIELD_BYTES
}

/// Where an externalisable field's value is.
#[derive(Debug, Clone, Copy)]
pub enum Envelope<'a> {
    /// The value travels inline (byte-identical).
    Inline(&'a RawValue),
    /// The value is in the host's store; the inline member is `null`.
    External(&'a ExternalizedField),
}

impl PartialEq for Envelope<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Envelope::Inline(a), Envelope::Inline(b)) => a.get() == b.get(),
            (Envelope::External(a), Envelope::External(b)) => a == b,
            _ => false,
        }
    }
}

/// An externalisable field whose envelope breaks the rules of §8; each is a
/// `protocol_error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("expected exactly one externalized descriptor, got {0}")]
    DescriptorCount(usize),
    #[error("externalized descriptor points at {found:?}, expected {expected:?}")]
    PointerMismatch { expected: String, found: String },
    #[error("an inline value and an externalized descriptor at once")]
    InlineAndExternal,
    #[error("externalized object is {0} bytes; limit is {CONTENT_REF_OBJECT_BYTES}")]
    TooLarge(u64),
}

/// Applies the envelope rule to one externalisable field: no descriptors
/// means inline; otherwise exactly one descriptor whose pointer is
/// `pointer` (e.g. `/payload`), with the inline member `null` (or absent).
pub fn resolve_envelope<'a>(
    inline: Option<&'a RawValue>,
    externalized: &'a [ExternalizedField],
    pointer: &str,
) -> Result<Option<Envelope<'a>>, EnvelopeError> {
    match externalized {
        [] => Ok(inline.map(Envelope::Inline)),
        [field] => {
            if field.json_pointer != pointer {
                return Err(EnvelopeError::PointerMismatch {
                    expected: pointer.to_owned(),
                    found: field.json_pointer.clone(),
                });
            }
            if inline.is_some_and(|v| v.get() != "null") {
                return Err(EnvelopeError::InlineAndExternal);
            }
            if field.total_bytes > CONTENT_REF_OBJECT_BYTES as u64 {
                return Err(EnvelopeError::TooLarge(field.total_bytes));
            }
            Ok(Some(Envelope::External(field)))
        }
        many => Err(EnvelopeError::DescriptorCount(many.len())),
    }
}

/// Paged-in content that does not match its descriptor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContentMismatch {
    #[error("content is {actual} bytes, descriptor says {expected}")]
    Length { expected: u64, actual: u64 },
    #[error("content sha256 is {actual}, descriptor says {expected}")]
    Digest { expected: String, actual: String },
}

/// Checks reassembled content against its descriptor (length, then sha256
/// compared case-insensitively, as upstream's reader does).
pub fn verify_content(bytes: &[u8], field: &ExternalizedField) -> Result<(), ContentMismatch> {
    let actual = bytes.len() as u64;
    if actual != field.total_bytes {
        return Err(ContentMismatch::Length {
            expected: field.total_bytes,
            actual,
        });
    }
    let digest = sha256_hex(bytes);
    if !digest.eq_ignore_ascii_case(&field.sha256) {
        return Err(ContentMismatch::Digest {
            expected: field.sha256.clone(),
            actual: digest,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ref_format() {
        assert!(is_content_ref("content_0123456789abcdef01234567"));
        assert!(!is_content_ref("content_0123456789ABCDEF01234567"));
        assert!(!is_content_ref("content_0123456789abcdef0123456"));
        assert!(!is_content_ref("content_0123456789abcdef012345678"));
        assert!(!is_content_ref("contents0123456789abcdef01234567"));
        assert!(!is_content_ref(""));
    }

    fn descriptor(pointer: &str, bytes: &[u8]) -> ExternalizedField {
        ExternalizedField {
            json_pointer: pointer.into(),
            content_ref: format_content_ref([7; 12]),
            total_bytes: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        }
    }

    #[test]
    fn minted_refs_and_digests_have_the_wire_format() {
        let r = format_content_ref([0xab; 12]);
        assert_eq!(r, "content_abababababababababababab");
        assert!(is_content_ref(&r));
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(is_sha256_hex(&sha256_hex(b"abc")));
    }

    #[test]
    fn externalisation_threshold_is_strictly_greater() {
        assert!(!should_externalize(EXTERNALIZE_FIELD_BYTES));
        assert!(should_externalize(EXTERNALIZE_FIELD_BYTES + 1));
    }

    #[test]
    fn envelope_rules() {
        let null = crate::types::raw_json("null").unwrap();
        let value = crate::types::raw_json(r#"{"text":"x"}"#).unwrap();
        let d = descriptor("/payload", b"{}");
        assert_eq!(
            resolve_envelope(Some(&value), &[], "/payload"),
            Ok(Some(Envelope::Inline(&value)))
        );
        assert_eq!(resolve_envelope(None, &[], "/replacement"), Ok(None));
        assert_eq!(
            resolve_envelope(Some(&null), std::slice::from_ref(&d), "/payload"),
            Ok(Some(Envelope::External(&d)))
        );
        assert_eq!(
            resolve_envelope(Some(&value), std::slice::from_ref(&d), "/payload"),
            Err(EnvelopeError::InlineAndExternal)
        );
        assert!(matches!(
            resolve_envelope(Some(&null), std::slice::from_ref(&d), "/replacement"),
            Err(EnvelopeError::PointerMismatch { .. })
        ));
        assert_eq!(
            resolve_envelope(Some(&null), &[d.clone(), d.clone()], "/payload"),
            Err(EnvelopeError::DescriptorCount(2))
        );
        let huge = ExternalizedField {
            total_bytes: CONTENT_REF_OBJECT_BYTES as u64 + 1,
            ..d
        };
        assert!(matches!(
            resolve_envelope(None, std::slice::from_ref(&huge), "/payload"),
            Err(EnvelopeError::TooLarge(_))
        ));
    }

    #[test]
    fn content_is_verified_by_length_and_digest() {
        let d = descriptor("/payload", b"hello");
        assert_eq!(verify_content(b"hello", &d), Ok(()));
        let upper = ExternalizedField {
            sha256: d.sha256.to_uppercase(),
            ..d.clone()
        };
        assert_eq!(verify_content(b"hello", &upper), Ok(()));
        assert!(matches!(
            verify_content(b"hell", &d),
            Err(ContentMismatch::Length { .. })
        ));
        assert!(matches!(
            verify_content(b"jello", &d),
            Err(ContentMismatch::Digest { .. })
        ));
    }

    #[test]
    fn sha256_format() {
        let ok = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert!(is_sha256_hex(ok));
        assert!(!is_sha256_hex(&ok.to_uppercase()));
        assert!(!is_sha256_hex(&ok[1..]));
        assert!(!is_sha256_hex(&format!("{ok}0")));
        assert!(!is_sha256_hex(&ok.replace('e', "g")));
    }
}
