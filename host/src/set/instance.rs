//! A plugin's instance in a session: made on first use from the plugin's
//! pre-linked component, initialized, kept in step with the session's
//! snapshot, and the buffers its tool calls reuse.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, MutexGuard};

use super::Member;
use crate::bindings::lingxi::plugin::types as wit;
use crate::deadline::Deadline;
use crate::error::CallError;
use crate::plugin::PluginHost;

/// One plugin's instance in a session, made on first use.
pub(super) type Slot = AsyncMutex<Option<Instance>>;

/// One plugin's extra instances in a session.
pub(super) type Spares = Mutex<Vec<Arc<Slot>>>;

/// What a session's instances share.
pub(super) struct Context {
    pub(super) id: Arc<str>,
    pub(super) initialize: wit::InitializeRequest,
    /// The latest accepted snapshot, shared (not copied) by every instance.
    pub(super) snapshot: Mutex<Option<Arc<wit::RuntimeSnapshot>>>,
    /// Counts accepted snapshots: an instance takes the new one only when
    /// this moved (no lock on the way of a call otherwise).
    pub(super) snapshot_version: AtomicU64,
    /// The plugins' background tasks in this session.
    pub(super) boards: crate::tasks::Boards,
}

impl Context {
    pub(super) fn snapshot(&self) -> Option<Arc<wit::RuntimeSnapshot>> {
        self.lock_snapshot().clone()
    }

    pub(super) fn lock_snapshot(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<Arc<wit::RuntimeSnapshot>>> {
        // A poisoned lock only means a panic elsewhere; the value is whole.
        self.snapshot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A plugin's instance in a session.
pub(super) struct Instance {
    pub(super) host: PluginHost,
    /// The version of the session's snapshot the host has.
    pub(super) snapshot_version: u64,
    /// The last tool call, kept so the next one reuses its buffers.
    pub(super) call: wit::ToolCall,
}

impl Instance {
    /// Whether a call must initialize it first: until an `initialize`
    /// succeeded (a first call cancelled mid-initialize leaves it to the
    /// next).
    fn needs_initialize(&self) -> bool {
        !self.host.is_initialized()
    }
}

/// The instance in `slot`, made and initialized if this is the session's
/// first call to it, with the session's latest snapshot.
pub(super) async fn ready<'a>(
    slot: &'a mut Option<Instance>,
    member: &Member,
    context: &Context,
) -> Result<&'a mut Instance, CallError> {
    let instance = prepared(slot, member, context);
    if instance.needs_initialize() {
        let request = context.initialize.clone();
        if let Err(e) = instance.host.initialize(request).await {
            *slot = None;
            return Err(e);
        }
    }
    // Just made or already there.
    slot.as_mut().ok_or_else(|| CallError::Instantiate {
        plugin: member.id().to_owned(),
        reason: "its instance was dropped".into(),
    })
}

/// The instance in `slot`, locked and ready, within `deadline`: waiting
/// behind the instance's previous call and starting a fresh instance count
/// against it, as the call itself does. `call` names the call in messages.
pub(super) async fn locked<'a>(
    slot: &'a Slot,
    member: &Member,
    context: &Context,
    deadline: Deadline,
    call: impl Fn() -> String,
) -> Result<MutexGuard<'a, Option<Instance>>, CallError> {
    // Inline, not through `lock_bounded`: one future less on the way of
    // every call.
    tokio::task::coop::consume_budget().await;
    // The rare steps (waiting, starting) are boxed: their futures are
    // large, and a call's future holds what its steps may need.
    let mut guard = match slot.try_lock() {
        Ok(guard) => guard,
        Err(_) => Box::pin(wait_bounded(slot, deadline, &call)).await?,
    };
    if guard
        .as_ref()
        .is_some_and(|instance| !instance.needs_initialize())
    {
        prepared(&mut guard, member, context);
        return Ok(guard);
    }
    let starting = deadline.run(Box::pin(ready(&mut guard, member, context)));
    starting.await.map_err(|_| CallError::Timeout {
        call: format!("{} (starting the plugin)", call()),
        limit: deadline.budget(),
    })??;
    Ok(guard)
}

/// `slot`, locked within `deadline`: a call still waiting behind the
/// instance's previous one when it passes is [`CallError::Busy`].
pub(super) async fn lock_bounded<'a>(
    slot: &'a Slot,
    deadline: Deadline,
    call: &impl Fn() -> String,
) -> Result<MutexGuard<'a, Option<Instance>>, CallError> {
    // A call that never has to wait still spends the task's cooperative
    // budget, so a host task making calls in a loop lets others run.
    tokio::task::coop::consume_budget().await;
    // Most calls find the instance free: no waiting to bound. (`try_lock`
    // never overtakes calls already queued.)
    match slot.try_lock() {
        Ok(guard) => Ok(guard),
        Err(_) => wait_bounded(slot, deadline, call).await,
    }
}

/// Waits for `slot` until `deadline`.
async fn wait_bounded<'a>(
    slot: &'a Slot,
    deadline: Deadline,
    call: &impl Fn() -> String,
) -> Result<MutexGuard<'a, Option<Instance>>, CallError> {
    let waiting = deadline.run(slot.lock());
    waiting.await.map_err(|_| CallError::Busy {
        call: call(),
        limit: deadline.budget(),
    })
}

/// The instance a [`locked`] guard holds.
pub(super) fn instance_in<'a>(
    guard: &'a mut Option<Instance>,
    member: &Member,
) -> Result<&'a mut Instance, CallError> {
    guard.as_mut().ok_or_else(|| CallError::Instantiate {
        plugin: member.id().to_owned(),
        reason: "its instance was dropped".into(),
    })
}

/// The instance in `slot` (made, not initialized, if there is none) with
/// the session's latest snapshot.
pub(super) fn prepared<'a>(
    slot: &'a mut Option<Instance>,
    member: &Member,
    context: &Context,
) -> &'a mut Instance {
    let version = context.snapshot_version.load(Ordering::Acquire);
    let instance = slot.get_or_insert_with(|| {
        let mut host = PluginHost::with_origin(
            member.component.clone(),
            member.grant.clone(),
            member.limits.clone(),
            member.origin(&context.id),
            member.counters.clone(),
            context.boards.by_id(member.id()).cloned(),
        );
        host.share_contracts(member.contracts.clone());
        host.set_validation(member.validate);
        Instance {
            host,
            // Never equal to a real version: the snapshot is taken below.
            snapshot_version: u64::MAX,
            call: empty_call(),
        }
    });
    if instance.snapshot_version != version {
        if let Some(snapshot) = context.snapshot() {
            // Checked when the session accepted it.
            let _ = instance.host.share_snapshot(snapshot);
        }
        instance.snapshot_version = version;
    }
    instance
}

/// Appends `n` in decimal (`itoa`: no formatting machinery on the way of
/// every call).
pub(super) fn push_number(text: &mut String, n: u64) {
    text.push_str(itoa::Buffer::new().format(n));
}

pub(super) fn empty_call() -> wit::ToolCall {
    wit::ToolCall {
        tool_name: String::new(),
        arguments: String::new(),
        session_id: String::new(),
        tool_call_id: String::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_are_written_in_decimal() {
        for n in [0, 7, 10, 4096, u64::MAX] {
            let mut text = String::from("s-");
            super::push_number(&mut text, n);
            assert_eq!(text, format!("s-{n}"));
        }
    }
}
