//! The plugin registry `<home>/plugin-packages.json` (§a.5): the only
//! authority on what is installed.
//!
//! Reads are strict: a file that exists but cannot be read or parsed fails
//! closed with an error naming it, and is never overwritten. Writes are
//! atomic: a synced temp file in the same directory, an optional validation
//! right before the rename, `rename(2)` (never truncate-and-copy; a
//! cross-device refusal fails closed), then a directory fsync.
use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::home::ReasonixHome;
use crate::install::error::{ErrorCode, InstallError, InstallResult};
use crate::install::pause::pause_at;
use crate::install::snapshot::sync_dir;

/// The plugin name rule `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`, as the package reader applies it.
pub use reasonix_package::inventory::names::is_valid_name;

/// One installed package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryEntry {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `plugins/<name>` (relative to the home) for copies; absolute for links.
    pub root: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `reasonix`, `codex` or `claude`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_kind: Option<String>,
    #[serde(default)]
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    /// Tree digest of the published copy (absent for links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_digest: Option<String>,
    /// Fields this version does not know (a newer Reasonix wrote them):
    /// kept as they are and written back, so an older binary's enable,
    /// disable or install does not erase a newer one's data.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

impl RegistryEntry {
    /// A link install records the absolute source directory as its root.
    pub fn is_link(&self) -> bool {
        Path::new(&self.root).is_absolute()
    }
}

/// The whole registry file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginRegistry {
    #[serde(default)]
    pub version: u32,
    #[serde(default)]
    pub plugins: Vec<RegistryEntry>,
    /// Top-level fields this version does not know, kept (see
    /// [`RegistryEntry::unknown`]).
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

impl Default for PluginRegistry {
    fn default() -> Self {
        Self {
            version: 1,
            plugins: Vec::new(),
            unknown: serde_json::Map::new(),
        }
    }
}

/// Name of the advisory lock file beside the registry.
pub const LOCK_FILE: &str = ".plugin-packages.lock";

/// An exclusive, cross-process lock around a registry read-modify-write
/// (and the publication it guards). The kernel drops it when the holder
/// exits, SIGKILL included; it is released on drop.
#[derive(Debug)]
pub struct RegistryLock {
    _file: fs::File,
}

impl RegistryLock {
    /// Block until this process holds the lock.
    pub fn acquire(home: &ReasonixHome) -> InstallResult<Self> {
        let dir = home.root();
        fs::create_dir_all(dir).map_err(|e| InstallError::io("create", dir, e))?;
        let path = dir.join(LOCK_FILE);
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| InstallError::io("open", &path, e))?;
        file.lock()
            .map_err(|e| InstallError::io("lock", &path, e))?;
        Ok(Self { _file: file })
    }
}

