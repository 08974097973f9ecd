//! [`Session`]: one conversation of an agent host. Each plugin gets an
//! instance of its own for it, made on the session's first call to that
//! plugin (from the plugin's pre-linked component: no compiling), then
//! initialized. Calls to one instance queue in order; calls to different
//! plugins (or sessions) run in parallel on the runtime's worker threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::MutexGuard;

use super::Members;
use super::approval::{ApprovalFuture, Approver, PreparedCall};
use super::instance::{
    Context, Instance, Slot, Spares, instance_in, lock_bounded, locked, prepared,
};
use crate::bindings::lingxi::plugin::types as wit;
use crate::deadline::Deadline;
use crate::error::{CallError, SnapshotError};
use crate::limits::MAX_SPARES;
use crate::options::CallOptions;
use crate::plugin::replaces;
use crate::tasks::{Boards, Recipe};
use crate::text::shown_name;

/// One session: an instance of every plugin of the set, each made when
/// first called (from the plugin's pre-linked component: no compiling) and
/// initialized. Calls to one instance queue in order; calls to different
/// plugins or sessions run in parallel when each runs on a task of its own
/// on a multi-threaded runtime. A call's deadline counts from the call:
/// waiting behind the instance's previous call and starting a fresh
/// instance are within it. Dropping a call's future cancels it (the
/// instance is replaced at the next call).
///
/// Dropping the session deactivates its instances in the background on the
/// current tokio runtime (without one, they are freed without their
/// deactivate hook); [`Session::close`] does it and waits. `Send + Sync`:
/// share it in an `Arc`.
pub struct Session {
    pub(super) context: Arc<Context>,
    pub(super) members: Arc<Members>,
    pub(super) slots: Box<[Arc<Slot>]>,
    /// Extra instances per plugin, for calls of a concurrency-safe tool
    /// made while its instance is busy (at most [`MAX_SPARES`] each).
    pub(super) spares: Box<[Spares]>,
    pub(super) calls: AtomicU64,
    /// Asked before a call to a tool that requires approval.
    pub(super) approver: Option<Approver>,
}

/// How one subscribed plugin handled a hook.
#[derive(Debug)]
pub struct HookOutcome {
    /// The plugin id.
    pub plugin: String,
    /// What its handlers answered, or why it failed.
    pub result: Result<(), CallError>,
}

impl Session {
    pub(super) fn open(
        id: String,
        members: Arc<Members>,
        initialize: wit::InitializeRequest,
        snapshot: Option<wit::RuntimeSnapshot>,
        approver: Option<Approver>,
        session_tasks: usize,
    ) -> Result<Session, SnapshotError> {
        if let Some(snapshot) = &snapshot {
            replaces(None, snapshot)?;
        }
        let slots = members.list.iter().map(|_| Arc::default()).collect();
        let spares = members.list.iter().map(|_| Spares::default()).collect();
        let id: Arc<str> = id.into();
        let recipes = members.list.iter().map(|member| Recipe {
            component: member.component.clone(),
            grant: member.grant.clone(),
            limits: member.limits.clone(),
            origin: member.origin(&id),
            counters: member.counters.clone(),
        });
        let boards = Boards::new(recipes, session_tasks);
        Ok(Session {
            context: Arc::new(Context {
                id,
                initialize,
                snapshot: Mutex::new(snapshot.map(Arc::new)),
                snapshot_version: AtomicU64::new(0),
                boards,
            }),
            members,
            slots,
            spares,
            calls: AtomicU64::new(0),
            approver,
        })
    }

    /// The same session, asking `approve` instead of the set's approval
    /// callback before every call to a tool that requires approval: for a
    /// host whose sessions belong to different users (an MCP server over
    /// HTTP, a team service), each asked through their own client.
    pub fn with_approval<F, A>(mut self, approve: F) -> Session
    where
        F: Fn(&PreparedCall) -> A + Send + Sync + 'static,
        A: Future<Output = bool> + Send + 'static,
    {
        self.approver = Some(std::sync::Arc::new(
            move |call: &PreparedCall| -> ApprovalFuture { Box::pin(approve(call)) },
        ));
        self
    }

    /// The session id (passed to tools as their `session-id`).
    pub fn id(&self) -> &str {
        &self.context.id
    }

    /// The latest accepted snapshot.
    pub fn snapshot(&self) -> Option<Arc<wit::RuntimeSnapshot>> {
        self.context.snapshot()
    }

