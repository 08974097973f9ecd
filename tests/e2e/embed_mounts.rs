//! Folders named under the workspace root (`{root}/src`) through the
//! embedding API: resolved once per snapshot for the calls, and looked up
//! again whenever an instance starts, so a folder turned into a link out of
//! the root after the snapshot is never followed.

use lingxi_wasm_host::policy::{Capability, UnderRoot};
use lingxi_wasm_host::{CallOptions, Grant, PluginOptions, PluginSet, Runtime, convert};

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
        let grant = Grant {
            capabilities: Some(vec![Capability::ProjectRead]),
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
        let sent = spec_snapshot(&ws.display().to_string());
        let snapshot = convert::snapshot(serde_json::from_value(sent).unwrap());
        session.set_snapshot(snapshot).unwrap();
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
