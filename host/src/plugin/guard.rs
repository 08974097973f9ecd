//! Running one call: a live instance that mounts the current workspace
//! root (made, and re-initialized, within the request's deadline), the
//! call itself under that deadline, the quota check after calls that wrote,
//! and what a failure does to the instance and the counters.

use std::fmt::Display;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::call::{Call, Reply};
use super::{LiveInstance, PluginHost};
use crate::deadline::{Deadline, Expired};
use crate::effects::{Metered, ReceiptSlot};
use crate::error::CallError;
use crate::limits::cap_text;
use crate::observe::Ending;
use crate::policy::receipt::Receipt;
use crate::policy::secrets::Redactor;
use crate::recovery::classify;

/// How the host's note on a call the sandbox refused something in starts.
const SANDBOX_NOTE: &str = "[refused by the sandbox:";

impl PluginHost {
    /// Where the workspace should be mounted now, if the policy mounts it.
    fn desired_root(&self) -> Option<&Path> {
        self.policy.workspace_access()?;
        self.known_root()
    }

    /// The workspace root, mounted or not: fixed by the user, else the
    /// snapshot's (or the folder under it the grant names).
    pub(super) fn known_root(&self) -> Option<&Path> {
        self.mounts.workspace.as_deref()
    }

    /// Makes sure a live instance exists that mounts the current workspace
    /// root, for `call` and within its deadline. A fresh instance is
    /// re-initialized with the last successful initialize request, unless
    /// `call` is an initialize itself.
    pub(super) async fn ensure_live(
        &mut self,
        call: &Call<'_>,
        deadline: &mut Deadline,
    ) -> Result<(), CallError> {
        if self.is_live()? {
            return Ok(());
        }
        self.start_live(call, deadline).await
    }

    /// Whether the live instance can take the call as it is: an error if
    /// the plugin's breaker refuses calls; `false` if there is no instance,
    /// the previous call was cancelled in it, or it mounts another root.
    /// (Not async: the way of most calls makes no future for it.)
    pub(super) fn is_live(&mut self) -> Result<bool, CallError> {
        if let Some(refusal) = self
            .tasks
            .breaker
            .refusal(&self.manifest().id, &self.limits)
        {
            return Err(refusal);
        }
        if self.live.as_ref().is_some_and(|live| live.in_call) {
            tracing::info!(
                plugin = %self.origin.plugin, session = %self.origin.session,
                "the previous call was cancelled by its caller; restarting the plugin"
            );
            self.live = None;
        }
        let generation = self.mounts.generation;
        let Some(live) = &self.live else {
            return Ok(false);
        };
        if live.mounts_seen == generation {
            return Ok(true);
        }
        let current = live.root.as_deref() == self.desired_root()
            && self.mounts.opens(live.under_root.as_deref());
        if let Some(live) = self.live.as_mut().filter(|_| current) {
            live.mounts_seen = generation;
        }
        Ok(current)
    }

    /// Starts an instance for `call` (see [`PluginHost::ensure_live`]).
    pub(super) async fn start_live(
        &mut self,
        call: &Call<'_>,
        deadline: &mut Deadline,
    ) -> Result<(), CallError> {
        // Looked up again right before they are opened: a folder under
        // the root made a link out of it since the snapshot is left out.
        self.resolve_mounts();
        let root = self.desired_root().map(Path::to_path_buf);
        if let Some(live) = self.live.take() {
            let changed = match root.as_deref() {
                _ if live.root == root => {
                    "the folders named under the workspace root are others now".to_owned()
                }
                Some(dir) => format!("{} is mounted as the workspace now", dir.display()),
                None => "no workspace is mounted now".to_owned(),
            };
            tracing::info!(
                plugin = %self.origin.plugin, session = %self.origin.session,
                "the workspace changed ({changed}); restarting the plugin"
            );
            // Tasks mount the folders they started with: none goes on in
            // a workspace the user left.
            self.tasks
                .cancel_running("the workspace root changed", None);
        }
        let folders = &self.mounts;
        // Said only where it matters: a plugin that mounts the project.
        let mounts = self.policy.workspace_access().is_some();
        let shared = (folders.shared_root.iter())
            .filter(|_| mounts)
            .map(|s| s as &dyn Display);
        for left_out in shared.chain(folders.left_out.iter().map(|e| e as &dyn Display)) {
            tracing::warn!(plugin = %self.origin.plugin, session = %self.origin.session, "{left_out}");
        }
        let grant = folders.grant(&self.grant).clone();
        let live = self.instantiate(root, &grant, call, *deadline).await?;
        self.live = Some(live);
        let for_initialize = matches!(call, Call::Initialize(_));
        if let Some(request) = self.initialized_with.clone().filter(|_| !for_initialize) {
            self.guard(&Call::Reinitialize(&request), deadline).await?;
        }
        Ok(())
    }

