//! Digests of §a.4: the tree digest of a copied snapshot, the plan-level
//! content digest, and the plan ID, each byte-compatible with upstream.
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::error::{ErrorCode, InstallError, InstallResult};
use super::gojson;
use super::listing::sorted_entries;
use super::parallel::map_jobs;
use super::snapshot::COPY_BUDGET_BYTES;

/// Is `s` a well-formed content digest (`sha256:` + 64 lowercase hex)?
pub fn is_content_digest(s: &str) -> bool {
    s.len() == 71
        && s.starts_with("sha256:")
        && s[7..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `sha256:` + lowercase hex of SHA-256(`bytes`).
pub fn sha256_prefixed(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The tree digest of a copied package: every file in lexical walk order as
/// `{"Path": <slash path>, "Hash": <hex sha256>}`, the array JSON-encoded as
/// Go does, hashed. Anything that is not a directory or a regular file
/// (symlink, fifo, socket, device) is a mismatch: a copy never holds one.
/// Files are hashed on a few threads; the order of the records is the
/// walk's.
pub fn tree_digest(root: &Path) -> InstallResult<String> {
    let mut files: Vec<(Vec<u8>, PathBuf)> = Vec::new();
    walk(root, &mut Vec::new(), &mut |rel, path| {
        files.push((rel.to_vec(), path.to_path_buf()));
        Ok(())
    })?;
    let total = AtomicU64::new(0);
    let hashes = map_jobs(files.len(), |i| hash_file(&files[i].1, &total))?;
    Ok(digest_of_files(
        files.iter().map(|(rel, _)| rel.as_slice()).zip(&hashes),
    ))
}

/// SHA-256 of one file, counting its bytes into `total` (which may not
/// pass the copy budget).
fn hash_file(path: &Path, total: &AtomicU64) -> InstallResult<[u8; 32]> {
    let mut file = fs::File::open(path).map_err(|e| InstallError::io("read", path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = [0u8; 32 * 1024];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| InstallError::io("read", path, e))?;
        if n == 0 {
            break;
        }
        if total.fetch_add(n as u64, Ordering::Relaxed) + n as u64 > COPY_BUDGET_BYTES {
            return Err(InstallError::new(
                ErrorCode::DigestMismatch,
                "copied plugin exceeds its content budget",
            ));
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().into())
}

/// The tree digest of `(slash path, sha256)` records in walk order.
pub(crate) fn digest_of_files<'a>(files: impl Iterator<Item = (&'a [u8], &'a [u8; 32])>) -> String {
    let mut records = String::from("[");
    let mut first = true;
    for (rel, hash) in files {
        if !first {
            records.push(',');
        }
        first = false;
        records.push_str("{\"Path\":");
        records.push_str(&gojson::string_from_bytes(rel));
        records.push_str(",\"Hash\":\"");
        records.push_str(&hex::encode(hash));
        records.push_str("\"}");
    }
    records.push(']');
    // Go marshals a nil slice (no files at all) as `null`.
    if first {
        records = "null".to_string();
    }
    sha256_prefixed(records.as_bytes())
}

/// Depth-first walk, entries of each directory sorted by name bytes (Go's
/// `filepath.WalkDir` order). Calls `visit(slash_relative_path, path)` for
/// every regular file.
fn walk(
    dir: &Path,
    rel: &mut Vec<u8>,
    visit: &mut dyn FnMut(&[u8], &Path) -> InstallResult<()>,
) -> InstallResult<()> {
    let entries = sorted_entries(dir)?;
    for entry in entries {
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| InstallError::io("stat", &path, e))?;
        let len = rel.len();
        if !rel.is_empty() {
            rel.push(b'/');
        }
        rel.extend_from_slice(entry.file_name().as_bytes());
        if kind.is_dir() {
            walk(&path, rel, visit)?;
        } else if kind.is_file() {
            visit(rel, &path)?;
        } else {
            return Err(InstallError::new(
                ErrorCode::DigestMismatch,
                format!(
                    "copied plugin contains a non-regular file: {}",
                    String::from_utf8_lossy(rel)
                ),
            ));
        }
        rel.truncate(len);
    }
    Ok(())
}

/// One action's contribution to the content digest.
#[derive(Debug, Clone, Serialize)]
pub struct DigestPart {
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub commit: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<Box<serde_json::value::RawValue>>,
}

impl DigestPart {
    /// The part of a copied plugin package: its source, lowercased commit and
    /// tree digest.
    pub fn plugin(name: &str, source: &str, commit: &str, tree_digest: &str) -> Self {
        Self {
            kind: "plugin".into(),
            name: name.into(),
            source: source.into(),
            commit: commit.trim().to_ascii_lowercase(),
            content: tree_digest.into(),
            entry: None,
        }
    }
}

/// The plan-level content digest: parts sorted by (kind, name), Go-encoded,
/// hashed. `None` when there is nothing to pin.
pub fn content_digest(parts: &[DigestPart]) -> Option<String> {
    if parts.is_empty() {
        return None;
    }
    let mut sorted = parts.to_vec();
    sorted.sort_by(|a, b| a.kind.cmp(&b.kind).then_with(|| a.name.cmp(&b.name)));
    Some(sha256_prefixed(gojson::marshal(&sorted).as_bytes()))
}

/// `<risk>:sha256:<first 16 bytes of SHA-256(payload) in hex>`.
pub fn plan_id(risk: &str, payload_json: &str) -> String {
    let sum = Sha256::digest(payload_json.as_bytes());
    format!("{risk}:sha256:{}", hex::encode(&sum[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_pattern() {
        let ok = format!("sha256:{}", "a".repeat(64));
        assert!(is_content_digest(&ok));
        assert!(!is_content_digest(&ok.to_uppercase()));
        assert!(!is_content_digest(&format!("sha256:{}", "A".repeat(64))));
        assert!(!is_content_digest(&format!("sha256:{}", "a".repeat(63))));
        assert!(!is_content_digest(&format!("sha512:{}", "a".repeat(64))));
    }

    #[test]
    fn content_digest_sorts_and_omits_empty_fields() {
        let a = DigestPart::plugin("b", "/src/b", "ABC", "sha256:1");
        let b = DigestPart::plugin("a", "/src/a", "", "sha256:2");
        let expected = sha256_prefixed(
            br#"[{"kind":"plugin","name":"a","source":"/src/a","content":"sha256:2"},{"kind":"plugin","name":"b","source":"/src/b","commit":"abc","content":"sha256:1"}]"#,
        );
        assert_eq!(content_digest(&[a, b]), Some(expected));
        assert_eq!(content_digest(&[]), None);
    }

    #[test]
    fn plan_id_keeps_16_bytes() {
        let id = plan_id("high", "{}");
        let hex = id.strip_prefix("high:sha256:").unwrap();
        assert_eq!(hex.len(), 32);
        assert_eq!(hex, &hex::encode(Sha256::digest(b"{}"))[..32]);
    }
}
