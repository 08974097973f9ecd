//! The precompiled-component cache: each component is compiled once per
//! engine configuration and kept as a `.cwasm` file, so a later start costs a
//! file map instead of a compile (about 0.2 ms instead of 100 ms).
//!
//! Files are named by the SHA-256 of the component and the engine's
//! compatibility hash, so a changed component or a different wasmtime build
//! never picks up a stale file. A file that fails to load is ignored and
//! replaced: the cache can only make a start faster, never make it fail.
//!
//! Loading a cache file runs native code from it, so the folder must be
//! ours: owned by the user running the launcher and writable by nobody
//! else (the owner and mode bits on Unix, the owner and ACL on Windows:
//! `crate::policy::owner`). Otherwise the cache is not used at all (components are
//! compiled in memory) and the launcher says once why.
//!
//! The folder is bounded ([`crate::limits::MAX_COMPILE_CACHE`], with the
//! per-function store): a compile that wrote to it removes the files used
//! least recently once it holds more (`trim.rs`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest, Sha256};

use crate::policy::owner::{self, Access, Owner, create_private_dir};
use crate::policy::settings::Setting;
use wasmtime::Engine;
use wasmtime::component::Component;

#[cfg(feature = "compiler")]
pub mod functions;
mod trim;
#[cfg(feature = "compiler")]
pub use functions::{FunctionCache, FunctionCacheCounts};

/// A directory of precompiled components.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
    /// Set once the reason the folder cannot be used was logged.
    warned: Arc<AtomicBool>,
    /// The files this process used and wrote, for the size bound.
    usage: Arc<trim::Usage>,
}

