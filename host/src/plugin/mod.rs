//! [`PluginHost`]: one sandboxed plugin, with typed calls for every protocol
//! method, the latest snapshot, per-call deadlines, and recovery after traps.
//!
//! Instances are made lazily: the workspace root (and so the sandbox) is only
//! known once the first snapshot arrived. After any trap or timeout the
//! instance is dropped; the next call gets a fresh one, re-initialized with
//! the last `plugin.initialize` request. Snapshots live on the host side, so
//! nothing else needs re-applying. Building instances is in [`instance`],
//! classifying failures and the trap storm breaker in [`crate::recovery`].

mod call;
mod contract;
pub(crate) use contract::check_by;
mod guard;
mod handshake;
mod instance;
mod mounts;
mod receipts;
mod snapshot;
mod task_instance;

pub(crate) use snapshot::replaces;

use call::{Call, Reply};
use handshake::{handshake_size, manifest_differences};
use mounts::Mounts;

use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use wasmtime::Store;

use crate::bindings::PluginBindings;
use crate::bindings::lingxi::plugin::types as wit;
use crate::contract::Contracts;
use crate::deadline::Deadline;
use crate::effects::ReceiptSlot;
use crate::engine::PluginComponent;
use crate::error::CallError;
use crate::limits::{Limits, OutputBudget};
use crate::observe::{Counters, LogSink, Origin, Stats};
use crate::options::CallOptions;
use crate::policy::{Grant, Policy};
use crate::state::HostState;
use crate::stdio::GuestOutput;
use crate::storage::DataDir;
use crate::tasks::{Recipe, TaskBoard};

/// A live instance and what it was built with.
struct LiveInstance {
    store: Store<HostState>,
    bindings: PluginBindings,
    root: Option<PathBuf>,
    /// The folders named under the root it opened, if the grant names any.
    under_root: Option<Box<mounts::UnderRootMounts>>,
    /// The generation of the host's mounts it was last found to mount: a
    /// call under the same ones compares no paths.
    mounts_seen: u64,
    outputs: [GuestOutput; 2],
    budget: Arc<OutputBudget>,
    /// Whether the data directory is mounted read-write (so must be checked
    /// against its quota after each call).
    data_writable: bool,
    /// Set while a call runs. Still set at the next call means the caller
    /// dropped that call's future mid-flight: the store cannot be entered
    /// again, so the instance is replaced.
    in_call: bool,
}

/// One plugin in its sandbox. Every call is async and bounded by
/// [`Limits::call_timeout`]; calls to one plugin take `&mut self`, so they
/// run one at a time, in order.
pub struct PluginHost {
    component: PluginComponent,
    grant: Grant,
    policy: Policy,
    limits: Limits,
    snapshot: Option<Arc<wit::RuntimeSnapshot>>,
    /// What the grant mounts under the snapshot's root, resolved when the
    /// snapshot was accepted.
    mounts: Mounts,
    live: Option<LiveInstance>,
    /// The last successful `plugin.initialize` request: replayed on every
    /// fresh instance so a restarted plugin is active again.
    initialized_with: Option<wit::InitializeRequest>,
    /// The plugin's background tasks, and its crash breaker (its tasks'
    /// traps count there too). In a set, shared by every instance of the
    /// plugin in one session.
    tasks: Arc<TaskBoard>,
    /// The task this host runs, if it is a task's.
    task: Option<Arc<str>>,
    /// The plugin's persistent data directory, if it has storage.
    data: Option<DataDir>,
    /// Whose lines the guest's output and logs are, and where they go.
    origin: Origin,
    /// Calls, errors and time, shared by every instance of the plugin.
    counters: Arc<Counters>,
    /// The tools' contracts, compiled from the last handshake.
    contracts: Option<Arc<Contracts>>,
    /// Whether tool arguments are validated against their schemas.
    validate: bool,
    /// Where every call leaves its receipt unless its options name a slot.
    receipts: Option<ReceiptSlot>,
    /// Where the call being made leaves its receipt (taken by `guard`).
    recording: Option<ReceiptSlot>,
    /// Learning mode: sockets without `networkAccess` reach the host.
    learning: bool,
    /// The secrets its instances may be handed (one list, shared).
    secrets: crate::secrets::PluginSecrets,
}

impl PluginHost {
    /// Prepares a plugin; nothing runs until the first call.
    pub fn new(component: PluginComponent, grant: Grant, limits: Limits) -> Self {
        let origin = Origin::new(&component.manifest().id);
        PluginHost::with_origin(component, grant, limits, origin, Arc::default(), None)
    }

