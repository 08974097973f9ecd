//! Folders named under the workspace root (`{root}/src`) through the
//! embedding API: resolved once per snapshot for the calls, and looked up
//! again whenever an instance starts, so a folder turned into a link out of
//! the root after the snapshot is never followed.

use std::path::{Path, PathBuf};

use lingxi_wasm_host::policy::{Capability, UnderRoot};
use lingxi_wasm_host::types::RuntimeSnapshot;
use lingxi_wasm_host::{CallOptions, Grant, PluginOptions, PluginSet, Runtime, Session, convert};

use crate::support::{guest, spec_snapshot, tokio};

#[cfg(unix)]
#[test]
fn a_folder_under_the_root_made_a_link_out_after_the_snapshot_is_not_followed_by_a_restarted_instance()
 {
    tokio().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(dir.path()).unwrap();
        let (ws, outside) = (base.join("ws"), base.join("outside"));
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(ws.join("src/a.txt"), "inside").unwrap();
        std::fs::write(outside.join("a.txt"), "the secret").unwrap();
        let (_set, session) = reading_src(None).await;
        session.set_snapshot(snapshot(&ws, 1)).unwrap();
        let file = ws.join("src/a.txt").display().to_string();
        let read = || session.call_tool("read-file", &file, CallOptions::default());
        assert_eq!(read().await.unwrap(), "inside");

        // The folder is swapped for a link out of the root; no snapshot
        // comes after it.
        std::fs::rename(ws.join("src"), base.join("old-src")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("src")).unwrap();
        // The running instance keeps the folder it opened.
        assert_eq!(read().await.unwrap(), "inside");

        // A crash: the next call starts a fresh instance, which looks the
        // folder up again and leaves the link out.
        let crashed = session.call_tool("panic", "", CallOptions::default()).await;
        assert!(crashed.is_err(), "{crashed:?}");
        let after = read().await;
        assert!(
            after
                .as_ref()
                .is_err_and(|e| !e.to_string().contains("secret")),
            "the restarted instance followed the link out of the root: {after:?}"
        );
        session.close().await;
    });
}

#[test]
fn after_a_snapshot_with_another_root_the_old_roots_folders_are_out_of_reach() {
    tokio().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(dir.path()).unwrap();
        for (project, text) in [("p1", "the old project"), ("p2", "the new project")] {
            std::fs::create_dir_all(base.join(project).join("src")).unwrap();
            std::fs::write(base.join(project).join("src/a.txt"), text).unwrap();
        }
        std::fs::create_dir_all(base.join("pinned")).unwrap();
        // The workspace stays the same folder whatever the root: only the
        // folder named under the root moves with it.
        let (_set, session) = reading_src(Some(base.join("pinned"))).await;
        let file = |project: &str| base.join(project).join("src/a.txt").display().to_string();
        let (old_file, new_file) = (file("p1"), file("p2"));
        session.set_snapshot(snapshot(&base.join("p1"), 1)).unwrap();
        assert_eq!(read(&session, &old_file).await.unwrap(), "the old project");
        session.set_snapshot(snapshot(&base.join("p2"), 2)).unwrap();
        assert_eq!(read(&session, &new_file).await.unwrap(), "the new project");
        let old = read(&session, &old_file).await;
        assert!(
            old.as_ref()
                .is_err_and(|e| e.contains("outside the folders the plugin may read")),
            "the old project's folder is still mounted: {old:?}"
        );
        session.close().await;
    });
}

/// What the testbed's `read-file` of `file` answers in `session`.
async fn read(session: &Session, file: &str) -> Result<String, String> {
    let call = session.call_tool("read-file", file, CallOptions::default());
    call.await.map_err(|e| e.to_string())
}

/// The testbed granted `projectRead` with `{root}/src` named under the
/// root (and `workspace` as the workspace, if given), and a session of it.
async fn reading_src(workspace: Option<PathBuf>) -> (PluginSet, Session) {
    let grant = Grant {
        capabilities: Some(vec![Capability::ProjectRead]),
        workspace,
        in_root: UnderRoot {
            read: vec!["src".into()],
            ..UnderRoot::default()
        },
        ..Grant::default()
    };
    let mut set = PluginSet::new(Runtime::new().unwrap());
    let options = PluginOptions::grant(grant);
    set.load_file(&guest("testbed"), options).await.unwrap();
    let session = set.session("mounts", None).unwrap();
    (set, session)
}

/// The spec's snapshot with `root` as its root, observed at `at`.
fn snapshot(root: &Path, at: u32) -> RuntimeSnapshot {
    let mut sent = spec_snapshot(&root.display().to_string());
    sent["observedAt"] = at.into();
    convert::snapshot(serde_json::from_value(sent).unwrap())
}
