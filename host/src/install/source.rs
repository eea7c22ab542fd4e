//! Resolving an install source to one or more package roots on disk.
//!
//! Plan and apply both go through [`resolve_source`], so what is reviewed and
//! what is installed are read the same way. A source resolves to a list of
//! [`Candidate`]s: today one per source; a marketplace expansion (a GitHub
//! repository whose root holds a Claude or Codex marketplace file instead of
//! a manifest) plugs in here and returns one candidate per plugin, all rooted
//! in the same clone.
//!
//! Git sources use the real `git` CLI with `-c core.autocrlf=false`. For
//! tests and mirrors, `REASONIX_GITHUB_BASE=<base>` maps
//! `https://github.com/<o>/<r>` to the clone URL `<base>/<o>/<r>.git`
//! (e.g. `file:///tmp/repos`); unset, the real `https://github.com` is used.
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use super::archive::{looks_like_zip, unpack_zip};
use super::error::{ErrorCode, InstallError, InstallResult};
use super::github::{
    GitHubSource, is_full_sha, looks_like_url, normalize_git_prefix, parse_github_source,
};
use super::progress::Progress;

/// What kind of source a request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    LocalDir,
    Zip,
    Git(GitHubSource),
}

/// One package root a source resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Directory holding the package manifest.
    pub root: PathBuf,
    /// The source string recorded on the action and in the registry: the
    /// absolute local path, the zip path, or the https GitHub URL.
    pub source: String,
    /// Resolved commit (lowercase 40 hex) for git sources.
    pub commit: Option<String>,
    /// The name this candidate must install under, when the source fixes it
    /// (a marketplace entry): the manifest must carry the same name, and
    /// `--name` then selects a candidate instead of renaming it.
    pub expected_name: Option<String>,
}

/// A resolved source; temporary clones/extractions live as long as this.
#[derive(Debug)]
pub struct ResolvedSource {
    pub kind: SourceKind,
    pub candidates: Vec<Candidate>,
    /// Clone or extraction directory, removed on drop.
    pub temp: Option<tempfile::TempDir>,
    /// Notes from resolution (e.g. skipped marketplace entries).
    pub warnings: Vec<String>,
    /// Clones of marketplace entries from other repositories, removed on drop.
    pub entry_clones: Vec<tempfile::TempDir>,
}

/// Where relative paths and `~` resolve.
#[derive(Debug, Clone)]
pub struct SourceContext {
    /// The workspace root (the current directory for the CLI).
    pub workspace: PathBuf,
    /// The user's home directory, for `~` expansion and link safety.
    pub user_home: Option<PathBuf>,
}

impl SourceContext {
    pub fn from_env() -> Self {
        Self {
            workspace: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            user_home: crate::home::user_home(),
        }
    }

    /// `~`/`~/…` expanded, relative paths joined to the workspace, lexically cleaned.
    pub fn resolve_path(&self, raw: &str) -> PathBuf {
        let raw = raw.trim();
        let p = if raw == "~" {
            self.user_home.clone().unwrap_or_else(|| PathBuf::from(raw))
        } else if let Some(rest) = raw.strip_prefix("~/") {
            match &self.user_home {
                Some(h) => h.join(rest),
                None => PathBuf::from(raw),
            }
        } else {
            PathBuf::from(raw)
        };
        let p = if p.is_absolute() {
            p
        } else {
            self.workspace.join(p)
        };
        clean_path(&p)
    }
}

