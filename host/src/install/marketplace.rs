//! Expanding a Claude marketplace (`.claude-plugin/marketplace.json` at a
//! source root without a plugin manifest) into one install candidate per
//! selected plugin.
//!
//! Relative entries come from the same directory or clone; `url` and
//! `git-subdir` entries are cloned on their own and pinned to the commit they
//! resolve to. `--name` selects one entry before the entry limit applies.
//! In a bulk install, entries that cannot be installed here are skipped with
//! a warning; a selected one is an error.
use std::path::{Path, PathBuf};

use reasonix_package::marketplace::{self, Entry, EntrySource, Marketplace, MarketplaceError};

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

/// A directory is a marketplace root when it has a marketplace file and no
/// plugin manifest of its own (a manifest always wins).
pub fn is_marketplace_root(dir: &Path) -> bool {
    let manifests = [
        reasonix_package::manifest::MANIFEST_FILE,
        reasonix_package::CODEX_MANIFEST,
        reasonix_package::CLAUDE_MANIFEST,
    ];
    !manifests.iter().any(|m| dir.join(m).exists())
        && dir.join(marketplace::MARKETPLACE_PATH).is_file()
}

fn market_error(e: MarketplaceError) -> InstallError {
    let code = match &e {
        MarketplaceError::Invalid { .. } => ErrorCode::InvalidManifest,
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
        _ => "",
    };
    let err = InstallError::new(code, format!("{}: {e}", marketplace::MARKETPLACE_PATH));
    if next.is_empty() {
        err
    } else {
        err.with_next(next)
    }
}

/// Read and select: entries in install order (relative ones first, since
/// they share the marketplace's own checkout) and skip warnings.
pub fn select(
    dir: &Path,
    name: Option<&str>,
) -> InstallResult<(Marketplace, Vec<Entry>, Vec<String>)> {
    let market = marketplace::read(dir)
        .map_err(market_error)?
        .ok_or_else(|| {
            InstallError::new(
                ErrorCode::SourceUnreadable,
                format!("{} has no {}", dir.display(), marketplace::MARKETPLACE_PATH),
            )
        })?;
    let selection = market.select(name).map_err(market_error)?;
    let warnings = selection
        .skipped
        .iter()
        .map(|(entry, reason)| {
            format!(
                "marketplace {:?}: plugin {entry:?} skipped: {reason}",
                market.name
            )
        })
        .collect();
    let mut entries = selection.entries;
    entries.sort_by_key(|e| !matches!(e.source, EntrySource::Relative(_)));
    Ok((market, entries, warnings))
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
                    "marketplace {:?}: plugin {:?} skipped: {}",
                    market.name, entry.name, e.message
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
                    format!(" ({})", warnings.join("; "))
                }
            ),
        ));
    }
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
        EntrySource::Relative(_) | EntrySource::Unsupported(_) => {
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
