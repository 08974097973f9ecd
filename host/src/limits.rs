//! Resource limits for one plugin instance: where every number a plugin can
//! run into is decided.

use std::time::Duration;

/// How often the engine's epoch advances; the granularity of deadlines.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// What one line of guest output or log costs beyond its text and the
/// plugin id: the level, brackets, stream name and newline the launcher
/// writes around it (at most this many bytes).
pub const LINE_OVERHEAD: usize = 16;

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
    /// The deadline of one call as a tokio timer accepts it: any duration
    /// works, one too far to represent means "no deadline" (tokio's own
    /// rule), never an overflow.
    pub fn deadline(&self) -> Duration {
        self.call_timeout
    }
}

/// The memory cap of one instance, enforced by the store's limiter: growing
/// past it traps with [`MemoryLimit`], a typed error the host classifies
/// (never by matching message text).
pub struct MemoryCap {
    limit: usize,
    /// Instance, table and memory counts stay at wasmtime's defaults.
    others: wasmtime::StoreLimits,
}

/// A plugin tried to grow its memory past [`Limits::max_memory_bytes`].
#[derive(Debug, thiserror::Error)]
#[error("the plugin tried to grow its memory to {desired} bytes, past the limit of {limit}")]
pub struct MemoryLimit {
    /// The size asked for.
    pub desired: usize,
    /// The limit in force.
    pub limit: usize,
}

impl MemoryCap {
    /// A cap of `limit` bytes of linear memory.
    pub fn new(limit: usize) -> Self {
        MemoryCap {
            limit,
            others: wasmtime::StoreLimits::default(),
        }
    }
}

impl wasmtime::ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            return Err(MemoryLimit {
                desired,
                limit: self.limit,
            }
            .into());
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.others.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.others.instances()
    }

    fn tables(&self) -> usize {
        self.others.tables()
    }

    fn memories(&self) -> usize {
        self.others.memories()
    }
}

/// Cuts a plugin's text (an error message) to at most `max` bytes on a
/// character boundary, saying how much was cut: error texts are held to the
/// same limit as results.
pub fn cap_text(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let original = text.len();
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!(
        "… [the plugin's text was {original} bytes; cut to the {max}-byte limit]"
    ));
    text
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

    /// Spends `bytes`; fails once the call is over its budget. Callers
    /// charge what they really write: the text plus its prefix and newline.
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
        assert!(limits.deadline() < HOST_WATCHDOG);
    }

    #[test]
    fn error_texts_are_capped_on_a_char_boundary() {
        assert_eq!(cap_text("abc".into(), 3), "abc");
        let cut = cap_text("ééé".into(), 3);
        assert!(
            cut.starts_with("é… [the plugin's text was 6 bytes"),
            "{cut}"
        );
    }

    #[test]
    fn memory_growth_past_the_cap_is_a_typed_error() {
        use wasmtime::ResourceLimiter;
        let mut cap = MemoryCap::new(100);
        assert!(cap.memory_growing(0, 100, None).unwrap());
        let error = cap.memory_growing(0, 101, None).unwrap_err();
        assert_eq!(
            error.downcast_ref::<MemoryLimit>().map(|m| m.limit),
            Some(100)
        );
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
