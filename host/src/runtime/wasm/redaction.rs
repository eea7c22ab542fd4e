//! Credential redaction of guest text: the project's one redaction
//! function, `reasonix_sidecar::redact::redact`.

pub(crate) fn redact(text: &str) -> String {
    reasonix_sidecar::redact::redact(text).into_owned()
}
