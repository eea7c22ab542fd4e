//! Slash commands: the built-ins (`/help`, `/plugins`, `/skills`,
//! `/reload`, `/model`, `/status`) and what the enabled packages contribute
//! (`/<plugin>:<command>`, `/<plugin>:<prompt>`, `/<plugin>:<skill>`,
//! `/<plugin>:agent:<name>`, `/<plugin>:<action>`).
//!
//! A short `/<name>` is a hidden alias when exactly one plugin offers the
//! name; an ambiguous one is an error listing the qualified names. An
//! unknown command is an error naming the closest ones.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use super::events::{InputSource, SessionEvent};
use super::inventory::{EntryKind, SlashEntry};
use super::{Session, SessionError, Submitted, TurnOptions};
use crate::runtime::redaction::clean_text;

/// The built-in commands, with their usage.
const BUILTINS: &[(&str, &str)] = &[
    (
        "form",
        "answer a published form: /form <plugin>/<surface> key=value …",
    ),
    ("help", "list the commands"),
    ("model", "show the models, or switch: /model <ref>"),
    (
        "plugins",
        "list the enabled plugins; /plugins show <name> for one",
    ),
    (
        "reload",
        "rebuild the extension runtime (queued while a turn runs)",
    ),
    ("skills", "list the skills of the enabled plugins"),
    ("status", "show the session's status"),
];

/// One line of the slash menu.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MenuEntry {
    pub command: String,
    /// `builtin`, `command`, `prompt`, `skill`, `agent` or `action`.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
}

/// Every entry of the menu, built-ins first.
pub(super) fn menu(session: &Session) -> Vec<MenuEntry> {
    let mut out: Vec<MenuEntry> = BUILTINS
        .iter()
        .map(|(name, what)| MenuEntry {
            command: format!("/{name}"),
            kind: "builtin",
            description: Some((*what).to_string()),
            argument_hint: None,
            plugin: None,
        })
        .collect();
    let mut plugin: Vec<MenuEntry> = entries(session)
        .into_iter()
        .map(|e| MenuEntry {
            command: e.command,
            kind: e.kind.as_str(),
            description: e.description.as_deref().map(clean_text),
            argument_hint: e.argument_hint.as_deref().map(clean_text),
            plugin: Some(e.plugin),
        })
        .collect();
    plugin.sort_by(|a, b| a.command.cmp(&b.command));
    out.extend(plugin);
    out
}

/// The plugin entries: declarative ones plus the generation's UI actions
/// (a declarative entry of the same name wins).
fn entries(session: &Session) -> Vec<SlashEntry> {
    let mut entries = session.inventory().entries();
    for action in session.inner.host.ui().actions() {
        if entries.iter().any(|e| e.command == action.command) {
            continue;
        }
        entries.push(SlashEntry {
            command: action.command.clone(),
            plugin: action.plugin.clone(),
            name: action.action_id.clone(),
            kind: EntryKind::Action,
            description: action.label.clone(),
            argument_hint: None,
            path: None,
        });
    }
    entries
}

/// Whether a template uses `$ARGUMENTS` or a positional `$N`.
fn has_placeholder(template: &str) -> bool {
    template.contains("$ARGUMENTS")
        || template
            .match_indices('$')
            .any(|(i, _)| template[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Split arguments: whitespace-separated, `"…"` and `'…'` group.
pub(crate) fn split_args(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            (None, c) => current.push(c),
        }
    }
    if any || !current.is_empty() {
        out.push(current);
    }
    out
}

/// Run `/…` (without the slash).
pub(super) async fn run(session: &Session, line: &str) -> Result<Submitted, SessionError> {
    let (word, rest) = match line.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (line, ""),
    };
    if word.is_empty() {
        return Err(SessionError::Usage(
            "a command name follows the slash; /help lists them".to_string(),
        ));
    }
    if BUILTINS.iter().any(|(name, _)| *name == word) {
        return builtin(session, word, rest).await;
    }
    let entry = resolve(session, word)?;
    let args = split_args(rest);
    match entry.kind {
        EntryKind::Command | EntryKind::Prompt => {
            let body = read_body(session, &entry)?;
            let mut rendered = reasonix_package::inventory::render_template(&body, &args);
            // A template without placeholders still gets what was typed.
            if !rest.is_empty() && !has_placeholder(&body) {
                let _ = write!(rendered, "\n\nARGUMENTS: {rest}");
            }
            turn(
                session,
                rendered,
                InputSource::Command,
                TurnOptions::default(),
            )
            .await
        }
        EntryKind::Skill => {
            let body = read_body(session, &entry)?;
            let mut input = format!(
                "Use the skill {}:\n\n{}",
                entry.command.trim_start_matches('/'),
                body.trim()
            );
            if !rest.is_empty() {
                let _ = write!(input, "\n\n{rest}");
            }
            turn(session, input, InputSource::Skill, TurnOptions::default()).await
        }
        EntryKind::Agent => {
            let body = read_body(session, &entry)?;
            let task = if rest.is_empty() {
                "Introduce yourself and wait for a task.".to_string()
            } else {
                rest.to_string()
            };
            let input = format!(
                "Act as the agent {}:\n\n{}\n\nTask: {task}",
                entry.command.trim_start_matches('/'),
                body.trim()
            );
            let options = TurnOptions {
                subagent: true,
                ..TurnOptions::default()
            };
            turn(session, input, InputSource::Skill, options).await
        }
        EntryKind::Action => {
            let mut map = BTreeMap::new();
            let mut loose = Vec::new();
            for arg in args {
                match arg.split_once('=') {
                    Some((key, value)) if !key.is_empty() => {
                        map.insert(key.to_string(), value.to_string());
                    }
                    _ => loose.push(arg),
                }
            }
            if !loose.is_empty() {
                map.insert("args".to_string(), loose.join(" "));
            }
            let message = session
                .invoke_action(&entry.plugin, &entry.name, map)
                .await?;
            let text = match message {
                Some(message) => format!("{}: {}", entry.command, clean_text(&message)),
                None => format!("{}: done", entry.command),
            };
            output(session, &entry.command, text, serde_json::Value::Null)
        }
    }
}