impl CompileCache {
    /// A cache in `dir` (created on first write, private to the user).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CompileCache {
            dir: dir.into(),
            warned: Arc::default(),
            usage: Arc::default(),
        }
    }

    /// Why the folder may not hold code this process will run, if so: it
    /// is not a directory, or is owned by another user, or others may write
    /// to it (see [`crate::policy::owner`]; where that cannot be told, it is
    /// not used). A folder that does not exist yet is fine: it is created
    /// private.
    pub fn untrusted(&self) -> Option<String> {
        folder_untrusted(&self.dir)
    }

    /// The per-function store inside the folder (see [`functions`]), if the
    /// folder may be used and so may its `functions` folder; logs why not,
    /// once.
    #[cfg(feature = "compiler")]
    pub(crate) fn function_store(&self) -> Option<Arc<FunctionCache>> {
        if !self.usable() {
            return None;
        }
        let dir = self.dir.join("functions");
        if let Some(reason) = folder_untrusted(&dir) {
            if !self.warned.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "not using the compiled functions in {}: {reason}; compiling every function instead (choose another folder with {}, or {})",
                    dir.display(),
                    Setting::CacheDir,
                    Setting::NoCache
                );
            }
            return None;
        }
        Some(Arc::new(FunctionCache::new(dir, self.usage.clone())))
    }

    /// Whether the folder may be used now; logs why not, once.
    fn usable(&self) -> bool {
        let Some(reason) = self.untrusted() else {
            return true;
        };
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "not using the compile cache {}: {reason}; compiling in memory instead (choose another folder with {}, or {})",
                self.dir.display(),
                Setting::CacheDir,
                Setting::NoCache
            );
        }
        false
    }

    /// `$LINGXI_WASM_CACHE`, else `lingxi-wasm` in the platform's cache
    /// folder ([`crate::places::cache`]: `$XDG_CACHE_HOME` or `~/.cache`,
    /// `~/Library/Caches`, `%LOCALAPPDATA%`); `None` without any of these. A
    /// relative value is ignored (as the XDG rules say): it would name a
    /// different folder in every directory the launcher is started from.
    pub fn default_dir() -> Option<PathBuf> {
        std::env::var_os("LINGXI_WASM_CACHE")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| crate::places::cache().map(|d| d.join("lingxi-wasm")))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache file for `bytes` compiled by `engine`.
    pub(crate) fn path_for(&self, engine: &Engine, bytes: &[u8]) -> PathBuf {
        let digest = Sha256::digest(bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!(
            "{hex}-{}.cwasm",
            crate::compiler::engine_hash(engine)
        ))
    }

    /// Loads the precompiled component for `bytes`, or compiles it and stores
    /// the result. Cache failures are logged and never fatal.
    pub(crate) fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> wasmtime::Result<Component> {
        if !self.usable() {
            return crate::compiler::compile(engine, bytes);
        }
        let path = self.path_for(engine, bytes);
        if own_file(&path) {
            // SAFETY: deserializing runs native code from the file. The
            // folder and the file were just checked to be this user's and
            // writable by nobody else, so only someone who already has the
            // user's rights can have put it there; wasmtime checks the header
            // and engine compatibility itself.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(component) => {
                    tracing::debug!("loaded precompiled component {}", path.display());
                    trim::touch(&path);
                    self.usage.used(&path);
                    return Ok(component);
                }
                Err(e) => tracing::debug!(
                    "ignoring unusable precompiled component {}: {e:#}",
                    path.display()
                ),
            }
        }
        let component = crate::compiler::compile(engine, bytes)?;
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

    /// Keeps `component`, compiled from `bytes` here, for the next load
    /// (unless the cache has it already or cannot be used): a `check`
    /// that compiled a plugin spares the next `call` compiling it again.
    pub(crate) fn keep(&self, engine: &Engine, bytes: &[u8], component: &Component) {
        if !self.usable() {
            return;
        }
        let path = self.path_for(engine, bytes);
        if own_file(&path) {
            // The functions the compile wrote still count.
            self.trim_if_grown();
            return;
        }
        let stored = component
            .serialize()
            .map_err(|e| std::io::Error::other(format!("{e:#}")))
            .and_then(|compiled| self.store(&path, &compiled));
        if let Err(e) = stored {
            tracing::debug!("cannot write the compile cache {}: {e}", path.display());
        }
        self.trim_if_grown();
    }

    /// Writes atomically: a temporary file in the same directory, renamed.
    fn store(&self, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
        create_private_dir(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        tmp.write_all(compiled)?;
        tmp.persist(path).map_err(|e| e.error)?;
        self.usage.wrote(path, compiled.len() as u64);
        Ok(())
    }

    /// Keeps the folder within its bound ([`crate::limits::MAX_COMPILE_CACHE`])
    /// if this process wrote to it since it last looked: the files used
    /// least recently go first, never one this process used.
    pub(crate) fn trim_if_grown(&self) {
        if self.usable() {
            trim::trim_if_grown(&self.dir, &self.usage);
        }
    }
}

/// Why `dir` may not hold code this process will run, if so: it is not a
/// directory, or is owned by another user, or others may write to it (see
/// [`crate::policy::owner`]; where that cannot be told, it is not used). A
/// folder that does not exist yet is fine: it is created private.
fn folder_untrusted(dir: &Path) -> Option<String> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("cannot examine it: {e}")),
    };
    if !meta.is_dir() {
        return Some("it is not a directory (a symbolic link is not followed)".into());
    }
    match owner::access(dir) {
        Err(e) => Some(format!("cannot tell who may write to it: {e}")),
        Ok(Access {
            owner: Owner::Other(who),
            ..
        }) => Some(format!("it is owned by {who}, not by this user")),
        Ok(Access {
            others_may_write: true,
            ..
        }) => Some(
            "others may write to it; make it private (chmod 700; on Windows, remove other users from its permissions)"
                .into(),
        ),
        Ok(_) => None,
    }
}

/// Whether `path` is a regular file (not a link) of this user that nobody
/// else may write.
fn own_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let private = owner::access(path)
        .is_ok_and(|a| !matches!(a.owner, Owner::Other(_)) && !a.others_may_write);
    if !private {
        tracing::debug!(
            "ignoring cache file {} of another user or writable by others",
            path.display()
        );
        return false;
    }
    meta.is_file()
}
