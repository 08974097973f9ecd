//! Which grants a plugin that is packed, installed or exported gets, and
//! how they are shown: those stated with flags now, or (`--keep-grants`)
//! the ones packed into the input, every one printed; the same lines for
//! `inspect`, `list` and the changes an install makes; and the refusal of
//! a replacement that would reach more than the plugin it replaces.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use lingxi_wasm_host::pack;
use lingxi_wasm_host::pack::PackHeader;
use lingxi_wasm_host::{Limits, Setting};
use lingxi_wasm_host::{PolicySpec, printable};
use lingxi_wasm_policy::file::parse_capabilities;

use crate::cli::GrantArgs;

/// Which grants an installed plugin gets.
pub enum Grants {
    /// The ones packed into the input file (`--keep-grants`), printed in full.
    Keep,
    /// The ones stated with flags now (none: what the manifest declares, no
    /// extra folders, every default limit).
    Given(Box<PolicySpec>),
}

impl Grants {
    /// `--keep-grants`, or the grant flags; not both.
    pub fn choose(keep: bool, flags: &GrantArgs) -> Result<Grants> {
        match (keep, flags.any()) {
            (true, true) => bail!(
                "--keep-grants keeps the grants packed into the file, so it cannot be combined with grant flags; drop one or the other"
            ),
            (true, false) => Ok(Grants::Keep),
            (false, _) => Ok(Grants::Given(Box::new(flags.spec()?))),
        }
    }
}

/// The component to pack and its grants: those stated with flags now, or
/// (`--keep-grants`) the ones packed into `input`, every one printed. The
/// grants inside a packed file apply only if the user asks for them: none
/// is carried over unseen.
pub fn chosen(
    input: &str,
    file: Vec<u8>,
    existing: Option<pack::Packed>,
    grants: Grants,
) -> Result<(Vec<u8>, PolicySpec)> {
    Ok(match (existing, grants) {
        (Some(existing), Grants::Keep) => {
            println!("keeping the grants packed into {input}:");
            for line in describe(&existing.header.policy) {
                println!("  {line}");
            }
            (
                existing.component().to_vec(),
                existing.header.policy.clone(),
            )
        }
        (Some(existing), Grants::Given(spec)) => {
            if existing.header.policy != PolicySpec::default() {
                eprintln!(
                    "note: the grants packed into {input} are not kept; state them again with flags, or pass --keep-grants to keep them (see them with `lingxi-wasm-run inspect {input}`)"
                );
            }
            (existing.component().to_vec(), *spec)
        }
        (None, Grants::Keep) => bail!(
            "--keep-grants keeps the grants of a packed plugin, but {input} is not one; give grant flags instead"
        ),
        (None, Grants::Given(spec)) => (file, *spec),
    })
}

/// Refuses to replace what is installed (or exported) at `target` by
/// `new` if `new` could reach anything the plugin there could not (a
/// capability it now declares or is granted, a folder, a host rule, a
/// variable, storage), unless `accept`; each increase is named. `old` is
/// `None` when the copy there cannot be read (damaged, or of a newer
/// format): then everything `new` reaches is new.
/// `verb` says what was refused (`installed`, `exported`).
pub fn no_silent_escalation(
    target: &Path,
    old: Option<&PackHeader>,
    new: &PackHeader,
    accept: bool,
    verb: &str,
) -> Result<()> {
    use lingxi_wasm_policy::upgrade::{Increase, Reach, decreases, increases};
    let before = match old {
        Some(old) => Reach::of_spec(&old.declared, &old.policy),
        None => Reach::nothing(),
    };
    let after = Reach::of_spec(&new.declared, &new.policy);
    let more = increases(&before, &after);
    if more.is_empty() {
        return Ok(());
    }
    // What it gains and what it loses, so a narrower grant shows as one.
    let less = decreases(&before, &after);
    let lines: Vec<String> = (more.iter().map(|m| ('+', m)))
        .chain(less.iter().map(|l| ('-', l)))
        .map(|(sign, m)| format!("  {sign} {}", printable(&m.to_string())))
        .collect();
    let mut lines = lines.join("\n");
    if (more.iter()).any(|m| matches!(m, Increase::Workspace { fixed: true, .. })) {
        lines.push_str("\n(a fixed workspace is mounted whatever project the host opens; write a folder of the host's project as {root}/DIR)");
    }
    let holds = match old {
        Some(old) => format!(
            "{} holds {} {}",
            target.display(),
            printable(&old.plugin_id),
            printable(&old.plugin_version)
        ),
        None => format!(
            "{} holds a copy of this plugin that cannot be read (damaged, or of a newer format), so everything this one reaches counts as new",
            target.display()
        ),
    };
    if accept {
        println!("{holds}; accepted new grants:\n{lines}");
        return Ok(());
    }
    bail!(
        "{holds}; this {} would reach more than it:\n{lines}\nnothing was {verb}: pass --accept-new-grants to accept these grants, or narrow them with grant flags",
        printable(&new.plugin_version),
    )
}