    /// After a call that wrote (or may have): fails it if the data directory is now
    /// over quota, and drops the instance so the next one mounts it read-only.
    fn check_quota(&mut self, label: &dyn Display) -> Result<(), CallError> {
        let (Some(live), Some(data)) = (&mut self.live, &self.data) else {
            return Ok(());
        };
        let state = live.store.data_mut();
        if !live.data_writable || !state.writes.take(&mut state.table) {
            return Ok(());
        }
        let used = data.usage().unwrap_or(u64::MAX);
        if used <= data.quota() {
            return Ok(());
        }
        let error = CallError::StorageQuota {
            call: label.to_string(),
            dir: data.path().to_owned(),
            used,
            quota: data.quota(),
        };
        self.live = None;
        tracing::warn!(plugin = %self.origin.plugin, session = %self.origin.session, "{error}");
        Err(error)
    }

    /// Runs one guest call under the request's deadline with the current
    /// snapshot. The deadline is a timer around the whole call: whatever the guest
    /// does (spinning, sleeping, waiting on a socket or a name lookup), the
    /// call ends when it fires. A trap or an expired deadline drops the
    /// instance; a plugin's error text is held to the result limit.
    pub(super) async fn guard(
        &mut self,
        call: &Call<'_>,
        deadline: &mut Deadline,
    ) -> Result<Reply, CallError> {
        // Only the guest call itself is async: what comes before and after
        // it are plain functions, so the future of every call stays small.
        let slot = self.before_call(call)?;
        let Some(live) = self.live.as_mut() else {
            return Err(self.no_live_instance());
        };
        let started = deadline.step_start();
        let running = call.invoke(&live.bindings, &mut live.store);
        // Timed only when a receipt is asked for: the common call pays
        // for no clock and no extra future.
        let (outcome, cpu) = match &slot {
            Some(_) => Metered::new(deadline.run(running)).await,
            None => (deadline.run(running).await, None),
        };
        let took = started.elapsed();
        self.after_call(
            call,
            deadline,
            Ran {
                outcome,
                slot,
                took,
                cpu,
            },
        )
    }

    fn no_live_instance(&self) -> CallError {
        CallError::Instantiate {
            plugin: self.component.manifest().id.clone(),
            reason: "no live instance".into(),
        }
    }

    /// Readies the live instance for `call`: the current snapshot, its
    /// receipt's record if one is asked for (returned), fresh budgets and
    /// notes.
    fn before_call(&mut self, call: &Call<'_>) -> Result<Option<ReceiptSlot>, CallError> {
        let Some(live) = self.live.as_mut() else {
            return Err(self.no_live_instance());
        };
        let state = live.store.data_mut();
        let same = match (&state.snapshot, &self.snapshot) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        if !same {
            state.snapshot = self.snapshot.clone();
        }
        // A replayed initialize is not the caller's call: it leaves no receipt.
        let slot = match call {
            Call::Reinitialize(_) => None,
            _ => self.recording.take(),
        };
        if let Some(slot) = &slot {
            let (capacity, names) = slot.bounds();
            state.effects.start(call.to_string(), capacity, names);
        }
        live.budget.reset();
        let state = live.store.data_mut();
        state.files.start_call();
        state.http.take_note();
        if let Some(net) = &state.net {
            net.take_note();
        }
        live.in_call = true;
        Ok(slot)
    }

