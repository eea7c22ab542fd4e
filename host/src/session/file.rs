//! The session file: the transcript a session continues from. Written
//! atomically after every completed turn; a file that does not parse is an
//! error naming it and is never overwritten.

use std::path::Path;

use reasonix_protocol::types::ProviderMessage;
use serde::{Deserialize, Serialize};

use crate::runtime::session_state;

pub const SESSION_FILE_VERSION: u32 = 1;

/// A session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionFile {
    pub version: u32,
    pub session_id: String,
    pub messages: Vec<ProviderMessage>,
    /// The model the session last used (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Read a session file; `Ok(None)` when it does not exist yet.
pub fn read(path: &Path) -> Result<Option<SessionFile>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let file: SessionFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: not a Reasonix session file ({e}); it was left untouched — move it away or \
             name another file with --session",
            path.display()
        )
    })?;
    if file.version != SESSION_FILE_VERSION {
        return Err(format!(
            "{}: session file version {} is not supported (this Reasonix reads version {})",
            path.display(),
            file.version,
            SESSION_FILE_VERSION
        ));
    }
    Ok(Some(file))
}

/// Write a session file atomically.
pub fn write(path: &Path, file: &SessionFile) -> Result<(), String> {
    let bytes = serde_json::to_vec_pretty(file).map_err(|e| e.to_string())?;
    session_state::write_atomically(path, &bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_files_are_errors_and_missing_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        assert_eq!(read(&path), Ok(None));
        std::fs::write(&path, "{\"version\":1,").unwrap();
        let error = read(&path).unwrap_err();
        assert!(error.contains("not a Reasonix session file"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"version\":1,");
        std::fs::write(&path, r#"{"version":9,"sessionId":"x","messages":[]}"#).unwrap();
        assert!(read(&path).unwrap_err().contains("version 9"));
        let file = SessionFile {
            version: 1,
            session_id: "s".into(),
            messages: Vec::new(),
            model: Some("echo".into()),
        };
        write(&path, &file).unwrap();
        assert_eq!(read(&path).unwrap(), Some(file));
    }
}