async fn turn(
    session: &Session,
    input: String,
    source: InputSource,
    options: TurnOptions,
) -> Result<Submitted, SessionError> {
    let report = session.run_turn(input, source, options).await?;
    Ok(Submitted::Turn {
        report: Box::new(report),
    })
}

fn output(
    session: &Session,
    command: &str,
    text: String,
    data: serde_json::Value,
) -> Result<Submitted, SessionError> {
    session.emit(SessionEvent::CommandOutput {
        command: command.to_string(),
        text: text.clone(),
        data,
    });
    Ok(Submitted::Command {
        command: command.to_string(),
        text,
    })
}

/// The template or skill body (frontmatter removed).
fn read_body(session: &Session, entry: &SlashEntry) -> Result<String, SessionError> {
    let inventory = session.inventory();
    let package = inventory
        .package(&entry.plugin)
        .ok_or_else(|| SessionError::Usage(format!("plugin `{}` is not enabled", entry.plugin)))?;
    let path = entry
        .path
        .as_deref()
        .map(|p| package.root.join(p))
        .ok_or_else(|| SessionError::Usage(format!("{} has no file", entry.command)))?;
    let text = reasonix_package::compat::encoding::read_text(&path).map_err(|e| {
        SessionError::Usage(format!(
            "{}: cannot read {}: {e}",
            entry.command,
            path.display()
        ))
    })?;
    Ok(reasonix_package::inventory::frontmatter::parse(&text).body)
}

/// Find the entry behind `word` (`plugin:name` or a short alias).
fn resolve(session: &Session, word: &str) -> Result<SlashEntry, SessionError> {
    let entries = entries(session);
    let command = format!("/{word}");
    if let Some(entry) = entries.iter().find(|e| e.command == command) {
        return Ok(entry.clone());
    }
    if !word.contains(':') {
        let matching: Vec<&SlashEntry> = entries
            .iter()
            .filter(|e| e.kind != EntryKind::Agent && e.name == word)
            .collect();
        match matching.as_slice() {
            [one] => return Ok((*one).clone()),
            [] => {}
            many => {
                return Err(SessionError::Ambiguous {
                    alias: command,
                    candidates: many.iter().map(|e| e.command.clone()).collect(),
                });
            }
        }
    }
    Err(SessionError::UnknownCommand {
        command,
        closest: closest(word, &entries),
    })
}

/// Up to three known commands close to `word`.
fn closest(word: &str, entries: &[SlashEntry]) -> Vec<String> {
    let mut names: Vec<(String, String)> = BUILTINS
        .iter()
        .map(|(name, _)| (name.to_string(), format!("/{name}")))
        .collect();
    for entry in entries {
        let qualified = entry.command.trim_start_matches('/').to_string();
        names.push((qualified.clone(), entry.command.clone()));
        names.push((entry.name.clone(), entry.command.clone()));
    }
    let word = word.to_lowercase();
    let mut scored: Vec<(usize, String)> = names
        .into_iter()
        .filter_map(|(name, command)| {
            let distance = edit_distance(&word, &name.to_lowercase());
            let close = distance <= (name.chars().count() / 3).max(2)
                || name.starts_with(&word)
                || (word.len() >= 3 && name.contains(&word));
            close.then_some((distance, command))
        })
        .collect();
    scored.sort();
    let mut out: Vec<String> = Vec::new();
    for (_, command) in scored {
        if !out.contains(&command) {
            out.push(command);
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            current.push(
                (previous[j] + cost)
                    .min(previous[j + 1] + 1)
                    .min(current[j] + 1),
            );
        }
        previous = current;
    }
    previous[b.len()]
}

