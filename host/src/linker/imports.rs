//! Only what a component imports is linked: each WASI interface the host
//! offers is one entry of [`OFFERED`], and a component's linker holds the
//! entries its imports name (plus the LingXi imports, always). A plugin that
//! reads no files gets no filesystem functions in its linker, and a packed
//! plugin's start does not pay for the ~150 functions it never calls.
//!
//! Linkers are kept per set of interfaces, so many plugins that import the
//! same ones share one. An import the host does not offer is left out here
//! and refused by `instantiate_pre` as before, naming the import.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use wasmtime::Engine;
use wasmtime::component::{Component, HasData, HasSelf, Linker, ResourceTable};
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random, sockets};
use wasmtime_wasi::random::{WasiRandom, WasiRandomView};
use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView};
use wasmtime_wasi::{WasiView, p2::bindings::LinkOptions};
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::http;
use wasmtime_wasi_io::bindings::wasi::io;

use crate::bindings::LingxiPlugin;
use crate::state::HostState;

/// Adds one interface to a linker.
type Add = fn(&mut Linker<HostState>) -> wasmtime::Result<()>;

/// The resource table, as wasmtime-wasi-io's host functions take it.
struct Io;
impl HasData for Io {
    type Data<'a> = &'a mut ResourceTable;
}

/// Which interfaces a component imports: bit `i` is `OFFERED[i]`.
pub(crate) type Set = u64;

/// Every interface the host can link (name without its version), and how.
/// Four are linked with host replacements of some of their functions, in
/// the same step, so that they are never linked without them: the
/// filesystem functions that write, name descriptors or are recorded
/// (`files.rs`: the storage quota, receipts, the trap and file refusals), the name
/// lookups (`lookup.rs`, for the allow-list), the environment
/// (`environment.rs`, for receipts) and TCP's `finish-connect` (`tcp.rs`,
/// bytes for receipts).
const OFFERED: [(&str, Add); 29] = [
    ("wasi:io/error", |l| {
        io::error::add_to_linker::<_, Io>(l, |t| t.ctx().table)
    }),
    ("wasi:io/poll", |l| {
        io::poll::add_to_linker::<_, Io>(l, |t| t.ctx().table)
    }),
    ("wasi:io/streams", |l| {
        io::streams::add_to_linker::<_, Io>(l, |t| t.ctx().table)
    }),
    ("wasi:clocks/wall-clock", |l| {
        clocks::wall_clock::add_to_linker::<_, WasiClocks>(l, HostState::clocks)
    }),
    ("wasi:clocks/monotonic-clock", |l| {
        clocks::monotonic_clock::add_to_linker::<_, WasiClocks>(l, HostState::clocks)
    }),
    ("wasi:filesystem/preopens", |l| {
        filesystem::preopens::add_to_linker::<_, WasiFilesystem>(l, HostState::filesystem)
    }),
    ("wasi:filesystem/types", |l| {
        filesystem::types::add_to_linker::<_, WasiFilesystem>(l, HostState::filesystem)?;
        super::files::link(l)
    }),
    ("wasi:random/random", |l| {
        random::random::add_to_linker::<_, WasiRandom>(l, HostState::random)
    }),
    ("wasi:random/insecure", |l| {
        random::insecure::add_to_linker::<_, WasiRandom>(l, HostState::random)
    }),
    ("wasi:random/insecure-seed", |l| {
        random::insecure_seed::add_to_linker::<_, WasiRandom>(l, HostState::random)
    }),
    ("wasi:cli/exit", |l| {
        cli::exit::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:cli/environment", |l| {
        cli::environment::add_to_linker::<_, WasiCli>(l, HostState::cli)?;
        super::environment::link(l)
    }),
    ("wasi:cli/stdin", |l| {
        cli::stdin::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:cli/stdout", |l| {
        cli::stdout::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:cli/stderr", |l| {
        cli::stderr::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:cli/terminal-input", |l| {
        cli::terminal_input::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:cli/terminal-output", |l| {
        cli::terminal_output::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:cli/terminal-stdin", |l| {
        cli::terminal_stdin::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:cli/terminal-stdout", |l| {
        cli::terminal_stdout::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:cli/terminal-stderr", |l| {
        cli::terminal_stderr::add_to_linker::<_, WasiCli>(l, HostState::cli)
    }),
    ("wasi:sockets/network", |l| {
        let options = LinkOptions::default();
        sockets::network::add_to_linker::<_, WasiSockets>(l, &(&options).into(), HostState::sockets)
    }),
    ("wasi:sockets/instance-network", |l| {
        sockets::instance_network::add_to_linker::<_, WasiSockets>(l, HostState::sockets)
    }),
    ("wasi:sockets/tcp-create-socket", |l| {
        sockets::tcp_create_socket::add_to_linker::<_, WasiSockets>(l, HostState::sockets)?;
        super::sockets::link_tcp(l)
    }),
    ("wasi:sockets/tcp", |l| {
        sockets::tcp::add_to_linker::<_, WasiSockets>(l, HostState::sockets)?;
        super::tcp::link(l)
    }),
    ("wasi:sockets/udp-create-socket", |l| {
        sockets::udp_create_socket::add_to_linker::<_, WasiSockets>(l, HostState::sockets)?;
        super::sockets::link_udp(l)
    }),
    ("wasi:sockets/udp", |l| {
        sockets::udp::add_to_linker::<_, WasiSockets>(l, HostState::sockets)
    }),
    ("wasi:sockets/ip-name-lookup", |l| {
        sockets::ip_name_lookup::add_to_linker::<_, WasiSockets>(l, HostState::sockets)?;
        super::lookup::link_name_lookup(l)
    }),
    ("wasi:http/types", |l| {
        let options = wasmtime_wasi_http::p2::bindings::LinkOptions::default();
        http::types::add_to_linker::<_, wasmtime_wasi_http::WasiHttp>(
            l,
            &(&options).into(),
            HostState::http,
        )
    }),
    ("wasi:http/outgoing-handler", |l| {
        http::outgoing_handler::add_to_linker::<_, wasmtime_wasi_http::WasiHttp>(l, HostState::http)
    }),
];

