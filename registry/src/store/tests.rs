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
