//! # lingxi-wasm-host
//!
//! Runs LingXi plugins compiled to WebAssembly components (`wasm32-wasip2`,
//! built with `lingxi-plugin-sdk`) in a deny-by-default wasmtime sandbox.
//!
//! Where things are decided:
//! - [`protocol`]: the JSON-Lines wire format, both dialects, and its DTOs;
//! - [`convert`]: WIT ↔ protocol conversion;
//! - [`policy`]: which capabilities a plugin gets (declared ∩ granted) and how
//!   they become WASI grants; the grant settings, declared once
//!   ([`PolicySpec`]: the policy file's keys, and with the `cli` feature
//!   the launcher's flags); the setting a message names, as data, in the
//!   front end's words ([`Setting`], [`set_wording`]);
//! - [`policy::limits`]: every number a plugin can run into (deadlines, memory,
//!   output and trap caps, line and schema sizes, pool slots);
//! - [`contract`]: tool contracts: argument validation against each tool's
//!   `inputSchema`, path parameters, per-tool timeouts and approval, and
//!   the handshake's consistency;
//! - `storage`: the per-plugin data directory and its quota;
//! - [`cache`]: precompiled components (only from a folder of this user);
//!   [`pack`]: packed executables, and whose precompiled code may run (only
//!   the running executable's own); `code`: how that code is made
//!   executable in place;
//! - `linker`: where those decisions meet wasmtime-wasi (the linker, the
//!   WASI context a policy becomes, the WASI functions the host replaces);
//! - [`RuntimeConfig`]: the engine (pooling allocator, copy-on-write images,
//!   the compiler);
//! - [`PluginHost`]: one plugin instance, typed calls, recovery after traps;
//! - [`PluginSet`], [`Catalog`], [`Session`]: many plugins in one process,
//!   their tools and commands, one instance per plugin per session;
//! - [`observe`]: guest logs and output as `tracing` events, log sinks,
//!   per-plugin counters;
//! - [`dispatch`]: one request line to its response line (both dialects, the
//!   method table), for the launcher and for a host's own wire front;
//!   [`Server`]: the JSONL loop that `lingxi-wasm-run` runs on stdin/stdout,
//!   one [`PluginHost`] behind a [`dispatch::Dispatcher`];
//! - [`CallOptions`]: how one call runs (its deadline), taken by every call
//!   of a tool, command or hook.
//!
//! Every call into a plugin is async and bounded by its deadline, whatever
//! the guest does (spinning, sleeping, waiting on a socket or a name
//! lookup): the timer is tokio's, so the calls need a tokio runtime with
//! time and I/O enabled ([`call_runtime`] makes one).
//!
//! ```no_run
//! use lingxi_wasm_host::types::{InitializeRequest, ToolCall};
//! use lingxi_wasm_host::{CallOptions, Grant, Limits, PluginHost, Runtime};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = Runtime::new()?;
//! let component = runtime.load_file("probe.wasm".as_ref()).await?;
//! // Grant what the manifest declares, mount this workspace for projectRead.
//! let grant = Grant {
//!     capabilities: None,
//!     workspace: Some("/work/demo".into()),
//!     ..Grant::default()
//! };
//! let mut plugin = PluginHost::new(component, grant, Limits::default());
//! let handshake = plugin
//!     .initialize(InitializeRequest {
//!         host_ipc_version: Some(1),
//!         core_version: Some("1.1.0".into()),
//!     })
//!     .await?;
//! println!("{} offers {} tools", handshake.manifest.id, handshake.tools.len());
//! let call = ToolCall {
//!     tool_name: "probe.echo".into(),
//!     arguments: "{}".into(),
//!     session_id: "s-1".into(),
//!     tool_call_id: "c-1".into(),
//! };
//! // Within the plugin's own call timeout (`CallOptions::within` sets another).
//! let output = plugin.execute_tool(call, CallOptions::default()).await?;
//! assert_eq!(output, "echo:{}");
//! # Ok(())
//! # }
//! lingxi_wasm_host::call_runtime()?.block_on(demo())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod bindings;
/// The JSONL protocol types (the `lingxi-protocol` crate).
pub use lingxi_protocol as protocol;
pub mod cache;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod code;
mod compiler;
mod config;
pub mod contract;
pub mod convert;
mod deadline;
pub mod dispatch;
pub mod effects;
mod engine;
mod error;
mod linker;
mod memory;
pub mod observe;
mod options;
mod plugin;
mod recovery;
mod secrets;
mod server;
mod set;
pub mod shape;
mod state;
mod stdio;
mod storage;
mod tasks;
mod ticker;

/// Packed plugins: the file format, read and checked without the engine
/// (the `lingxi-wasm-pack` crate).
pub use lingxi_wasm_pack as pack;
/// What a plugin may touch, decided without the engine (the
/// `lingxi-wasm-policy` crate): capabilities, grants, the policy file,
/// network and folder rules, receipts' data, every plain limit.
pub use lingxi_wasm_policy as policy;
use lingxi_wasm_policy::{limits, places, text};

/// The WIT types of the `lingxi:plugin` world, as the host sees them.
pub mod types {
    pub use crate::bindings::lingxi::plugin::types::{
        Capability, CommandCall, CommandDescriptor, CommandMessage, CommandResult,
        ContextStateInfo, Handshake, HookEvent, HookPayload, InfoUnavailable, InitializeRequest,
        Manifest, PeCoreInfo, PerformanceInfo, Presentation, RuntimeSnapshot, Timestamp, ToolCall,
        ToolDescriptor, TurnSummary, WorkspaceInfo,
    };
}

pub use cache::CompileCache;
#[cfg(feature = "compiler")]
pub use config::Compiler;
#[cfg(feature = "compiler")]
pub use config::precompile_for;
pub use config::{InstanceShape, Pooling, RuntimeConfig};
pub use effects::ReceiptSlot;
pub use engine::{PluginComponent, Runtime, call_runtime, read_plugin_file};
pub use error::{CallError, Clash, LoadError, SetError, SnapshotError};
pub use limits::{Limits, MAX_LINE_BYTES};
pub use observe::GUEST_TARGET;
pub use options::CallOptions;
pub use plugin::PluginHost;
pub use policy::receipt::Receipt;
pub use policy::{
    Grant, NetRule, Policy, PolicyError, PolicyFileWording, PolicySpec, Setting, Wording,
    set_wording,
};
pub use server::{ReceiptSink, Server};
pub use set::{
    ApprovalFuture, Approver, Catalog, CatalogCommand, CatalogTool, HookOutcome, NewGrants,
    PluginOptions, PluginSet, PreparedCall, Session, no_grant,
};
pub use tasks::{TaskError, TaskEvent, TaskHandle, TaskProgress, TaskState};
pub use text::{printable, printable_lines};

/// The crate's README (what crates.io shows), its example compiled and run
/// as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
