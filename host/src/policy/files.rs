//! Which setting would allow a file access the sandbox refused: the one
//! place that words a file refusal (the launcher's stderr line, a receipt's
//! `allow`, the note on a failed call, a path parameter's refusal).
//!
//! Nothing here decides what a plugin reaches: WASI's descriptors do, from
//! the mounts `linker/wasi.rs` makes. This only explains a refusal, from
//! what was mounted ([`FileGrants`]) and the path the plugin named. It
//! looks at the host's files (is the folder a folder, is it reached
//! through a link) to word the rule; what it finds goes to the user, never
//! to the plugin, which gets the same error whether a path exists or not.

use std::path::{Path, PathBuf};

use super::Access;
use super::wording::{Setting, worded};
use crate::storage::DATA_GUEST_PATH;

/// What one instance was given of the host's files, for wording refusals.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileGrants {
    /// The workspace root (fixed or from the snapshot), mounted or not.
    pub(crate) root: Option<PathBuf>,
    /// How the workspace root and the `--allow-read` folders are mounted
    /// (`None`: the plugin may not use project files).
    pub(crate) project: Option<Access>,
    /// Whether the manifest declares `projectRead` / `projectWrite` (a
    /// grant alone cannot give what is not declared).
    pub(crate) declares_read: bool,
    pub(crate) declares_write: bool,
    /// `--allow-read` and `--allow-write` folders as granted.
    pub(crate) allow_read: Vec<PathBuf>,
    pub(crate) allow_write: Vec<PathBuf>,
    /// Whether the data directory is mounted, and writable.
    pub(crate) data: Option<bool>,
}

/// Why a file access was refused, and what would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileRefusal {
    /// Why, e.g. "outside the folders the plugin may read".
    pub(crate) why: String,
    /// What would allow it, e.g. "allow it with --allow-read /etc (with
    /// projectRead)", or why nothing would.
    pub(crate) allow: String,
}

impl FileRefusal {
    fn new(why: impl Into<String>, allow: impl Into<String>) -> Self {
        FileRefusal {
            why: why.into(),
            allow: allow.into(),
        }
    }
}

/// The verb of an access, for messages.
fn verb(write: bool) -> &'static str {
    if write { "write" } else { "read" }
}

impl FileGrants {
    /// Explains why `path` (absolute, lexically normalized, as the plugin
    /// named it) could not be read (or written). `None` when the grants
    /// allow it: the host's own file system refused (a file's mode), not
    /// the sandbox.
    pub(crate) fn explain(&self, path: &str, write: bool) -> Option<FileRefusal> {
        let given = Path::new(path);
        if given.starts_with(DATA_GUEST_PATH) {
            return match self.data {
                Some(true) => None,
                Some(false) if write => Some(FileRefusal::new(
                    "the data directory is over its quota and mounted read-only",
                    format!(
                        "free space in it, or raise {}",
                        worded(Setting::StorageQuota, "MIB")
                    ),
                )),
                Some(false) => None,
                None => Some(FileRefusal::new(
                    "the plugin has no data directory",
                    format!(
                        "storage is off ({}) or its folder cannot be opened; see the log's start",
                        worded(Setting::NoStorage, "")
                    ),
                )),
            };
        }
        if let Some(real) = self.link_out(given) {
            let target = real.display().to_string();
            let (why, allow) = (
                format!(
                    "{} is reached through a link to {target}, which a mount does not follow",
                    given.display()
                ),
                match self.explain_direct(&target, write) {
                    None => format!("use its own path, {target}"),
                    Some(_) => format!(
                        "mount its folder with {} and use its own path",
                        outside_rule(folder_of(&target), write)
                    ),
                },
            );
            return Some(FileRefusal::new(why, allow));
        }
        self.explain_direct(path, write)
    }

    /// The mount `given` lies in by its words (the longest), if any.
    fn mount_of(&self, given: &Path) -> Option<&Path> {
        let rw = self.project == Some(Access::ReadWrite);
        let mounted = self.project.is_some();
        self.root
            .iter()
            .chain(&self.allow_read)
            .filter(|_| mounted)
            .chain(self.allow_write.iter().filter(|_| rw))
            .map(PathBuf::as_path)
            .filter(|m| given.starts_with(m))
            .max_by_key(|m| m.as_os_str().len())
    }

    /// Where `given`, inside a mount by its words, really is when a link
    /// takes it out of that mount (WASI refuses to follow it there).
    fn link_out(&self, given: &Path) -> Option<PathBuf> {
        let mount = dunce::canonicalize(self.mount_of(given)?).ok()?;
        let real = dunce::canonicalize(given).ok().or_else(|| {
            let parent = dunce::canonicalize(given.parent()?).ok()?;
            Some(parent.join(given.file_name()?))
        })?;
        (!real.starts_with(&mount)).then_some(real)
    }

