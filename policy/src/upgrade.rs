//! No silent escalation: what a plugin could reach under one version and
//! grant ([`Reach`]), and what a replacement could reach that the one in
//! place could not ([`increases`]). `install` of an installed plugin id
//! and the host's `PluginSet::replace` refuse any
//! increase unless it is accepted explicitly; a decrease or no change goes
//! through.
//!
//! Reach is effective reach: a capability counts only if the plugin
//! declares it and it is granted; folders only under the capability that
//! mounts them; hosts only under `networkAccess`.

use std::fmt;
use std::path::{Path, PathBuf};

use super::file::{PolicySpec, parse_capabilities};
use super::under_root;
use super::{Grant, Policy};
use crate::Capability;

/// A folder as a policy names it: fixed, or under the root the host
/// sends (`{root}/out`; the host's root itself is `{root}`).
#[derive(Debug, Clone, PartialEq)]
enum Folder {
    Fixed(PathBuf),
    UnderRoot(PathBuf),
}

impl Folder {
    /// The folder a setting names (lexically: nothing is read from disk).
    /// A `{root}` form that could leave the root is taken as written, so
    /// that it covers nothing but itself.
    fn of(dir: &Path) -> Folder {
        match under_root::parse(dir) {
            Some(Ok(relative)) => Folder::UnderRoot(relative),
            Some(Err(())) => Folder::Fixed(dir.to_owned()),
            None => Folder::Fixed(lexical(dir)),
        }
    }

    /// Whether everything in `other` is in `self` too.
    fn covers(&self, other: &Folder) -> bool {
        match (self, other) {
            (Folder::Fixed(a), Folder::Fixed(b)) => b.starts_with(a),
            (Folder::UnderRoot(a), Folder::UnderRoot(b)) => b.starts_with(a),
            _ => false,
        }
    }
}

impl fmt::Display for Folder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Folder::Fixed(dir) => write!(f, "{}", dir.display()),
            Folder::UnderRoot(relative) if relative.as_os_str().is_empty() => {
                f.write_str("the host's workspace root")
            }
            Folder::UnderRoot(relative) => f.write_str(&under_root::shown(relative)),
        }
    }
}

/// What a plugin could reach.
#[derive(Debug, Clone, PartialEq)]
pub struct Reach {
    capabilities: Vec<Capability>,
    /// The workspace, if the project is mounted.
    workspace: Option<Folder>,
    read: Vec<Folder>,
    write: Vec<Folder>,
    /// `None`: every destination (a `*:*` rule); an empty list: none.
    net: Option<Vec<String>>,
    env: Vec<String>,
    /// Secrets by name, each with the hosts it is bound to (empty: it may
    /// go wherever the network allow-list allows).
    secrets: Vec<(String, Vec<String>)>,
    /// The data directory's place, if it has storage.
    storage: Option<String>,
    validated: bool,
}

/// One thing a replacement could reach that the plugin in place could not.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Increase {
    /// A capability (declared and granted).
    Capability(String),
    /// The workspace: another folder.
    Workspace {
        /// As written: a path, `{root}/DIR`, or the host's workspace root.
        shown: String,
        /// Whether it is a fixed folder, mounted whatever project the
        /// host opens.
        fixed: bool,
    },
    /// A folder mounted read-only (as written).
    ReadFolder(String),
    /// A folder mounted read-write (as written).
    WriteFolder(String),
    /// A network rule.
    Host(String),
    /// Every destination (the allow-list was dropped).
    EveryHost,
    /// An environment variable.
    Variable(String),
    /// A secret, by name.
    Secret(String),
    /// A secret may go to one more host.
    SecretHost {
        /// The secret.
        name: String,
        /// The host it may now be sent to.
        host: String,
    },
    /// A secret bound to hosts is bound no more.
    SecretUnbound(String),
    /// A data directory (or another one).
    Storage(String),
    /// Tool arguments no longer validated against their schemas.
    ValidationOff,
}

impl fmt::Display for Increase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Increase::Capability(c) => write!(f, "capability {c}"),
            Increase::Workspace { shown, .. } => write!(f, "workspace {shown}"),
            Increase::ReadFolder(d) => write!(f, "reads folder {d}"),
            Increase::WriteFolder(d) => write!(f, "writes folder {d}"),
            Increase::Host(rule) => write!(f, "network destination {rule}"),
            Increase::EveryHost => f.write_str("every network destination (*:*)"),
            Increase::Variable(v) => write!(f, "environment variable {v}"),
            Increase::Secret(name) => write!(f, "secret {name}"),
            Increase::SecretHost { name, host } => write!(f, "secret {name} sent to {host}"),
            Increase::SecretUnbound(name) => {
                write!(f, "secret {name} no longer bound to its hosts")
            }
            Increase::Storage(s) => write!(f, "storage {s}"),
            Increase::ValidationOff => {
                f.write_str("tool arguments not validated against their schemas")
            }
        }
    }
}

