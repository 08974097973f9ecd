//! What a failed call was (deadline, memory, output flood, exit, crash),
//! and the breaker that disables a plugin that keeps crashing.

use std::time::Instant;

use wasmtime::Trap;

use super::PluginHost;
use crate::error::CallError;
use crate::limits::{MemoryLimit, OutputFlood};

impl PluginHost {
    /// Records a trap; disables the plugin once too many fall in the window.
    pub(super) fn count_trap(&mut self, error: &CallError) {
        let now = Instant::now();
        self.traps.push_back(now);
        while self
            .traps
            .front()
            .is_some_and(|t| now.duration_since(*t) > self.limits.trap_window)
        {
            self.traps.pop_front();
        }
        if self.traps.len() >= self.limits.max_traps {
            tracing::error!(
                plugin = %self.origin.plugin, session = %self.origin.session,
                "disabled after {} crashes within {} s; fix the plugin and start it again",
                self.traps.len(),
                self.limits.trap_window.as_secs()
            );
            self.disabled = Some(error.to_string());
        }
    }

    pub(super) fn classify(
        &self,
        label: &dyn std::fmt::Display,
        error: wasmtime::Error,
    ) -> CallError {
        let call = label.to_string();
        if let Some(flood) = error.downcast_ref::<OutputFlood>() {
            return CallError::OutputFlood {
                call,
                limit_bytes: flood.limit,
            };
        }
        if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
            return CallError::Exited {
                call,
                status: exit.0,
            };
        }
        if let Some(memory) = error.downcast_ref::<MemoryLimit>() {
            return CallError::Memory {
                call,
                limit_bytes: memory.limit,
            };
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => CallError::Timeout {
                call,
                limit: self.limits.call_timeout,
            },
            Some(Trap::AllocationTooLarge) => CallError::Memory {
                call,
                limit_bytes: self.limits.max_memory_bytes,
            },
            _ => CallError::Trap {
                call,
                reason: trap_reason(&error),
            },
        }
    }
}

/// The first line of the engine's description of a trap (the backtrace follows).
fn trap_reason(error: &wasmtime::Error) -> String {
    let full = format!("{error:#}");
    let reason = full.lines().next().unwrap_or("unknown trap").trim();
    match error.downcast_ref::<Trap>() {
        Some(trap) => format!("{trap}"),
        None => reason.to_owned(),
    }
}
