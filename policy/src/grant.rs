//! What the user allows ([`Grant`]) and what a plugin gets of what it
//! declares ([`Policy`]: declared ∩ granted), with the lines a front end
//! says where the two differ.

use std::path::PathBuf;

use crate::Capability;
use crate::net::{self, NetRule};
use crate::settings::Setting;
use crate::under_root::UnderRoot;
use crate::wording::worded;

/// What the user allows, before it meets the manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grant {
    /// Capabilities the user grants; `None` grants whatever the manifest
    /// declares (the `lingxi-wasm-run` default), `Some(vec![])` grants nothing.
    pub capabilities: Option<Vec<Capability>>,
    /// Workspace root fixed by the user (`--workspace`). When absent, the root
    /// comes from `workspace.rootPath` of the latest snapshot (or a folder
    /// under it, [`UnderRoot::workspace`]).
    pub workspace: Option<PathBuf>,
    /// Folders named under the root each snapshot sends (`{root}/out`),
    /// resolved per snapshot by [`Grant::folders`].
    pub in_root: UnderRoot,
    /// Extra directories mounted read-only (`--allow-read`); only for a
    /// plugin that declares `projectRead` or `projectWrite`.
    pub allow_read: Vec<PathBuf>,
    /// Extra directories mounted read-write (`--allow-write`); only for a
    /// plugin that declares `projectWrite`.
    pub allow_write: Vec<PathBuf>,
    /// Destinations allowed under `networkAccess` (`--allow-net`); empty
    /// allows none (every destination is `*:*`).
    pub allow_net: Vec<NetRule>,
    /// Environment variables the plugin sees (`--env`); nothing else.
    pub env: Vec<(String, String)>,
    /// Secrets the plugin may ask for by name (`--secret`), with the hosts
    /// each is bound to; their values once a front end read them.
    pub secrets: Vec<crate::secrets::SecretGrant>,
    /// Root of the per-plugin data directories (`--data-root`); `None` gives
    /// the plugin no storage (unless `data_dir` is set).
    pub data_root: Option<PathBuf>,
    /// The plugin's own data directory, used as it is instead of
    /// `<data_root>/<plugin id>/`: the `PLUGIN_DATA` an Agent Plugins host
    /// chose for this installed instance. Absolute; created if missing.
    pub data_dir: Option<PathBuf>,
    /// Where a folder above is opened on the host when it was named
    /// through a link (the folder as named, and the folder it is): resolved
    /// once, when the policy was read (or the snapshot's root was), so a
    /// link a plugin could change later never moves a mount. A folder not
    /// listed is opened as named.
    pub mounted_from: std::collections::BTreeMap<PathBuf, PathBuf>,
}

