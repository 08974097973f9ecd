//! Learning a policy: from the receipts of calls made under a ceiling
//! (`lingxi-wasm-run learn`), the narrowest policy file that covers what
//! they used: only the capabilities used, the narrowest folders the policy
//! format can mount (a file's folder, not the workspace), exact `host:port`
//! rules, the variables handed over. A comment above each rule names the
//! calls that needed it. What the sandbox refused is reported, never added.
//!
//! What the format cannot say narrower is said in the file: a folder
//! mounts its siblings too, and WASI hands a plugin its whole environment
//! at once, so the variables are those it was handed when it read it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[cfg(test)]
mod tests;
mod text;

use super::file::PolicySpec;
use crate::effects::{Receipt, Refusal};
use crate::storage::DATA_GUEST_PATH;

/// A learned policy.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Learned {
    /// The policy, as settings.
    pub spec: PolicySpec,
    /// The policy file: the settings, each rule under a comment naming the
    /// calls that needed it, and the refusals as comments at the end.
    pub text: String,
    /// What the sandbox refused, by call (not in the policy).
    pub refused: Vec<(String, Refusal)>,
}

/// A policy that cannot be learned from these receipts.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// A receipt left uses out: a policy from it could miss a rule.
    #[error(
        "{call} did more than a receipt lists ({omitted} uses left out); learn from fewer or smaller calls"
    )]
    Incomplete {
        /// The call.
        call: String,
        /// Uses left out.
        omitted: u64,
    },
}

/// One rule and the calls that needed it.
#[derive(Debug, Default)]
struct Rule {
    value: String,
    why: Vec<String>,
}

/// Rules of one key, in the order first needed.
#[derive(Debug, Default)]
struct Rules(Vec<Rule>);

impl Rules {
    fn add(&mut self, value: String, why: impl FnOnce() -> String) {
        let rule = match self.0.iter_mut().position(|r| r.value == value) {
            Some(i) => &mut self.0[i],
            None => {
                self.0.push(Rule {
                    value,
                    why: Vec::new(),
                });
                let last = self.0.len() - 1;
                &mut self.0[last]
            }
        };
        if rule.why.len() < 4 {
            let why = why();
            if !rule.why.contains(&why) {
                rule.why.push(why);
            }
        }
    }

    fn values(&self) -> Vec<String> {
        self.0.iter().map(|r| r.value.clone()).collect()
    }
}

/// A folder a call needed, and whether it wrote there.
struct Need {
    folder: PathBuf,
    write: bool,
    why: String,
}

/// Learns the narrowest policy covering `receipts`, which were recorded
/// under `ceiling` (its limits and storage root are kept).
pub fn learn(ceiling: &PolicySpec, receipts: &[Receipt]) -> Result<Learned, LearnError> {
    let mut needs = Vec::new();
    let (mut caps, mut net, mut env, mut storage): (Rules, Rules, Rules, Rules) =
        Default::default();
    let mut refused = Vec::new();
    for receipt in receipts {
        if receipt.totals.omitted > 0 {
            return Err(LearnError::Incomplete {
                call: receipt.call.clone(),
                omitted: receipt.totals.omitted,
            });
        }
        let call = crate::text::printable(&receipt.call).into_owned();
        files(&call, receipt, &mut needs, &mut storage);
        network(&call, receipt, &mut net);
        for name in &receipt.environment {
            env.add(name.clone(), || format!("{call} read its environment"));
        }
        refused.extend(receipt.refused.iter().map(|r| (call.clone(), r.clone())));
    }
    let writes = needs.iter().any(|n| n.write);
    let [workspace, read, write] = folders(needs);
    if let Some(first) = workspace.0.first() {
        let cap = if writes {
            "projectWrite"
        } else {
            "projectRead"
        };
        caps.add(cap.into(), || format!("{cap}: {}", first.why[0]));
    }
    if let Some(first) = net.0.first() {
        caps.add("networkAccess".into(), || {
            format!("networkAccess: {}", first.why[0])
        });
    }
    let spec = PolicySpec {
        grant: Some(match caps.values() {
            none if none.is_empty() => vec!["none".into()],
            some => some,
        }),
        workspace: workspace.0.first().map(|r| r.value.clone().into()),
        allow_read: read.values().into_iter().map(PathBuf::from).collect(),
        allow_write: write.values().into_iter().map(PathBuf::from).collect(),
        allow_net: net.values(),
        env: env.values(),
        no_storage: storage.0.is_empty(),
        data_root: ceiling.data_root.clone().filter(|_| !storage.0.is_empty()),
        timeout: ceiling.timeout,
        max_memory: ceiling.max_memory,
        storage_quota: ceiling.storage_quota,
        no_validate: ceiling.no_validate,
    };
    let sections = text::Sections {
        grant: &caps,
        workspace: &workspace,
        allow_read: &read,
        allow_write: &write,
        allow_net: &net,
        env: &env,
        storage: &storage,
    };
    let text = text::render(&spec, receipts.len(), &sections, &refused);
    Ok(Learned {
        spec,
        text,
        refused,
    })
}

