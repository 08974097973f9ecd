//! Errors at the library boundary. Each says what happened and what to do;
//! a limit or grant it is about is data (a [`Setting`]), worded in the
//! process's words ([`crate::policy::wording`]: the launcher's are flags).

use std::path::PathBuf;
use std::time::Duration;

use crate::policy::settings::Setting;
use crate::policy::wording::{worded, wording};

/// Loading a component failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The engine could not be configured.
    #[error("cannot create the WebAssembly engine: {0}")]
    Engine(String),
    /// A packed plugin's payload is damaged.
    #[error(transparent)]
    Packed(#[from] crate::pack::PackError),
    /// The file could not be read.
    #[error("cannot read component {}: {source}", path.display())]
    Read {
        /// The component path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a component at all (text, a native executable, a
    /// core module…): said in one line, without the parser's byte dump.
    #[error(
        "{name} is {what}, not a WebAssembly component; build the plugin as a component with `cargo build --release --target wasm32-wasip2` (crate-type cdylib)"
    )]
    NotAComponent {
        /// Where the bytes came from.
        name: String,
        /// What the bytes are instead.
        what: String,
    },
    /// The bytes are not a valid component.
    #[error(
        "{name} is not a valid WebAssembly component ({reason}); build the plugin with `cargo build --release --target wasm32-wasip2`"
    )]
    Compile {
        /// Where the component came from.
        name: String,
        /// What the engine said.
        reason: String,
    },
    /// One instance of the plugin needs more than one unit of the pooled
    /// runtime ([`Pooling::per_instance`](crate::Pooling::per_instance),
    /// [`Pooling::max_memory_bytes`](crate::Pooling::max_memory_bytes)):
    /// the pool could not hold even one.
    #[error(
        "{name} does not fit the pooled runtime: {reason}; build the runtime with a larger Pooling::per_instance (core_instances, memories, tables) or Pooling::max_memory_bytes"
    )]
    Pool {
        /// Where the component came from.
        name: String,
        /// What the engine said, with the numbers.
        reason: String,
    },
    /// The component imports interfaces this host does not provide.
    #[error(
        "{name} imports {missing}, which this host does not provide (it provides {provided}); build the plugin without them, e.g. with lingxi-plugin-sdk for wasm32-wasip2"
    )]
    Imports {
        /// Where the component came from.
        name: String,
        /// The imports not provided, comma-separated.
        missing: String,
        /// What the host provides, in words.
        provided: String,
    },
    /// The component was built against a version of `lingxi:plugin` this
    /// host does not link: another version line, or a later version of its
    /// line whose additions the component uses.
    #[error(
        "{name} was built against {found}, {why}: this host links lingxi:plugin {} (its own version is {}); update {} to a version that links it, or build the plugin against wit/lingxi-plugin.wit {}",
        lingxi_plugin_wit::line(),
        lingxi_plugin_wit::VERSION,
        crate::policy::wording::program(),
        lingxi_plugin_wit::VERSION
    )]
    Version {
        /// Where the component came from.
        name: String,
        /// What it names, e.g. `lingxi:plugin 0.2.0`.
        found: String,
        /// Why this host does not link it (with what the linker said).
        why: String,
    },
    /// The component does not fit the `lingxi:plugin` world.
    #[error(
        "{name} is not a LingXi plugin component ({reason}); plugins must export {}, e.g. by using lingxi-plugin-sdk's export_plugin!",
        lingxi_plugin_wit::plugin_export()
    )]
    World {
        /// Where the component came from.
        name: String,
        /// What the linker said.
        reason: String,
    },
    /// Asking the plugin for its manifest failed.
    #[error("{name}: the plugin failed while reporting its manifest: {reason}")]
    Manifest {
        /// Where the component came from.
        name: String,
        /// What went wrong.
        reason: String,
    },
}

