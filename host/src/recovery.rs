//! What a failed call was (deadline, memory, output flood, exit, crash),
//! and the breaker that disables a plugin that keeps crashing.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use wasmtime::Trap;

use crate::error::CallError;
use crate::limits::{Limits, OutputFlood};
use crate::memory::MemoryLimit;
use crate::observe::Origin;

/// The crash breaker of one plugin host: the recent traps, and why the
/// plugin is disabled once [`Limits::max_traps`] of them fall within
/// [`Limits::trap_window`].
#[derive(Debug, Default)]
pub(crate) struct Breaker {
    /// When the recent traps happened, oldest first.
    traps: VecDeque<Instant>,
    /// Set once the plugin trapped too often: every later call fails with it.
    disabled: Option<String>,
}

impl Breaker {
    /// Why the plugin is disabled, if it is.
    pub(crate) fn disabled(&self) -> Option<&str> {
        self.disabled.as_deref()
    }

    /// The error every call gets once the plugin is disabled.
    pub(crate) fn refusal(&self, plugin: &str, limits: &Limits) -> Option<CallError> {
        let last = self.disabled.clone()?;
        Some(CallError::Disabled {
            plugin: plugin.to_owned(),
            traps: limits.max_traps,
            window_secs: limits.trap_window.as_secs(),
            last,
        })
    }

    /// Records a trap; disables the plugin once too many fall in the
    /// window. Returns whether this trap disabled it.
    pub(crate) fn count(&mut self, error: &CallError, limits: &Limits, origin: &Origin) -> bool {
        let now = Instant::now();
        self.traps.push_back(now);
        while self
            .traps
            .front()
            .is_some_and(|t| now.duration_since(*t) > limits.trap_window)
        {
            self.traps.pop_front();
        }
        if self.traps.len() >= limits.max_traps {
            tracing::error!(
                plugin = %origin.plugin, session = %origin.session,
                "disabled after {} crashes within {} s; fix the plugin and start it again",
                self.traps.len(),
                limits.trap_window.as_secs()
            );
            let first = self.disabled.is_none();
            self.disabled = Some(error.to_string());
            return first;
        }
        false
    }
}

/// A [`Breaker`] shared by a plugin's calls and tasks (it lives on the
/// plugin's task board): every call asks it with one atomic load while the
/// plugin is not disabled; only a crash and a disabled plugin take its lock.
#[derive(Debug, Default)]
pub(crate) struct SharedBreaker {
    breaker: Mutex<Breaker>,
    /// Whether the breaker disabled the plugin (set and cleared under the
    /// lock).
    tripped: AtomicBool,
}

impl SharedBreaker {
    fn lock(&self) -> MutexGuard<'_, Breaker> {
        // A poisoned lock only means a panic elsewhere; the value is whole.
        self.breaker.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The error every call and task start gets once the plugin is
    /// disabled; `None` while it is not.
    pub(crate) fn refusal(&self, plugin: &str, limits: &Limits) -> Option<CallError> {
        if !self.tripped.load(Ordering::Acquire) {
            return None;
        }
        self.lock().refusal(plugin, limits)
    }

    /// Why the plugin is disabled, if it is.
    pub(crate) fn disabled(&self) -> Option<String> {
        if !self.tripped.load(Ordering::Acquire) {
            return None;
        }
        self.lock().disabled().map(str::to_owned)
    }

    /// Counts a crash of a call or task; returns whether it disabled the
    /// plugin.
    pub(crate) fn count(&self, error: &CallError, limits: &Limits, origin: &Origin) -> bool {
        let mut breaker = self.lock();
        let disabled = breaker.count(error, limits, origin);
        if breaker.disabled().is_some() {
            self.tripped.store(true, Ordering::Release);
        }
        disabled
    }

    /// Starts over: no traps, not disabled.
    pub(crate) fn reset(&self) {
        let mut breaker = self.lock();
        *breaker = Breaker::default();
        self.tripped.store(false, Ordering::Release);
    }
}

/// What a call named `label` that the engine ended with `error` was, under
/// `limits`.
pub(crate) fn classify(
    label: &dyn std::fmt::Display,
    error: wasmtime::Error,
    limits: &Limits,
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
            limit: limits.call_timeout,
        },
        Some(Trap::AllocationTooLarge) => CallError::Memory {
            call,
            limit_bytes: limits.max_memory_bytes,
        },
        _ => CallError::Trap {
            call,
            reason: trap_reason(&error),
        },
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
