//! The embedding API of background tasks: start, find, watch and stop them
//! on a [`PluginHost`] (its own board) and on a [`Session`] of a set (one
//! board per plugin, under the session's cap).

use tokio::sync::broadcast;

use super::{TaskBoard, TaskError, TaskEvent, TaskHandle};
use crate::limits::TASK_STOP_WAIT;
use crate::plugin::PluginHost;
use crate::set::Session;
use crate::text::shown_name;

impl PluginHost {
    /// Starts a background task of kind `kind` with `input`, as the
    /// plugin's own `tasks.start` would: on an instance of its own, with
    /// the plugin's grants, under [`Limits::task_timeout`](crate::Limits::task_timeout),
    /// seeing the latest snapshot. Refused past
    /// [`Limits::max_tasks`](crate::Limits::max_tasks) running tasks.
    pub fn start_task(&mut self, kind: &str, input: &str) -> Result<TaskHandle, TaskError> {
        super::run::start(
            self.task_board(),
            kind,
            input.to_owned(),
            self.shared_snapshot(),
        )
    }

    /// A handle on task `id` (started by the plugin or by
    /// [`PluginHost::start_task`]), unless it is unknown or its state expired.
    pub fn task(&self, id: &str) -> Option<TaskHandle> {
        self.task_board().handle(id)
    }

    /// Every start, progress report and end of the plugin's tasks from now
    /// on. A reader that falls [`broadcast`] far behind is told how many it
    /// missed.
    pub fn task_events(&self) -> broadcast::Receiver<TaskEvent> {
        self.task_board().subscribe()
    }

    /// Cancels every running task of the plugin and waits for them (at most
    /// [`TASK_STOP_WAIT`]); no task starts afterwards. The launcher does it
    /// when its input closes, before `deactivate`.
    pub async fn stop_tasks(&self) {
        self.task_board().stop(TASK_STOP_WAIT).await;
    }
}

impl Session {
    /// Starts a background task of plugin `plugin`, of kind `kind` with
    /// `input`, as the plugin's own `tasks.start` would: on an instance of
    /// its own, with the plugin's grants, under its
    /// [`Limits::task_timeout`](crate::Limits::task_timeout), seeing the
    /// session's snapshot. Refused past the plugin's
    /// [`Limits::max_tasks`](crate::Limits::max_tasks) or the session's cap
    /// ([`PluginSet::with_session_tasks`](crate::PluginSet::with_session_tasks)).
    pub fn start_task(
        &self,
        plugin: &str,
        kind: &str,
        input: &str,
    ) -> Result<TaskHandle, TaskError> {
        let board = (self.task_boards().by_id(plugin)).ok_or_else(|| TaskError::NoSuchPlugin {
            plugin: shown_name(plugin),
        })?;
        super::run::start(board, kind, input.to_owned(), self.shared_snapshot())
    }

    /// A handle on plugin `plugin`'s task `id`, unless it is unknown or its
    /// state expired.
    pub fn task(&self, plugin: &str, id: &str) -> Option<TaskHandle> {
        self.task_boards().by_id(plugin)?.handle(id)
    }

    /// Every start, progress report and end of the session's tasks (all its
    /// plugins') from now on.
    pub fn task_events(&self) -> broadcast::Receiver<TaskEvent> {
        TaskBoard::subscribe_to(&self.task_boards().events)
    }
}