/// The LingXi interfaces every linker holds, at every version of the
/// package's line (wasmtime's linker matches `lingxi:plugin/logging@0.1.0`
/// to the `0.1.1` it holds).
const LINGXI_IMPORTS: [&str; 4] = ["types", "host-info", "logging", "tasks"];

/// Whether this host links `import`: a WASI interface of the linker's
/// table (`OFFERED` in `linker/imports.rs`), at any 0.2 version, or a
/// LingXi import. `check`, the loader and its error
/// all ask this table.
pub fn provided(import: &str) -> bool {
    match import.split_once('@') {
        Some((bare, version)) if bare.starts_with("wasi:") => {
            version.starts_with("0.2.") && OFFERED.iter().any(|(name, _)| *name == bare)
        }
        _ => lingxi_plugin_wit::interface_of(import).is_some_and(|i| LINGXI_IMPORTS.contains(&i)),
    }
}

/// The version of lingxi:plugin that one of `imports` names, as
/// `lingxi:plugin 0.2.0`, when it is not of the line this host links, and
/// why: another line, or no version at all.
pub(crate) fn unlinked_version(imports: &[&str]) -> Option<(String, &'static str)> {
    let unversioned = |name: &&str| {
        name.strip_prefix(lingxi_plugin_wit::PACKAGE)
            .is_some_and(|rest| rest.starts_with('/') && !rest.contains('@'))
    };
    if imports.iter().any(unversioned) {
        let found = format!("{} without a version", lingxi_plugin_wit::PACKAGE);
        return Some((
            found,
            "which no host links (a WIT package line names its version)",
        ));
    }
    let found = named_version(imports, |v| !lingxi_plugin_wit::compatible(v))?;
    Some((found, "a version line this host does not link"))
}

