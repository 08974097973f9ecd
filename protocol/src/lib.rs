//! The LingXi JSON-Lines protocol: the envelope and its two dialects
//! ([`wire`]), and the DTOs carried inside it ([`dto`]). Nothing here knows
//! about WebAssembly: the host (`lingxi-wasm-host`) and the SDK's native
//! mode both speak the wire through it.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod convert;
pub mod dto;
pub mod wire;

/// IPC versions this launcher speaks.
pub const SUPPORTED_IPC_VERSIONS: [i64; 1] = [1];

/// The method names, exactly as on the wire.
pub mod method {
    /// Push a runtime snapshot.
    pub const SNAPSHOT: &str = "host.snapshot";
    /// Handshake and activate.
    pub const INITIALIZE: &str = "plugin.initialize";
    /// Run a tool.
    pub const TOOL_EXECUTE: &str = "tool.execute";
    /// Run a slash command.
    pub const COMMAND_EXECUTE: &str = "command.execute";
    /// Deliver a lifecycle event.
    pub const HOOK_EMIT: &str = "hook.emit";
}

/// The exact error texts of the reference plugin that the launcher side
/// answers (spec §3); the plugin side's texts are in the SDK.
pub mod text {
    /// `host.snapshot` without params.
    pub const SNAPSHOT_MISSING: &str = "host.snapshot requires a snapshot payload";
    /// `tool.execute` without params.
    pub const TOOL_MISSING: &str = "Missing tool.execute parameters";
    /// `command.execute` without params.
    pub const COMMAND_MISSING: &str = "Missing command.execute parameters";
    /// `hook.emit` without params.
    pub const HOOK_MISSING: &str = "Missing hook.emit payload";

    /// A method that does not exist.
    pub fn unknown_method(method: &str) -> String {
        format!("Unknown IPC method: {method}")
    }

    /// A snapshot of an IPC version not in [`super::SUPPORTED_IPC_VERSIONS`].
    pub fn unsupported_snapshot_version(version: i64) -> String {
        format!(
            "Unsupported host IPC version {version}; this plugin speaks {:?}.",
            super::SUPPORTED_IPC_VERSIONS
        )
    }
}

/// The crate's README (what crates.io shows), its example compiled and run
/// as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
