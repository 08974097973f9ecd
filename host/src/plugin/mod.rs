//! [`PluginHost`]: one sandboxed plugin, with typed calls for every protocol
//! method, the latest snapshot, per-call deadlines, and recovery after traps.
//!
//! Instances are made lazily: the workspace root (and so the sandbox) is only
//! known once the first snapshot arrived. After any trap or timeout the
//! instance is dropped; the next call gets a fresh one, re-initialized with
//! the last `plugin.initialize` request. Snapshots live on the host side, so
//! nothing else needs re-applying. Building instances is in [`instance`],
//! classifying failures and the trap storm breaker in [`recovery`].

mod instance;
mod recovery;

use std::collections::VecDeque;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use wasmtime::Store;

use crate::bindings::LingxiPlugin;
use crate::bindings::lingxi::plugin::types as wit;
use crate::engine::PluginComponent;
use crate::error::{CallError, SnapshotError};
use crate::limits::{Limits, OutputBudget};
use crate::policy::{Grant, Policy};
use crate::protocol::SUPPORTED_IPC_VERSIONS;
use crate::state::HostState;
use crate::stdio::GuestOutput;
use crate::storage::DataDir;

/// A live instance and what it was built with.
struct Live {
    store: Store<HostState>,
    bindings: LingxiPlugin,
    root: Option<PathBuf>,
    outputs: [GuestOutput; 2],
    budget: Arc<OutputBudget>,
    /// Whether the data directory is mounted read-write (so must be checked
    /// against its quota after each call).
    data_writable: bool,
}

/// One plugin in its sandbox.
pub struct PluginHost {
    component: PluginComponent,
    grant: Grant,
    policy: Policy,
    limits: Limits,
    snapshot: Option<Arc<wit::RuntimeSnapshot>>,
    live: Option<Live>,
    /// The last successful `plugin.initialize` request: replayed on every
    /// fresh instance so a restarted plugin is active again.
    initialized_with: Option<wit::InitializeRequest>,
    /// When the recent traps happened, oldest first.
    traps: VecDeque<Instant>,
    /// Set once the plugin trapped too often: every later call fails with it.
    disabled: Option<String>,
    /// The plugin's persistent data directory, if it has storage.
    data: Option<DataDir>,
}

