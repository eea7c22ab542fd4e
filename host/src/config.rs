//! Configuration files: the user's `$REASONIX_HOME/config.toml` and a
//! workspace's `.reasonix/config.toml`.
//!
//! The user file may set everything below. A workspace file may set only
//! `default_model`: it is written by whoever wrote the project, so it can
//! never declare a runtime, grant a permission or turn on anything that runs
//! code (seed: "project configuration can never declare one"). Keys it may
//! not set are refused with a warning naming them; unknown keys warn with
//! their dotted name. A file that is not TOML is an error naming the file.
//!
//! ```toml
//! default_model = "plugin/echo-provider/echo/small"
//!
//! [tools.shell]
//! prefer = "bash"          # the shell of the bash tool and of Bash hooks
//! path = "/opt/bin/bash"   # an explicit interpreter
//!
//! [permissions]
//! allow = ["read_file", "list_dir", "mcp__github__*"]  # never asked
//! deny = ["bash"]                                      # always refused
//!
//! [mods]                   # Claude Code mods (user file only)
//! enabled = false
//! ```

use std::path::{Path, PathBuf};

use serde::Serialize;
use toml::{Table, Value};

use crate::home::ReasonixHome;

/// The user file's name inside the home.
pub const USER_FILE: &str = "config.toml";
/// The workspace file, relative to the workspace root.
pub const WORKSPACE_FILE: &str = ".reasonix/config.toml";

/// `[tools.shell]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ShellConfig {
    /// `bash`, `sh`, `powershell`, …: the interpreter the bash tool uses.
    pub prefer: Option<String>,
    /// An explicit interpreter path (reused by explicit Bash hooks).
    pub path: Option<PathBuf>,
}

/// `[permissions]`: tool-name patterns (`*` matches any run of characters).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PermissionRules {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

/// What the rules say about one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleVerdict {
    Allow,
    Deny,
    /// No rule names the tool: ask.
    Ask,
}

impl PermissionRules {
    /// Deny rules win over allow rules.
    pub fn verdict(&self, tool: &str) -> RuleVerdict {
        if self.deny.iter().any(|p| glob_match(p, tool)) {
            RuleVerdict::Deny
        } else if self.allow.iter().any(|p| glob_match(p, tool)) {
            RuleVerdict::Allow
        } else {
            RuleVerdict::Ask
        }
    }
}

/// `*` matches any run of characters; everything else is literal.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// A finding that does not stop anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigWarning {
    pub file: PathBuf,
    /// The dotted key (`tools.shel`), when the warning is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub message: String,
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

/// A file that cannot be used at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", file.display())]
pub struct ConfigError {
    pub file: PathBuf,
    pub message: String,
}

/// Both files, merged: the workspace's `default_model` wins over the user's.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Config {
    pub default_model: Option<String>,
    pub shell: ShellConfig,
    pub permissions: PermissionRules,
    /// The user file's `[mods]` table, as written (read by the mods runtime).
    #[serde(skip)]
    pub mods: Table,
    pub warnings: Vec<ConfigWarning>,
}

