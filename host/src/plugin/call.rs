//! One call into the guest, as a value: what to invoke, and how it is named
//! in messages (`tool.execute 'probe.echo'`), formatted only when a message
//! needs it.

use std::fmt::{self, Display};

use wasmtime::Store;

use crate::bindings::PluginBindings;
use crate::bindings::lingxi::plugin::types as wit;
use crate::state::HostState;
use crate::text::shown_name;

/// A call into the guest, borrowing its arguments.
pub(super) enum Call<'a> {
    Initialize(&'a wit::InitializeRequest),
    /// The last initialize request, replayed on a fresh instance.
    Reinitialize(&'a wit::InitializeRequest),
    Tool(&'a wit::ToolCall),
    Command(&'a wit::CommandCall),
    Hook(&'a wit::HookPayload),
    Deactivate,
    /// A background task's run, on the task's own instance.
    Task {
        kind: &'a str,
        input: &'a str,
        id: &'a str,
    },
}

/// What a call answered.
pub(super) enum Reply {
    Handshake(Box<wit::Handshake>),
    Text(String),
    Command(wit::CommandResult),
    Done,
}

impl Call<'_> {
    /// Calls the guest. Outer error: a trap; inner error: the plugin's text.
    pub(super) async fn invoke(
        &self,
        bindings: &PluginBindings,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<Result<Reply, String>> {
        let plugin = bindings.lingxi_plugin_plugin();
        Ok(match self {
            Call::Initialize(request) | Call::Reinitialize(request) => plugin
                .call_initialize(store, request)
                .await?
                .map(|h| Reply::Handshake(Box::new(h))),
            Call::Tool(call) => plugin
                .call_execute_tool(store, call)
                .await?
                .map(Reply::Text),
            Call::Command(call) => plugin
                .call_execute_command(store, call)
                .await?
                .map(Reply::Command),
            Call::Hook(payload) => plugin
                .call_emit_hook(store, payload)
                .await?
                .map(|()| Reply::Done),
            Call::Deactivate => {
                plugin.call_deactivate(store).await?;
                Ok(Reply::Done)
            }
            Call::Task { kind, input, id } => match bindings.task_runner() {
                Some(runner) => runner
                    .call_run(store, kind, input, id)
                    .await?
                    .map(Reply::Text),
                None => Err("the plugin exports no task runner".to_owned()),
            },
        })
    }
}

impl Display for Call<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Call::Initialize(_) => f.write_str("plugin.initialize"),
            Call::Reinitialize(_) => f.write_str("plugin.initialize (after restart)"),
            Call::Tool(call) => write!(f, "tool.execute '{}'", shown_name(&call.tool_name)),
            Call::Command(call) => {
                write!(f, "command.execute '{}'", shown_name(&call.command_name))
            }
            Call::Hook(payload) => write!(f, "hook.emit '{}'", payload.event.wire_name()),
            Call::Deactivate => f.write_str("deactivate"),
            Call::Task { kind, id, .. } => write!(f, "task '{}' ({id})", shown_name(kind)),
        }
    }
}
