//! The package copier of §a.6.1, used for the approval snapshot and for the
//! staged copy that gets published.
//!
//! - `.git` directories (any case) are skipped;
//! - a symlink is materialised only when it resolves to a regular file inside
//!   the source tree; escaping, broken and directory links are skipped and
//!   reported (the capability re-count afterwards fails the install closed if
//!   a skipped link mattered);
//! - fifos, sockets and devices are refused;
//! - files are created with `O_EXCL` and modes normalised to 0644 / 0755;
//! - at most [`COPY_BUDGET_BYTES`] bytes and [`MAX_ENTRIES`] entries.
//!
//! The walk (directories, links, limits) is sequential and in digest order;
//! the files are then copied on a few threads, each read once, hashed and
//! written in the same pass, so the copy yields its own tree digest.
use std::fs;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::digest::digest_of_files;
use super::error::{ErrorCode, InstallError, InstallResult};
use super::listing::sorted_entries;
use super::parallel::map_jobs;
use super::progress::Progress;

/// Total bytes a copied package may hold (256 MiB).
pub const COPY_BUDGET_BYTES: u64 = 256 << 20;
/// Entries (files, directories, links) a copied package may hold.
pub const MAX_ENTRIES: usize = 20_000;

/// What a copy did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CopyReport {
    pub files: usize,
    pub bytes: u64,
    /// Human-readable notes about skipped links (relative paths).
    pub skipped: Vec<String>,
    /// The tree digest of the copy ([`super::digest::tree_digest`] of
    /// `dst`), from the bytes as they were written.
    pub digest: String,
}

/// Limits and hooks for one copy.
pub struct CopyOptions<'a> {
    pub budget_bytes: u64,
    pub max_entries: usize,
    pub progress: &'a Progress,
    /// Called once after the first file has been written (crash tests pause here).
    pub after_first_file: Option<&'a dyn Fn()>,
}

impl<'a> CopyOptions<'a> {
    pub fn new(progress: &'a Progress) -> Self {
        Self {
            budget_bytes: COPY_BUDGET_BYTES,
            max_entries: MAX_ENTRIES,
            progress,
            after_first_file: None,
        }
    }
}

/// Copy the tree at `src` into the existing empty directory `dst`.
pub fn copy_tree(src: &Path, dst: &Path, opts: &CopyOptions<'_>) -> InstallResult<CopyReport> {
    let src_root = fs::canonicalize(src).map_err(|e| InstallError {
        code: ErrorCode::SourceUnreadable,
        message: format!("cannot read plugin source {}: {e}", src.display()),
        next: ErrorCode::SourceUnreadable.next().into(),
    })?;
    let mut state = CopyState {
        src_root,
        report: CopyReport::default(),
        entries: 0,
        planned_bytes: 0,
        files: Vec::new(),
        opts,
    };
    state.copy_dir(src, dst, Path::new(""), &mut Vec::new())?;
    let CopyState {
        mut report, files, ..
    } = state;
    let copied = AtomicU64::new(0);
    let (budget, progress) = (opts.budget_bytes, opts.progress);
    let copy = |i: usize| copy_file(&files[i], &copied, budget, progress);
    // The first file alone, so the crash tests' pause finds exactly one.
    let mut hashes = Vec::with_capacity(files.len());
    if !files.is_empty() {
        hashes.push(copy(0)?);
        if let Some(hook) = opts.after_first_file {
            hook();
        }
    }
    let rest = files.len().saturating_sub(1);
    hashes.extend(map_jobs(rest, |i| copy(i + 1))?);
    report.files = files.len();
    report.bytes = copied.into_inner();
    report.digest = digest_of_files(files.iter().map(|f| f.rel.as_slice()).zip(&hashes));
    Ok(report)
}

/// One regular file to copy: where from (a materialised link's target),
/// where to, its digest path and its normalised mode.
struct FileJob {
    src: PathBuf,
    dst: PathBuf,
    rel: Vec<u8>,
    mode: u32,
}

struct CopyState<'a, 'b> {
    src_root: PathBuf,
    report: CopyReport,
    entries: usize,
    /// Sizes of the files found so far (the budget is checked before any
    /// byte is copied, and again while copying).
    planned_bytes: u64,
    files: Vec<FileJob>,
    opts: &'a CopyOptions<'b>,
}

impl CopyState<'_, '_> {
    fn copy_dir(
        &mut self,
        src: &Path,
        dst: &Path,
        rel: &Path,
        rel_bytes: &mut Vec<u8>,
    ) -> InstallResult<()> {
        let entries = sorted_entries(src)?;
        for entry in entries {
            let name = entry.file_name();
            let path = entry.path();
            let rel_path = rel.join(&name);
            let target = dst.join(&name);
            let kind = entry
                .file_type()
                .map_err(|e| InstallError::io("stat", &path, e))?;
            if kind.is_dir() && name.as_bytes().eq_ignore_ascii_case(b".git") {
                continue;
            }
            self.count_entry()?;
            let len = rel_bytes.len();
            if !rel_bytes.is_empty() {
                rel_bytes.push(b'/');
            }
            rel_bytes.extend_from_slice(name.as_bytes());
            if kind.is_dir() {
                fs::create_dir(&target)
                    .map_err(|e| InstallError::io("create directory", &target, e))?;
                set_mode(&target, 0o755)?;
                self.copy_dir(&path, &target, &rel_path, rel_bytes)?;
            } else if kind.is_file() {
                self.plan_file(path, target, rel_bytes)?;
            } else if kind.is_symlink() {
                match self.materialisable_link(&path) {
                    Ok(resolved) => self.plan_file(resolved, target, rel_bytes)?,
                    Err(why) => self
                        .report
                        .skipped
                        .push(format!("skipped symlink {}: {why}", rel_path.display())),
                }
            } else {
                return Err(InstallError::new(
                    ErrorCode::NonRegularFile,
                    format!(
                        "{} is not a regular file, directory or symlink (fifo, socket or device); plugin packages may hold only regular files",
                        rel_path.display()
                    ),
                ));
            }
            rel_bytes.truncate(len);
        }
        Ok(())
    }