/// How a directory is mounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    ReadOnly,
    /// Read and write.
    ReadWrite,
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
        // WASI has no process API: processExecution can never be honoured.
        let effective = Capability::ALL
            .into_iter()
            .filter(|c| *c != Capability::ProcessExecution)
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

    /// Whether the plugin's manifest declares `capability`.
    pub fn declares(&self, capability: Capability) -> bool {
        self.declared.contains(&capability)
    }

    /// The capabilities the plugin may use.
    pub fn effective(&self) -> &[Capability] {
        &self.effective
    }

    /// Declared but not granted: the plugin asked for them and will not get
    /// them (processExecution is reported by [`Policy::differences`] apart).
    pub fn withheld(&self) -> Vec<Capability> {
        Capability::ALL
            .into_iter()
            .filter(|c| *c != Capability::ProcessExecution)
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
    pub fn workspace_access(&self) -> Option<Access> {
        if self.allows(Capability::ProjectWrite) {
            Some(Access::ReadWrite)
        } else if self.allows(Capability::ProjectRead) {
            Some(Access::ReadOnly)
        } else {
            None
        }
    }

    /// One line per difference between what the plugin declares and what it
    /// gets, each naming the setting that would change it (in the process's
    /// [`wording`](crate::wording)). Empty when they agree.
    pub fn differences(&self) -> Vec<String> {
        let mut lines = self.choices();
        lines.extend(self.undeclared());
        lines
    }

    /// What the user chose to withhold of what the plugin declares, and
    /// what no sandbox gives: nothing is wrong, so a front end says these
    /// where grants are decided (`pack`, `install`, `inspect`), and a
    /// refused access names the grant when it matters. `projectRead` is
    /// not said withheld when `projectWrite` is granted: writing the
    /// project covers reading it.
    pub fn choices(&self) -> Vec<String> {
        let covered =
            |c: &Capability| *c == Capability::ProjectRead && self.allows(Capability::ProjectWrite);
        let mut lines: Vec<String> = self
            .withheld()
            .into_iter()
            .filter(|c| !covered(c))
            .map(|c| {
                format!(
                    "declares {} but it is not granted (grant it with {})",
                    c.wire_name(),
                    worded(Setting::Grant, c.wire_name())
                )
            })
            .collect();
        if self.declared.contains(&Capability::ProcessExecution) {
            lines.push(
                "declares processExecution, which is refused: WASI has no process API, so a sandboxed plugin cannot start processes"
                    .to_owned(),
            );
        }
        lines
    }

    /// Grants of capabilities the plugin does not declare: a mistake.
    fn undeclared(&self) -> Vec<String> {
        self.undeclared_grants()
            .into_iter()
            .map(|c| {
                format!(
                    "{} ignored: the plugin does not declare it",
                    worded(Setting::Grant, c.wire_name())
                )
            })
            .collect()
    }

    /// [`Policy::differences`] plus the grants that cannot take effect.
    pub fn report(&self, grant: &Grant) -> Vec<String> {
        let mut lines = self.choices();
        lines.extend(self.problems(grant));
        lines
    }

    /// Grants that cannot take effect: something the user asked for that
    /// the plugin will not get. A front end warns of these every time.
    pub fn problems(&self, grant: &Grant) -> Vec<String> {
        let mut lines = self.undeclared();
        let reads = !(grant.allow_read.is_empty() && grant.in_root.read.is_empty());
        let writes = !(grant.allow_write.is_empty() && grant.in_root.write.is_empty());
        if reads && self.workspace_access().is_none() {
            lines.push(format!(
                "{} ignored: the plugin does not have projectRead or projectWrite",
                Setting::AllowRead
            ));
        }
        if writes && !self.allows(Capability::ProjectWrite) {
            lines.push(format!(
                "{} ignored: the plugin does not have projectWrite",
                Setting::AllowWrite
            ));
        }
        if !grant.allow_net.is_empty() && !self.allows(Capability::NetworkAccess) {
            lines.push(format!(
                "{} ignored: the plugin does not have networkAccess",
                Setting::AllowNet
            ));
        }
        // A folder many things share, given on purpose or by mistake.
        let mounts = self.workspace_access().map(|_| Setting::Workspace);
        let fixed =
            (grant.workspace.iter()).filter_map(|d| Some((mounts?, d, self.workspace_access()?)));
        let read = (grant.allow_read.iter()).filter_map(|d| {
            Some((
                Setting::AllowRead,
                d,
                self.workspace_access().map(|_| Access::ReadOnly)?,
            ))
        });
        let write = (grant.allow_write.iter())
            .filter(|_| self.allows(Capability::ProjectWrite))
            .map(|d| (Setting::AllowWrite, d, Access::ReadWrite));
        for (setting, dir, access) in fixed.chain(read).chain(write) {
            if crate::places::shared_place(dir) {
                let what = match access {
                    Access::ReadOnly => "read",
                    Access::ReadWrite => "read and write",
                };
                lines.push(format!(
                    "{} lets the plugin {what} every file below it (it is /, a folder directly under it, or holds the home folder); give a project's folder instead, unless that is meant",
                    worded(setting, dir.display())
                ));
            }
        }
        if grant.allow_net.is_empty() && self.allows(Capability::NetworkAccess) {
            lines.push(format!(
                "networkAccess is granted but no destination is, so the plugin reaches nothing; allow each with {}, or every destination with {}",
                worded(Setting::AllowNet, "HOST:PORT"),
                worded(Setting::AllowNet, net::ANY_DESTINATION)
            ));
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
            ..Grant::default()
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
            // WASI has no process API: never effective.
            (vec![ProcessExecution], None, vec![]),
        ];
        for (declared, granted, effective) in cases {
            let p = Policy::decide(&declared, &grant(granted.clone()));
            assert_eq!(p.effective(), &effective[..], "{declared:?} ∩ {granted:?}");
        }
    }

    #[test]
    fn workspace_mount_follows_the_strongest_effective_capability() {
        let p = Policy::decide(&[ProjectRead], &grant(None));
        assert!(matches!(p.workspace_access(), Some(Access::ReadOnly)));
        let p = Policy::decide(&[ProjectRead, ProjectWrite], &grant(None));
        assert!(matches!(p.workspace_access(), Some(Access::ReadWrite)));
        let p = Policy::decide(&[ProjectRead], &grant(Some(vec![])));
        assert!(p.workspace_access().is_none());
    }

    #[test]
    fn differences_name_the_setting() {
        // In the library's own words (the launcher's flags are tested there).
        let p = Policy::decide(&[ProjectRead], &grant(Some(vec![NetworkAccess])));
        let lines = p.differences();
        assert!(
            lines[0].contains(r#"grant it with grant = ["projectRead"]"#),
            "{lines:?}"
        );
        assert!(
            lines[1].contains(r#"grant = ["networkAccess"] ignored"#),
            "{lines:?}"
        );
    }
}