async fn builtin(session: &Session, word: &str, rest: &str) -> Result<Submitted, SessionError> {
    let command = format!("/{word}");
    match word {
        "help" => {
            let mut text = String::from("Commands:\n");
            for entry in menu(session) {
                let _ = write!(text, "  {}", entry.command);
                if let Some(hint) = &entry.argument_hint {
                    let _ = write!(text, " {hint}");
                }
                if let Some(description) = &entry.description {
                    let _ = write!(text, "  — {description}");
                }
                text.push('\n');
            }
            let data = serde_json::to_value(menu(session)).unwrap_or_default();
            output(session, &command, text, data)
        }
        "reload" => Ok(Submitted::Reload {
            outcome: session.reload().await,
        }),
        "model" => {
            if rest.is_empty() {
                let current = session.model();
                let mut text = String::new();
                for model in session.models() {
                    let mark = if model == current { "*" } else { " " };
                    let _ = writeln!(text, "{mark} {model}");
                }
                let data = serde_json::json!({"current": current, "models": session.models()});
                output(session, &command, text, data)
            } else {
                let model = session.switch_model(rest)?;
                output(
                    session,
                    &command,
                    format!("model: {model} (from the next turn)"),
                    serde_json::json!({"current": model}),
                )
            }
        }
        "status" => {
            let status = session.status();
            let mut text = format!(
                "session {} · generation {} · model {}{}\n",
                status.session_id,
                status.generation,
                status.model,
                if status.reload_queued {
                    " · reload queued"
                } else {
                    ""
                }
            );
            let _ = writeln!(
                text,
                "runtimes: {}",
                if status.runtimes.is_empty() {
                    "none".to_string()
                } else {
                    status.runtimes.join(", ")
                }
            );
            for degraded in &status.degraded {
                let _ = writeln!(text, "degraded: {}: {}", degraded.plugin, degraded.why);
            }
            let data = serde_json::to_value(&status).unwrap_or_default();
            output(session, &command, text, data)
        }
        "skills" => {
            let inventory = session.inventory();
            let mut text = String::new();
            let mut data = Vec::new();
            for (package, skill) in inventory.skills() {
                let invocation = format!("/{}:{}", package.name, skill.name);
                let description = skill.description.as_deref().map(clean_text);
                let _ = writeln!(
                    text,
                    "{invocation}{}",
                    description
                        .as_deref()
                        .map(|d| format!("  — {d}"))
                        .unwrap_or_default()
                );
                data.push(serde_json::json!({
                    "invocation": invocation, "plugin": package.name, "name": skill.name,
                    "description": description,
                }));
            }
            if text.is_empty() {
                text = "no skills: no enabled plugin contributes one\n".to_string();
            }
            output(session, &command, text, serde_json::Value::Array(data))
        }
        "plugins" => plugins(session, &command, rest),
        "form" => form(session, &command, rest).await,
        _ => Err(SessionError::UnknownCommand {
            command,
            closest: Vec::new(),
        }),
    }
}

