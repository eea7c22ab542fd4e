//! Content-reference helpers: ref format and sha256 digests.

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
