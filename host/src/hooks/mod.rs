//! Running plugin hooks the way a session does (PLUGIN_PACKAGES.md §a.10):
//! matcher selection, placeholder expansion, the execution form, the
//! environment contract, the stdin payload, timeouts and decisions.

pub mod decision;
pub mod expand;
pub mod launch;
pub mod payload;
pub mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use reasonix_package::{Hook, LoadedPackage};
use regex::Regex;
use serde::Serialize;

pub use decision::{Decision, Verdict};
pub use payload::Payload;

/// Who runs the hook and where: the inputs of the environment contract.
#[derive(Debug, Clone)]
pub struct HookContext {
    pub plugin_root: PathBuf,
    pub plugin_name: String,
    pub plugin_version: Option<String>,
    pub reasonix_home: PathBuf,
    pub workspace_root: PathBuf,
    /// An explicit Bash (`[tools.shell] path`): explicit Bash hooks use it
    /// instead of the `bash` on PATH.
    pub bash: Option<PathBuf>,
}

impl HookContext {
    pub fn for_package(pkg: &LoadedPackage, reasonix_home: &Path, workspace_root: &Path) -> Self {
        HookContext {
            plugin_root: absolute(&pkg.root),
            plugin_name: pkg.name.clone(),
            plugin_version: pkg.version.clone(),
            reasonix_home: absolute(reasonix_home),
            workspace_root: absolute(workspace_root),
            bash: None,
        }
    }

    /// The seven variables every plugin hook receives.
    pub fn environment(&self) -> Vec<(String, String)> {
        let root = self.plugin_root.display().to_string();
        let workspace = self.workspace_root.display().to_string();
        let mut env = vec![
            ("REASONIX_PLUGIN_ROOT".to_owned(), root.clone()),
            ("REASONIX_PLUGIN_NAME".to_owned(), self.plugin_name.clone()),
        ];
        if let Some(v) = self.plugin_version.as_deref().filter(|v| !v.is_empty()) {
            env.push(("REASONIX_PLUGIN_VERSION".to_owned(), v.to_owned()));
        }
        env.extend([
            (
                "REASONIX_HOME".to_owned(),
                self.reasonix_home.display().to_string(),
            ),
            ("REASONIX_WORKSPACE_ROOT".to_owned(), workspace.clone()),
            ("CLAUDE_PROJECT_DIR".to_owned(), workspace),
            ("CLAUDE_PLUGIN_ROOT".to_owned(), root),
        ]);
        env
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Events whose `matcher` selects tools; every other event ignores it.
pub fn uses_tool_matcher(event: &str) -> bool {
    matches!(
        event,
        "PreToolUse" | "PostToolUse" | "PostToolUseFailure" | "PermissionRequest"
    )
}

/// Whether `hook` fires for a call of Reasonix tool `tool`. Matchers are
/// anchored regexes (`file` does not match `read_file`); empty and `*` match
/// every tool; a malformed regex never fires. Imported Claude hooks match
/// against the Claude names (current and legacy) of the tool.
pub fn matches(hook: &Hook, tool: &str) -> bool {
    if !uses_tool_matcher(&hook.event) {
        return true;
    }
    let matcher = hook.matcher.as_deref().unwrap_or("").trim();
    if matcher.is_empty() || matcher == "*" {
        return true;
    }
    let Ok(re) = Regex::new(&format!("^(?:{matcher})$")) else {
        return false;
    };
    if hook.payload_format.as_deref() == Some("claude") {
        tools::claude_match_names(tool)
            .iter()
            .any(|name| re.is_match(name))
    } else {
        re.is_match(tool)
    }
}

/// Default timeout when a hook sets none: gating events are kept tight.
pub fn default_timeout(event: &str) -> Duration {
    match event {
        "PreToolUse" | "PermissionRequest" | "UserPromptSubmit" => Duration::from_secs(5),
        _ => Duration::from_secs(30),
    }
}

/// The execution form a hook uses, for display.
pub fn form(hook: &Hook) -> &'static str {
    if hook.context_file.is_some() {
        "context"
    } else if hook.args.is_some() {
        "exec"
    } else if hook.shell.is_some() || hook.shell_command {
        "shell"
    } else {
        "legacy"
    }
}

/// The outcome of one hook.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRun {
    pub event: String,
    pub index: usize,
    pub form: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// `false` when the matcher did not select the payload's tool (not run).
    pub matched: bool,
    #[serde(rename = "async")]
    pub is_async: bool,
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub truncated: bool,
    pub decision: Decision,
}