/// Lexical cleaning (`a/./b/../c` → `a/c`), as Go's `filepath.Clean`.
pub fn clean_path(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Classify a source without touching the network.
pub fn classify(raw: &str, ctx: &SourceContext) -> InstallResult<SourceKind> {
    let source = normalize_git_prefix(raw.trim());
    if looks_like_url(&source) {
        return parse_github_source(&source)
            .map(SourceKind::Git)
            .ok_or_else(|| {
                InstallError::new(
                    ErrorCode::UnsupportedSource,
                    format!("plugin URL {source:?} is not a GitHub repository"),
                )
            });
    }
    let path = ctx.resolve_path(&source);
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => Ok(SourceKind::LocalDir),
        Ok(_) if looks_like_zip(&path) => Ok(SourceKind::Zip),
        Ok(_) => Err(InstallError::new(
            ErrorCode::UnsupportedSource,
            format!(
                "{} is neither a plugin directory nor a .zip archive",
                path.display()
            ),
        )),
        Err(e) => Err(InstallError::new(
            ErrorCode::SourceUnreadable,
            format!(
                "source {raw:?} is not a readable local path or GitHub URL ({}: {e})",
                path.display()
            ),
        )),
    }
}

/// Resolve `raw` to package roots. `pinned` is the commit an approved plan
/// recorded: when the source now resolves elsewhere, that commit is fetched
/// and checked out so exactly the approved snapshot is installed.
pub fn resolve_source(
    raw: &str,
    ctx: &SourceContext,
    link: bool,
    pinned: Option<&str>,
    progress: &Progress,
) -> InstallResult<ResolvedSource> {
    resolve_source_for(raw, ctx, link, pinned, None, progress)
}

/// [`resolve_source`], where a marketplace source (a root with
/// `.claude-plugin/marketplace.json` or `.agents/plugins/marketplace.json`
/// and no manifest) expands to one
/// candidate per plugin, or to the one named `select`.
pub fn resolve_source_for(
    raw: &str,
    ctx: &SourceContext,
    link: bool,
    pinned: Option<&str>,
    select: Option<&str>,
    progress: &Progress,
) -> InstallResult<ResolvedSource> {
    let kind = classify(raw, ctx)?;
    match &kind {
        SourceKind::LocalDir => {
            let path = ctx.resolve_path(&normalize_git_prefix(raw.trim()));
            if super::marketplace::is_marketplace_root(&path) {
                let exp = super::marketplace::expand(
                    &path,
                    super::marketplace::Origin::Local,
                    select,
                    link,
                    progress,
                )?;
                return Ok(ResolvedSource {
                    kind,
                    candidates: exp.candidates,
                    temp: None,
                    warnings: exp.warnings,
                    entry_clones: exp.temps,
                });
            }
            if !super::marketplace::has_manifest(&path) {
                return Err(super::marketplace::not_a_package(
                    &path.display().to_string(),
                ));
            }
            Ok(ResolvedSource {
                candidates: vec![Candidate {
                    source: path.to_string_lossy().into_owned(),
                    root: path,
                    commit: None,
                    expected_name: None,
                }],
                kind,
                temp: None,
                warnings: Vec::new(),
                entry_clones: Vec::new(),
            })
        }
        SourceKind::Zip => {
            if link {
                return Err(InstallError::new(
                    ErrorCode::UnsupportedSource,
                    "a .zip cannot be linked; install it without --link",
                ));
            }
            let path = ctx.resolve_path(raw);
            let temp = temp_dir("reasonix-plugin-zip-")?;
            let root = unpack_zip(&path, temp.path())?;
            Ok(ResolvedSource {
                candidates: vec![Candidate {
                    root,
                    source: path.to_string_lossy().into_owned(),
                    commit: None,
                    expected_name: None,
                }],
                kind,
                temp: Some(temp),
                warnings: Vec::new(),
                entry_clones: Vec::new(),
            })
        }
        SourceKind::Git(gh) => {
            if link {
                return Err(InstallError::new(
                    ErrorCode::UnsupportedSource,
                    "a git source cannot be linked; clone it yourself and --link the directory",
                ));
            }
            let gh = gh.clone();
            let temp = temp_dir("reasonix-plugin-")?;
            progress.start_step(&format!("cloning {}/{}", gh.owner, gh.repo));
            let cloned = clone_head(&gh, temp.path());
            progress.finish();
            let head = cloned?;
            let market_root = plugin_root_from_clone(temp.path(), &gh.path)
                .ok()
                .filter(|r| super::marketplace::is_marketplace_root(r));
            if let Some(root) = market_root {
                // The approved commit belongs to this clone only when the
                // selection has entries of its own tree (they come first);
                // remote entries are pinned by their own commits.
                let commit = if super::marketplace::selects_relative(&root, select) {
                    restore_pinned(temp.path(), &head, pinned)?
                } else {
                    head
                };
                let root = plugin_root_from_clone(temp.path(), &gh.path)?;
                let origin = super::marketplace::Origin::Git {
                    gh: &gh,
                    rev: super::marketplace::tree_rev(&gh, temp.path())?,
                    commit,
                };
                let exp = super::marketplace::expand(&root, origin, select, link, progress)?;
                return Ok(ResolvedSource {
                    kind,
                    candidates: exp.candidates,
                    temp: Some(temp),
                    warnings: exp.warnings,
                    entry_clones: exp.temps,
                });
            }
            let commit = restore_pinned(temp.path(), &head, pinned)?;
            let root = plugin_root_from_clone(temp.path(), &gh.path)?;
            if !super::marketplace::has_manifest(&root) {
                return Err(super::marketplace::not_a_package(&normalize_git_prefix(
                    raw.trim(),
                )));
            }
            Ok(ResolvedSource {
                candidates: vec![Candidate {
                    root,
                    source: normalize_git_prefix(raw.trim()),
                    commit: Some(commit),
                    expected_name: None,
                }],
                kind,
                temp: Some(temp),
                warnings: Vec::new(),
                entry_clones: Vec::new(),
            })
        }
    }
}

