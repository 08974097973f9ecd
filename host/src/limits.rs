//! Resource limits for one plugin instance: where every number a plugin can
//! run into is decided.

use std::time::Duration;

/// How often the engine's epoch advances; the granularity of deadlines.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// LingXi Core's per-call watchdog (spec §6).
pub const HOST_WATCHDOG: Duration = Duration::from_secs(3);

/// Limits applied to every call into a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock budget of one call. The default stays under Core's 3.0 s
    /// watchdog so Core receives an explanatory error instead of timing out
    /// and killing the plugin.
    pub call_timeout: Duration,
    /// Upper bound on the linear memory of one instance, in bytes.
    pub max_memory_bytes: usize,
    /// Largest tool output or command text one call may return, in bytes.
    pub max_result_bytes: usize,
    /// Most bytes one call may write to stdout, stderr and the log together.
    pub max_output_bytes: usize,
    /// A plugin that traps this many times within [`Limits::trap_window`] is
    /// disabled until the launcher restarts.
    pub max_traps: usize,
    /// The window in which traps are counted.
    pub trap_window: Duration,
    /// Size quota of the plugin's data directory, in bytes.
    pub max_storage_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            call_timeout: Duration::from_millis(2500),
            max_memory_bytes: 256 * 1024 * 1024,
            max_result_bytes: 16 * 1024 * 1024,
            max_output_bytes: 16 * 1024 * 1024,
            max_traps: 5,
            trap_window: Duration::from_secs(60),
            max_storage_bytes: 64 * 1024 * 1024,
        }
    }
}

impl Limits {
    /// The call timeout in epoch ticks, at least one.
    pub fn deadline_ticks(&self) -> u64 {
        let ticks = self.call_timeout.as_nanos() / EPOCH_TICK.as_nanos();
        u64::try_from(ticks).unwrap_or(u64::MAX).max(1)
    }
}

/// Bytes a call has written to stdout, stderr and the log, shared by the
/// streams and the log import of one instance; reset before every call.
#[derive(Debug, Default)]
pub struct OutputBudget {
    used: std::sync::atomic::AtomicUsize,
    limit: usize,
}

/// A call wrote more than [`Limits::max_output_bytes`]. Raised as a trap.
#[derive(Debug, thiserror::Error)]
#[error("the plugin wrote more than {limit} bytes of output in one call")]
pub struct OutputFlood {
    /// The limit in force.
    pub limit: usize,
}

impl OutputBudget {
    /// A budget of `limit` bytes per call.
    pub fn new(limit: usize) -> std::sync::Arc<Self> {
        std::sync::Arc::new(OutputBudget {
            used: Default::default(),
            limit,
        })
    }

    /// Starts a new call.
    pub fn reset(&self) {
        self.used.store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Spends `bytes`; fails once the call is over its budget.
    pub fn spend(&self, bytes: usize) -> Result<(), OutputFlood> {
        let before = self
            .used
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        if before.saturating_add(bytes) > self.limit {
            return Err(OutputFlood { limit: self.limit });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_deadline_is_under_the_host_watchdog() {
        let limits = Limits::default();
        assert!(limits.call_timeout < HOST_WATCHDOG);
        assert_eq!(limits.deadline_ticks(), 250);
        let tiny = Limits {
            call_timeout: Duration::from_micros(1),
            ..Limits::default()
        };
        assert_eq!(tiny.deadline_ticks(), 1);
    }

    #[test]
    fn output_budget_trips_past_its_limit_and_resets() {
        let budget = OutputBudget::new(10);
        assert!(budget.spend(6).is_ok());
        assert!(budget.spend(4).is_ok());
        assert!(budget.spend(1).is_err());
        budget.reset();
        assert!(budget.spend(10).is_ok());
    }
}
