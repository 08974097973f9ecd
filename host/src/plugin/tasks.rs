//! A plugin host's background tasks: the embedding API (start, find, watch,
//! stop), a set's sharing of one board per plugin and session, and the
//! host a task runs on.

use std::sync::Arc;

use tokio::sync::broadcast;

use super::PluginHost;
use super::call::{Call, Reply};
use crate::deadline::Deadline;
use crate::error::CallError;
use crate::limits::TASK_STOP_WAIT;
use crate::tasks::{TaskBoard, TaskError, TaskEvent, TaskHandle};

impl PluginHost {
    /// Starts a background task of kind `kind` with `input`, as the
    /// plugin's own `tasks.start` would: on an instance of its own, with
    /// the plugin's grants, under [`Limits::task_timeout`](crate::Limits::task_timeout),
    /// seeing the latest snapshot. Refused past
    /// [`Limits::max_tasks`](crate::Limits::max_tasks) running tasks.
    pub fn start_task(&mut self, kind: &str, input: &str) -> Result<TaskHandle, TaskError> {
        self.tasks
            .start(kind, input.to_owned(), self.snapshot.clone())
    }

    /// A handle on task `id` (started by the plugin or by
    /// [`PluginHost::start_task`]), unless it is unknown or its state expired.
    pub fn task(&self, id: &str) -> Option<TaskHandle> {
        self.tasks.handle(id)
    }

    /// Every start, progress report and end of the plugin's tasks from now
    /// on. A reader that falls [`broadcast`] far behind is told how many it
    /// missed.
    pub fn task_events(&self) -> broadcast::Receiver<TaskEvent> {
        self.tasks.subscribe()
    }

    /// Cancels every running task of the plugin and waits for them (at most
    /// [`TASK_STOP_WAIT`]); no task starts afterwards. The launcher does it
    /// when its input closes, before `deactivate`.
    pub async fn stop_tasks(&self) {
        self.tasks.stop(TASK_STOP_WAIT).await;
    }

    /// The host that runs task `id` of `board`'s plugin.
    pub(crate) fn for_task(board: &Arc<TaskBoard>, id: Arc<str>) -> PluginHost {
        let recipe = &board.recipe;
        let mut host = PluginHost::with_origin(
            recipe.component.clone(),
            recipe.grant.clone(),
            recipe.limits.clone(),
            recipe.origin.clone(),
            recipe.counters.clone(),
            Some(board.clone()),
        );
        host.task = Some(id);
        host
    }

    /// Runs the task on a fresh instance within the task deadline (making
    /// the instance counts): its result text, held to the result limit.
    pub(crate) async fn run_task(
        &mut self,
        kind: &str,
        input: &str,
        id: &str,
    ) -> Result<String, CallError> {
        let mut deadline = Deadline::after(self.limits.task_timeout);
        let call = Call::Task { kind, input, id };
        self.ensure_live(&call, &mut deadline).await?;
        let Reply::Text(output) = self.guard(&call, &mut deadline).await? else {
            unreachable!("a task's run answers text")
        };
        self.check_size(&call, output.len())?;
        Ok(output)
    }
}
