//! A plugin package handed over as a local `.zip` (an export): only regular
//! entries are recreated, every entry must be a local relative path, at most
//! [`MAX_ENTRIES`] files and [`COPY_BUDGET_BYTES`] expanded bytes, and a single
//! shared top-level directory is stripped.
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use super::error::{ErrorCode, InstallError, InstallResult};
use super::snapshot::{COPY_BUDGET_BYTES, MAX_ENTRIES};

/// Is `path` a regular file with a `.zip` extension (any case)?
pub fn looks_like_zip(path: &Path) -> bool {
    let is_zip = path
        .extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case("zip"));
    is_zip && fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// An entry name is local when it is relative and has no `..`, root or
/// prefix component (checked on the raw name, before any join).
fn is_local_entry(name: &str) -> bool {
    if name.is_empty() || name.starts_with('/') || name.starts_with('\\') || name.contains('\0') {
        return false;
    }
    // `C:foo` or `C:\foo` style names are drive paths on Windows.
    if name.len() >= 2 && name.as_bytes()[1] == b':' && name.as_bytes()[0].is_ascii_alphabetic() {
        return false;
    }
    let normalized = name.replace('\\', "/");
    Path::new(&normalized)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Unpack `zip_path` into `dest` (an empty directory); returns the package
/// root inside `dest`.
pub fn unpack_zip(zip_path: &Path, dest: &Path) -> InstallResult<PathBuf> {
    let file = fs::File::open(zip_path).map_err(|e| unreadable(zip_path, &e.to_string()))?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| unreadable(zip_path, &e.to_string()))?;
    // The reader keeps one entry per exact name (the last), so two entries
    // of one name are only visible here.
    // (The reader cannot say which name it was.)
    if archive.has_duplicate_names() {
        return Err(duplicate(None));
    }

    // Validate every name and the counts from the central directory before
    // writing anything.
    let mut regular = Vec::new();
    let mut paths = std::collections::BTreeSet::new();
    for i in 0..archive.len() {
        let entry = archive
            .by_index_raw(i)
            .map_err(|e| unreadable(zip_path, &e.to_string()))?;
        // A name that is not UTF-8 would be installed under a guessed
        // spelling (U+FFFD for each bad byte): refuse it, naming its bytes.
        let Ok(name) = std::str::from_utf8(entry.name_raw()) else {
            return Err(InstallError::new(
                ErrorCode::UnsafePath,
                format!(
                    "zip entry \"{}\" has a name that is not UTF-8",
                    entry.name_raw().escape_ascii()
                ),
            )
            .with_next("Re-create the archive with UTF-8 file names (for example with `reasonix plugin export`)."));
        };
        let name = name.to_owned();
        if !is_local_entry(&name) {
            return Err(InstallError::new(
                ErrorCode::UnsafePath,
                format!("zip entry {name:?} escapes the extraction directory"),
            ));
        }
        // `a/b`, `./a/b` and `a\b` are one path once extracted.
        let normalized: PathBuf = Path::new(&name.replace('\\', "/"))
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        if !entry.is_dir() && !paths.insert(normalized) {
            return Err(duplicate(Some(&name)));
        }
        if entry.is_dir() || entry.is_symlink() {
            continue;
        }
        if let Some(mode) = entry.unix_mode()
            && mode & 0o170000 != 0
            && mode & 0o170000 != 0o100000
        {
            // Only regular files are recreated; a link or device from an
            // archive is a path onto this machine, not package content.
            continue;
        }
        regular.push(i);
        if regular.len() > MAX_ENTRIES {
            return Err(InstallError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "{} holds more than {MAX_ENTRIES} files",
                    zip_path.file_name().unwrap_or_default().to_string_lossy()
                ),
            ));
        }
    }
    if regular.is_empty() {
        return Err(unreadable(zip_path, "zip is empty"));
    }

    let mut total: u64 = 0;
    let mut top: Option<String> = None;
    let mut rooted = true;
    for i in regular {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| unreadable(zip_path, &e.to_string()))?;
        // Checked above: every name is UTF-8.
        let name = String::from_utf8_lossy(entry.name_raw()).replace('\\', "/");
        let rel: PathBuf = Path::new(&name)
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        let head = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        match &top {
            None => top = Some(head.clone()),
            Some(t) if *t != head => rooted = false,
            _ => {}
        }
        if rel.components().count() < 2 {
            rooted = false;
        }
        let target = dest.join(&rel);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| InstallError::io("create", parent, e))?;
        }
        let mode = match entry.unix_mode() {
            Some(m) if m & 0o111 != 0 => 0o755,
            _ => 0o644,
        };
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&target)
            .map_err(|e| InstallError::io("create", &target, e))?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(|e| unreadable(zip_path, &format!("{name}: {e}")))?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > COPY_BUDGET_BYTES {
                return Err(InstallError::new(
                    ErrorCode::LimitExceeded,
                    format!("zip expands past {COPY_BUDGET_BYTES} bytes"),
                ));
            }
            out.write_all(&buf[..n])
                .map_err(|e| InstallError::io("write", &target, e))?;
        }
    }
    match top {
        Some(t) if rooted && !t.is_empty() => Ok(dest.join(t)),
        _ => Ok(dest.to_path_buf()),
    }
}

