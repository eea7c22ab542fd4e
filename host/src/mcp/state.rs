//! Enablement of MCP servers: `$REASONIX_HOME/mcp-servers.json`.
//!
//! A server is enabled when its plugin is enabled and either the user said
//! so (`reasonix mcp enable <id>`) or, with no word from the user, its
//! entry has `auto_start: true` (imported servers default to false). The
//! file records only the user's choices, per plugin and server id, so a
//! choice does not carry over to a different plugin that later declares the
//! same id:
//!
//! ```json
//! {"version": 1, "servers": [{"plugin": "docs", "id": "context7", "enabled": true}]}
//! ```
//!
//! Written through a synced temporary file and a rename; a file that exists
//! but does not parse is an error naming it, never overwritten.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::home::ReasonixHome;
use crate::runtime::session_state::write_atomically;

/// File name inside the home.
pub const STATE_FILE: &str = "mcp-servers.json";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnablementFile {
    pub version: u32,
    #[serde(default)]
    pub servers: Vec<Choice>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    pub plugin: String,
    pub id: String,
    pub enabled: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error(
        "{path}: {message}; fix or delete the file (it only records `reasonix mcp enable/disable` choices)"
    )]
    Unreadable { path: PathBuf, message: String },
    #[error("{path}: cannot write: {message}")]
    Write { path: PathBuf, message: String },
}

pub fn state_path(home: &ReasonixHome) -> PathBuf {
    home.root().join(STATE_FILE)
}

/// Read the choices; a missing file is no choices.
pub fn load(path: &Path) -> Result<EnablementFile, StateError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice::<EnablementFile>(&bytes)
            .map_err(|e| StateError::Unreadable {
                path: path.to_path_buf(),
                message: e.to_string(),
            })
            .and_then(|file| {
                if file.version == 1 {
                    Ok(file)
                } else {
                    Err(StateError::Unreadable {
                        path: path.to_path_buf(),
                        message: format!("unsupported version {}", file.version),
                    })
                }
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(EnablementFile {
            version: 1,
            servers: Vec::new(),
        }),
        Err(e) => Err(StateError::Unreadable {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// Record a choice (atomically); returns the previous choice.
pub fn set(path: &Path, plugin: &str, id: &str, enabled: bool) -> Result<Option<bool>, StateError> {
    let mut file = load(path)?;
    let previous = file
        .servers
        .iter()
        .find(|c| c.plugin == plugin && c.id == id)
        .map(|c| c.enabled);
    file.servers.retain(|c| !(c.plugin == plugin && c.id == id));
    file.servers.push(Choice {
        plugin: plugin.to_owned(),
        id: id.to_owned(),
        enabled,
    });
    file.servers
        .sort_by(|a, b| a.id.cmp(&b.id).then(a.plugin.cmp(&b.plugin)));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| StateError::Write {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    }
    let bytes = serde_json::to_vec_pretty(&file).unwrap_or_default();
    write_atomically(path, &bytes).map_err(|e| StateError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(previous)
}

impl EnablementFile {
    /// The user's choice for a server, if any.
    pub fn choice(&self, plugin: &str, id: &str) -> Option<bool> {
        self.servers
            .iter()
            .find(|c| c.plugin == plugin && c.id == id)
            .map(|c| c.enabled)
    }
}

/// The choices, re-read only when the file's modification time or length
/// changes: checked before every dispatch, so a `reasonix mcp disable` from
/// another terminal takes effect at the next call.
pub struct EnablementWatch {
    path: PathBuf,
    seen: Mutex<Option<(Stamp, EnablementFile)>>,
}

/// Modification time and length of the file (`None`: it does not exist).
type Stamp = Option<(SystemTime, u64)>;

impl EnablementWatch {
    pub fn new(path: PathBuf) -> Self {
        EnablementWatch {
            path,
            seen: Mutex::new(None),
        }
    }

    pub fn current(&self) -> Result<EnablementFile, StateError> {
        let stamp = std::fs::metadata(&self.path)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())));
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, file)) = seen.as_ref()
            && *at == stamp
        {
            return Ok(file.clone());
        }
        let file = load(&self.path)?;
        *seen = Some((stamp, file.clone()));
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_round_trip_and_bad_files_fail_closed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STATE_FILE);
        assert_eq!(load(&path).unwrap().servers, vec![]);
        assert_eq!(set(&path, "p", "s", true).unwrap(), None);
        assert_eq!(set(&path, "p", "s", false).unwrap(), Some(true));
        set(&path, "q", "s", true).unwrap();
        let file = load(&path).unwrap();
        assert_eq!(file.choice("p", "s"), Some(false));
        assert_eq!(file.choice("q", "s"), Some(true));
        assert_eq!(file.choice("p", "t"), None);

        let watch = EnablementWatch::new(path.clone());
        assert_eq!(watch.current().unwrap().choice("p", "s"), Some(false));
        set(&path, "p", "s", true).unwrap();
        assert_eq!(watch.current().unwrap().choice("p", "s"), Some(true));

        std::fs::write(&path, "{not json").unwrap();
        let err = set(&path, "p", "s", true).unwrap_err();
        assert!(err.to_string().contains(STATE_FILE), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }
}
