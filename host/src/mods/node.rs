//! The Node.js that runs mods: the `node` on PATH, version 22 or newer,
//! never one inside the open workspace (a project could ship its own
//! `node` next to a mod and have it run as you).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

/// The oldest major version that runs mods.
pub const MIN_MAJOR: u32 = 22;
/// How long the version probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// How this Node runs `.ts` modules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TypeStripping {
    /// Types are stripped by default (Node 22.18+, 23.6+).
    Default,
    /// Behind `--experimental-strip-types` (Node 22.6 – 22.17).
    Flag,
    /// Not at all: TypeScript modules do not run.
    Unavailable,
}

/// A usable Node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    pub path: PathBuf,
    /// `v24.19.0`.
    pub version: String,
    pub type_stripping: TypeStripping,
}

impl Node {
    /// Arguments that go before the host script.
    pub fn flags(&self) -> Vec<String> {
        match self.type_stripping {
            TypeStripping::Flag => vec!["--experimental-strip-types".to_string()],
            _ => Vec::new(),
        }
    }
}

/// Why there is no usable Node: a prerequisite error for the session
/// status and the doctors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase", tag = "problem")]
pub enum NodeProblem {
    #[error(
        "Claude Code mods need Node.js {MIN_MAJOR} or newer, and no `node` was found on PATH{}; install Node.js {MIN_MAJOR}+ and put it on PATH",
        skipped_note(.skipped)
    )]
    Missing { skipped: Vec<PathBuf> },
    #[error(
        "Claude Code mods need Node.js {MIN_MAJOR} or newer; the `node` on PATH ({}) is {version}; install Node.js {MIN_MAJOR}+ and put it first on PATH",
        .path.display()
    )]
    TooOld { path: PathBuf, version: String },
    #[error(
        "Claude Code mods need Node.js {MIN_MAJOR} or newer; the `node` on PATH ({}) did not report its version: {why}",
        .path.display()
    )]
    Unusable { path: PathBuf, why: String },
}

fn skipped_note(skipped: &[PathBuf]) -> String {
    if skipped.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = skipped.iter().map(|p| p.display().to_string()).collect();
        format!(
            " (a node inside the open workspace is never used: {})",
            list.join(", ")
        )
    }
}

/// Find the Node that runs mods for a session of `workspace`.
pub fn find(workspace: Option<&Path>) -> Result<Node, NodeProblem> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    find_in(&path, workspace)
}

/// [`find`] over an explicit PATH value.
pub fn find_in(path: &std::ffi::OsStr, workspace: Option<&Path>) -> Result<Node, NodeProblem> {
    let workspace = workspace.and_then(|w| std::fs::canonicalize(w).ok());
    let mut skipped = Vec::new();
    for dir in std::env::split_paths(path) {
        // A relative entry resolves against the current directory, which
        // may well be the workspace.
        if !dir.is_absolute() {
            continue;
        }
        let candidate = dir.join("node");
        if !is_executable(&candidate) {
            continue;
        }
        let resolved = std::fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
        let inside = workspace.as_ref().is_some_and(|w| {
            resolved.starts_with(w) || std::fs::canonicalize(&dir).is_ok_and(|d| d.starts_with(w))
        });
        if inside {
            skipped.push(candidate);
            continue;
        }
        return probe(&candidate);
    }
    Err(NodeProblem::Missing { skipped })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Ask `node` for its version and whether it strips TypeScript types.
fn probe(node: &Path) -> Result<Node, NodeProblem> {
    const SCRIPT: &str = "process.stdout.write(process.version + ' ' + ((process.features && process.features.typescript) || ''))";
    let unusable = |why: String| NodeProblem::Unusable {
        path: node.to_path_buf(),
        why,
    };
    let out = run(node, &["-p", SCRIPT]).map_err(unusable)?;
    let (version, typescript) = out.split_once(' ').unwrap_or((out.as_str(), ""));
    let version = version.trim().to_string();
    let Some((major, minor)) = parse_version(&version) else {
        return Err(unusable(format!(
            "it printed {:?}, not a version",
            crate::runtime::redaction::clean_text(&out.chars().take(80).collect::<String>())
        )));
    };
    if major < MIN_MAJOR {
        return Err(NodeProblem::TooOld {
            path: node.to_path_buf(),
            version,
        });
    }
    let mut type_stripping = if typescript.trim().is_empty() {
        TypeStripping::Unavailable
    } else {
        TypeStripping::Default
    };
    if type_stripping == TypeStripping::Unavailable && (major, minor) >= (22, 6) {
        let flagged = run(node, &["--experimental-strip-types", "-p", SCRIPT]).unwrap_or_default();
        if flagged
            .split_once(' ')
            .is_some_and(|(_, ts)| !ts.trim().is_empty())
        {
            type_stripping = TypeStripping::Flag;
        }
    }
    Ok(Node {
        path: node.to_path_buf(),
        version,
        type_stripping,
    })
}

/// `v22.18.0` → (22, 18).
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().strip_prefix('v')?.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().unwrap_or("0").parse().ok()?;
    Some((major, minor))
}

