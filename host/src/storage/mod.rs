//! Per-plugin persistent storage: a private directory
//! `<data root>/<plugin id>/` (LingXi's root is `~/.lingxiagent/plugin-data`),
//! mounted read-write at `DATA_GUEST_PATH` and kept across restarts and
//! upgrades. The quota is checked after every call that may have written
//! (`linker/writes.rs` says how that is known): a call that leaves the
//! directory over its quota fails, and from then on the directory is mounted
//! read-only until it is under the quota again. So a plugin can overshoot by
//! at most what one call writes within its deadline.

use std::io;
use std::path::{Path, PathBuf};

use lingxi_wasm_policy::storage::is_safe_id;

/// One plugin's data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    path: PathBuf,
    quota: u64,
}

impl DataDir {
    /// Opens (creating, private to the user) `<root>/<plugin id>/`. Ids that
    /// are not safe file names are refused.
    pub fn open(root: &Path, plugin_id: &str, quota: u64) -> io::Result<DataDir> {
        if !is_safe_id(plugin_id) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "plugin id {plugin_id:?} is not a safe directory name (1-64 of a-z 0-9 . -, alphanumeric ends, no .. or --)"
                ),
            ));
        }
        let path = root.join(plugin_id);
        create_private(&path)?;
        Ok(DataDir { path, quota })
    }

    /// Opens (creating, private to the user) the directory `path` itself:
    /// one a host chose for the plugin (`PLUGIN_DATA`). It must be absolute
    /// and, if it exists, a directory (links are resolved).
    pub fn at(path: &Path, quota: u64) -> io::Result<DataDir> {
        if !path.is_absolute() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not an absolute path", path.display()),
            ));
        }
        create_private(path)?;
        let path = dunce::canonicalize(path)?;
        if path.parent().is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "/ cannot be a plugin's data directory",
            ));
        }
        Ok(DataDir { path, quota })
    }

    /// The directory on the host.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The quota in bytes.
    pub fn quota(&self) -> u64 {
        self.quota
    }

    /// Bytes used: the sizes of all files below the directory (links are not
    /// followed; each entry costs at least one 4 KiB block, so a flood of
    /// empty files counts too). The walk stops as soon as the total passes
    /// the quota, so it visits at most quota / 4 KiB entries however many the
    /// directory holds: past the quota, the answer is a lower bound.
    /// Entries that vanish during the walk (renamed or removed by another
    /// instance of the plugin: a set's sessions share the directory) take
    /// no space and are skipped.
    pub fn usage(&self) -> io::Result<u64> {
        fn walk(dir: &Path, total: &mut u64, stop: u64) -> io::Result<()> {
            for entry in std::fs::read_dir(dir)? {
                if *total > stop {
                    return Ok(());
                }
                let entry = entry?;
                let meta = match entry.path().symlink_metadata() {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    meta => meta?,
                };
                *total = total.saturating_add(meta.len().max(4096));
                if meta.is_dir() {
                    match walk(&entry.path(), total, stop) {
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        walked => walked?,
                    }
                }
            }
            Ok(())
        }
        let mut total = 0;
        walk(&self.path, &mut total, self.quota)?;
        Ok(total)
    }

    /// Whether the directory is within its quota (an unreadable one is not).
    pub fn within_quota(&self) -> bool {
        self.usage().is_ok_and(|used| used <= self.quota)
    }
}

/// Creates `path` and its missing parents, private to the user.
fn create_private(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_counts_files_and_quota_is_checked() {
        let root = tempfile::tempdir().unwrap();
        let dir = DataDir::open(root.path(), "com.example.p", 10_000).unwrap();
        assert!(dir.path().ends_with("com.example.p"));
        assert!(dir.within_quota());
        std::fs::write(dir.path().join("a"), vec![0u8; 8000]).unwrap();
        assert!(dir.within_quota());
        std::fs::write(dir.path().join("b"), vec![0u8; 8000]).unwrap();
        assert!(!dir.within_quota());
        // Past the quota the walk stops early: many more entries are not read.
        for i in 0..100 {
            std::fs::write(dir.path().join(format!("f{i}")), b"").unwrap();
        }
        assert!(dir.usage().unwrap() < 10_000 + 3 * 8192);
        assert!(DataDir::open(root.path(), "../evil", 1).is_err());
    }

    /// A set's sessions each have an instance of the plugin, all writing
    /// to its one data directory: an entry another instance renames or
    /// removes while the walk runs must not fail the walk (a failed walk
    /// reads as "over quota" and fails a call that only stored a key).
    #[test]
    fn usage_survives_entries_vanishing_during_the_walk() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let root = tempfile::tempdir().unwrap();
        let dir = DataDir::open(root.path(), "com.example.p", 1 << 30).unwrap();
        let kv = dir.path().join("kv");
        std::fs::create_dir_all(&kv).unwrap();
        for i in 0..1000 {
            std::fs::write(kv.join(format!("k{i}")), b"value").unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let writer = std::thread::spawn({
            let (stop, kv, sub) = (stop.clone(), kv.clone(), dir.path().join("sub"));
            move || {
                for i in 0u64.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // Names that vanish between the listing and their stat,
                    // as a key's temporary file does when the SDK stores it.
                    let (key, moved) = (kv.join(format!("k{}", i % 1000)), kv.join("moved"));
                    std::fs::rename(&key, &moved).unwrap();
                    std::fs::rename(&moved, &key).unwrap();
                    // And a folder that comes and goes.
                    if i % 64 == 0 {
                        let _ = std::fs::create_dir(&sub);
                        let _ = std::fs::remove_dir(&sub);
                    }
                }
            }
        });
        let failed = (0..200).filter(|_| dir.usage().is_err()).count();
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        assert_eq!(
            failed, 0,
            "walks failed while another writer renamed entries"
        );
    }
}
