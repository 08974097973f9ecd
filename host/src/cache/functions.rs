//! The compile cache's per-function store: Cranelift's incremental
//! compilation cache, kept in `functions/` inside the compile cache's folder.
//!
//! A whole-component `.cwasm` helps only the exact same bytes. Plugins of one
//! language share nearly all of their code (CPython in every componentize-py
//! plugin, StarlingMonkey in every componentize-js one), and an edit changes
//! a few functions: with this store, each function is compiled once, and a
//! second plugin or an edited one reuses the rest.
//!
//! An entry is native code this process will run, so it is held to the
//! compile cache's rules ([`super::CompileCache`]): the folder must be this
//! user's and writable by nobody else, and so must each entry file (a link is
//! not followed). Each entry also carries its key, its length and a SHA-256
//! of all of it: a truncated, corrupt, renamed or oversized entry is refused
//! and the function compiled again. The store can make a compile faster,
//! never make it fail.

use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::trim::Usage;
use crate::limits::MAX_FUNCTION_ENTRY;
use crate::policy::owner::create_private_dir;

/// The first bytes of every entry: the format, version 1.
const MAGIC: &[u8; 8] = b"lxfn\x01\0\0\0";
/// Magic, key length (u32), value length (u64), digest.
const HEADER: usize = 8 + 4 + 8 + 32;
/// Longest key accepted (Cranelift's keys are 32-byte hashes).
const MAX_KEY: usize = 256;

/// Cranelift's incremental cache in a folder of this user's.
#[derive(Debug)]
pub struct FunctionCache {
    dir: PathBuf,
    counts: Counts,
    /// Set once a failed write was logged.
    warned: AtomicBool,
    /// The compile cache's record of what this process used and wrote.
    usage: Arc<Usage>,
}

/// What the store did, for logs and the bench.
#[derive(Debug, Default)]
struct Counts {
    hits: AtomicU64,
    misses: AtomicU64,
    refused: AtomicU64,
    written: AtomicU64,
}

/// How often the store answered, refused an entry, and kept one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FunctionCacheCounts {
    /// Functions whose compiled code was reused.
    pub hits: u64,
    /// Functions with no entry (compiled, then kept).
    pub misses: u64,
    /// Entries found and not used: not this user's, writable by others,
    /// a link, corrupt, or for another key.
    pub refused: u64,
    /// Entries written.
    pub written: u64,
}

impl FunctionCache {
    /// The store in `dir` (created private on first write). The caller has
    /// checked that the compile cache's folder, `dir`'s parent, is usable.
    pub(crate) fn new(dir: PathBuf, usage: Arc<Usage>) -> Self {
        FunctionCache {
            dir,
            counts: Counts::default(),
            warned: AtomicBool::new(false),
            usage,
        }
    }

    /// The counts so far.
    pub fn counts(&self) -> FunctionCacheCounts {
        let c = &self.counts;
        FunctionCacheCounts {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            refused: c.refused.load(Ordering::Relaxed),
            written: c.written.load(Ordering::Relaxed),
        }
    }

    /// The file of `key`: the SHA-256 of the key, in hex.
    fn path_for(&self, key: &[u8]) -> PathBuf {
        let digest = Sha256::digest(key);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(hex)
    }

    /// The value kept for `key`, if its entry passes every check.
    fn read(&self, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let path = self.path_for(key);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot examine it: {e}")),
        };
        if !meta.is_file() {
            return Err("it is not a file (a link is not followed)".into());
        }
        if !super::own_file(&path) {
            return Err("it is another user's, or others may write it".into());
        }
        if meta.len() > (HEADER + MAX_KEY + MAX_FUNCTION_ENTRY) as u64 {
            return Err(format!("it holds {} bytes, over the limit", meta.len()));
        }
        let bytes = std::fs::read(&path).map_err(|e| format!("cannot read it: {e}"))?;
        let value = decode(key, &bytes)?;
        self.usage.used(&path);
        Ok(Some(value))
    }
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        match self.read(key) {
            Ok(Some(value)) => {
                self.counts.hits.fetch_add(1, Ordering::Relaxed);
                Some(Cow::Owned(value))
            }
            Ok(None) => {
                self.counts.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
            Err(why) => {
                self.counts.refused.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(
                    "not using the compiled-function entry {}: {why}; compiling the function again",
                    self.path_for(key).display()
                );
                None
            }
        }
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let Some(entry) = encode(key, &value) else {
            return false;
        };
        let stored = create_private_dir(&self.dir).and_then(|()| {
            let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
            tmp.write_all(&entry)?;
            let path = self.path_for(key);
            tmp.persist(&path).map_err(|e| e.error)?;
            self.usage.wrote(&path, entry.len() as u64);
            Ok(())
        });
        match stored {
            Ok(()) => {
                self.counts.written.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(e) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    tracing::debug!("cannot write the compile cache {}: {e}", self.dir.display());
                }
                false
            }
        }
    }
}

/// The digest that binds an entry's header, key and value together.
fn digest(key: &[u8], value: &[u8]) -> [u8; 32] {
    let mut sha = Sha256::new();
    sha.update(MAGIC);
    sha.update((key.len() as u32).to_le_bytes());
    sha.update((value.len() as u64).to_le_bytes());
    sha.update(key);
    sha.update(value);
    sha.finalize().into()
}

/// An entry's bytes; `None` for a key or value over the limits.
fn encode(key: &[u8], value: &[u8]) -> Option<Vec<u8>> {
    if key.len() > MAX_KEY || value.len() > MAX_FUNCTION_ENTRY {
        return None;
    }
    let mut entry = Vec::with_capacity(HEADER + key.len() + value.len());
    entry.extend_from_slice(MAGIC);
    entry.extend_from_slice(&(key.len() as u32).to_le_bytes());
    entry.extend_from_slice(&(value.len() as u64).to_le_bytes());
    entry.extend_from_slice(&digest(key, value));
    entry.extend_from_slice(key);
    entry.extend_from_slice(value);
    Some(entry)
}

/// The value of an entry for `key`, or why the bytes are not one.
fn decode(key: &[u8], bytes: &[u8]) -> Result<Vec<u8>, String> {
    let header = bytes
        .get(..HEADER)
        .ok_or("it is shorter than an entry's header")?;
    if &header[..8] != MAGIC {
        return Err("it is not an entry of this format".into());
    }
    let key_len = u32::from_le_bytes(header[8..12].try_into().map_err(|_| "bad header")?);
    let value_len = u64::from_le_bytes(header[12..20].try_into().map_err(|_| "bad header")?);
    if key_len as usize != key.len() || value_len > MAX_FUNCTION_ENTRY as u64 {
        return Err("its header does not fit the key or the limit".into());
    }
    let body = &bytes[HEADER..];
    if body.len() as u64 != key.len() as u64 + value_len {
        return Err("its length is not the one its header says (truncated?)".into());
    }
    let (stored_key, value) = body.split_at(key.len());
    if stored_key != key {
        return Err("it is the entry of another function".into());
    }
    if header[20..HEADER] != digest(key, value) {
        return Err("its digest does not match (corrupt)".into());
    }
    Ok(value.to_vec())
}

#[cfg(test)]
mod tests;
