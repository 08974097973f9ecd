//! Where the user's folders are, by each platform's own rules (the `dirs`
//! crate): the home folder, the cache folder, and LingXi's folders in the
//! home folder, which are the same on every platform (`~/.lingxiagent/`).
//!
//! - home: `HOME`, else the user database (Unix); the profile folder, the
//!   known folder `FOLDERID_Profile` (Windows; no `HOME` there).
//! - cache: `$XDG_CACHE_HOME`, else `~/.cache` (Linux); `~/Library/Caches`
//!   (macOS); `%LOCALAPPDATA%`, the known folder (Windows).
//!
//! A relative or empty value is never used: it would name a different
//! folder in every directory a plugin is started from.

use std::path::{Path, PathBuf};

/// The user's home folder, if the platform names one.
pub fn home() -> Option<PathBuf> {
    dirs::home_dir().filter(|p| p.is_absolute())
}

/// The platform's folder for the user's caches.
pub fn cache() -> Option<PathBuf> {
    dirs::cache_dir().filter(|p| p.is_absolute())
}

/// LingXi's own folder in the home folder: `~/.lingxiagent` (on Windows
/// `%USERPROFILE%\.lingxiagent`, as LingXi's SDK page says).
pub fn lingxi_home() -> Option<PathBuf> {
    home().map(|home| home.join(".lingxiagent"))
}

/// Whether a resolved folder is a place many things share rather than one
/// project's or one plugin's: a root (`/`, `C:\`, a network share), a
/// folder directly under it (`/etc`, `/tmp`, `/home`, `C:\Windows`,
/// `C:\Users`), or the user's home folder or a folder above it (`HOME`
/// and `USERPROFILE` when absolute, the platform's home folder and the
/// user database's entry).
pub fn shared_place(resolved: &Path) -> bool {
    use std::path::Component;
    let depth = resolved
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    depth < 2 || homes().iter().any(|home| home.starts_with(resolved))
}

/// Whether `root`, a workspace root as a host sent it, resolves to a
/// [`shared_place`]. The answer for the last root asked is kept, so a
/// host that sends the same root with every call pays for one check.
pub fn shared_root(root: &Path) -> bool {
    static LAST: std::sync::Mutex<Option<(PathBuf, bool)>> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((known, shared)) = last.as_ref()
        && known == root
    {
        return *shared;
    }
    let resolved = dunce::canonicalize(root).unwrap_or_else(|_| root.to_owned());
    let shared = shared_place(&resolved) || shared_place(root);
    *last = Some((root.to_owned(), shared));
    shared
}

/// The user's home folders, resolved: `HOME` and `USERPROFILE` (when
/// absolute), the platform's home folder (on Windows the profile folder)
/// and the user database's entry for this user.
fn homes() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = ["HOME", "USERPROFILE"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .collect();
    homes.extend(home());
    #[cfg(unix)]
    homes.extend(database_home());
    homes
        .iter()
        .filter_map(|h| dunce::canonicalize(h).ok())
        .collect()
}

/// This user's home folder in the user database.
#[cfg(unix)]
fn database_home() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes only into `entry` and `buffer` (of the size
    // given), and sets `found` to `&entry` or null; the strings it points
    // to live in `buffer`, read before it is dropped.
    let status = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if status != 0 || found.is_null() || entry.pw_dir.is_null() {
        return None;
    }
    // SAFETY: pw_dir points at a NUL-terminated string inside `buffer`.
    let dir = unsafe { CStr::from_ptr(entry.pw_dir) };
    let dir = PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()));
    dir.is_absolute().then_some(dir)
}

#[cfg(test)]
mod shared_tests {
    use super::*;

    #[test]
    fn shared_places_are_not_workspaces_or_data_folders() {
        for shared in ["/", "/etc", "/tmp", "/home"] {
            assert!(shared_place(Path::new(shared)), "{shared}");
        }
        assert!(!shared_place(Path::new("/nonexistent-x/project")));
        #[cfg(unix)]
        {
            let home = database_home().expect("this user has a home folder");
            assert!(home.is_absolute());
            if let Ok(home) = home.canonicalize() {
                assert!(shared_place(&home), "{}", home.display());
            }
        }
    }

    /// Windows roots, the folders directly under them and the profile
    /// folder are shared places (run under Wine by scripts/cross-test).
    #[cfg(windows)]
    #[test]
    fn windows_shared_places() {
        for shared in ["C:\\", "C:\\Windows", "C:\\Users", "\\\\server\\share\\"] {
            assert!(shared_place(Path::new(shared)), "{shared}");
        }
        assert!(!shared_place(Path::new("C:\\nonexistent-x\\project")));
        let profile = home().expect("a profile folder");
        let profile = dunce::canonicalize(profile).unwrap();
        assert!(shared_place(&profile), "{}", profile.display());
    }
}
