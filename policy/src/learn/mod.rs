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

use std::path::PathBuf;

mod needs;
#[cfg(test)]
mod tests;
mod text;

use super::file::PolicySpec;
use crate::receipt::{Receipt, Refusal};

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
    /// A receipt holds a cut name: a rule from it would name another
    /// folder or host.
    #[error(
        "{call} used names longer than a receipt keeps ({cut} cut); no policy is learned from a cut name"
    )]
    NameCut {
        /// The call.
        call: String,
        /// Names cut.
        cut: u64,
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

/// The project the calls ran in. Folders under its root are written
/// under the root the host sends (`{root}/out`), so that the policy serves
/// every project a host opens, not only this one.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The root (the ceiling's workspace).
    pub root: PathBuf,
    /// Why the policy must keep the root whole, if it must: a tool called
    /// while learning resolves path parameters against it, so a narrower
    /// folder would change what its paths mean.
    pub keep_whole: Option<String>,
}

/// Learns the narrowest policy covering `receipts`, which were recorded
/// under `ceiling` (its limits, storage root and variables' values are
/// kept) in `project`.
pub fn learn(
    ceiling: &PolicySpec,
    receipts: &[Receipt],
    project: Option<&Project>,
) -> Result<Learned, LearnError> {
    let mut needs = Vec::new();
    let (mut caps, mut net, mut env, mut storage): (Rules, Rules, Rules, Rules) =
        Default::default();
    let mut secrets = Rules::default();
    let mut refused = Vec::new();
    let mut looked_up = Vec::new();
    for receipt in receipts {
        if receipt.totals.omitted > 0 {
            return Err(LearnError::Incomplete {
                call: receipt.call.clone(),
                omitted: receipt.totals.omitted,
            });
        }
        if receipt.totals.names_cut > 0 {
            return Err(LearnError::NameCut {
                call: receipt.call.clone(),
                cut: receipt.totals.names_cut,
            });
        }
        let call = crate::text::printable(&receipt.call).into_owned();
        needs::files(&call, receipt, &mut needs, &mut storage);
        needs::network(&call, receipt, &mut net);
        looked_up.extend(
            receipt
                .lookups
                .iter()
                .map(|l| (call.clone(), l.name.clone())),
        );
        for name in &receipt.environment {
            // As the ceiling gave it: a value given there stays, so the
            // policy works where the launcher's environment lacks it.
            let entry = ceiling
                .env
                .iter()
                .find(|e| e.split('=').next() == Some(name.as_str()))
                .cloned()
                .unwrap_or_else(|| name.clone());
            env.add(entry, || format!("{call} read its environment"));
        }
        for name in &receipt.secrets {
            // As the ceiling gave it: a secret bound to hosts stays bound
            // to them (every entry of its name); never a value.
            let bound: Vec<&String> = (ceiling.secret.iter())
                .filter(|e| e.split('@').next() == Some(name.as_str()))
                .collect();
            let entries = match bound.is_empty() {
                true => vec![name.clone()],
                false => bound.into_iter().cloned().collect(),
            };
            for entry in entries {
                secrets.add(entry, || format!("{call} read the secret"));
            }
        }
        refused.extend(receipt.refused.iter().map(|r| (call.clone(), r.clone())));
    }
    needs::lookups_only(&looked_up, &mut net);
    let writes = needs.iter().any(|n| n.write);
    let [workspace, read, write] = needs::folders(needs, project);
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
        secret: secrets.values(),
        no_storage: storage.0.is_empty(),
        data_root: ceiling.data_root.clone().filter(|_| !storage.0.is_empty()),
        timeout: ceiling.timeout,
        max_memory: ceiling.max_memory,
        storage_quota: ceiling.storage_quota,
        no_validate: ceiling.no_validate,
        task_timeout: ceiling.task_timeout,
        max_tasks: ceiling.max_tasks,
    };
    let sections = text::Sections {
        grant: &caps,
        workspace: &workspace,
        allow_read: &read,
        allow_write: &write,
        allow_net: &net,
        env: &env,
        secret: &secrets,
        storage: &storage,
    };
    let text = text::render(&spec, receipts.len(), &sections, &refused);
    Ok(Learned {
        spec,
        text,
        refused,
    })
}
