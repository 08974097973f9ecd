//! The SDK's only door to the host. In a component (`wasm32`) these are the
//! imported WIT functions; on other targets there is no host yet, so logs go to
//! stderr and no snapshot was ever received (which is the honest answer).

pub use crate::bindings::lingxi::plugin::logging::Level;

#[cfg(target_arch = "wasm32")]
mod imp {
    pub use crate::bindings::lingxi::plugin::host_info::{
        context_state, data_dir, latest_snapshot, pe_core, performance, workspace,
    };
    pub use crate::bindings::lingxi::plugin::logging::log;
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::Level;
    use crate::bindings::lingxi::plugin::types as wit;

    fn unavailable<T>(field: &str) -> Result<T, wit::InfoUnavailable> {
        Err(wit::InfoUnavailable {
            field: field.to_owned(),
            last_snapshot: None,
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
        None
    }
    pub fn data_dir() -> Option<String> {
        None
    }
    pub fn workspace() -> Result<wit::WorkspaceInfo, wit::InfoUnavailable> {
        unavailable("workspace")
    }
    pub fn pe_core() -> Result<wit::PeCoreInfo, wit::InfoUnavailable> {
        unavailable("peCore")
    }
    pub fn context_state() -> Result<wit::ContextStateInfo, wit::InfoUnavailable> {
        unavailable("contextState")
    }
    pub fn performance() -> Result<wit::PerformanceInfo, wit::InfoUnavailable> {
        unavailable("performance")
    }
}

pub use imp::{context_state, data_dir, latest_snapshot, log, pe_core, performance, workspace};