fn duplicate(name: Option<&str>) -> InstallError {
    let what = match name {
        Some(name) => format!("zip entry {name:?} appears more than once"),
        None => "the zip holds two entries with the same name".to_string(),
    };
    InstallError::new(
        ErrorCode::UnsafePath,
        format!("{what}; which copy to install is ambiguous"),
    )
    .with_next(
        "Re-create the archive with each path once (for example with `reasonix plugin export`).",
    )
}

fn unreadable(path: &Path, why: &str) -> InstallError {
    InstallError::new(
        ErrorCode::SourceUnreadable,
        format!(
            "read {}: {why}",
            path.file_name().unwrap_or_default().to_string_lossy()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip of `files`, then every occurrence of each `(from, to)` byte
    /// string replaced (names are not covered by any checksum, so this
    /// forges archives a well-behaved writer refuses to make).
    fn forged_zip(dir: &Path, files: &[(&str, &str)], patch: &[(&[u8], &[u8])]) -> PathBuf {
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, text) in files {
            writer
                .start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            writer.write_all(text.as_bytes()).unwrap();
        }
        let mut bytes = writer.finish().unwrap().into_inner();
        for (from, to) in patch {
            assert_eq!(from.len(), to.len());
            let mut i = 0;
            while let Some(at) = bytes[i..].windows(from.len()).position(|w| w == *from) {
                bytes[i + at..i + at + from.len()].copy_from_slice(to);
                i += at + from.len();
            }
        }
        let path = dir.join("forged.zip");
        fs::write(&path, bytes).unwrap();
        path
    }

    const MANIFEST: (&str, &str) = (
        "pkg/reasonix-plugin.json",
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"pkg"}"#,
    );

    #[test]
    fn two_entries_of_one_path_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let zip = forged_zip(
            dir.path(),
            &[MANIFEST, ("pkg/a.txt", "first"), ("pkg/b.txt", "second")],
            &[(b"pkg/b.txt", b"pkg/a.txt")],
        );
        let dest = dir.path().join("out");
        fs::create_dir(&dest).unwrap();
        let err = unpack_zip(&zip, &dest).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsafePath, "{err}");
        assert!(err.message.contains("same name"), "{err}");
        assert!(!dest.join("pkg/a.txt").exists());
    }

    #[test]
    fn two_spellings_of_one_path_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let zip = forged_zip(
            dir.path(),
            &[MANIFEST, ("pkg/a.txt", "first"), ("./pkg/a.txt", "second")],
            &[],
        );
        let dest = dir.path().join("out");
        fs::create_dir(&dest).unwrap();
        let err = unpack_zip(&zip, &dest).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsafePath, "{err}");
        assert!(
            err.message
                .contains("\"./pkg/a.txt\" appears more than once"),
            "{err}"
        );
    }

    #[test]
    fn a_name_that_is_not_utf8_is_refused_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let zip = forged_zip(
            dir.path(),
            &[MANIFEST, ("pkg/caf_.txt", "menu")],
            &[(b"caf_", b"caf\xe9")],
        );
        let dest = dir.path().join("out");
        fs::create_dir(&dest).unwrap();
        let err = unpack_zip(&zip, &dest).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsafePath, "{err}");
        assert!(err.message.contains("pkg/caf\\xe9.txt"), "{err}");
        assert!(err.message.contains("not UTF-8"), "{err}");
        assert_eq!(fs::read_dir(&dest).unwrap().count(), 0);
    }

    #[test]
    fn local_entry_names() {
        for ok in ["a", "a/b.txt", "./a", "a\\b"] {
            assert!(is_local_entry(ok), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/..",
            "\\x",
            "C:/x",
            "c:x",
        ] {
            assert!(!is_local_entry(bad), "{bad}");
        }
    }
}