impl PluginRegistry {
    /// Read the registry; a missing file is an empty registry.
    pub fn load(home: &ReasonixHome) -> InstallResult<Self> {
        let path = home.registry_path();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(unreadable(&path, &e.to_string())),
        };
        let mut reg: PluginRegistry = serde_json::from_slice(&bytes)
            .map_err(|e| unreadable(&path, &format!("invalid JSON: {e}")))?;
        if reg.version == 0 {
            reg.version = 1;
        }
        if reg.version != 1 {
            return Err(unreadable(
                &path,
                &format!("unsupported registry version {} (expected 1)", reg.version),
            ));
        }
        // Two entries for one name: which one is installed is unknowable,
        // and every rewrite would carry both. Fail closed and say how to
        // repair it, rather than list or write it twice.
        let mut seen = std::collections::BTreeMap::new();
        for (i, entry) in reg.plugins.iter().enumerate() {
            if let Some(first) = seen.insert(entry.name.as_str(), i) {
                return Err(InstallError::new(
                    ErrorCode::RegistryUnreadable,
                    format!(
                        "plugin registry {} names plugin {:?} twice (plugins[{first}] and plugins[{i}])",
                        path.display(),
                        entry.name
                    ),
                )
                .with_next(format!(
                    "Edit {} and keep one of the two entries for {:?} (the one whose root holds the package you want), then re-run the command.",
                    path.display(),
                    entry.name
                )));
            }
        }
        Ok(reg)
    }

    pub fn get(&self, name: &str) -> Option<&RegistryEntry> {
        self.plugins.iter().find(|p| p.name == name)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut RegistryEntry> {
        self.plugins.iter_mut().find(|p| p.name == name)
    }

    /// Insert or replace the entry with the same name.
    pub fn upsert(&mut self, entry: RegistryEntry) {
        match self.get_mut(&entry.name) {
            Some(slot) => *slot = entry,
            None => self.plugins.push(entry),
        }
    }

    /// Remove and return the named entry.
    pub fn remove(&mut self, name: &str) -> Option<RegistryEntry> {
        let i = self.plugins.iter().position(|p| p.name == name)?;
        Some(self.plugins.remove(i))
    }

    /// The exact bytes written: pretty (2-space), sorted by name, trailing newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut sorted = self.clone();
        sorted.version = 1;
        sorted.plugins.sort_by(|a, b| a.name.cmp(&b.name));
        let mut out = serde_json::to_string_pretty(&sorted).unwrap_or_default();
        out = crate::install::gojson::html_escape(&out);
        out.push('\n');
        out.into_bytes()
    }

    /// Publish atomically. `validate` runs after the temp file is synced and
    /// right before the rename; its error aborts the publication.
    pub fn save(
        &self,
        home: &ReasonixHome,
        validate: Option<&dyn Fn() -> InstallResult<()>>,
    ) -> InstallResult<()> {
        let dir = home.root();
        fs::create_dir_all(dir).map_err(|e| publication(dir, &e))?;
        let path = home.registry_path();
        let mut tmp = tempfile::Builder::new()
            .prefix(".plugin-packages.json.tmp-")
            .tempfile_in(dir)
            .map_err(|e| publication(dir, &e))?;
        tmp.write_all(&self.to_bytes())
            .and_then(|_| tmp.as_file().sync_all())
            .map_err(|e| publication(tmp.path(), &e))?;
        pause_at("before_registry_rename");
        if let Some(check) = validate {
            check()?;
        }
        tmp.persist(&path).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::CrossesDevices {
                InstallError::new(
                    ErrorCode::PublicationFailed,
                    format!(
                        "plugin package publication failed: the file system refused to rename the registry into {} (cross-device); it is never truncated and copied over",
                        path.display()
                    ),
                )
            } else {
                publication(&path, &e.error)
            }
        })?;
        sync_dir(dir);
        pause_at("after_registry_rename");
        Ok(())
    }
}

fn unreadable(path: &Path, why: &str) -> InstallError {
    InstallError::new(
        ErrorCode::RegistryUnreadable,
        format!("cannot read plugin registry {}: {why}", path.display()),
    )
}

