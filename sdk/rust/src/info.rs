//! The read-only info hub: what the host published in its runtime snapshots.
//!
//! Every getter asks the host for one snapshot section. A section the host did
//! not send is an [`InfoUnavailable`] error, never a default value: the SDK does
//! not measure, estimate or fill in anything.

use std::fmt;

use crate::bindings::lingxi::plugin::types as wit;
use crate::sys as host_info;

pub use crate::bindings::lingxi::plugin::types::{
    ContextStateInfo, PeCoreInfo, PerformanceInfo, RuntimeSnapshot, Timestamp, TurnSummary,
    WorkspaceInfo,
};

/// A snapshot section the host did not publish (Swift: `PluginInfoUnavailable`).
///
/// Its text is the protocol's: `Plugin runtime info unavailable: <field> (no
/// snapshot received)` or `… (last snapshot <ISO-8601 time>)`.
#[derive(Debug, Clone, PartialEq)]
pub struct InfoUnavailable {
    /// Wire name of the section: `workspace`, `peCore`, `contextState`, `performance`.
    pub field: String,
    /// When the latest snapshot was observed, if any snapshot arrived.
    pub last_snapshot: Option<Timestamp>,
}

impl fmt::Display for InfoUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Plugin runtime info unavailable: {} (", self.field)?;
        match &self.last_snapshot {
            None => f.write_str("no snapshot received)"),
            Some(at) => write!(f, "last snapshot {})", iso8601(at)),
        }
    }
}

impl std::error::Error for InfoUnavailable {}

impl From<wit::InfoUnavailable> for InfoUnavailable {
    fn from(e: wit::InfoUnavailable) -> Self {
        InfoUnavailable {
            field: e.field,
            last_snapshot: e.last_snapshot,
        }
    }
}

/// Formats a timestamp as ISO-8601 in UTC with whole seconds, as Foundation's
/// `ISO8601DateFormatter` does: `2027-01-15T08:00:00Z`.
pub fn iso8601(at: &Timestamp) -> String {
    match time::OffsetDateTime::from_unix_timestamp(at.seconds) {
        Ok(t) => {
            let d = t.date();
            let c = t.time();
            format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
                d.year(),
                u8::from(d.month()),
                d.day(),
                c.hour(),
                c.minute(),
                c.second()
            )
        }
        // Out of the representable range: still say something truthful.
        Err(_) => format!("@{}s", at.seconds),
    }
}

/// Read-only view of the host's runtime snapshot (Swift: `PluginInfoHub`),
/// reached through [`crate::CommandContext::info`].
#[derive(Debug, Clone, Copy, Default)]
pub struct InfoHub {
    _private: (),
}

impl InfoHub {
    pub(crate) fn new() -> Self {
        InfoHub { _private: () }
    }

    /// The workspace section: root path, git state, Core version.
    pub fn workspace_info(&self) -> Result<WorkspaceInfo, InfoUnavailable> {
        host_info::workspace().map_err(Into::into)
    }

    /// The P-Core / E-Core section.
    pub fn pe_core_info(&self) -> Result<PeCoreInfo, InfoUnavailable> {
        host_info::pe_core().map_err(Into::into)
    }

    /// The conversation section: model, token usage, recent turns.
    pub fn context_state(&self) -> Result<ContextStateInfo, InfoUnavailable> {
        host_info::context_state().map_err(Into::into)
    }

    /// The performance section: latencies and rate limiting.
    pub fn performance_info(&self) -> Result<PerformanceInfo, InfoUnavailable> {
        host_info::performance().map_err(Into::into)
    }

    /// The whole latest snapshot, or `None` if the host sent none.
    pub fn snapshot(&self) -> Option<RuntimeSnapshot> {
        host_info::latest_snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_without_snapshot() {
        let e = InfoUnavailable {
            field: "performance".into(),
            last_snapshot: None,
        };
        assert_eq!(
            e.to_string(),
            "Plugin runtime info unavailable: performance (no snapshot received)"
        );
    }

    #[test]
    fn unavailable_names_last_snapshot_time() {
        // Unix 1 800 000 000 is the spec fixture's observedAt.
        let e = InfoUnavailable {
            field: "peCore".into(),
            last_snapshot: Some(Timestamp {
                seconds: 1_800_000_000,
                nanoseconds: 250_000_000,
            }),
        };
        assert_eq!(
            e.to_string(),
            "Plugin runtime info unavailable: peCore (last snapshot 2027-01-15T08:00:00Z)"
        );
    }
}