/// `/form` lists the open forms; `/form <plugin>/<surface> key=value …`
/// submits one. A value that parses as JSON is taken as JSON (`true`,
/// `3`, `["a","b"]`), anything else as a string; `yes`/`no` answer a
/// confirm field.
async fn form(session: &Session, command: &str, rest: &str) -> Result<Submitted, SessionError> {
    use crate::runtime::ui::{PublishKind, UiPayload};
    let generation = session.generation().number;
    let forms: Vec<_> = session
        .surfaces()
        .into_iter()
        .filter(|s| s.kind == PublishKind::Form && s.generation == generation)
        .collect();
    let args = split_args(rest);
    let Some(target) = args.first() else {
        let mut text = String::new();
        for update in &forms {
            let _ = writeln!(text, "{}", super::text::surface_text(update));
        }
        if text.is_empty() {
            text = "no open forms\n".to_string();
        }
        return output(session, command, text, serde_json::Value::Null);
    };
    let Some((plugin, surface)) = target.split_once('/') else {
        return Err(SessionError::Usage(
            "usage: /form <plugin>/<surface> key=value …".to_string(),
        ));
    };
    let fields = forms
        .iter()
        .find(|s| s.plugin == plugin && s.surface_id == surface)
        .and_then(|s| match &s.payload {
            UiPayload::Form(f) => Some(f.fields.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let mut values = BTreeMap::new();
    for arg in &args[1..] {
        let Some((key, raw)) = arg.split_once('=') else {
            return Err(SessionError::Usage(format!(
                "`{}`: answers are key=value",
                clean_text(arg)
            )));
        };
        let confirm = fields
            .iter()
            .any(|f| f.key == key && f.kind == crate::runtime::ui::RequestKind::Confirm);
        let value = match raw {
            "yes" | "y" if confirm => serde_json::Value::Bool(true),
            "no" | "n" if confirm => serde_json::Value::Bool(false),
            _ => serde_json::from_str(raw)
                .unwrap_or_else(|_| serde_json::Value::String(raw.to_string())),
        };
        values.insert(key.to_string(), value);
    }
    session.submit_form(plugin, surface, values).await?;
    output(
        session,
        command,
        format!("form {plugin}/{surface} submitted"),
        serde_json::Value::Null,
    )
}

fn plugins(session: &Session, command: &str, rest: &str) -> Result<Submitted, SessionError> {
    let inventory = session.inventory();
    let generation = session.generation();
    let args = split_args(rest);
    match args.as_slice() {
        [] => {
            let mut text = String::new();
            let mut data = Vec::new();
            for package in &inventory.packages {
                let inv = &package.package.inventory;
                let runtime = generation
                    .runtimes
                    .iter()
                    .find(|r| r.plugin_id == package.name)
                    .map(|r| r.runtime.trust().as_str());
                let _ = writeln!(
                    text,
                    "{} {}  skills {} · commands {} · prompts {} · agents {} · hooks {} · mcp {}{}",
                    package.name,
                    package.version.as_deref().unwrap_or("-"),
                    inv.skills.len(),
                    inv.commands.len(),
                    inv.prompts.len(),
                    inv.agents.len(),
                    inv.hooks.len(),
                    inv.mcp_servers.len(),
                    runtime
                        .map(|t| format!(" · runtime ({t})"))
                        .unwrap_or_default()
                );
                data.push(serde_json::json!({
                    "name": package.name, "version": package.version,
                    "skills": inv.skills.len(), "commands": inv.commands.len(),
                    "prompts": inv.prompts.len(), "agents": inv.agents.len(),
                    "hooks": inv.hooks.len(), "mcpServers": inv.mcp_servers.len(),
                    "runtime": runtime,
                }));
            }
            if text.is_empty() {
                text = "no enabled plugins; `reasonix plugin install <source> --yes` adds one\n"
                    .to_string();
            }
            output(session, command, text, serde_json::Value::Array(data))
        }
        [show, name] if show == "show" => {
            let Some(package) = inventory.package(name) else {
                let known: Vec<&str> = inventory.packages.iter().map(|p| p.name.as_str()).collect();
                return Err(SessionError::Usage(format!(
                    "plugin `{}` is not enabled (enabled: {})",
                    clean_text(name),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            };
            let mut text = format!(
                "{} {}\n",
                package.name,
                package.version.as_deref().unwrap_or("-")
            );
            if let Some(description) = &package.description {
                let _ = writeln!(text, "  {}", clean_text(description));
            }
            for entry in entries(session).iter().filter(|e| e.plugin == package.name) {
                let _ = writeln!(
                    text,
                    "  {:<8} {}{}",
                    entry.kind.as_str(),
                    entry.command,
                    entry
                        .description
                        .as_deref()
                        .map(|d| format!("  — {}", clean_text(d)))
                        .unwrap_or_default()
                );
            }
            for hook in &package.package.inventory.hooks {
                let _ = writeln!(
                    text,
                    "  hook     {}{}",
                    hook.event,
                    hook.matcher
                        .as_deref()
                        .map(|m| format!(" [{}]", clean_text(m)))
                        .unwrap_or_default()
                );
            }
            for server in &package.package.inventory.mcp_servers {
                let _ = writeln!(text, "  mcp      {} ({})", server.name, server.transport);
            }
            output(session, command, text, serde_json::Value::Null)
        }
        _ => Err(SessionError::Usage(
            "usage: /plugins, or /plugins show <name>".to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_on_whitespace_and_quotes_group() {
        assert_eq!(split_args(""), Vec::<String>::new());
        assert_eq!(split_args("a  b"), ["a", "b"]);
        assert_eq!(
            split_args(r#"fix "the bug" 'x y' """#),
            ["fix", "the bug", "x y", ""]
        );
        assert_eq!(split_args("é ✓"), ["é", "✓"]);
    }

    #[test]
    fn distance() {
        assert_eq!(edit_distance("relaod", "reload"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
