//! The embedding soak's wire front: what an agent host that speaks the
//! LingXi wire to its own side does with a plugin set. Each request line is
//! answered by the host library's own [`Dispatcher`] (either dialect, the
//! same method table and line cap as `lingxi-wasm-run`), with the methods
//! routed through the set's session API: tools and commands by name, hooks
//! to every subscriber, `plugin.initialize` to the testbed.

use std::sync::Arc;
use std::time::Duration;

use lingxi_wasm_host::dispatch::{Dispatcher, Methods};
use lingxi_wasm_host::types::{
    CommandCall, CommandResult, Handshake, HookPayload, InitializeRequest, RuntimeSnapshot,
    ToolCall,
};
use lingxi_wasm_host::{CallOptions, Session};

/// The testbed's plugin id.
pub const TESTBED: &str = "com.lingxi.testbed";

/// One session of a set behind a wire front.
pub struct Front {
    routes: Routes,
    dispatcher: Dispatcher,
}

/// Where each method goes in the set.
struct Routes {
    session: Arc<Session>,
    /// The deadline the host gives the runaway tool (`spin`); other calls
    /// get the plugin's own call timeout.
    spin_deadline: Duration,
}

impl Front {
    /// A front for `session`.
    pub fn new(session: Arc<Session>, spin_deadline: Duration) -> Self {
        Front {
            routes: Routes {
                session,
                spin_deadline,
            },
            dispatcher: Dispatcher::new(None),
        }
    }

    /// The session behind it.
    pub fn session(&self) -> &Session {
        &self.routes.session
    }

    /// The response line to `line`, if it gets one.
    pub async fn answer(&mut self, line: &str) -> Option<String> {
        self.dispatcher.answer_line(&mut self.routes, line).await
    }
}

impl Methods for Routes {
    type Error = String;

    fn snapshot(&mut self, snapshot: RuntimeSnapshot) -> Result<(), String> {
        self.session
            .set_snapshot(snapshot)
            .map_err(|e| e.to_string())
    }

    async fn initialize(&mut self, request: InitializeRequest) -> Result<Handshake, String> {
        let handshake = self.session.initialize(TESTBED, request).await;
        handshake.map_err(|e| e.to_string())
    }

    async fn execute_tool(&mut self, call: ToolCall) -> Result<String, String> {
        let options = match call.tool_name.as_str() {
            "spin" => CallOptions::within(self.spin_deadline),
            _ => CallOptions::default(),
        };
        let output = self
            .session
            .call_tool(&call.tool_name, &call.arguments, options);
        output.await.map_err(|e| e.to_string())
    }

    async fn execute_command(&mut self, call: CommandCall) -> Result<CommandResult, String> {
        let options = CallOptions::default();
        let result = self
            .session
            .run_command(&call.command_name, call.arguments, options);
        result.await.map_err(|e| e.to_string())
    }

    async fn emit_hook(&mut self, payload: HookPayload) -> Result<(), String> {
        let outcomes = self.session.emit(payload, CallOptions::default()).await;
        let failed: Vec<String> = (outcomes.into_iter())
            .filter_map(|o| o.result.err().map(|e| format!("{}: {e}", o.plugin)))
            .collect();
        match failed.is_empty() {
            true => Ok(()),
            false => Err(failed.join("; ")),
        }
    }
}