/// A hook that cannot run on this machine, found before it is ever run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookRuntimeIssue {
    /// The stable diagnostics code: `hook.shell_unavailable`,
    /// `hook.command_not_found`, `hook.missing_context_file` or
    /// `hook.unprovided_variable`.
    pub code: &'static str,
    pub event: String,
    pub description: Option<String>,
    pub message: String,
    /// `true` when the host itself lacks what the hook needs (an interpreter,
    /// a Windows-only shell): the hook can never run here. `false` for a
    /// missing file inside or outside the package (reported as a warning).
    pub prerequisite: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
}

/// Check every hook of `pkg` for a usable interpreter / executable without
/// launching anything (for `plugin doctor`).
pub fn check_hook_runtime(pkg: &LoadedPackage) -> Vec<HookRuntimeIssue> {
    let root = absolute(&pkg.root).display().to_string();
    let mut issues = Vec::new();
    for hook in &pkg.inventory.hooks {
        for var in unprovided_reasonix_vars(hook) {
            issues.push(HookRuntimeIssue {
                code: "hook.unprovided_variable",
                event: hook.event.clone(),
                description: hook.description.clone(),
                message: format!(
                    "hook command references ${var}, which Reasonix never provides to hooks"
                ),
                prerequisite: false,
                remediation: None,
            });
        }
        if let Some((code, message, prerequisite, remediation)) =
            runtime_problem(hook, &root, &absolute(&pkg.root))
        {
            issues.push(HookRuntimeIssue {
                code,
                event: hook.event.clone(),
                description: hook.description.clone(),
                message,
                prerequisite,
                remediation,
            });
        }
    }
    issues
}

