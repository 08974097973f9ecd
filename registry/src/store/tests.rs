use super::Store;
use crate::{Digest, Reference};

#[test]
fn a_blob_is_kept_under_its_digest_and_checked_when_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    let bytes = b"component bytes";
    let digest = Digest::of(bytes);
    store.put_blob(&digest, bytes).unwrap();
    assert_eq!(store.blob(&digest, 1024).as_deref(), Some(&bytes[..]));
    assert_eq!(
        store.checked_blob_path(&digest, bytes.len() as u64),
        Some(store.blob_path(&digest))
    );
    // Bytes filed under another digest are refused; a changed file is
    // removed when read.
    assert!(store.put_blob(&Digest::of(b"other"), bytes).is_err());
    std::fs::write(store.blob_path(&digest), b"component bytez").unwrap();
    assert_eq!(store.blob(&digest, 1024), None);
    assert!(!store.blob_path(&digest).exists());
}

#[test]
fn a_tag_entry_serves_only_its_own_reference() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    let a = Reference::parse("oci://localhost:5000/probe:1").unwrap();
    let b = Reference::parse("oci://localhost:5000/probe:2").unwrap();
    let digest = Digest::of(b"manifest");
    store.put_tag(&a, &digest).unwrap();
    assert_eq!(store.tag(&a), Some(digest));
    assert_eq!(store.tag(&b), None);
    let latest = Reference::parse("oci://localhost:5000/probe").unwrap();
    let latest_named = Reference::parse("oci://localhost:5000/probe:latest").unwrap();
    store.put_tag(&latest, &digest).unwrap();
    assert_eq!(store.tag(&latest_named), Some(digest));
}

#[cfg(unix)]
#[test]
fn a_store_others_may_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("store");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = Store::new(&open).open().unwrap_err().to_string();
    assert!(err.contains("others may write to it"), "{err}");
    assert!(
        err.contains("--cache-dir") || err.contains("cache-dir"),
        "{err}"
    );
}

/// A file others may change, or one in a folder others may write, is not
/// read: another user could point a tag at other bytes or swap a blob.
#[cfg(unix)]
#[test]
fn a_file_or_folder_inside_the_store_others_may_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    let reference = Reference::parse("oci://localhost:5000/probe:1").unwrap();
    let bytes = b"manifest";
    let digest = Digest::of(bytes);
    store.put_blob(&digest, bytes).unwrap();
    store.put_tag(&reference, &digest).unwrap();
    store.put_referrers(&digest, &[digest]).unwrap();
    let size = bytes.len() as u64;
    let read = || {
        (
            store.tag(&reference),
            store.blob(&digest, 1024),
            store.checked_blob_path(&digest, size),
            store.referrers(&digest),
        )
    };
    assert!(matches!(read(), (Some(_), Some(_), Some(_), Some(_))));

    let tags = store.dir().join("tags");
    mode(&tags, 0o777);
    assert_eq!(store.tag(&reference), None);
    mode(&tags, 0o700);
    let blobs = store.dir().join("blobs");
    mode(&blobs, 0o775);
    assert!(matches!(read(), (Some(_), None, None, Some(_))));
    mode(&blobs, 0o700);
    let blob = store.blob_path(&digest);
    mode(&blob, 0o666);
    assert!(matches!(read(), (Some(_), None, None, Some(_))));
    // Not ours to remove: it is left where it is.
    assert!(blob.exists());
    mode(&blob, 0o600);
    let referrers = store.dir().join("referrers").join(digest.hex());
    mode(&referrers, 0o622);
    assert_eq!(store.referrers(&digest), None);
    mode(&referrers, 0o600);
    assert!(matches!(read(), (Some(_), Some(_), Some(_), Some(_))));
}

/// Who may rename what the store's parent holds could put another store
/// in its place.
#[cfg(unix)]
#[test]
fn a_store_in_a_folder_others_may_rename_in_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = Store::new(cache.join("oci"))
        .open()
        .unwrap_err()
        .to_string();
    assert!(err.contains("lets others rename what it holds"), "{err}");
    // The sticky bit keeps them from renaming what is not theirs.
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o1777)).unwrap();
    Store::new(cache.join("oci")).open().unwrap();
    // A folder reached through a link: where it leads is not judged.
    let linked = dir.path().join("linked");
    std::os::unix::fs::symlink(&cache, &linked).unwrap();
    let err = Store::new(linked.join("oci"))
        .open()
        .unwrap_err()
        .to_string();
    assert!(err.contains("is a symbolic link"), "{err}");
}

/// A link inside the store is not followed: a folder it leads to could be
/// anyone's to change.
#[cfg(unix)]
#[test]
fn a_link_inside_the_store_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    let reference = Reference::parse("oci://localhost:5000/probe:1").unwrap();
    let digest = Digest::of(b"manifest");
    store.put_tag(&reference, &digest).unwrap();
    assert_eq!(store.tag(&reference), Some(digest));
    let tags = store.dir().join("tags");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::rename(&tags, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &tags).unwrap();
    assert_eq!(store.tag(&reference), None);
}
