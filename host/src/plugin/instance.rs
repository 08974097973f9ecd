//! Building a fresh instance: the WASI context from the policy, the data
//! directory mount, the learning trap, the store with its limits and its
//! effect recorder.

use std::path::{Path, PathBuf};

use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::policy::Access;

use super::call::Call;
use super::{Live, PluginHost};
use crate::effects::Effects;
use crate::error::CallError;
use crate::limits::{Deadline, Expired, OutputBudget};
use crate::linker::{self, names::TRAP_PATH};
use crate::observe::LogSource;
use crate::stdio::GuestOutput;
use crate::storage::DATA_GUEST_PATH;
use crate::tasks::TaskLink;

impl PluginHost {
    /// A fresh instance for `call`, made within the request's `deadline`
    /// (instantiating runs the guest's start code). Takes `&mut self` so
    /// that the future is `Send` (a `PluginHost` is not `Sync`).
    pub(super) async fn instantiate(
        &mut self,
        root: Option<PathBuf>,
        call: &Call<'_>,
        deadline: Deadline,
    ) -> Result<Live, CallError> {
        let id = self.manifest().id.clone();
        let budget = OutputBudget::new(self.limits.max_output_bytes);
        let outputs = [
            GuestOutput::new(&self.origin, LogSource::Stdout, budget.clone()),
            GuestOutput::new(&self.origin, LogSource::Stderr, budget.clone()),
        ];
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(outputs[0].clone()).stderr(outputs[1].clone());
        let effects = Effects::new();
        let learning = self.learning.is_some();
        let (policy, grant) = (&self.policy, &self.grant);
        let net = linker::apply(
            policy,
            grant,
            &mut wasi,
            &id,
            root.as_deref(),
            &effects,
            learning,
        );
        let data_writable = self.mount_data(&mut wasi);
        let trap = self.mount_trap(&mut wasi, root.as_deref());
        let runtime = &self.component.runtime;
        let instantiate_error = |reason: String| CallError::Instantiate {
            plugin: id.clone(),
            reason,
        };
        let mut store = runtime
            .store(wasi, &self.origin, &self.limits)
            .map_err(instantiate_error)?;
        self.counters.instance();
        store.data_mut().http.allow(net.clone(), effects.clone());
        store.data_mut().effects = effects;
        store.data_mut().names.trap_mounted = trap;
        store.data_mut().net = net;
        store.data_mut().output = budget.clone();
        store.data_mut().data_dir = data_writable.map(|_| DATA_GUEST_PATH.to_owned());
        store.data_mut().tasks = Some(TaskLink {
            board: self.tasks.clone(),
            task: self.task.clone(),
        });
        let instantiating = self.component.pre.instantiate_async(&mut store);
        let bindings = match deadline.run(instantiating).await {
            Ok(result) => result.map_err(|e| {
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
        Ok(Live {
            store,
            bindings,
            root,
            outputs,
            budget,
            data_writable: data_writable.unwrap_or(false),
            in_call: false,
        })
    }

    /// While learning, mounts the learning trap (an empty folder, read-only)
    /// at `/`, unless a real mount is there. Returns whether it did.
    fn mount_trap(&self, wasi: &mut WasiCtxBuilder, root: Option<&Path>) -> bool {
        let Some(trap) = &self.learning else {
            return false;
        };
        let at_root = |dir: &Path| dir == Path::new(TRAP_PATH);
        let grant = &self.grant;
        if root.is_some_and(at_root)
            || grant
                .allow_read
                .iter()
                .chain(&grant.allow_write)
                .any(|d| at_root(d))
        {
            return false;
        }
        wasi.preopened_dir(trap.path(), TRAP_PATH, FsPerms::ReadOnly)
            .is_ok()
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
