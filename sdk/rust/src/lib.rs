//! # lingxi-plugin-sdk
//!
//! Write LingXi plugins in Rust that run inside a WebAssembly sandbox. The API
//! follows the Swift `LingXiPluginSDK`: a [`Plugin`] has a [`Manifest`] and, in
//! [`Plugin::activate`], registers [`Tool`]s, slash [`Command`]s and hook
//! handlers with a [`PluginContext`]. Commands read the host's runtime snapshot
//! through a read-only [`InfoHub`] whose getters fail with [`InfoUnavailable`]
//! when the host did not publish a section, never with a made-up default.
//!
//! ```no_run
//! use lingxi_plugin_sdk::*;
//!
//! #[derive(Default)]
//! struct Hello;
//!
//! struct Echo;
//! impl Tool for Echo {
//!     fn name(&self) -> &str { "echo" }
//!     fn description(&self) -> &str { "Echoes its argument back." }
//!     fn execute(&self, arguments: &str, _ctx: &ToolContext) -> PluginResult<String> {
//!         Ok(arguments.to_owned())
//!     }
//! }
//!
//! impl Plugin for Hello {
//!     fn manifest(&self) -> Manifest {
//!         Manifest::new("com.example.hello", "Hello", "0.1.0", "Says hello")
//!     }
//!     fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
//!         ctx.register_tool(Echo);
//!         Ok(())
//!     }
//! }
//!
//! export_plugin!(Hello);
//! ```
//!
//! Build with `cargo build --release --target wasm32-wasip2` (crate type
//! `cdylib`): the `.wasm` file is a component that `lingxi-wasm-run` runs.

#![warn(missing_docs)]

// Lets the generated bindings name this crate by its public path.
extern crate self as lingxi_plugin_sdk;

mod bindings;
mod context;
mod info;
mod logger;
#[cfg(all(feature = "native", not(target_arch = "wasm32")))]
pub mod native;
mod runtime;
pub mod schema;
mod storage;
mod sys;
pub mod tasks;
mod types;

pub use context::{
    Command, CommandContext, DEFAULT_INPUT_SCHEMA, PluginContext, Tool, ToolContext,
};
pub use info::{
    ContextStateInfo, InfoHub, InfoUnavailable, PeCoreInfo, PerformanceInfo, RuntimeSnapshot,
    Timestamp, TurnSummary, WorkspaceInfo, iso8601,
};
pub use logger::Logger;
pub use runtime::SUPPORTED_IPC_VERSIONS;
pub use schema::{InputSchema, Property};
pub use storage::{MAX_KEY_BYTES, Storage, StorageError};
pub use tasks::{Task, TaskContext, TaskProgress, TaskState, Tasks};
pub use types::{
    Capability, CommandResult, HookEvent, HookPayload, Manifest, PluginError, PluginResult,
    Presentation,
};

/// A LingXi plugin (Swift: `LingXiPlugin`). Export it with [`export_plugin!`];
/// the type must implement `Default`, which plays the role of Swift's `init()`.
pub trait Plugin: 'static {
    /// Who the plugin is and what it declares. Must not depend on activation:
    /// the host reads it before building the sandbox.
    fn manifest(&self) -> Manifest;

    /// Registers tools, commands and hooks. Runs once, on `plugin.initialize`
    /// or lazily on the first call; if it fails, the error goes back to the host
    /// and the next request tries again.
    fn activate(&mut self, context: &mut PluginContext) -> PluginResult<()>;

    /// Called when the host closes the channel, if the plugin was active.
    fn deactivate(&mut self) {}
}

/// Exports a [`Plugin`] type (which must implement `Default`) as the
/// component's implementation of the LingXi world. Use it once per crate.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ident) => {
        const _: () = {
            use $crate::__private::{Guest, TaskKind, TaskRunnerGuest, types as wit, with_runtime};

            struct __LingxiPluginExport;

            impl Guest for __LingxiPluginExport {
                fn get_manifest() -> wit::Manifest {
                    with_runtime::<$plugin, _>(|rt| rt.manifest())
                }
                fn initialize(
                    request: wit::InitializeRequest,
                ) -> ::core::result::Result<wit::Handshake, ::std::string::String> {
                    with_runtime::<$plugin, _>(|rt| rt.initialize(request))
                }
                fn execute_tool(
                    call: wit::ToolCall,
                ) -> ::core::result::Result<::std::string::String, ::std::string::String> {
                    with_runtime::<$plugin, _>(|rt| rt.execute_tool(call))
                }
                fn execute_command(
                    call: wit::CommandCall,
                ) -> ::core::result::Result<wit::CommandResult, ::std::string::String> {
                    with_runtime::<$plugin, _>(|rt| rt.execute_command(call))
                }
                fn emit_hook(
                    payload: wit::HookPayload,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    with_runtime::<$plugin, _>(|rt| rt.emit_hook(payload))
                }
                fn deactivate() {
                    with_runtime::<$plugin, _>(|rt| rt.deactivate())
                }
            }

            impl TaskRunnerGuest for __LingxiPluginExport {
                fn kinds() -> ::std::vec::Vec<TaskKind> {
                    // A plugin that fails to activate runs no tasks.
                    with_runtime::<$plugin, _>(|rt| rt.task_kinds().unwrap_or_default())
                }
                fn run(
                    kind: ::std::string::String,
                    input: ::std::string::String,
                    id: ::std::string::String,
                ) -> ::core::result::Result<::std::string::String, ::std::string::String> {
                    with_runtime::<$plugin, _>(|rt| rt.run_task(kind, input, id))
                }
            }

            // Component exports exist only in a component; a native build
            // (feature `native`) serves the protocol itself.
            #[cfg(target_arch = "wasm32")]
            $crate::__private::export!(__LingxiPluginExport with_types_in $crate::__private::bindings);
        };
    };
}

/// Implementation details of [`export_plugin!`]. Not a stable API.
#[doc(hidden)]
pub mod __private {
    /// The generated bindings, reachable for `export!`'s `with_types_in`.
    pub mod bindings {
        pub use crate::bindings::*;
    }
    pub use crate::bindings::export;
    pub use crate::bindings::exports::lingxi::plugin::plugin::Guest;
    pub use crate::bindings::exports::lingxi::plugin::task_runner::{
        Guest as TaskRunnerGuest, TaskKind,
    };
    pub use crate::bindings::lingxi::plugin::types;
    pub use crate::runtime::with_runtime;
    pub use wit_bindgen;
}