impl Reach {
    /// The reach of a plugin declaring `declared` under `grant`.
    pub fn of_grant(declared: &[Capability], grant: &Grant, validated: bool) -> Reach {
        let storage = match (&grant.data_dir, &grant.data_root) {
            (Some(dir), _) => Some(dir.display().to_string()),
            (None, Some(root)) => Some(format!("under {}", root.display())),
            (None, None) => None,
        };
        fn fixed(dirs: &[PathBuf]) -> impl Iterator<Item = Folder> + '_ {
            dirs.iter().map(|d| Folder::Fixed(lexical(d)))
        }
        fn in_root(dirs: &[PathBuf]) -> impl Iterator<Item = Folder> + '_ {
            dirs.iter().cloned().map(Folder::UnderRoot)
        }
        let workspace = match (&grant.workspace, &grant.in_root.workspace) {
            (Some(dir), _) => Folder::Fixed(lexical(dir)),
            (None, Some(relative)) => Folder::UnderRoot(relative.clone()),
            (None, None) => Folder::UnderRoot(PathBuf::new()),
        };
        Reach::new(
            Policy::decide(declared, grant),
            Parts {
                workspace,
                read: fixed(&grant.allow_read)
                    .chain(in_root(&grant.in_root.read))
                    .collect(),
                write: fixed(&grant.allow_write)
                    .chain(in_root(&grant.in_root.write))
                    .collect(),
                net: grant.allow_net.iter().map(ToString::to_string).collect(),
                env: grant.env.iter().map(|(k, _)| k.clone()).collect(),
                secrets: (grant.secrets.iter())
                    .map(|s| (s.name.clone(), s.hosts.clone()))
                    .collect(),
                storage,
                validated,
            },
        )
    }

    /// The reach of a plugin declaring `declared` (wire names) under the
    /// settings `spec` (as a packed file holds them: nothing is read from
    /// the filesystem). Unknown names count as nothing.
    pub fn of_spec(declared: &[String], spec: &PolicySpec) -> Reach {
        // Every setting by name: one added to `settings.rs` does not
        // compile until it is compared here or said not to widen a reach.
        let PolicySpec {
            grant,
            workspace,
            allow_read,
            allow_write,
            allow_net,
            env,
            secret,
            data_root,
            no_storage,
            no_validate,
            // Limits: how much, not what, a plugin may reach.
            timeout: _,
            max_memory: _,
            storage_quota: _,
            task_timeout: _,
            max_tasks: _,
        } = spec;
        let declared = parse_capabilities(declared).unwrap_or_default();
        let granted = grant.as_deref().map(parse_capabilities);
        let grant = Grant {
            capabilities: granted.map(Result::unwrap_or_default),
            ..Grant::default()
        };
        let storage = match (no_storage, data_root) {
            (true, _) => None,
            (false, Some(root)) => Some(format!("under {}", root.display())),
            (false, None) => Some("under the default data root".to_owned()),
        };
        let env = env.iter();
        Reach::new(
            Policy::decide(&declared, &grant),
            Parts {
                workspace: match workspace {
                    Some(dir) => Folder::of(dir),
                    None => Folder::UnderRoot(PathBuf::new()),
                },
                read: allow_read.iter().map(|d| Folder::of(d)).collect(),
                write: allow_write.iter().map(|d| Folder::of(d)).collect(),
                net: allow_net.clone(),
                env: env
                    .map(|e| e.split('=').next().unwrap_or("").to_owned())
                    .collect(),
                // Unreadable entries count as unbound: all they could be.
                secrets: crate::secrets::parse_secret_rules(secret)
                    .unwrap_or_else(|_| unbound(secret))
                    .into_iter()
                    .map(|s| (s.name, s.hosts))
                    .collect(),
                storage,
                validated: !no_validate,
            },
        )
    }

    /// Nothing at all: what an installed file that cannot be read is
    /// taken to reach, so that everything its replacement reaches is new.
    pub fn nothing() -> Reach {
        Reach {
            capabilities: Vec::new(),
            workspace: None,
            read: Vec::new(),
            write: Vec::new(),
            net: Some(Vec::new()),
            env: Vec::new(),
            secrets: Vec::new(),
            storage: None,
            validated: true,
        }
    }

    fn new(policy: Policy, parts: Parts) -> Reach {
        let allows = |c| policy.allows(c);
        let mounts = allows(Capability::ProjectRead) || allows(Capability::ProjectWrite);
        let writes = allows(Capability::ProjectWrite);
        Reach {
            capabilities: policy.effective().to_vec(),
            workspace: Some(parts.workspace).filter(|_| mounts),
            read: if mounts { parts.read } else { Vec::new() },
            write: if writes { parts.write } else { Vec::new() },
            net: match allows(Capability::NetworkAccess) {
                true if parts.net.iter().any(|rule| every_destination(rule)) => None,
                true => Some(parts.net),
                false => Some(Vec::new()),
            },
            env: parts.env,
            secrets: parts.secrets,
            storage: parts.storage,
            validated: parts.validated,
        }
    }
}

