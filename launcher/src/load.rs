//! A plugin named on the command line, loaded: a component file, or a
//! packed file whose portable component is compiled here (its own
//! precompiled code is only ever run by itself). A packed file brings its
//! grants; flags given now are laid over them as flags are laid over a
//! policy file: a flag replaces its own setting (`--grant` the
//! capabilities, `--timeout` the deadline) or adds folders, hosts and
//! variables, and a setting no flag names stays as packed.

use std::path::Path;

use anyhow::Result;
use lingxi_wasm_host::pack;
use lingxi_wasm_host::{PluginComponent, PolicySpec, Runtime, Setting};

/// `plugin` loaded, with the settings it runs under: a packed file's with
/// `flags` laid over them, else `flags` alone.
pub fn component_or_packed(
    tokio: &tokio::runtime::Runtime,
    runtime: &Runtime,
    plugin: &Path,
    flags: Option<PolicySpec>,
) -> Result<(PluginComponent, PolicySpec)> {
    Ok(match pack::read(plugin)? {
        Some(packed) => {
            let name = packed.header.plugin_id.clone();
            let component = tokio.block_on(runtime.load_packed(&packed, &name))?;
            (component, over_packed(packed.header.policy, flags))
        }
        None => (
            tokio.block_on(runtime.load_file(plugin))?,
            flags.unwrap_or_default(),
        ),
    })
}

/// The grants a packed plugin (or a recording) brings with `flags` laid
/// over them: all but its secrets. A file names any plugin id it likes, so
/// a secret it grants itself would hand it the user's keyring entry of
/// that id unasked: here only the user's `--secret` flags grant secrets
/// (an installed file's own grants were shown by `install`, which keeps
/// them only with `--keep-grants`).
pub fn over_packed(mut packed: PolicySpec, flags: Option<PolicySpec>) -> PolicySpec {
    let own = std::mem::take(&mut packed.secret);
    if !own.is_empty() {
        let names: Vec<&str> = own
            .iter()
            .map(|s| s.split('@').next().unwrap_or(s))
            .collect();
        let flag = lingxi_wasm_host::policy::wording::worded(Setting::Secret, names.join(" "));
        tracing::warn!(
            "the file grants itself the secrets {}: not used here; grant them yourself with {flag}",
            own.join(", ")
        );
    }
    match flags {
        Some(flags) => packed.merge(flags),
        None => packed,
    }
}
