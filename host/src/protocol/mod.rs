//! The LingXi JSON-Lines protocol: the envelope and its two dialects
//! ([`wire`]), and the DTOs carried inside it ([`dto`]). Nothing here knows
//! about WebAssembly; `convert` maps these types to the WIT ones.

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