/// `REASONIX_*` variables a shell-form command expands that no hook is given
/// (outside single quotes, where the shell would not expand them).
pub fn unprovided_reasonix_vars(hook: &Hook) -> Vec<String> {
    const PROVIDED: &[&str] = &[
        "REASONIX_PLUGIN_ROOT",
        "REASONIX_PLUGIN_NAME",
        "REASONIX_PLUGIN_VERSION",
        "REASONIX_HOME",
        "REASONIX_WORKSPACE_ROOT",
    ];
    if hook.args.is_some() || hook.context_file.is_some() {
        return Vec::new();
    }
    let command = hook.command.as_deref().unwrap_or("");
    let bytes = command.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    let mut in_single = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => in_single = !in_single,
            b'\\' if !in_single => i += 1,
            b'$' if !in_single => {
                let rest = &command[i + 1..];
                let rest = rest.strip_prefix('{').unwrap_or(rest);
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name.starts_with("REASONIX_")
                    && !PROVIDED.contains(&name.as_str())
                    && !hook.env.contains_key(&name)
                    && !out.contains(&name)
                {
                    out.push(name);
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// `(code, message, prerequisite, remediation)` for a hook that cannot run.
fn runtime_problem(
    hook: &Hook,
    root: &str,
    root_path: &Path,
) -> Option<(&'static str, String, bool, Option<String>)> {
    if let Some(ctx) = &hook.context_file {
        let path = root_path.join(expand::plugin_root(ctx, root));
        return (!path.is_file()).then(|| {
            (
                "hook.missing_context_file",
                format!("context file {} does not exist", path.display()),
                false,
                None,
            )
        });
    }
    let command = expand::plugin_root(hook.command.as_deref().unwrap_or(""), root);
    let args = hook.args.as_ref().map(|a| {
        a.iter()
            .map(|x| expand::plugin_root(x, root))
            .collect::<Vec<_>>()
    });
    match launch::plan(&command, args.as_deref(), hook.shell.as_deref()) {
        Err(e) => {
            let remediation = match &e {
                launch::LaunchError::MissingInterpreter { shell } => {
                    Some(format!("install {shell} or configure [tools.shell] path"))
                }
                launch::LaunchError::WindowsOnly(_) => {
                    Some("declare shell \"bash\" or \"auto\" for this hook".to_owned())
                }
                launch::LaunchError::NoPowerShell(_) => Some(
                    "install PowerShell (pwsh) or declare shell \"bash\" for this hook".to_owned(),
                ),
                _ => None,
            };
            Some(("hook.shell_unavailable", e.to_string(), true, remediation))
        }
        Ok(launch::Launch::Exec { program, .. }) => {
            let found = if program.contains('/') {
                let p = Path::new(&program);
                let p = if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    root_path.join(p)
                };
                p.is_file()
            } else {
                launch::find_on_path(&program).is_some()
            };
            (!found).then(|| {
                (
                    "hook.command_not_found",
                    format!("hook executable {program:?} was not found"),
                    false,
                    None,
                )
            })
        }
        Ok(launch::Launch::Shell { .. }) => None,
    }
}

/// Run the hooks of `hooks` for `payload.event` in order, as a session does:
/// hooks whose matcher does not select the tool are reported as not matched;
/// the first refusal (deny/block) stops the rest. `only` restricts the run to
/// one hook index of that event.
pub fn run_event(
    hooks: &[Hook],
    ctx: &HookContext,
    payload: &Payload,
    only: Option<usize>,
) -> Vec<HookRun> {
    let mut payload = payload.clone();
    payload.tool_name = tools::to_reasonix_tool_name(&payload.tool_name);
    if payload.cwd.is_empty() {
        payload.cwd = ctx.workspace_root.display().to_string();
    }
    let mut runs = Vec::new();
    for (index, hook) in hooks
        .iter()
        .filter(|h| h.event == payload.event)
        .enumerate()
    {
        if only.is_some_and(|i| i != index) {
            continue;
        }
        let run = if matches(hook, &payload.tool_name) {
            run_hook(hook, index, ctx, &payload)
        } else {
            not_run(hook, index)
        };
        let stop = matches!(run.decision.verdict, Verdict::Deny | Verdict::Block);
        runs.push(run);
        if stop {
            break;
        }
    }
    runs
}

fn skeleton(hook: &Hook, index: usize) -> HookRun {
    HookRun {
        event: hook.event.clone(),
        index,
        form: form(hook),
        description: hook.description.clone(),
        source: hook.source.clone(),
        matcher: hook.matcher.clone(),
        matched: true,
        is_async: hook.is_async,
        exit_code: -1,
        stdout: String::new(),
        stderr: String::new(),
        timed_out: false,
        truncated: false,
        decision: Decision::new(Verdict::Pass, None),
    }
}

fn not_run(hook: &Hook, index: usize) -> HookRun {
    let mut run = skeleton(hook, index);
    run.matched = false;
    run.decision = Decision::new(
        Verdict::Pass,
        Some("matcher does not select this tool".into()),
    );
    run
}

/// Run one hook (already selected) to completion.
pub fn run_hook(hook: &Hook, index: usize, ctx: &HookContext, payload: &Payload) -> HookRun {
    let mut run = skeleton(hook, index);
    let root = ctx.plugin_root.display().to_string();
    let claude = hook.payload_format.as_deref() == Some("claude");

    if let Some(context_file) = &hook.context_file {
        let path = ctx
            .plugin_root
            .join(expand::plugin_root(context_file, &root));
        match reasonix_package::compat::encoding::read_text(&path) {
            Ok(text) => {
                run.exit_code = 0;
                run.truncated = text.len() > launch::OUTPUT_CAP;
                run.stdout = truncate(text, launch::OUTPUT_CAP);
            }
            Err(e) => {
                run.stderr = format!("cannot read context file {}: {e}", path.display());
                run.decision = Decision::new(Verdict::Error, Some(run.stderr.clone()));
            }
        }
        return run;
    }

    let command = expand::plugin_root(hook.command.as_deref().unwrap_or(""), &root);
    let args = hook.args.as_ref().map(|a| {
        a.iter()
            .map(|x| expand::plugin_root(x, &root))
            .collect::<Vec<_>>()
    });
    let explicit_bash = hook
        .shell
        .as_deref()
        .is_some_and(|s| s.trim().eq_ignore_ascii_case("bash"));
    let launch = match (&ctx.bash, explicit_bash) {
        (Some(bash), true) if args.is_none() => Ok(launch::Launch::Shell {
            interpreter: bash.clone(),
            argv: vec!["-c".into(), command.clone()],
        }),
        _ => launch::plan(&command, args.as_deref(), hook.shell.as_deref()),
    };
    let launch = match launch {
        Ok(l) => l,
        Err(e) => {
            run.stderr = e.to_string();
            run.decision = Decision::new(Verdict::Error, Some(run.stderr.clone()));
            return run;
        }
    };
    let cwd = match hook.cwd.as_deref().map(|c| expand::plugin_root(c, &root)) {
        Some(c) if Path::new(&c).is_absolute() => PathBuf::from(c),
        Some(c) => ctx.plugin_root.join(c),
        None => ctx.plugin_root.clone(),
    };
    let mut env: Vec<(String, String)> = hook
        .env
        .iter()
        .map(|(k, v)| (k.clone(), expand::plugin_root(v, &root)))
        .collect();
    env.extend(ctx.environment());
    let timeout = hook
        .timeout_ms
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .unwrap_or_else(|| default_timeout(&hook.event));
    let stdin = payload.to_stdin(hook.payload_format.as_deref());
    let result = launch::run(launch::Spawn {
        launch: &launch,
        cwd: &cwd,
        env: &env,
        stdin: &stdin,
        timeout,
    });
    run.exit_code = result.exit_code;
    run.stdout = result.stdout;
    run.stderr = result.stderr;
    run.timed_out = result.timed_out;
    run.truncated = result.truncated;
    if let Some(err) = result.spawn_error {
        run.stderr = err.clone();
        run.decision = Decision::new(Verdict::Error, Some(err));
        return run;
    }
    let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    run.decision = if hook.is_async {
        // An async hook runs in the background of a session; it never gates.
        Decision::new(
            Verdict::Pass,
            Some("async hook: its result does not gate the session".into()),
        )
    } else {
        decision::decide(
            &hook.event,
            claude,
            run.exit_code,
            run.timed_out,
            &run.stdout,
            &run.stderr,
            timeout_ms,
        )
    };
    if run.timed_out && run.stderr.is_empty() {
        run.stderr = format!("hook timed out after {timeout_ms} ms");
    }
    run
}

fn truncate(mut s: String, cap: usize) -> String {
    if s.len() > cap {
        let mut end = cap;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(event: &str, matcher: Option<&str>, claude: bool) -> Hook {
        Hook {
            event: event.into(),
            matcher: matcher.map(Into::into),
            command: Some("true".into()),
            args: None,
            context_file: None,
            shell: None,
            shell_command: true,
            is_async: false,
            payload_format: claude.then(|| "claude".into()),
            description: None,
            timeout_ms: None,
            cwd: None,
            env: Default::default(),
            source: "hooks/hooks.json".into(),
        }
    }

    #[test]
    fn matchers_are_anchored_and_translated() {
        assert!(!matches(
            &hook("PreToolUse", Some("file"), false),
            "read_file"
        ));
        assert!(matches(
            &hook("PreToolUse", Some(".*file"), false),
            "read_file"
        ));
        assert!(matches(&hook("PreToolUse", Some("Bash"), true), "bash"));
        assert!(!matches(&hook("PreToolUse", Some("Bash"), false), "bash"));
        assert!(matches(
            &hook("PreToolUse", Some("Write|Edit"), true),
            "write_file"
        ));
        assert!(matches(&hook("PreToolUse", Some("Task"), true), "explore"));
        assert!(matches(
            &hook("PreToolUse", Some("Agent"), true),
            "parallel_tasks"
        ));
        assert!(matches(
            &hook("PreToolUse", Some("BashOutput"), true),
            "wait"
        ));
        assert!(matches(
            &hook("PreToolUse", Some("KillShell"), true),
            "kill_shell"
        ));
        assert!(matches(&hook("PreToolUse", Some("*"), true), "anything"));
        assert!(!matches(&hook("PreToolUse", Some("(bad"), true), "bash"));
        assert!(matches(
            &hook("SessionStart", Some("startup|clear"), true),
            ""
        ));
        assert!(matches(
            &hook("PreToolUse", Some("mcp__gh__.*"), true),
            "mcp__gh__issue"
        ));
    }

    #[test]
    fn unprovided_variables_are_flagged_outside_single_quotes() {
        let mut h = hook("SessionStart", None, true);
        h.command = Some(
            "echo $REASONIX_PLUGIN_ROOT ${REASONIX_TOKEN} '$REASONIX_QUOTED' \"$REASONIX_DQ\" \\$REASONIX_ESC $REASONIX_SET".into(),
        );
        h.env.insert("REASONIX_SET".into(), "1".into());
        assert_eq!(
            unprovided_reasonix_vars(&h),
            ["REASONIX_TOKEN", "REASONIX_DQ"]
        );
        h.args = Some(vec![]);
        assert!(
            unprovided_reasonix_vars(&h).is_empty(),
            "exec form does not expand"
        );
    }

    #[test]
    fn environment_contract() {
        let ctx = HookContext {
            plugin_root: "/p".into(),
            plugin_name: "n".into(),
            plugin_version: Some(String::new()),
            reasonix_home: "/h".into(),
            workspace_root: "/w".into(),
            bash: None,
        };
        let keys: Vec<_> = ctx.environment().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                "REASONIX_PLUGIN_ROOT",
                "REASONIX_PLUGIN_NAME",
                "REASONIX_HOME",
                "REASONIX_WORKSPACE_ROOT",
                "CLAUDE_PROJECT_DIR",
                "CLAUDE_PLUGIN_ROOT"
            ],
            "an empty version is not exported"
        );
    }
}
