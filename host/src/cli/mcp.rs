//! `reasonix mcp …`: the MCP servers of the enabled plugins. Thin: every
//! decision is the hub's ([`crate::mcp`]); this prints it. Only masked
//! server entries are ever printed.
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::home::ReasonixHome;
use crate::mcp::{HubOptions, McpError, McpHub, McpTool, ServerStatus};
use crate::runtime::redaction::clean_text;

#[derive(Debug, Args)]
#[command(
    about = "List, enable, disable and inspect the MCP servers of installed plugins",
    long_about = "The MCP servers that enabled plugins declare (in reasonix-plugin.json or an \
                  imported .mcp.json). A server the model may use is enabled: by `reasonix mcp \
                  enable <id>`, or by `auto_start: true` in its entry (imported servers start \
                  disabled). Enabled servers without a cached tool schema connect when the model \
                  lists capabilities; the others connect at their first call. Choices are kept \
                  in $REASONIX_HOME/mcp-servers.json, schemas in $REASONIX_HOME/cache/mcp/."
)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List every server: id, plugin, transport, state, tool count, cached schema.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Let the model use a server (kept across sessions).
    Enable {
        /// The server id, as `reasonix mcp list` shows it.
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Stop the model from using a server (takes effect at the next call).
    Disable {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Connect to a server now and list its tools (also refreshes the cache).
    Tools {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

fn fail(error: &McpError, json: bool) -> ExitCode {
    eprintln!("error: {error} [{}]", error.code());
    if json {
        println!(
            "{}",
            serde_json::json!({"ok": false, "errorCode": error.code(), "error": error.to_string()})
        );
    }
    ExitCode::from(1)
}

fn hub() -> Result<McpHub, McpError> {
    let home = ReasonixHome::from_env().map_err(|e| McpError::State(e.to_string()))?;
    McpHub::from_home(&home, HubOptions::new(reasonix_sidecar::Guard::CurrentExe))
}

pub fn run(args: McpArgs) -> ExitCode {
    let runtime = match crate::cli::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        let json = match &args.command {
            McpCommand::List { json }
            | McpCommand::Enable { json, .. }
            | McpCommand::Disable { json, .. }
            | McpCommand::Tools { json, .. } => *json,
        };
        let hub = match hub() {
            Ok(hub) => hub,
            Err(e) => return fail(&e, json),
        };
        let code = match args.command {
            McpCommand::List { json } => list(&hub, json),
            McpCommand::Enable { id, json } => toggle(&hub, &id, true, json),
            McpCommand::Disable { id, json } => toggle(&hub, &id, false, json),
            McpCommand::Tools { id, json } => tools(&hub, &id, json).await,
        };
        hub.close().await;
        code
    })
}

fn list(hub: &McpHub, json: bool) -> ExitCode {
    let servers = hub.servers();
    if json {
        println!("{}", serde_json::json!({"ok": true, "servers": servers}));
        return ExitCode::SUCCESS;
    }
    if servers.is_empty() {
        println!("no MCP servers (no enabled plugin declares one)");
        return ExitCode::SUCCESS;
    }
    print!("{}", list_text(&servers));
    ExitCode::SUCCESS
}

/// Aligned columns: id, plugin, transport, state, tools, cached, target.
pub fn list_text(servers: &[ServerStatus]) -> String {
    let rows: Vec<[String; 7]> = servers
        .iter()
        .map(|s| {
            [
                clean_text(&s.id),
                clean_text(&s.plugin),
                s.transport.clone(),
                s.state.as_str().to_owned(),
                s.tools.map_or("-".to_owned(), |n| n.to_string()),
                if s.cached { "yes" } else { "no" }.to_owned(),
                clean_text(&s.server.target()),
            ]
        })
        .collect();
    let header = [
        "ID",
        "PLUGIN",
        "TRANSPORT",
        "STATE",
        "TOOLS",
        "CACHED",
        "TARGET",
    ];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(&header);
    for row in &rows {
        out.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    for s in servers {
        if let Some(error) = &s.error {
            out.push_str(&format!("{}: {}\n", clean_text(&s.id), clean_text(error)));
        }
    }
    out
}

fn toggle(hub: &McpHub, id: &str, enabled: bool, json: bool) -> ExitCode {
    match hub.set_enabled(id, enabled) {
        Ok(plugin) => {
            let word = if enabled { "enabled" } else { "disabled" };
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": true, "id": id, "plugin": plugin, "enabled": enabled})
                );
            } else {
                println!("{word} {} (plugin {})", clean_text(id), clean_text(&plugin));
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e, json),
    }
}

async fn tools(hub: &McpHub, id: &str, json: bool) -> ExitCode {
    match hub.connect(id).await {
        Ok(tools) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": true, "id": id, "tools": tools})
                );
            } else {
                print!("{}", tools_text(&tools));
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e, json),
    }
}

fn hint(tool: &McpTool) -> &'static str {
    match (tool.read_only_hint, tool.destructive_hint) {
        (Some(true), _) => "read-only",
        (_, Some(false)) => "non-destructive",
        (_, Some(true)) => "destructive",
        _ => "unhinted",
    }
}

/// `capability<TAB>hint<TAB>description` per tool.
pub fn tools_text(tools: &[McpTool]) -> String {
    if tools.is_empty() {
        return "the server offers no tools\n".into();
    }
    tools
        .iter()
        .map(|t| {
            let description = t.description.lines().next().unwrap_or_default();
            format!(
                "{}\t{}\t{}\n",
                clean_text(&t.capability),
                hint(t),
                clean_text(description)
            )
        })
        .collect()
}
