//! `reasonix dev hook <plugin> <Event> --payload FILE [--json]`
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::output::{self, Failure, outln};
use crate::hooks::{self, HookContext, Payload, Verdict};
use crate::install::ErrorCode;
use serde_json::json;

/// Events a plugin hook can be declared for.
use reasonix_package::manifest::HOOK_EVENTS as EVENTS;

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// Installed plugin name (looked up in the registry under $REASONIX_HOME,
    /// default ~/.reasonix).
    pub plugin: String,
    /// Hook event, e.g. PreToolUse, UserPromptSubmit, SessionStart.
    pub event: String,
    /// JSON file with the session's event payload (Reasonix names:
    /// `toolName`, `toolArgs`, `toolResult`, `prompt`, `cwd`, …).
    #[arg(long)]
    pub payload: Option<PathBuf>,
    /// Use the package in this directory instead of the registry.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Workspace root the hook sees (default: the current directory).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Run only the N-th hook of the event (0-based).
    #[arg(long)]
    pub index: Option<usize>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: HookArgs) -> ExitCode {
    match execute(&args) {
        Ok(code) => code,
        Err(failure) => output::fail("dev.hook", &failure, args.json),
    }
}

fn reasonix_home() -> Result<PathBuf, Failure> {
    crate::home::ReasonixHome::from_env()
        .map(|h| h.root().to_path_buf())
        .map_err(|e| Failure::new(ErrorCode::Io.as_str(), e.to_string()))
}

fn execute(args: &HookArgs) -> Result<ExitCode, Failure> {
    if !EVENTS.contains(&args.event.as_str()) {
        return Err(Failure::usage(format!(
            "unknown hook event {:?} (one of: {})",
            args.event,
            EVENTS.join(", ")
        )));
    }
    let home = reasonix_home()?;
    let root = match &args.root {
        Some(root) => root.clone(),
        None => installed_root(&home, &args.plugin)?,
    };
    let pkg = reasonix_package::load_package(&root)
        .map_err(|e| Failure::new(ErrorCode::InvalidManifest.as_str(), e.to_string()))?;
    if args.root.is_some() && pkg.name != args.plugin {
        return Err(Failure::new(
            ErrorCode::NameMismatch.as_str(),
            format!(
                "{} holds plugin {:?}, not {:?}",
                root.display(),
                pkg.name,
                args.plugin
            ),
        ));
    }
    let mut payload = match &args.payload {
        Some(path) => read_payload(path)?,
        None => Payload::default(),
    };
    payload.event = args.event.clone();
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir()
            .map_err(|e| Failure::new(ErrorCode::Io.as_str(), format!("current directory: {e}")))?,
    };
    let ctx = HookContext::for_package(&pkg, &home, &workspace);
    let declared = pkg
        .inventory
        .hooks
        .iter()
        .filter(|h| h.event == args.event)
        .count();
    if declared == 0 {
        return Err(Failure::new(
            "hook.not_declared",
            format!("plugin {:?} has no {} hooks", pkg.name, args.event),
        ));
    }
    if let Some(i) = args.index.filter(|i| *i >= declared) {
        return Err(Failure::usage(format!(
            "--index {i}: plugin {:?} has {declared} {} hooks",
            pkg.name, args.event
        )));
    }
    let runs = hooks::run_event(&pkg.inventory.hooks, &ctx, &payload, args.index);
    let failed = runs.iter().any(|r| r.decision.verdict == Verdict::Error);
    if args.json {
        let out = json!({
            "plugin": pkg.name,
            "root": ctx.plugin_root,
            "event": args.event,
            "hooks": runs,
        });
        output::json_pretty(&out);
    } else {
        for r in &runs {
            let what = r.description.as_deref().unwrap_or(&r.source);
            if !r.matched {
                outln!("{} #{} ({what}): not matched", r.event, r.index);
                continue;
            }
            let verdict = serde_json::to_value(r.decision.verdict).unwrap_or_default();
            outln!(
                "{} #{} ({what}): exit {}{} -> {}{}",
                r.event,
                r.index,
                r.exit_code,
                if r.timed_out { " (timed out)" } else { "" },
                verdict.as_str().unwrap_or("?"),
                r.decision
                    .reason
                    .as_deref()
                    .map(|x| format!(": {x}"))
                    .unwrap_or_default()
            );
            if !r.stdout.is_empty() {
                outln!("  stdout: {}", r.stdout.trim_end());
            }
            if !r.stderr.is_empty() {
                outln!("  stderr: {}", r.stderr.trim_end());
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn read_payload(path: &Path) -> Result<Payload, Failure> {
    let text = reasonix_package::compat::encoding::read_text(path).map_err(|e| {
        Failure::new(
            "hook.payload_unreadable",
            format!("{}: {e}", path.display()),
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::new(
            "hook.payload_invalid",
            format!("{}: invalid payload JSON: {e}", path.display()),
        )
    })
}

/// The install root of `plugin` in the registry under `home`.
fn installed_root(home: &Path, plugin: &str) -> Result<PathBuf, Failure> {
    let home = crate::home::ReasonixHome::at(home);
    let registry = crate::registry::PluginRegistry::load(&home).map_err(|e| Failure::from(&e))?;
    let entry = registry.get(plugin).ok_or_else(|| {
        Failure::new(
            ErrorCode::NotInstalled.as_str(),
            format!(
                "plugin {plugin:?} is not installed in {}",
                home.root().display()
            ),
        )
        .with_next("Pass --root DIR to run the hooks of a package directory.")
    })?;
    if !entry.enabled {
        crate::cli::output::note(&format!(
            "note: plugin {plugin:?} is disabled; running its hooks anyway\n"
        ));
    }
    home.checked_root(&entry.root).map_err(|why| {
        Failure::new(
            ErrorCode::UnsafePath.as_str(),
            format!("plugin {plugin:?}: {why}"),
        )
    })
}
