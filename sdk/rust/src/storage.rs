//! Persistent per-plugin storage (Swift: `PluginStorage`): a key-value store
//! in the plugin's private data directory, which the host keeps across
//! restarts and upgrades and bounds with a size quota.
//!
//! Values live in files under `<data dir>/kv/`, one per key. Keys are
//! encoded into safe file names (every byte but `A-Z a-z 0-9 _ -` becomes
//! `%XX`), so no key can name a path outside that folder. Writes are atomic
//! (a temporary file, renamed). For raw files (say a SQLite database) use
//! [`Storage::dir`].

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::sys;

/// Longest key, in bytes (its encoded file name stays under 255 bytes).
pub const MAX_KEY_BYTES: usize = 80;

/// Why a storage operation failed.
#[derive(Debug)]
pub enum StorageError {
    /// The host gives this plugin no data directory.
    Unavailable,
    /// The key is empty or too long.
    InvalidKey(String),
    /// The file operation failed (for example: over quota, so read-only).
    Io {
        /// What was being done, e.g. `set 'counter'`.
        operation: String,
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::Unavailable => f.write_str(
                "plugin storage unavailable: the host gives this plugin no data directory",
            ),
            StorageError::InvalidKey(key) => write!(
                f,
                "invalid storage key {key:?}: use 1 to {MAX_KEY_BYTES} bytes"
            ),
            StorageError::Io { operation, source } => write!(f, "storage {operation}: {source}"),
        }
    }
}

impl std::error::Error for StorageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StorageError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Handle to the plugin's storage; reached through the contexts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Storage {
    _private: (),
}

impl Storage {
    pub(crate) fn new() -> Self {
        Storage { _private: () }
    }

    /// The plugin's data directory, for raw files.
    pub fn dir(&self) -> Result<PathBuf, StorageError> {
        sys::data_dir()
            .map(PathBuf::from)
            .ok_or(StorageError::Unavailable)
    }

    fn kv_dir(&self) -> Result<PathBuf, StorageError> {
        Ok(self.dir()?.join("kv"))
    }

    fn path(&self, key: &str) -> Result<PathBuf, StorageError> {
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(StorageError::InvalidKey(key.to_owned()));
        }
        Ok(self.kv_dir()?.join(encode_key(key)))
    }

    /// The value stored under `key`, if any.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        match std::fs::read(self.path(key)?) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(io_error("get", key, source)),
        }
    }

    /// The value stored under `key` as text (invalid UTF-8 is replaced).
    pub fn get_string(&self, key: &str) -> Result<Option<String>, StorageError> {
        Ok(self
            .get(key)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// Stores `value` under `key`, replacing what was there.
    pub fn set(&self, key: &str, value: impl AsRef<[u8]>) -> Result<(), StorageError> {
        let path = self.path(key)?;
        let dir = self.kv_dir()?;
        std::fs::create_dir_all(&dir).map_err(|e| io_error("set", key, e))?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, value.as_ref()).map_err(|e| io_error("set", key, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io_error("set", key, e)
        })
    }

    /// Removes `key`; returns whether it existed.
    pub fn remove(&self, key: &str) -> Result<bool, StorageError> {
        match std::fs::remove_file(self.path(key)?) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(io_error("remove", key, source)),
        }
    }

    /// Every stored key, sorted.
    pub fn keys(&self) -> Result<Vec<String>, StorageError> {
        let entries = match std::fs::read_dir(self.kv_dir()?) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(io_error("keys", "", source)),
        };
        let mut keys: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| decode_key(&e.file_name().to_string_lossy()))
            .collect();
        keys.sort();
        Ok(keys)
    }
}

fn io_error(op: &str, key: &str, source: io::Error) -> StorageError {
    StorageError::Io {
        operation: format!("{op} '{key}'"),
        source,
    }
}

/// Encodes a key into a file name of `[A-Za-z0-9_%-]` only.
fn encode_key(key: &str) -> String {
    let mut name = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            name.push(char::from(b));
        } else {
            name.push_str(&format!("%{b:02X}"));
        }
    }
    name
}

/// The key of a file name made by [`encode_key`]; `None` for other files.
fn decode_key(name: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(name.len());
    let mut rest = name.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            bytes.push(b);
            rest = tail;
        } else {
            return None;
        }
    }
    String::from_utf8(bytes).ok().filter(|k| !k.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_encode_to_safe_names_and_back() {
        for key in [
            "counter",
            "../../etc/passwd",
            ".",
            "..",
            "a/b\\c",
            "ключ",
            "%41",
            "a b",
        ] {
            let name = encode_key(key);
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_%-".contains(&b)),
                "{name}"
            );
            assert_eq!(decode_key(&name).as_deref(), Some(key));
        }
        assert_eq!(decode_key("x.tmp"), None);
        assert_eq!(decode_key("%zz"), None);
    }

    #[test]
    fn without_a_host_storage_is_unavailable() {
        let err = Storage::new().get("k").unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin storage unavailable: the host gives this plugin no data directory"
        );
    }
}
