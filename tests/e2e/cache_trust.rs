//! The compile cache runs native code from its files, so it is used only in
//! a folder of this user that nobody else may write. A `.cwasm` planted
//! under the name the launcher would look for must never be loaded from any
//! other folder.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use lingxi_wasm_host::{CompileCache, Runtime};
use serde_json::json;

use crate::support::{Session, guest, workspace_root};

/// A cache folder with `mode` in which another plugin's compiled code sits
/// under the probe's cache name (a file of ours, mode 0600).
fn planted_cache(mode: u32) -> tempfile::TempDir {
    planted_cache_file(mode, |_| {})
}

/// The same, with `change` applied to the planted file.
fn planted_cache_file(mode: u32, change: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(workspace_root().join("target")).unwrap();
    let runtime = Runtime::new()
        .unwrap()
        .with_cache(Some(CompileCache::new(dir.path())));
    let probe = std::fs::read(guest("probe")).unwrap();
    let other = std::fs::read(guest("quickstart")).unwrap();
    let path = runtime.cache_path_for(&probe).unwrap();
    std::fs::write(&path, runtime.precompile(&other, "quickstart").unwrap()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    change(&path);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// Runs the probe with `--cache-dir dir` and returns the id it answers with
/// and the launcher's stderr.
pub(crate) fn probe_id_through(dir: &Path) -> (String, String) {
    let mut s = Session::start(&guest("probe"), &["--cache-dir", dir.to_str().unwrap()]);
    let r = s.call("init", "plugin.initialize", json!({"hostIPCVersion": 1}));
    let id = r["result"]["manifest"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (_, stderr) = s.finish();
    (id, stderr)
}

#[test]
fn a_cache_folder_others_may_write_is_not_read() {
    let dir = planted_cache(0o777);
    let (id, stderr) = probe_id_through(dir.path());
    assert_eq!(
        id, "com.lingxi.test-probe",
        "the planted code ran:\n{stderr}"
    );
    assert!(
        stderr.contains("not using the compile cache")
            && stderr.contains("others may write to it; make it private (chmod 700"),
        "{stderr}"
    );
    // The control: in a private folder of ours the same file is loaded
    // (only someone with our rights can put it there), which is what the
    // check above keeps an attacker from doing.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let (id, _) = probe_id_through(dir.path());
    assert_eq!(id, "com.example.my-plugin");
}

/// Whether this run may give files away (root may; another user may not).
fn may_chown() -> bool {
    let probe = tempfile::NamedTempFile::new_in(workspace_root().join("target")).unwrap();
    std::os::unix::fs::chown(probe.path(), Some(65534), None).is_ok()
}

/// A folder of this machine owned by a user that is neither this one nor
/// root (`/var/cache/man` on Debian; a service's folder elsewhere).
fn foreign_folder() -> Option<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    // This process's user: the owner of a file it makes.
    let me = tempfile::tempfile().ok()?.metadata().ok()?.uid();
    let mut folders = vec![(std::path::PathBuf::from("/var"), 0), ("/home".into(), 0)];
    while let Some((dir, depth)) = folders.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if !meta.is_dir() {
                continue;
            }
            if ![me, 0].contains(&meta.uid()) {
                return Some((entry.path(), meta.uid()));
            }
            if depth < 2 {
                folders.push((entry.path(), depth + 1));
            }
        }
    }
    None
}

#[test]
fn a_cache_folder_of_another_user_is_not_read() {
    if !may_chown() {
        // Unprivileged, nothing can be planted in another user's folder,
        // but its owner alone must keep the launcher from using it.
        let (folder, uid) = foreign_folder().expect(
            "no folder of another user found under /var or /home to try the cache's owner check on: run the tests as root (CI does)",
        );
        let (id, stderr) = probe_id_through(&folder);
        assert_eq!(id, "com.lingxi.test-probe", "{stderr}");
        assert!(
            stderr.contains(&format!("it is owned by user {uid}, not by this user")),
            "{}: {stderr}",
            folder.display()
        );
        return;
    }
    let dir = planted_cache(0o700);
    std::os::unix::fs::chown(dir.path(), Some(65534), None).unwrap();
    let (id, stderr) = probe_id_through(dir.path());
    assert_eq!(
        id, "com.lingxi.test-probe",
        "the planted code ran:\n{stderr}"
    );
    assert!(stderr.contains("it is owned by user 65534"), "{stderr}");
}

#[test]
fn a_cache_file_others_may_write_is_not_loaded_from_a_private_folder() {
    let dir = planted_cache_file(0o700, |file| {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o666)).unwrap();
    });
    let (id, stderr) = probe_id_through(dir.path());
    assert_eq!(
        id, "com.lingxi.test-probe",
        "the planted code ran:\n{stderr}"
    );
}

#[test]
fn a_cache_file_of_another_user_is_not_loaded_from_a_private_folder() {
    // A file of another user in a folder of ours: only root can make one.
    // Not passed in silence: run the tests as root (CI does), or leave
    // this one out by name.
    assert!(
        may_chown(),
        "this test plants a file of another user, which needs root: run it as root, or skip it with `cargo test -- --skip a_cache_file_of_another_user`"
    );
    let dir = planted_cache_file(0o700, |file| {
        std::os::unix::fs::chown(file, Some(65534), None).unwrap();
    });
    let (id, stderr) = probe_id_through(dir.path());
    assert_eq!(
        id, "com.lingxi.test-probe",
        "the planted code ran:\n{stderr}"
    );
}
