//! The `reasonix` command line. `main.rs` stays thin; each subcommand has its
//! own module. Exit codes: 0 success, 1 the operation failed, 2 usage error.
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub mod chat;
pub mod dev;
pub mod doctor;
pub mod plugin;
pub mod serve;

#[derive(Debug, Parser)]
#[command(
    name = "reasonix",
    version,
    about = "Reasonix plugin packages and the extension host",
    long_about = "Install, inspect and manage Reasonix plugin packages, and run their code \
                  extensions (native sidecars and sandboxed WebAssembly components)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Install, inspect and manage plugin packages.
    Plugin(plugin::PluginArgs),
    /// Serve the plugin routes and the plugins page over HTTP.
    Serve(serve::ServeArgs),
    /// An interactive session: everything the enabled plugins contribute,
    /// live (hooks, tools, slash commands, extension UI, providers).
    Chat(chat::ChatArgs),
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
    match cli.command {
        Command::Plugin(args) => match args.command {
            Some(plugin::PluginCommand::Unknown(words)) => {
                let name = words.first().map(String::as_str).unwrap_or_default();
                eprintln!("unknown plugin command {name:?}\n\n{}", plugin_usage());
                ExitCode::from(2)
            }
            Some(cmd) => plugin::run(cmd),
            // A bare `reasonix plugin` is a request for help (§a.3): usage on stderr, exit 0.
            None => {
                eprintln!("{}", plugin_usage());
                ExitCode::SUCCESS
            }
        },
        Command::Serve(args) => serve::run(args),
        Command::Chat(args) => chat::run(args),
        Command::Dev(cmd) => dev::run(cmd),
        Command::Doctor(cmd) => doctor::run(cmd),
    }
}

fn plugin_usage() -> String {
    let mut cli = Cli::command();
    cli.find_subcommand_mut("plugin")
        .map(|plugin| plugin.render_help().to_string())
        .unwrap_or_default()
}
