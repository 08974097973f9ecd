//! Starting and running one task: a plugin host of its own (the plugin's component,
//! grants and limits, the board's breaker), its `task-runner.run` under the
//! task deadline, stopped where it stands when cancelled.

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::board::Launch;
use super::link::TaskPort;
use super::{TaskBoard, TaskError, TaskHandle, TaskState};
use crate::bindings::lingxi::plugin::types as wit;
use crate::error::CallError;
use crate::plugin::PluginHost;
use crate::policy::settings::Setting;
use crate::policy::wording::worded;

/// Starts task `kind` with `input` on `board`, if the board lets it, on an
/// instance of its own seeing `snapshot`.
pub(crate) fn start(
    board: &Arc<TaskBoard>,
    kind: &str,
    input: String,
    snapshot: Option<Arc<wit::RuntimeSnapshot>>,
) -> Result<TaskHandle, TaskError> {
    let (handle, launch) = board.begin(kind, input, snapshot)?;
    let Launch {
        id,
        kind,
        input,
        snapshot,
        cancel,
        executor,
    } = launch;
    executor.spawn(task(board.clone(), id, kind, input, snapshot, cancel));
    Ok(handle)
}

/// What a plugin's own `tasks` import reaches of its board.
impl TaskPort for TaskBoard {
    fn start(
        self: Arc<Self>,
        kind: &str,
        input: String,
        snapshot: Option<Arc<wit::RuntimeSnapshot>>,
    ) -> Result<TaskHandle, TaskError> {
        start(&self, kind, input, snapshot)
    }

    fn status(&self, id: &str) -> Option<TaskState> {
        TaskBoard::status(self, id)
    }

    fn cancel(&self, id: &str) -> bool {
        TaskBoard::cancel(self, id)
    }

    fn progress(&self, id: &str, fraction: Option<f64>, message: &str) {
        TaskBoard::progress(self, id, fraction, message)
    }
}

/// The future of task `id`: runs it to its end, its deadline or its
/// cancellation, then tells the board. Its instance is dropped before the
/// board hears of the end, so a task counted as ended holds nothing.
async fn task(
    board: Arc<TaskBoard>,
    id: Arc<str>,
    kind: Arc<str>,
    input: String,
    snapshot: Option<Arc<wit::RuntimeSnapshot>>,
    cancel: CancellationToken,
) {
    let started = Instant::now();
    let outcome = {
        let mut host = PluginHost::for_task(&board, id.clone());
        if let Some(snapshot) = snapshot {
            // Checked when the serving instance accepted it.
            let _ = host.share_snapshot(snapshot);
        }
        let running = host.run_task(&kind, &input, &id);
        tokio::select! {
            biased;
            () = cancel.cancelled() => TaskState::Cancelled,
            result = running => match result {
                Ok(text) => TaskState::Succeeded(text),
                Err(error) => TaskState::Failed(failure(error)),
            },
        }
    };
    board.finish(&id, outcome, started.elapsed());
}

/// What a failed task says. A task's own error text is passed through; a
/// budget or a crash is said as a task's (its instance is dropped, the
/// plugin's serving instance is untouched), naming the setting that raises
/// the budget.
fn failure(error: CallError) -> String {
    const DROPPED: &str = "its instance was dropped; the plugin keeps answering";
    let mib = |bytes: usize| bytes / (1024 * 1024);
    match error {
        CallError::Plugin(text) => text,
        CallError::Trap { call, reason } => format!("{call} crashed ({reason}); {DROPPED}"),
        CallError::Memory { call, limit_bytes } => format!(
            "{call} exceeded the plugin memory limit of {} MiB and was stopped; {DROPPED} (raise the limit with {})",
            mib(limit_bytes),
            worded(Setting::MaxMemory, "MIB")
        ),
        CallError::OutputFlood { call, limit_bytes } => format!(
            "{call} wrote more than {} MiB of output (stdout, stderr, log and progress together) and was stopped; {DROPPED}",
            mib(limit_bytes)
        ),
        CallError::Exited { call, status } => {
            format!("{call} made its instance exit with status {status}; {DROPPED}")
        }
        other => other.to_string(),
    }
}