/// Run `node args…` and return its stdout, bounded in time.
fn run(node: &Path, args: &[&str]) -> Result<String, String> {
    let mut child = Command::new(node)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + PROBE_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("it did not answer within {PROBE_TIMEOUT:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let mut out = String::new();
    if let Some(stdout) = child.stdout.take() {
        use std::io::Read;
        let _ = stdout.take(4096).read_to_string(&mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn fake_node(dir: &Path, version: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join("node");
        std::fs::write(&path, format!("#!/bin/sh\nprintf '{version} '\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("v22.18.0"), Some((22, 18)));
        assert_eq!(parse_version("v20.20.2\n"), Some((20, 20)));
        assert_eq!(parse_version("22.1.0"), None);
        assert_eq!(parse_version("vX"), None);
    }

    #[test]
    fn an_old_node_is_a_prerequisite_error() {
        let dir = tempfile::tempdir().unwrap();
        let node = fake_node(&dir.path().join("bin"), "v20.0.0");
        let error = find_in(dir.path().join("bin").as_os_str(), None).unwrap_err();
        assert_eq!(
            error,
            NodeProblem::TooOld {
                path: node,
                version: "v20.0.0".into()
            }
        );
        assert!(
            error.to_string().contains("need Node.js 22 or newer"),
            "{error}"
        );
        assert!(error.to_string().contains("is v20.0.0"), "{error}");
    }

    #[test]
    fn a_node_inside_the_workspace_is_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("project");
        fake_node(&workspace.join("node_modules/.bin"), "v24.0.0");
        let outside = fake_node(&dir.path().join("usr/bin"), "v22.18.0");
        let path = std::env::join_paths([
            workspace.join("node_modules/.bin"),
            PathBuf::from("relative/bin"),
            dir.path().join("usr/bin"),
        ])
        .unwrap();
        let node = find_in(&path, Some(&workspace)).unwrap();
        assert_eq!(node.path, outside);
        assert_eq!(node.version, "v22.18.0");
        // Only the workspace's: missing, and the message says why.
        let error = find_in(
            workspace.join("node_modules/.bin").as_os_str(),
            Some(&workspace),
        )
        .unwrap_err();
        assert!(matches!(&error, NodeProblem::Missing { skipped } if skipped.len() == 1));
        assert!(error.to_string().contains("never used"), "{error}");
    }

    #[test]
    fn garbage_is_unusable() {
        let dir = tempfile::tempdir().unwrap();
        fake_node(dir.path(), "\x1b[31mhello");
        let error = find_in(dir.path().as_os_str(), None).unwrap_err();
        assert!(matches!(error, NodeProblem::Unusable { .. }), "{error:?}");
        assert!(!error.to_string().contains('\x1b'));
    }
}
