//! The per-instance store data, and the host side of the imports the plugin
//! sees: `host-info` (snapshot reads) and `logging`.

use std::sync::Arc;

use std::collections::HashMap;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::lingxi::plugin::{host_info, logging, types as wit};
use crate::limits::MAX_LOG_MESSAGE;
use crate::limits::{OutputBudget, cap_text};
use crate::memory::MemoryCap;
use crate::observe::{LogSource, Origin};
use crate::policy::NetGuard;

/// Everything one plugin instance owns on the host side.
pub struct HostState {
    /// Whose lines the guest's logs are.
    pub(crate) origin: Origin,
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limits: MemoryCap,
    /// The latest accepted snapshot; replaced (never merged) by the host.
    pub(crate) snapshot: Option<Arc<wit::RuntimeSnapshot>>,
    /// The network allow-list, when the plugin may use the network.
    pub(crate) net: Option<Arc<NetGuard>>,
    /// `wasi:http`: outgoing requests judged by the same allow-list.
    pub(crate) http: crate::linker::HttpGate,
    /// Open name lookups (resource id of the stream): the name (kept only
    /// while a call is recorded) and the allow-list rules that learn the
    /// addresses they answer (see `policy/src/net.rs`).
    pub(crate) lookups: HashMap<u32, (String, Vec<usize>)>,
    /// Output this call may still write (shared with stdout and stderr).
    pub(crate) output: Arc<OutputBudget>,
    /// Guest path of the data directory, if mounted.
    pub(crate) data_dir: Option<String>,
    /// Whether the guest may have written since the last quota check.
    pub(crate) writes: crate::linker::writes::WriteTracker,
    /// What the running call did, while a receipt is asked for.
    pub(crate) effects: Arc<crate::effects::Effects>,
    /// The path each descriptor was opened by, and the trap.
    pub(crate) names: crate::linker::names::FdNames,
    /// What file refusals say, and how many this instance logged.
    pub(crate) files: crate::linker::refusals::FileRefusals,
    /// The plugin's background tasks, if this instance may use them.
    pub(crate) tasks: Option<crate::tasks::TaskLink>,
    /// The secrets it may be handed (`host-info.secret`).
    pub(crate) secrets: crate::secrets::PluginSecrets,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl HostState {
    /// A section of the snapshot, or the "unavailable" error naming it.
    fn section<T: Clone>(
        &self,
        field: &str,
        get: impl FnOnce(&wit::RuntimeSnapshot) -> Option<&T>,
    ) -> Result<T, wit::InfoUnavailable> {
        let snapshot = self.snapshot.as_deref();
        snapshot
            .and_then(get)
            .cloned()
            .ok_or_else(|| wit::InfoUnavailable {
                field: field.to_owned(),
                last_snapshot: snapshot.map(|s| s.observed_at),
            })
    }
}

impl wit::Host for HostState {}

impl host_info::Host for HostState {
    fn latest_snapshot(&mut self) -> Option<wit::RuntimeSnapshot> {
        self.snapshot.as_deref().cloned()
    }
    fn workspace(&mut self) -> Result<wit::WorkspaceInfo, wit::InfoUnavailable> {
        self.section("workspace", |s| s.workspace.as_ref())
    }
    fn pe_core(&mut self) -> Result<wit::PeCoreInfo, wit::InfoUnavailable> {
        self.section("peCore", |s| s.pe_core.as_ref())
    }
    fn context_state(&mut self) -> Result<wit::ContextStateInfo, wit::InfoUnavailable> {
        self.section("contextState", |s| s.context_state.as_ref())
    }
    fn performance(&mut self) -> Result<wit::PerformanceInfo, wit::InfoUnavailable> {
        self.section("performance", |s| s.performance.as_ref())
    }
    fn data_dir(&mut self) -> Option<String> {
        self.data_dir.clone()
    }
    fn secret(&mut self, name: String) -> Result<String, String> {
        (self.secrets).hand(&self.origin.plugin, &name, &self.effects)
    }
}

impl logging::Host for HostState {
    fn log(&mut self, level: logging::Level, message: String) -> wasmtime::Result<()> {
        let source = match level {
            logging::Level::Info => LogSource::Info,
            logging::Level::Warn => LogSource::Warn,
            logging::Level::Error => LogSource::Error,
        };
        // Charged as written: the message (as cut), the id and the line's frame.
        let message = cap_text(message, MAX_LOG_MESSAGE);
        let message = crate::text::printable(&message);
        self.output
            .spend(message.len() + self.origin.line_cost(source))?;
        self.origin.emit(source, &message);
        Ok(())
    }
}

impl HostState {
    /// A refused file access, reported as `linker/refusals.rs` decides.
    pub(crate) fn refused_file(
        &mut self,
        what: &str,
        path: &str,
        write: bool,
        directory: bool,
        how: crate::policy::files::Refused,
    ) {
        let HostState {
            files,
            origin,
            effects,
            ..
        } = self;
        files.refused_file(origin, effects, what, path, write, directory, how);
    }

    /// One refusal reported: log line, the call's note, the receipt.
    pub(crate) fn report_refusal(
        &mut self,
        what: &str,
        path: &str,
        refusal: crate::policy::files::FileRefusal,
    ) {
        let HostState {
            files,
            origin,
            effects,
            ..
        } = self;
        files.report(origin, effects, what, path, refusal);
    }
}
