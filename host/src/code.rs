//! How compiled plugin code becomes executable, and how a packed plugin's
//! precompiled code runs in place.
//!
//! Wasmtime normally copies precompiled code into fresh anonymous memory and
//! then makes it executable: for a packed plugin that is a copy of a few
//! hundred KiB and a page fault per page, at every start. The packed format
//! aligns the code in the file ([`crate::pack::CODE_ALIGN`]), so here it is
//! mapped privately from the file instead and made executable in place.
//!
//! Doing that needs wasmtime to publish code through [`PageProtection`] (its
//! own path refuses memory it did not map). That is the same `mprotect`
//! wasmtime does; its other publishing steps (instruction-cache clearing and
//! the cross-core pipeline flush of `wasmtime-jit-icache-coherence`, branch
//! protection) are no-ops on x86-64, so this is only installed there, and
//! only on Linux, the one platform where the running executable cannot be
//! written while it runs. Elsewhere code is copied as usual.
//!
//! Only the running executable's own payload is ever mapped this way; files
//! that are not the running executable never become native code.

use std::fs::File;
use std::ptr::NonNull;

use rustix::mm::{MprotectFlags, mprotect};
use wasmtime::CustomCodeMemory;

/// Publishes code with `mprotect`: read+execute, and back to read+write.
pub(crate) struct PageProtection {
    page_size: usize,
}

impl PageProtection {
    pub(crate) fn new() -> Self {
        PageProtection {
            page_size: rustix::param::page_size(),
        }
    }
}

impl CustomCodeMemory for PageProtection {
    fn required_alignment(&self) -> usize {
        self.page_size
    }

    fn publish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        // SAFETY: wasmtime hands over the text range of a code image it owns
        // or that `map_in_place` mapped, page-aligned as required above.
        unsafe {
            mprotect(
                ptr as *mut _,
                len,
                MprotectFlags::READ | MprotectFlags::EXEC,
            )
        }
        .map_err(|e| wasmtime::format_err!("cannot make plugin code executable: {e}"))
    }

    fn unpublish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        // SAFETY: as above; no code runs from the range any more. Private
        // file maps may become writable (copy-on-write), anonymous ones too.
        unsafe {
            mprotect(
                ptr as *mut _,
                len,
                MprotectFlags::READ | MprotectFlags::WRITE,
            )
        }
        .map_err(|e| wasmtime::format_err!("cannot unpublish plugin code: {e}"))
    }
}

/// Precompiled code mapped privately from a file. Wasmtime runs code
/// from it; whoever holds the component must keep this alive until the
/// last store and instance using that code is gone (`PluginComponent`
/// holds it in an `Arc`, dropped after the component).
pub(crate) struct CodeMap {
    map: memmap2::Mmap,
}

impl CodeMap {
    /// The mapped bytes.
    pub(crate) fn memory(&self) -> NonNull<[u8]> {
        NonNull::from(&self.map[..])
    }
}

/// Maps `len` bytes at `offset` (page-aligned) of `file`, private
/// (copy-on-write), so wasmtime can make the text executable in place.
pub(crate) fn map_in_place(file: &File, offset: u64, len: usize) -> std::io::Result<CodeMap> {
    // SAFETY: a private map: later writes to the file by others are the
    // only hazard, and the caller maps only the running executable, which
    // Linux refuses to open for writing (ETXTBSY); see `pack::read_self`.
    let map = unsafe {
        memmap2::MmapOptions::new()
            .offset(offset)
            .len(len)
            .map_copy_read_only(file)?
    };
    Ok(CodeMap { map })
}