pub fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".into()
    } else {
        items.join(", ")
    }
}

/// The lines of [`describe`] that differ between `old` and `new`, as
/// `  - old` / `  + new` pairs, matched by their setting's label (a line
/// only one side has, such as `secret`, is a `-` or a `+` alone).
pub fn grant_changes(old: &PolicySpec, new: &PolicySpec) -> Vec<String> {
    let (old, new) = (describe(old), describe(new));
    let label = |line: &str| line.split_whitespace().next().unwrap_or("").to_owned();
    let mut changes = Vec::new();
    for was in &old {
        match new.iter().find(|will| label(will) == label(was)) {
            Some(will) if will != was => {
                changes.extend([format!("  - {was}"), format!("  + {will}")]);
            }
            Some(_) => {}
            None => changes.push(format!("  - {was}")),
        }
    }
    let added = new
        .iter()
        .filter(|will| !old.iter().any(|was| label(was) == label(will)));
    changes.extend(added.map(|will| format!("  + {will}")));
    changes
}

/// Every grant and limit `spec` applies, one aligned line each.
pub fn describe(spec: &PolicySpec) -> Vec<String> {
    // Every setting by name: one added to the declaration does not compile
    // until it is shown here.
    let PolicySpec {
        grant,
        workspace,
        allow_read,
        allow_write,
        allow_net,
        env,
        secret,
        timeout,
        max_memory,
        data_root,
        no_storage,
        storage_quota,
        task_timeout,
        max_tasks,
        no_validate,
    } = spec;
    let paths = |paths: &[PathBuf]| {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        list_or_none(&shown)
    };
    let capabilities = match grant.as_deref().map(parse_capabilities) {
        None => "as declared".to_owned(),
        Some(Ok(caps)) => list_or_none(
            &caps
                .iter()
                .map(|c| c.wire_name().to_owned())
                .collect::<Vec<_>>(),
        ),
        Some(Err(e)) => format!("invalid ({e})"),
    };
    let workspace = match workspace {
        Some(dir) => dir.display().to_string(),
        None => "the host's workspace.rootPath".to_owned(),
    };
    let net = match allow_net.is_empty() {
        true => "(none)".to_owned(),
        false => allow_net.join(", "),
    };
    let data = match (data_root, no_storage) {
        (_, true) => "none (no storage)".to_owned(),
        (Some(root), false) => root.display().to_string(),
        (None, false) => "~/.lingxiagent/plugin-data (the default)".to_owned(),
    };
    let defaults = Limits::default();
    let timeout = timeout.unwrap_or(defaults.call_timeout.as_secs_f64());
    let memory = max_memory.unwrap_or(defaults.max_memory_bytes / (1024 * 1024));
    let quota = storage_quota.unwrap_or(defaults.max_storage_bytes / (1024 * 1024));
    // The task limits only when one is set, so the usual description stays
    // as it was.
    let tasks = match (task_timeout, max_tasks) {
        (None, None) => String::new(),
        _ => format!(
            ", task timeout {} s, at most {} tasks",
            task_timeout.unwrap_or(defaults.task_timeout.as_secs_f64()),
            max_tasks.unwrap_or(defaults.max_tasks)
        ),
    };
    // Fields come from a packed file's header: shown through `printable`.
    // Each line labelled with its setting's key (the first, a list of
    // wire names, as what it is).
    let line = |setting: Setting, value: String| format!("{:<15}{value}", setting.key());
    [
        format!("capabilities   {capabilities}"),
        line(Setting::Workspace, workspace),
        line(Setting::AllowRead, paths(allow_read)),
        line(Setting::AllowWrite, paths(allow_write)),
        line(Setting::AllowNet, net),
        line(Setting::Env, list_or_none(env)),
        line(Setting::DataRoot, data),
        format!(
            "limits         timeout {timeout} s, memory {memory} MiB, storage quota {quota} MiB{tasks}"
        ),
    ]
    .into_iter()
    // Secrets by name (their values are in the keyring, never here), only
    // when some are granted, so the usual description stays as it was.
    .chain((!secret.is_empty()).then(|| line(Setting::Secret, secret.join(", "))))
    // Only when it is off, so the usual description stays as it was.
    .chain(no_validate.then(|| {
        format!(
            "validation     off ({}): tool arguments are not checked against their schemas",
            Setting::NoValidate
        )
    }))
    .map(|line| printable(&line).into_owned())
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_limits_are_shown_only_when_set() {
        let usual = describe(&PolicySpec::default());
        let limits = usual.iter().find(|l| l.starts_with("limits")).unwrap();
        assert!(limits.ends_with("storage quota 64 MiB"), "{limits}");
        let spec = PolicySpec {
            max_tasks: Some(2),
            ..PolicySpec::default()
        };
        let shown = describe(&spec);
        let limits = shown.iter().find(|l| l.starts_with("limits")).unwrap();
        assert!(
            limits.ends_with(", task timeout 600 s, at most 2 tasks"),
            "{limits}"
        );
    }
}
