//! No silent escalation: what a plugin could reach under one version and
//! grant ([`Reach`]), and what a replacement could reach that the one in
//! place could not ([`increases`]). `install` of an installed plugin id
//! and [`PluginSet::replace`](crate::PluginSet::replace) refuse any
//! increase unless it is accepted explicitly; a decrease or no change goes
//! through.
//!
//! Reach is effective reach: a capability counts only if the plugin
//! declares it and it is granted; folders only under the capability that
//! mounts them; hosts only under `networkAccess`.

use std::fmt;
use std::path::{Path, PathBuf};

use super::file::{PolicySpec, parse_capabilities};
use super::{Grant, Policy};
use crate::bindings::lingxi::plugin::types::Capability;

/// What a plugin could reach.
#[derive(Debug, Clone, PartialEq)]
pub struct Reach {
    capabilities: Vec<Capability>,
    /// `None`: the host's workspace root; else the folder pinned.
    workspace: Option<PathBuf>,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    /// `None`: every destination (a `*:*` rule); an empty list: none.
    net: Option<Vec<String>>,
    env: Vec<String>,
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
    /// The workspace: another pinned folder, or the host's root instead.
    Workspace(String),
    /// A folder mounted read-only.
    ReadFolder(PathBuf),
    /// A folder mounted read-write.
    WriteFolder(PathBuf),
    /// A network rule.
    Host(String),
    /// Every destination (the allow-list was dropped).
    EveryHost,
    /// An environment variable.
    Variable(String),
    /// A data directory (or another one).
    Storage(String),
    /// Tool arguments no longer validated against their schemas.
    ValidationOff,
}

impl fmt::Display for Increase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Increase::Capability(c) => write!(f, "capability {c}"),
            Increase::Workspace(w) => write!(f, "workspace {w}"),
            Increase::ReadFolder(d) => write!(f, "reads folder {}", d.display()),
            Increase::WriteFolder(d) => write!(f, "writes folder {}", d.display()),
            Increase::Host(rule) => write!(f, "network destination {rule}"),
            Increase::EveryHost => f.write_str("every network destination (*:*)"),
            Increase::Variable(v) => write!(f, "environment variable {v}"),
            Increase::Storage(s) => write!(f, "storage {s}"),
            Increase::ValidationOff => f.write_str("tool arguments no longer validated"),
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
        Reach::new(
            Policy::decide(declared, grant),
            Parts {
                workspace: grant.workspace.clone(),
                read: grant.allow_read.clone(),
                write: grant.allow_write.clone(),
                net: grant.allow_net.iter().map(ToString::to_string).collect(),
                env: grant.env.iter().map(|(k, _)| k.clone()).collect(),
                storage,
                validated,
            },
        )
    }

    /// The reach of a plugin declaring `declared` (wire names) under the
    /// settings `spec` (as a packed file holds them: nothing is read from
    /// the filesystem). Unknown names count as nothing.
    pub fn of_spec(declared: &[String], spec: &PolicySpec) -> Reach {
        let declared = parse_capabilities(declared).unwrap_or_default();
        let granted = spec.grant.as_deref().map(parse_capabilities);
        let grant = Grant {
            capabilities: granted.map(Result::unwrap_or_default),
            ..Grant::default()
        };
        let storage = match (spec.no_storage, &spec.data_root) {
            (true, _) => None,
            (false, Some(root)) => Some(format!("under {}", root.display())),
            (false, None) => Some("under the default data root".to_owned()),
        };
        let env = spec.env.iter();
        Reach::new(
            Policy::decide(&declared, &grant),
            Parts {
                workspace: spec.workspace.clone(),
                read: spec.allow_read.clone(),
                write: spec.allow_write.clone(),
                net: spec.allow_net.clone(),
                env: env
                    .map(|e| e.split('=').next().unwrap_or("").to_owned())
                    .collect(),
                storage,
                validated: !spec.no_validate,
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
            storage: None,
            validated: true,
        }
    }

    fn new(policy: Policy, parts: Parts) -> Reach {
        let allows = |c| policy.allows(c);
        let mounts = allows(Capability::ProjectRead) || allows(Capability::ProjectWrite);
        let writes = allows(Capability::ProjectWrite);
        let normal = |dirs: Vec<PathBuf>| dirs.iter().map(|d| lexical(d)).collect();
        Reach {
            capabilities: policy.effective().to_vec(),
            workspace: parts.workspace.filter(|_| mounts).map(|d| lexical(&d)),
            read: if mounts {
                normal(parts.read)
            } else {
                Vec::new()
            },
            write: if writes {
                normal(parts.write)
            } else {
                Vec::new()
            },
            net: match allows(Capability::NetworkAccess) {
                true if parts.net.iter().any(|rule| every_destination(rule)) => None,
                true => Some(parts.net),
                false => Some(Vec::new()),
            },
            env: parts.env,
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
    workspace: Option<PathBuf>,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    net: Vec<String>,
    env: Vec<String>,
    storage: Option<String>,
    validated: bool,
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
    let mounts = |r: &Reach| {
        r.capabilities
            .iter()
            .any(|c| matches!(c, Capability::ProjectRead | Capability::ProjectWrite))
    };
    if mounts(new) && mounts(old) && new.workspace != old.workspace {
        let narrower = match (&old.workspace, &new.workspace) {
            (Some(old), Some(new)) => new.starts_with(old),
            _ => false,
        };
        if !narrower {
            let shown = match &new.workspace {
                Some(dir) => dir.display().to_string(),
                None => "the host's workspace root".to_owned(),
            };
            more.push(Increase::Workspace(shown));
        }
    }
    let under = |dir: &Path, list: &[PathBuf]| list.iter().any(|o| dir.starts_with(o));
    for dir in &new.write {
        if !under(dir, &old.write) {
            more.push(Increase::WriteFolder(dir.clone()));
        }
    }
    for dir in &new.read {
        if !under(dir, &old.read) && !under(dir, &old.write) {
            more.push(Increase::ReadFolder(dir.clone()));
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
