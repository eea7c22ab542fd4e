//! Directory listings in the order upstream walks a tree (Go's
//! `filepath.WalkDir`: each directory's entries sorted by name bytes). The
//! tree digest, the snapshot copy and the export all walk in this order, so
//! the digest of a copy matches the digest of what was exported.
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::error::{InstallError, InstallResult};

/// The entries of `dir`, sorted by name bytes; an unreadable directory or
/// entry fails with an error naming `dir`.
pub fn sorted_entries(dir: &Path) -> InstallResult<Vec<fs::DirEntry>> {
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)
        .map_err(|e| InstallError::io("read directory", dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| InstallError::io("read directory", dir, e))?;
    entries.sort_by(|a, b| a.file_name().as_bytes().cmp(b.file_name().as_bytes()));
    Ok(entries)
}
