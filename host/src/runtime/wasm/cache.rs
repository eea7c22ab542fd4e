//! Compiled components cached on disk under `$REASONIX_HOME/cache/wasm/`.
//!
//! An entry is named after the component's SHA-256 and the engine's
//! precompile-compatibility hash, and starts with a header recording both
//! plus the SHA-256 of the compiled artifact that follows. Loading an entry
//! checks all three before the artifact is handed to wasmtime; anything that
//! does not match (truncated, corrupt, written by another engine or for
//! another component) is ignored and rebuilt, never trusted.

use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;

use super::engine::WasmEngine;
use super::error::WasmError;

const MAGIC: &[u8; 8] = b"RXCWASM1";
const HEADER_LEN: usize = MAGIC.len() + 32 * 3;

/// How the compiled component was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a verified cache entry.
    Hit,
    /// Compiled; no entry existed (or no cache is configured).
    Compiled,
    /// Compiled because the entry was unusable (the text says why); the
    /// entry was replaced.
    Rebuilt(String),
}

/// The cache directory of one Reasonix home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentCache {
    dir: PathBuf,
}

impl ComponentCache {
    /// `$REASONIX_HOME/cache/wasm/`.
    pub fn in_home(reasonix_home: &Path) -> ComponentCache {
        ComponentCache {
            dir: reasonix_home.join("cache").join("wasm"),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry for a component with this digest under this engine.
    pub fn entry_path(&self, engine: &WasmEngine, component_sha256: &[u8; 32]) -> PathBuf {
        self.dir.join(format!(
            "{}-{}.cwasm",
            hex::encode(component_sha256),
            &hex::encode(compatibility_digest(engine))[..16]
        ))
    }
}

/// SHA-256 of the engine's precompile-compatibility hash (wasmtime version,
/// target, compiler settings): stable across processes, unlike
/// `DefaultHasher` output.
pub fn compatibility_digest(engine: &WasmEngine) -> [u8; 32] {
    struct Sha(Sha256);
    impl Hasher for Sha {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }
    }
    let mut hasher = Sha(Sha256::new());
    engine
        .engine()
        .precompile_compatibility_hash()
        .hash(&mut hasher);
    hasher.0.finalize().into()
}

/// Compile the component at `component_path` into the cache of the home
/// at `reasonix_home`, so that no session start compiles it (run at install
/// and by `dev reload`'s starts). A present entry is verified and kept.
pub fn precompile(reasonix_home: &Path, component_path: &Path) -> Result<CacheOutcome, WasmError> {
    let engine = WasmEngine::shared()?;
    let bytes = std::fs::read(component_path).map_err(|e| {
        WasmError::load(format!(
            "cannot read the component {}: {e}",
            component_path.display()
        ))
    })?;
    let cache = ComponentCache::in_home(reasonix_home);
    load_component(engine, &bytes, Some(&cache)).map(|(_, outcome)| outcome)
}

/// Compile `bytes` (a component binary), through the cache when given.
pub fn load_component(
    engine: &WasmEngine,
    bytes: &[u8],
    cache: Option<&ComponentCache>,
) -> Result<(Component, CacheOutcome), WasmError> {
    let Some(cache) = cache else {
        return Ok((compile(engine, bytes)?, CacheOutcome::Compiled));
    };
    let digest: [u8; 32] = Sha256::digest(bytes).into();
    let path = cache.entry_path(engine, &digest);
    let outcome = match std::fs::read(&path) {
        Ok(entry) => match verified_artifact(engine, &entry, &digest) {
            Ok(artifact) => match deserialize(engine, artifact) {
                Ok(component) => return Ok((component, CacheOutcome::Hit)),
                Err(why) => CacheOutcome::Rebuilt(why),
            },
            Err(why) => CacheOutcome::Rebuilt(why),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => CacheOutcome::Compiled,
        Err(e) => CacheOutcome::Rebuilt(format!("unreadable entry: {e}")),
    };
    let component = compile(engine, bytes)?;
    if let Err(e) = store_entry(engine, cache, &path, &digest, &component) {
        // A cache that cannot be written only costs the next start a compile.
        tracing::warn!(target: "reasonix::wasm", path = %path.display(), "cannot write the component cache: {e}");
    }
    Ok((component, outcome))
}

fn compile(engine: &WasmEngine, bytes: &[u8]) -> Result<Component, WasmError> {
    Component::from_binary(engine.engine(), bytes)
        .map_err(|e| WasmError::load(format!("not a valid component: {e:#}")))
}

/// The artifact inside `entry` if its header matches this component, this
/// engine and the artifact's own digest.
fn verified_artifact<'a>(
    engine: &WasmEngine,
    entry: &'a [u8],
    component_sha256: &[u8; 32],
) -> Result<&'a [u8], String> {
    if entry.len() < HEADER_LEN || &entry[..MAGIC.len()] != MAGIC {
        return Err("not a cache entry (bad header)".into());
    }
    let (header, artifact) = entry.split_at(HEADER_LEN);
    let field = |i: usize| &header[MAGIC.len() + 32 * i..MAGIC.len() + 32 * (i + 1)];
    if field(0) != component_sha256 {
        return Err("entry was written for another component".into());
    }
    if field(1) != compatibility_digest(engine) {
        return Err("entry was written by an incompatible engine".into());
    }
    let artifact_digest: [u8; 32] = Sha256::digest(artifact).into();
    if field(2) != artifact_digest {
        return Err("artifact digest mismatch (corrupt entry)".into());
    }
    Ok(artifact)
}

/// The one `unsafe` of the runtime: wasmtime cannot validate native code,
/// so deserialising is only sound for bytes it produced itself.
#[allow(unsafe_code)]
fn deserialize(engine: &WasmEngine, artifact: &[u8]) -> Result<Component, String> {
    // SAFETY: `artifact` is byte-for-byte what `Component::serialize`
    // returned for this engine configuration: its SHA-256 and the engine's
    // compatibility digest were recorded when the entry was written and
    // `verified_artifact` has just checked both.
    unsafe { Component::deserialize(engine.engine(), artifact) }
        .map_err(|e| format!("wasmtime refused the entry: {e}"))
}

/// Write the entry atomically (temp file in the same directory, then
/// rename), so a crash never leaves a half-written entry under its name.
fn store_entry(
    engine: &WasmEngine,
    cache: &ComponentCache,
    path: &Path,
    component_sha256: &[u8; 32],
    component: &Component,
) -> Result<(), String> {
    let artifact = component
        .serialize()
        .map_err(|e| format!("cannot serialise: {e}"))?;
    let artifact_digest: [u8; 32] = Sha256::digest(&artifact).into();
    std::fs::create_dir_all(&cache.dir).map_err(|e| e.to_string())?;
    let mut file = tempfile::NamedTempFile::new_in(&cache.dir).map_err(|e| e.to_string())?;
    file.write_all(MAGIC)
        .and_then(|()| file.write_all(component_sha256))
        .and_then(|()| file.write_all(&compatibility_digest(engine)))
        .and_then(|()| file.write_all(&artifact_digest))
        .and_then(|()| file.write_all(&artifact))
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| e.to_string())?;
    file.persist(path).map_err(|e| e.error.to_string())?;
    Ok(())
}
