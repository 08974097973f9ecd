//! Which setting would allow a file access the sandbox refused: the one
//! place that words a file refusal (the launcher's stderr line, a receipt's
//! `allow`, the note on a failed call, a path parameter's refusal).
//!
//! Nothing here decides what a plugin reaches: WASI's descriptors do, from
//! the mounts `linker/wasi.rs` makes. This only explains a refusal, from
//! what was mounted ([`FileGrants`]), the path the plugin named and how it
//! was refused ([`Refused`]), by the path's words alone: no host file is
//! looked at (a path is the plugin's choice, and looking could hang on a
//! network folder, wake an automounter, or tell what exists).

use std::path::{Path, PathBuf};

use super::Access;
use super::settings::Setting;
use super::wording::worded;
use crate::storage::DATA_GUEST_PATH;

/// What one instance was given of the host's files, for wording refusals.
#[derive(Debug, Clone, Default)]
pub struct FileGrants {
    /// The workspace root (fixed or from the snapshot), mounted or not.
    pub root: Option<PathBuf>,
    /// How the workspace root and the `--allow-read` folders are mounted
    /// (`None`: the plugin may not use project files).
    pub project: Option<Access>,
    /// Whether the manifest declares `projectRead` (a grant alone cannot
    /// give what is not declared).
    pub declares_read: bool,
    /// Whether the manifest declares `projectWrite`.
    pub declares_write: bool,
    /// `--allow-read` folders as granted.
    pub allow_read: Vec<PathBuf>,
    /// `--allow-write` folders as granted.
    pub allow_write: Vec<PathBuf>,
    /// Whether the data directory is mounted, and writable.
    pub data: Option<bool>,
}

/// Why a file access was refused, and what would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRefusal {
    /// Why, e.g. "outside the folders the plugin may read".
    pub why: String,
    /// What would allow it, e.g. "allow it with --allow-read /etc (with
    /// projectRead)", or why nothing would.
    pub allow: String,
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
    /// named it; `directory`: the access is to the folder itself) could not
    /// be read (or written), refused as `how` says. `None` when the grants
    /// allow it and the sandbox did not refuse it (the host's own file
    /// system did: a file's mode).
    pub fn explain(
        &self,
        path: &str,
        write: bool,
        directory: bool,
        how: Refused,
    ) -> Option<FileRefusal> {
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
        let direct = self.explain_direct(path, write, directory);
        match (direct, how) {
            (Some(refusal), _) => Some(refusal),
            (None, Refused::ByTheHost) => None,
            // The grants allow the path by its words, but the mount it was
            // reached through refused to leave itself.
            (None, Refused::ByAMount) => Some(FileRefusal::new(
                format!(
                    "{path} leads out of the folder it was reached through (by a `..` or a link), which a mount does not follow"
                ),
                "use the path of what it leads to; if that is outside every mount, it needs a rule of its own",
            )),
            // In a mount by its words, yet it matched none: the plugin's
            // file library matches mounts by their exact words.
            (None, Refused::OutsideEveryMount) => Some(FileRefusal::new(
                format!("{path} is in a mounted folder, but was not written as the mount names it"),
                "write the path in its plain form (no `//`, `/./` or `..` before the mount's own path)",
            )),
        }
    }

    /// [`explain`](Self::explain) for a path taken by its words.
    fn explain_direct(&self, path: &str, write: bool, directory: bool) -> Option<FileRefusal> {
        let given = Path::new(path);
        let folder = folder_of(path, directory);
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
                "no rule: mounting the root folder would give away every file; a relative path resolves from /, not from the workspace, so the plugin must join it to the workspace's root (workspace.rootPath)",
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
pub fn outside_rule(folder: &Path, write: bool) -> String {
    let (setting, capability) = if write {
        (Setting::AllowWrite, "projectWrite")
    } else {
        (Setting::AllowRead, "projectRead")
    };
    format!("{} (with {capability})", worded(setting, folder.display()))
}

/// The folder a mount must cover for `path`: itself when the access is to
/// a folder (`directory`), else its parent, by its words.
pub fn folder_of(path: &str, directory: bool) -> &Path {
    let path = Path::new(path);
    match directory {
        true => path,
        false => path.parent().unwrap_or(path),
    }
}

/// How the sandbox came to refuse an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The path reached no mount (the trap at `/` refused it).
    OutsideEveryMount,
    /// A mount refused it (`EPERM`): a write to a read-only one, or a path
    /// leaving the mount it was reached through.
    ByAMount,
    /// The host's file system refused it (`EACCES`), unless the grants say
    /// otherwise.
    ByTheHost,
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
            (
                Some(Access::ReadOnly),
                "/nonexistent-ws/a.txt",
                false,
                Some("plain form"),
            ),
            (
                Some(Access::ReadOnly),
                "/nonexistent-ws/a.txt",
                true,
                Some("grant = [\"projectWrite\"]"),
            ),
            (
                Some(Access::ReadWrite),
                "/nonexistent-ws/a.txt",
                true,
                Some("plain form"),
            ),
            (
                Some(Access::ReadOnly),
                "/nonexistent-extra/a",
                false,
                Some("plain form"),
            ),
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
            let got = grants(*project).explain(path, *write, false, Refused::OutsideEveryMount);
            match (want, got) {
                (None, None) => {}
                (Some(want), Some(got)) => assert!(got.allow.contains(want), "{path}: {got:?}"),
                (want, got) => panic!("{path} (write {write}): want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn a_path_leaving_its_mount_and_the_hosts_own_refusals() {
        let g = grants(Some(Access::ReadOnly));
        let link = g.explain("/nonexistent-ws/link", false, false, Refused::ByAMount);
        assert!(
            link.unwrap()
                .why
                .contains("leads out of the folder it was reached through")
        );
        let host = g.explain("/nonexistent-ws/mode-000", false, false, Refused::ByTheHost);
        assert_eq!(host, None, "the host's refusal is not the sandbox's");
        let folder = g
            .explain("/etc", false, true, Refused::OutsideEveryMount)
            .unwrap();
        assert!(
            folder.allow.contains("allow-read = [\"/etc\"]"),
            "{folder:?}"
        );
    }

    #[test]
    fn an_undeclared_capability_says_the_manifest_must_declare_it() {
        let mut g = grants(None);
        g.declares_read = false;
        g.declares_write = false;
        let got = g
            .explain(
                "/nonexistent-ws/a",
                false,
                false,
                Refused::OutsideEveryMount,
            )
            .unwrap();
        assert!(
            got.allow.contains("does not declare projectRead"),
            "{got:?}"
        );
    }
}
