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
//! failed attempt counts as well. The `link-at` wrapper also refuses hard
//! links between two different descriptors (e.g. from the workspace into
//! the data directory): such a link would outlive the grant of its source.

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi::filesystem::{WasiFilesystemCtxView, WasiFilesystemView};
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    Descriptor, DescriptorFlags, ErrorCode, Host, HostDescriptor, OpenFlags, PathFlags,
};
use wasmtime_wasi::p2::bindings::io::streams::OutputStream;

use crate::state::HostState;

/// The interface whose functions are wrapped; the version must be the one
/// wasmtime-wasi registers.
const FILESYSTEM_INTERFACE: &str = "wasi:filesystem/types@0.2.12";

/// What one instance may have written since the last quota check.
#[derive(Debug, Default)]
pub(crate) struct WriteTracker {
    /// A writing function was called since the last check.
    wrote: bool,
    /// Resource ids of file write streams handed to the guest.
    streams: Vec<u32>,
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

/// Answers a wrapped call in the shape the guest expects: an error code for
/// a filesystem error, a trap for anything else.
fn answer<T>(
    fs: &mut WasiFilesystemCtxView<'_>,
    r: FsResult<T>,
) -> wasmtime::Result<(Result<T, ErrorCode>,)> {
    match r {
        Ok(value) => Ok((Ok(value),)),
        Err(error) => Ok((Err(Host::convert_error_code(fs, error)?),)),
    }
}

/// Marks the instance written and runs a function that hands out a write stream: the
/// stream's id is remembered until the guest drops it.
fn streamed<A>(
    mut store: StoreContextMut<'_, HostState>,
    args: A,
    call: impl FnOnce(&mut WasiFilesystemCtxView<'_>, A) -> FsResult<Resource<OutputStream>>,
) -> wasmtime::Result<(Result<Resource<OutputStream>, ErrorCode>,)> {
    let state = store.data_mut();
    state.writes.wrote = true;
    let answer = {
        let mut fs = state.filesystem();
        let result = call(&mut fs, args);
        answer(&mut fs, result)?
    };
    if let (Ok(stream),) = &answer {
        state.writes.streams.push(stream.rep());
    }
    Ok(answer)
}

type Fd = Resource<Descriptor>;

/// Defines an async wrapper of `HostDescriptor::$method` under `$name`
/// that marks the instance written when `$mark` (an expression of the
/// arguments) holds. The wrapped functions are async in wasmtime-wasi: the
/// file system work runs on tokio's blocking pool, never on the thread that
/// owns the call's deadline.
macro_rules! marked {
    ($i:ident, $name:literal, ($($arg:ident: $ty:ty),*), $mark:expr, $method:ident) => {
        $i.func_wrap_async(
            $name,
            |mut store: StoreContextMut<'_, HostState>, ($($arg,)*): ($($ty,)*)| {
                Box::new(async move {
                    let state = store.data_mut();
                    state.writes.wrote |= $mark;
                    let mut fs = state.filesystem();
                    let result = HostDescriptor::$method(&mut fs, $($arg),*).await;
                    answer(&mut fs, result)
                })
            },
        )?
    };
}

/// Replaces the writing functions of `wasi:filesystem/types` with marking
/// wrappers around wasmtime-wasi's own implementation.
pub(crate) fn link(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut i = linker.instance(FILESYSTEM_INTERFACE)?;
    marked!(
        i,
        "[method]descriptor.open-at",
        (fd: Fd, pf: PathFlags, path: String, of: OpenFlags, df: DescriptorFlags),
        of.contains(OpenFlags::CREATE),
        open_at
    );
    marked!(i, "[method]descriptor.create-directory-at", (fd: Fd, path: String), true, create_directory_at);
    marked!(i, "[method]descriptor.symlink-at", (fd: Fd, old: String, new: String), true, symlink_at);
    // A hard link from one mounted folder into another would keep the file
    // reachable after the grant of the first is gone (a workspace file
    // linked into the data directory): links are made only within one
    // descriptor, and across two answer `cross-device`, as between file
    // systems (programs then copy).
    i.func_wrap_async(
        "[method]descriptor.link-at",
        |mut store: StoreContextMut<'_, HostState>,
         (fd, pf, old, new_fd, new): (Fd, PathFlags, String, Fd, String)| {
            Box::new(async move {
                if fd.rep() != new_fd.rep() {
                    return Ok((Err(ErrorCode::CrossDevice),));
                }
                let state = store.data_mut();
                state.writes.wrote = true;
                let mut fs = state.filesystem();
                let result = HostDescriptor::link_at(&mut fs, fd, pf, old, new_fd, new).await;
                answer(&mut fs, result)
            })
        },
    )?;
    // A rename can move a file of any size into the data directory.
    marked!(
        i,
        "[method]descriptor.rename-at",
        (fd: Fd, old: String, new_fd: Fd, new: String),
        true,
        rename_at
    );
    marked!(i, "[method]descriptor.write", (fd: Fd, buffer: Vec<u8>, offset: u64), true, write);
    marked!(i, "[method]descriptor.set-size", (fd: Fd, size: u64), true, set_size);
    i.func_wrap(
        "[method]descriptor.write-via-stream",
        |store, args: (Fd, u64)| {
            streamed(store, args, |fs, (fd, offset)| {
                HostDescriptor::write_via_stream(fs, fd, offset)
            })
        },
    )?;
    i.func_wrap(
        "[method]descriptor.append-via-stream",
        |store, (fd,): (Fd,)| {
            streamed(store, fd, |fs, fd| {
                HostDescriptor::append_via_stream(fs, fd)
            })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
