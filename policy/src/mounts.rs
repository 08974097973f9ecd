//! What a grant mounts under the workspace root of one snapshot
//! ([`Grant::folders`]): the folders named under the root (see
//! `under_root.rs`) resolved there, each opened where it was found, and
//! those that could not be, left out with the reason.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::Grant;
use crate::settings::Setting;
use crate::under_root::{RootFolderError, SharedRoot, UnderRoot};

/// What a grant mounts under one snapshot's root.
#[derive(Debug)]
pub struct Folders<'a> {
    /// The workspace: fixed by the user, else the folder under the root,
    /// else the snapshot's root. `None`: no workspace is mounted.
    pub workspace: Option<PathBuf>,
    /// The grant with its folders under the root made absolute (those
    /// that could not be, left out).
    pub grant: Cow<'a, Grant>,
    /// The folders under the root left out, and why.
    pub left_out: Vec<RootFolderError>,
    /// The snapshot's root, if nothing is mounted from it because it is a
    /// place many things share ([`crate::places::shared_place`]).
    pub shared_root: Option<SharedRoot>,
}

impl Grant {
    /// What this grant mounts when the host's workspace root is
    /// `snapshot_root`: the folders named under the root resolved there,
    /// each as the plugin sees it (the root joined with its names, which
    /// must lead to a folder inside the root).
    /// A root that is a place many things share (`/`, `/home`, the home
    /// folder) is not used at all: a plugin would reach everything below.
    pub fn folders(&self, snapshot_root: Option<&Path>) -> Folders<'_> {
        let mut left_out = Vec::new();
        let uses_root = self.workspace.is_none() || !self.in_root.is_empty();
        let shared_root = snapshot_root
            .filter(|root| uses_root && crate::places::shared_root(root))
            .map(|root| SharedRoot(root.to_owned()));
        let snapshot_root = snapshot_root.filter(|_| shared_root.is_none());
        if self.in_root.is_empty() || snapshot_root.is_none() {
            let workspace = match (&self.workspace, &self.in_root.workspace) {
                (Some(fixed), _) => Some(fixed.clone()),
                (None, Some(_)) => None,
                (None, None) => snapshot_root.map(Path::to_path_buf),
            };
            let grant = match self.in_root.is_empty() {
                true => Cow::Borrowed(self),
                false => Cow::Owned(Grant {
                    in_root: UnderRoot::default(),
                    ..self.clone()
                }),
            };
            return Folders {
                workspace,
                grant,
                left_out,
                shared_root,
            };
        }
        let root = snapshot_root.unwrap_or(Path::new("/"));
        let canonical_root = dunce::canonicalize(root);
        // Each folder found is opened where it was found (`mounted_from`):
        // a link the plugin changes after this check moves nothing.
        let mut found_at = Vec::new();
        let mut resolve = |setting, relative: &Path| {
            let path = match relative.as_os_str().is_empty() {
                true => root.to_path_buf(),
                false => root.join(relative),
            };
            let found = dunce::canonicalize(&path).and_then(|target| match target.is_dir() {
                true => Ok(target),
                false => Err(std::io::Error::other("not a folder")),
            });
            let error = match (&canonical_root, found) {
                (Ok(root), Ok(target)) if target.starts_with(root) => {
                    found_at.push((path.clone(), target));
                    return Some(path);
                }
                (Ok(root), Ok(target)) => RootFolderError::LeavesRoot {
                    setting,
                    relative: relative.to_owned(),
                    path,
                    target,
                    root: root.clone(),
                },
                (Err(e), _) => RootFolderError::Missing {
                    setting,
                    relative: relative.to_owned(),
                    path: path.clone(),
                    source: std::io::Error::new(e.kind(), e.to_string()),
                },
                (_, Err(source)) => RootFolderError::Missing {
                    setting,
                    relative: relative.to_owned(),
                    path: path.clone(),
                    source,
                },
            };
            left_out.push(error);
            None
        };
        let workspace = match (&self.workspace, &self.in_root.workspace) {
            (Some(fixed), _) => Some(fixed.clone()),
            (None, Some(relative)) => resolve(Setting::Workspace, relative),
            (None, None) => Some(root.to_path_buf()),
        };
        let mut grant = Grant {
            in_root: UnderRoot::default(),
            ..self.clone()
        };
        for relative in &self.in_root.read {
            grant
                .allow_read
                .extend(resolve(Setting::AllowRead, relative));
        }
        for relative in &self.in_root.write {
            grant
                .allow_write
                .extend(resolve(Setting::AllowWrite, relative));
        }
        grant.mounted_from.extend(found_at);
        Folders {
            workspace,
            grant: Cow::Owned(grant),
            left_out,
            shared_root,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::under_root::UnderRoot;

    fn in_root(workspace: Option<&str>, read: &[&str]) -> Grant {
        Grant {
            in_root: UnderRoot {
                workspace: workspace.map(PathBuf::from),
                read: read.iter().map(PathBuf::from).collect(),
                write: Vec::new(),
            },
            ..Grant::default()
        }
    }

    #[test]
    fn folders_resolve_under_each_root_and_never_out_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let grant = in_root(Some("out"), &["src"]);
        let folders = grant.folders(Some(&root));
        assert_eq!(folders.workspace, Some(root.join("out")));
        assert_eq!(folders.grant.allow_read, vec![root.join("src")]);
        assert!(folders.grant.in_root.is_empty());
        // Opened where they were found, whatever a link says later.
        let from = &folders.grant.mounted_from;
        assert_eq!(from.get(&root.join("out")), Some(&root.join("out")));
        assert!(folders.left_out.is_empty());

        // Missing: left out, and the workspace is not the root instead.
        let grant = in_root(Some("gone"), &["none"]);
        let folders = grant.folders(Some(&root));
        assert_eq!(folders.workspace, None);
        assert!(folders.grant.allow_read.is_empty());
        assert_eq!(folders.left_out.len(), 2);
        let said = folders.left_out[0].to_string();
        assert!(
            said.contains("{root}/gone") && said.contains("create the folder"),
            "{said}"
        );

        // No root known: nothing under it is mounted.
        assert_eq!(in_root(Some("out"), &[]).folders(None).workspace, None);
    }

    #[test]
    fn a_shared_root_mounts_nothing_unless_the_workspace_is_pinned() {
        for root in ["/", "/tmp"] {
            let grant = Grant::default();
            let folders = grant.folders(Some(Path::new(root)));
            assert_eq!(folders.workspace, None, "{root}");
            let said = folders
                .shared_root
                .map(|s| s.to_string())
                .unwrap_or_default();
            assert!(
                said.contains("too broad") && said.contains("give the folder with"),
                "{said}"
            );
            let grant = in_root(Some(""), &["etc"]);
            let folders = grant.folders(Some(Path::new(root)));
            assert!(folders.workspace.is_none() && folders.grant.allow_read.is_empty());
        }
        let pinned = Grant {
            workspace: Some("/".into()),
            ..Grant::default()
        };
        let folders = pinned.folders(Some(Path::new("/")));
        assert_eq!(folders.workspace.as_deref(), Some(Path::new("/")));
        assert!(folders.shared_root.is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_root_is_not_mounted() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dunce::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        let grant = in_root(Some("out"), &["out"]);
        let folders = grant.folders(Some(&root));
        assert_eq!(folders.workspace, None);
        assert!(folders.grant.allow_read.is_empty());
        let said = folders.left_out[0].to_string();
        assert!(said.contains("outside the workspace root"), "{said}");
    }
}
