//! Turning a plugin's runtime declaration into a running child process:
//! exec form only, absolute command, identity environment, own process group.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use reasonix_protocol::shells::NEVER_A_SHELL;
use rustix::process::{Pid, Signal};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use crate::guard::GUARD_MARKER;

/// The placeholder expanded in `command` and `args`.
pub const PLUGIN_ROOT_PLACEHOLDER: &str = "${REASONIX_PLUGIN_ROOT}";

/// What starts one sidecar.
///
/// Only plugins installed through the plugin flow (a registry entry) may
/// start a runtime: the host builds a `LaunchSpec` from its registry entry and
/// never from a path in project configuration. This crate cannot check that
/// provenance; the host's start API is where it is enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Installed plugin root (absolute). Becomes `REASONIX_PLUGIN_ROOT`.
    pub plugin_root: PathBuf,
    /// Plugin name. Becomes `REASONIX_PLUGIN_NAME`.
    pub name: String,
    /// Plugin version. Becomes `REASONIX_PLUGIN_VERSION`.
    pub version: String,
    /// `runtime.command`: an absolute path after placeholder expansion.
    pub command: String,
    /// `runtime.args`.
    pub args: Vec<String>,
    /// `runtime.env`, added on top of the inherited environment.
    pub env: BTreeMap<String, String>,
}

/// How the child is wrapped so that it dies with the host.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Guard {
    /// Re-execute `std::env::current_exe()` in guard mode. The binary must
    /// call [`crate::guard::run_if_requested`] first thing in `main`.
    #[default]
    CurrentExe,
    /// Use this binary (which calls `run_if_requested`) as the guard.
    Exe(PathBuf),
    /// Spawn the sidecar directly: still its own process group, still killed
    /// on drop and shutdown, but not on the host's sudden death.
    Disabled,
}

/// Why a sidecar could not be launched.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("runtime command is empty")]
    EmptyCommand,
    #[error("runtime command {command:?} is a shell ({shell}); only exec form is allowed")]
    ShellRefused { command: String, shell: String },
    #[error("runtime command {command:?} is not an absolute path (no PATH lookup is done)")]
    RelativeCommand { command: String },
    #[error("plugin root {root:?} must be an absolute UTF-8 path")]
    BadPluginRoot { root: PathBuf },
    #[error("runtime env key {key:?} is invalid (empty, or contains '=' or NUL)")]
    BadEnvKey { key: String },
    #[error("runtime {field} contains a NUL byte")]
    NulByte { field: String },
    #[error("cannot locate the guard executable: {0}")]
    GuardExe(#[source] io::Error),
    #[error("spawning {command:?} failed: {source}")]
    Spawn {
        command: String,
        #[source]
        source: io::Error,
    },
}

/// A launch spec after expansion and checks: exactly what gets executed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Variables set on top of the inherited environment, identity last.
    pub env: Vec<(String, String)>,
}

