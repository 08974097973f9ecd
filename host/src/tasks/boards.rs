//! A session's background tasks: one board per plugin (shared by every
//! instance of the plugin in the session), the session's cap over all of
//! them, and one event stream.

use std::sync::Arc;

use super::{Events, Recipe, SessionTasks, TaskBoard};
use crate::limits::TASK_STOP_WAIT;

/// The boards of one session, in the order of its plugins.
pub(crate) struct Boards {
    list: Box<[Arc<TaskBoard>]>,
    pub(crate) events: Events,
}

impl Boards {
    /// A board for each plugin's `recipes`, all under one cap of `limit`
    /// running tasks.
    pub(crate) fn new(recipes: impl Iterator<Item = Recipe>, limit: usize) -> Boards {
        let cap = SessionTasks::new(limit);
        let events = Events::default();
        let list = recipes
            .map(|recipe| TaskBoard::shared(recipe, Some(cap.clone()), events.clone()))
            .collect();
        Boards { list, events }
    }

    /// The board of plugin `plugin`.
    pub(crate) fn by_id(&self, plugin: &str) -> Option<&Arc<TaskBoard>> {
        self.list
            .iter()
            .find(|board| &*board.recipe.origin.plugin == plugin)
    }

    /// Cancels every task; no task starts until [`Boards::reopen`].
    pub(crate) fn cancel_all(&self) {
        for board in &self.list {
            board.cancel_all();
        }
    }

    /// Cancels every task and waits for them to end (bounded).
    pub(crate) async fn stop(&self) {
        let stopping = self.list.iter().map(|board| board.stop(TASK_STOP_WAIT));
        futures_join_all(stopping).await;
    }

    /// Takes tasks again, with fresh breakers.
    pub(crate) fn reopen(&self) {
        for board in &self.list {
            board.reopen();
        }
    }
}

/// Awaits every future of `all` (they run concurrently).
async fn futures_join_all<F: Future<Output = ()>>(all: impl Iterator<Item = F>) {
    let mut pinned: Vec<_> = all.map(Box::pin).collect();
    std::future::poll_fn(|cx| {
        pinned.retain_mut(|f| f.as_mut().poll(cx).is_pending());
        if pinned.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}
