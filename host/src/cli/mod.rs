//! The `reasonix` command line. `main.rs` stays thin; each subcommand has its
//! own module. Exit codes: 0 success, 1 the operation failed, 2 usage error.
//! Everything a command prints goes through [`output`]; diagnostics (the
//! `tracing` events of the library) go to stderr only ([`logging`]), so
//! stdout carries nothing but the command's own output.
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub mod acp;
pub mod chat;
pub mod dev;
pub mod doctor;
pub mod logging;
pub mod mcp;
pub mod output;
pub mod plugin;
pub mod serve;

use output::errln;

#[derive(Debug, Parser)]
#[command(
    name = "reasonix",
    version,
    about = "Reasonix plugin packages and the extension host",
    long_about = "Install, inspect and manage Reasonix plugin packages, and run their code \
                  extensions (native sidecars and sandboxed WebAssembly components)."
)]
pub struct Cli {
    /// More diagnostics on stderr: -v info, -vv debug, -vvv trace (RUST_LOG,
    /// when set, takes precedence; the default shows warnings).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Install, inspect and manage plugin packages.
    Plugin(plugin::PluginArgs),
    /// The MCP servers of installed plugins: list, enable, disable, tools.
    Mcp(mcp::McpArgs),
    // About and long help come from `ServeArgs` (a doc comment here would
    // replace both).
    Serve(serve::ServeArgs),
    /// An interactive session: everything the enabled plugins contribute,
    /// live (hooks, tools, slash commands, extension UI, providers).
    Chat(chat::ChatArgs),
    /// Serve the session as an Agent Client Protocol agent on stdio (for
    /// editors such as Zed).
    Acp(acp::AcpArgs),
    /// Author and test tools: run one part of a session on its own.
    #[command(subcommand)]
    Dev(dev::DevCommand),
    /// Diagnose this workspace: `reasonix doctor capabilities [--json]`.
    #[command(subcommand)]
    Doctor(doctor::DoctorCommand),
}

/// Parse the process arguments and run the chosen command.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.verbose);
    let code = match cli.command {
        Command::Plugin(args) => match args.command {
            Some(plugin::PluginCommand::Unknown(words)) => {
                let name = words.first().map(String::as_str).unwrap_or_default();
                errln!("unknown plugin command {name:?}\n\n{}", plugin_usage());
                ExitCode::from(output::EXIT_USAGE)
            }
            Some(cmd) => plugin::run(cmd),
            // A bare `reasonix plugin` is a request for help (§a.3): usage on stderr, exit 0.
            None => {
                errln!("{}", plugin_usage());
                ExitCode::SUCCESS
            }
        },
        Command::Mcp(args) => mcp::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Chat(args) => chat::run(args),
        Command::Acp(args) => acp::run(args),
        Command::Dev(cmd) => dev::run(cmd),
        Command::Doctor(cmd) => doctor::run(cmd),
    };
    output::finish(code)
}

fn plugin_usage() -> String {
    let mut cli = Cli::command();
    cli.find_subcommand_mut("plugin")
        .map(|plugin| plugin.render_help().to_string())
        .unwrap_or_default()
}

/// The async runtime of a command: two workers (the machines this runs on
/// have two cores; a session's turn, its sidecars' readers and a frontend
/// share them).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}