impl Config {
    /// Read both files (a missing file is an empty one).
    pub fn load(home: &ReasonixHome, workspace: &Path) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        let user_path = home.root().join(USER_FILE);
        if let Some(table) = read_table(&user_path)? {
            config.apply_user(&user_path, table)?;
        }
        let workspace_path = workspace.join(WORKSPACE_FILE);
        if let Some(table) = read_table(&workspace_path)? {
            config.apply_workspace(&workspace_path, table)?;
        }
        Ok(config)
    }

    fn warn(&mut self, file: &Path, key: Option<String>, message: String) {
        self.warnings.push(ConfigWarning {
            file: file.to_path_buf(),
            key,
            message,
        });
    }

    fn apply_user(&mut self, file: &Path, table: Table) -> Result<(), ConfigError> {
        for (key, value) in table {
            match key.as_str() {
                "default_model" => self.default_model = Some(string(file, &key, &value)?),
                "tools" => self.apply_tools(file, &value)?,
                "permissions" => self.apply_permissions(file, &value)?,
                "mods" => {
                    self.mods = table_of(file, &key, &value)?.clone();
                }
                _ => self.warn(
                    file,
                    Some(key.clone()),
                    format!("unknown key `{key}`; it is ignored"),
                ),
            }
        }
        Ok(())
    }

    fn apply_tools(&mut self, file: &Path, value: &Value) -> Result<(), ConfigError> {
        for (key, value) in table_of(file, "tools", value)? {
            if key != "shell" {
                self.warn(
                    file,
                    Some(format!("tools.{key}")),
                    format!("unknown key `tools.{key}`; it is ignored"),
                );
                continue;
            }
            for (key, value) in table_of(file, "tools.shell", value)? {
                let dotted = format!("tools.shell.{key}");
                match key.as_str() {
                    "prefer" => self.shell.prefer = Some(string(file, &dotted, value)?),
                    "path" => self.shell.path = Some(PathBuf::from(string(file, &dotted, value)?)),
                    _ => self.warn(
                        file,
                        Some(dotted.clone()),
                        format!("unknown key `{dotted}`; it is ignored"),
                    ),
                }
            }
        }
        Ok(())
    }

    fn apply_permissions(&mut self, file: &Path, value: &Value) -> Result<(), ConfigError> {
        for (key, value) in table_of(file, "permissions", value)? {
            let dotted = format!("permissions.{key}");
            match key.as_str() {
                "allow" => self.permissions.allow = strings(file, &dotted, value)?,
                "deny" => self.permissions.deny = strings(file, &dotted, value)?,
                _ => self.warn(
                    file,
                    Some(dotted.clone()),
                    format!("unknown key `{dotted}`; it is ignored"),
                ),
            }
        }
        Ok(())
    }

    fn apply_workspace(&mut self, file: &Path, table: Table) -> Result<(), ConfigError> {
        for (key, value) in table {
            match key.as_str() {
                "default_model" => self.default_model = Some(string(file, &key, &value)?),
                // Anything that would run code or widen what runs: refused.
                "mods" | "runtime" | "hooks" | "mcpServers" | "mcp_servers" | "permissions"
                | "tools" | "plugins" => self.warn(
                    file,
                    Some(key.clone()),
                    format!(
                        "`{key}` is refused in a workspace file: a project can never declare \
                         a runtime, grant a permission or turn on anything that runs code \
                         (set it in {} instead, if you mean it)",
                        USER_FILE
                    ),
                ),
                _ => self.warn(
                    file,
                    Some(key.clone()),
                    format!("unknown key `{key}`; it is ignored"),
                ),
            }
        }
        Ok(())
    }
}

fn read_table(path: &Path) -> Result<Option<Table>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ConfigError {
                file: path.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    text.parse::<Table>().map(Some).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        message: format!("not valid TOML: {}", e.to_string().trim_end()),
    })
}

fn type_error(file: &Path, key: &str, want: &str, value: &Value) -> ConfigError {
    ConfigError {
        file: file.to_path_buf(),
        message: format!("`{key}` must be {want}, not {}", value.type_str()),
    }
}

fn string(file: &Path, key: &str, value: &Value) -> Result<String, ConfigError> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| type_error(file, key, "a string", value))
}

fn strings(file: &Path, key: &str, value: &Value) -> Result<Vec<String>, ConfigError> {
    let array = value
        .as_array()
        .ok_or_else(|| type_error(file, key, "an array of strings", value))?;
    array
        .iter()
        .enumerate()
        .map(|(i, v)| string(file, &format!("{key}[{i}]"), v))
        .collect()
}