/// The folders and storage a receipt's files needed.
fn files(call: &str, receipt: &Receipt, needs: &mut Vec<Need>, storage: &mut Rules) {
    for file in &receipt.files {
        let path = Path::new(&file.path);
        if path.starts_with(DATA_GUEST_PATH) {
            storage.add("used".into(), || format!("{call} used {}", file.path));
            continue;
        }
        if !path.is_absolute() {
            continue;
        }
        // A folder's own entries are changed in its parent; a file is
        // reached through the folder it is in.
        let entry_changed = file.created || file.removed;
        let directory = file.directory || file.listed;
        let (folder, write, did) = if entry_changed || (file.write && !directory) {
            let did = if file.created {
                "created"
            } else if file.removed {
                "removed"
            } else {
                "wrote"
            };
            (path.parent().unwrap_or(path), true, did)
        } else if directory {
            (path, false, if file.listed { "listed" } else { "read" })
        } else {
            (path.parent().unwrap_or(path), file.write, "read")
        };
        needs.push(Need {
            folder: folder.to_owned(),
            write,
            why: format!("{call} {did} {}", file.path),
        });
    }
}

/// The `allow-net` rules a receipt's network use needed.
fn network(call: &str, receipt: &Receipt, net: &mut Rules) {
    let host = |address: &str| match address.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        _ => address.to_owned(),
    };
    let mut connected = BTreeSet::new();
    for c in &receipt.connections {
        let name = c.name.clone().unwrap_or_else(|| host(&c.address));
        connected.insert(name.clone());
        net.add(format!("{name}:{}", c.port), || {
            format!(
                "{call} connected to {name} ({}:{}, {})",
                c.address, c.port, c.protocol
            )
        });
    }
    for r in &receipt.http {
        let (scheme, authority) = r
            .authority
            .split_once("://")
            .unwrap_or(("http", &r.authority));
        let default = if scheme == "https" { 443 } else { 80 };
        let (name, port) = match authority.rsplit_once(':') {
            Some((name, port)) if !name.ends_with(']') || port.parse::<u16>().is_ok() => {
                (name.to_owned(), port.parse().unwrap_or(default))
            }
            _ => (authority.to_owned(), default),
        };
        connected.insert(name.clone());
        net.add(format!("{name}:{port}"), || {
            format!("{call} sent {} {}", r.method, r.authority)
        });
    }
    // A name looked up and never connected to: its rule allows the lookup
    // and no connection (port 0).
    for lookup in &receipt.lookups {
        if !connected.contains(&lookup.name) {
            net.add(format!("{}:0", lookup.name), || {
                format!("{call} looked up {} (port 0: no connection)", lookup.name)
            });
        }
    }
}

/// The workspace (one folder), the extra read-only and read-write folders:
/// a folder under another needed one is left out, and the workspace is
/// the first folder written (or read, if none was).
fn folders(needs: Vec<Need>) -> [Rules; 3] {
    let writes: Vec<&Need> = needs.iter().filter(|n| n.write).collect();
    let reads: Vec<&Need> = needs.iter().filter(|n| !n.write).collect();
    let top = |list: &[&Need], others: &[&Need]| {
        let mut rules = Rules::default();
        for need in list {
            let covered = |other: &&Need| {
                other.folder != need.folder && need.folder.starts_with(&other.folder)
            };
            if list.iter().any(covered) || others.iter().any(|o| need.folder.starts_with(&o.folder))
            {
                continue;
            }
            let shown = need.folder.display().to_string();
            rules.add(shown, || need.why.clone());
        }
        rules
    };
    let mut write = top(&writes, &[]);
    let mut read = top(&reads, &writes);
    let mut workspace = Rules::default();
    if !write.0.is_empty() {
        workspace.0.push(write.0.remove(0));
    } else if !read.0.is_empty() {
        workspace.0.push(read.0.remove(0));
    }
    [workspace, read, write]
}
