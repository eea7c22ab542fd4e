//! Frozen protocol identity and size limits (schema `limits`, equal in
//! generations A and B).

/// The protocol identifier sent in `extension/initialize`.
pub const PROTOCOL_ID: &str = "reasonix.extension.v2";
/// The protocol major version a peer must speak.
pub const PROTOCOL_MAJOR: u32 = 2;
/// The protocol version string sent on the wire.
pub const PROTOCOL_VERSION: &str = "2";

/// Maximum size of one NDJSON frame, including its trailing `\n`, in both
/// directions.
pub const FRAME_BYTES: usize = 8_388_608;
/// A serialised payload larger than this is externalised into a content
/// reference instead of travelling inline.
pub const EXTERNALIZE_FIELD_BYTES: usize = 65_536;
/// Maximum number of bytes one `host/content/read` answer carries.
pub const CONTENT_REF_CHUNK_BYTES: usize = 262_144;
/// Maximum size of one stored content-reference object.
pub const CONTENT_REF_OBJECT_BYTES: usize = 8_388_608;

/// The major version of a peer's `protocolVersion`, parsed the way
/// upstream's host does (`strconv.Atoi`: optional sign, decimal digits, so
/// `"02"` and `"+2"` are 2); `None` when it is not an integer.
pub fn protocol_major_of(version: &str) -> Option<i64> {
    version.parse::<i64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_the_frozen_values() {
        assert_eq!(FRAME_BYTES, 8 * 1024 * 1024);
        assert_eq!(EXTERNALIZE_FIELD_BYTES, 64 * 1024);
        assert_eq!(CONTENT_REF_CHUNK_BYTES, 256 * 1024);
        assert_eq!(CONTENT_REF_OBJECT_BYTES, 8 * 1024 * 1024);
        assert_eq!(PROTOCOL_VERSION, PROTOCOL_MAJOR.to_string());
    }

    #[test]
    fn protocol_major_parses_like_atoi() {
        for (text, major) in [
            ("2", Some(2)),
            ("02", Some(2)),
            ("+2", Some(2)),
            ("-2", Some(-2)),
            ("3", Some(3)),
            ("2.0", None),
            (" 2", None),
            ("2 ", None),
            ("", None),
            ("two", None),
            ("0x2", None),
        ] {
            assert_eq!(protocol_major_of(text), major, "{text:?}");
        }
    }
}
