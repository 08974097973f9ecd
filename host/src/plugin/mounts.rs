//! What a plugin's grant mounts under the latest snapshot's root, resolved
//! once per snapshot ([`Grant::folders`]: whether the root is a place many
//! things share, and where each folder named under it is), not on the way
//! of every call: a call of a plugin with a folder named under the root
//! (`{root}/src`, as `learn` writes them) paid about 4.5 µs for it, five
//! times the whole call, and one that mounts the root about 0.06 µs.
//!
//! A folder created or moved under the root is seen at the next snapshot
//! (LingXi sends one before every call), or when an instance starts: the
//! folders are looked up again right before an instance opens them, so a
//! folder made a link out of the root since the snapshot (by the plugin,
//! before crashing itself) is left out. An instance whose folders are not
//! those of the latest snapshot (another root, or a folder under it that
//! leads elsewhere now) is replaced; one keeps the folders it opened
//! whatever happens to their names later.

use std::borrow::Cow;
use std::collections::BTreeMap;
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
    /// names no folder under the root (most grants: boxed, so a session's
    /// host of such a plugin stays small).
    resolved: Option<Box<Grant>>,
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
                Cow::Owned(resolved) => Some(Box::new(resolved)),
            },
            left_out: folders.left_out,
            shared_root: folders.shared_root,
        }
    }

    /// The grant as mounted: `own` (the grant these mounts were resolved
    /// from) with its folders under the root made absolute.
    pub(super) fn grant<'a>(&'a self, own: &'a Grant) -> &'a Grant {
        self.resolved.as_deref().unwrap_or(own)
    }

    /// The folders named under the root, as an instance opens them
    /// (`None`: the grant names none).
    pub(super) fn under_root(&self) -> Option<Box<UnderRootMounts>> {
        let grant = self.resolved.as_ref()?;
        Some(Box::new(UnderRootMounts {
            read: grant.allow_read.clone(),
            write: grant.allow_write.clone(),
            found_at: grant.mounted_from.clone(),
        }))
    }

    /// Whether an instance that opened `opened` mounts these folders
    /// named under the root: after the root changed, or a folder under it,
    /// one that did not is replaced (the old project's folders stay
    /// nowhere in reach).
    pub(super) fn opens(&self, opened: Option<&UnderRootMounts>) -> bool {
        match (&self.resolved, opened) {
            (Some(grant), Some(opened)) => {
                grant.allow_read == opened.read
                    && grant.allow_write == opened.write
                    && grant.mounted_from == opened.found_at
            }
            (None, None) => true,
            _ => false,
        }
    }
}

/// The folders named under the root an instance opened: made absolute
/// against the root of its snapshot, and where each was found.
#[derive(Debug)]
pub(super) struct UnderRootMounts {
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    found_at: BTreeMap<PathBuf, PathBuf>,
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
        let opened = mounts.under_root();
        assert!(mounts.opens(opened.as_deref()) && !none.opens(opened.as_deref()));

        // Another root: the same names, other folders.
        let other = tempfile::tempdir().unwrap();
        let other = dunce::canonicalize(other.path()).unwrap();
        std::fs::create_dir_all(other.join("src")).unwrap();
        let moved = Mounts::resolve(&grant, Some(&snapshot(&other)));
        assert!(!moved.opens(opened.as_deref()));

        // A grant naming nothing under the root is used as it is.
        let plain = Grant::default();
        let mounts = Mounts::resolve(&plain, Some(&snapshot(&root)));
        assert!(std::ptr::eq(mounts.grant(&plain), &plain));
        assert_eq!(mounts.workspace, Some(root));
    }
}