/// Expands `${REASONIX_PLUGIN_ROOT}`, refuses shells and relative commands,
/// and builds the environment (inherited + manifest env + identity, identity
/// wins).
pub fn resolve(spec: &LaunchSpec) -> Result<ResolvedCommand, LaunchError> {
    let root = match spec.plugin_root.to_str() {
        Some(root) if spec.plugin_root.is_absolute() => root,
        _ => {
            return Err(LaunchError::BadPluginRoot {
                root: spec.plugin_root.clone(),
            });
        }
    };
    let expand = |s: &str| s.replace(PLUGIN_ROOT_PLACEHOLDER, root);
    let command = expand(spec.command.trim());
    if command.is_empty() {
        return Err(LaunchError::EmptyCommand);
    }
    no_nul("command", &command)?;
    if let Some(shell) = shell_name(&command) {
        return Err(LaunchError::ShellRefused { command, shell });
    }
    if !Path::new(&command).is_absolute() {
        return Err(LaunchError::RelativeCommand { command });
    }
    let args: Vec<String> = spec.args.iter().map(|a| expand(a)).collect();
    for (i, arg) in args.iter().enumerate() {
        no_nul(&format!("args[{i}]"), arg)?;
    }
    let identity = [
        ("REASONIX_PLUGIN_ROOT", root.to_owned()),
        ("REASONIX_PLUGIN_NAME", spec.name.clone()),
        ("REASONIX_PLUGIN_VERSION", spec.version.clone()),
    ];
    let mut env = Vec::with_capacity(spec.env.len() + identity.len());
    for (key, value) in &spec.env {
        if key.is_empty() || key.contains('=') || key.contains('\0') {
            return Err(LaunchError::BadEnvKey { key: key.clone() });
        }
        no_nul(&format!("env.{key}"), value)?;
        if identity.iter().any(|(k, _)| k == key) {
            continue;
        }
        env.push((key.clone(), value.clone()));
    }
    for (key, value) in identity {
        no_nul(key, &value)?;
        env.push((key.to_owned(), value));
    }
    Ok(ResolvedCommand {
        program: PathBuf::from(command),
        args,
        env,
    })
}

fn no_nul(field: &str, value: &str) -> Result<(), LaunchError> {
    if value.contains('\0') {
        Err(LaunchError::NulByte {
            field: field.to_owned(),
        })
    } else {
        Ok(())
    }
}

/// The shell a command names, if any: its basename compared
/// case-insensitively with the protocol's list, an optional `.exe` suffix
/// removed on both sides (so `bash.exe` is refused too).
fn shell_name(command: &str) -> Option<String> {
    let base = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let lower = base.to_ascii_lowercase();
    let stem = lower.strip_suffix(".exe").unwrap_or(&lower);
    NEVER_A_SHELL
        .iter()
        .any(|shell| shell.strip_suffix(".exe").unwrap_or(shell) == stem)
        .then(|| base.to_owned())
}

/// A started process tree: the guard (or, unguarded, the child itself) as
/// the leader of a new process group, and everything it starts. Every
/// launcher that must leave nothing behind (sidecars, stdio MCP servers)
/// starts through [`spawn_tree`] and ends through [`ProcessTree::end`].
#[derive(Debug)]
pub struct ProcessTree {
    leader: Pid,
    guarded: bool,
    ended: AtomicBool,
}

impl ProcessTree {
    /// The process group id (the guard's pid, or the unguarded child's).
    pub fn group(&self) -> Pid {
        self.leader
    }

    /// Whether a guard watches the tree (it then also catches descendants
    /// that left the group, and the host's sudden death).
    pub fn is_guarded(&self) -> bool {
        self.guarded
    }

    /// End the whole tree, once (a second signal could hit a reused id).
    /// Guarded: SIGTERM to the guard, which kills every descendant —
    /// `setsid` daemons included — and exits; wait for the leader to exit,
    /// then [`ProcessTree::kill_group`] if it did not. Unguarded: SIGKILL
    /// to the process group.
    pub fn end(&self) {
        if self.ended.swap(true, Ordering::AcqRel) {
            return;
        }
        if self.guarded {
            match rustix::process::kill_process(self.leader, Signal::TERM) {
                Ok(()) | Err(rustix::io::Errno::SRCH) => {}
                Err(err) => {
                    tracing::warn!(guard = self.leader.as_raw_nonzero().get(), %err, "signalling the sidecar guard failed");
                    kill_group(self.leader);
                }
            }
        } else {
            kill_group(self.leader);
        }
    }

    /// SIGKILL the process group: the backstop for a guard that did not
    /// exit after [`ProcessTree::end`] (call it before the leader is reaped).
    pub fn kill_group(&self) {
        self.ended.store(true, Ordering::Release);
        kill_group(self.leader);
    }
}

