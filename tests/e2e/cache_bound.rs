//! The compile cache stays within its bound (1 GiB, `MAX_COMPILE_CACHE`):
//! a compile that writes to a full cache removes the files used least
//! recently, down to three quarters of the bound, never the ones it uses;
//! a load from the cache renews the file it loaded. The full cache is made
//! of sparse files, so the test takes no real disk.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::support::{guest, launcher};

const MIB: u64 = 1 << 20;

/// A sparse file of `len` bytes last modified `age` ago.
fn planted(path: &Path, len: u64, age: Duration) {
    let file = std::fs::File::create(path).unwrap();
    file.set_len(len).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
}

/// The `.cwasm` files in `cache` other than `except`.
fn components(cache: &Path, except: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm") && p != except)
        .collect()
}

#[test]
fn a_compile_into_a_full_cache_removes_what_was_used_least_recently() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(cache.join("functions")).unwrap();
    let day = Duration::from_secs(86_400);
    let oldest = cache.join(format!("{}-{}.cwasm", "0".repeat(64), "0".repeat(16)));
    planted(&oldest, 700 * MIB, 2 * day);
    let older = cache.join("functions").join("a".repeat(64));
    planted(&older, 400 * MIB, day);
    let not_ours = cache.join("notes.txt");
    planted(&not_ours, 900 * MIB, 3 * day);

    let testbed = guest("testbed");
    let out = launcher()
        .args(["check", testbed.to_str().unwrap(), "--cache-dir"])
        .arg(&cache)
        .env("LINGXI_WASM_LOG", "debug")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // 1 100 MiB and the testbed's files, over 1 024: the oldest goes, and
    // then the cache is under 768 MiB, so the next stays; a file that is
    // not the cache's is neither counted nor removed.
    assert!(
        stderr.contains("over its bound of 1024 MiB: removed 700 MiB in 1 file(s)"),
        "{stderr}"
    );
    assert!(!oldest.exists());
    assert!(older.exists());
    assert!(not_ours.exists());
    let kept = components(&cache, &oldest);
    assert_eq!(kept.len(), 1, "the testbed's compiled component: {kept:?}");

    // A load renews the file it loaded: make it look a week old, call.
    let week_old = SystemTime::now() - 7 * day;
    std::fs::File::options()
        .write(true)
        .open(&kept[0])
        .unwrap()
        .set_modified(week_old)
        .unwrap();
    let call = launcher()
        .args(["call", testbed.to_str().unwrap(), "ok", "{}", "--cache-dir"])
        .arg(&cache)
        .current_dir(dir.path())
        .env("LINGXI_WASM_LOG", "debug")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&call.stderr);
    assert!(call.status.success(), "{stderr}");
    assert!(stderr.contains("loaded precompiled component"), "{stderr}");
    let renewed = std::fs::metadata(&kept[0]).unwrap().modified().unwrap();
    assert!(renewed > SystemTime::now() - day, "{renewed:?}");
}
