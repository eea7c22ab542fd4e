//! Arbitrary bytes as a plugin package handed over as a `.zip`, through the
//! host's own unpacker (`host/src/install/archive.rs`, compiled here). It
//! must never panic, never write outside its destination, and never create
//! anything but directories and regular files; a refusal says why.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

// `archive` reaches its neighbours as `super::error` and
// `super::snapshot`: here they are at the crate root.
#[allow(dead_code)]
#[path = "../../host/src/install/error.rs"]
mod error;
/// The copy budgets (`host/src/install/snapshot.rs` needs the whole host),
/// small here so a run never expands a bomb onto the disk.
mod snapshot {
    pub const COPY_BUDGET_BYTES: u64 = 1 << 20;
    pub const MAX_ENTRIES: usize = 256;
}
#[allow(dead_code)]
#[path = "../../host/src/install/archive.rs"]
mod archive;

fn only_dirs_and_files(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            only_dirs_and_files(&path);
        } else {
            assert!(meta.is_file(), "{} is neither a file nor a directory", path.display());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("package.zip");
    std::fs::write(&zip, data).unwrap();
    let dest = dir.path().join("out");
    std::fs::create_dir(&dest).unwrap();
    match archive::unpack_zip(&zip, &dest) {
        Ok(root) => assert!(root.starts_with(&dest), "{}", root.display()),
        Err(error) => assert!(!error.message.is_empty()),
    }
    only_dirs_and_files(&dest);
    // Nothing beside the archive and its destination.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
});
