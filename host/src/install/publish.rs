//! Publication (§a.6): staged copy, backup-protected swap, registry write,
//! backup removal — and the recovery that makes a SIGKILL at any step safe.
//!
//! Invariant after any crash plus [`recover`]: the registry names either the
//! old or the new package, and that package's tree digest equals the
//! registry's `treeDigest`. Trees the registry does not name are never
//! adopted.
//!
//! Leftovers of a publication all live next to the target as
//! `plugins/.<name>.staging-<random>[.old|.fresh|.discard]`:
//! - `S` the staged copy (renamed to `plugins/<name>` at the swap);
//! - `S.old` the previous tree, moved aside by the swap or a removal;
//! - `S.fresh` an empty marker written before the swap of a name the
//!   registry does not know yet: it proves `plugins/<name>` came from an
//!   unfinished publication;
//! - `S.discard` a tree being thrown away by recovery.
use std::fs;
use std::path::{Path, PathBuf};

use super::digest::tree_digest;
use super::error::{ErrorCode, InstallError, InstallResult};
use super::pause::pause_at;
use super::plan::Counts;
use super::progress::Progress;
use super::snapshot::{CopyOptions, copy_tree, estimate_bytes, sync_dir, sync_tree};
use crate::home::ReasonixHome;
use crate::registry::{PluginRegistry, RegistryEntry, RegistryLock};

const STAGING_MARK: &str = ".staging-";

/// What to publish for one plugin.
pub struct CopyPublication<'a> {
    pub name: &'a str,
    /// The (re-resolved) source tree to copy from.
    pub source_root: &'a Path,
    /// The approved snapshot's tree digest.
    pub approved_digest: &'a str,
    /// The approved capability counts.
    pub approved_counts: Counts,
    pub replace: bool,
    /// The registry entry to write (root and treeDigest are filled in here).
    pub entry: RegistryEntry,
}

