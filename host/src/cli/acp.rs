//! `reasonix acp`: serve the session as an Agent Client Protocol agent on
//! stdin/stdout (the agent lives in [`crate::acp`]). stdout carries ACP
//! frames only; diagnostics go to stderr.

use std::process::ExitCode;

use clap::Args;

use crate::acp::{AgentOptions, serve};
use crate::home::ReasonixHome;
use crate::session::ScriptedCall;

#[derive(Debug, Args)]
#[command(
    after_help = "An editor starts this command and speaks ACP (JSON-RPC, one message per \
line) on its stdin and stdout. Each ACP session is a Reasonix session on the session's cwd, \
saved under $REASONIX_HOME/sessions/<id>.json (session/load continues it).\n\n\
Zed (settings.json):\n  \
\"agent_servers\": { \"Reasonix\": { \"type\": \"custom\", \"command\": \"reasonix\", \"args\": [\"acp\"] } }\n\n\
Vendor extensions: _reasonix.io/session/reloadExtensions (method), \
_reasonix.io/session/reloadApplied and _reasonix.io/extensionSurface (notifications), \
_reasonix.io/extensionSurface/request (forms, to clients that set \
clientCapabilities._meta[\"reasonix.extensionSurface\"])."
)]
pub struct AcpArgs {
    /// Make the built-in echo model call this tool in every turn (NAME=JSON),
    /// as `reasonix chat --call` does: exercises a client's tool-call and
    /// permission UI offline. Repeatable.
    #[arg(long = "call", value_name = "NAME=JSON")]
    pub calls: Vec<String>,
}

pub fn run(args: AcpArgs) -> ExitCode {
    let mut scripted_calls = Vec::new();
    for call in &args.calls {
        match crate::cli::dev::turn::name_and_json("--call", call, true) {
            Ok((name, value)) => scripted_calls.push(ScriptedCall {
                name,
                arguments: value.to_string(),
            }),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let home = match ReasonixHome::from_env() {
        Ok(home) => home,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let runtime = match crate::cli::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let options = AgentOptions {
        home,
        guard: reasonix_sidecar::Guard::CurrentExe,
        scripted_calls,
    };
    let result = runtime.block_on(serve(options, agent_client_protocol::Stdio::new()));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            crate::acp::diagnostic(&format!("the connection failed: {}", error.message));
            ExitCode::from(1)
        }
    }
}
