//! Where an MCP request's tasks live: the connection's own place (stdio, an
//! HTTP session with a back channel), or one place of the server's for
//! requests served on their own; and the MCP task a tool call's plugin
//! task becomes (`tasks.rs` bridges the two).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;

use super::approval::AcceptedCalls;
use super::handler::{Handler, ServerState};
use super::tasks::{McpTasks, Place};

impl ServerState {
    /// Where stateless requests' tasks live: one session of the set for
    /// the server's life; none if no tool starts tasks.
    pub(super) fn request_place(&self) -> Option<Arc<Place>> {
        if self.offer.starts_task.is_empty() {
            return None;
        }
        let made = self.request_tasks.get_or_init(|| {
            let opened = self.set.session("mcp-tasks", self.snapshot.clone());
            let session = opened
                .map_err(|e| tracing::warn!("no MCP tasks for stateless requests: {e}"))
                .ok()?;
            let desk = Arc::new(AcceptedCalls::default());
            let accepted = desk.clone();
            let session = session.with_approval(move |call| {
                let approved = accepted.take(call);
                async move { approved }
            });
            Some(Arc::new(Place {
                session: Arc::new(session),
                desk,
                mcp_tasks: McpTasks::new(self.task_ttl, self.task_records),
            }))
        });
        made.clone()
    }
}

impl Handler {
    /// Where a task started in `context` lives: the connection's own place,
    /// or the server's for a request served on its own (an HTTP request
    /// without a session, or of 2026-07-28).
    pub(super) fn place(&self, context: &RequestContext<RoleServer>) -> Option<Arc<Place>> {
        let modern = context
            .protocol_version()
            .is_some_and(|version| !version.has_initialize());
        match self.http && (modern || !self.back_channel) {
            true => self.shared.request_place(),
            false => self.tasks.clone(),
        }
    }

    /// The MCP task for the plugin task a call of a tool owned by `owner`
    /// started (its receipt names exactly one), if the call succeeded.
    pub(super) fn adopt(
        &self,
        owner: Option<&str>,
        place: Option<&Place>,
        receipt: &lingxi_wasm_host::Receipt,
        result: &CallToolResult,
        context: &RequestContext<RoleServer>,
    ) -> Option<rmcp::model::CreateTaskResult> {
        let (owner, place) = (owner?, place?);
        let [id] = receipt.tasks.as_slice() else {
            return None;
        };
        if result.is_error == Some(true) {
            return None;
        }
        let handle = place.session.task(owner, id)?;
        let said = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        // Only a connection has a peer to tell of the end.
        let peer = (!self.http || (self.back_channel && self.tasks.is_some()))
            .then(|| context.peer.clone());
        place.mcp_tasks.adopt(handle, said, peer)
    }

    /// Where the tasks `context` may name live, or why there are none.
    pub(super) fn place_of(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Arc<Place>, ErrorData> {
        self.place(context).ok_or_else(|| {
            ErrorData::invalid_params(
                "this server has no tasks: none of its tools starts one (x-lingxi-starts-task)",
                None,
            )
        })
    }
}
