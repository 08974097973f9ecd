//! [`TaskBoard`]: one plugin's background tasks (in one session): what may
//! start, each task's state, how long a finished one is kept, cancelling,
//! stopping, and the events.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::shared::{Events, Recipe, SessionTasks, new_id, new_stream};
use super::{TaskError, TaskEvent, TaskHandle, TaskProgress, TaskState, is_running};
use crate::bindings::lingxi::plugin::types as wit;
use crate::limits::{MAX_NAME, MAX_PROGRESS_MESSAGE};
use crate::recovery::SharedBreaker;
use crate::text::shown_name;

/// One plugin's tasks.
pub(crate) struct TaskBoard {
    pub(crate) recipe: Recipe,
    /// The plugin's crash breaker: its calls and its tasks count here.
    pub(crate) breaker: SharedBreaker,
    tasks: Mutex<Tasks>,
    events: Events,
    session: Option<Arc<SessionTasks>>,
    /// Woken whenever a task ends.
    ended: Notify,
}

#[derive(Default)]
struct Tasks {
    by_id: HashMap<Arc<str>, Entry>,
    /// Finished tasks, oldest first, with when they ended and the bytes
    /// their result or error holds.
    finished: VecDeque<(Instant, Arc<str>, usize)>,
    /// The bytes of `finished` together.
    kept_bytes: usize,
    /// Tasks holding a place under the caps: running, not cancelled.
    running: usize,
    /// Task futures not yet ended (a cancelled one ends at its next poll).
    live: usize,
    /// Set while stopping: no task starts.
    stopping: bool,
}

struct Entry {
    kind: Arc<str>,
    /// Whether it still holds a place under the caps (given back when it
    /// is cancelled or ends, whichever comes first).
    holds_place: bool,
    state: watch::Sender<TaskState>,
    cancel: CancellationToken,
}

/// A task entered on a board, to be run ([`super::run::start`]).
pub(super) struct Launch {
    pub(super) id: Arc<str>,
    pub(super) kind: Arc<str>,
    pub(super) input: String,
    pub(super) snapshot: Option<Arc<wit::RuntimeSnapshot>>,
    pub(super) cancel: CancellationToken,
    pub(super) executor: &'static tokio::runtime::Runtime,
}

impl TaskBoard {
    /// A board of its own (a lone plugin host's).
    pub(crate) fn new(recipe: Recipe) -> Arc<Self> {
        TaskBoard::shared(recipe, None, Events::default())
    }

    /// A board in a session: the session's cap and event stream.
    pub(crate) fn shared(
        recipe: Recipe,
        session: Option<Arc<SessionTasks>>,
        events: Events,
    ) -> Arc<Self> {
        Arc::new(TaskBoard {
            recipe,
            breaker: SharedBreaker::default(),
            tasks: Mutex::default(),
            events,
            session,
            ended: Notify::new(),
        })
    }

    /// Subscribes to `events`, making its channel if nobody did yet.
    pub(crate) fn subscribe_to(events: &Events) -> broadcast::Receiver<TaskEvent> {
        events.get_or_init(new_stream).subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, Tasks> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn plugin(&self) -> &Arc<str> {
        &self.recipe.origin.plugin
    }

    /// Events of this board's tasks (and, in a session, of its other
    /// plugins' tasks).
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        TaskBoard::subscribe_to(&self.events)
    }

