//! Expanding a marketplace — a source root without a plugin manifest that
//! holds `.claude-plugin/marketplace.json` (Claude) or
//! `.agents/plugins/marketplace.json` (Codex) — into one install candidate
//! per selected plugin, sorted by name.
//!
//! Relative entries come from the same directory or clone; `url` and
//! `git-subdir` entries are cloned on their own and pinned to the commit they
//! resolve to. `--name` selects one entry, whatever the marketplace's size.
//! In a bulk install, entries that cannot be installed here are skipped with
//! a warning naming the entry and the reason; a selected one is an error.
use std::path::{Path, PathBuf};

use reasonix_package::marketplace::{
    self, Entry, EntrySource, Marketplace, MarketplaceError, sample_names,
};

use super::error::{ErrorCode, InstallError, InstallResult};
use super::github::GitHubSource;
use super::progress::Progress;
use super::source::{Candidate, checked_out_ref, clean_path, clone_github, plugin_root_from_clone};

/// Candidates of a marketplace, plus what keeps their clones alive.
pub struct Expansion {
    pub candidates: Vec<Candidate>,
    pub warnings: Vec<String>,
    pub temps: Vec<tempfile::TempDir>,
}

const MANIFESTS: [&str; 3] = [
    reasonix_package::manifest::MANIFEST_FILE,
    reasonix_package::CODEX_MANIFEST,
    reasonix_package::CLAUDE_MANIFEST,
];

/// Whether `dir` holds a plugin manifest of any kind.
pub fn has_manifest(dir: &Path) -> bool {
    MANIFESTS
        .iter()
        .any(|m| std::fs::symlink_metadata(dir.join(m)).is_ok())
}

/// A directory is a marketplace root when it has a marketplace file and no
/// plugin manifest of its own (a manifest always wins).
pub fn is_marketplace_root(dir: &Path) -> bool {
    !has_manifest(dir) && marketplace::format_at(dir).is_some()
}

/// The refusal for a source root that is neither a package nor a marketplace.
/// `source` is how the user spelled it (never a temporary clone path).
pub fn not_a_package(source: &str) -> InstallError {
    InstallError::new(
        ErrorCode::ManifestMissing,
        format!(
            "{source} has no plugin manifest ({}) and no marketplace ({} or {})",
            MANIFESTS.join(", "),
            marketplace::MARKETPLACE_PATH,
            marketplace::CODEX_MARKETPLACE_PATH
        ),
    )
}

fn market_error(e: MarketplaceError) -> InstallError {
    let code = match &e {
        MarketplaceError::Invalid { .. } | MarketplaceError::InvalidEntry { .. } => {
            ErrorCode::InvalidManifest
        }
        MarketplaceError::NoSuchEntry { .. } => ErrorCode::NameMismatch,
        MarketplaceError::Unsupported { .. } | MarketplaceError::TooManyEntries { .. } => {
            ErrorCode::UnsupportedSource
        }
    };
    let next = match &e {
        MarketplaceError::TooManyEntries { .. } => {
            "Install one plugin of the marketplace with --name <plugin>."
        }
        MarketplaceError::NoSuchEntry { .. } => "Pass --name with one of the listed plugins.",
        MarketplaceError::InvalidEntry { .. } => {
            "Fix that entry of the marketplace file, or install another entry with --name <plugin>."
        }
        _ => "",
    };
    let err = InstallError::new(code, e.to_string());
    if next.is_empty() {
        err
    } else {
        err.with_next(next)
    }
}

/// Read and select: entries in install order (by name) and skip warnings.
pub fn select(
    dir: &Path,
    name: Option<&str>,
) -> InstallResult<(Marketplace, Vec<Entry>, Vec<String>)> {
    let market = marketplace::read(dir)
        .map_err(market_error)?
        .ok_or_else(|| not_a_package(&dir.display().to_string()))?;
    let selection = market.select(name).map_err(market_error)?;
    Ok((market, selection.entries, selection.skipped))
}

/// Whether the selection for `name` contains an entry of the marketplace's own tree.
pub fn selects_relative(dir: &Path, name: Option<&str>) -> bool {
    select(dir, name).is_ok_and(|(_, entries, _)| {
        entries
            .iter()
            .any(|e| matches!(e.source, EntrySource::Relative(_)))
    })
}

/// Where relative entries live and how their action source is spelled.
pub enum Origin<'a> {
    /// A local directory: sources are absolute paths.
    Local,
    /// A clone of `gh` at `rev` (`commit`): sources are tree URLs.
    Git {
        gh: &'a GitHubSource,
        rev: String,
        commit: String,
    },
}