/// A call into a plugin failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The plugin answered with an error; its text is passed through verbatim.
    #[error("{0}")]
    Plugin(String),
    /// The call ran past its deadline and was stopped.
    #[error(
        "{call} did not finish within {:.1} s and was stopped; the plugin was restarted and will answer the next request (raise the call timeout with {})",
        limit.as_secs_f64(),
        worded(Setting::Timeout, "SECONDS")
    )]
    Timeout {
        /// What was called, e.g. `tool.execute 'spin'`.
        call: String,
        /// The deadline in force.
        limit: Duration,
    },
    /// The tool ran past its own timeout (`x-lingxi-timeout-ms`) and was
    /// stopped.
    #[error(
        "{call} did not finish within the tool's own timeout of {:.1} s (x-lingxi-timeout-ms in its inputSchema) and was stopped; the plugin was restarted and will answer the next request",
        limit.as_secs_f64()
    )]
    ToolTimeout {
        /// What was called.
        call: String,
        /// The tool's timeout.
        limit: Duration,
    },
    /// A background task ran past its own deadline and was stopped.
    #[error(
        "{call} did not finish within the task deadline of {:.1} s and was stopped (raise it with {})",
        limit.as_secs_f64(),
        worded(Setting::TaskTimeout, "SECONDS")
    )]
    TaskTimeout {
        /// The task, e.g. `task 'index' (t-1a2b)`.
        call: String,
        /// The deadline in force.
        limit: Duration,
    },
    /// The call used more memory than allowed.
    #[error(
        "{call} exceeded the plugin memory limit of {} MiB and was stopped; the plugin was restarted (raise the memory limit with {})",
        limit_bytes / (1024 * 1024),
        worded(Setting::MaxMemory, "MIB")
    )]
    Memory {
        /// What was called.
        call: String,
        /// The limit in force.
        limit_bytes: usize,
    },
    /// The call wrote more output (stdout, stderr, log) than allowed.
    #[error(
        "{call} wrote more than {} MiB of output (stdout, stderr and log together) and was stopped; the plugin was restarted",
        limit_bytes / (1024 * 1024)
    )]
    OutputFlood {
        /// What was called.
        call: String,
        /// The limit in force.
        limit_bytes: usize,
    },
    /// The call returned more text than allowed.
    #[error(
        "{call} returned {size} bytes, more than the {} MiB result limit; return less, or write large data to the workspace",
        limit_bytes / (1024 * 1024)
    )]
    ResultTooLarge {
        /// What was called.
        call: String,
        /// The size returned.
        size: usize,
        /// The limit in force.
        limit_bytes: usize,
    },
    /// The plugin called `exit`.
    #[error("{call} made the plugin exit with status {status}; the plugin was restarted")]
    Exited {
        /// What was called.
        call: String,
        /// The exit status.
        status: i32,
    },
    /// The call left the data directory over its quota.
    #[error(
        "{call} left the plugin's data directory {} over its quota (at least {used} bytes of {quota}); it stays read-only until it is smaller (raise the storage quota with {})",
        dir.display(),
        worded(Setting::StorageQuota, "MIB")
    )]
    StorageQuota {
        /// What was called.
        call: String,
        /// The data directory.
        dir: std::path::PathBuf,
        /// Bytes in use.
        used: u64,
        /// The quota.
        quota: u64,
    },
    /// The plugin trapped too often and is disabled.
    #[error(
        "plugin {plugin} is disabled: it crashed {traps} times within {window_secs} s (last: {last}); fix the plugin, then start it again {}",
        wording().restart()
    )]
    Disabled {
        /// The plugin id.
        plugin: String,
        /// How many traps.
        traps: usize,
        /// The window.
        window_secs: u64,
        /// The last failure.
        last: String,
    },
    /// The plugin crashed (panic, abort, unreachable, out-of-bounds access…).
    #[error(
        "{call} crashed the plugin ({reason}); the plugin was restarted and will answer the next request"
    )]
    Trap {
        /// What was called.
        call: String,
        /// The trap, as the engine describes it.
        reason: String,
    },
    /// The handshake described another plugin than the sandbox was built
    /// for (another id, other capabilities…): refused, never passed on.
    #[error(
        "plugin {plugin} was refused: its handshake does not match the manifest its sandbox was built from ({differences}); the plugin must report the same manifest from get-manifest and initialize"
    )]
    ManifestMismatch {
        /// The id of the enforced manifest.
        plugin: String,
        /// Each field that differs, with both values.
        differences: String,
    },
    /// A fresh instance could not be created.
    #[error("cannot start plugin {plugin}: {reason}")]
    Instantiate {
        /// The plugin id.
        plugin: String,
        /// What went wrong.
        reason: String,
    },
    /// The call never ran: the plugin's instance in this session was still
    /// busy with an earlier call when the call's deadline passed.
    #[error(
        "{call} was not run: the plugin was still busy with an earlier call of this session after {:.1} s; nothing was stopped (call it again later, or give it a longer deadline)",
        limit.as_secs_f64()
    )]
    Busy {
        /// What was called.
        call: String,
        /// The deadline in force.
        limit: Duration,
    },
    /// The call broke its tool's contract (arguments, path parameters,
    /// approval) and was not sent to the plugin.
    #[error("{call} was not run: {reason}")]
    Refused {
        /// What was called.
        call: String,
        /// Which rule it broke.
        reason: crate::contract::ContractError,
    },
    /// No plugin of this id is in the session's set.
    #[error("no plugin {plugin} in this session; the set's ids list the plugins there are")]
    NoSuchPlugin {
        /// The id asked for.
        plugin: String,
    },
    /// No plugin of the session offers a tool of this name.
    #[error("no plugin offers a tool named '{name}'; the catalog lists the tools there are")]
    NoSuchTool {
        /// The name asked for.
        name: String,
    },
    /// No plugin of the session offers a command of this name or alias.
    #[error("no plugin offers a command named '{name}'; the catalog lists the commands there are")]
    NoSuchCommand {
        /// The name or alias asked for.
        name: String,
    },
}