fn table_of<'a>(file: &Path, key: &str, value: &'a Value) -> Result<&'a Table, ConfigError> {
    value
        .as_table()
        .ok_or_else(|| type_error(file, key, "a table", value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(user: Option<&str>, workspace: Option<&str>) -> Result<Config, ConfigError> {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        if let Some(text) = user {
            std::fs::write(home.path().join(USER_FILE), text).unwrap();
        }
        if let Some(text) = workspace {
            std::fs::create_dir_all(ws.path().join(".reasonix")).unwrap();
            std::fs::write(ws.path().join(WORKSPACE_FILE), text).unwrap();
        }
        Config::load(&ReasonixHome::at(home.path()), ws.path())
    }

    #[test]
    fn missing_files_are_empty() {
        let config = load(None, None).unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn user_file_sets_everything_and_warns_on_unknown_keys() {
        let config = load(
            Some(
                "default_model = \"plugin/p/prov/m\"\nshoe = 1\n[tools.shell]\nprefer = \"bash\"\npath = \"/bin/bash\"\nshel = 2\n[permissions]\nallow = [\"read_file\"]\ndeny = [\"bash\"]\n[mods]\nenabled = true\n",
            ),
            None,
        )
        .unwrap();
        assert_eq!(config.default_model.as_deref(), Some("plugin/p/prov/m"));
        assert_eq!(config.shell.prefer.as_deref(), Some("bash"));
        assert_eq!(config.shell.path, Some(PathBuf::from("/bin/bash")));
        assert_eq!(config.permissions.verdict("read_file"), RuleVerdict::Allow);
        assert_eq!(config.permissions.verdict("bash"), RuleVerdict::Deny);
        assert_eq!(config.permissions.verdict("write_file"), RuleVerdict::Ask);
        assert_eq!(config.mods.get("enabled"), Some(&Value::Boolean(true)));
        let keys: Vec<_> = config
            .warnings
            .iter()
            .filter_map(|w| w.key.as_deref())
            .collect();
        assert_eq!(keys, ["shoe", "tools.shell.shel"]);
    }

    #[test]
    fn workspace_may_only_set_the_model() {
        let config = load(
            Some("default_model = \"echo\"\n"),
            Some("default_model = \"plugin/a/b/c\"\n[mods]\nenabled = true\n[runtime]\ncommand = \"x\"\n[permissions]\nallow = [\"bash\"]\n"),
        )
        .unwrap();
        assert_eq!(config.default_model.as_deref(), Some("plugin/a/b/c"));
        assert!(
            config.mods.is_empty(),
            "a workspace file cannot enable mods"
        );
        assert_eq!(config.permissions.verdict("bash"), RuleVerdict::Ask);
        let refused: Vec<_> = config
            .warnings
            .iter()
            .filter(|w| w.message.contains("refused in a workspace file"))
            .filter_map(|w| w.key.as_deref())
            .collect();
        assert_eq!(refused, ["mods", "permissions", "runtime"]);
    }

    #[test]
    fn bad_files_are_errors_naming_the_file_and_key() {
        let error = load(Some("default_model = [1"), None).unwrap_err();
        assert!(
            error.to_string().contains("config.toml: not valid TOML"),
            "{error}"
        );
        let error = load(Some("default_model = 3"), None).unwrap_err();
        assert!(
            error
                .message
                .contains("`default_model` must be a string, not integer"),
            "{error}"
        );
        let error = load(Some("[permissions]\nallow = [\"a\", 2]"), None).unwrap_err();
        assert!(error.message.contains("permissions.allow[1]"), "{error}");
    }

    #[test]
    fn globs() {
        assert!(glob_match("mcp__github__*", "mcp__github__search"));
        assert!(!glob_match("mcp__github__*", "mcp__gitlab__search"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("a*b*c", "a-x-b-y-c"));
        assert!(!glob_match("a*b*c", "a-x-c"));
        assert!(glob_match("bash", "bash"));
        assert!(!glob_match("bash", "bash2"));
        assert!(!glob_match("ab*ba", "aba"));
    }
}
