//! Which calls may have grown the data directory. The quota check walks the
//! whole directory, which costs several system calls per file; doing it after
//! every call would be most of the cost of a small tool call. So the WASI
//! filesystem functions that can add bytes or entries (`open-at` with
//! `create`, `create-directory-at`, `symlink-at`, `link-at`, `rename-at`,
//! `write`, `set-size`, `write-via-stream`, `append-via-stream`) are
//! wrapped: they mark the instance, and the walk runs only after a call
//! that used one of them, or while a file write stream the guest obtained
//! is still open (a stream kept across calls can write in any later call).
//!
//! The marks are conservative: a write to the workspace counts too, and a
//! failed attempt counts as well. The wrappers that set them are in
//! `files.rs`, with the host's other filesystem wrappers.

use wasmtime::component::ResourceTable;

/// What one instance may have written since the last quota check.
#[derive(Debug, Default)]
pub(crate) struct WriteTracker {
    /// A writing function was called since the last check.
    pub(super) wrote: bool,
    /// Resource ids of file write streams handed to the guest.
    pub(super) streams: Vec<u32>,
}

impl WriteTracker {
    /// Whether the data directory may have grown since the last call to
    /// this; forgets the marks of finished writes.
    pub(crate) fn take(&mut self, table: &mut ResourceTable) -> bool {
        // A slot that now holds another resource (ids are reused) keeps the
        // mark only while that one is an output stream too: conservative.
        self.streams.retain(|&rep| {
            table
                .get_any_mut(rep)
                .is_ok_and(|entry| entry.is::<OutputStreamEntry>())
        });
        std::mem::take(&mut self.wrote) || !self.streams.is_empty()
    }
}

/// What the resource table stores for an `output-stream`.
type OutputStreamEntry = wasmtime_wasi::p2::DynOutputStream;