fn temp_dir(prefix: &str) -> InstallResult<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| InstallError::new(ErrorCode::Io, format!("create temporary directory: {e}")))
}

/// The clone URL for a GitHub repository (see the module docs for the override).
pub fn clone_url(gh: &GitHubSource) -> String {
    match std::env::var("REASONIX_GITHUB_BASE") {
        Ok(base) if !base.trim().is_empty() => {
            format!(
                "{}/{}/{}.git",
                base.trim_end_matches('/'),
                gh.owner,
                gh.repo
            )
        }
        _ => format!("https://github.com/{}/{}.git", gh.owner, gh.repo),
    }
}

/// `git -c core.autocrlf=false <args>`, never prompting.
fn git(args: &[&str]) -> InstallResult<String> {
    let out = Command::new("git")
        .arg("-c")
        .arg("core.autocrlf=false")
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| {
            InstallError::new(ErrorCode::SourceUnreadable, format!("cannot run git: {e}"))
                .with_next(
                    "Install git (https://git-scm.com) and make sure it is on PATH, then retry.",
                )
        })?;
    if !out.status.success() {
        return Err(InstallError::new(
            ErrorCode::SourceUnreadable,
            format!(
                "git {} failed: {}",
                args.first().copied().unwrap_or_default(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Shallow-clone into `dest`; returns the checked-out commit (lowercase).
pub(crate) fn clone_github(
    gh: &GitHubSource,
    dest: &Path,
    pinned: Option<&str>,
) -> InstallResult<String> {
    let head = clone_head(gh, dest)?;
    restore_pinned(dest, &head, pinned)
}

/// The branch a clone has checked out, or its commit when detached.
pub(crate) fn checked_out_ref(dest: &Path) -> InstallResult<String> {
    let d = dest.to_string_lossy().into_owned();
    let name = git(&["-C", &d, "rev-parse", "--abbrev-ref", "HEAD"])?;
    if name == "HEAD" || name.is_empty() {
        git(&["-C", &d, "rev-parse", "HEAD"]).map(|c| c.to_ascii_lowercase())
    } else {
        Ok(name)
    }
}

/// Shallow-clone into `dest` (pinned sources at their commit); returns HEAD.
fn clone_head(gh: &GitHubSource, dest: &Path) -> InstallResult<String> {
    let url = clone_url(gh);
    let dest_s = dest.to_string_lossy().into_owned();
    // --branch takes a ref name, never an object id: a SHA-pinned source
    // clones the default branch, then fetches its own commit.
    let mut args = vec!["clone", "--depth=1", "--quiet"];
    if !gh.reference.is_empty() && !gh.is_pinned() {
        args.push("--branch");
        args.push(&gh.reference);
    }
    args.push("--");
    args.push(&url);
    args.push(&dest_s);
    git(&args)?;
    if gh.is_pinned() {
        checkout_commit(dest, &gh.reference.to_ascii_lowercase())?;
    }
    Ok(git(&["-C", &dest_s, "rev-parse", "HEAD"])?.to_ascii_lowercase())
}

/// When the clone's `head` is not the approved commit, check the approved
/// one out; returns the commit now checked out.
pub(crate) fn restore_pinned(
    dest: &Path,
    head: &str,
    pinned: Option<&str>,
) -> InstallResult<String> {
    let head = head.to_owned();
    if let Some(approved) = pinned.filter(|p| !p.is_empty())
        && !head.eq_ignore_ascii_case(approved)
    {
        // The source moved since the plan: install the approved snapshot.
        checkout_commit(dest, approved).map_err(|e| {
            InstallError::new(
                ErrorCode::ApprovalDenied,
                format!(
                    "plugin source changed since the approved plan (approved commit {approved}, found {head}) and the approved snapshot could not be restored: {}",
                    e.message
                ),
            )
        })?;
        return Ok(approved.to_ascii_lowercase());
    }
    Ok(head)
}

fn checkout_commit(clone: &Path, commit: &str) -> InstallResult<()> {
    if !is_full_sha(commit) {
        return Err(InstallError::new(
            ErrorCode::SourceUnreadable,
            format!("{commit:?} is not a full commit SHA"),
        ));
    }
    let c = clone.to_string_lossy().into_owned();
    git(&["-C", &c, "fetch", "--depth=1", "--quiet", "origin", commit])?;
    git(&["-C", &c, "checkout", "--quiet", "--detach", commit])?;
    Ok(())
}

/// The package root for a repository subdirectory; it must stay inside the
/// clone after symlink resolution.
pub fn plugin_root_from_clone(clone: &Path, repo_path: &str) -> InstallResult<PathBuf> {
    if repo_path.is_empty() {
        return Ok(clone.to_path_buf());
    }
    let escapes = || {
        InstallError::new(
            ErrorCode::UnsafePath,
            format!("plugin repository path {repo_path:?} escapes the cloned repository"),
        )
    };
    if repo_path.contains('\\') {
        return Err(InstallError::new(
            ErrorCode::UnsafePath,
            format!("plugin repository path {repo_path:?} is not a safe relative path"),
        ));
    }
    let rel = Path::new(repo_path);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(escapes());
    }
    let resolved_clone = std::fs::canonicalize(clone).map_err(|e| {
        InstallError::new(
            ErrorCode::SourceUnreadable,
            format!("cannot resolve cloned plugin repository: {e}"),
        )
    })?;
    let resolved = std::fs::canonicalize(clone.join(rel)).map_err(|e| {
        InstallError::new(
            ErrorCode::SourceUnreadable,
            format!("plugin repository path {repo_path:?} is not readable: {e}"),
        )
    })?;
    if !resolved.starts_with(&resolved_clone) {
        return Err(escapes());
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_against_workspace_and_home() {
        let ctx = SourceContext {
            workspace: PathBuf::from("/work/space"),
            user_home: Some(PathBuf::from("/home/u")),
        };
        assert_eq!(ctx.resolve_path("./a/../b"), Path::new("/work/space/b"));
        assert_eq!(ctx.resolve_path("~"), Path::new("/home/u"));
        assert_eq!(ctx.resolve_path("~/p"), Path::new("/home/u/p"));
        assert_eq!(ctx.resolve_path("/abs/./x/"), Path::new("/abs/x"));
    }

    #[test]
    fn urls_that_are_not_github_are_refused_before_any_clone() {
        let ctx = SourceContext::from_env();
        let err = classify("https://example.com/o/r", &ctx).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsupportedSource);
        assert!(matches!(
            classify("git:github.com/o/r", &ctx).unwrap(),
            SourceKind::Git(_)
        ));
    }
}