    /// Enters task `kind` with `input` on the board, if it may start, and
    /// returns what running it takes ([`super::run::start`] runs it on an
    /// instance of its own, seeing `snapshot`).
    pub(super) fn begin(
        self: &Arc<Self>,
        kind: &str,
        input: String,
        snapshot: Option<Arc<wit::RuntimeSnapshot>>,
    ) -> Result<(TaskHandle, Launch), TaskError> {
        let plugin = self.plugin().to_string();
        if !self.recipe.component.pre.runs_tasks() {
            return Err(TaskError::NoRunner { plugin });
        }
        if kind.is_empty() || kind.len() > MAX_NAME {
            return Err(TaskError::BadKind {
                kind: shown_name(kind),
                max: MAX_NAME,
            });
        }
        let limits = &self.recipe.limits;
        if input.len() > limits.max_result_bytes {
            return Err(TaskError::InputTooLarge {
                size: input.len(),
                limit: limits.max_result_bytes,
            });
        }
        if let Some(refusal) = self.breaker.refusal(&plugin, limits) {
            return Err(TaskError::Disabled(refusal.to_string()));
        }
        let executor = super::executor()?;
        let (id, handle, cancel) = {
            let mut tasks = self.lock();
            self.forget_expired(&mut tasks);
            if tasks.stopping {
                return Err(TaskError::Stopping { plugin });
            }
            if tasks.running >= limits.max_tasks {
                return Err(TaskError::TooMany {
                    plugin,
                    limit: limits.max_tasks,
                });
            }
            if let Some(session) = &self.session
                && !session.take()
            {
                return Err(TaskError::SessionFull {
                    limit: session.limit,
                });
            }
            let id = new_id(|id| tasks.by_id.contains_key(id));
            let kind: Arc<str> = kind.into();
            let (state, receiver) = watch::channel(TaskState::Running(None));
            let cancel = CancellationToken::new();
            tasks.by_id.insert(
                id.clone(),
                Entry {
                    kind: kind.clone(),
                    holds_place: true,
                    state,
                    cancel: cancel.clone(),
                },
            );
            tasks.running += 1;
            tasks.live += 1;
            let handle = TaskHandle {
                board: self.clone(),
                id: id.clone(),
                kind,
                state: receiver,
            };
            (id, handle, cancel)
        };
        let origin = &self.recipe.origin;
        tracing::info!(
            plugin = %origin.plugin, session = %origin.session, task = %id,
            "background task '{}' started", shown_name(handle.kind())
        );
        self.announce(&id, handle.kind.clone(), TaskState::Running(None));
        let launch = Launch {
            id,
            kind: handle.kind.clone(),
            input,
            snapshot,
            cancel,
            executor,
        };
        Ok((handle, launch))
    }

    /// A handle on task `id`, if it is known.
    pub(crate) fn handle(self: &Arc<Self>, id: &str) -> Option<TaskHandle> {
        let mut tasks = self.lock();
        self.forget_expired(&mut tasks);
        let (id, entry) = tasks.by_id.get_key_value(id)?;
        Some(TaskHandle {
            board: self.clone(),
            id: id.clone(),
            kind: entry.kind.clone(),
            state: entry.state.subscribe(),
        })
    }

    /// Task `id`'s state, if it is known.
    pub(crate) fn status(&self, id: &str) -> Option<TaskState> {
        let mut tasks = self.lock();
        self.forget_expired(&mut tasks);
        Some(tasks.by_id.get(id)?.state.borrow().clone())
    }

    /// Cancels task `id` if it runs: its state is `Cancelled` and its
    /// place under the caps free from now on, and its instance is dropped
    /// where it stands.
    pub(crate) fn cancel(&self, id: &str) -> bool {
        let mut tasks = self.lock();
        let Some(entry) = tasks.by_id.get(id) else {
            return false;
        };
        if !is_running(&entry.state.borrow()) {
            return false;
        }
        // Told before it is seen: whoever waits for the end finds the
        // event already sent.
        self.announce(id, entry.kind.clone(), TaskState::Cancelled);
        entry.state.send_replace(TaskState::Cancelled);
        entry.cancel.cancel();
        self.give_back(&mut tasks, id);
        true
    }

    /// Gives task `id`'s place under the caps back, if it holds one.
    fn give_back(&self, tasks: &mut Tasks, id: &str) {
        let Some(entry) = tasks.by_id.get_mut(id) else {
            return;
        };
        if std::mem::take(&mut entry.holds_place) {
            tasks.running = tasks.running.saturating_sub(1);
            if let Some(session) = &self.session {
                session.give_back();
            }
        }
    }