    /// `host.snapshot` for every instance of the session: one of an
    /// unsupported IPC version is refused, one older than the stored one
    /// ignored; it is shared, never copied per instance or per call.
    pub fn set_snapshot(&self, snapshot: wit::RuntimeSnapshot) -> Result<(), SnapshotError> {
        let mut stored = self.context.lock_snapshot();
        if !replaces(stored.as_deref(), &snapshot)? {
            return Ok(());
        }
        *stored = Some(Arc::new(snapshot));
        self.context
            .snapshot_version
            .fetch_add(1, Ordering::Release);
        Ok(())
    }

    fn index_of(&self, plugin: &str) -> Result<usize, CallError> {
        let list = &self.members.list;
        list.iter()
            .position(|m| m.id() == plugin)
            .ok_or_else(|| CallError::NoSuchPlugin {
                plugin: shown_name(plugin),
            })
    }

    /// `plugin.initialize` of plugin `plugin` with `request` (instead of the
    /// set's), which its later restarts replay; answers its handshake.
    pub async fn initialize(
        &self,
        plugin: &str,
        request: wit::InitializeRequest,
    ) -> Result<wit::Handshake, CallError> {
        let index = self.index_of(plugin)?;
        let member = &self.members.list[index];
        let deadline = Deadline::after(member.limits.call_timeout);
        let label = || "plugin.initialize".to_owned();
        let mut guard = lock_bounded(&self.slots[index], deadline, &label).await?;
        let instance = prepared(&mut guard, member, &self.context);
        instance.host.initialize(request).await
    }

    /// Runs slash command `name_or_alias` (matched without regard to case,
    /// sent as typed) with `arguments`, within the options' deadline.
    pub async fn run_command(
        &self,
        name_or_alias: &str,
        arguments: Vec<String>,
        options: CallOptions,
    ) -> Result<wit::CommandResult, CallError> {
        let key = name_or_alias.to_lowercase();
        let Some(&index) = self.members.commands.get(&key) else {
            return Err(CallError::NoSuchCommand {
                name: shown_name(name_or_alias),
            });
        };
        let call = wit::CommandCall {
            command_name: name_or_alias.to_owned(),
            arguments,
            session_id: Some(self.context.id.to_string()),
        };
        let label = || format!("command.execute '{}'", shown_name(name_or_alias));
        let (mut guard, deadline) = self.lock_ready(index, &options, label).await?;
        let instance = instance_in(&mut guard, &self.members.list[index])?;
        instance.host.record_into(options.receipt.as_ref());
        instance.host.execute_command_by(call, deadline).await
    }

    /// Emits a hook to every plugin subscribed to its event, concurrently,
    /// each within its own call timeout: a failing or slow plugin never
    /// holds up the others. Outcomes come in the order the plugins were
    /// added. Dropping the future cancels the calls still running.
    ///
    /// The options' deadline is one budget for every subscriber, counted
    /// from now (by default each one's call timeout): waiting for an
    /// instance busy with another call of the session counts against it.
    /// The options' receipt slot holds the receipt of the subscriber that
    /// finished last.
    pub async fn emit(&self, payload: wit::HookPayload, options: CallOptions) -> Vec<HookOutcome> {
        let mut tasks = tokio::task::JoinSet::new();
        let mut started = Vec::new();
        for (index, member) in self.members.list.iter().enumerate() {
            if !member.handshake.supported_hooks.contains(&payload.event) {
                continue;
            }
            let (slot, member) = (self.slots[index].clone(), member.clone());
            let (context, payload) = (self.context.clone(), payload.clone());
            // Started now: waiting for a busy instance counts against it.
            let deadline = options.deadline(&member.limits);
            let receipt = options.receipt.clone();
            let task = tasks.spawn(async move {
                let label = || format!("hook.emit '{}'", payload.event.wire_name());
                let mut guard = locked(&slot, &member, &context, deadline, label).await?;
                let instance = instance_in(&mut guard, &member)?;
                instance.host.record_into(receipt.as_ref());
                instance.host.emit_hook_by(payload, deadline).await
            });
            started.push((task.id(), index));
        }
        let mut outcomes = Vec::with_capacity(started.len());
        while let Some(joined) = tasks.join_next_with_id().await {
            let (id, result) = match joined {
                Ok((id, result)) => (id, Ok(result)),
                Err(e) => (e.id(), Err(e)),
            };
            let Some(&(_, index)) = started.iter().find(|(task, _)| *task == id) else {
                continue;
            };
            // A task that failed (a log sink that panicked) is that plugin's.
            let result = result.unwrap_or_else(|e| {
                Err(CallError::Instantiate {
                    plugin: self.members.list[index].id().to_owned(),
                    reason: format!("the host task running the hook failed: {e}"),
                })
            });
            outcomes.push((index, result));
        }
        outcomes.sort_by_key(|(index, _)| *index);
        outcomes
            .into_iter()
            .map(|(index, result)| HookOutcome {
                plugin: self.members.list[index].id().to_owned(),
                result,
            })
            .collect()
    }

