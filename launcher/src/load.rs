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
use lingxi_wasm_host::{PluginComponent, PolicySpec, Runtime};

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

/// The grants a packed plugin brings with `flags` laid over them.
pub fn over_packed(packed: PolicySpec, flags: Option<PolicySpec>) -> PolicySpec {
    match flags {
        Some(flags) => packed.merge(flags),
        None => packed,
    }
}
