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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            call_timeout: Duration::from_millis(2500),
            max_memory_bytes: 256 * 1024 * 1024,
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
}