fn staging_dir(home: &ReasonixHome, name: &str) -> InstallResult<PathBuf> {
    let plugins = home.plugins_dir();
    fs::create_dir_all(&plugins).map_err(|e| InstallError::io("create", &plugins, e))?;
    let dir = tempfile::Builder::new()
        .prefix(&format!(".{name}{STAGING_MARK}"))
        .tempdir_in(&plugins)
        .map_err(|e| InstallError::io("create staging directory in", &plugins, e))?;
    Ok(dir.keep())
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn exists_no_follow(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

fn remove_any(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

fn rename(from: &Path, to: &Path) -> InstallResult<()> {
    fs::rename(from, to).map_err(|e| {
        InstallError::new(
            ErrorCode::PublicationFailed,
            format!(
                "plugin package publication failed: rename {} -> {}: {e}",
                from.display(),
                to.display()
            ),
        )
    })
}

/// Refuse to overwrite an installed name (or an unregistered leftover
/// directory) without `--replace`.
pub fn check_replace(
    home: &ReasonixHome,
    registry: &PluginRegistry,
    name: &str,
    replace: bool,
) -> InstallResult<()> {
    if replace {
        return Ok(());
    }
    if registry.get(name).is_some() {
        return Err(InstallError::new(
            ErrorCode::AlreadyExists,
            format!("plugin package already exists: {name}; use --replace to update it"),
        ));
    }
    let target = home.plugin_dir(name);
    if exists_no_follow(&target) {
        return Err(InstallError::new(
            ErrorCode::AlreadyExists,
            format!(
                "{} exists but is not registered (left by an interrupted install or a removal, possibly with your edits); it is never adopted",
                target.display()
            ),
        )
        .with_next(format!(
            "Re-run with --replace to overwrite it, or move {} away first.",
            target.display()
        )));
    }
    Ok(())
}

/// Copy, verify, swap and register one plugin. Returns the installed root.
pub fn publish_copy(
    home: &ReasonixHome,
    publication: CopyPublication<'_>,
    verify_counts: &dyn Fn(&Path) -> InstallResult<Counts>,
    progress: &Progress,
) -> InstallResult<PathBuf> {
    let _lock = RegistryLock::acquire(home)?;
    let name = publication.name;
    let mut registry = PluginRegistry::load(home)?;
    check_replace(home, &registry, name, publication.replace)?;
    let fresh = registry.get(name).is_none();
    let target = home.plugin_dir(name);

    let staging = staging_dir(home, name)?;
    let backup = with_suffix(&staging, ".old");
    let marker = with_suffix(&staging, ".fresh");
    let discard_all = |extra: &[&Path]| {
        remove_any(&staging);
        remove_any(&marker);
        for p in extra {
            remove_any(p);
        }
    };

    // 1. Stage and verify the exact approved bytes.
    let staged = (|| -> InstallResult<()> {
        progress.start_copy(&format!("copying {name}"), || {
            estimate_bytes(publication.source_root)
        });
        let pause_partial = || pause_at("staging_partial");
        let mut opts = CopyOptions::new(progress);
        opts.after_first_file = Some(&pause_partial);
        let copied = copy_tree(publication.source_root, &staging, &opts);
        progress.finish();
        let copied = copied?;
        let counts = verify_counts(&staging)?;
        if counts != publication.approved_counts {
            return Err(count_mismatch(counts, publication.approved_counts));
        }
        if copied.digest != publication.approved_digest {
            return Err(InstallError::new(
                ErrorCode::DigestMismatch,
                "copied plugin content differs from the approved snapshot",
            ));
        }
        set_dir_mode(&staging)?;
        sync_tree(&staging)
    })();
    if let Err(e) = staged {
        discard_all(&[]);
        return Err(e);
    }
    pause_at("after_staging");

    // 2. Swap: old tree aside, staged tree in; restore on failure.
    if fresh {
        if let Err(e) = fs::write(&marker, b"") {
            discard_all(&[]);
            return Err(InstallError::io("write", &marker, e));
        }
        sync_dir(&home.plugins_dir());
    }
    let had_old = exists_no_follow(&target);
    if had_old {
        if let Err(e) = rename(&target, &backup) {
            discard_all(&[]);
            return Err(e);
        }
        sync_dir(&home.plugins_dir());
        pause_at("after_backup");
    }
    if let Err(e) = rename(&staging, &target) {
        if had_old {
            let _ = fs::rename(&backup, &target);
        }
        discard_all(&[]);
        return Err(e);
    }
    sync_dir(&home.plugins_dir());
    pause_at("after_swap");

    // 3. Registry: re-hash the installed tree right before the rename.
    let mut entry = publication.entry;
    entry.name = name.to_string();
    entry.root = home.relative_root(&target);
    entry.tree_digest = Some(publication.approved_digest.to_string());
    registry.upsert(entry);
    let approved = publication.approved_digest.to_string();
    let target_for_check = target.clone();
    let recheck = move || -> InstallResult<()> {
        if tree_digest(&target_for_check)? != approved {
            return Err(InstallError::new(
                ErrorCode::DigestMismatch,
                "installed plugin content changed before the registry was published; nothing was registered",
            ));
        }
        Ok(())
    };
    if let Err(e) = registry.save(home, Some(&recheck)) {
        // Unpublished: discard the new tree, put the old one back.
        let discard = with_suffix(&staging, ".discard");
        let _ = fs::rename(&target, &discard);
        if had_old {
            let _ = fs::rename(&backup, &target);
        }
        sync_dir(&home.plugins_dir());
        discard_all(&[&discard]);
        return Err(e);
    }

    // 4. The registry names the new tree: the backup can go.
    discard_all(&[&backup]);
    sync_dir(&home.plugins_dir());
    pause_at("after_cleanup");
    Ok(target)
}

fn count_mismatch(got: Counts, want: Counts) -> InstallError {
    InstallError::new(
        ErrorCode::UnsafePath,
        format!(
            "installed copy resolves to {} skills / {} agents / {} commands / {} hooks / {} MCP servers but the approved plan counted {}/{}/{}/{}/{} — the package likely uses symlinks that copy mode cannot materialize safely (links leaving the package, broken links or links to directories)",
            got.skills,
            got.agents,
            got.commands,
            got.hooks,
            got.mcp,
            want.skills,
            want.agents,
            want.commands,
            want.hooks,
            want.mcp
        ),
    )
    .with_next("Replace those symlinks with real files inside the package, or install with --link.")
}

fn set_dir_mode(dir: &Path) -> InstallResult<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755))
        .map_err(|e| InstallError::io("chmod", dir, e))
}

/// Point `plugins/<name>` at a local source directory (link mode).
pub fn publish_link(
    home: &ReasonixHome,
    name: &str,
    source_root: &Path,
    replace: bool,
    mut entry: RegistryEntry,
) -> InstallResult<PathBuf> {
    let _lock = RegistryLock::acquire(home)?;
    let mut registry = PluginRegistry::load(home)?;
    check_replace(home, &registry, name, replace)?;
    let target = home.plugin_dir(name);
    let staging = staging_dir(home, name)?;
    let backup = with_suffix(&staging, ".old");
    let marker = with_suffix(&staging, ".fresh");
    let fresh = registry.get(name).is_none();
    if fresh && let Err(e) = fs::write(&marker, b"") {
        remove_any(&staging);
        return Err(InstallError::io("write", &marker, e));
    }
    let had_old = exists_no_follow(&target);
    if had_old {
        if let Err(e) = rename(&target, &backup) {
            remove_any(&staging);
            remove_any(&marker);
            return Err(e);
        }
        pause_at("after_backup");
    }
    if let Err(e) = std::os::unix::fs::symlink(source_root, &target) {
        if had_old {
            let _ = fs::rename(&backup, &target);
        }
        remove_any(&staging);
        remove_any(&marker);
        return Err(InstallError::io("create link", &target, e));
    }
    sync_dir(&home.plugins_dir());
    pause_at("after_swap");
    entry.name = name.to_string();
    entry.root = source_root.to_string_lossy().into_owned();
    entry.tree_digest = None;
    registry.upsert(entry);
    if let Err(e) = registry.save(home, None) {
        let _ = fs::remove_file(&target);
        if had_old {
            let _ = fs::rename(&backup, &target);
        }
        remove_any(&staging);
        remove_any(&marker);
        return Err(e);
    }
    remove_any(&backup);
    remove_any(&staging);
    remove_any(&marker);
    sync_dir(&home.plugins_dir());
    pause_at("after_cleanup");
    Ok(target)
}

