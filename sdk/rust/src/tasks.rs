//! Background tasks: long work a plugin starts from a tool or command call
//! and reads in later calls. LingXi Core gives a call 3.0 s; a task gets
//! minutes, on an instance of its own, so the plugin keeps answering.
//!
//! Register kinds of task in `activate` ([`PluginContext::register_task`](crate::PluginContext::register_task)),
//! start one from a call with [`Tasks::start`] (the id comes back at once),
//! and read it later with [`Tasks::status`]. The host runs the task's
//! [`Task::run`] with the plugin's grants, under budgets of its own (a
//! deadline, memory, output, how many run at once, how long a result is
//! kept).

use std::rc::Rc;

pub use crate::bindings::lingxi::plugin::tasks::{Progress as TaskProgress, TaskState};
use crate::info::InfoHub;
use crate::logger::Logger;
use crate::storage::Storage;
use crate::sys;
use crate::types::{PluginError, PluginResult};

/// A kind of background task (registered like a tool).
pub trait Task: 'static {
    /// The name [`Tasks::start`] is given.
    fn name(&self) -> &str;
    /// What a task of this kind does, for people.
    fn description(&self) -> &str {
        ""
    }
    /// Runs one task to its end on the task's own instance: the returned
    /// text is its result, an error fails it with its text. The host stops
    /// it at its deadline or when it is cancelled.
    fn run(&self, input: &str, context: &TaskContext) -> PluginResult<String>;
}

/// What a running task is handed.
#[derive(Debug, Clone)]
pub struct TaskContext {
    /// The task's id (what [`Tasks::start`] returned).
    pub id: String,
    /// The plugin's logger.
    pub logger: Logger,
    /// The plugin's persistent storage.
    pub storage: Storage,
    /// Read-only view of the host's runtime snapshot as it was when the
    /// task started.
    pub info: InfoHub,
}

impl TaskContext {
    /// Reports progress: `fraction` done (0 to 1, if known) and what the
    /// task is doing. Hosts show it; [`Tasks::status`] reads it. It counts
    /// against the task's output budget: report when something changed,
    /// not in a tight loop.
    pub fn progress(&self, fraction: Option<f64>, message: impl Into<String>) {
        sys::report_progress(&TaskProgress {
            fraction,
            message: message.into(),
        });
    }
}

/// Starts, reads and cancels the plugin's background tasks, from a tool or
/// command call.
#[derive(Debug, Clone)]
pub struct Tasks {
    /// The kinds the plugin registered.
    kinds: Rc<[String]>,
}

impl Tasks {
    pub(crate) fn new(kinds: Rc<[String]>) -> Self {
        Tasks { kinds }
    }

    /// Starts a task of kind `kind` with `input` and returns its id at
    /// once. Fails if no such kind is registered, or if the host refuses
    /// (too many tasks running, the plugin is stopping…), with its reason.
    pub fn start(&self, kind: &str, input: &str) -> PluginResult<String> {
        if !self.kinds.iter().any(|k| k == kind) {
            let known = if self.kinds.is_empty() {
                "none".to_owned()
            } else {
                self.kinds.join(", ")
            };
            return Err(PluginError::new(format!(
                "Task kind '{kind}' not registered by plugin; registered: {known}"
            )));
        }
        sys::start_task(kind, input).map_err(PluginError::new)
    }

    /// The state of task `id`; `None` if the plugin has no such task or its
    /// result expired.
    pub fn status(&self, id: &str) -> Option<TaskState> {
        sys::task_status(id)
    }

    /// Cancels task `id` if it is running: `true` if it was.
    pub fn cancel(&self, id: &str) -> bool {
        sys::cancel_task(id)
    }
}

/// `state` in a word or a line, as a status tool would answer:
/// `running` (with its progress), `done: <result>`, `failed: <error>`,
/// `cancelled`; `unknown task` for `None`.
pub fn describe(state: Option<&TaskState>) -> String {
    match state {
        None => "unknown task".to_owned(),
        Some(TaskState::Running(None)) => "running".to_owned(),
        Some(TaskState::Running(Some(progress))) => match progress.fraction {
            Some(f) => format!("running ({:.0}%): {}", f * 100.0, progress.message),
            None => format!("running: {}", progress.message),
        },
        Some(TaskState::Succeeded(result)) => format!("done: {result}"),
        Some(TaskState::Failed(error)) => format!("failed: {error}"),
        Some(TaskState::Cancelled) => "cancelled".to_owned(),
    }
}

#[cfg(test)]
mod tests;
