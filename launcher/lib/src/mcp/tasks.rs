//! Plugin background tasks as MCP tasks: the `io.modelcontextprotocol/tasks`
//! extension (SEP-2663) as rmcp serves it (`tasks/get`, `tasks/cancel`,
//! `notifications/tasks`).
//!
//! A tool marked `x-lingxi-starts-task` starts one plugin task and answers
//! its handle. Called by a client that declares the tasks extension, in a
//! connection that outlives the request (stdio, an HTTP session), the call
//! is answered with a `CreateTaskResult` instead: the MCP task follows the
//! plugin task (its progress is the status message), its result is the
//! task's result as a tool result, and cancelling it cancels the plugin
//! task. Stateless HTTP requests (and 2026-07-28 ones, stateless here) run
//! such calls in one session of the server's, where the task outlives the
//! request. Any other client gets today's answer: the handle as text, read
//! with the plugin's own status tool.

use std::sync::Arc;
use std::time::Duration;

use lingxi_wasm_host::{Session, TaskHandle, TaskState};
use rmcp::model::{
    CallToolResult, ContentBlock, CreateTaskResult, DetailedTask, ErrorData, GetTaskResult,
    ServerNotification, Task, TaskPayload, TaskStatusNotification, TaskStatusNotificationParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions, current_timestamp};
use rmcp::{RoleServer, model::JsonObject};

use super::approval::AcceptedCalls;
use super::map;

/// How often a client is told to poll, and how often the status message
/// follows the plugin task's progress.
const POLL: Duration = Duration::from_millis(500);

/// Where MCP tasks live: a plugin-set session and its MCP tasks. A
/// connection (stdio, an HTTP session) has its own, in its own session: a
/// client sees only the tasks it started. Stateless HTTP requests share one
/// of the server's, whose task ids (random UUIDs) are bearer names.
pub struct Place {
    /// The session the task-starting calls run in (their tasks live on
    /// its boards).
    pub session: Arc<Session>,
    /// The calls its users accepted (see `approval`).
    pub desk: Arc<AcceptedCalls>,
    /// Its MCP tasks.
    pub mcp_tasks: McpTasks,
}

/// The MCP tasks of one place.
pub struct McpTasks {
    manager: TaskManager,
    /// How long an MCP task is kept: the plugin task's deadline and then
    /// how long its result is kept.
    ttl: Duration,
    /// When each kept MCP task was made, oldest first: rmcp keeps a task
    /// (and its result) for its time to live, so their number is bounded
    /// here, at `most`.
    made: std::sync::Mutex<std::collections::VecDeque<std::time::Instant>>,
    most: usize,
}

impl McpTasks {
    /// MCP tasks that live `ttl` from their start, at most `most` at
    /// once.
    pub fn new(ttl: Duration, most: usize) -> Self {
        McpTasks {
            manager: TaskManager::new(),
            ttl,
            made: Default::default(),
            most,
        }
    }

    /// Takes a place for one more MCP task, if one is free.
    fn room(&self) -> bool {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        while made
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.ttl)
        {
            made.pop_front();
        }
        let free = made.len() < self.most;
        if free {
            made.push_back(now);
        }
        free
    }

    /// Whether the client of `context` takes tasks (it declared the
    /// extension).
    pub fn client_takes_tasks(context: &RequestContext<RoleServer>) -> bool {
        context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
    }

    /// The MCP task that follows `handle`, started by a call that answered
    /// `started` (the status message until the task reports progress);
    /// `peer` hears of its end.
    pub fn adopt(
        &self,
        handle: TaskHandle,
        started: String,
        peer: Option<Peer<RoleServer>>,
    ) -> Option<CreateTaskResult> {
        if !self.room() {
            tracing::warn!(
                "{} MCP tasks are kept already; this call is answered with its handle as text",
                self.most
            );
            return None;
        }
        let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let options = TaskOptions::new()
            .with_ttl_ms(Some(ttl))
            .with_poll_interval_ms(POLL.as_millis() as u64)
            .with_status_message(started);
        let manager = self.manager.clone();
        let seed = self.manager.spawn(options, move |context| {
            Box::pin(follow(handle, context, peer, manager))
        });
        Some(CreateTaskResult::new(seed))
    }

    /// `tasks/get`.
    pub fn get(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        self.manager.get_task(id).map(GetTaskResult::new)
    }

    /// `tasks/cancel`: the plugin task is cancelled when its follower
    /// hears of it (at once).
    pub fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        self.manager.cancel_task(id)
    }
}

impl Drop for McpTasks {
    /// The connection ended: its MCP tasks end (their plugin tasks end
    /// with the session).
    fn drop(&mut self) {
        self.manager.shutdown();
    }
}

/// Cancels the plugin task when dropped before it ended (the MCP task was
/// aborted: its time to live ran out, or the connection ended).
struct CancelOnDrop(Option<TaskHandle>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.cancel();
        }
    }
}

/// Follows plugin task `handle` to its end: the MCP task's outcome.
async fn follow(
    mut handle: TaskHandle,
    context: TaskContext,
    peer: Option<Peer<RoleServer>>,
    manager: TaskManager,
) -> Result<CallToolResult, TaskExit> {
    let mut guard = CancelOnDrop(Some(handle.clone()));
    let ended = loop {
        tokio::select! {
            biased;
            () = context.cancelled() => {
                handle.cancel();
                break TaskState::Cancelled;
            }
            ended = tokio::time::timeout(POLL, handle.wait()) => match ended {
                Ok(state) => break state,
                Err(_) => {
                    if let TaskState::Running(Some(progress)) = handle.status() {
                        context.set_status_message(progress_text(&progress));
                    }
                }
            },
        }
    };
    // Ended: nothing left to cancel.
    guard.0 = None;
    let how = match &ended {
        TaskState::Succeeded(_) => "succeeded",
        TaskState::Failed(_) => "failed",
        TaskState::Cancelled | TaskState::Running(_) => "cancelled",
    };
    context.set_status_message(how);
    let outcome = match ended {
        TaskState::Succeeded(text) => Ok(map::tool_result(text)),
        TaskState::Failed(error) => Ok(CallToolResult::error(vec![ContentBlock::text(error)])),
        TaskState::Cancelled | TaskState::Running(_) => Err(TaskExit::Cancelled),
    };
    if let (Some(peer), Ok(now)) = (peer, manager.get_task(context.task_id())) {
        notify(&peer, now.task, &outcome).await;
    }
    outcome
}

/// A progress report as a status message: `42%: counting src`.
fn progress_text(progress: &lingxi_wasm_host::TaskProgress) -> String {
    match progress.fraction {
        Some(fraction) => format!("{:.0}%: {}", fraction * 100.0, progress.message),
        None => progress.message.clone(),
    }
}

/// Tells `peer` that `task` ended with `outcome` (`notifications/tasks`).
/// A peer that is gone is no error.
async fn notify(
    peer: &Peer<RoleServer>,
    mut task: Task,
    outcome: &Result<CallToolResult, TaskExit>,
) {
    let payload = match outcome {
        Ok(result) => match serde_json::to_value(result) {
            Ok(serde_json::Value::Object(result)) => TaskPayload::Completed { result },
            _ => TaskPayload::Completed {
                result: JsonObject::new(),
            },
        },
        Err(_) => TaskPayload::Cancelled,
    };
    task.last_updated_at = current_timestamp();
    let params = TaskStatusNotificationParams::new(DetailedTask::new(task, payload));
    let notification =
        ServerNotification::TaskStatusNotification(TaskStatusNotification::new(params));
    let _ = peer.send_notification(notification).await;
}