/// Spawns the resolved command with piped stdio as a new process tree,
/// through the guard unless disabled. Drop the handle only after
/// [`ProcessTree::end`]. Other host runtimes that need the same cleanup
/// (stdio MCP servers, the Claude Code mods' Node process) start here too.
pub async fn spawn_tree(
    cmd: &ResolvedCommand,
    guard: &Guard,
) -> Result<(Child, ProcessTree), LaunchError> {
    // Through a guard, a program that cannot run would only show up as a
    // guard exiting early (a "crash" at initialize): check it here, so the
    // failure is the spawn failure it is.
    // A bare name (an MCP server's `npx`) is looked up on PATH by exec.
    if cmd.program.components().count() > 1
        && let Err(source) = runnable(&cmd.program)
    {
        return Err(LaunchError::Spawn {
            command: cmd.program.display().to_string(),
            source,
        });
    }
    let (program, args): (PathBuf, Vec<OsString>) = match guard {
        Guard::Disabled => (
            cmd.program.clone(),
            cmd.args.iter().map(OsString::from).collect(),
        ),
        Guard::CurrentExe | Guard::Exe(_) => {
            let exe = match guard {
                Guard::Exe(path) => path.clone(),
                _ => std::env::current_exe().map_err(LaunchError::GuardExe)?,
            };
            let mut args: Vec<OsString> = vec![
                GUARD_MARKER.into(),
                std::process::id().to_string().into(),
                cmd.program.clone().into(),
            ];
            args.extend(cmd.args.iter().map(OsString::from));
            (exe, args)
        }
    };
    let mut command = Command::new(&program);
    command
        .args(&args)
        .envs(cmd.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // A guard must live to finish its cleanup after `end()`: dropping
        // its handle must not SIGKILL it (tokio reaps it once it exits).
        .kill_on_drop(matches!(guard, Guard::Disabled));
    let child = spawn_on_stable_thread(command)
        .await
        .map_err(|source| LaunchError::Spawn {
            command: cmd.program.display().to_string(),
            source,
        })?;
    let leader = child
        .id()
        .and_then(|id| Pid::from_raw(id as i32))
        .ok_or_else(|| LaunchError::Spawn {
            command: cmd.program.display().to_string(),
            source: io::Error::other("child exited before its pid was read"),
        })?;
    let tree = ProcessTree {
        leader,
        guarded: !matches!(guard, Guard::Disabled),
        ended: AtomicBool::new(false),
    };
    Ok((child, tree))
}

/// Whether `program` is a file that may be executed.
fn runnable(program: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(program)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "not executable (no x permission)",
        ));
    }
    Ok(())
}

/// Kills every process in the group. A group that is already gone is fine.
fn kill_group(group: Pid) {
    match rustix::process::kill_process_group(group, Signal::KILL) {
        Ok(()) => {}
        Err(rustix::io::Errno::SRCH) => {}
        Err(err) => {
            tracing::warn!(group = group.as_raw_nonzero().get(), %err, "killing sidecar process group failed")
        }
    }
}

/// How long an ended tree's leader may take to exit, before its group is
/// killed and again after that (every launcher's reap budget).
pub const REAP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

struct SpawnJob {
    command: Command,
    runtime: tokio::runtime::Handle,
    reply: oneshot::Sender<io::Result<Child>>,
}

