//! What an instance's store holds of tasks ([`TaskLink`]): the few things
//! the plugin's own `tasks` import may do with its board ([`TaskPort`]),
//! and the task the instance runs, if it runs one. The store names only
//! this, not the board, whose tasks are made of the plugin's component.

use std::sync::Arc;

use super::{TaskError, TaskHandle, TaskState};
use crate::bindings::lingxi::plugin::types as wit;

/// What a plugin's `tasks` import may do with its board.
pub(crate) trait TaskPort: Send + Sync {
    /// Starts task `kind` with `input`, seeing `snapshot`.
    fn start(
        self: Arc<Self>,
        kind: &str,
        input: String,
        snapshot: Option<Arc<wit::RuntimeSnapshot>>,
    ) -> Result<TaskHandle, TaskError>;
    /// Task `id`'s state, if it is known.
    fn status(&self, id: &str) -> Option<TaskState>;
    /// Cancels task `id`; whether it was running.
    fn cancel(&self, id: &str) -> bool;
    /// Task `id`'s progress, as its own instance reports it.
    fn progress(&self, id: &str, fraction: Option<f64>, message: &str);
}

/// What an instance may do with tasks: its plugin's board, and the task it
/// runs, if it is a task's instance.
#[derive(Clone)]
pub(crate) struct TaskLink {
    pub(crate) board: Arc<dyn TaskPort>,
    pub(crate) task: Option<Arc<str>>,
}
