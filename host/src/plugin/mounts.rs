//! What a plugin's grant mounts under the latest snapshot's root, resolved
//! once per snapshot ([`Grant::folders`]: whether the root is a place many
//! things share, and where each folder named under it is), not on the way
//! of every call: a call of a plugin with a folder named under the root
//! (`{root}/src`, as `learn` writes them) paid about 4.5 µs for it, five
//! times the whole call, and one that mounts the root about 0.06 µs.
//!
//! A folder created or moved under the root is seen at the next snapshot
//! (LingXi sends one before every call). An instance keeps the folders it
//! opened whatever happens to their names later.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::PluginHost;
use crate::bindings::lingxi::plugin::types as wit;
use crate::policy::Grant;
use crate::policy::under_root::{RootFolderError, SharedRoot};

/// What a grant mounts under one snapshot's root (see [`Grant::folders`]).
#[derive(Debug)]
pub(super) struct Mounts {
    /// Counts resolutions: a live instance found to mount the workspace
    /// of this one is not compared again (see `PluginHost::is_live`).
    pub(super) generation: u64,
    /// The workspace: fixed by the user, else the folder under the root,
    /// else the snapshot's root. `None`: no workspace is mounted.
    pub(super) workspace: Option<PathBuf>,
    /// The grant with its folders under the root made absolute (those
    /// that could not be, left out); `None`: the grant as it is, which
    /// names no folder under the root.
    resolved: Option<Grant>,
    /// The folders under the root left out, and why.
    pub(super) left_out: Vec<RootFolderError>,
    /// The snapshot's root, if nothing is mounted from it because many
    /// things share it.
    pub(super) shared_root: Option<SharedRoot>,
}

impl Mounts {
    /// What `grant` mounts under the root of `snapshot`.
    pub(super) fn resolve(grant: &Grant, snapshot: Option<&wit::RuntimeSnapshot>) -> Mounts {
        let root = snapshot
            .and_then(|s| s.workspace.as_ref())
            .map(|w| Path::new(&w.root_path));
        let folders = grant.folders(root);
        Mounts {
            generation: 0,
            workspace: folders.workspace,
            resolved: match folders.grant {
                Cow::Borrowed(_) => None,
                Cow::Owned(resolved) => Some(resolved),
            },
            left_out: folders.left_out,
            shared_root: folders.shared_root,
        }
    }

    /// The grant as mounted: `own` (the grant these mounts were resolved
    /// from) with its folders under the root made absolute.
    pub(super) fn grant<'a>(&'a self, own: &'a Grant) -> &'a Grant {
        self.resolved.as_ref().unwrap_or(own)
    }
}

impl PluginHost {
    /// Resolves the mounts again: for the snapshot just accepted, or for
    /// an instance about to open them.
    pub(super) fn resolve_mounts(&mut self) {
        let generation = self.mounts.generation.wrapping_add(1);
        self.mounts = Mounts {
            generation,
            ..Mounts::resolve(&self.grant, self.snapshot.as_deref())
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::UnderRoot;

    /// A snapshot whose workspace root is `root`, as a host sends it.
    fn snapshot(root: &Path) -> wit::RuntimeSnapshot {
        let sent = serde_json::json!({"observedAt": 1_800_000_000, "ipcVersion": 1,
            "workspace": {"rootPath": root, "isGitRepository": false, "coreVersion": "1.1.0"}});
        crate::convert::snapshot(serde_json::from_value(sent).unwrap())
    }

    #[test]
    fn folders_under_the_root_are_resolved_under_the_snapshots_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let grant = Grant {
            in_root: UnderRoot {
                read: vec!["src".into()],
                ..UnderRoot::default()
            },
            ..Grant::default()
        };
        let none = Mounts::resolve(&grant, None);
        assert_eq!(none.workspace, None);
        assert!(none.grant(&grant).allow_read.is_empty());

        let mounts = Mounts::resolve(&grant, Some(&snapshot(&root)));
        assert_eq!(mounts.workspace, Some(root.clone()));
        assert_eq!(mounts.grant(&grant).allow_read, vec![root.join("src")]);
        assert!(mounts.left_out.is_empty() && mounts.shared_root.is_none());

        // A grant naming nothing under the root is used as it is.
        let plain = Grant::default();
        let mounts = Mounts::resolve(&plain, Some(&snapshot(&root)));
        assert!(std::ptr::eq(mounts.grant(&plain), &plain));
        assert_eq!(mounts.workspace, Some(root));
    }
}
