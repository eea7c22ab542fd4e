//! Reading text files the way upstream does: UTF-8 (BOM stripped), UTF-16 with
//! a BOM or an unmistakable NUL pattern, and GB18030 for files that are not
//! valid UTF-8 (packages authored on Chinese-locale Windows machines).

use std::io;
use std::path::Path;

use encoding_rs::{GB18030, UTF_16BE, UTF_16LE};

/// Read `path` and decode it to UTF-8 text.
pub fn read_text(path: &Path) -> io::Result<String> {
    let bytes = std::fs::read(path)?;
    decode(&bytes).map_err(|reason| io::Error::new(io::ErrorKind::InvalidData, reason))
}

/// Decode bytes of an unknown text encoding; the error names what failed.
pub fn decode(bytes: &[u8]) -> Result<String, String> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8(rest.to_vec()).map_err(|e| format!("invalid UTF-8: {e}"));
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return decode_with(UTF_16LE, rest, "UTF-16LE");
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return decode_with(UTF_16BE, rest, "UTF-16BE");
    }
    if let Some(encoding) = sniff_utf16(bytes) {
        let label = if encoding == UTF_16LE {
            "UTF-16LE"
        } else {
            "UTF-16BE"
        };
        return decode_with(encoding, bytes, label);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_owned()),
        Err(_) => decode_with(GB18030, bytes, "GB18030")
            .map_err(|_| "text is neither UTF-8, UTF-16 nor GB18030".to_owned()),
    }
}

fn decode_with(
    encoding: &'static encoding_rs::Encoding,
    bytes: &[u8],
    label: &str,
) -> Result<String, String> {
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    if had_errors {
        return Err(format!("invalid {label} text"));
    }
    Ok(text.into_owned())
}

/// BOM-less UTF-16 of mostly-ASCII text (JSON, Markdown) has a NUL in every
/// other byte; valid UTF-8 text practically never does.
fn sniff_utf16(bytes: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    if bytes.len() < 2 || !bytes.len().is_multiple_of(2) {
        return None;
    }
    let pairs = bytes.len() / 2;
    let even_nuls = bytes.iter().step_by(2).filter(|b| **b == 0).count();
    let odd_nuls = bytes.iter().skip(1).step_by(2).filter(|b| **b == 0).count();
    if odd_nuls * 2 > pairs && even_nuls == 0 {
        Some(UTF_16LE)
    } else if even_nuls * 2 > pairs && odd_nuls == 0 {
        Some(UTF_16BE)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_supported_encoding() {
        let text = "{\"name\":\"插件\"}";
        assert_eq!(decode(text.as_bytes()).unwrap(), text);
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(text.as_bytes());
        assert_eq!(decode(&bom).unwrap(), text);
        let (gb, _, _) = GB18030.encode(text);
        assert!(std::str::from_utf8(&gb).is_err());
        assert_eq!(decode(&gb).unwrap(), text);
        let le: Vec<u8> = text.encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
        assert_eq!(decode(&le).unwrap(), text);
        let mut le_bom = vec![0xFF, 0xFE];
        le_bom.extend_from_slice(&le);
        assert_eq!(decode(&le_bom).unwrap(), text);
        let be: Vec<u8> = text.encode_utf16().flat_map(|u| u.to_be_bytes()).collect();
        assert_eq!(decode(&be).unwrap(), text);
    }

    #[test]
    fn rejects_undecodable_bytes() {
        assert!(decode(&[0xFF, 0xFF, 0xFF]).is_err());
    }
}