    /// Records task `id`'s progress.
    pub(crate) fn progress(&self, id: &str, fraction: Option<f64>, message: &str) {
        let fraction = fraction.map(|f| if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) });
        let mut message = crate::text::printable(message).into_owned();
        if message.len() > MAX_PROGRESS_MESSAGE {
            let mut end = MAX_PROGRESS_MESSAGE;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        let state = TaskState::Running(Some(TaskProgress { fraction, message }));
        let tasks = self.lock();
        let Some(entry) = tasks.by_id.get(id) else {
            return;
        };
        // Under the lock: a progress report never follows the task's end
        // in the events.
        if is_running(&entry.state.borrow()) {
            self.announce(id, entry.kind.clone(), state.clone());
            entry.state.send_replace(state);
        }
    }

    /// Task `id` ended with `outcome` (unless it was cancelled first): it
    /// is kept as finished, its places are given back.
    pub(super) fn finish(&self, id: &Arc<str>, outcome: TaskState, took: Duration) {
        let (kind, state) = {
            let mut tasks = self.lock();
            let Some(entry) = tasks.by_id.get(id) else {
                return;
            };
            // A cancelled task was announced when it was cancelled.
            if is_running(&entry.state.borrow()) {
                self.announce(id, entry.kind.clone(), outcome.clone());
                entry.state.send_replace(outcome);
            }
            let ended = (entry.kind.clone(), entry.state.borrow().clone());
            self.give_back(&mut tasks, id);
            tasks.live = tasks.live.saturating_sub(1);
            let size = match &ended.1 {
                TaskState::Succeeded(text) | TaskState::Failed(text) => text.len(),
                _ => 0,
            };
            tasks.finished.push_back((Instant::now(), id.clone(), size));
            tasks.kept_bytes = tasks.kept_bytes.saturating_add(size);
            self.forget_expired(&mut tasks);
            ended
        };
        let origin = &self.recipe.origin;
        let (kind_shown, secs) = (shown_name(&kind), took.as_secs_f64());
        match &state {
            TaskState::Failed(error) => tracing::warn!(
                plugin = %origin.plugin, session = %origin.session, task = %id,
                "background task '{kind_shown}' failed after {secs:.1} s: {error}"
            ),
            ended => {
                let how = match ended {
                    TaskState::Cancelled => "was cancelled",
                    _ => "succeeded",
                };
                tracing::info!(
                    plugin = %origin.plugin, session = %origin.session, task = %id,
                    "background task '{kind_shown}' {how} after {secs:.1} s"
                );
            }
        }
        self.ended.notify_waiters();
    }

    /// Forgets finished tasks kept longer than the limits say, oldest first.
    fn forget_expired(&self, tasks: &mut Tasks) {
        let limits = &self.recipe.limits;
        let now = Instant::now();
        while let Some((ended, id, size)) = tasks.finished.front() {
            let too_old = now.duration_since(*ended) > limits.task_keep;
            let too_many = tasks.finished.len() > limits.max_kept_tasks;
            let too_big = tasks.kept_bytes > limits.max_kept_bytes && tasks.finished.len() > 1;
            if !(too_old || too_many || too_big) {
                break;
            }
            tasks.kept_bytes = tasks.kept_bytes.saturating_sub(*size);
            tasks.by_id.remove(id);
            tasks.finished.pop_front();
        }
    }

    /// Cancels every running task but `except` (the one asking, which ends
    /// on its own), saying `why` in the log when there was one; new ones
    /// may start.
    pub(crate) fn cancel_running(&self, why: &str, except: Option<&str>) {
        let mut running = self.running_ids(&mut self.lock());
        running.retain(|id| Some(&**id) != except);
        if !running.is_empty() {
            let origin = &self.recipe.origin;
            tracing::warn!(
                plugin = %origin.plugin, session = %origin.session,
                "cancelling {} background task(s): {why}", running.len()
            );
        }
        for id in running {
            self.cancel(&id);
        }
    }

    /// The ids of the running tasks.
    fn running_ids(&self, tasks: &mut Tasks) -> Vec<Arc<str>> {
        tasks
            .by_id
            .iter()
            .filter(|(_, e)| is_running(&e.state.borrow()))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Cancels every running task and refuses new ones.
    pub(crate) fn cancel_all(&self) {
        let mut tasks = self.lock();
        tasks.stopping = true;
        let running = self.running_ids(&mut tasks);
        drop(tasks);
        for id in running {
            self.cancel(&id);
        }
    }

    /// Cancels every running task, refuses new ones, and waits (at most
    /// `wait`) until they have ended.
    pub(crate) async fn stop(&self, wait: Duration) {
        self.cancel_all();
        let settled = async {
            loop {
                let ended = self.ended.notified();
                if self.lock().live == 0 {
                    return;
                }
                ended.await;
            }
        };
        if tokio::time::timeout(wait, settled).await.is_err() {
            tracing::warn!(
                plugin = %self.recipe.origin.plugin, session = %self.recipe.origin.session,
                "background tasks still ending after {:.1} s; not waiting for them",
                wait.as_secs_f64()
            );
        }
    }

    /// Starts taking tasks again after [`TaskBoard::stop`] (a session's
    /// plugin deactivated and used again), with a fresh breaker.
    pub(crate) fn reopen(&self) {
        self.lock().stopping = false;
        self.breaker.reset();
    }

    /// How many of its tasks have not ended yet.
    pub(crate) fn live(&self) -> usize {
        self.lock().live
    }

    fn announce(&self, id: &str, kind: Arc<str>, state: TaskState) {
        // Nobody subscribed yet: nobody to tell.
        let Some(events) = self.events.get() else {
            return;
        };
        // No reader left is no error.
        let _ = events.send(TaskEvent {
            plugin: self.recipe.origin.plugin.clone(),
            session: self.recipe.origin.session.clone(),
            task: id.into(),
            kind,
            state,
        });
    }
}
