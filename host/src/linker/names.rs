//! Which path each descriptor the guest holds was opened by: preopens by
//! their mount path, the rest joined from their parent's while a call is
//! recorded (a descriptor opened in a call nobody records is named `?`).
//! Receipts and refusals name files by it; nothing is decided from it
//! (WASI's own descriptors decide what can be reached).

use std::collections::HashMap;
use std::path::Path;

use crate::policy::wording::{Setting, worded};
use crate::storage::DATA_GUEST_PATH;

/// Where the learning trap is mounted: a path outside every mount
/// resolves to it in the guest, so the host sees (and refuses) the attempt
/// instead of the guest's libc failing it unseen.
pub(crate) const TRAP_PATH: &str = "/";

/// The path of each descriptor, by resource id.
#[derive(Debug, Default)]
pub(crate) struct FdNames {
    by_rep: HashMap<u32, String>,
    /// The learning trap's descriptor, once the guest listed its preopens.
    pub(crate) trap: Option<u32>,
    /// Whether the trap is mounted in this instance.
    pub(crate) trap_mounted: bool,
}

impl FdNames {
    /// Remembers that descriptor `rep` is `path` (an empty path, from a
    /// call nobody records, forgets what `rep` named before: ids are
    /// reused).
    pub(crate) fn name(&mut self, rep: u32, path: String) {
        if path.is_empty() {
            self.by_rep.remove(&rep);
        } else {
            self.by_rep.insert(rep, path);
        }
    }

    /// The path of descriptor `rep` (`?` if unknown).
    pub(crate) fn of(&self, rep: u32) -> String {
        self.by_rep.get(&rep).cloned().unwrap_or_else(|| "?".into())
    }

    /// `path` relative to descriptor `rep`, as one lexically normalized
    /// path (`.` dropped, `..` taken back).
    pub(crate) fn join(&self, rep: u32, path: &str) -> String {
        let base = self.by_rep.get(&rep).map_or("?", String::as_str);
        join(base, path)
    }

    /// Whether `rep` is the learning trap.
    pub(crate) fn is_trap(&self, rep: u32) -> bool {
        self.trap == Some(rep)
    }
}

/// `path` under `base`, lexically normalized.
fn join(base: &str, path: &str) -> String {
    let absolute = base.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in base.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// The rule that would let the plugin read (or write) `path`: its folder
/// (the path itself if it is a folder here) as an extra mount, under the
/// capability that mounts it.
pub(crate) fn allow_path(path: &str, write: bool) -> String {
    if Path::new(path).starts_with(DATA_GUEST_PATH) {
        return format!(
            "the plugin's data directory, which it does not have (storage is off: {}, or it cannot be opened)",
            worded(Setting::NoStorage, "")
        );
    }
    let folder = folder_of(path);
    // Through a link: a mount cannot follow it out, and mounting the
    // link mounts its target; the plugin must use the target's path.
    if let Ok(real) = dunce::canonicalize(folder)
        && real != folder
        && folder.parent().is_some()
    {
        return format!(
            "no rule for this path: {} is reached through a link to {}, which a mount does not follow; mount that folder ({}) and use its path",
            folder.display(),
            real.display(),
            worded(
                if write {
                    Setting::AllowWrite
                } else {
                    Setting::AllowRead
                },
                real.display()
            )
        );
    }
    if folder.parent().is_none() {
        return "no rule: mounting the root folder would give away every file (a relative path resolves from /)".into();
    }
    if write {
        format!(
            "{} (with projectWrite)",
            worded(Setting::AllowWrite, folder.display())
        )
    } else {
        format!(
            "{} (with projectRead)",
            worded(Setting::AllowRead, folder.display())
        )
    }
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

    #[test]
    fn joins_are_lexical() {
        assert_eq!(join("/w", "a/b.txt"), "/w/a/b.txt");
        assert_eq!(join("/w", "./a/../b"), "/w/b");
        assert_eq!(join("/w", "../../etc/hosts"), "/etc/hosts");
        assert_eq!(join("/", "etc/hosts"), "/etc/hosts");
        assert_eq!(join("/w/", "."), "/w");
    }
}
