//! The capability policy: the one place that decides what a plugin may touch.
//!
//! A capability is effective only if the plugin declares it in its manifest
//! AND the user grants it. Everything else is denied: no environment, no
//! arguments, no host stdin, no network, no filesystem. Effective capabilities
//! become WASI grants in [`Policy::apply`].

use std::path::{Path, PathBuf};

use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::bindings::lingxi::plugin::types::Capability;

/// What the user allows, before it meets the manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grant {
    /// Capabilities the user grants; `None` grants whatever the manifest
    /// declares (the `lingxi-wasm-run` default), `Some(vec![])` grants nothing.
    pub capabilities: Option<Vec<Capability>>,
    /// Workspace root fixed by the user (`--workspace`). When absent, the root
    /// comes from `workspace.rootPath` of the latest snapshot.
    pub workspace: Option<PathBuf>,
}

/// The decision for one plugin: declared ∩ granted.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    declared: Vec<Capability>,
    granted: Vec<Capability>,
    effective: Vec<Capability>,
}

impl Policy {
    /// Decides the effective capabilities of a plugin.
    pub fn decide(declared: &[Capability], grant: &Grant) -> Policy {
        let mut declared_set: Vec<Capability> = Vec::new();
        for c in declared {
            if !declared_set.contains(c) {
                declared_set.push(*c);
            }
        }
        let granted = grant
            .capabilities
            .clone()
            .unwrap_or_else(|| declared_set.clone());
        let effective = Capability::ALL
            .into_iter()
            .filter(|c| declared_set.contains(c) && granted.contains(c))
            .collect();
        Policy {
            declared: declared_set,
            granted,
            effective,
        }
    }

    /// Whether the plugin may use `capability`.
    pub fn allows(&self, capability: Capability) -> bool {
        self.effective.contains(&capability)
    }

    /// The capabilities the plugin may use.
    pub fn effective(&self) -> &[Capability] {
        &self.effective
    }

    /// Declared but not granted: the plugin asked for them and will not get them.
    pub fn withheld(&self) -> Vec<Capability> {
        Capability::ALL
            .into_iter()
            .filter(|c| self.declared.contains(c) && !self.effective.contains(c))
            .collect()
    }

    /// Granted but not declared: ignored, a plugin only gets what it declares.
    pub fn undeclared_grants(&self) -> Vec<Capability> {
        Capability::ALL
            .into_iter()
            .filter(|c| self.granted.contains(c) && !self.declared.contains(c))
            .collect()
    }

    /// How the workspace root is mounted, if at all.
    pub fn workspace_perms(&self) -> Option<FsPerms> {
        if self.allows(Capability::ProjectWrite) {
            Some(FsPerms::ReadWrite)
        } else if self.allows(Capability::ProjectRead) {
            Some(FsPerms::ReadOnly)
        } else {
            None
        }
    }

    /// Turns the decision into WASI grants on a context that starts out
    /// denying everything. The workspace root is mounted at the same absolute
    /// path inside the guest, so `workspace.rootPath` works unchanged. A root
    /// that cannot be opened is logged and left out; the plugin still runs.
    pub fn apply(&self, wasi: &mut WasiCtxBuilder, plugin_id: &str, workspace: Option<&Path>) {
        if let (Some(perms), Some(root)) = (self.workspace_perms(), workspace) {
            let guest_path = root.to_string_lossy();
            if !root.is_absolute() {
                tracing::warn!(
                    "[{plugin_id}] workspace root {} is not absolute; not mounted (pass --workspace DIR)",
                    root.display()
                );
            } else if let Err(e) = wasi.preopened_dir(root, guest_path.as_ref(), perms) {
                tracing::warn!(
                    "[{plugin_id}] cannot mount workspace root {}: {e}; the plugin runs without file access",
                    root.display()
                );
            }
        }
        if self.allows(Capability::NetworkAccess) {
            wasi.inherit_network()
                .allow_tcp(true)
                .allow_udp(true)
                .allow_ip_name_lookup(true);
        } else {
            wasi.allow_tcp(false)
                .allow_udp(false)
                .allow_ip_name_lookup(false);
        }
    }

    /// One line per difference between what the plugin declares and what it
    /// gets, each naming the flag that would change it. Empty when they agree.
    pub fn differences(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .withheld()
            .into_iter()
            .map(|c| {
                format!(
                    "declares {} but it is not granted (grant it with --grant {})",
                    c.wire_name(),
                    c.wire_name()
                )
            })
            .collect();
        for c in self.undeclared_grants() {
            lines.push(format!(
                "--grant {} ignored: the plugin does not declare it",
                c.wire_name()
            ));
        }
        if self.allows(Capability::ProcessExecution) {
            lines.push(
                "processExecution is granted but WASI has no process API: the plugin cannot start processes"
                    .to_owned(),
            );
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Capability::*;

    fn grant(c: Option<Vec<Capability>>) -> Grant {
        Grant {
            capabilities: c,
            workspace: None,
        }
    }

    #[test]
    fn declared_and_granted_table() {
        // (declared, granted, effective)
        type Case = (Vec<Capability>, Option<Vec<Capability>>, Vec<Capability>);
        let cases: Vec<Case> = vec![
            (vec![], None, vec![]),
            (vec![ProjectRead], None, vec![ProjectRead]),
            (vec![ProjectRead], Some(vec![]), vec![]),
            (vec![ProjectRead], Some(vec![ProjectWrite]), vec![]),
            (
                vec![ProjectRead, NetworkAccess],
                Some(vec![NetworkAccess]),
                vec![NetworkAccess],
            ),
            (vec![], Some(Capability::ALL.to_vec()), vec![]),
            (vec![ProjectWrite, ProjectWrite], None, vec![ProjectWrite]),
        ];
        for (declared, granted, effective) in cases {
            let p = Policy::decide(&declared, &grant(granted.clone()));
            assert_eq!(p.effective(), &effective[..], "{declared:?} ∩ {granted:?}");
        }
    }

    #[test]
    fn workspace_mount_follows_the_strongest_effective_capability() {
        let p = Policy::decide(&[ProjectRead], &grant(None));
        assert!(matches!(p.workspace_perms(), Some(FsPerms::ReadOnly)));
        let p = Policy::decide(&[ProjectRead, ProjectWrite], &grant(None));
        assert!(matches!(p.workspace_perms(), Some(FsPerms::ReadWrite)));
        let p = Policy::decide(&[ProjectRead], &grant(Some(vec![])));
        assert!(p.workspace_perms().is_none());
    }

    #[test]
    fn differences_name_the_flag() {
        let p = Policy::decide(&[ProjectRead], &grant(Some(vec![NetworkAccess])));
        let lines = p.differences();
        assert!(lines[0].contains("--grant projectRead"), "{lines:?}");
        assert!(
            lines[1].contains("--grant networkAccess ignored"),
            "{lines:?}"
        );
    }
}