    /// [`explain`](Self::explain) for a path taken by its words.
    fn explain_direct(&self, path: &str, write: bool) -> Option<FileRefusal> {
        let given = Path::new(path);
        let folder = folder_of(path);
        if let Some(root) = &self.root
            && given.starts_with(root)
        {
            return self.in_workspace(write);
        }
        let under = |dirs: &[PathBuf]| dirs.iter().any(|d| given.starts_with(d));
        let (in_read, in_write) = (under(&self.allow_read), under(&self.allow_write));
        if in_read || in_write {
            let rw = self.project == Some(Access::ReadWrite);
            let readable = (in_read && self.project.is_some()) || (in_write && rw);
            if (in_write && rw) || (readable && !write) {
                return None;
            }
            if readable && !in_write {
                return Some(FileRefusal::new(
                    format!("{} is mounted read-only", folder.display()),
                    format!("allow it with {}", outside_rule(folder, true)),
                ));
            }
            let needs_write = write || !in_read;
            let (setting, capability) = match needs_write {
                true => (Setting::AllowWrite, "projectWrite"),
                false => (Setting::AllowRead, "projectRead"),
            };
            let why = format!("{setting} folders are mounted only with {capability}");
            return Some(self.capability(needs_write, &why));
        }
        let why = format!("outside the folders the plugin may {}", verb(write));
        if folder.parent().is_none() {
            return Some(FileRefusal::new(
                why,
                "no rule: mounting the root folder would give away every file (a relative path resolves from /)",
            ));
        }
        Some(FileRefusal::new(
            why,
            format!("allow it with {}", outside_rule(folder, write)),
        ))
    }

    /// A path in the workspace: refused only for a capability it lacks, or
    /// a write to a read-only mount.
    fn in_workspace(&self, write: bool) -> Option<FileRefusal> {
        match self.project {
            Some(Access::ReadWrite) => None,
            Some(Access::ReadOnly) if !write => None,
            Some(Access::ReadOnly) => {
                Some(self.capability(true, "the workspace is mounted read-only"))
            }
            None => Some(self.capability(write, "the plugin may not use the workspace's files")),
        }
    }

    /// Refused for want of `projectWrite` (`write`) or `projectRead`: the
    /// grant that gives it, or why a grant cannot.
    fn capability(&self, write: bool, why: &str) -> FileRefusal {
        let (capability, declared) = if write {
            ("projectWrite", self.declares_write)
        } else {
            ("projectRead", self.declares_read || self.declares_write)
        };
        let grant = worded(Setting::Grant, capability);
        FileRefusal::new(
            why,
            if declared {
                format!("allow it with {grant}")
            } else {
                format!(
                    "the plugin does not declare {capability}: its manifest must, and the user grant it with {grant}"
                )
            },
        )
    }
}

/// The rule that mounts `folder` for reading (or writing), e.g.
/// `--allow-read /etc (with projectRead)`.
pub(crate) fn outside_rule(folder: &Path, write: bool) -> String {
    let (setting, capability) = if write {
        (Setting::AllowWrite, "projectWrite")
    } else {
        (Setting::AllowRead, "projectRead")
    };
    format!("{} (with {capability})", worded(setting, folder.display()))
}

/// The folder a mount must cover for `path`: itself if it is a folder on
/// this machine, else its parent.
pub(crate) fn folder_of(path: &str) -> &Path {
    let path = Path::new(path);
    if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(project: Option<Access>) -> FileGrants {
        FileGrants {
            root: Some(PathBuf::from("/nonexistent-ws")),
            project,
            declares_read: true,
            declares_write: true,
            allow_read: vec![PathBuf::from("/nonexistent-extra")],
            allow_write: vec![],
            data: None,
        }
    }

    #[test]
    fn each_refusal_names_the_setting_that_allows_it() {
        let cases: &[(Option<Access>, &str, bool, Option<&str>)] = &[
            (
                None,
                "/nonexistent-ws/a.txt",
                false,
                Some("grant = [\"projectRead\"]"),
            ),
            (Some(Access::ReadOnly), "/nonexistent-ws/a.txt", false, None),
            (
                Some(Access::ReadOnly),
                "/nonexistent-ws/a.txt",
                true,
                Some("grant = [\"projectWrite\"]"),
            ),
            (Some(Access::ReadWrite), "/nonexistent-ws/a.txt", true, None),
            (Some(Access::ReadOnly), "/nonexistent-extra/a", false, None),
            (
                Some(Access::ReadOnly),
                "/nonexistent-extra/a",
                true,
                Some("allow-write = [\"/nonexistent-extra\"] (with projectWrite)"),
            ),
            (
                Some(Access::ReadOnly),
                "/nonexistent-other/passwd",
                false,
                Some("allow-read = [\"/nonexistent-other\"] (with projectRead)"),
            ),
            (
                Some(Access::ReadOnly),
                "/passwd",
                false,
                Some("no rule: mounting the root"),
            ),
            (
                Some(Access::ReadOnly),
                "/lingxi/data/x",
                false,
                Some("no-storage = true"),
            ),
        ];
        for (project, path, write, want) in cases {
            let got = grants(*project).explain(path, *write);
            match (want, got) {
                (None, None) => {}
                (Some(want), Some(got)) => assert!(got.allow.contains(want), "{path}: {got:?}"),
                (want, got) => panic!("{path} (write {write}): want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn an_undeclared_capability_says_the_manifest_must_declare_it() {
        let mut g = grants(None);
        g.declares_read = false;
        g.declares_write = false;
        let got = g.explain("/nonexistent-ws/a", false).unwrap();
        assert!(
            got.allow.contains("does not declare projectRead"),
            "{got:?}"
        );
    }
}