    fn count_entry(&mut self) -> InstallResult<()> {
        self.entries += 1;
        if self.entries > self.opts.max_entries {
            return Err(InstallError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "plugin package holds more than {} entries",
                    self.opts.max_entries
                ),
            ));
        }
        Ok(())
    }

    /// The resolved target of an in-tree link to a regular file, or why not.
    fn materialisable_link(&self, link: &Path) -> Result<PathBuf, &'static str> {
        let resolved = fs::canonicalize(link).map_err(|_| "broken link")?;
        if !resolved.starts_with(&self.src_root) {
            return Err("points outside the package");
        }
        let meta = fs::metadata(&resolved).map_err(|_| "broken link")?;
        if !meta.is_file() {
            return Err("does not point at a regular file");
        }
        Ok(resolved)
    }

    fn plan_file(&mut self, src: PathBuf, dst: PathBuf, rel: &[u8]) -> InstallResult<()> {
        let meta = fs::metadata(&src).map_err(|e| InstallError::io("stat", &src, e))?;
        let budget = self.opts.budget_bytes;
        self.planned_bytes = self.planned_bytes.saturating_add(meta.len());
        if self.planned_bytes > budget {
            return Err(over_budget(budget));
        }
        let mode = if meta.permissions().mode() & 0o111 != 0 {
            0o755
        } else {
            0o644
        };
        self.files.push(FileJob {
            src,
            dst,
            rel: rel.to_vec(),
            mode,
        });
        Ok(())
    }
}

/// Read, hash and write one file in one pass; returns its SHA-256.
fn copy_file(
    job: &FileJob,
    copied: &AtomicU64,
    budget: u64,
    progress: &Progress,
) -> InstallResult<[u8; 32]> {
    let mut input = fs::File::open(&job.src).map_err(|e| InstallError::io("read", &job.src, e))?;
    let mut output = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(job.mode)
        .open(&job.dst)
        .map_err(|e| InstallError::io("create", &job.dst, e))?;
    // The umask may have cleared bits; the normalised mode is the contract.
    output
        .set_permissions(fs::Permissions::from_mode(job.mode))
        .map_err(|e| InstallError::io("chmod", &job.dst, e))?;
    let mut hasher = Sha256::new();
    let mut buf = [0u8; 32 * 1024];
    loop {
        let n = input
            .read(&mut buf)
            .map_err(|e| InstallError::io("read", &job.src, e))?;
        if n == 0 {
            break;
        }
        // A file that grew since the walk still cannot pass the budget.
        if copied.fetch_add(n as u64, Ordering::Relaxed) + n as u64 > budget {
            return Err(over_budget(budget));
        }
        hasher.update(&buf[..n]);
        output
            .write_all(&buf[..n])
            .map_err(|e| InstallError::io("write", &job.dst, e))?;
        progress.advance(n as u64);
    }
    Ok(hasher.finalize().into())
}

fn over_budget(budget: u64) -> InstallError {
    InstallError::new(
        ErrorCode::LimitExceeded,
        format!(
            "plugin package exceeds the {} MiB copy budget",
            budget >> 20
        ),
    )
}

fn set_mode(path: &Path, mode: u32) -> InstallResult<()> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| InstallError::io("chmod", path, e))
}

/// Total size in bytes of the regular files under `root` (for progress bars).
pub fn estimate_bytes(root: &Path) -> u64 {
    fn go(dir: &Path, total: &mut u64, seen: &mut usize) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for entry in rd.flatten() {
            *seen += 1;
            if *seen > MAX_ENTRIES {
                return;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                go(&entry.path(), total, seen);
            } else if kind.is_file()
                && let Ok(m) = entry.metadata()
            {
                *total += m.len();
            }
        }
    }
    let mut total = 0;
    go(root, &mut total, &mut 0);
    total
}

/// Make everything under `root` durable: one `syncfs` of its filesystem
/// (one journal commit, where an fsync per file costs one each); where the
/// system refuses it, every file then every directory is fsynced.
pub fn sync_tree(root: &Path) -> InstallResult<()> {
    #[cfg(target_os = "linux")]
    {
        let dir = fs::File::open(root).map_err(|e| InstallError::io("open", root, e))?;
        if rustix::fs::syncfs(&dir).is_ok() {
            return Ok(());
        }
    }
    let mut dirs = vec![root.to_path_buf()];
    let mut i = 0;
    while i < dirs.len() {
        let dir = dirs[i].clone();
        i += 1;
        let rd = fs::read_dir(&dir).map_err(|e| InstallError::io("read directory", &dir, e))?;
        for entry in rd {
            let entry = entry.map_err(|e| InstallError::io("read directory", &dir, e))?;
            let kind = entry
                .file_type()
                .map_err(|e| InstallError::io("stat", &entry.path(), e))?;
            if kind.is_dir() {
                dirs.push(entry.path());
            } else if kind.is_file() {
                let path = entry.path();
                let f = fs::File::open(&path).map_err(|e| InstallError::io("open", &path, e))?;
                f.sync_all()
                    .map_err(|e| InstallError::io("fsync", &path, e))?;
            }
        }
    }
    for dir in dirs.iter().rev() {
        sync_dir(dir);
    }
    Ok(())
}

/// fsync a directory entry table; unsupported platforms just skip it.
pub fn sync_dir(dir: &Path) {
    if let Ok(f) = fs::File::open(dir) {
        let _ = f.sync_all();
    }
}
