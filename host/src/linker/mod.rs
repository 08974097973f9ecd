//! Where the sandbox meets wasmtime-wasi, in one place: the linker every
//! instance is made with (WASI, the LingXi imports, and the WASI functions
//! the host replaces: name lookups under the allow-list, filesystem writes
//! that mark the data directory for its quota check), and the WASI context
//! a policy becomes. [`crate::policy`], [`crate::storage`] and
//! [`crate::limits`] decide; this module wires their decisions in.

mod http;
mod lookup;
mod wasi;
pub(crate) mod writes;

pub(crate) use http::HttpGate;
pub(crate) use wasi::{apply, perms};

use wasmtime::Engine;
use wasmtime::component::{HasSelf, Linker};

use crate::bindings::LingxiPlugin;
use crate::state::HostState;

/// The linker of every plugin instance of `engine`.
pub(crate) fn build(engine: &Engine) -> wasmtime::Result<Linker<HostState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    lookup::link_name_lookup(&mut linker)?;
    writes::link(&mut linker)?;
    LingxiPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    Ok(linker)
}
