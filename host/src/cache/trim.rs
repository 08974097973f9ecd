//! How big the compile cache may grow, and what goes first.
//!
//! Every compile of a new component adds a `.cwasm` (tens of MB for a Python
//! or JavaScript plugin) and the functions Cranelift had not seen before, so
//! an author who edits a plugin all day would fill the disk. After a compile
//! that wrote to the cache, the folder is measured; over
//! [`MAX_COMPILE_CACHE`] bytes, the files used least recently are removed
//! until it holds three quarters of that.
//!
//! "Used" is a file's modification time, which a load from the cache renews
//! for a `.cwasm`; the functions a compile takes from `functions/` are not
//! touched one by one (a Python plugin reads ~22 000), but this process never
//! removes a file it used or wrote itself, so the functions a plugin is made
//! of stay while it is compiled. Only the cache's own files are considered
//! (`*.cwasm`, `functions/<64 hex digits>`, and temporary files an
//! interrupted write left, once they are an hour old); a link is removed as
//! a link, never followed. Removing can fail (another process has the file
//! open on Windows, or removed it first): that file is skipped.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::limits::MAX_COMPILE_CACHE;

/// A temporary file older than this is an interrupted write's.
const STALE_TEMPORARY: Duration = Duration::from_secs(3600);

/// What this process did with the cache's files: which it used or wrote
/// (never removed by its own trims) and how many bytes it wrote since its
/// last trim. A file is remembered by a 64-bit hash of its path (8 bytes
/// each, however long a host runs; a collision only keeps one more file).
#[derive(Debug, Default)]
pub(crate) struct Usage {
    used: Mutex<HashSet<u64>>,
    written: AtomicU64,
}

/// The hash [`Usage`] remembers a file by.
fn path_hash(path: &Path) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    path.hash(&mut hasher);
    hasher.finish()
}

impl Usage {
    /// `path` was read from the cache.
    pub(crate) fn used(&self, path: &Path) {
        self.used
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(path_hash(path));
    }

    /// `len` bytes were written to the cache as `path`.
    pub(crate) fn wrote(&self, path: &Path, len: u64) {
        self.used(path);
        self.written.fetch_add(len, Ordering::Relaxed);
    }

    /// Bytes written since the last call.
    pub(crate) fn take_written(&self) -> u64 {
        self.written.swap(0, Ordering::Relaxed)
    }
}

/// What one trim did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trimmed {
    /// Bytes of the cache's files before.
    pub held: u64,
    /// Files removed.
    pub files: u64,
    /// Bytes removed.
    pub bytes: u64,
}

/// One of the cache's files.
struct Kept {
    path: PathBuf,
    len: u64,
    modified: SystemTime,
}

/// Brings the cache in `dir` under `limit` bytes (to three quarters of it)
/// when it holds more, removing the files used least recently that `usage`
/// does not name. Stale temporary files go in any case.
pub(crate) fn trim(dir: &Path, usage: &Usage, limit: u64) -> Trimmed {
    let now = SystemTime::now();
    let mut files = Vec::new();
    let mut done = Trimmed::default();
    for (folder, is_entry) in [
        (dir.to_path_buf(), is_component as fn(&str) -> bool),
        (dir.join("functions"), is_function),
    ] {
        // A folder that is a link is not the cache's: never listed, so
        // nothing it points to is removed.
        let is_folder = std::fs::symlink_metadata(&folder).is_ok_and(|meta| meta.is_dir());
        let Ok(listing) = std::fs::read_dir(&folder)
            .map_err(drop)
            .and_then(|listing| if is_folder { Ok(listing) } else { Err(()) })
        else {
            continue;
        };
        for entry in listing.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            // `DirEntry::metadata` does not follow a link.
            let Ok(meta) = entry.metadata() else { continue };
            let modified = meta.modified().unwrap_or(now);
            if name.starts_with(".tmp") && meta.is_file() {
                let age = now.duration_since(modified).unwrap_or_default();
                if age > STALE_TEMPORARY && std::fs::remove_file(entry.path()).is_ok() {
                    done.files += 1;
                    done.bytes += meta.len();
                }
            } else if is_entry(name) && !meta.is_dir() {
                files.push(Kept {
                    path: entry.path(),
                    len: meta.len(),
                    modified,
                });
            }
        }
    }
    done.held = files.iter().map(|f| f.len).sum();
    if done.held <= limit {
        return done;
    }
    let goal = limit / 4 * 3;
    let used = usage
        .used
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    files.retain(|f| !used.contains(&path_hash(&f.path)));
    files.sort_by_key(|f| f.modified);
    let mut held = done.held;
    for file in files {
        if held <= goal {
            break;
        }
        if std::fs::remove_file(&file.path).is_ok() {
            held = held.saturating_sub(file.len);
            done.files += 1;
            done.bytes += file.len;
        }
    }
    done
}

/// Trims `dir` if this process wrote to it since its last trim, and says
/// what went.
pub(crate) fn trim_if_grown(dir: &Path, usage: &Usage) {
    if usage.take_written() == 0 {
        return;
    }
    let done = trim(dir, usage, MAX_COMPILE_CACHE);
    if done.files > 0 {
        tracing::debug!(
            "the compile cache {} held {} MiB, over its bound of {} MiB: removed {} MiB in {} file(s) used least recently",
            dir.display(),
            done.held >> 20,
            MAX_COMPILE_CACHE >> 20,
            done.bytes >> 20,
            done.files
        );
    }
}

/// A file whose modification time is more recent than this is not renewed
/// on load: the trims' order needs no finer clock, and a host that starts
/// the same plugin often writes nothing.
const RENEW_AFTER: Duration = Duration::from_secs(3600);

/// Renews a loaded file's modification time, the trims' "used", unless it
/// is recent already.
pub(crate) fn touch(path: &Path) {
    let recent = std::fs::metadata(path)
        .and_then(|meta| meta.modified())
        .is_ok_and(|modified| {
            SystemTime::now()
                .duration_since(modified)
                .is_ok_and(|age| age < RENEW_AFTER)
        });
    if recent {
        return;
    }
    let renewed = std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(SystemTime::now()));
    if let Err(e) = renewed {
        tracing::debug!("cannot renew {}'s time: {e}", path.display());
    }
}

/// A whole-component entry: `<hex>-<hex>.cwasm`.
fn is_component(name: &str) -> bool {
    name.strip_suffix(".cwasm").is_some_and(|stem| {
        !stem.is_empty() && stem.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
    })
}

/// A per-function entry: the SHA-256 of its key in hex.
fn is_function(name: &str) -> bool {
    name.len() == 64 && name.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests;
