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

use std::path::PathBuf;

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

/// What an executable's file name ends with here: `.exe` on Windows,
/// nothing elsewhere. An installed plugin is `<id>` plus this.
pub const EXE_SUFFIX: &str = std::env::consts::EXE_SUFFIX;

/// The file name of an executable for `target` (a Rust target triple, e.g.
/// `x86_64-pc-windows-gnu`): `name.exe` for Windows targets.
pub fn exe_name_for(name: &str, target: &str) -> String {
    if target.contains("-windows") {
        format!("{name}.exe")
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn windows_executables_end_in_exe() {
        assert_eq!(super::exe_name_for("p", "x86_64-pc-windows-gnu"), "p.exe");
        assert_eq!(super::exe_name_for("p", "aarch64-apple-darwin"), "p");
        assert_eq!(super::exe_name_for("p", "aarch64-unknown-linux-gnu"), "p");
    }
}
