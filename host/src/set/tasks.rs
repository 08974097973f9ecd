//! A session's background tasks: one board per plugin (shared by every
//! instance of the plugin in the session), the session's cap over all of
//! them, one event stream, and the embedding API on `Session` (in `session.rs`).

use std::sync::Arc;

use super::{Member, Members};
use crate::limits::TASK_STOP_WAIT;
use crate::observe::Origin;
use crate::tasks::{Events, Recipe, SessionTasks, TaskBoard};

/// The boards of one session, in the order of its plugins.
pub(super) struct Boards {
    list: Box<[Arc<TaskBoard>]>,
    pub(super) events: Events,
}

impl Boards {
    /// A board for every plugin of `members`, all under one cap of `limit`
    /// running tasks.
    pub(super) fn new(members: &Members, session: &Arc<str>, limit: usize) -> Boards {
        let cap = SessionTasks::new(limit);
        let events = Events::default();
        let list = members
            .list
            .iter()
            .map(|member| {
                let recipe = Recipe {
                    component: member.component.clone(),
                    grant: member.grant.clone(),
                    limits: member.limits.clone(),
                    origin: Origin {
                        plugin: member.id().into(),
                        session: session.clone(),
                        sink: member.sink.clone(),
                    },
                    counters: member.counters.clone(),
                };
                TaskBoard::shared(recipe, Some(cap.clone()), events.clone())
            })
            .collect();
        Boards { list, events }
    }

    /// `member`'s board.
    pub(super) fn of(&self, member: &Member) -> Option<&Arc<TaskBoard>> {
        self.by_id(member.id())
    }

    pub(super) fn by_id(&self, plugin: &str) -> Option<&Arc<TaskBoard>> {
        self.list
            .iter()
            .find(|board| &*board.recipe.origin.plugin == plugin)
    }

    /// Cancels every task; no task starts until [`Boards::reopen`].
    pub(super) fn cancel_all(&self) {
        for board in &self.list {
            board.cancel_all();
        }
    }

    /// Cancels every task and waits for them to end (bounded).
    pub(super) async fn stop(&self) {
        let stopping = self.list.iter().map(|board| board.stop(TASK_STOP_WAIT));
        futures_join_all(stopping).await;
    }

    /// Takes tasks again, with fresh breakers.
    pub(super) fn reopen(&self) {
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
