//! Whether someone else could change a file or folder the launcher trusts
//! (the trusted-keys file, a recordings folder): it must be the user's and
//! writable by nobody else, and so must every folder above it, up to the
//! root (folders of root's count as safe, and a folder with the sticky bit,
//! like `/tmp`, lets nobody else rename what is in it). A symbolic link is
//! judged by what it points at, and the folders that hold the link too.

use std::path::{Path, PathBuf};

/// Why a path is not private.
#[derive(Debug, thiserror::Error)]
#[error("{place} {why}")]
pub struct NotPrivate {
    /// The file or folder at fault.
    pub place: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// What a path must be.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file whose folder may have the sticky bit (a keys file in `/tmp`
    /// is safe from renames).
    File,
    /// A folder the launcher writes into: never writable by others.
    Folder,
}

/// Checks `path` (see the module documentation); returns it resolved.
pub fn check(path: &Path, kind: Kind) -> Result<PathBuf, NotPrivate> {
    let unreadable = |p: &Path| NotPrivate {
        place: p.display().to_string(),
        why: "cannot be read",
    };
    let resolved = std::fs::canonicalize(path).map_err(|_| unreadable(path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
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
            let meta = std::fs::metadata(&place).map_err(|_| unreadable(&place))?;
            let sticky = meta.mode() & 0o1000 != 0;
            let open = meta.mode() & 0o022 != 0;
            let owner_ok = meta.uid() == me || (depth > 0 && meta.uid() == 0);
            let fault = if !owner_ok {
                Some("belongs to another user (choose a place of your own)")
            } else if open && (depth == 0 && kind == Kind::Folder || !sticky) {
                Some("can be written by others (fix it with chmod go-w, or choose a private place)")
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
        assert!(check(&private, Kind::Folder).is_ok());
        // A folder above that others can write: they could rename `private`.
        mode(&open, 0o777);
        let e = check(&private, Kind::Folder).unwrap_err();
        assert!(
            e.place.ends_with("/open") && e.why.starts_with("can be written by others"),
            "{e}"
        );
        // Sticky, it is safe (as /tmp is).
        mode(&open, 0o1777);
        assert!(check(&private, Kind::Folder).is_ok());
        // But a folder to write into may not itself be open, sticky or not.
        mode(&private, 0o1777);
        assert!(check(&private, Kind::Folder).is_err());
        mode(&private, 0o700);

        // A link in an open folder to a private folder: the link's folder
        // counts (the link could be replaced).
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        mode(&elsewhere, 0o777);
        mode(&open, 0o700);
        let link = elsewhere.join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        assert!(check(&link, Kind::Folder).is_err());
        // A private link to a file in an open folder: the target's folder.
        let keys = elsewhere.join("keys");
        std::fs::write(&keys, "k").unwrap();
        mode(&keys, 0o600);
        let to_keys = private.join("keys");
        std::os::unix::fs::symlink(&keys, &to_keys).unwrap();
        assert!(check(&to_keys, Kind::File).is_err());
        mode(&elsewhere, 0o700);
        assert_eq!(
            check(&to_keys, Kind::File).unwrap(),
            keys.canonicalize().unwrap()
        );
    }
}
