//! Per-session extension state in `<session>.extensions.json` beside the
//! session file. Older hosts ignore the file. Writes are atomic (temporary
//! file + rename), so a crash leaves the old file or the new one, never half.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::diagnostics::AuditEntry;

pub const STATE_FILE_VERSION: u32 = 1;

/// What the host keeps per plugin for a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PluginSessionState {
    pub version: String,
    /// The generation the plugin last ran in for this session.
    pub generation: u64,
    /// The latest UI surfaces it published (surface id → kind).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub surfaces: BTreeMap<String, String>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionExtensionState {
    pub version: u32,
    pub generation: u64,
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginSessionState>,
    #[serde(default)]
    pub approval_grants: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<AuditEntryRecord>,
}

/// An audit entry as stored (owned strings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuditEntryRecord {
    pub plugin: String,
    pub trust: String,
    pub point: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub host_decision: String,
    pub extension_decision: String,
    pub applied: bool,
}

impl From<&AuditEntry> for AuditEntryRecord {
    fn from(entry: &AuditEntry) -> Self {
        AuditEntryRecord {
            plugin: entry.plugin.clone(),
            trust: entry.trust.as_str().to_string(),
            point: entry.point.to_string(),
            tool: entry.tool.clone(),
            host_decision: entry.host_decision.to_string(),
            extension_decision: entry.extension_decision.to_string(),
            applied: entry.applied,
        }
    }
}

impl Default for SessionExtensionState {
    fn default() -> Self {
        SessionExtensionState {
            version: STATE_FILE_VERSION,
            generation: 0,
            plugins: BTreeMap::new(),
            approval_grants: Vec::new(),
            goal: None,
            audit: Vec::new(),
        }
    }
}

/// A state file problem, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a valid extension state file: {why}")]
    Invalid { path: PathBuf, why: String },
}

/// `<session>.extensions.json` for a session file path.
pub fn state_path(session: &Path) -> PathBuf {
    let mut name = session
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".extensions.json");
    session.with_file_name(name)
}

/// Read the state of `session`; a missing file is the default state.
pub fn load(session: &Path) -> Result<SessionExtensionState, StateFileError> {
    let path = state_path(session);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(SessionExtensionState::default());
        }
        Err(source) => return Err(StateFileError::Io { path, source }),
    };
    let state: SessionExtensionState =
        serde_json::from_str(&text).map_err(|e| StateFileError::Invalid {
            path: path.clone(),
            why: e.to_string(),
        })?;
    if state.version != STATE_FILE_VERSION {
        return Err(StateFileError::Invalid {
            path,
            why: format!("version {} is not {STATE_FILE_VERSION}", state.version),
        });
    }
    Ok(state)
}

/// Write the state of `session` atomically.
pub fn save(session: &Path, state: &SessionExtensionState) -> Result<PathBuf, StateFileError> {
    let path = state_path(session);
    write_atomically(&path, &serde_json::to_vec_pretty(state).unwrap_or_default())?;
    Ok(path)
}

/// Write `bytes` to `path` through a temporary sibling and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StateFileError> {
    let io = |source| StateFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    temp.write_all(bytes).map_err(io)?;
    temp.write_all(b"\n").map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_file_sits_beside_the_session() {
        assert_eq!(
            state_path(Path::new("/x/sessions/abc.json")),
            PathBuf::from("/x/sessions/abc.json.extensions.json")
        );
    }

    #[test]
    fn round_trip_and_missing_is_default() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.json");
        assert_eq!(load(&session).unwrap(), SessionExtensionState::default());
        let mut state = SessionExtensionState {
            generation: 3,
            ..Default::default()
        };
        state.approval_grants.push("echo".into());
        state.plugins.insert(
            "alpha".into(),
            PluginSessionState {
                version: "1.0.0".into(),
                generation: 3,
                surfaces: BTreeMap::new(),
            },
        );
        let path = save(&session, &state).unwrap();
        assert!(path.ends_with("s.json.extensions.json"));
        assert_eq!(load(&session).unwrap(), state);
    }

    #[test]
    fn corrupt_file_is_a_typed_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.json");
        std::fs::write(
            state_path(&session),
            "{\"version\":1,\"generation\":1,\"bogus\":true}",
        )
        .unwrap();
        let error = load(&session).unwrap_err().to_string();
        assert!(
            error.contains("s.json.extensions.json") && error.contains("bogus"),
            "{error}"
        );
    }
}
