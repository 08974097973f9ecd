//! Approval: the callback a host gives a set ([`PluginSet::with_approval`](super::PluginSet::with_approval))
//! and the checked call it is asked about.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use super::Member;
use crate::contract::ResolvedPath;

/// What an approval callback answers: `true` runs the call.
pub type ApprovalFuture = Pin<Box<dyn Future<Output = bool> + Send + 'static>>;

/// A host's approval callback, asked before every call to a tool that
/// requires approval (`x-lingxi-requires-approval`), with the call as the
/// plugin will get it.
pub type Approver = Arc<dyn Fn(&PreparedCall) -> ApprovalFuture + Send + Sync>;

/// A tool call that passed its contract and has not run yet: what the
/// plugin will get, and which files it names.
#[derive(Clone)]
pub struct PreparedCall {
    /// The plugin that offers the tool.
    pub plugin: String,
    /// The tool.
    pub tool: String,
    /// The arguments as the plugin will get them (path parameters
    /// replaced by their canonical absolute form).
    pub arguments: String,
    /// Its path parameters, as given and as resolved.
    pub paths: Vec<ResolvedPath>,
    /// Whether the set's approval callback is asked before it runs.
    pub requires_approval: bool,
    /// Whether it may run on an extra instance of the plugin when the
    /// session's instance is busy (`x-lingxi-concurrency-safe`).
    pub concurrency_safe: bool,
    /// The tool's own timeout, if it has one.
    pub timeout: Option<Duration>,
    pub(super) member: Arc<Member>,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("plugin", &self.plugin)
            .field("tool", &self.tool)
            .field("arguments", &self.arguments)
            .field("paths", &self.paths)
            .field("requires_approval", &self.requires_approval)
            .field("concurrency_safe", &self.concurrency_safe)
            .field("timeout", &self.timeout)
            .finish()
    }
}