/// Remove a package: its tree moves aside, the registry drops the entry,
/// then the tree is deleted. A linked source directory is never touched:
/// only the `plugins/<name>` link goes, and only if it still points there.
/// What became of a removed plugin's data directory (`data/<name>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemovedData {
    /// There was none.
    None,
    /// It was deleted.
    Deleted(PathBuf),
    /// `--keep-data`: it stays here.
    Kept(PathBuf),
    /// Deleting it failed (the plugin itself is removed).
    NotDeleted { path: PathBuf, why: String },
}

/// A finished removal.
#[derive(Debug, Clone)]
pub struct Removal {
    pub entry: RegistryEntry,
    pub data: RemovedData,
}

/// Remove a plugin: its registry entry, its copied tree (a link's source is
/// left alone) and, unless `keep_data`, its data directory, so a later,
/// unrelated package installed under the same name starts with none.
pub fn remove_package(home: &ReasonixHome, name: &str, keep_data: bool) -> InstallResult<Removal> {
    let _lock = RegistryLock::acquire(home)?;
    let mut registry = PluginRegistry::load(home)?;
    let Some(entry) = registry.get(name).cloned() else {
        return Err(InstallError::new(
            ErrorCode::NotInstalled,
            format!("plugin {name:?} is not installed"),
        ));
    };
    let target = home.plugin_dir(name);
    let root = home.resolve_root(&entry.root);
    let inside_plugins = !entry.is_link() && root == target;
    let ours = if entry.is_link() {
        fs::read_link(&target).is_ok_and(|t| t == root)
    } else {
        inside_plugins && exists_no_follow(&target)
    };
    let staging = staging_dir(home, name)?;
    let backup = with_suffix(&staging, ".old");
    if ours {
        if let Err(e) = rename(&target, &backup) {
            remove_any(&staging);
            return Err(e);
        }
        sync_dir(&home.plugins_dir());
        pause_at("after_backup");
    }
    registry.remove(name);
    if let Err(e) = registry.save(home, None) {
        if ours {
            let _ = fs::rename(&backup, &target);
        }
        remove_any(&staging);
        return Err(e);
    }
    remove_any(&backup);
    remove_any(&staging);
    sync_dir(&home.plugins_dir());
    pause_at("after_cleanup");
    let data = remove_data(home, name, keep_data);
    Ok(Removal { entry, data })
}

/// The data step of a removal, after the registry no longer names the
/// plugin (so no new session can start it meanwhile).
fn remove_data(home: &ReasonixHome, name: &str, keep: bool) -> RemovedData {
    let path = home.data_dir(name);
    if fs::symlink_metadata(&path).is_err() {
        return RemovedData::None;
    }
    if keep {
        return RemovedData::Kept(path);
    }
    let removed = match fs::symlink_metadata(&path) {
        // remove_dir_all does not follow symlinks inside the tree.
        Ok(m) if m.is_dir() => fs::remove_dir_all(&path),
        _ => fs::remove_file(&path),
    };
    match removed {
        Ok(()) => RemovedData::Deleted(path),
        Err(e) => RemovedData::NotDeleted {
            path,
            why: e.to_string(),
        },
    }
}

/// Enable or disable a package (registry write only).
pub fn set_enabled(home: &ReasonixHome, name: &str, enabled: bool) -> InstallResult<()> {
    let _lock = RegistryLock::acquire(home)?;
    let mut registry = PluginRegistry::load(home)?;
    let Some(entry) = registry.get_mut(name) else {
        return Err(InstallError::new(
            ErrorCode::NotInstalled,
            format!("plugin {name:?} is not installed"),
        ));
    };
    entry.enabled = enabled;
    registry.save(home, None)
}