/// Expand the marketplace at `dir`.
pub fn expand(
    dir: &Path,
    origin: Origin<'_>,
    name: Option<&str>,
    link: bool,
    progress: &Progress,
) -> InstallResult<Expansion> {
    let (market, entries, mut warnings) = select(dir, name)?;
    let selected = name.is_some();
    let mut out = Expansion {
        candidates: Vec::new(),
        warnings: Vec::new(),
        temps: Vec::new(),
    };
    for entry in entries {
        let result = match &entry.source {
            EntrySource::Relative(rel) => relative(dir, &origin, rel, &entry),
            remote => {
                if link {
                    Err(InstallError::new(
                        ErrorCode::UnsupportedSource,
                        format!(
                            "plugin {:?} comes from another repository and cannot be linked",
                            entry.name
                        ),
                    ))
                } else {
                    clone_remote(remote, &entry, progress).map(|(cand, temp)| {
                        out.temps.push(temp);
                        cand
                    })
                }
            }
        };
        match result {
            Ok(c) => out.candidates.push(c),
            Err(e) if !selected && !matches!(entry.source, EntrySource::Relative(_)) => {
                warnings.push(format!(
                    "skipped {} marketplace plugin {:?}: {}",
                    market.format.label(),
                    entry.name,
                    e.message
                ));
            }
            Err(e) => return Err(e),
        }
    }
    if out.candidates.is_empty() {
        return Err(InstallError::new(
            ErrorCode::UnsupportedSource,
            format!(
                "marketplace {:?} has no plugin that can be installed here{}",
                market.name,
                if warnings.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", sample_names(&warnings, "skipped"))
                }
            ),
        ));
    }
    // The plan lists its actions by entry name, as upstream does.
    out.candidates
        .sort_by(|a, b| a.expected_name.cmp(&b.expected_name));
    warnings.sort();
    warnings.dedup();
    out.warnings = warnings;
    Ok(out)
}

fn relative(dir: &Path, origin: &Origin<'_>, rel: &str, entry: &Entry) -> InstallResult<Candidate> {
    let root = plugin_root_from_clone(dir, rel)?;
    Ok(match origin {
        Origin::Local => Candidate {
            source: clean_path(&dir.join(rel)).to_string_lossy().into_owned(),
            root,
            commit: None,
            expected_name: Some(entry.name.clone()),
        },
        Origin::Git { gh, rev, commit } => {
            let path = if gh.path.is_empty() {
                rel.to_owned()
            } else {
                format!("{}/{rel}", gh.path.trim_end_matches('/'))
            };
            Candidate {
                source: format!(
                    "https://github.com/{}/{}/tree/{rev}/{path}",
                    gh.owner, gh.repo
                ),
                root,
                commit: Some(commit.clone()),
                expected_name: Some(entry.name.clone()),
            }
        }
    })
}

fn clone_remote(
    source: &EntrySource,
    entry: &Entry,
    progress: &Progress,
) -> InstallResult<(Candidate, tempfile::TempDir)> {
    let (gh, subdir) = match source {
        EntrySource::Url {
            owner,
            repo,
            sha,
            path,
            ..
        } => (
            GitHubSource {
                owner: owner.clone(),
                repo: repo.clone(),
                reference: sha.clone(),
                path: path.clone().unwrap_or_default(),
            },
            path.clone().unwrap_or_default(),
        ),
        EntrySource::GitSubdir {
            owner,
            repo,
            path,
            git_ref,
            sha,
            ..
        } => (
            GitHubSource {
                owner: owner.clone(),
                repo: repo.clone(),
                // A sha wins over a ref; neither means the default branch.
                reference: sha.clone().or(git_ref.clone()).unwrap_or_default(),
                path: path.clone(),
            },
            path.clone(),
        ),
        EntrySource::Relative(_) | EntrySource::Unsupported(_) | EntrySource::Invalid(_) => {
            return Err(InstallError::new(
                ErrorCode::UnsupportedSource,
                format!("plugin {:?} is not a remote marketplace entry", entry.name),
            ));
        }
    };
    let temp = tempfile::Builder::new()
        .prefix("reasonix-plugin-entry-")
        .tempdir()
        .map_err(|e| {
            InstallError::new(ErrorCode::Io, format!("create temporary directory: {e}"))
        })?;
    progress.start_step(&format!(
        "cloning {}/{} for {}",
        gh.owner, gh.repo, entry.name
    ));
    let cloned = clone_github(&gh, temp.path(), None);
    progress.finish();
    let commit = cloned?;
    let root: PathBuf = plugin_root_from_clone(temp.path(), &subdir)?;
    let mut source = format!("https://github.com/{}/{}/tree/{commit}", gh.owner, gh.repo);
    if !subdir.is_empty() {
        source.push('/');
        source.push_str(&subdir);
    }
    Ok((
        Candidate {
            root,
            source,
            commit: Some(commit),
            expected_name: Some(entry.name.clone()),
        },
        temp,
    ))
}

/// The ref spelled in relative entries' tree URLs: the requested ref, else
/// the branch the clone checked out.
pub fn tree_rev(gh: &GitHubSource, clone: &Path) -> InstallResult<String> {
    if gh.reference.is_empty() {
        checked_out_ref(clone)
    } else {
        Ok(gh.reference.clone())
    }
}