    /// A plugin whose lines carry `origin` and whose calls count in `counters`.
    pub(crate) fn with_origin(
        component: PluginComponent,
        grant: Grant,
        limits: Limits,
        origin: Origin,
        counters: Arc<Counters>,
        tasks: Option<Arc<TaskBoard>>,
    ) -> Self {
        let policy = Policy::decide(&component.declared(), &grant);
        // Made once per plugin, shared by its instances and its lines.
        let secrets = crate::secrets::PluginSecrets::of(&grant.secrets);
        let mut origin = origin;
        origin.redactor = crate::policy::secrets::Redactor::of(&grant.secrets);
        let id = &component.manifest().id;
        let quota = limits.max_storage_bytes;
        let data = match (&grant.data_dir, &grant.data_root) {
            (Some(dir), _) => Some(DataDir::at(dir, quota).map_err(|e| (dir, e))),
            (None, Some(root)) => Some(DataDir::open(root, id, quota).map_err(|e| (root, e))),
            (None, None) => None,
        };
        let data = data.and_then(|opened| {
            opened
                .map_err(|(dir, e)| {
                    tracing::warn!(
                        plugin = %id,
                        "no storage: cannot open its data directory at {}: {e}",
                        dir.display()
                    )
                })
                .ok()
        });
        // A set's session and a task's own host share a board made once.
        let tasks = tasks.unwrap_or_else(|| {
            TaskBoard::new(Recipe {
                component: component.clone(),
                grant: grant.clone(),
                limits: limits.clone(),
                origin: origin.clone(),
                counters: counters.clone(),
            })
        });
        PluginHost {
            mounts: Mounts::resolve(&grant, None),
            component,
            grant,
            policy,
            limits,
            snapshot: None,
            live: None,
            initialized_with: None,
            tasks,
            task: None,
            data,
            origin,
            counters,
            contracts: None,
            validate: true,
            receipts: None,
            recording: None,
            learning: false,
            secrets,
        }
    }

    /// Sends the plugin's log lines and output to `sink` as well as to
    /// `tracing` (from the next instance on: call it before the first call).
    pub fn set_log_sink(&mut self, sink: LogSink) {
        self.origin.sink = Some(sink);
        if self.task.is_none() && self.tasks.live() == 0 {
            let mut recipe = self.tasks.recipe.clone();
            recipe.origin = self.origin.clone();
            self.tasks = TaskBoard::new(recipe);
        }
    }

    /// Whether its last `plugin.initialize` succeeded (restarts replay it).
    pub(crate) fn is_initialized(&self) -> bool {
        self.initialized_with.is_some()
    }

    /// Calls, errors, traps and time so far.
    pub fn stats(&self) -> Stats {
        self.counters.read()
    }

    /// The plugin's manifest.
    pub fn manifest(&self) -> &wit::Manifest {
        self.component.manifest()
    }

