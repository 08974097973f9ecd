//! The plugin host a background task runs on, and the task's one call on
//! its fresh instance (a call like any other: `Call::Task`). The tasks
//! themselves, their boards and their embedding API are in `crate::tasks`.

use std::sync::Arc;

use super::PluginHost;
use super::call::{Call, Reply};
use crate::bindings::lingxi::plugin::types as wit;
use crate::deadline::Deadline;
use crate::error::CallError;
use crate::tasks::TaskBoard;

impl PluginHost {
    /// The plugin's task board (its background tasks and crash breaker).
    pub(crate) fn task_board(&self) -> &Arc<TaskBoard> {
        &self.tasks
    }

    /// The latest accepted snapshot, shared.
    pub(crate) fn shared_snapshot(&self) -> Option<Arc<wit::RuntimeSnapshot>> {
        self.snapshot.clone()
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
