//! The SDK's only door to the host. In a component (`wasm32`) these are the
//! imported WIT functions; on other targets (native mode) logs go to stderr
//! and snapshot reads see what the native driver accepted, if anything.

pub use crate::bindings::lingxi::plugin::logging::Level;

#[cfg(target_arch = "wasm32")]
mod imp {
    pub use crate::bindings::lingxi::plugin::host_info::{
        context_state, data_dir, latest_snapshot, pe_core, performance, secret, workspace,
    };
    pub use crate::bindings::lingxi::plugin::logging::log;
    pub use crate::bindings::lingxi::plugin::tasks::{
        cancel as cancel_task, report_progress, start as start_task, status as task_status,
    };
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use std::cell::RefCell;

    use super::Level;
    use crate::bindings::lingxi::plugin::types as wit;

    thread_local! {
        /// The latest snapshot the native driver accepted.
        static SNAPSHOT: RefCell<Option<wit::RuntimeSnapshot>> = const { RefCell::new(None) };
    }

    /// Replaces the snapshot (native mode's `host.snapshot`).
    #[cfg_attr(not(feature = "native"), allow(dead_code))]
    pub fn set_snapshot(snapshot: wit::RuntimeSnapshot) {
        SNAPSHOT.with(|s| *s.borrow_mut() = Some(snapshot));
    }

    fn section<T: Clone>(
        field: &str,
        get: impl FnOnce(&wit::RuntimeSnapshot) -> Option<&T>,
    ) -> Result<T, wit::InfoUnavailable> {
        SNAPSHOT.with(|s| {
            let s = s.borrow();
            s.as_ref()
                .and_then(get)
                .cloned()
                .ok_or_else(|| wit::InfoUnavailable {
                    field: field.to_owned(),
                    last_snapshot: s.as_ref().map(|s| s.observed_at),
                })
        })
    }

    pub fn log(level: Level, message: &str) {
        let level = match level {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        eprintln!("{level}: {message}");
    }
    pub fn latest_snapshot() -> Option<wit::RuntimeSnapshot> {
        SNAPSHOT.with(|s| s.borrow().clone())
    }
    pub fn data_dir() -> Option<String> {
        None
    }
    /// A native build has no sandbox host to hand it secrets: it says so.
    pub fn secret(name: &str) -> Result<String, String> {
        Err(format!(
            "secret {name} is handed to plugins only in the WebAssembly sandbox (lingxi-wasm-run, granted with --secret {name}); this native build has none"
        ))
    }
    pub fn workspace() -> Result<wit::WorkspaceInfo, wit::InfoUnavailable> {
        section("workspace", |s| s.workspace.as_ref())
    }
    pub fn pe_core() -> Result<wit::PeCoreInfo, wit::InfoUnavailable> {
        section("peCore", |s| s.pe_core.as_ref())
    }
    pub fn context_state() -> Result<wit::ContextStateInfo, wit::InfoUnavailable> {
        section("contextState", |s| s.context_state.as_ref())
    }
    pub fn performance() -> Result<wit::PerformanceInfo, wit::InfoUnavailable> {
        section("performance", |s| s.performance.as_ref())
    }

    use crate::bindings::lingxi::plugin::tasks::{Progress, TaskState};

    /// Background tasks need instances of their own, which only the
    /// sandbox host makes: a native build says so instead of pretending.
    pub fn start_task(_kind: &str, _input: &str) -> Result<String, String> {
        Err("background tasks run only in the WebAssembly sandbox (lingxi-wasm-run); this native build runs none".to_owned())
    }
    pub fn task_status(_id: &str) -> Option<TaskState> {
        None
    }
    pub fn cancel_task(_id: &str) -> bool {
        false
    }
    pub fn report_progress(_progress: &Progress) {}
}

#[cfg(all(feature = "native", not(target_arch = "wasm32")))]
pub use imp::set_snapshot;
pub use imp::{
    cancel_task, context_state, data_dir, latest_snapshot, log, pe_core, performance,
    report_progress, secret, start_task, task_status, workspace,
};
