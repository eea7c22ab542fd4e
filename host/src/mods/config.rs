//! `[mods]` in the user's `$REASONIX_HOME/config.toml`: whether Claude Code
//! mods run at all, and their ceilings. A workspace file can never set any
//! of it (`crate::config` refuses the table there).
//!
//! ```toml
//! [mods]
//! enabled = true          # off by default
//! hook_budget_ms = 10000  # a hook's own running time
//! context_bytes = 8192    # one prompt.submit context block
//! context_blocks = 8      # context blocks a turn keeps
//! messages_max = 200      # $.session.messages items
//! submit_per_turn = 3     # $.prompt.submit between two prompts you write
//! submit_bytes = 8192     # one $.prompt.submit text
//! ```
//!
//! 0 removes a ceiling. Unknown keys warn; a value of the wrong type is an
//! error naming `mods.<key>`.

use std::path::Path;

use serde::Serialize;
use toml::{Table, Value};

use crate::config::{ConfigError, ConfigWarning};

/// The ceilings and the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModsConfig {
    pub enabled: bool,
    pub hook_budget_ms: u64,
    pub context_bytes: u64,
    pub context_blocks: u64,
    pub messages_max: u64,
    pub submit_per_turn: u64,
    pub submit_bytes: u64,
}

impl Default for ModsConfig {
    fn default() -> ModsConfig {
        ModsConfig {
            enabled: false,
            hook_budget_ms: 10_000,
            context_bytes: 8192,
            context_blocks: 8,
            messages_max: 200,
            submit_per_turn: 3,
            submit_bytes: 8 * 1024,
        }
    }
}

/// A ceiling: `None` when the configured value is 0 (no ceiling).
pub fn ceiling(value: u64) -> Option<u64> {
    (value > 0).then_some(value)
}

impl ModsConfig {
    /// Read the user file's `[mods]` table.
    pub fn from_table(
        file: &Path,
        table: &Table,
    ) -> Result<(ModsConfig, Vec<ConfigWarning>), ConfigError> {
        let mut config = ModsConfig::default();
        let mut warnings = Vec::new();
        for (key, value) in table {
            let dotted = format!("mods.{key}");
            let slot = match key.as_str() {
                "enabled" => {
                    config.enabled = value.as_bool().ok_or_else(|| ConfigError {
                        file: file.to_path_buf(),
                        message: format!("`{dotted}` must be true or false, not {}", kind(value)),
                    })?;
                    continue;
                }
                "hook_budget_ms" => &mut config.hook_budget_ms,
                "context_bytes" => &mut config.context_bytes,
                "context_blocks" => &mut config.context_blocks,
                "messages_max" => &mut config.messages_max,
                "submit_per_turn" => &mut config.submit_per_turn,
                "submit_bytes" => &mut config.submit_bytes,
                _ => {
                    warnings.push(ConfigWarning {
                        file: file.to_path_buf(),
                        key: Some(dotted.clone()),
                        message: format!("unknown key `{dotted}`; it is ignored"),
                    });
                    continue;
                }
            };
            *slot = value
                .as_integer()
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| ConfigError {
                    file: file.to_path_buf(),
                    message: format!(
                        "`{dotted}` must be a whole number, 0 or more (0 removes the ceiling), not {}",
                        kind(value)
                    ),
                })?;
        }
        Ok((config, warnings))
    }
}

fn kind(value: &Value) -> String {
    match value {
        Value::Integer(n) => format!("{n}"),
        other => other.type_str().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<(ModsConfig, Vec<ConfigWarning>), ConfigError> {
        let table: Table = text.parse().unwrap();
        ModsConfig::from_table(Path::new("config.toml"), &table)
    }

    #[test]
    fn defaults_are_the_documented_ceilings() {
        let (config, warnings) = parse("").unwrap();
        assert_eq!(config, ModsConfig::default());
        assert!(!config.enabled);
        assert_eq!(config.hook_budget_ms, 10_000);
        assert_eq!(config.context_bytes, 8192);
        assert_eq!(config.context_blocks, 8);
        assert_eq!(config.messages_max, 200);
        assert_eq!(config.submit_per_turn, 3);
        assert_eq!(config.submit_bytes, 8192);
        assert!(warnings.is_empty());
    }

    #[test]
    fn every_key_is_read_zero_removes_a_ceiling_unknown_keys_warn() {
        let (config, warnings) = parse(
            "enabled = true\nhook_budget_ms = 0\ncontext_bytes = 10\ncontext_blocks = 2\nmessages_max = 5\nsubmit_per_turn = 1\nsubmit_bytes = 0\nbudget = 3\n",
        )
        .unwrap();
        assert!(config.enabled);
        assert_eq!(ceiling(config.hook_budget_ms), None);
        assert_eq!(ceiling(config.context_bytes), Some(10));
        assert_eq!(config.context_blocks, 2);
        assert_eq!(config.messages_max, 5);
        assert_eq!(config.submit_per_turn, 1);
        assert_eq!(ceiling(config.submit_bytes), None);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].key.as_deref(), Some("mods.budget"));
    }

    #[test]
    fn wrong_types_name_the_key() {
        let error = parse("enabled = \"yes\"").unwrap_err();
        assert!(
            error
                .message
                .contains("`mods.enabled` must be true or false, not string"),
            "{error}"
        );
        let error = parse("hook_budget_ms = -1").unwrap_err();
        assert!(
            error
                .message
                .contains("`mods.hook_budget_ms` must be a whole number"),
            "{error}"
        );
        let error = parse("submit_bytes = 1.5").unwrap_err();
        assert!(error.message.contains("`mods.submit_bytes`"), "{error}");
    }
}
