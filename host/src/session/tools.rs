//! The host's own tools, with Reasonix's names and argument shapes (the
//! names the hook translation table maps to Claude's `Bash`, `Read`,
//! `Write`, `Edit`). Every path is confined to the workspace: relative to
//! it, no `..` out of it, no symlink out of it. `bash` runs in the workspace
//! in its own process group, bounded in time and output, and is killed with
//! its descendants when the turn is cancelled.
//!
//! A tool never runs without a permission decision: the session calls
//! [`run`] only after the permission flow allowed the call.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A host tool's provider-visible schema.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTool {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: &'static str,
    pub read_only: bool,
}

pub const HOST_TOOLS: &[HostTool] = &[
    HostTool {
        name: "bash",
        description: "Run a shell command in the workspace. Output (stdout and stderr) is \
                      returned; the command is killed after timeout_ms (default 120000).",
        parameters: r#"{"type":"object","properties":{"command":{"type":"string"},"timeout_ms":{"type":"integer","minimum":1,"maximum":600000}},"required":["command"],"additionalProperties":false}"#,
        read_only: false,
    },
    HostTool {
        name: "echo",
        description: "Return the given text unchanged.",
        parameters: r#"{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}"#,
        read_only: true,
    },
    HostTool {
        name: "edit_file",
        description: "Replace old_string with new_string in a workspace file. old_string must \
                      occur exactly once unless replace_all is true.",
        parameters: r#"{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old_string","new_string"],"additionalProperties":false}"#,
        read_only: false,
    },
    HostTool {
        name: "list_dir",
        description: "List the entries of a directory inside the workspace.",
        parameters: r#"{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}"#,
        read_only: true,
    },
    HostTool {
        name: "read_file",
        description: "Read a text file inside the workspace; offset and limit select lines \
                      (1-based).",
        parameters: r#"{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}"#,
        read_only: true,
    },
    HostTool {
        name: "write_file",
        description: "Create or overwrite a text file inside the workspace.",
        parameters: r#"{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}"#,
        read_only: false,
    },
];

/// The most a tool result carries back to the model.
pub const OUTPUT_CAP: usize = 256 * 1024;
const BASH_DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
const BASH_MAX_TIMEOUT: Duration = Duration::from_secs(600);

pub fn find(name: &str) -> Option<&'static HostTool> {
    HOST_TOOLS.iter().find(|t| t.name == name)
}

/// Where and how host tools run.
#[derive(Debug, Clone)]
pub struct ToolEnv {
    pub workspace: PathBuf,
    /// The interpreter of `bash` (`[tools.shell]`); default `sh`.
    pub shell: PathBuf,
}

impl ToolEnv {
    pub fn new(workspace: PathBuf, shell: &crate::config::ShellConfig) -> ToolEnv {
        let shell = match (&shell.path, &shell.prefer) {
            (Some(path), _) => path.clone(),
            (None, Some(prefer)) => PathBuf::from(prefer),
            (None, None) => PathBuf::from("sh"),
        };
        ToolEnv { workspace, shell }
    }
}

/// Run a host tool: `Ok(content)`, or `Err(content)` for a tool-level error.
pub async fn run(
    env: &ToolEnv,
    name: &str,
    arguments: &str,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let arguments: Value = if arguments.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(arguments).map_err(|e| format!("arguments are not JSON: {e}"))?
    };
    if !arguments.is_object() {
        return Err("arguments must be a JSON object".to_string());
    }
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    let required = |key: &str| text(key).ok_or_else(|| format!("`{key}` (a string) is required"));
    match name {
        "echo" => Ok(text("text").unwrap_or_default().to_string()),
        "list_dir" => list_dir(&env.workspace, text("path").unwrap_or(".")),
        "read_file" => {
            let number = |key: &str| arguments.get(key).and_then(Value::as_u64);
            read_file(
                &env.workspace,
                required("path")?,
                number("offset"),
                number("limit"),
            )
        }
        "write_file" => write_file(&env.workspace, required("path")?, required("content")?),
        "edit_file" => edit_file(
            &env.workspace,
            required("path")?,
            required("old_string")?,
            required("new_string")?,
            arguments
                .get("replace_all")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
        "bash" => {
            let timeout = arguments
                .get("timeout_ms")
                .and_then(Value::as_u64)
                .map(Duration::from_millis)
                .unwrap_or(BASH_DEFAULT_TIMEOUT)
                .min(BASH_MAX_TIMEOUT);
            bash(env, required("command")?, timeout, cancel).await
        }
        other => Err(format!("unknown host tool `{other}`")),
    }
}

