//! Whether someone else could change a file or folder the launcher trusts
//! (the trusted-keys file, a recordings folder): it must be the user's and
//! writable by nobody else, and so must every folder above it, up to the
//! root (folders of the system's count as safe, and a folder with the
//! sticky bit, like `/tmp`, lets nobody else rename what is in it; on
//! Windows, `C:\` lets every user add folders, not rename others'). Who
//! owns a place and who else may write it is read by
//! `lingxi_wasm_policy::owner` (mode bits on Unix, the ACL on Windows). A symbolic link is
//! judged by what it points at, and the folders that hold the link too.

use std::path::{Path, PathBuf};

use lingxi_wasm_host::policy::owner::{self, Owner};

/// Why a path is not private.
#[derive(Debug, thiserror::Error)]
#[error("{place} {why}")]
pub struct NotPrivate {
    /// The file or folder at fault.
    pub place: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Checks `path` (see the module documentation); returns it resolved.
pub fn check(path: &Path) -> Result<PathBuf, NotPrivate> {
    let unreadable = |p: &Path| NotPrivate {
        place: p.display().to_string(),
        why: "cannot be read",
    };
    let resolved = std::fs::canonicalize(path).map_err(|_| unreadable(path))?;
    let given = std::path::absolute(path).map_err(|_| unreadable(path))?;
    let mut places = vec![(resolved.clone(), 0)];
    places.extend(resolved.ancestors().skip(1).map(|p| (p.to_owned(), 1)));
    places.extend(given.ancestors().skip(1).map(|p| (p.to_owned(), 2)));
    // The folders above a link and above its target are mostly the
    // same: each is judged once, at the first depth it appears.
    let mut seen = std::collections::HashSet::new();
    for (place, depth) in places {
        if !seen.insert(place.clone()) {
            continue;
        }
        let access = owner::access(&place).map_err(|e| NotPrivate {
            place: place.display().to_string(),
            why: if e.kind() == std::io::ErrorKind::Unsupported {
                "cannot be checked on this platform (who may write to it is unknown)"
            } else {
                "cannot be read"
            },
        })?;
        let owner_ok = match access.owner {
            Owner::Me => true,
            Owner::System => depth > 0,
            Owner::Other(_) => false,
        };
        // A folder above may let others add entries (like /tmp or C:\),
        // not rename those of others; nobody else may write the place itself.
        let open = if depth == 0 {
            access.others_may_write
        } else {
            access.others_may_rename_entries
        };
        let fault = if !owner_ok {
            Some("belongs to another user (choose a place of your own)")
        } else if open {
            Some(
                "can be written by others (fix it with chmod go-w, or on Windows remove other users from its permissions; or choose a private place)",
            )
        } else {
            None
        };
        if let Some(why) = fault {
            return Err(NotPrivate {
                place: place.display().to_string(),
                why,
            });
        }
    }
    Ok(resolved)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn every_folder_above_counts_and_links_are_followed() {
        let root = tempfile::tempdir().unwrap();
        let open = root.path().join("open");
        let private = open.join("private");
        std::fs::create_dir_all(&private).unwrap();
        mode(&private, 0o700);
        mode(&open, 0o700);
        assert!(check(&private).is_ok());
        // A folder above that others can write: they could rename `private`.
        mode(&open, 0o777);
        let e = check(&private).unwrap_err();
        assert!(
            e.place.ends_with("/open") && e.why.starts_with("can be written by others"),
            "{e}"
        );
        // Sticky, it is safe (as /tmp is).
        mode(&open, 0o1777);
        assert!(check(&private).is_ok());
        // But a folder to write into may not itself be open, sticky or not.
        mode(&private, 0o1777);
        assert!(check(&private).is_err());
        mode(&private, 0o700);

        // A link in an open folder to a private folder: the link's folder
        // counts (the link could be replaced).
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        mode(&elsewhere, 0o777);
        mode(&open, 0o700);
        let link = elsewhere.join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        assert!(check(&link).is_err());
        // A private link to a file in an open folder: the target's folder.
        let keys = elsewhere.join("keys");
        std::fs::write(&keys, "k").unwrap();
        mode(&keys, 0o600);
        let to_keys = private.join("keys");
        std::os::unix::fs::symlink(&keys, &to_keys).unwrap();
        assert!(check(&to_keys).is_err());
        mode(&elsewhere, 0o700);
        assert_eq!(check(&to_keys).unwrap(), keys.canonicalize().unwrap());
    }
}
