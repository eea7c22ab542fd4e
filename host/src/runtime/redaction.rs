//! The one door extension text passes through on its way to a log, a UI
//! surface, an error or a block reason: the project's credential redaction
//! (`reasonix_sidecar::redact::redact`) followed by plain-text reduction.

/// Redact credentials, then drop control characters (escape sequences,
/// carriage returns, NULs) so no terminal or renderer interprets the text.
/// Newlines and tabs stay.
pub fn clean_text(text: &str) -> String {
    let redacted = reasonix_sidecar::redact::redact(text);
    plain_text(&redacted)
}

/// Drop every control character except `\n` and `\t`.
pub fn plain_text(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_go_and_newlines_stay() {
        assert_eq!(plain_text("a\u{1b}[2Jb\r\nc\td\0"), "a[2Jb\nc\td");
    }

    #[test]
    fn clean_text_redacts() {
        let cleaned = clean_text("Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789");
        assert!(
            !cleaned.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
            "{cleaned}"
        );
    }
}