    /// What a guest call that ran as `ran` says to its caller, and what it
    /// does to the instance, the counters and the breaker.
    fn after_call(
        &mut self,
        call: &Call<'_>,
        deadline: &Deadline,
        ran: Ran,
    ) -> Result<Reply, CallError> {
        let Ran {
            outcome,
            slot,
            took,
            cpu,
        } = ran;
        let Some(live) = self.live.as_mut() else {
            return Err(self.no_live_instance());
        };
        live.in_call = false;
        let state = live.store.data_mut();
        let refused = state
            .files
            .take_note()
            .or_else(|| state.net.as_ref()?.take_note())
            .or_else(|| state.http.take_note());
        for output in &live.outputs {
            output.flush_partial();
        }
        if let Some(slot) = slot {
            let receipt = receipt(live, took, cpu);
            slot.put(match &self.origin.redactor {
                Some(redactor) => crate::secrets::hide_in_receipt(redactor, receipt),
                None => receipt,
            });
        }
        let quota = self.check_quota(call);
        let error = match outcome {
            Ok(Ok(Ok(reply))) => {
                let ending = if quota.is_ok() {
                    Ending::Ok
                } else {
                    Ending::Failed
                };
                self.counters.call(took, ending);
                let mut reply = reply;
                if let Some(redactor) = &self.origin.redactor {
                    hide_in_reply(redactor, &mut reply);
                }
                return quota.map(|()| reply);
            }
            Ok(Ok(Err(text))) => {
                self.counters.call(took, Ending::Failed);
                quota?;
                // The plugin passed a refusal on: the caller (a model,
                // a user) learns it was the sandbox's and what allows it.
                // The note is bounded (`refusals.rs`) and kept whole: the
                // plugin's text is cut to make room for it.
                let limit = self.limits.max_result_bytes;
                // Only the host writes the note's words: the plugin's own
                // text cannot pass for one.
                let text = match text.contains(SANDBOX_NOTE) {
                    true => text.replace(SANDBOX_NOTE, "[the plugin says: refused by the sandbox:"),
                    false => text,
                };
                let text = match refused {
                    Some(note) => {
                        let note = format!(" {SANDBOX_NOTE} {note}]");
                        let room = limit.saturating_sub(note.len());
                        cap_text(text, room) + &note
                    }
                    None => cap_text(text, limit),
                };
                // Hidden last: the note names what the plugin named.
                let text = self.origin.hide(&text).into_owned();
                return Err(CallError::Plugin(text));
            }
            Ok(Err(trap)) => classify(call, trap, &self.limits),
            Err(_elapsed) if matches!(call, Call::Task { .. }) => CallError::TaskTimeout {
                call: call.to_string(),
                limit: deadline.budget(),
            },
            Err(_elapsed) => CallError::Timeout {
                call: call.to_string(),
                limit: deadline.budget(),
            },
        };
        let ending = match error {
            CallError::Timeout { .. } | CallError::TaskTimeout { .. } => Ending::TimedOut,
            _ => Ending::Crashed,
        };
        self.counters.call(took, ending);
        // A crash counts toward the breaker even when the call also left the
        // data directory over quota (that is logged by `check_quota`, and the
        // next instance mounts it read-only).
        self.live = None;
        // A task's end is logged by its board, in a task's words.
        if !matches!(call, Call::Task { .. }) {
            tracing::warn!(plugin = %self.origin.plugin, session = %self.origin.session, "{error}");
        }
        // A deadline the caller chose shorter than the plugin's own limit is
        // the caller's budget, not a sign of a broken plugin.
        let callers_budget = matches!(error, CallError::Timeout { .. })
            && deadline.budget() < self.limits.call_timeout;
        if !callers_budget {
            let disabled = self.tasks.breaker.count(&error, &self.limits, &self.origin);
            // A disabled plugin's tasks end with it.
            if disabled {
                let why = "the plugin was disabled after repeated crashes";
                self.tasks.cancel_running(why, self.task.as_deref());
            }
        }
        Err(error)
    }
}

/// A guest call as it ran: how it ended, the receipt it was recorded
/// for, its wall-clock time and (with a receipt) its CPU time.
struct Ran {
    outcome: Result<wasmtime::Result<Result<Reply, String>>, Expired>,
    slot: Option<ReceiptSlot>,
    took: Duration,
    cpu: Option<Duration>,
}

/// Hides the plugin's secrets in the text `reply` carries back: a result,
/// a command's message or prompt, what a handshake tells the model of its
/// tools and commands (its manifest is compared with the one the sandbox
/// was built from as it is).
fn hide_in_reply(redactor: &Redactor, reply: &mut Reply) {
    use crate::bindings::lingxi::plugin::types::CommandResult;
    let mut hide = |text: &mut String| {
        redactor.redact_string(text);
    };
    match reply {
        Reply::Handshake(handshake) => {
            for tool in &mut handshake.tools {
                hide(&mut tool.description);
                hide(&mut tool.input_schema);
            }
            for command in &mut handshake.commands {
                hide(&mut command.description);
                hide(&mut command.argument_hint);
                hide(&mut command.category);
            }
        }
        Reply::Text(text) | Reply::Command(CommandResult::Prompt(text)) => hide(text),
        Reply::Command(CommandResult::Message(message)) => {
            hide(&mut message.text);
            message.title.iter_mut().for_each(&mut hide);
        }
        Reply::Done => {}
    }
}

/// What the call just made did: its effects, and its time, memory and
/// output.
fn receipt(live: &LiveInstance, took: Duration, cpu: Option<Duration>) -> Receipt {
    let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    let state = live.store.data();
    let mut receipt = state.effects.finish();
    receipt.wall_micros = micros(took);
    receipt.cpu_micros = cpu.map_or(0, micros);
    receipt.peak_memory_bytes = state.limits.used() as u64;
    receipt.output_bytes = live.budget.used() as u64;
    receipt
}