fn publication(path: &Path, err: &std::io::Error) -> InstallError {
    InstallError::new(
        ErrorCode::PublicationFailed,
        format!(
            "plugin package publication failed: {}: {err}",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> RegistryEntry {
        RegistryEntry {
            name: name.into(),
            source: Some("/src/x".into()),
            root: format!("plugins/{name}"),
            version: None,
            description: None,
            manifest_kind: Some("reasonix".into()),
            enabled: true,
            commit: None,
            status: None,
            status_reason: None,
            tree_digest: None,
            unknown: serde_json::Map::new(),
        }
    }

    #[test]
    fn names() {
        for ok in ["a", "A1", "a.b_c-d", &"x".repeat(64)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in ["", ".a", "-a", "a/b", "a b", &"x".repeat(65), "é", "a\n"] {
            assert!(!is_valid_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn round_trip_is_sorted_pretty_with_trailing_newline() {
        let home = tempfile::tempdir().unwrap();
        let home = ReasonixHome::at(home.path());
        let mut reg = PluginRegistry::default();
        reg.upsert(entry("zeta"));
        reg.upsert(entry("alpha"));
        reg.save(&home, None).unwrap();
        let text = fs::read_to_string(home.registry_path()).unwrap();
        assert_eq!(
            text,
            "{\n  \"version\": 1,\n  \"plugins\": [\n    {\n      \"name\": \"alpha\",\n      \"source\": \"/src/x\",\n      \"root\": \"plugins/alpha\",\n      \"manifestKind\": \"reasonix\",\n      \"enabled\": true\n    },\n    {\n      \"name\": \"zeta\",\n      \"source\": \"/src/x\",\n      \"root\": \"plugins/zeta\",\n      \"manifestKind\": \"reasonix\",\n      \"enabled\": true\n    }\n  ]\n}\n"
        );
        let back = PluginRegistry::load(&home).unwrap();
        assert_eq!(back.plugins[0].name, "alpha");
        // Nothing but the registry is left in the home.
        let names: Vec<_> = fs::read_dir(home.root())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("plugin-packages.json")]
        );
    }

    #[test]
    fn missing_is_empty_version_zero_reads_as_one_corrupt_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let home = ReasonixHome::at(dir.path());
        assert_eq!(
            PluginRegistry::load(&home).unwrap(),
            PluginRegistry::default()
        );
        fs::write(home.registry_path(), r#"{"version":0,"plugins":[]}"#).unwrap();
        assert_eq!(PluginRegistry::load(&home).unwrap().version, 1);
        fs::write(home.registry_path(), "{not json").unwrap();
        let err = PluginRegistry::load(&home).unwrap_err();
        assert_eq!(err.code, ErrorCode::RegistryUnreadable);
        assert!(err.message.contains("plugin-packages.json"), "{err}");
    }

    #[test]
    fn fields_of_a_newer_version_survive_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let home = ReasonixHome::at(dir.path());
        fs::write(
            home.registry_path(),
            r#"{"version":1,"futureTop":{"k":[1,2]},"plugins":[
                {"name":"a","root":"plugins/a","enabled":true,"pinnedBy":"newer","trust":{"level":3}},
                {"name":"b","root":"plugins/b","enabled":false}]}"#,
        )
        .unwrap();
        let mut reg = PluginRegistry::load(&home).unwrap();
        reg.get_mut("b").unwrap().enabled = true;
        reg.upsert(entry("c"));
        reg.save(&home, None).unwrap();
        let back: serde_json::Value =
            serde_json::from_slice(&fs::read(home.registry_path()).unwrap()).unwrap();
        assert_eq!(back["futureTop"], serde_json::json!({"k": [1, 2]}));
        assert_eq!(back["plugins"][0]["pinnedBy"], "newer");
        assert_eq!(back["plugins"][0]["trust"]["level"], 3);
        assert_eq!(back["plugins"][1]["enabled"], true);
        assert_eq!(back["plugins"][2]["name"], "c");
    }

    #[test]
    fn a_plugin_named_twice_is_a_registry_error_with_a_repair_hint() {
        let dir = tempfile::tempdir().unwrap();
        let home = ReasonixHome::at(dir.path());
        fs::write(
            home.registry_path(),
            r#"{"version":1,"plugins":[
                {"name":"a","root":"plugins/a","enabled":true},
                {"name":"b","root":"plugins/b","enabled":true},
                {"name":"a","root":"plugins/a2","enabled":true}]}"#,
        )
        .unwrap();
        let err = PluginRegistry::load(&home).unwrap_err();
        assert_eq!(err.code, ErrorCode::RegistryUnreadable);
        assert!(err.message.contains("\"a\" twice"), "{err}");
        assert!(err.message.contains("plugins[0] and plugins[2]"), "{err}");
        assert!(err.next.contains("keep one"), "{}", err.next);
    }

    #[test]
    fn failed_validation_leaves_the_old_registry_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = ReasonixHome::at(dir.path());
        let mut reg = PluginRegistry::default();
        reg.upsert(entry("a"));
        reg.save(&home, None).unwrap();
        let before = fs::read(home.registry_path()).unwrap();
        reg.upsert(entry("b"));
        let refuse = || -> InstallResult<()> {
            Err(InstallError::new(ErrorCode::DigestMismatch, "changed"))
        };
        let err = reg.save(&home, Some(&refuse)).unwrap_err();
        assert_eq!(err.code, ErrorCode::DigestMismatch);
        assert_eq!(fs::read(home.registry_path()).unwrap(), before);
        assert_eq!(fs::read_dir(home.root()).unwrap().count(), 1);
    }
}