/// Any registry temp file or publication leftover in the home?
fn has_leftovers(home: &ReasonixHome) -> bool {
    let any = |dir: &Path, pred: &dyn Fn(&str) -> bool| {
        fs::read_dir(dir)
            .is_ok_and(|rd| rd.flatten().any(|e| pred(&e.file_name().to_string_lossy())))
    };
    any(home.root(), &|n| {
        n.starts_with(".plugin-packages.json.tmp-")
    }) || any(&home.plugins_dir(), &|n| {
        n.starts_with('.') && n.contains(STAGING_MARK)
    })
}

/// Is `path` a real directory (not a link) whose digest is `digest`?
fn tree_matches(path: &Path, digest: &str) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        && tree_digest(path).is_ok_and(|d| d == digest)
}

/// Finish or undo interrupted publications, using only the registry as the
/// authority. Returns notes for anything left for manual repair. Read-only
/// commands that must write nothing (`--dry-run`) do not call this.
pub fn recover(home: &ReasonixHome) -> InstallResult<Vec<String>> {
    // A corrupt registry fails closed even when there is nothing to recover.
    PluginRegistry::load(home)?;
    if !has_leftovers(home) {
        return Ok(Vec::new());
    }
    // Another installer may be mid-publication: wait for it, then look again.
    let _lock = RegistryLock::acquire(home)?;
    if !has_leftovers(home) {
        return Ok(Vec::new());
    }
    let registry = PluginRegistry::load(home)?;
    let mut notes = Vec::new();
    // Registry temp files are never adopted.
    if let Ok(rd) = fs::read_dir(home.root()) {
        for e in rd.flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(".plugin-packages.json.tmp-")
            {
                remove_any(&e.path());
            }
        }
    }
    let plugins = home.plugins_dir();
    let Ok(rd) = fs::read_dir(&plugins) else {
        return Ok(notes);
    };
    let mut groups: std::collections::BTreeMap<String, Vec<PathBuf>> = Default::default();
    for e in rd.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        if let Some(rest) = file.strip_prefix('.')
            && let Some(i) = rest.find(STAGING_MARK)
        {
            groups
                .entry(rest[..i].to_string())
                .or_default()
                .push(e.path());
        }
    }
    for (name, mut leftovers) in groups {
        leftovers.sort();
        let target = home.plugin_dir(&name);
        let is = |p: &Path, suffix: &str| p.to_string_lossy().ends_with(suffix);
        match registry.get(&name) {
            Some(entry) if !entry.is_link() => {
                let Some(digest) = entry.tree_digest.clone() else {
                    if exists_no_follow(&target) {
                        leftovers.iter().for_each(|p| remove_any(p));
                    }
                    continue;
                };
                if tree_matches(&target, &digest) {
                    leftovers.iter().for_each(|p| remove_any(p));
                    continue;
                }
                let registered = leftovers
                    .iter()
                    .find(|p| !is(p, ".fresh") && tree_matches(p, &digest))
                    .cloned();
                match registered {
                    Some(good) => {
                        let discard = with_suffix(&good, ".discard");
                        if exists_no_follow(&target) {
                            rename(&target, &discard)?;
                        }
                        rename(&good, &target)?;
                        sync_dir(&plugins);
                        leftovers.iter().for_each(|p| remove_any(p));
                        remove_any(&discard);
                    }
                    None => notes.push(format!(
                        "plugin {name}: {} does not hold the registered tree ({digest}) and no interrupted publication does; leftovers kept for manual repair",
                        target.display()
                    )),
                }
            }
            Some(entry) => {
                let source = PathBuf::from(&entry.root);
                let linked = fs::read_link(&target).is_ok_and(|t| t == source);
                if !linked
                    && let Some(link) = leftovers
                        .iter()
                        .find(|p| fs::read_link(p).is_ok_and(|t| t == source))
                        .cloned()
                {
                    let discard = with_suffix(&link, ".discard");
                    if exists_no_follow(&target) {
                        rename(&target, &discard)?;
                    }
                    rename(&link, &target)?;
                    remove_any(&discard);
                }
                leftovers.iter().for_each(|p| remove_any(p));
            }
            None => {
                let fresh = leftovers.iter().any(|p| is(p, ".fresh"));
                if fresh {
                    // plugins/<name> came from a publication that never
                    // reached the registry: undo it, restoring whatever
                    // unregistered tree it displaced.
                    if exists_no_follow(&target) {
                        let discard = plugins.join(format!(".{name}{STAGING_MARK}discard"));
                        rename(&target, &discard)?;
                        remove_any(&discard);
                    }
                    if let Some(old) = leftovers.iter().find(|p| is(p, ".old")) {
                        rename(old, &target)?;
                    }
                }
                leftovers.iter().for_each(|p| remove_any(p));
            }
        }
        sync_dir(&plugins);
    }
    Ok(notes)
}
