//! The `reasonix` command line. `main.rs` stays thin; each subcommand has its
//! own module. Exit codes: 0 success, 1 the operation failed, 2 usage error.
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod dev;
pub mod plugin;

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
    #[command(subcommand)]
    Plugin(plugin::PluginCommand),
    /// Author and test tools: run one part of a session on its own.
    #[command(subcommand)]
    Dev(dev::DevCommand),
}

/// Parse the process arguments and run the chosen command.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Plugin(cmd) => plugin::run(cmd),
        Command::Dev(cmd) => dev::run(cmd),
    }
}
