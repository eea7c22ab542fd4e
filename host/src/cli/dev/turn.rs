//! `reasonix dev turn`: a one-turn client of [`Session`]: open a session on
//! the enabled plugins, run one scripted turn, close, and print every hook
//! point, declarative hook and tool call as aligned text or (`--json`) data.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::cli::output::{self, Failure};
use crate::home::ReasonixHome;
use crate::session::{
    InputSource, Interaction, ScriptedCall, Session, SessionOptions, TurnOptions, TurnStatus,
};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    reasonix dev turn --input 'hello'\n  \
    reasonix dev turn --input 'list it' --call list_dir='{\"path\":\".\"}' --deny list_dir\n  \
    reasonix dev turn --input 'hi' --model plugin/echo-provider/echo/small --json")]
pub struct TurnArgs {
    /// The user's input for the turn.
    #[arg(long, value_name = "TEXT")]
    pub input: String,
    /// A model ref: `plugin/<plugin>/<provider>/<model>` streams from an
    /// extension's provider. Default: the built-in echo provider.
    #[arg(long, value_name = "REF")]
    pub model: Option<String>,
    /// A session file to load (if it exists) and save the transcript to;
    /// extension state goes to `<FILE>.extensions.json` beside it.
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// Make the built-in provider call a tool (a host tool, `use_capability`
    /// or `ext__<plugin>__<tool>`) with these JSON arguments. Repeatable.
    #[arg(long = "call", value_name = "NAME=JSON")]
    pub calls: Vec<String>,
    /// Make the host's own permission decision for this tool a deny. Repeatable.
    #[arg(long = "deny", value_name = "NAME")]
    pub deny: Vec<String>,
    /// Run compaction (compaction.prepare / compaction.complete) after the turn.
    #[arg(long)]
    pub compact: bool,
    /// Answer `host/ui/request` fields with these JSON values (KEY=JSON). Repeatable.
    /// Without any, the harness has no interactive UI.
    #[arg(long = "ui-answer", value_name = "KEY=JSON")]
    pub ui_answers: Vec<String>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Split `NAME=JSON`, checking the JSON.
pub(crate) fn name_and_json(
    flag: &str,
    text: &str,
    object: bool,
) -> Result<(String, serde_json::Value), String> {
    let example = if object {
        format!("{flag} echo='{{\"text\":\"hi\"}}'")
    } else {
        format!("{flag} value=true")
    };
    let Some((name, json)) = text.split_once('=') else {
        return Err(format!(
            "{flag} expects NAME=JSON, got {text:?}; for example {example}"
        ));
    };
    if name.trim().is_empty() {
        return Err(format!(
            "{flag} {text:?}: the name before '=' is empty; for example {example}"
        ));
    }
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        format!("{flag} {name}: the value is not JSON ({e}); for example {example}")
    })?;
    if object && !value.is_object() {
        return Err(format!(
            "{flag} {name}: the arguments must be a JSON object; for example {example}"
        ));
    }
    Ok((name.trim().to_string(), value))
}

pub fn run(args: TurnArgs) -> ExitCode {
    let json = args.json;
    let usage_error = |message: &str| output::fail("dev.turn", &Failure::usage(message), json);
    let failure =
        |code: &str, message: &str| output::fail("dev.turn", &Failure::new(code, message), json);
    let mut calls = Vec::new();
    for call in &args.calls {
        match name_and_json("--call", call, true) {
            Ok((name, arguments)) => calls.push(ScriptedCall {
                name,
                arguments: arguments.to_string(),
            }),
            Err(message) => return usage_error(&message),
        }
    }
    let mut answers = std::collections::BTreeMap::new();
    for answer in &args.ui_answers {
        match name_and_json("--ui-answer", answer, false) {
            Ok((key, value)) => {
                answers.insert(key, value);
            }
            Err(message) => return usage_error(&message),
        }
    }
    if args.input.trim().is_empty() {
        return usage_error("--input must not be empty");
    }
    let home = match ReasonixHome::from_env() {
        Ok(home) => home,
        Err(e) => return failure("install.io", &format!("{e}; set REASONIX_HOME")),
    };
    let workspace = match args
        .workspace
        .clone()
        .map(Ok)
        .unwrap_or_else(std::env::current_dir)
    {
        Ok(dir) => dir,
        Err(e) => {
            return failure(
                "install.io",
                &format!("cannot read the current directory: {e}"),
            );
        }
    };
    let mut options = SessionOptions::new(home.clone(), workspace);
    options.session_file = args.session.clone();
    options.model = args.model.clone();
    options.scripted_calls = calls;
    options.interaction = Interaction::Scripted {
        deny: args.deny.iter().cloned().collect::<BTreeSet<_>>(),
        ui_answers: (!answers.is_empty()).then_some(answers),
    };
    options.first_generation = super::reload::recorded_generation(&home);
    let runtime = match crate::cli::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            return failure(
                "install.io",
                &format!("cannot start the async runtime: {e}"),
            );
        }
    };
    let compact = args.compact;
    runtime.block_on(async move {
        let session = match Session::open(options).await {
            Ok(session) => session,
            Err(error) => return failure(error.code(), &error.to_string()),
        };
        {
            let generation = session.generation();
            tracing::info!(
                generation = generation.number,
                runtimes = generation.runtimes.len(),
                degraded = generation.degraded.len(),
                "extension runtime started"
            );
        }
        let (opening, opening_hooks) = session.opening();
        let turn = session
            .run_turn(
                args.input.clone(),
                InputSource::User,
                TurnOptions {
                    compact,
                    ..TurnOptions::default()
                },
            )
            .await;
        let closing = session.close().await;
        let mut report = match turn {
            Ok(report) => report,
            Err(error) => return failure(error.code(), &error.to_string()),
        };
        // The report covers the whole one-turn session: its opening and
        // closing points and hooks too.
        report.points = opening
            .into_iter()
            .chain(report.points)
            .chain(closing)
            .collect();
        report.hooks = opening_hooks.into_iter().chain(report.hooks).collect();
        if json {
            output::json_pretty(&report_json(&report));
        } else {
            output::text(&super::render::render(&report));
        }
        match report.status {
            TurnStatus::Failed { .. } => ExitCode::from(1),
            TurnStatus::Completed | TurnStatus::Blocked { .. } | TurnStatus::Cancelled => {
                ExitCode::SUCCESS
            }
        }
    })
}

/// The report as printed by `--json`: the report itself plus the `ok`
/// field every `--json` command has, and for a failed turn the failure
/// shape's `errorCode` and `error`.
fn report_json(report: &crate::session::TurnReport) -> serde_json::Value {
    let mut value = serde_json::to_value(report).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        let failed = match &report.status {
            TurnStatus::Failed { error, .. } => Some(error.clone()),
            _ => None,
        };
        object.insert("ok".into(), failed.is_none().into());
        if let Some(error) = failed {
            object.insert("errorCode".into(), "turn.failed".into());
            object.insert("error".into(), error.into());
        }
    }
    value
}
