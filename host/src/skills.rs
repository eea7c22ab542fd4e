//! Skills contributed by installed packages, and the user's on/off switch
//! for each one.
//!
//! A skill is named `<plugin>:<skill>` (invoked as `/<plugin>:<skill>`).
//! Switches live in `$REASONIX_HOME/skill-switches.json`,
//! `{"version": 1, "disabled": ["<plugin>:<skill>", …]}`: every skill is on
//! unless listed. The list is kept apart from the plugin registry so that
//! reinstalling or updating a package (`--replace`) keeps the user's choice,
//! and a package author cannot ship a switch. Entries for skills that are no
//! longer installed are ignored, and dropped at the next write. The file is
//! written atomically under the registry's cross-process lock, and a file
//! that exists but does not parse fails closed (it is never overwritten).
//! A skill is active when its switch is on and its package is enabled.
use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::home::ReasonixHome;
use crate::install::error::{ErrorCode, InstallError, InstallResult};
use crate::install::installed::installed_packages;
use crate::registry::{RegistryLock, is_valid_name};

/// File name of the switches inside the home.
pub const SWITCHES_FILE: &str = "skill-switches.json";

/// One skill of an installed package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillView {
    /// `<plugin>:<skill>`: what `POST /skills/enabled` takes.
    pub id: String,
    pub name: String,
    pub plugin: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `inline` or `subagent`.
    pub run_as: String,
    /// `/<plugin>:<skill>`.
    pub invocation: String,
    /// The skill file, relative to the package root.
    pub path: String,
    /// The user's switch for this skill.
    pub enabled: bool,
    /// Whether its package is enabled (and readable).
    pub plugin_enabled: bool,
    /// Switch on and package enabled: the skill is offered to the model.
    pub active: bool,
}

#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SwitchFile {
    version: u32,
    #[serde(default)]
    disabled: BTreeSet<String>,
}

/// The user's skill switches.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SkillSwitches {
    disabled: BTreeSet<String>,
}

fn unreadable(path: &Path, why: &str) -> InstallError {
    InstallError::new(
        ErrorCode::RegistryUnreadable,
        format!("skill switches {} are unreadable: {why}", path.display()),
    )
    .with_next(format!(
        "Fix or remove {} (every skill is on without it), then retry.",
        path.display()
    ))
}

impl SkillSwitches {
    /// Read the switches; a missing file means every skill is on.
    pub fn load(home: &ReasonixHome) -> InstallResult<Self> {
        let path = home.root().join(SWITCHES_FILE);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(unreadable(&path, &e.to_string())),
        };
        let file: SwitchFile = serde_json::from_slice(&bytes)
            .map_err(|e| unreadable(&path, &format!("invalid JSON: {e}")))?;
        if file.version != 1 {
            return Err(unreadable(
                &path,
                &format!("unsupported version {} (expected 1)", file.version),
            ));
        }
        Ok(Self {
            disabled: file.disabled,
        })
    }

    pub fn is_enabled(&self, id: &str) -> bool {
        !self.disabled.contains(id)
    }
}

/// Split `<plugin>:<skill>` (a leading `/` is accepted); `None` unless the
/// plugin part is a valid plugin name and the skill part is not empty.
pub fn parse_skill_id(id: &str) -> Option<(&str, &str)> {
    let id = id.trim();
    let id = id.strip_prefix('/').unwrap_or(id);
    let (plugin, skill) = id.split_once(':')?;
    (is_valid_name(plugin) && !skill.trim().is_empty() && !skill.chars().any(char::is_control))
        .then_some((plugin, skill))
}