/// The later version of this host's line of lingxi:plugin that one of
/// `imports` names, as `lingxi:plugin 0.1.9` (the component may use what
/// this host's version lacks).
pub(crate) fn later_version(imports: &[&str]) -> Option<String> {
    named_version(imports, lingxi_plugin_wit::later)
}

/// The first version of lingxi:plugin among `imports` that `which` picks,
/// in words.
fn named_version(imports: &[&str], which: fn(&str) -> bool) -> Option<String> {
    (imports.iter())
        .filter_map(|name| lingxi_plugin_wit::version_of(name))
        .find(|version| which(version))
        .map(|version| format!("{} {version}", lingxi_plugin_wit::PACKAGE))
}

/// The names among `imports` that this host does not link.
pub(crate) fn unprovided<'a>(imports: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    imports.filter(|name| !provided(name)).collect()
}

/// What the host provides, in words, from the table: "WASI 0.2 cli,
/// clocks, … and outgoing http, and the lingxi:plugin 0.1.x imports".
pub(crate) fn provided_in_words() -> String {
    let mut packages: Vec<&str> = OFFERED
        .iter()
        .filter_map(|(name, _)| name.strip_prefix("wasi:")?.split_once('/'))
        .map(|(package, _)| package)
        .filter(|package| *package != "http")
        .collect();
    packages.sort_unstable();
    packages.dedup();
    let http = OFFERED
        .iter()
        .any(|(name, _)| *name == "wasi:http/outgoing-handler");
    let wasi = match (packages.split_last(), http) {
        (Some((last, rest)), false) => format!("{} and {last}", rest.join(", ")),
        _ => format!("{} and outgoing http", packages.join(", ")),
    };
    let lingxi = format!(
        "{} {}",
        lingxi_plugin_wit::PACKAGE,
        lingxi_plugin_wit::line()
    );
    format!("WASI 0.2 {wasi}, and the {lingxi} imports")
}

/// The interfaces `component` imports, among those [`OFFERED`].
pub(crate) fn imported(engine: &Engine, component: &Component) -> Set {
    let ty = component.component_type();
    let set = set_of(ty.imports(engine).map(|(name, _)| name));
    tracing::debug!(
        "linking {} of the {} WASI interfaces offered: {}",
        set.count_ones(),
        OFFERED.len(),
        OFFERED
            .iter()
            .enumerate()
            .filter(|(i, _)| set & (1 << i) != 0)
            .map(|(_, (name, _))| *name)
            .collect::<Vec<_>>()
            .join(", ")
    );
    set
}

/// The set of the interfaces `names` (as a component names its imports,
/// with or without a version) that the host offers.
fn set_of<'a>(names: impl Iterator<Item = &'a str>) -> Set {
    let mut set = 0;
    for name in names {
        let bare = name.split_once('@').map_or(name, |(bare, _)| bare);
        for (i, (offered, _)) in OFFERED.iter().enumerate() {
            if *offered == bare {
                set |= 1 << i;
            }
        }
    }
    set
}

/// A linker with the interfaces of `set` and the LingXi imports.
fn build(engine: &Engine, set: Set) -> wasmtime::Result<Linker<HostState>> {
    let mut linker = Linker::new(engine);
    for (i, (_, add)) in OFFERED.iter().enumerate() {
        if set & (1 << i) != 0 {
            add(&mut linker)?;
        }
    }
    LingxiPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    Ok(linker)
}

/// The linkers of one engine, one per set of imported interfaces.
#[derive(Default)]
pub(crate) struct Linkers {
    made: Mutex<HashMap<Set, Arc<Linker<HostState>>>>,
}

impl Linkers {
    /// The linker for a component importing `set` (made on first use).
    pub(crate) fn get(
        &self,
        engine: &Engine,
        set: Set,
    ) -> wasmtime::Result<Arc<Linker<HostState>>> {
        let mut made = self
            .made
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(linker) = made.get(&set) {
            return Ok(linker.clone());
        }
        let linker = Arc::new(build(engine, set)?);
        made.insert(set, linker.clone());
        Ok(linker)
    }
}

#[cfg(test)]
mod tests;
