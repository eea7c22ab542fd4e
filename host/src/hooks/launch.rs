//! Turning a hook into a process: the execution form, the interpreter, and
//! running it with a timeout that takes the whole process group down.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use base64::Engine as _;

/// How a hook's command is launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// `program` run directly with literal `args` (no shell).
    Exec { program: String, args: Vec<String> },
    /// `interpreter` + its flags + the script, passed unchanged.
    Shell {
        interpreter: PathBuf,
        argv: Vec<String>,
    },
}

/// Why a hook cannot be launched on this machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    #[error(
        "hook prerequisite missing: {shell} is required to run this hook but was not found on PATH; install {shell} or change the hook's \"shell\""
    )]
    MissingInterpreter { shell: String },
    #[error("cmd is only available on Windows (hook shell {0:?} is not available here)")]
    WindowsOnly(String),
    #[error(
        "PowerShell is not available here: neither pwsh nor powershell is on PATH (hook shell {0:?})"
    )]
    NoPowerShell(String),
    #[error("hook shell {0:?} is not supported (use auto, bash, powershell, pwsh or cmd)")]
    UnknownShell(String),
    #[error("hook has no command")]
    NoCommand,
}

/// Select the launcher. `args` present → exec form; otherwise shell form via
/// the declared interpreter (`""`/`auto` → `sh -c`, `bash` → `bash -c`); a
/// hook with neither is the legacy Reasonix shell command (`sh -c`).
pub fn plan(
    command: &str,
    args: Option<&[String]>,
    shell: Option<&str>,
) -> Result<Launch, LaunchError> {
    if command.trim().is_empty() {
        return Err(LaunchError::NoCommand);
    }
    if let Some(args) = args {
        return Ok(Launch::Exec {
            program: command.to_owned(),
            args: args.to_vec(),
        });
    }
    let shell = shell
        .map(|s| s.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match shell.as_str() {
        "" | "auto" | "sh" => posix("sh", command),
        "bash" => posix("bash", command),
        "powershell" | "pwsh" => {
            let pwsh = find_on_path("pwsh")
                .or_else(|| find_on_path("powershell"))
                .ok_or_else(|| LaunchError::NoPowerShell(shell.clone()))?;
            Ok(Launch::Shell {
                interpreter: pwsh,
                argv: vec![
                    "-NoProfile".into(),
                    "-NonInteractive".into(),
                    "-EncodedCommand".into(),
                    powershell_encoded(command),
                ],
            })
        }
        "cmd" => Err(LaunchError::WindowsOnly(shell)),
        _ => Err(LaunchError::UnknownShell(shell)),
    }
}

fn posix(shell: &str, script: &str) -> Result<Launch, LaunchError> {
    let interpreter = find_on_path(shell).ok_or_else(|| LaunchError::MissingInterpreter {
        shell: shell.to_owned(),
    })?;
    Ok(Launch::Shell {
        interpreter,
        argv: vec!["-c".into(), script.to_owned()],
    })
}

/// PowerShell's `-EncodedCommand` takes base64 of UTF-16LE; the prologue
/// makes its output UTF-8 so it decodes like every other hook's.
pub fn powershell_encoded(script: &str) -> String {
    let full = format!(
        "[Console]::OutputEncoding = [System.Text.Encoding]::UTF8; $OutputEncoding = [System.Text.Encoding]::UTF8\n{script}"
    );
    let bytes: Vec<u8> = full.encode_utf16().flat_map(u16::to_le_bytes).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// First executable named `name` on `$PATH` (or `name` itself if it is a path).
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Everything a launched hook needs.
pub struct Spawn<'a> {
    pub launch: &'a Launch,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub stdin: &'a str,
    pub timeout: Duration,
}

/// What the process did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpawnResult {
    /// `-1` when the process was killed or never ran.
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub truncated: bool,
    pub spawn_error: Option<String>,
}

/// Per-stream capture cap: a runaway child cannot exhaust memory.
pub const OUTPUT_CAP: usize = 256 * 1024;