    /// Makes plugin `id`'s instance for this session now, created and
    /// initialized, instead of at the session's first call to it.
    pub async fn start(&self, id: &str) -> Result<(), CallError> {
        let Some(index) = self.members.list.iter().position(|m| m.id() == id) else {
            return Err(CallError::NoSuchPlugin {
                plugin: shown_name(id),
            });
        };
        let label = || "plugin.initialize".to_owned();
        let options = CallOptions::default();
        self.lock_ready(index, &options, label).await.map(drop)
    }

    /// Plugin `index`'s instance, locked and ready within the options'
    /// deadline from now, and that deadline, for the call to run within.
    pub(super) async fn lock_ready(
        &self,
        index: usize,
        options: &CallOptions,
        label: impl Fn() -> String,
    ) -> Result<(MutexGuard<'_, Option<Instance>>, Deadline), CallError> {
        let member = &self.members.list[index];
        let deadline = options.deadline(&member.limits);
        let guard = locked(&self.slots[index], member, &self.context, deadline, label).await?;
        Ok((guard, deadline))
    }

    /// Cancels the session's background tasks (waiting briefly for them),
    /// then deactivates every instance (concurrently, each within its call
    /// timeout) and frees them.
    pub async fn close(mut self) {
        self.context.boards.stop().await;
        let slots = std::mem::take(&mut self.slots);
        let slots = self.all_slots(slots);
        deactivate_all(slots).await;
    }

    /// Cancels the session's background tasks, deactivates and frees every
    /// instance, keeping the session: a later call makes a fresh instance
    /// (and a plugin disabled after crashes is enabled again).
    pub async fn deactivate(&self) {
        self.context.boards.stop().await;
        deactivate_all(self.all_slots(self.slots.clone())).await;
        self.context.boards.reopen();
    }
}

impl Session {
    /// `slots` and every extra instance (taken out of the session).
    fn all_slots(&self, slots: Box<[Arc<Slot>]>) -> Box<[Arc<Slot>]> {
        let mut all = slots.into_vec();
        for spares in &self.spares {
            all.append(&mut spares.lock().unwrap_or_else(|e| e.into_inner()));
        }
        all.into_boxed_slice()
    }

    /// A slot for a call of a concurrency-safe tool of plugin `index`: its
    /// instance if free, else an idle extra one, else a new extra one (up
    /// to [`MAX_SPARES`]), else its instance (the call waits for it).
    pub(super) fn free_slot(&self, index: usize) -> Arc<Slot> {
        let primary = &self.slots[index];
        if primary.try_lock().is_ok() {
            return primary.clone();
        }
        let mut spares = self.spares[index].lock().unwrap_or_else(|e| e.into_inner());
        if let Some(idle) = spares.iter().find(|s| s.try_lock().is_ok()) {
            return idle.clone();
        }
        if spares.len() < MAX_SPARES {
            let spare = Arc::new(Slot::default());
            spares.push(spare.clone());
            return spare;
        }
        primary.clone()
    }
}

async fn deactivate_all(slots: Box<[Arc<Slot>]>) {
    let mut tasks = tokio::task::JoinSet::new();
    for slot in slots {
        tasks.spawn(async move {
            let mut guard = slot.lock().await;
            if let Some(mut instance) = guard.take()
                && let Err(e) = instance.host.deactivate().await
            {
                let plugin = &instance.host.manifest().id;
                tracing::warn!(plugin = %plugin, "deactivate failed: {e}");
            }
        });
    }
    while tasks.join_next().await.is_some() {}
}

impl Drop for Session {
    /// Cancels its background tasks, and deactivates the instances in the
    /// background when a tokio runtime is at hand; without one they are
    /// freed without their deactivate hook.
    fn drop(&mut self) {
        // Its tasks end with it.
        self.context.boards.cancel_all();
        let slots = std::mem::take(&mut self.slots);
        let slots = self.all_slots(slots);
        if slots.is_empty() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(deactivate_all(slots));
        }
    }
}

// Where the session's background tasks live (their API: `crate::tasks`).

impl Session {
    /// The session's task boards, one per plugin.
    pub(crate) fn task_boards(&self) -> &Boards {
        &self.context.boards
    }

    /// The session's latest accepted snapshot, shared.
    pub(crate) fn shared_snapshot(&self) -> Option<Arc<wit::RuntimeSnapshot>> {
        self.context.snapshot()
    }
}
