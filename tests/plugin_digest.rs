//! Tree and content digest vectors (§a.4), byte-compatible with upstream's
//! Go encoding: lexical WalkDir order, `{"Path","Hash"}` records, HTML
//! escaping of `<`, `>`, `&`, raw non-ASCII.
mod plugin_common;

use std::fs;
use std::path::Path;

use plugin_common::write;
use reasonix::install::digest::{DigestPart, content_digest, tree_digest};
use sha2::{Digest, Sha256};

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The vector tree: a directory `a` beside a file `a.txt` (WalkDir visits
/// `a/b` before `a.txt`, although `a.txt` < `a/b` as plain strings), an
/// empty file, and a path with `<`, `>`, `&` and non-ASCII characters.
fn vector_tree(root: &Path) {
    write(&root.join("a/b"), "A");
    write(&root.join("a.txt"), "B");
    write(&root.join("x<y>&z/é€.md"), "C");
    write(&root.join("Z"), "");
}

/// Built by hand, independently of the implementation.
fn expected_json() -> String {
    format!(
        "[{{\"Path\":\"Z\",\"Hash\":\"{}\"}},{{\"Path\":\"a/b\",\"Hash\":\"{}\"}},{{\"Path\":\"a.txt\",\"Hash\":\"{}\"}},{{\"Path\":\"x\\u003cy\\u003e\\u0026z/é€.md\",\"Hash\":\"{}\"}}]",
        sha(b""),
        sha(b"A"),
        sha(b"B"),
        sha(b"C")
    )
}

/// The value upstream's Go code (`copiedPluginDigest`) prints for the
/// vector tree, run once with Go 1.27 and pinned here.
const GO_TREE_DIGEST: &str =
    "sha256:5faa24aad4e5931676dee89dbb17f46d697c4402fb31399c10d234724399c4e2";

#[test]
fn tree_digest_matches_the_hand_built_encoding_and_upstream() {
    let dir = tempfile::tempdir().unwrap();
    vector_tree(dir.path());
    let expected = format!("sha256:{}", sha(expected_json().as_bytes()));
    assert_eq!(expected, GO_TREE_DIGEST);
    assert_eq!(tree_digest(dir.path()).unwrap(), GO_TREE_DIGEST);
}

#[test]
fn tree_digest_ignores_location_and_changes_with_any_byte_or_path() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    vector_tree(one.path());
    vector_tree(&two.path().join("nested/deeper"));
    let base = tree_digest(one.path()).unwrap();
    assert_eq!(
        tree_digest(&two.path().join("nested/deeper")).unwrap(),
        base
    );

    // One byte.
    fs::write(one.path().join("a.txt"), "b").unwrap();
    let byte = tree_digest(one.path()).unwrap();
    assert_ne!(byte, base);
    fs::write(one.path().join("a.txt"), "B").unwrap();
    assert_eq!(tree_digest(one.path()).unwrap(), base);

    // One path.
    fs::rename(one.path().join("a.txt"), one.path().join("a.TXT")).unwrap();
    let path = tree_digest(one.path()).unwrap();
    assert_ne!(path, base);
    assert_ne!(path, byte);

    // An empty directory does not count; a new empty file does.
    fs::rename(one.path().join("a.TXT"), one.path().join("a.txt")).unwrap();
    fs::create_dir(one.path().join("empty")).unwrap();
    assert_eq!(tree_digest(one.path()).unwrap(), base);
    fs::write(one.path().join("empty/f"), "").unwrap();
    assert_ne!(tree_digest(one.path()).unwrap(), base);
}

#[test]
fn a_symlink_in_a_copied_tree_is_a_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    vector_tree(dir.path());
    std::os::unix::fs::symlink("a.txt", dir.path().join("link")).unwrap();
    let err = tree_digest(dir.path()).unwrap_err();
    assert_eq!(err.code.as_str(), "install.digest_mismatch");
}

#[test]
fn content_digest_pins_parts_sorted_by_kind_then_name() {
    let source = "/src/<pkg>&é";
    let tree = GO_TREE_DIGEST;
    let parts = vec![
        DigestPart::plugin("zeta", "https://github.com/o/r", "ABCDEF0123", tree),
        DigestPart::plugin("alpha", source, "", tree),
    ];
    let expected_json = format!(
        "[{{\"kind\":\"plugin\",\"name\":\"alpha\",\"source\":\"/src/\\u003cpkg\\u003e\\u0026é\",\"content\":\"{tree}\"}},{{\"kind\":\"plugin\",\"name\":\"zeta\",\"source\":\"https://github.com/o/r\",\"commit\":\"abcdef0123\",\"content\":\"{tree}\"}}]"
    );
    let expected = format!("sha256:{}", sha(expected_json.as_bytes()));
    assert_eq!(content_digest(&parts).unwrap(), expected);
    // Go's json.Marshal of the same parts, run once and pinned.
    assert_eq!(
        expected,
        "sha256:2f3ea989d18cfe9deb8643c2715ecc57fe707ac9acbd020c77b54e42ebe3e0c4"
    );
    // Any change of content, source or commit changes it.
    let mut changed = parts.clone();
    changed[1].content = "sha256:".to_string() + &"0".repeat(64);
    assert_ne!(content_digest(&changed).unwrap(), expected);
    let mut changed = parts.clone();
    changed[0].commit = "abcdef0124".into();
    assert_ne!(content_digest(&changed).unwrap(), expected);
}
