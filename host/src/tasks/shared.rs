//! What a plugin's task board shares with the rest: the recipe of a
//! task's instance, a session's cap and event stream, and task ids.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::broadcast;

use super::TaskEvent;
use crate::engine::PluginComponent;
use crate::limits::Limits;
use crate::observe::{Counters, Origin};
use crate::policy::Grant;

/// What a task's instance is made from: the plugin's component and
/// sandbox, as its serving instance has them.
#[derive(Clone)]
pub(crate) struct Recipe {
    pub(crate) component: PluginComponent,
    pub(crate) grant: Grant,
    pub(crate) limits: Limits,
    pub(crate) origin: Origin,
    pub(crate) counters: Arc<Counters>,
}

/// The tasks running in one session of a set, over all its plugins.
#[derive(Debug)]
pub(crate) struct SessionTasks {
    running: AtomicUsize,
    pub(super) limit: usize,
}

impl SessionTasks {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(SessionTasks {
            running: AtomicUsize::new(0),
            limit,
        })
    }

    /// Takes a place if one is free.
    pub(super) fn take(&self) -> bool {
        self.running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.limit).then_some(n + 1)
            })
            .is_ok()
    }

    pub(super) fn give_back(&self) {
        self.running.fetch_sub(1, Ordering::AcqRel);
    }
}

use crate::limits::TASK_EVENT_BACKLOG as EVENT_BACKLOG;

/// Where task events go: a channel made when the first reader subscribes
/// (its backlog is allocated up front, and most sessions never read
/// events), shared by the boards of one session.
pub(crate) type Events = Arc<OnceLock<broadcast::Sender<TaskEvent>>>;

/// A new event channel.
pub(super) fn new_stream() -> broadcast::Sender<TaskEvent> {
    broadcast::channel(EVENT_BACKLOG).0
}

/// A task id nobody can guess and no other task of the board has: `t-`
/// and 16 hexadecimal digits.
pub(super) fn new_id(taken: impl Fn(&str) -> bool) -> Arc<str> {
    loop {
        let random = getrandom::u64().unwrap_or_else(|_| fallback_random());
        let id: Arc<str> = format!("t-{random:016x}").into();
        if !taken(&id) {
            return id;
        }
    }
}

/// Where the system has no random source: the clock and a counter, hashed
/// with the process's random keys.
fn fallback_random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_usize(COUNT.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}
