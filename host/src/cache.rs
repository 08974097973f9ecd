//! The precompiled-component cache: each component is compiled once per
//! engine configuration and kept as a `.cwasm` file, so a later start costs a
//! file map instead of a compile (about 0.2 ms instead of 100 ms).
//!
//! Files are named by the SHA-256 of the component and the engine's
//! compatibility hash, so a changed component or a different wasmtime build
//! never picks up a stale file. A file that fails to load is ignored and
//! replaced: the cache can only make a start faster, never make it fail.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// A directory of precompiled components.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    /// A cache in `dir` (created on first write, private to the user).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CompileCache { dir: dir.into() }
    }

    /// `$LINGXI_WASM_CACHE`, else `$XDG_CACHE_HOME/lingxi-wasm`, else
    /// `~/.cache/lingxi-wasm`; `None` without any of these.
    pub fn default_dir() -> Option<PathBuf> {
        let var = |k| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        var("LINGXI_WASM_CACHE")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("lingxi-wasm")))
            .or_else(|| var("HOME").map(|h| h.join(".cache").join("lingxi-wasm")))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache file for `bytes` compiled by `engine`.
    pub fn path_for(&self, engine: &Engine, bytes: &[u8]) -> PathBuf {
        let digest = Sha256::digest(bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.dir
            .join(format!("{hex}-{}.cwasm", engine_hash(engine)))
    }

    /// Loads the precompiled component for `bytes`, or compiles it and stores
    /// the result. Cache failures are logged and never fatal.
    pub fn load_or_compile(&self, engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
        let path = self.path_for(engine, bytes);
        if path.is_file() {
            // SAFETY: deserializing runs native code from the file. The file
            // lives in the user's private cache directory (created 0700) and
            // is named by the SHA-256 of the component it was compiled from;
            // only someone who already has the user's rights can replace it.
            // wasmtime checks the header and engine compatibility itself.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(component) => {
                    tracing::debug!("loaded precompiled component {}", path.display());
                    return Ok(component);
                }
                Err(e) => tracing::debug!(
                    "ignoring unusable precompiled component {}: {e:#}",
                    path.display()
                ),
            }
        }
        let component = Component::new(engine, bytes)?;
        match component.serialize() {
            Ok(compiled) => {
                if let Err(e) = self.store(&path, &compiled) {
                    tracing::debug!("cannot write the compile cache {}: {e}", path.display());
                }
            }
            Err(e) => tracing::debug!("cannot serialize the compiled component: {e:#}"),
        }
        Ok(component)
    }

    /// Writes atomically: a temporary file in the same directory, renamed.
    fn store(&self, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
        create_private_dir(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        tmp.write_all(compiled)?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The engine's compatibility hash as 16 hex digits: precompiled code made
/// by an engine with another hash cannot be loaded by this one.
pub fn engine_hash(engine: &Engine) -> String {
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}