/// How many processes may be in `spawn` at once: each spawn blocks its
/// thread until the child has exec'd (tens to hundreds of microseconds of
/// kernel work per child), so one thread serialises a generation's starts;
/// as many threads as cores (at most the four concurrent starts of a
/// generation, spec §4.3) let them overlap.
fn spawner_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// Forks from threads that live as long as the process: the guard's
/// parent-death signal fires when the *thread* that forked it exits, so a
/// short-lived runtime thread would kill healthy sidecars.
async fn spawn_on_stable_thread(command: Command) -> io::Result<Child> {
    static SPAWNER: OnceLock<mpsc::Sender<SpawnJob>> = OnceLock::new();
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        for _ in 0..spawner_threads() {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name("reasonix-sidecar-spawner".into())
                .spawn(move || {
                    loop {
                        // One idle thread waits in `recv`, the others on the
                        // lock; the lock is released before spawning.
                        let job = rx
                            .lock()
                            .map_err(|_| ())
                            .and_then(|rx| rx.recv().map_err(|_| ()));
                        let Ok(mut job) = job else { return };
                        let _entered = job.runtime.enter();
                        let _ = job.reply.send(job.command.spawn());
                    }
                })
                .expect("spawner thread starts");
        }
        tx
    });
    let (reply, answer) = oneshot::channel();
    sender
        .send(SpawnJob {
            command,
            runtime: tokio::runtime::Handle::current(),
            reply,
        })
        .map_err(|_| io::Error::other("sidecar spawner thread is gone"))?;
    answer
        .await
        .map_err(|_| io::Error::other("sidecar spawner thread dropped the request"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(command: &str) -> LaunchSpec {
        LaunchSpec {
            plugin_root: PathBuf::from("/opt/plugins/demo"),
            name: "demo".into(),
            version: "1.2.3".into(),
            command: command.into(),
            args: vec!["--root=${REASONIX_PLUGIN_ROOT}/data".into()],
            env: BTreeMap::from([
                ("MODE".into(), "fast".into()),
                ("REASONIX_PLUGIN_NAME".into(), "spoofed".into()),
            ]),
        }
    }

    #[test]
    fn expands_root_and_identity_wins() {
        let r = resolve(&spec("${REASONIX_PLUGIN_ROOT}/bin/ext")).unwrap();
        assert_eq!(r.program, PathBuf::from("/opt/plugins/demo/bin/ext"));
        assert_eq!(r.args, vec!["--root=/opt/plugins/demo/data"]);
        assert_eq!(
            r.env,
            vec![
                ("MODE".to_owned(), "fast".to_owned()),
                (
                    "REASONIX_PLUGIN_ROOT".to_owned(),
                    "/opt/plugins/demo".to_owned()
                ),
                ("REASONIX_PLUGIN_NAME".to_owned(), "demo".to_owned()),
                ("REASONIX_PLUGIN_VERSION".to_owned(), "1.2.3".to_owned()),
            ]
        );
    }

    #[test]
    fn shells_are_refused() {
        for shell in [
            "/bin/sh",
            "/usr/bin/bash",
            "/bin/zsh",
            "/usr/bin/fish",
            "/bin/dash",
            "/bin/ksh",
            "C:\\Windows\\System32\\cmd.exe",
            "C:\\x\\PowerShell.EXE",
            "/usr/bin/pwsh",
            "bash",
        ] {
            assert!(
                matches!(resolve(&spec(shell)), Err(LaunchError::ShellRefused { .. })),
                "{shell}"
            );
        }
        assert!(resolve(&spec("/usr/bin/shellcheck")).is_ok());
    }

    #[test]
    fn relative_and_empty_commands_are_refused() {
        assert!(matches!(
            resolve(&spec("bin/ext")),
            Err(LaunchError::RelativeCommand { .. })
        ));
        assert!(matches!(
            resolve(&spec("python3")),
            Err(LaunchError::RelativeCommand { .. })
        ));
        assert!(matches!(
            resolve(&spec("  ")),
            Err(LaunchError::EmptyCommand)
        ));
        let mut bad = spec("/bin/ext");
        bad.plugin_root = PathBuf::from("relative/root");
        assert!(matches!(
            resolve(&bad),
            Err(LaunchError::BadPluginRoot { .. })
        ));
        let mut bad = spec("/bin/ext");
        bad.env.insert("A=B".into(), "x".into());
        assert!(matches!(resolve(&bad), Err(LaunchError::BadEnvKey { .. })));
    }
}
