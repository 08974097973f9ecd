//! `get-environment`, recorded: while a call is recorded, its receipt
//! names the variables the plugin was handed. WASI hands the whole
//! environment at once (a guest's libc reads it on first use), so this is
//! what the plugin could see, not which variables it then looked at.

use wasmtime::StoreContextMut;
use wasmtime::component::Linker;
use wasmtime_wasi::cli::WasiCliView;
use wasmtime_wasi::p2::bindings::cli::environment::Host;

use crate::state::HostState;

/// The interface whose function is wrapped; the version must be the one
/// wasmtime-wasi registers.
const ENVIRONMENT_INTERFACE: &str = "wasi:cli/environment@0.2.12";

/// Replaces `get-environment` with a recording wrapper.
pub(super) fn link(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut i = linker.instance(ENVIRONMENT_INTERFACE)?;
    i.func_wrap(
        "get-environment",
        |mut store: StoreContextMut<'_, HostState>, (): ()| {
            let state = store.data_mut();
            let environment = Host::get_environment(&mut state.cli())?;
            state
                .effects
                .environment(environment.iter().map(|(name, _)| name.as_str()));
            Ok((environment,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
