// The imports of a bare host of the `lingxi-plugin` world, for a file that
// has just called `wasmtime::component::bindgen!` on it (with `logging.log`
// and `tasks.report-progress` trappable): no snapshot, a log that goes
// nowhere, no tasks. Included by the embed bench's floor (bare.rs) and by the
// e2e suite's host of the previous release (tests/e2e/compat/previous_host.rs).
// The functions `host-info` gained since 0.1.0 are the includer's: it
// defines `host_info_since_0_1_0!` (empty for a host of 0.1.0).

use lingxi::plugin::{host_info, logging, tasks, types};

pub struct State {
    pub wasi: wasmtime_wasi::WasiCtx,
    pub table: wasmtime::component::ResourceTable,
}

impl wasmtime_wasi::WasiView for State {
    fn ctx(&mut self) -> wasmtime_wasi::WasiCtxView<'_> {
        wasmtime_wasi::WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for State {}

fn unavailable(field: &str) -> types::InfoUnavailable {
    types::InfoUnavailable {
        field: field.into(),
        last_snapshot: None,
    }
}

impl host_info::Host for State {
    fn latest_snapshot(&mut self) -> Option<types::RuntimeSnapshot> {
        None
    }
    fn workspace(&mut self) -> Result<types::WorkspaceInfo, types::InfoUnavailable> {
        Err(unavailable("workspace"))
    }
    fn pe_core(&mut self) -> Result<types::PeCoreInfo, types::InfoUnavailable> {
        Err(unavailable("peCore"))
    }
    fn context_state(&mut self) -> Result<types::ContextStateInfo, types::InfoUnavailable> {
        Err(unavailable("contextState"))
    }
    fn performance(&mut self) -> Result<types::PerformanceInfo, types::InfoUnavailable> {
        Err(unavailable("performance"))
    }
    fn data_dir(&mut self) -> Option<String> {
        None
    }
    host_info_since_0_1_0!();
}

impl logging::Host for State {
    fn log(&mut self, _level: logging::Level, _message: String) -> wasmtime::Result<()> {
        Ok(())
    }
}

/// No background tasks in the floor.
impl tasks::Host for State {
    fn start(&mut self, _kind: String, _input: String) -> Result<String, String> {
        Err("no tasks here".into())
    }
    fn status(&mut self, _id: String) -> Option<tasks::TaskState> {
        None
    }
    fn cancel(&mut self, _id: String) -> bool {
        false
    }
    fn report_progress(&mut self, _progress: tasks::Progress) -> wasmtime::Result<()> {
        Ok(())
    }
}