/// Whether `rule` (as written) allows every destination.
fn every_destination(rule: &str) -> bool {
    rule.parse::<super::NetRule>()
        .is_ok_and(|rule| rule.to_string() == super::net::ANY_DESTINATION)
}

/// The settings a [`Reach`] is made of.
struct Parts {
    workspace: Folder,
    read: Vec<Folder>,
    write: Vec<Folder>,
    net: Vec<String>,
    env: Vec<String>,
    secrets: Vec<(String, Vec<String>)>,
    storage: Option<String>,
    validated: bool,
}

/// Every name in `written`, unbound (what entries that cannot be read
/// could reach at most).
fn unbound(written: &[String]) -> Vec<crate::secrets::SecretGrant> {
    let names = written.iter().map(|e| e.split('@').next().unwrap_or(e));
    names
        .map(|name| crate::secrets::SecretGrant {
            name: name.to_owned(),
            hosts: Vec::new(),
            value: None,
            unread: None,
        })
        .collect()
}

/// `dir` with `.` and `..` taken out as written (`/a/b/../c` is `/a/c`).
fn lexical(dir: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in dir.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            part => out.push(part),
        }
    }
    out
}

/// What `old` could reach that `new` cannot: [`increases`] the other way.
pub fn decreases(old: &Reach, new: &Reach) -> Vec<Increase> {
    increases(new, old)
}

/// What `new` could reach that `old` could not (empty: no increase).
pub fn increases(old: &Reach, new: &Reach) -> Vec<Increase> {
    let mut more = Vec::new();
    for c in &new.capabilities {
        // Writing the project includes reading it.
        let covered = old.capabilities.contains(c)
            || (*c == Capability::ProjectRead
                && old.capabilities.contains(&Capability::ProjectWrite));
        if !covered {
            more.push(Increase::Capability(c.wire_name().to_owned()));
        }
    }
    let writes = |r: &Reach| r.capabilities.contains(&Capability::ProjectWrite);
    // What `old` mounted for reading (`write`: for writing).
    let covered = |folder: &Folder, write: bool| {
        let workspace = old.workspace.iter().filter(|_| !write || writes(old));
        let extra = old.write.iter().chain(old.read.iter().filter(|_| !write));
        workspace.chain(extra).any(|o| o.covers(folder))
    };
    if let (Some(new_ws), Some(old_ws)) = (&new.workspace, &old.workspace)
        && !old_ws.covers(new_ws)
    {
        more.push(Increase::Workspace {
            shown: new_ws.to_string(),
            fixed: matches!(new_ws, Folder::Fixed(_)),
        });
    }
    for dir in &new.write {
        if !covered(dir, true) {
            more.push(Increase::WriteFolder(dir.to_string()));
        }
    }
    for dir in &new.read {
        if !covered(dir, false) {
            more.push(Increase::ReadFolder(dir.to_string()));
        }
    }
    let networked = new.capabilities.contains(&Capability::NetworkAccess)
        && old.capabilities.contains(&Capability::NetworkAccess);
    match (&old.net, &new.net) {
        (Some(_), None) if networked => more.push(Increase::EveryHost),
        (Some(old), Some(new)) if networked => {
            let added = new.iter().filter(|rule| !old.contains(rule));
            more.extend(added.cloned().map(Increase::Host));
        }
        _ => {}
    }
    for name in &new.env {
        if !old.env.contains(name) {
            more.push(Increase::Variable(name.clone()));
        }
    }
    for (name, hosts) in &new.secrets {
        match old.secrets.iter().find(|(old_name, _)| old_name == name) {
            None => more.push(Increase::Secret(name.clone())),
            Some((_, old_hosts)) if old_hosts.is_empty() => {}
            Some(_) if hosts.is_empty() => more.push(Increase::SecretUnbound(name.clone())),
            Some((_, old_hosts)) => more.extend(
                (hosts.iter())
                    .filter(|h| !old_hosts.contains(h))
                    .map(|host| Increase::SecretHost {
                        name: name.clone(),
                        host: host.clone(),
                    }),
            ),
        }
    }
    if let Some(storage) = &new.storage
        && old.storage.as_ref() != Some(storage)
    {
        more.push(Increase::Storage(storage.clone()));
    }
    if old.validated && !new.validated {
        more.push(Increase::ValidationOff);
    }
    more
}

#[cfg(test)]
mod tests;
