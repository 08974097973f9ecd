//! The host side of the WIT `tasks` interface: what a plugin's own code
//! may do with its tasks. A plugin reaches only its own board (in a set,
//! its board in that session): another plugin's task ids are unknown here.

use super::link::TaskLink;
use super::{TaskError, TaskState};
use crate::bindings::lingxi::plugin::tasks::{self, Progress};
use crate::limits::LINE_OVERHEAD;
use crate::state::HostState;

impl tasks::Host for HostState {
    fn start(&mut self, kind: String, input: String) -> Result<String, String> {
        let started = match &self.tasks {
            None => Err(TaskError::Unavailable),
            Some(TaskLink { task: Some(_), .. }) => Err(TaskError::FromTask),
            Some(TaskLink { board, task: None }) => {
                board.clone().start(&kind, input, self.snapshot.clone())
            }
        };
        let handle = started.map_err(|e| e.to_string())?;
        self.effects.task(handle.id());
        Ok(handle.id().to_owned())
    }

    fn status(&mut self, id: String) -> Option<TaskState> {
        self.tasks.as_ref()?.board.status(&id)
    }

    fn cancel(&mut self, id: String) -> bool {
        self.tasks
            .as_ref()
            .is_some_and(|link| link.board.cancel(&id))
    }

    fn report_progress(&mut self, progress: Progress) -> wasmtime::Result<()> {
        let Some(TaskLink {
            board,
            task: Some(id),
        }) = &self.tasks
        else {
            return Ok(());
        };
        // A progress report is output: a task that floods them is stopped
        // like one that floods its log.
        self.output
            .spend(progress.message.len().saturating_add(LINE_OVERHEAD))?;
        let message = self.origin.hide(&progress.message);
        board.progress(id, progress.fraction, &message);
        Ok(())
    }
}
