//! Where the sandbox meets wasmtime-wasi, in one place: the linkers
//! instances are made with (the WASI interfaces a component imports, the
//! LingXi imports, and the WASI functions the host replaces: name lookups
//! under the allow-list, filesystem functions that mark the data directory
//! for its quota check and are recorded for receipts, the environment), and
//! the WASI context a policy becomes.
//! [`crate::policy`], [`crate::storage`] and [`crate::limits`] decide; this
//! module wires their decisions in.

mod environment;
mod files;
mod http;
mod http_gate;
mod imports;
mod lookup;
pub(crate) mod names;
pub(crate) mod refusals;
mod sockets;
mod tcp;
mod trap;
mod wasi;
pub(crate) mod writes;

pub(crate) use http_gate::HttpGate;
pub use imports::provided;
pub(crate) use imports::{
    Linkers, imported, later_version, provided_in_words, unlinked_version, unprovided,
};
pub(crate) use trap::trap;
pub(crate) use wasi::{apply, perms};
