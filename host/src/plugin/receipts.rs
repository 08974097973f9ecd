//! Receipts and learning, as a plugin keeps them: where each call leaves
//! its receipt (its own slot, or the plugin's), and learning mode
//! (refused sockets recorded; see `linker/wasi.rs`).

use super::PluginHost;
use crate::effects::ReceiptSlot;

impl PluginHost {
    /// Every call of this plugin from now on, also `plugin.initialize` and
    /// `plugin.deactivate`, leaves its receipt in `slot` (a call whose
    /// [`CallOptions`](crate::CallOptions) name a slot leaves it there
    /// instead). Only the JSONL [`Server`](crate::Server) keeps receipts
    /// this way, for [`Server::on_receipt`](crate::Server::on_receipt);
    /// everyone else asks per call.
    pub(crate) fn keep_receipts(&mut self, slot: ReceiptSlot) {
        self.receipts = Some(slot);
    }

    /// Whether the plugin is in learning mode ([`PluginHost::set_learning`]).
    pub(crate) fn learning(&self) -> bool {
        self.learning
    }

    /// Learning mode (what `lingxi-wasm-run learn` runs a plugin in), from
    /// the next instance on: a socket of a plugin without `networkAccess`
    /// reaches the host, which refuses it exactly as before and records
    /// the refusal, with the rule that would allow it, in the call's
    /// receipt (a path outside every mount always reaches the host: see
    /// `linker/trap.rs`). Without it such sockets fail inside the guest,
    /// unseen.
    pub fn set_learning(&mut self, on: bool) {
        self.learning = on;
        self.live = None;
    }

    /// The slot the next call leaves its receipt in: the options' own, or
    /// the plugin's.
    pub(crate) fn record_into(&mut self, slot: Option<&ReceiptSlot>) {
        self.recording = slot.or(self.receipts.as_ref()).cloned();
    }
}
