//! Background tasks: long work a plugin starts from a call (or a host
//! starts for it) and reads later, each on an instance of its own.
//!
//! A plugin's tasks live on its [`TaskBoard`](board::TaskBoard): one per
//! [`PluginHost`](crate::PluginHost), shared by every instance of the
//! plugin in one [`Session`](crate::Session) of a set. The board decides
//! what may start (the plugin's and the session's caps, a disabled plugin,
//! a stopping one), keeps each task's state and the finished ones for a
//! bounded time and count, and hands out events. Starting and running one
//! task (its instance, its deadline, cancellation) is [`run`]; the
//! plugin's side of the WIT `tasks` interface is [`import`], and what an
//! instance's store holds of its board is [`link`] (the few things the
//! import may do, so that the store does not name the board); a session's boards, under its
//! cap, are [`boards`]; the embedding API on `PluginHost` and `Session`
//! is [`api`]. Every number is in [`crate::limits`].
//!
//! Tasks run on a multi-threaded tokio runtime of this library's own,
//! started with the first task: the launcher's loop blocks on stdin between
//! requests, and a task must go on meanwhile.

mod api;
mod board;
mod boards;
mod import;
mod link;
mod run;
mod shared;

pub(crate) use board::TaskBoard;
pub(crate) use boards::Boards;
pub(crate) use link::TaskLink;
pub(crate) use shared::{Events, Recipe, SessionTasks};

use std::sync::{Arc, OnceLock};

use tokio::sync::watch;

pub use crate::bindings::lingxi::plugin::tasks::{Progress as TaskProgress, TaskState};
use crate::policy::settings::Setting;
use crate::policy::wording::worded;

/// Why a task was not started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskError {
    /// The component exports no task runner.
    #[error(
        "plugin {plugin} runs no background tasks: its component exports no task runner (rebuild it with an SDK that has tasks)"
    )]
    NoRunner {
        /// The plugin id.
        plugin: String,
    },
    /// The plugin already runs as many tasks as it may.
    #[error("{}", too_many(plugin, *limit))]
    TooMany {
        /// The plugin id.
        plugin: String,
        /// The limit in force.
        limit: usize,
    },
    /// The session already runs as many tasks as the set allows.
    #[error(
        "this session already runs {limit} background task(s) over all its plugins, the set's limit: wait for one to end or cancel one"
    )]
    SessionFull {
        /// The limit in force.
        limit: usize,
    },
    /// A task tried to start a task.
    #[error("a background task cannot start another task: start tasks from a tool or command call")]
    FromTask,
    /// The task kind's name is empty or too long.
    #[error("'{kind}' is not a task kind: give a name of 1 to {max} bytes")]
    BadKind {
        /// The name, cut for the message.
        kind: String,
        /// The longest name accepted.
        max: usize,
    },
    /// The task's input is larger than a call's result may be.
    #[error("a task input of {size} bytes is more than the {limit}-byte limit")]
    InputTooLarge {
        /// Its size.
        size: usize,
        /// The limit in force (the result limit).
        limit: usize,
    },
    /// The plugin is disabled after repeated crashes.
    #[error("{0}")]
    Disabled(String),
    /// The plugin is stopping (its input closed, its session closing).
    #[error("plugin {plugin} is stopping: it starts no more tasks")]
    Stopping {
        /// The plugin id.
        plugin: String,
    },
    /// The runtime tasks run on could not be started.
    #[error("cannot start the background task runtime: {0}")]
    Runtime(String),
    /// No plugin of this id is in the session.
    #[error("no plugin {plugin} in this session; the set's ids list the plugins there are")]
    NoSuchPlugin {
        /// The id asked for.
        plugin: String,
    },
    /// The host has no board to start tasks on (the plugin is being
    /// inspected, e.g. asked for its manifest).
    #[error("no background tasks can be started here")]
    Unavailable,
}

/// Something that happened to a task: it started, reported progress, or
/// ended. Read them from [`PluginHost::task_events`](crate::PluginHost::task_events)
/// or [`Session::task_events`](crate::Session::task_events).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEvent {
    /// The plugin whose task it is.
    pub plugin: Arc<str>,
    /// The session it belongs to (empty for a lone plugin host).
    pub session: Arc<str>,
    /// The task id.
    pub task: Arc<str>,
    /// Its kind.
    pub kind: Arc<str>,
    /// Its state now: `Running` when it started or reported progress, the
    /// final state when it ended.
    pub state: TaskState,
}

/// A running or finished task, for the host that embeds plugins: read its
/// state, wait for its end, cancel it. Dropping the handle does not cancel
/// the task.
#[derive(Clone)]
pub struct TaskHandle {
    board: Arc<TaskBoard>,
    id: Arc<str>,
    kind: Arc<str>,
    state: watch::Receiver<TaskState>,
}

impl std::fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHandle")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("state", &*self.state.borrow())
            .finish()
    }
}

impl TaskHandle {
    /// The task id (what the plugin's own calls name it by).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The task's kind.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Its state now.
    pub fn status(&self) -> TaskState {
        self.state.borrow().clone()
    }

    /// Waits for its end and returns how it ended (never `Running`).
    pub async fn wait(&mut self) -> TaskState {
        if let Ok(state) = self.state.wait_for(|s| !is_running(s)).await {
            return state.clone();
        }
        // The board ended without a final state: only if the runtime shut
        // down under the task.
        match self.status() {
            TaskState::Running(_) => TaskState::Failed(
                "the background task runtime stopped before the task ended".into(),
            ),
            ended => ended,
        }
    }

    /// Cancels the task if it is running (it is stopped where it stands):
    /// `true` if it was running.
    pub fn cancel(&self) -> bool {
        self.board.cancel(&self.id)
    }
}

/// The refusal of one task more than `limit`.
fn too_many(plugin: &str, limit: usize) -> String {
    let raise = worded(Setting::MaxTasks, "N");
    match limit {
        0 => format!(
            "plugin {plugin} may run no background tasks: they are turned off (allow them with {raise})"
        ),
        1 => format!(
            "plugin {plugin} already runs 1 background task, its limit: wait for it to end or cancel it (raise the limit with {raise})"
        ),
        n => format!(
            "plugin {plugin} already runs {n} background tasks, its limit: wait for one to end or cancel one (raise the limit with {raise})"
        ),
    }
}

/// Whether `state` is a running task's.
pub(crate) fn is_running(state: &TaskState) -> bool {
    matches!(state, TaskState::Running(_))
}

/// The runtime every task of this process runs on, started with the first
/// task; its threads wait idle without tasks.
fn executor() -> Result<&'static tokio::runtime::Runtime, TaskError> {
    static EXECUTOR: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    let made = EXECUTOR.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4));
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("lingxi-wasm-task")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    });
    made.as_ref().map_err(|e| TaskError::Runtime(e.clone()))
}

#[cfg(test)]
mod tests;
