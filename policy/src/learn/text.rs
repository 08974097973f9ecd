//! A learned policy as a policy file: each rule under a comment naming
//! the calls that needed it, what the format cannot narrow said in words,
//! the refusals listed at the end. Strings are written as JSON strings,
//! which are TOML basic strings; every comment is printable.

use std::fmt::Write as _;

use super::{Refusal, Rules};
use crate::file::PolicySpec;
use crate::settings::{Kind, Setting, toml_list, toml_string};
use crate::text::printable;

/// The rules of each key, with their reasons.
pub(super) struct Sections<'a> {
    pub(super) grant: &'a Rules,
    pub(super) workspace: &'a Rules,
    pub(super) allow_read: &'a Rules,
    pub(super) allow_write: &'a Rules,
    pub(super) allow_net: &'a Rules,
    pub(super) env: &'a Rules,
    pub(super) secret: &'a Rules,
    pub(super) storage: &'a Rules,
}

/// The policy file for `spec`, learned from `calls` calls.
pub(super) fn render(
    spec: &PolicySpec,
    calls: usize,
    sections: &Sections<'_>,
    refused: &[(String, Refusal)],
) -> String {
    let mut out = format!(
        "# Learned by {} {} learn from {calls} call{}: the narrowest policy that\n\
         # covers what they used. Each rule names the calls that needed it.\n\
         # A folder is mounted whole (the format cannot mount one file).\n",
        crate::wording::program(),
        env!("CARGO_PKG_VERSION"),
        if calls == 1 { "" } else { "s" },
    );
    out.push('\n');
    // Every setting by name: one added to `settings.rs` does not compile
    // until it is written here or said to be written elsewhere.
    let PolicySpec {
        grant,
        workspace,
        // Written from what the calls used ([`Sections`]).
        allow_read: _,
        allow_write: _,
        allow_net: _,
        env: _,
        secret: _,
        data_root,
        no_storage,
        // Limits, copied as given ([`limits`]).
        timeout: _,
        max_memory: _,
        storage_quota: _,
        task_timeout: _,
        max_tasks: _,
        no_validate: _,
    } = spec;
    match grant {
        Some(names) if names.iter().any(|n| n != "none") => {
            single(
                &mut out,
                Setting::Grant.key(),
                &toml_list(names),
                sections.grant,
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "# no call used a capability\n{} = [\"none\"]\n",
                Setting::Grant.key()
            );
        }
    }
    if let Some(workspace) = workspace {
        let value = toml_string(&workspace.display().to_string());
        single(
            &mut out,
            Setting::Workspace.key(),
            &value,
            sections.workspace,
        );
    }
    array(&mut out, Setting::AllowRead, sections.allow_read, "");
    array(&mut out, Setting::AllowWrite, sections.allow_write, "");
    array(&mut out, Setting::AllowNet, sections.allow_net, "");
    let env_note = format!(
        "# WASI hands a plugin its whole environment when it first reads it:\n\
         # these are the variables it was handed. Values are never written\n\
         # here: each is read from {}'s environment at start.\n",
        crate::wording::program()
    );
    array(&mut out, Setting::Env, sections.env, &env_note);
    let secret_note = format!(
        "# The secrets the plugin was handed, by name: their values stay in\n\
         # the keyring (`{} secret set PLUGIN_ID NAME`).\n",
        crate::wording::program()
    );
    array(&mut out, Setting::Secret, sections.secret, &secret_note);
    if *no_storage {
        let _ = writeln!(
            out,
            "# no call used the data directory\n{} = true\n",
            Setting::NoStorage.key()
        );
    } else {
        reasons(&mut out, sections.storage);
        out.push_str("# (storage stays on: the plugin's data directory)\n");
        if let Some(root) = data_root {
            let root = toml_string(&root.display().to_string());
            let _ = writeln!(out, "{} = {root}", Setting::DataRoot.key());
        }
        out.push('\n');
    }
    limits(&mut out, spec);
    if !refused.is_empty() {
        out.push_str("# Refused while learning (not in this policy):\n");
        for (call, refusal) in refused {
            let _ = writeln!(
                out,
                "#   {call}: {}; {}",
                printable(&refusal.what),
                printable(&refusal.allow)
            );
        }
    }
    out
}

/// The limits copied from the ceiling (not grants; kept as given): every
/// setting of [`Kind::Limit`] the ceiling sets.
fn limits(out: &mut String, spec: &PolicySpec) {
    let before = out.len();
    for setting in Setting::of_kind(Kind::Limit) {
        if let Some(value) = spec.written(setting) {
            let _ = writeln!(out, "{} = {value}", setting.key());
        }
    }
    if out.len() > before {
        out.insert_str(before, "# limits, as the ceiling gave them\n");
        out.push('\n');
    }
}

/// `key = value` under the reasons of its rule.
fn single(out: &mut String, key: &str, value: &str, rules: &Rules) {
    reasons(out, rules);
    let _ = writeln!(out, "{key} = {value}\n");
}

/// `key = [...]`, each value under its reasons; nothing if empty.
fn array(out: &mut String, setting: Setting, rules: &Rules, note: &str) {
    if rules.0.is_empty() {
        return;
    }
    out.push_str(note);
    let _ = writeln!(out, "{} = [", setting.key());
    for rule in &rules.0 {
        for why in &rule.why {
            let _ = writeln!(out, "  # {}", printable(why));
        }
        let _ = writeln!(out, "  {},", toml_string(&rule.value));
    }
    out.push_str("]\n\n");
}

/// The comment lines naming why each rule is there.
fn reasons(out: &mut String, rules: &Rules) {
    for rule in &rules.0 {
        for why in &rule.why {
            let _ = writeln!(out, "# {}", printable(why));
        }
    }
}