impl CallError {
    /// The setting that raises the limit this call ran into, if it ran into
    /// one a user can raise.
    pub fn setting(&self) -> Option<Setting> {
        match self {
            CallError::Timeout { .. } => Some(Setting::Timeout),
            CallError::TaskTimeout { .. } => Some(Setting::TaskTimeout),
            CallError::Memory { .. } => Some(Setting::MaxMemory),
            CallError::StorageQuota { .. } => Some(Setting::StorageQuota),
            _ => None,
        }
    }
}

/// A plugin could not join a [`PluginSet`](crate::PluginSet).
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// Its file could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A plugin with this id is already in the set.
    #[error(
        "plugin {plugin} from {second} was not added: a plugin with this id is already in the set (from {first}); plugin ids must be unique"
    )]
    DuplicateId {
        /// The id.
        plugin: String,
        /// Where the plugin already in the set came from.
        first: String,
        /// Where the refused one came from.
        second: String,
    },
    /// A replacement would reach more than the plugin in its place
    /// ([`PluginSet::replace`](crate::PluginSet::replace)).
    #[error(
        "plugin {plugin} from {from} did not replace the one in the set: it would reach more ({}); replace it with NewGrants::Accept to accept that",
        increases.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    NewGrants {
        /// The plugin id.
        plugin: String,
        /// Where the replacement came from.
        from: String,
        /// Everything it could reach that the one in place could not.
        increases: Vec<crate::policy::upgrade::Increase>,
    },
    /// There is no plugin of this id to replace.
    #[error(
        "plugin {plugin} from {from} replaces nothing: no plugin with this id is in the set; add it with PluginSet::add"
    )]
    NotInSet {
        /// The plugin id.
        plugin: String,
        /// Where it came from.
        from: String,
    },
    /// Some of its tool or command names belong to another plugin.
    #[error(
        "plugin {plugin} from {from} was not added: {}; rename them in one of the plugins",
        clashes.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Clash {
        /// The refused plugin.
        plugin: String,
        /// Where it came from.
        from: String,
        /// Every name it shares with a plugin already in the set.
        clashes: Vec<Clash>,
    },
    /// Its id or the names it registers cannot go into a catalog.
    #[error("plugin {plugin} from {from} was not added: {reason}")]
    BadName {
        /// The plugin id (made printable).
        plugin: String,
        /// Where it came from.
        from: String,
        /// Which name, and what is wrong with it.
        reason: String,
    },
    /// Its handshake is inconsistent, or its tools' contracts are broken
    /// (see [`crate::contract`]).
    #[error(
        "plugin {plugin} from {from} was not added: {}",
        problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Contract {
        /// The plugin id (made printable).
        plugin: String,
        /// Where it came from.
        from: String,
        /// Every error found, with what to fix.
        problems: Vec<crate::contract::Problem>,
    },
    /// Its `plugin.initialize` failed when it was loaded.
    #[error("plugin {plugin} was not added: its plugin.initialize failed: {source}")]
    Initialize {
        /// The plugin id.
        plugin: String,
        /// Why.
        source: CallError,
    },
    /// A folder could not be read.
    #[error("cannot read plugin folder {}: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// One name two plugins register.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} '{name}' is already registered by {owner}")]
pub struct Clash {
    /// `tool` or `command`.
    pub kind: &'static str,
    /// The name (for a command, the name or alias that clashes).
    pub name: String,
    /// The plugin that has it.
    pub owner: String,
}

impl Clash {
    pub(crate) fn tool(name: &str, owner: String) -> Self {
        Clash {
            kind: "tool",
            name: name.to_owned(),
            owner,
        }
    }
    pub(crate) fn command(name: &str, owner: String) -> Self {
        Clash {
            kind: "command",
            name: name.to_owned(),
            owner,
        }
    }
}

/// A `host.snapshot` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// The snapshot's IPC version is not one this launcher speaks. The
    /// previously applied snapshot stays in force.
    #[error("{}", lingxi_protocol::text::unsupported_snapshot_version(*.0))]
    UnsupportedVersion(i64),
}
