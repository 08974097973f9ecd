//! The runtime snapshot a plugin host keeps: the `host.snapshot` rules
//! (which snapshot replaces which), applied on the host side so that a
//! restarted instance needs nothing re-applied.

use std::sync::Arc;

use super::PluginHost;
use crate::bindings::lingxi::plugin::types as wit;
use crate::error::SnapshotError;
use crate::protocol::SUPPORTED_IPC_VERSIONS;

impl PluginHost {
    /// `host.snapshot`: a snapshot of an unsupported IPC version is refused and
    /// the previous one kept; an older one than stored is ignored; an equal or
    /// newer one replaces the stored one entirely.
    pub fn apply_snapshot(&mut self, snapshot: wit::RuntimeSnapshot) -> Result<(), SnapshotError> {
        if replaces(self.snapshot.as_deref(), &snapshot)? {
            self.snapshot = Some(Arc::new(snapshot));
            self.resolve_mounts();
        }
        Ok(())
    }

    /// The same for a snapshot shared with other plugins (no copy is made).
    pub(crate) fn share_snapshot(
        &mut self,
        snapshot: Arc<wit::RuntimeSnapshot>,
    ) -> Result<(), SnapshotError> {
        if replaces(self.snapshot.as_deref(), &snapshot)? {
            self.snapshot = Some(snapshot);
            self.resolve_mounts();
        }
        Ok(())
    }
}

/// Whether `snapshot` replaces `stored` (the `host.snapshot` rules): one of
/// an unsupported IPC version is refused and the stored one kept; an older
/// one than stored is ignored; an equal or newer one replaces it entirely.
pub(crate) fn replaces(
    stored: Option<&wit::RuntimeSnapshot>,
    snapshot: &wit::RuntimeSnapshot,
) -> Result<bool, SnapshotError> {
    if !SUPPORTED_IPC_VERSIONS.contains(&snapshot.ipc_version) {
        return Err(SnapshotError::UnsupportedVersion(snapshot.ipc_version));
    }
    let key = |t: &wit::Timestamp| (t.seconds, t.nanoseconds);
    let older = stored.is_some_and(|s| key(&snapshot.observed_at) < key(&s.observed_at));
    if older {
        tracing::debug!("ignoring a snapshot older than the stored one");
    }
    Ok(!older)
}