/// Run the hook to completion or until `timeout`, then kill its process group.
pub fn run(spawn: Spawn<'_>) -> SpawnResult {
    let mut cmd = match spawn.launch {
        Launch::Exec { program, args } => {
            let mut c = Command::new(program);
            c.args(args);
            c
        }
        Launch::Shell { interpreter, argv } => {
            let mut c = Command::new(interpreter);
            c.args(argv);
            c
        }
    };
    {
        use std::os::unix::process::CommandExt;
        // Own process group, so a timeout also reaches the script's children.
        cmd.process_group(0);
    }
    cmd.current_dir(spawn.cwd)
        .envs(spawn.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            let what = match spawn.launch {
                Launch::Exec { program, .. } => program.clone(),
                Launch::Shell { interpreter, .. } => interpreter.display().to_string(),
            };
            return SpawnResult {
                exit_code: -1,
                spawn_error: Some(format!("cannot start {what}: {e}")),
                ..Default::default()
            };
        }
    };
    let pid = child.id();
    let stdin_data = spawn.stdin.as_bytes().to_vec();
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(stdin) = stdin.as_mut() {
            // A hook that never reads stdin closes the pipe; that is fine.
            let _ = stdin.write_all(&stdin_data);
        }
    });
    let out = Captured::start(child.stdout.take());
    let err = Captured::start(child.stderr.take());

    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send(());
        status
    });
    let timed_out = rx.recv_timeout(spawn.timeout).is_err();
    if timed_out {
        kill_group(pid);
    }
    let status = waiter.join().ok().and_then(Result::ok);
    let _ = writer.join();
    // A background grandchild may keep the pipes open after the hook exits;
    // like upstream's WaitDelay, stop waiting for it after a short grace.
    let grace = Duration::from_millis(500);
    let (stdout, out_trunc) = out.finish(grace);
    let (stderr, err_trunc) = err.finish(grace);
    let exit_code = if timed_out {
        -1
    } else {
        status.and_then(|s| s.code()).unwrap_or(-1)
    };
    SpawnResult {
        exit_code,
        stdout: decode_output(&stdout),
        stderr: decode_output(&stderr),
        timed_out,
        truncated: out_trunc || err_trunc,
        spawn_error: None,
    }
}

/// A pipe drained on its own thread into a shared, capped buffer.
struct Captured {
    buffer: std::sync::Arc<std::sync::Mutex<(Vec<u8>, bool)>>,
    done: mpsc::Receiver<()>,
}

impl Captured {
    fn start<R: Read + Send + 'static>(pipe: Option<R>) -> Captured {
        let buffer = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), false)));
        let (tx, done) = mpsc::channel();
        let shared = buffer.clone();
        std::thread::spawn(move || {
            if let Some(mut pipe) = pipe {
                let mut buf = [0u8; 8192];
                loop {
                    match pipe.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let Ok(mut guard) = shared.lock() else { break };
                            let room = OUTPUT_CAP.saturating_sub(guard.0.len());
                            if n > room {
                                guard.1 = true;
                            }
                            guard.0.extend_from_slice(&buf[..n.min(room)]);
                        }
                    }
                }
            }
            let _ = tx.send(());
        });
        Captured { buffer, done }
    }

    fn finish(self, grace: Duration) -> (Vec<u8>, bool) {
        let _ = self.done.recv_timeout(grace);
        match self.buffer.lock() {
            Ok(guard) => (guard.0.clone(), guard.1),
            Err(_) => (Vec::new(), false),
        }
    }
}

fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        // ESRCH (the group is already gone) is the normal case after exit.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Hook output is UTF-8, or a legacy code page (GB18030 on Chinese-locale
/// systems) that is normalised to UTF-8.
fn decode_output(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => reasonix_package::compat::encoding::decode(bytes)
            .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_selection() {
        let exec = plan("bin/x", Some(&["a b".to_owned()]), Some("bash")).unwrap();
        assert_eq!(
            exec,
            Launch::Exec {
                program: "bin/x".into(),
                args: vec!["a b".into()]
            }
        );
        let Launch::Shell { interpreter, argv } = plan("echo $HOME", None, Some("bash")).unwrap()
        else {
            panic!()
        };
        assert!(interpreter.ends_with("bash"));
        assert_eq!(argv, ["-c", "echo $HOME"]);
        let Launch::Shell { interpreter, .. } = plan("echo", None, None).unwrap() else {
            panic!()
        };
        assert!(interpreter.ends_with("sh"));
        assert!(matches!(
            plan("x", None, Some("cmd")),
            Err(LaunchError::WindowsOnly(_))
        ));
        assert!(matches!(
            plan("x", None, Some("fish")),
            Err(LaunchError::UnknownShell(_))
        ));
        assert!(matches!(plan(" ", None, None), Err(LaunchError::NoCommand)));
    }

    #[test]
    fn powershell_encoding_round_trips() {
        let enc = powershell_encoded("Write-Output 'héllo ✓'");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(enc)
            .unwrap();
        let units: Vec<u16> = bytes
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let text = String::from_utf16(&units).unwrap();
        assert!(text.ends_with("\nWrite-Output 'héllo ✓'"));
        assert!(text.starts_with("[Console]::OutputEncoding"));
    }
}