    /// The capability decision in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// What the user granted.
    pub fn grant(&self) -> &Grant {
        &self.grant
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The latest accepted snapshot.
    pub fn snapshot(&self) -> Option<&wit::RuntimeSnapshot> {
        self.snapshot.as_deref()
    }

    /// `plugin.initialize`. The handshake must carry the manifest the
    /// sandbox was built from (the one [`PluginHost::manifest`] returns): a
    /// plugin that claims another id or other capabilities here is refused.
    pub async fn initialize(
        &mut self,
        request: wit::InitializeRequest,
    ) -> Result<wit::Handshake, CallError> {
        let deadline = Deadline::after(self.limits.call_timeout);
        self.record_into(None);
        self.initialize_by(request, deadline).await
    }

    /// `plugin.initialize` within a deadline the caller started.
    async fn initialize_by(
        &mut self,
        request: wit::InitializeRequest,
        mut deadline: Deadline,
    ) -> Result<wit::Handshake, CallError> {
        let call = Call::Initialize(&request);
        self.ensure_live(&call, &mut deadline).await?;
        let Reply::Handshake(handshake) = self.guard(&call, &mut deadline).await? else {
            unreachable!("initialize answers a handshake")
        };
        self.check_size(&call, handshake_size(&handshake))?;
        let differences = manifest_differences(self.manifest(), &handshake.manifest);
        if !differences.is_empty() {
            let error = CallError::ManifestMismatch {
                plugin: self.manifest().id.clone(),
                differences: differences.join("; "),
            };
            tracing::error!(plugin = %self.origin.plugin, session = %self.origin.session, "{error}");
            self.live = None;
            return Err(error);
        }
        self.initialized_with = Some(request);
        let known = self.contracts.as_ref();
        if known.is_none_or(|c| !c.compiled_from(&handshake.tools)) {
            // New contracts (the first handshake, or one that changed): what
            // is wrong with them is said once; the handshake is passed on as
            // it is.
            let contracts = Contracts::compile(&handshake);
            for problem in contracts.problems() {
                tracing::warn!(plugin = %self.origin.plugin, session = %self.origin.session, "{problem}");
            }
            self.contracts = Some(Arc::new(contracts));
        }
        Ok(*handshake)
    }

    /// `tool.execute`, within the options' deadline (by default the
    /// plugin's [`Limits::call_timeout`]). The tool's contract applies (see
    /// [`crate::contract`]): its arguments are validated and its path
    /// parameters resolved before the plugin is called, and its own timeout
    /// shortens the deadline. Approval is not asked here: the caller is the
    /// host.
    pub async fn execute_tool(
        &mut self,
        call: wit::ToolCall,
        options: CallOptions,
    ) -> Result<String, CallError> {
        let deadline = options.deadline(&self.limits);
        self.record_into(options.receipt.as_ref());
        self.call_tool_checked(&call, deadline).await
    }

    /// `tool.execute` of a call the caller keeps (and reuses), within a
    /// deadline the caller may have started earlier, and within `tool_limit`
    /// (the tool's own timeout) from when the tool starts: starting a fresh
    /// instance does not count against the tool's own timeout.
    pub(crate) async fn call_tool_by_ref(
        &mut self,
        call: &wit::ToolCall,
        mut deadline: Deadline,
        tool_limit: Option<Duration>,
    ) -> Result<String, CallError> {
        let call = Call::Tool(call);
        if !self.is_live()? {
            Box::pin(self.start_live(&call, &mut deadline)).await?;
        }
        // The tool's own timeout, when it ends the call sooner.
        let own = tool_limit.and_then(|limit| deadline.within(limit));
        let reply = match own {
            Some(mut own) => match self.guard(&call, &mut own).await {
                Err(CallError::Timeout { call, limit }) => {
                    return Err(CallError::ToolTimeout { call, limit });
                }
                reply => reply?,
            },
            None => self.guard(&call, &mut deadline).await?,
        };
        let Reply::Text(output) = reply else {
            unreachable!("execute-tool answers text")
        };
        self.check_size(&call, output.len())?;
        Ok(output)
    }

    /// `command.execute`, within the options' deadline.
    pub async fn execute_command(
        &mut self,
        call: wit::CommandCall,
        options: CallOptions,
    ) -> Result<wit::CommandResult, CallError> {
        let deadline = options.deadline(&self.limits);
        self.record_into(options.receipt.as_ref());
        self.execute_command_by(call, deadline).await
    }

    /// `command.execute` within a deadline the caller started.
    pub(crate) async fn execute_command_by(
        &mut self,
        call: wit::CommandCall,
        mut deadline: Deadline,
    ) -> Result<wit::CommandResult, CallError> {
        let call = Call::Command(&call);
        self.ensure_live(&call, &mut deadline).await?;
        let Reply::Command(result) = self.guard(&call, &mut deadline).await? else {
            unreachable!("execute-command answers a command result")
        };
        let size = match &result {
            wit::CommandResult::Message(m) => {
                m.text.len() + m.title.as_ref().map_or(0, String::len)
            }
            wit::CommandResult::Prompt(text) => text.len(),
        };
        self.check_size(&call, size)?;
        Ok(result)
    }

    /// `hook.emit`, within the options' deadline.
    pub async fn emit_hook(
        &mut self,
        payload: wit::HookPayload,
        options: CallOptions,
    ) -> Result<(), CallError> {
        let deadline = options.deadline(&self.limits);
        self.record_into(options.receipt.as_ref());
        self.emit_hook_by(payload, deadline).await
    }

    /// `hook.emit` within a deadline the caller started.
    pub(crate) async fn emit_hook_by(
        &mut self,
        payload: wit::HookPayload,
        mut deadline: Deadline,
    ) -> Result<(), CallError> {
        let call = Call::Hook(&payload);
        self.ensure_live(&call, &mut deadline).await?;
        self.guard(&call, &mut deadline).await.map(drop)
    }

    /// End of session: lets a running plugin clean up, then drops it.
    pub async fn deactivate(&mut self) -> Result<(), CallError> {
        // Nothing to clean up, or an instance a cancelled call left unusable.
        if self.live.as_ref().is_none_or(|live| live.in_call) {
            self.live = None;
            self.initialized_with = None;
            return Ok(());
        }
        let mut deadline = Deadline::after(self.limits.call_timeout);
        self.record_into(None);
        let result = self.guard(&Call::Deactivate, &mut deadline).await;
        self.live = None;
        self.initialized_with = None;
        result.map(drop)
    }

    /// Bytes of linear memory and tables its live instance holds (what
    /// counts against [`Limits::max_memory_bytes`]); `None` if none is live.
    pub fn memory_bytes(&self) -> Option<usize> {
        Some(self.live.as_ref()?.store.data().limits.used())
    }

    /// Whether the plugin was disabled after repeated traps, and why.
    pub fn disabled(&self) -> Option<String> {
        self.tasks.breaker.disabled()
    }

    fn check_size(&self, label: &dyn Display, size: usize) -> Result<(), CallError> {
        if size > self.limits.max_result_bytes {
            return Err(CallError::ResultTooLarge {
                call: label.to_string(),
                size,
                limit_bytes: self.limits.max_result_bytes,
            });
        }
        Ok(())
    }
}

impl Drop for PluginHost {
    /// The instance goes before the component: its store runs code that the
    /// component may keep mapped (see `PluginComponent`).
    fn drop(&mut self) {
        self.live = None;
    }
}
