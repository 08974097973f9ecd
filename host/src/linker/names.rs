//! Which path each descriptor the guest holds was opened by: preopens by
//! their mount path, the rest joined from their parent's. Receipts and
//! refusals name files by it; nothing is decided from it (WASI's own
//! descriptors decide what can be reached).

use std::collections::HashMap;

/// Where the trap is mounted (`trap.rs`): a path outside every mount
/// resolves to it in the guest, so the host sees (and refuses) the attempt
/// instead of the guest's libc failing it unseen.
pub(crate) const TRAP_PATH: &str = "/";

/// The path of each descriptor, by resource id.
#[derive(Default)]
pub(crate) struct FdNames {
    by_rep: HashMap<u32, String>,
    /// The trap's descriptor, once the guest listed its preopens.
    pub(crate) trap: Option<u32>,
    /// The trap, when this instance mounts it (no real mount at `/`).
    pub(crate) trap_dir: Option<wasmtime_wasi::filesystem::Dir>,
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

    /// Whether `rep` is the trap.
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