impl PluginHost {
    /// Prepares a plugin; nothing runs until the first call.
    pub fn new(component: PluginComponent, grant: Grant, limits: Limits) -> Self {
        let policy = Policy::decide(&component.manifest().capabilities, &grant);
        let id = &component.manifest().id;
        let data = grant.data_root.as_deref().and_then(|root| {
            DataDir::open(root, id, limits.max_storage_bytes)
                .map_err(|e| {
                    tracing::warn!(
                        "[{id}] no storage: cannot open its data directory under {}: {e}",
                        root.display()
                    )
                })
                .ok()
        });
        PluginHost {
            component,
            grant,
            policy,
            limits,
            snapshot: None,
            live: None,
            initialized_with: None,
            traps: VecDeque::new(),
            disabled: None,
            data,
        }
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

    /// `host.snapshot`: a snapshot of an unsupported IPC version is refused and
    /// the previous one kept; an older one than stored is ignored; an equal or
    /// newer one replaces the stored one entirely.
    pub fn apply_snapshot(&mut self, snapshot: wit::RuntimeSnapshot) -> Result<(), SnapshotError> {
        if !SUPPORTED_IPC_VERSIONS.contains(&snapshot.ipc_version) {
            return Err(SnapshotError::UnsupportedVersion(snapshot.ipc_version));
        }
        if let Some(stored) = &self.snapshot {
            let key = |t: &wit::Timestamp| (t.seconds, t.nanoseconds);
            if key(&snapshot.observed_at) < key(&stored.observed_at) {
                tracing::debug!("ignoring a snapshot older than the stored one");
                return Ok(());
            }
        }
        self.snapshot = Some(Arc::new(snapshot));
        Ok(())
    }

    /// `plugin.initialize`.
    pub fn initialize(
        &mut self,
        request: wit::InitializeRequest,
    ) -> Result<wit::Handshake, CallError> {
        self.ensure_live(true)?;
        let result = self.guard(&"plugin.initialize", |b, s| {
            b.lingxi_plugin_plugin()
                .call_initialize(s, &request)
                .map(|r| r.map_err(CallError::Plugin))
        });
        if result.is_ok() {
            self.initialized_with = Some(request);
        }
        result
    }

    /// `tool.execute`.
    pub fn execute_tool(&mut self, call: wit::ToolCall) -> Result<String, CallError> {
        self.ensure_live(false)?;
        let label = Label("tool.execute", &call.tool_name);
        let output = self.guard(&label, |b, s| {
            b.lingxi_plugin_plugin()
                .call_execute_tool(s, &call)
                .map(|r| r.map_err(CallError::Plugin))
        })?;
        self.check_size(&label, output.len())?;
        Ok(output)
    }

    /// `command.execute`.
    pub fn execute_command(
        &mut self,
        call: wit::CommandCall,
    ) -> Result<wit::CommandResult, CallError> {
        self.ensure_live(false)?;
        let label = Label("command.execute", &call.command_name);
        let result = self.guard(&label, |b, s| {
            b.lingxi_plugin_plugin()
                .call_execute_command(s, &call)
                .map(|r| r.map_err(CallError::Plugin))
        })?;
        let size = match &result {
            wit::CommandResult::Message(m) => {
                m.text.len() + m.title.as_ref().map_or(0, String::len)
            }
            wit::CommandResult::Prompt(text) => text.len(),
        };
        self.check_size(&label, size)?;
        Ok(result)
    }

    /// `hook.emit`.
    pub fn emit_hook(&mut self, payload: wit::HookPayload) -> Result<(), CallError> {
        self.ensure_live(false)?;
        let label = Label("hook.emit", payload.event.wire_name());
        self.guard(&label, |b, s| {
            b.lingxi_plugin_plugin()
                .call_emit_hook(s, &payload)
                .map(|r| r.map_err(CallError::Plugin))
        })
    }

    /// End of session: lets a running plugin clean up, then drops it.
    pub fn deactivate(&mut self) -> Result<(), CallError> {
        if self.live.is_none() {
            return Ok(());
        }
        let result = self.guard(&"deactivate", |b, s| {
            b.lingxi_plugin_plugin().call_deactivate(s).map(Ok)
        });
        self.live = None;
        self.initialized_with = None;
        result
    }

    /// Whether the plugin was disabled after repeated traps, and why.
    pub fn disabled(&self) -> Option<&str> {
        self.disabled.as_deref()
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

    /// Where the workspace should be mounted now, if the policy mounts it.
    fn desired_root(&self) -> Option<&Path> {
        self.policy.workspace_perms()?;
        self.grant.workspace.as_deref().or_else(|| {
            let workspace = self.snapshot.as_ref()?.workspace.as_ref()?;
            Some(Path::new(&workspace.root_path))
        })
    }

    /// Makes sure a live instance exists that mounts the current workspace
    /// root. A fresh instance is re-initialized with the last successful
    /// initialize request, unless `for_initialize` (the caller is about to).
    fn ensure_live(&mut self, for_initialize: bool) -> Result<(), CallError> {
        if let Some(reason) = &self.disabled {
            return Err(CallError::Disabled {
                plugin: self.manifest().id.clone(),
                traps: self.limits.max_traps,
                window_secs: self.limits.trap_window.as_secs(),
                last: reason.clone(),
            });
        }
        if let Some(live) = &self.live
            && live.root.as_deref() == self.desired_root()
        {
            return Ok(());
        }
        let root = self.desired_root().map(Path::to_path_buf);
        if self.live.is_some() {
            tracing::info!(
                "[{}] workspace root changed to {}; restarting the plugin with the new root mounted",
                self.manifest().id,
                root.as_deref()
                    .map(Path::display)
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            );
            self.live = None;
        }
        let live = self.instantiate(root)?;
        self.live = Some(live);
        if let Some(request) = self.initialized_with.clone().filter(|_| !for_initialize) {
            self.guard(&"plugin.initialize (after restart)", |b, s| {
                b.lingxi_plugin_plugin()
                    .call_initialize(s, &request)
                    .map(|r| r.map(drop).map_err(CallError::Plugin))
            })?;
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
        tracing::warn!("[{}] {error}", self.manifest().id);
        Err(error)
    }

    /// Runs one guest call with a fresh deadline and the current snapshot.
    /// A trap (including a deadline or memory trap) drops the instance.
    fn guard<R>(
        &mut self,
        label: &dyn Display,
        call: impl FnOnce(
            &LingxiPlugin,
            &mut Store<HostState>,
        ) -> wasmtime::Result<Result<R, CallError>>,
    ) -> Result<R, CallError> {
        let Some(live) = self.live.as_mut() else {
            return Err(CallError::Instantiate {
                plugin: self.component.manifest().id.clone(),
                reason: "no live instance".into(),
            });
        };
        live.store.data_mut().snapshot = self.snapshot.clone();
        live.store.set_epoch_deadline(self.limits.deadline_ticks());
        live.budget.reset();
        let outcome = call(&live.bindings, &mut live.store);
        for output in &live.outputs {
            output.flush_partial();
        }
        self.check_quota(label)?;
        match outcome {
            Ok(result) => result,
            Err(error) => {
                self.live = None;
                let error = self.classify(label, error);
                tracing::warn!("[{}] {error}", self.component.manifest().id);
                self.count_trap(&error);
                Err(error)
            }
        }
    }
}

/// Names a call in error messages, e.g. `tool.execute 'probe.echo'`; only
/// formatted when a message needs it.
struct Label<'a>(&'static str, &'a str);

impl Display for Label<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} '{}'", self.0, self.1)
    }
}
