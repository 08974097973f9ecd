//! Effect receipts: what one call did, counted where the plugin meets WASI
//! (the wrapped functions of `linker/`), not what the plugin says it did.
//!
//! A caller asks for a receipt with a [`ReceiptSlot`] in its
//! [`CallOptions`](crate::CallOptions) (a JSONL [`Server`](crate::Server)
//! hands every call's to [`Server::on_receipt`](crate::Server::on_receipt)); the
//! call fills the slot whether it succeeds or fails. Nobody asking costs one
//! flag test in each wrapped function: nothing is counted, timed or kept.
//!
//! A receipt is bounded: each list holds at most
//! [`MAX_RECEIPT_ENTRIES`] entries (a
//! slot may ask for more), uses past it are counted in [`Totals`](crate::policy::receipt::Totals) and
//! [`Totals::omitted`](crate::policy::receipt::Totals::omitted) says how many were left out.
//!
//! What WASI cannot tell is said, not guessed: a plugin reads its whole
//! environment at once, so [`Receipt::environment`] names the variables it
//! was handed when it read it, not the ones it then looked at.

mod cpu;
mod log;
mod streams;

pub(crate) use cpu::Metered;
pub(crate) use log::{Effects, Op};
pub(crate) use streams::{Target, count_input, count_output};

use std::sync::{Arc, Mutex};

// The receipt's data model is the policy crate's (`policy::receipt`).
use lingxi_wasm_policy::receipt::Receipt;

use crate::limits::{MAX_LEARN_ENTRIES, MAX_LEARN_NAME, MAX_RECEIPT_ENTRIES, MAX_RECEIPT_NAME};

/// Where a call leaves its receipt: give a clone to
/// [`CallOptions::with_receipt`](crate::CallOptions::with_receipt), then
/// [`ReceiptSlot::take`] it after the call. Cloning shares the slot.
#[derive(Debug, Clone)]
pub struct ReceiptSlot {
    inner: Arc<Mutex<Option<Receipt>>>,
    capacity: usize,
    name_limit: usize,
}

impl Default for ReceiptSlot {
    fn default() -> Self {
        ReceiptSlot::new()
    }
}

impl PartialEq for ReceiptSlot {
    /// The same slot.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for ReceiptSlot {}

impl ReceiptSlot {
    /// An empty slot whose receipts list at most
    /// [`MAX_RECEIPT_ENTRIES`] entries each.
    pub fn new() -> Self {
        ReceiptSlot::with_capacity(MAX_RECEIPT_ENTRIES)
    }

    /// An empty slot whose receipts list at most `entries` entries each
    /// (at least 1).
    pub fn with_capacity(entries: usize) -> Self {
        ReceiptSlot {
            inner: Arc::default(),
            capacity: entries.max(1),
            name_limit: MAX_RECEIPT_NAME,
        }
    }

    /// A slot for learning a policy: lists of up to
    /// [`MAX_LEARN_ENTRIES`] entries and
    /// names of up to [`MAX_LEARN_NAME`]
    /// bytes, so that nothing a policy needs is cut.
    pub fn for_learning() -> Self {
        ReceiptSlot {
            name_limit: MAX_LEARN_NAME,
            ..ReceiptSlot::with_capacity(MAX_LEARN_ENTRIES)
        }
    }

    /// The receipt of the latest call that used this slot, if any; the
    /// slot is empty afterwards.
    pub fn take(&self) -> Option<Receipt> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }

    /// How many entries each list of its receipts may hold, and the
    /// longest name kept.
    pub(crate) fn bounds(&self) -> (usize, usize) {
        (self.capacity, self.name_limit)
    }

    /// Leaves `receipt` here (replacing an unread one).
    pub(crate) fn put(&self, receipt: Receipt) {
        *self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(receipt);
    }
}
