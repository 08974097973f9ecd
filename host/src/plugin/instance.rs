//! Building a fresh instance: the WASI context from the policy, the data
//! directory mount, the trap, the store with its limits and its
//! effect recorder.

use std::path::{Path, PathBuf};

use wasmtime_wasi::WasiCtxBuilder;

use crate::policy::Capability;
use crate::policy::files::FileGrants;
use crate::policy::{Access, Grant};

use super::call::Call;
use super::{LiveInstance, PluginHost};
use crate::deadline::{Deadline, Expired};
use crate::effects::Effects;
use crate::error::CallError;
use crate::limits::OutputBudget;
use crate::linker::{self, names::TRAP_PATH};
use crate::observe::LogSource;
use crate::policy::storage::DATA_GUEST_PATH;
use crate::stdio::GuestOutput;
use crate::tasks::TaskLink;

impl PluginHost {
    /// A fresh instance for `call`, made within the request's `deadline`
    /// (instantiating runs the guest's start code). Takes `&mut self` so
    /// that the future is `Send` (a `PluginHost` is not `Sync`).
    pub(super) async fn instantiate(
        &mut self,
        root: Option<PathBuf>,
        grant: &Grant,
        call: &Call<'_>,
        deadline: Deadline,
    ) -> Result<LiveInstance, CallError> {
        let id = self.manifest().id.clone();
        let budget = OutputBudget::new(self.limits.max_output_bytes);
        let outputs = [
            GuestOutput::new(&self.origin, LogSource::Stdout, budget.clone()),
            GuestOutput::new(&self.origin, LogSource::Stderr, budget.clone()),
        ];
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(outputs[0].clone()).stderr(outputs[1].clone());
        let effects = Effects::new();
        let learning = self.learning;
        let net = linker::apply(
            &self.policy,
            grant,
            &mut wasi,
            &self.origin,
            root.as_deref(),
            &effects,
            learning,
        );
        let data_writable = self.mount_data(&mut wasi);
        let trap = self.trap(root.as_deref(), grant);
        let grants = self.file_grants(grant, data_writable);
        let runtime = &self.component.runtime;
        let instantiate_error = |reason: String| CallError::Instantiate {
            plugin: id.clone(),
            reason,
        };
        let mut store = runtime
            .store(wasi, &self.origin, &self.limits)
            .map_err(instantiate_error)?;
        self.counters.instance();
        let redactor = self.origin.redactor.clone();
        store
            .data_mut()
            .http
            .allow(net.clone(), effects.clone(), redactor);
        store.data_mut().effects = effects;
        store.data_mut().names.trap_dir = trap;
        store.data_mut().files.grants = grants;
        store.data_mut().net = net;
        store.data_mut().output = budget.clone();
        store.data_mut().data_dir = data_writable.map(|_| DATA_GUEST_PATH.to_owned());
        store.data_mut().secrets = self.secrets.clone();
        store.data_mut().tasks = Some(TaskLink {
            board: self.tasks.clone(),
            task: self.task.clone(),
        });
        let instantiating = self.component.pre.instantiate_async(&mut store);
        let bindings = match deadline.run(instantiating).await {
            Ok(result) => result.map_err(|e| {
                // Its memory at start is already over the limit: the
                // limit's own error, naming the setting to raise.
                if let Some(memory) = e.downcast_ref::<crate::memory::MemoryLimit>() {
                    return CallError::Memory {
                        call: format!("{call} (starting the plugin)"),
                        limit_bytes: memory.limit,
                    };
                }
                let full = e.downcast_ref::<wasmtime::PoolConcurrencyLimitError>().is_some();
                let hint = if full {
                    "; every instance slot of the pooled runtime is in use: close sessions (a dropped session frees its slots in the background) or reserve more with RuntimeConfig::pooled"
                } else {
                    ""
                };
                instantiate_error(format!("{e:#}{hint}"))
            })?,
            Err(Expired) => {
                return Err(CallError::Timeout {
                    call: format!("{call} (starting the plugin)"),
                    limit: deadline.budget(),
                });
            }
        };
        Ok(LiveInstance {
            store,
            bindings,
            root,
            under_root: self.mounts.under_root(),
            mounts_seen: self.mounts.generation,
            outputs,
            budget,
            data_writable: data_writable.unwrap_or(false),
            in_call: false,
        })
    }

    /// The trap (`linker/trap.rs`) this instance gets at `/`, unless a real
    /// mount is there. Without it (no temporary folder could be made, said
    /// once), paths outside every mount still fail, unexplained.
    fn trap(&self, root: Option<&Path>, grant: &Grant) -> Option<wasmtime_wasi::filesystem::Dir> {
        let at_root = |dir: &Path| dir == Path::new(TRAP_PATH);
        let project = self.policy.workspace_access().is_some();
        let read_at_root = root.is_some_and(at_root) || grant.allow_read.iter().any(|d| at_root(d));
        if (project && read_at_root) || grant.allow_write.iter().any(|d| at_root(d)) {
            return None;
        }
        match linker::trap() {
            Ok(dir) => Some(dir),
            Err(e) => {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    tracing::warn!(
                        plugin = %self.origin.plugin,
                        "cannot make the empty folder that catches paths outside every mount: {e}; such paths still fail, but the log will not say which setting would allow them"
                    );
                });
                None
            }
        }
    }

    /// What this instance is given of the host's files, for wording
    /// refusals (`policy/src/files.rs`).
    fn file_grants(&self, grant: &Grant, data: Option<bool>) -> FileGrants {
        let declared = |c| self.policy.declares(c);
        FileGrants {
            root: self.known_root().map(Path::to_path_buf),
            project: self.policy.workspace_access(),
            declares_read: declared(Capability::ProjectRead),
            declares_write: declared(Capability::ProjectWrite),
            allow_read: grant.allow_read.clone(),
            allow_write: grant.allow_write.clone(),
            data,
        }
    }

    /// Mounts the data directory at [`DATA_GUEST_PATH`]: read-write while it
    /// is within its quota, read-only past it. Returns `Some(writable)` if
    /// mounted.
    fn mount_data(&self, wasi: &mut WasiCtxBuilder) -> Option<bool> {
        let data = self.data.as_ref()?;
        let writable = data.within_quota();
        if !writable {
            tracing::warn!(
                plugin = %self.origin.plugin, session = %self.origin.session,
                "data directory {} is over its quota of {} bytes: mounted read-only",
                data.path().display(),
                data.quota()
            );
        }
        let perms = crate::linker::perms(if writable {
            Access::ReadWrite
        } else {
            Access::ReadOnly
        });
        match wasi.preopened_dir(data.path(), DATA_GUEST_PATH, perms) {
            Ok(_) => Some(writable),
            Err(e) => {
                tracing::warn!(
                    plugin = %self.origin.plugin, session = %self.origin.session,
                    "cannot mount data directory {}: {e}",
                    data.path().display()
                );
                None
            }
        }
    }
}
