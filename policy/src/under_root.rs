//! Folders named under the workspace root the host sends (`{root}/out`),
//! so that one policy serves every project a host opens: a plugin
//! installed into LingXi is started once and sent the root of whichever
//! project the user works in, and a learned policy must not pin the
//! folders of the project it was learned in.
//!
//! `workspace`, `allow-read` and `allow-write` may each be written
//! `{root}` or `{root}/a/b` (either slash): only plain names follow, never
//! `..`. Each is resolved against every snapshot's root
//! ([`crate::Grant::folders`], in `mounts.rs`), and left out, with a warning, if it is missing or
//! leads out of the root through a link. A workspace left out mounts
//! nothing: never the whole root instead.

use std::path::{Component, Path, PathBuf};

use super::settings::Setting;

/// How a folder under the root starts.
pub const ROOT: &str = "{root}";

/// The folders of a grant named under the host's workspace root, each a
/// relative path of plain names (empty: the root itself).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnderRoot {
    /// The workspace: this folder under the root instead of the root.
    pub workspace: Option<PathBuf>,
    /// Also mounted read-only (with projectRead or projectWrite).
    pub read: Vec<PathBuf>,
    /// Also mounted read-write (with projectWrite).
    pub write: Vec<PathBuf>,
}

impl UnderRoot {
    /// Whether no folder is named under the root.
    pub fn is_empty(&self) -> bool {
        self.workspace.is_none() && self.read.is_empty() && self.write.is_empty()
    }
}

/// The part of `path` after `{root}`, if it is written that way: `Ok` with
/// a relative path of plain names, or `Err` if what follows is not that
/// (`{root}x`, `{root}/../etc`). `None`: not a folder under the root.
pub fn parse(path: &Path) -> Option<Result<PathBuf, ()>> {
    let rest = path.to_str()?.strip_prefix(ROOT)?;
    if !(rest.is_empty() || rest.starts_with(['/', '\\'])) {
        return Some(Err(()));
    }
    let mut relative = PathBuf::new();
    for name in rest
        .split(['/', '\\'])
        .filter(|n| !n.is_empty() && *n != ".")
    {
        let plain = Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if !plain || name == ".." {
            return Some(Err(()));
        }
        relative.push(name);
    }
    Some(Ok(relative))
}

/// How a folder under the root is written: `{root}` or `{root}/out`.
pub fn shown(relative: &Path) -> String {
    let names: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match names.is_empty() {
        true => ROOT.to_owned(),
        false => format!("{ROOT}/{}", names.join("/")),
    }
}

/// A folder under the root that is not mounted under one snapshot's root.
#[derive(Debug, thiserror::Error)]
pub enum RootFolderError {
    /// It does not exist there (or cannot be resolved).
    #[error(
        "{setting} {}: {} cannot be used ({source}); it is not mounted for this project (create the folder, or change the setting)",
        shown(relative),
        path.display()
    )]
    Missing {
        /// The setting that names it.
        setting: Setting,
        /// As written, after `{root}`.
        relative: PathBuf,
        /// Where it would be.
        path: PathBuf,
        /// Why it cannot be resolved.
        source: std::io::Error,
    },
    /// A link in it leads out of the root.
    #[error(
        "{setting} {}: {} leads to {}, outside the workspace root {}; it is not mounted",
        shown(relative),
        path.display(),
        target.display(),
        root.display()
    )]
    LeavesRoot {
        /// The setting that names it.
        setting: Setting,
        /// As written, after `{root}`.
        relative: PathBuf,
        /// Where it is, as written under the root.
        path: PathBuf,
        /// Where its links lead.
        target: PathBuf,
        /// The root.
        root: PathBuf,
    },
}

/// A snapshot's root that nothing is mounted from.
#[derive(Debug, thiserror::Error)]
#[error(
    "the workspace root {} the host sent is too broad to mount (it is /, a folder directly under it, or holds the home folder, so the plugin would reach everything below it): nothing is mounted from it; open a project's folder, or give the folder with {}",
    .0.display(),
    super::wording::worded(Setting::Workspace, "DIR")
)]
pub struct SharedRoot(pub PathBuf);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_follow_the_root() {
        let ok = |s: &str| parse(Path::new(s)).and_then(Result::ok);
        assert_eq!(ok("{root}"), Some(PathBuf::new()));
        assert_eq!(ok("{root}/"), Some(PathBuf::new()));
        assert_eq!(ok("{root}/out"), Some(PathBuf::from("out")));
        assert_eq!(ok("{root}\\a\\./b"), Some(PathBuf::from("a").join("b")));
        for bad in ["{root}x", "{root}/..", "{root}/a/../../etc", "{root}/a/.."] {
            assert_eq!(parse(Path::new(bad)), Some(Err(())), "{bad}");
        }
        assert_eq!(parse(Path::new("/abs/{root}")), None);
        assert_eq!(shown(Path::new("a/b")), "{root}/a/b");
        assert_eq!(shown(Path::new("")), "{root}");
    }
}
