//! What the enabled packages contribute to a session, read in one pass from
//! the registry: commands, prompts, skills, agents, hooks, MCP entries and
//! themes. A reload reads it anew together with the runtime generation and
//! swaps both at once; a failed reload keeps both.

use std::path::{Path, PathBuf};

use reasonix_package::{Command, Hook, LoadedPackage, McpServer, Skill};
use serde::Serialize;

use crate::home::ReasonixHome;
use crate::hooks::HookContext;
use crate::runtime::installed::InstalledPlugin;

/// One enabled package.
#[derive(Debug, Clone)]
pub struct EnabledPackage {
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    pub root: PathBuf,
    pub package: LoadedPackage,
    /// The environment contract of its hooks.
    pub hook_context: HookContext,
}

/// What a slash entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    Command,
    Prompt,
    Skill,
    Agent,
    Action,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Command => "command",
            EntryKind::Prompt => "prompt",
            EntryKind::Skill => "skill",
            EntryKind::Agent => "agent",
            EntryKind::Action => "action",
        }
    }
}

/// A `/<plugin>:<name>` entry of the slash menu.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlashEntry {
    /// `/<plugin>:<name>` (`/<plugin>:agent:<name>` for agents).
    pub command: String,
    pub plugin: String,
    /// The name after `<plugin>:`.
    pub name: String,
    pub kind: EntryKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// The template or skill file, relative to the package root (none for
    /// actions).
    #[serde(skip)]
    pub path: Option<String>,
}

/// The enabled packages of one session snapshot.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub packages: Vec<EnabledPackage>,
    /// Packages that are enabled but could not be read (name, why).
    pub unreadable: Vec<(String, String)>,
}

impl Inventory {
    /// Build from the registry's enabled entries.
    pub fn from_enabled(
        enabled: Vec<(InstalledPlugin, LoadedPackage)>,
        unreadable: Vec<(String, String)>,
        home: &ReasonixHome,
        workspace: &Path,
        bash: Option<PathBuf>,
    ) -> Inventory {
        let packages = enabled
            .into_iter()
            .map(|(installed, package)| EnabledPackage {
                name: installed.name.clone(),
                version: package.version.clone(),
                description: package.description.clone(),
                root: installed.root.clone(),
                hook_context: HookContext {
                    plugin_root: std::path::absolute(&installed.root)
                        .unwrap_or_else(|_| installed.root.clone()),
                    plugin_name: installed.name.clone(),
                    plugin_version: package.version.clone(),
                    reasonix_home: std::path::absolute(home.root())
                        .unwrap_or_else(|_| home.root().to_path_buf()),
                    workspace_root: workspace.to_path_buf(),
                    bash: bash.clone(),
                },
                package,
            })
            .collect();
        Inventory {
            packages,
            unreadable,
        }
    }

    pub fn package(&self, name: &str) -> Option<&EnabledPackage> {
        self.packages.iter().find(|p| p.name == name)
    }

    /// Every hook of `event`, in package order then declaration order.
    pub fn hooks_for<'a>(
        &'a self,
        event: &'a str,
    ) -> impl Iterator<Item = (&'a EnabledPackage, &'a [Hook])> + 'a {
        self.packages.iter().filter_map(move |p| {
            p.package
                .inventory
                .hooks
                .iter()
                .any(|h| h.event == event)
                .then_some((p, p.package.inventory.hooks.as_slice()))
        })
    }

    pub fn mcp_servers(&self) -> impl Iterator<Item = (&EnabledPackage, &McpServer)> {
        self.packages.iter().flat_map(|p| {
            p.package
                .inventory
                .mcp_servers
                .iter()
                .map(move |server| (p, server))
        })
    }

    pub fn skills(&self) -> impl Iterator<Item = (&EnabledPackage, &Skill)> {
        self.packages
            .iter()
            .flat_map(|p| p.package.inventory.skills.iter().map(move |s| (p, s)))
    }

    /// The declarative slash entries (commands, prompts, skills, agents),
    /// sorted by command. Within one package a name is offered once, in
    /// the order command, prompt, skill.
    pub fn entries(&self) -> Vec<SlashEntry> {
        let mut out: Vec<SlashEntry> = Vec::new();
        for package in &self.packages {
            let inv = &package.package.inventory;
            let mut push = |name: &str, kind, command: &Command| {
                let qualified = format!("/{}:{name}", package.name);
                if out.iter().any(|e| e.command == qualified) {
                    return;
                }
                out.push(SlashEntry {
                    command: qualified,
                    plugin: package.name.clone(),
                    name: name.to_string(),
                    kind,
                    description: command.description.clone(),
                    argument_hint: command.argument_hint.clone(),
                    path: Some(command.path.clone()),
                });
            };
            for command in &inv.commands {
                push(&command.name, EntryKind::Command, command);
            }
            for prompt in &inv.prompts {
                push(&prompt.name, EntryKind::Prompt, prompt);
            }
            for skill in &inv.skills {
                let as_command = Command {
                    name: skill.name.clone(),
                    description: skill.description.clone(),
                    argument_hint: None,
                    path: skill.path.clone(),
                };
                push(&skill.name, EntryKind::Skill, &as_command);
            }
            for agent in &inv.agents {
                out.push(SlashEntry {
                    command: format!("/{}:agent:{}", package.name, agent.name),
                    plugin: package.name.clone(),
                    name: format!("agent:{}", agent.name),
                    kind: EntryKind::Agent,
                    description: agent.description.clone(),
                    argument_hint: None,
                    path: Some(agent.path.clone()),
                });
            }
        }
        out.sort_by(|a, b| a.command.cmp(&b.command));
        out
    }
}
