//! How one call runs: [`CallOptions`], taken by every call of a plugin's
//! tools, commands and hooks ([`PluginHost::execute_tool`](crate::PluginHost::execute_tool),
//! [`Session::call_tool`](crate::Session::call_tool), `run_command`,
//! `emit`…). Starting and initializing an instance run within the plugin's
//! own call timeout.

use std::time::Duration;

use crate::deadline::Deadline;
use crate::effects::ReceiptSlot;
use crate::limits::Limits;

/// How one call runs. `CallOptions::default()`:
/// - the deadline is the plugin's own call timeout
///   ([`Limits::call_timeout`]), counted from when the call is made;
/// - a tool's own timeout (`x-lingxi-timeout-ms`) shortens it, from when
///   the tool starts;
/// - no receipt is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallOptions {
    /// The call's deadline instead of the plugin's call timeout, counted
    /// from when the call is made (for a call that needs approval, from
    /// when it is approved). In a set's session, waiting behind the
    /// instance's previous call and starting a fresh instance count
    /// against it; for a hook sent to every subscriber, it is one budget
    /// for all of them.
    pub timeout: Option<Duration>,
    /// Where the call leaves its receipt: what it did, counted at the WASI
    /// boundary (see [`crate::effects`]). Filled once the plugin ran, also
    /// when the call fails; a call refused before (by its contract, the
    /// crash breaker or a deadline that passed while waiting) leaves none.
    /// Starting a fresh instance for the call (and replaying its
    /// `plugin.initialize`) is not in it: the receipt is the call's own.
    pub receipt: Option<ReceiptSlot>,
}

impl CallOptions {
    /// Within `timeout` instead of the plugin's call timeout.
    pub fn within(timeout: Duration) -> Self {
        CallOptions {
            timeout: Some(timeout),
            ..CallOptions::default()
        }
    }

    /// The same options, leaving the call's receipt in `slot`.
    pub fn with_receipt(mut self, slot: &ReceiptSlot) -> Self {
        self.receipt = Some(slot.clone());
        self
    }

    /// The deadline these options give a call under `limits`, from now.
    pub(crate) fn deadline(&self, limits: &Limits) -> Deadline {
        Deadline::after(self.timeout.unwrap_or(limits.call_timeout))
    }
}