/// Every skill of every installed package (disabled packages included),
/// sorted by id, with the registry's repair warnings.
pub fn installed_skills(home: &ReasonixHome) -> InstallResult<(Vec<SkillView>, Vec<String>)> {
    let switches = SkillSwitches::load(home)?;
    let (installed, warnings) = installed_packages(home)?;
    let mut out = Vec::new();
    for i in &installed {
        let Ok(pkg) = &i.package else { continue };
        let plugin_enabled = i.state() == "enabled";
        for s in &pkg.inventory.skills {
            let id = format!("{}:{}", i.entry.name, s.name);
            let enabled = switches.is_enabled(&id);
            out.push(SkillView {
                invocation: format!("/{id}"),
                name: s.name.clone(),
                plugin: i.entry.name.clone(),
                description: s.description.clone().filter(|d| !d.is_empty()),
                run_as: s.run_as.clone(),
                path: s.path.clone(),
                enabled,
                plugin_enabled,
                active: enabled && plugin_enabled,
                id,
            });
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok((out, warnings))
}

/// Turn one installed skill on or off. The skill must exist in an
/// installed package (`plugin.not_installed` otherwise).
pub fn set_skill_enabled(home: &ReasonixHome, id: &str, enabled: bool) -> InstallResult<SkillView> {
    let Some((plugin, skill)) = parse_skill_id(id) else {
        return Err(InstallError::new(
            ErrorCode::InvalidName,
            format!("{id:?} is not a skill id; expected <plugin>:<skill>"),
        )
        .with_next("Use an id from GET /skills, e.g. starter:hello."));
    };
    let id = format!("{plugin}:{skill}");
    // Read the packages before taking the lock: reading may recover an
    // interrupted publication, which takes the same lock.
    let (skills, _) = installed_skills(home)?;
    let Some(mut view) = skills.iter().find(|s| s.id == id).cloned() else {
        return Err(InstallError::new(
            ErrorCode::NotInstalled,
            format!("no installed package contributes the skill {id:?}"),
        )
        .with_next("Run `reasonix plugin list`, or GET /skills, to see the installed skills."));
    };
    let _lock = RegistryLock::acquire(home)?;
    let mut switches = SkillSwitches::load(home)?;
    if enabled {
        switches.disabled.remove(&id);
    } else {
        switches.disabled.insert(id.clone());
    }
    // Forget switches of skills that are gone.
    switches
        .disabled
        .retain(|d| skills.iter().any(|s| &s.id == d));
    save(home, &switches)?;
    view.enabled = enabled;
    view.active = enabled && view.plugin_enabled;
    Ok(view)
}

fn save(home: &ReasonixHome, switches: &SkillSwitches) -> InstallResult<()> {
    let dir = home.root();
    let path = dir.join(SWITCHES_FILE);
    let io = |e: std::io::Error| InstallError::io("write", &path, e);
    fs::create_dir_all(dir).map_err(io)?;
    let file = SwitchFile {
        version: 1,
        disabled: switches.disabled.clone(),
    };
    let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
    text.push('\n');
    let mut tmp = tempfile::Builder::new()
        .prefix(".skill-switches.json.tmp-")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(&path).map_err(|e| io(e.error))?;
    crate::install::snapshot::sync_dir(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_ids() {
        assert_eq!(parse_skill_id("starter:hello"), Some(("starter", "hello")));
        assert_eq!(parse_skill_id("/starter:hello"), Some(("starter", "hello")));
        assert_eq!(parse_skill_id("starter:a:b"), Some(("starter", "a:b")));
        for bad in [
            "",
            "starter",
            "starter:",
            ":hello",
            "../x:y",
            "a b:c",
            "s:\u{1b}x",
        ] {
            assert_eq!(parse_skill_id(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn missing_file_is_all_on_and_a_bad_one_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let home = ReasonixHome::at(dir.path());
        assert!(SkillSwitches::load(&home).unwrap().is_enabled("a:b"));
        let path = dir.path().join(SWITCHES_FILE);
        for bad in ["{", r#"{"version":2}"#, r#"{"version":1,"enabled":[]}"#] {
            fs::write(&path, bad).unwrap();
            let err = SkillSwitches::load(&home).unwrap_err();
            assert_eq!(err.code, ErrorCode::RegistryUnreadable, "{bad}");
            assert!(err.message.contains(SWITCHES_FILE), "{}", err.message);
        }
        fs::write(&path, r#"{"version":1,"disabled":["a:b"]}"#).unwrap();
        let s = SkillSwitches::load(&home).unwrap();
        assert!(!s.is_enabled("a:b"));
        assert!(s.is_enabled("a:c"));
    }

    #[test]
    fn unknown_skills_are_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let home = ReasonixHome::at(dir.path());
        let err = set_skill_enabled(&home, "nope:x", false).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotInstalled);
        let err = set_skill_enabled(&home, "bad name:x", false).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidName);
        assert!(!dir.path().join(SWITCHES_FILE).exists());
    }
}