/// Resolve `relative` inside `workspace`, refusing anything that leaves it
/// (absolute paths elsewhere, `..`, symlinks pointing out). The path need
/// not exist; its nearest existing ancestor is checked.
pub fn confine(workspace: &Path, relative: &str) -> Result<PathBuf, String> {
    let root = workspace
        .canonicalize()
        .map_err(|e| format!("workspace {}: {e}", workspace.display()))?;
    let requested = Path::new(relative);
    let joined = if requested.is_absolute() {
        requested.to_path_buf()
    } else {
        root.join(requested)
    };
    // Lexical check first: `..` never climbs out, even through a missing dir.
    let mut lexical = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                if !lexical.pop() {
                    return Err(outside(relative));
                }
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    if !lexical.starts_with(&root) {
        return Err(outside(relative));
    }
    // Then the real path of the nearest existing ancestor (symlinks).
    let mut probe = lexical.as_path();
    let mut tail = Vec::new();
    let real = loop {
        match probe.canonicalize() {
            Ok(real) => break real,
            Err(_) => match (probe.parent(), probe.file_name()) {
                (Some(parent), Some(name)) => {
                    tail.push(name.to_owned());
                    probe = parent;
                }
                _ => return Err(outside(relative)),
            },
        }
    };
    if !real.starts_with(&root) {
        return Err(outside(relative));
    }
    let mut out = real;
    for name in tail.into_iter().rev() {
        out.push(name);
    }
    Ok(out)
}

fn outside(path: &str) -> String {
    format!("path {path:?} is outside the workspace; tools only reach files inside it")
}

