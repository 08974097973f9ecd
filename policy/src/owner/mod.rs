//! Who owns a file or folder and whether anyone else may change it, on
//! each platform: the one question behind every guard that lets a file
//! decide what runs (the compile cache holds native code) or what is
//! trusted (the trusted-keys file, recording folders). Callers state their
//! rule over [`Access`]; how it is read is decided here.
//!
//! - Unix: the owner's uid and the mode bits (group or others may write;
//!   the sticky bit keeps them from renaming what is not theirs).
//! - Windows: the owner SID and the DACL. "Others" are every principal but
//!   this user (its SID, and the owner its new files get), `SYSTEM`,
//!   `Administrators` and `TrustedInstaller`, who can change any file
//!   anyway, as root can on Unix. An ACE that only applies to what a folder
//!   will hold (inherit-only) does not count; a missing DACL grants
//!   everyone everything.
//! - Elsewhere: no answer ([`std::io::ErrorKind::Unsupported`]), and every
//!   caller refuses rather than passes.

use std::path::Path;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as platform;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as platform;

/// Who owns a file or folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// The user this process runs as.
    Me,
    /// The system (root; `SYSTEM`, `Administrators`, `TrustedInstaller`),
    /// which can change every file anyway.
    System,
    /// Someone else, as the platform names them (a uid, a SID).
    Other(String),
}

/// What others may do to a file or folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Its owner.
    pub owner: Owner,
    /// Others may change it: write a file; add, remove or rename entries
    /// of a folder; change its permissions or owner.
    pub others_may_write: bool,
    /// Others may remove or rename entries of this folder that are not
    /// theirs (Unix: writable by others without the sticky bit; Windows:
    /// they may delete its children, or change its permissions or owner).
    pub others_may_rename_entries: bool,
    /// Others may read it (a file's contents; a folder's listing): what
    /// a secret's file must not allow.
    pub others_may_read: bool,
}

/// Reads who owns `path` (links followed) and what others may do to it.
pub fn access(path: &Path) -> std::io::Result<Access> {
    #[cfg(any(unix, windows))]
    {
        platform::access(path)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = path;
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "who owns a file cannot be checked on this platform",
        ))
    }
}

/// Creates `dir` and its missing parents, private to this user where the
/// platform has mode bits (0700 on Unix; on Windows a new folder inherits
/// its parent's permissions, which [`access`] then judges).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::{Owner, access};

    /// A folder [`super::create_private_dir`] made is this user's, and
    /// nobody else may write it (on Windows: run under Wine by
    /// scripts/cross-test). Whether others may read it is the platform's
    /// own: mode 0700 on Unix; on Windows it inherits its parent's
    /// permissions, which may let others read.
    #[test]
    fn a_new_private_folder_is_mine_alone() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("private");
        super::create_private_dir(&private).unwrap();
        let found = access(&private).unwrap();
        assert_eq!(found.owner, Owner::Me, "{found:?}");
        assert!(!found.others_may_write, "{found:?}");
        assert!(!found.others_may_rename_entries, "{found:?}");
        #[cfg(unix)]
        assert!(!found.others_may_read, "{found:?}");
    }
}
