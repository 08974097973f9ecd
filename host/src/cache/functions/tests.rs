//! The store's checks: an entry is used only as it was written, for its own
//! key, from a file of this user's that nobody else may write.

use std::path::Path;

use wasmtime::CacheStore;

use super::{FunctionCache, FunctionCacheCounts, MAX_FUNCTION_ENTRY};

const KEY: &[u8] = &[7; 32];
const OTHER_KEY: &[u8] = &[9; 32];

fn store(dir: &Path) -> FunctionCache {
    FunctionCache::new(dir.join("functions"), Default::default())
}

fn entry_file(cache: &FunctionCache, key: &[u8]) -> std::path::PathBuf {
    cache.path_for(key)
}

#[test]
fn a_kept_function_comes_back_as_it_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let cache = store(dir.path());
    assert!(cache.get(KEY).is_none());
    assert!(cache.insert(KEY, b"compiled code".to_vec()));
    assert_eq!(cache.get(KEY).as_deref(), Some(&b"compiled code"[..]));
    assert_eq!(
        cache.counts(),
        FunctionCacheCounts {
            hits: 1,
            misses: 1,
            refused: 0,
            written: 1
        }
    );
}

/// Each way an entry can be damaged or misplaced, as data: what is done to
/// the file, and the entry must be refused (the function compiled again).
#[test]
fn a_damaged_or_misplaced_entry_is_refused() {
    type Damage = fn(&FunctionCache, &Path);
    let cases: &[(&str, Damage)] = &[
        ("one byte of the code changed", |_, file| {
            let mut bytes = std::fs::read(file).unwrap();
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            std::fs::write(file, bytes).unwrap();
        }),
        ("one byte of the digest changed", |_, file| {
            let mut bytes = std::fs::read(file).unwrap();
            bytes[30] ^= 1;
            std::fs::write(file, bytes).unwrap();
        }),
        ("cut short", |_, file| {
            let bytes = std::fs::read(file).unwrap();
            std::fs::write(file, &bytes[..bytes.len() - 3]).unwrap();
        }),
        ("longer than its header says", |_, file| {
            let mut bytes = std::fs::read(file).unwrap();
            bytes.extend_from_slice(b"more");
            std::fs::write(file, bytes).unwrap();
        }),
        ("not an entry at all", |_, file| {
            std::fs::write(file, b"\x7fELF").unwrap();
        }),
        ("another function's entry under this name", |cache, file| {
            assert!(cache.insert(OTHER_KEY, b"other code".to_vec()));
            std::fs::rename(entry_file(cache, OTHER_KEY), file).unwrap();
        }),
    ];
    for (what, damage) in cases {
        let dir = tempfile::tempdir().unwrap();
        let cache = store(dir.path());
        assert!(cache.insert(KEY, b"compiled code".to_vec()));
        damage(&cache, &entry_file(&cache, KEY));
        assert!(cache.get(KEY).is_none(), "{what}: used");
        assert_eq!(cache.counts().refused, 1, "{what}");
        // Compiled again and kept: the next look finds the good entry.
        assert!(cache.insert(KEY, b"compiled code".to_vec()), "{what}");
        assert_eq!(
            cache.get(KEY).as_deref(),
            Some(&b"compiled code"[..]),
            "{what}"
        );
    }
}

#[test]
fn a_function_over_the_limit_is_neither_kept_nor_read() {
    let dir = tempfile::tempdir().unwrap();
    let cache = store(dir.path());
    assert!(!cache.insert(KEY, vec![0; MAX_FUNCTION_ENTRY + 1]));
    assert!(!entry_file(&cache, KEY).exists());
    // Written by someone else, a large file is refused before it is read.
    std::fs::create_dir_all(dir.path().join("functions")).unwrap();
    let file = entry_file(&cache, KEY);
    std::fs::File::create(&file)
        .unwrap()
        .set_len(MAX_FUNCTION_ENTRY as u64 + 1024)
        .unwrap();
    assert!(cache.get(KEY).is_none());
    assert_eq!(cache.counts().refused, 1);
}

#[cfg(unix)]
#[test]
fn an_entry_others_may_write_or_a_link_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = store(dir.path());
    assert!(cache.insert(KEY, b"compiled code".to_vec()));
    let file = entry_file(&cache, KEY);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(
        cache.get(KEY).is_none(),
        "an entry others may write was used"
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(cache.get(KEY).is_some());

    // A link to a good entry elsewhere is not followed.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::rename(&file, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    assert!(cache.get(KEY).is_none(), "a link was followed");
    assert_eq!(cache.counts().refused, 2);
}

#[cfg(unix)]
#[test]
fn entries_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = store(dir.path());
    assert!(cache.insert(KEY, b"compiled code".to_vec()));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.path().join("functions")), 0o700);
    assert_eq!(mode(&entry_file(&cache, KEY)), 0o600);
}