fn list_dir(workspace: &Path, relative: &str) -> Result<String, String> {
    let dir = confine(workspace, relative)?;
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{relative}: {e}"))?
        .filter_map(|entry| entry.ok())
        .map(|entry| {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    Ok(names.join("\n"))
}

fn read_file(
    workspace: &Path,
    relative: &str,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<String, String> {
    let path = confine(workspace, relative)?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{relative}: {e}"))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{relative}: not a UTF-8 text file"))?;
    let skip = offset.unwrap_or(1).saturating_sub(1) as usize;
    let take = limit.map(|l| l as usize).unwrap_or(usize::MAX);
    let selected: Vec<&str> = text.split_inclusive('\n').skip(skip).take(take).collect();
    Ok(cap(selected.concat()))
}

fn write_file(workspace: &Path, relative: &str, content: &str) -> Result<String, String> {
    let path = confine(workspace, relative)?;
    if path.is_dir() {
        return Err(format!("{relative}: is a directory"));
    }
    let parent = path
        .parent()
        .ok_or_else(|| format!("{relative}: has no parent directory"))?;
    std::fs::create_dir_all(parent).map_err(|e| format!("{relative}: {e}"))?;
    replace_atomically(&path, content.as_bytes()).map_err(|e| format!("{relative}: {e}"))?;
    Ok(format!("wrote {} bytes to {relative}", content.len()))
}

fn edit_file(
    workspace: &Path,
    relative: &str,
    old: &str,
    new: &str,
    all: bool,
) -> Result<String, String> {
    if old.is_empty() {
        return Err("`old_string` must not be empty".to_string());
    }
    let path = confine(workspace, relative)?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{relative}: {e}"))?;
    let count = text.matches(old).count();
    let edited = match (count, all) {
        (0, _) => return Err(format!("{relative}: `old_string` does not occur")),
        (1, _) | (_, true) => text.replace(old, new),
        (n, false) => {
            return Err(format!(
                "{relative}: `old_string` occurs {n} times; make it unique or set replace_all"
            ));
        }
    };
    replace_atomically(&path, edited.as_bytes()).map_err(|e| format!("{relative}: {e}"))?;
    Ok(format!("replaced {count} occurrence(s) in {relative}"))
}

/// Write beside the file and rename over it: a reader never sees half a file.
fn replace_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(temp.path(), meta.permissions());
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn cap(mut text: String) -> String {
    if text.len() > OUTPUT_CAP {
        let mut end = OUTPUT_CAP;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[output truncated]");
    }
    text
}

async fn bash(
    env: &ToolEnv,
    command: &str,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<String, String> {
    use tokio::io::AsyncReadExt;
    let mut child = tokio::process::Command::new(&env.shell)
        .arg("-c")
        .arg(command)
        .current_dir(&env.workspace)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", env.shell.display()))?;
    let group = child
        .id()
        .and_then(|id| rustix::process::Pid::from_raw(id as i32));
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let read_all = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let (a, b) = tokio::join!(
            async {
                if let Some(s) = stdout.as_mut() {
                    let _ = s.take(OUTPUT_CAP as u64 + 1).read_to_end(&mut out).await;
                }
            },
            async {
                if let Some(s) = stderr.as_mut() {
                    let _ = s.take(OUTPUT_CAP as u64 + 1).read_to_end(&mut err).await;
                }
            }
        );
        let ((), ()) = (a, b);
        let status = child.wait().await;
        (out, err, status)
    };
    let kill_group = || {
        if let Some(group) = group {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    };
    let (out, err, status) = tokio::select! {
        done = read_all => done,
        _ = tokio::time::sleep(timeout) => {
            kill_group();
            return Err(format!("bash: timed out after {} ms and was killed", timeout.as_millis()));
        }
        _ = cancel.cancelled() => {
            kill_group();
            return Err("bash: cancelled".to_string());
        }
    };
    // Descendants left in the group (backgrounded jobs) end with the call.
    kill_group();
    let mut text = String::from_utf8_lossy(&out).into_owned();
    if !err.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&String::from_utf8_lossy(&err));
    }
    let text = cap(text);
    match status {
        Ok(status) if status.success() => Ok(text),
        Ok(status) => Err(format!(
            "{text}{}exit status {}",
            if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            },
            status
                .code()
                .map_or("signal".to_string(), |c| c.to_string())
        )),
        Err(e) => Err(format!("bash: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> (tempfile::TempDir, ToolEnv) {
        let dir = tempfile::tempdir().unwrap();
        let env = ToolEnv::new(dir.path().to_path_buf(), &Default::default());
        (dir, env)
    }

    async fn call(env: &ToolEnv, name: &str, args: &str) -> Result<String, String> {
        run(env, name, args, &CancellationToken::new()).await
    }

    #[tokio::test]
    async fn files_round_trip_inside_the_workspace() {
        let (_dir, env) = env();
        call(
            &env,
            "write_file",
            r#"{"path":"a/b.txt","content":"one\ntwo\nthree\n"}"#,
        )
        .await
        .unwrap();
        assert_eq!(
            call(
                &env,
                "read_file",
                r#"{"path":"a/b.txt","offset":2,"limit":1}"#
            )
            .await,
            Ok("two\n".to_string())
        );
        call(
            &env,
            "edit_file",
            r#"{"path":"a/b.txt","old_string":"two","new_string":"2"}"#,
        )
        .await
        .unwrap();
        assert_eq!(
            call(&env, "read_file", r#"{"path":"a/b.txt"}"#).await,
            Ok("one\n2\nthree\n".to_string())
        );
        assert_eq!(call(&env, "list_dir", r#"{}"#).await, Ok("a/".to_string()));
        let twice = call(
            &env,
            "edit_file",
            r#"{"path":"a/b.txt","old_string":"e","new_string":"E"}"#,
        )
        .await
        .unwrap_err();
        assert!(twice.contains("occurs 3 times"), "{twice}");
    }

    #[tokio::test]
    async fn paths_cannot_leave_the_workspace() {
        let (dir, env) = env();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        for path in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "link/secret",
            "link/new-file",
        ] {
            let args = format!(r#"{{"path":{path:?},"content":"x"}}"#);
            let error = call(&env, "write_file", &args).await.unwrap_err();
            assert!(error.contains("outside the workspace"), "{path}: {error}");
            let error = call(&env, "read_file", &args.replace(",\"content\":\"x\"", ""))
                .await
                .unwrap_err();
            assert!(error.contains("outside the workspace"), "{path}: {error}");
        }
        assert!(!outside.path().join("new-file").exists());
        // An absolute path inside the workspace is fine.
        let inside = dir.path().canonicalize().unwrap().join("ok.txt");
        let args = format!(
            r#"{{"path":{:?},"content":"x"}}"#,
            inside.display().to_string()
        );
        call(&env, "write_file", &args).await.unwrap();
    }

    #[tokio::test]
    async fn bash_runs_in_the_workspace_and_reports_failure() {
        let (dir, env) = env();
        std::fs::write(dir.path().join("marker"), "").unwrap();
        assert_eq!(
            call(&env, "bash", r#"{"command":"ls"}"#).await,
            Ok("marker\n".to_string())
        );
        let failed = call(&env, "bash", r#"{"command":"echo no >&2; exit 3"}"#)
            .await
            .unwrap_err();
        assert_eq!(failed, "no\nexit status 3");
        let slow = call(&env, "bash", r#"{"command":"sleep 30","timeout_ms":200}"#)
            .await
            .unwrap_err();
        assert!(slow.contains("timed out after 200 ms"), "{slow}");
    }

    #[tokio::test]
    async fn bash_is_killed_on_cancel_with_its_children() {
        let (dir, env) = env();
        let cancel = CancellationToken::new();
        let pid_file = dir.path().join("pid");
        let command = format!("sleep 60 & echo $! > {}; wait", pid_file.display());
        let args = serde_json::json!({ "command": command }).to_string();
        let task = {
            let env = env.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { run(&env, "bash", &args, &cancel).await })
        };
        while !pid_file.exists()
            || std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .is_empty()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancel.cancel();
        assert_eq!(task.await.unwrap(), Err("bash: cancelled".to_string()));
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The backgrounded sleep went with the group (poll: reaping is async).
        let mut alive = true;
        for _ in 0..200 {
            alive = std::path::Path::new(&format!("/proc/{pid}")).exists()
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .unwrap_or_default()
                    .contains(") Z");
            if !alive {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!alive, "the background child {pid} outlived the cancel");
    }
}
