//! Running one task: a plugin host of its own (the plugin's component,
//! grants and limits, the board's breaker), its `task-runner.run` under the
//! task deadline, stopped where it stands when cancelled.

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{TaskBoard, TaskState};
use crate::bindings::lingxi::plugin::types as wit;
use crate::error::CallError;
use crate::plugin::PluginHost;
use crate::policy::settings::Setting;
use crate::policy::wording::worded;

/// The future of task `id`: runs it to its end, its deadline or its
/// cancellation, then tells the board. Its instance is dropped before the
/// board hears of the end, so a task counted as ended holds nothing.
pub(super) async fn task(
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
