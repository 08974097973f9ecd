//! The filesystem functions the host wraps around wasmtime-wasi's own, in
//! one place: each marks the data directory for its quota check when it
//! can add bytes or entries (`writes.rs`), names the descriptors it hands
//! out (`names.rs`), records what it did while a call is being recorded
//! (`effects`), refuses every path that reached the trap (a path outside
//! every mount: `trap.rs`), and reports each refusal with the setting that
//! would allow it (`refusals.rs`).
//!
//! WASI's descriptors still decide what can be reached: a wrapper never
//! widens a call, it only refuses one (the trap, a hard link across
//! mounts) or watches it.

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::{WasiFilesystemCtxView, WasiFilesystemView};
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::preopens;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorType, ErrorCode, Host, HostDescriptor, NewTimestamp,
    OpenFlags, PathFlags,
};
use wasmtime_wasi::p2::bindings::io::streams::{InputStream, OutputStream};

use super::names::TRAP_PATH;
use crate::effects::{Op, Target, count_input, count_output};
use crate::policy::files::{FileRefusal, Refused};
use crate::state::HostState;

/// The interfaces whose functions are wrapped; the versions must be the
/// ones wasmtime-wasi registers.
const FILESYSTEM_INTERFACE: &str = "wasi:filesystem/types@0.2.12";
const PREOPENS_INTERFACE: &str = "wasi:filesystem/preopens@0.2.12";

type Fd = Resource<Descriptor>;
type Answer<T> = wasmtime::Result<(Result<T, ErrorCode>,)>;

/// Answers a wrapped call in the shape the guest expects: an error code for
/// a filesystem error, a trap for anything else.
fn answer<T>(fs: &mut WasiFilesystemCtxView<'_>, r: FsResult<T>) -> Answer<T> {
    match r {
        Ok(value) => Ok((Ok(value),)),
        Err(error) => Ok((Err(Host::convert_error_code(fs, error)?),)),
    }
}

impl HostState {
    /// `path` under descriptor `fd`, as one absolute path: every refusal
    /// and receipt names files by it.
    fn joined(&self, fd: u32, path: &str) -> String {
        self.names.join(fd, path)
    }

    /// The path of descriptor `fd`, while a call is recorded (a refusal
    /// names it itself: see [`did_fd`](Self::did_fd)).
    fn named(&self, fd: u32) -> String {
        match self.effects.active() {
            true => self.names.of(fd),
            false => String::new(),
        }
    }

    /// Refuses a path call through the trap (`what` done to the path):
    /// reports it and answers `access`, whether or not the path exists on
    /// the host.
    fn trapped(
        &mut self,
        fd: u32,
        path: &str,
        what: &str,
        write: bool,
        directory: bool,
    ) -> Option<ErrorCode> {
        if !self.names.is_trap(fd) {
            return None;
        }
        let full = self.names.join(fd, path);
        self.refused_file(what, &full, write, directory, Refused::OutsideEveryMount);
        Some(ErrorCode::Access)
    }

    /// Records what a path call did while a call is recorded, and reports
    /// what a mount refused (a `..` or a link out of it, a write to a
    /// read-only one).
    fn did<T>(&mut self, path: &str, op: Op, directory: bool, answer: &Result<T, ErrorCode>) {
        match answer {
            Ok(_) if self.effects.active() => self.effects.file(path, op, directory),
            Ok(_) => {}
            Err(code @ (ErrorCode::NotPermitted | ErrorCode::Access)) => {
                let write = !matches!(op, Op::Read | Op::List);
                let what = if write { "write" } else { "read" };
                let how = match code {
                    ErrorCode::NotPermitted => Refused::ByAMount,
                    _ => Refused::ByTheHost,
                };
                self.refused_file(what, path, write, directory, how);
            }
            Err(_) => {}
        }
    }

    /// [`did`](Self::did) for a call on descriptor `fd` itself, named only
    /// when recorded or refused.
    fn did_fd<T>(&mut self, fd: u32, op: Op, directory: bool, answer: &Result<T, ErrorCode>) {
        if self.effects.active() || answer.is_err() {
            let path = self.names.of(fd);
            self.did(&path, op, directory, answer);
        }
    }
}

/// Defines an async wrapper of `HostDescriptor::$method` under `$name`.
/// `$before` runs first with the state (it may answer at once with
/// `return`) and yields a note; `$after` sees the state, the note and the
/// answer. The wrapped functions are async in wasmtime-wasi: the file
/// system work runs on tokio's blocking pool, never on the thread that
/// owns the call's deadline.
macro_rules! wrap {
    ($i:ident, $name:literal, ($($arg:ident: $ty:ty),*), $method:ident,
     |$state:ident, $note:ident, $answer:ident| before $before:block after $after:block) => {
        $i.func_wrap_async(
            $name,
            |mut store: StoreContextMut<'_, HostState>, ($($arg,)*): ($($ty,)*)| {
                Box::new(async move {
                    let $state = store.data_mut();
                    let $note = $before;
                    let $answer = {
                        let mut fs = $state.filesystem();
                        let result = HostDescriptor::$method(&mut fs, $($arg),*).await;
                        answer(&mut fs, result)?
                    };
                    {
                        let $answer = &$answer.0;
                        $after
                    }
                    Ok($answer)
                })
            },
        )?
    };
}

/// Refuses through the trap: `return`s the refusal from the wrapper.
macro_rules! trap {
    ($state:ident, $fd:expr, $path:expr, $what:expr, $write:expr) => {
        trap!($state, $fd, $path, $what, $write, false)
    };
    ($state:ident, $fd:expr, $path:expr, $what:expr, $write:expr, $directory:expr) => {
        if let Some(code) = $state.trapped($fd, $path, $what, $write, $directory) {
            return Ok((Err(code),));
        }
    };
}

/// Replaces the functions of `wasi:filesystem/types` that write, name
/// descriptors or are recorded, and `get-directories`.
pub(crate) fn link(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    link_preopens(linker)?;
    let mut i = linker.instance(FILESYSTEM_INTERFACE)?;
    wrap!(i, "[method]descriptor.open-at",
    (fd: Fd, pf: PathFlags, path: String, of: OpenFlags, df: DescriptorFlags), open_at,
    |state, note, result| before {
        let write = df.contains(DescriptorFlags::WRITE)
            || of.intersects(OpenFlags::CREATE | OpenFlags::TRUNCATE);
        let what = if write { "write" } else { "read" };
        trap!(state, fd.rep(), &path, what, write, of.contains(OpenFlags::DIRECTORY));
        state.writes.wrote |= of.contains(OpenFlags::CREATE);
        let full = state.joined(fd.rep(), &path);
        // Whether it existed, asked only while recording a create.
        let existed = if state.effects.active() && of.contains(OpenFlags::CREATE) {
            let mut fs = state.filesystem();
            let probe = Resource::new_borrow(fd.rep());
            HostDescriptor::stat_at(&mut fs, probe, pf, path.clone()).await.is_ok()
        } else {
            true
        };
        let op = match (write, existed) {
            (_, false) => Op::Create,
            (true, true) => Op::Write,
            (false, true) => Op::Read,
        };
        (full, op, of.contains(OpenFlags::DIRECTORY))
    } after {
        let (full, op, directory) = note;
        state.did(&full, op, directory, result);
        if let Ok(opened) = result {
            state.names.name(opened.rep(), full);
        }
    });
    wrap!(i, "[method]descriptor.create-directory-at", (fd: Fd, path: String), create_directory_at,
        |state, full, result| before {
            trap!(state, fd.rep(), &path, "create", true);
            state.writes.wrote = true;
            state.joined(fd.rep(), &path)
        } after { state.did(&full, Op::Create, true, result) });
    wrap!(i, "[method]descriptor.symlink-at", (fd: Fd, old: String, new: String), symlink_at,
        |state, full, result| before {
            trap!(state, fd.rep(), &new, "create", true);
            state.writes.wrote = true;
            state.joined(fd.rep(), &new)
        } after { state.did(&full, Op::Create, false, result) });
    // A hard link from one mounted folder into another would keep the file
    // reachable after the grant of the first is gone (a workspace file
    // linked into the data directory): links are made only within one
    // descriptor, and across two answer `cross-device`, as between file
    // systems (programs then copy).
    wrap!(i, "[method]descriptor.link-at",
    (fd: Fd, pf: PathFlags, old: String, new_fd: Fd, new: String), link_at,
    |state, note, result| before {
        trap!(state, new_fd.rep(), &new, "link", true);
        trap!(state, fd.rep(), &old, "link", false);
        if fd.rep() != new_fd.rep() {
            let full = state.joined(new_fd.rep(), &new);
            state.report_refusal("link", &full, FileRefusal {
                why: "a hard link from one mounted folder into another is refused: it would keep the file reachable after one grant is gone".into(),
                allow: "copy the file instead (programs do, as between file systems)".into(),
            });
            return Ok((Err(ErrorCode::CrossDevice),));
        }
        state.writes.wrote = true;
        (state.joined(fd.rep(), &new), state.joined(fd.rep(), &old))
    } after {
        state.did(&note.0, Op::Create, false, result);
        if result.is_ok() {
            state.effects.linked(&note.0, &note.1);
        }
    });
    // A rename can move a file of any size into the data directory.
    wrap!(i, "[method]descriptor.rename-at",
    (fd: Fd, old: String, new_fd: Fd, new: String), rename_at,
    |state, note, result| before {
        trap!(state, fd.rep(), &old, "rename", true);
        trap!(state, new_fd.rep(), &new, "rename", true);
        state.writes.wrote = true;
        (state.joined(fd.rep(), &old), state.joined(new_fd.rep(), &new))
    } after {
        match result {
            Ok(_) => {
                state.did(&note.0, Op::Remove, false, result);
                state.did(&note.1, Op::Create, false, result);
            }
            // A refused rename is reported once: by its source when that
            // may not be removed, else by where it was going.
            Err(_) => {
                let source = state.files.grants.explain(&note.0, true, false, Refused::ByTheHost);
                let path = if source.is_some() { &note.0 } else { &note.1 };
                state.did(path, Op::Write, false, result);
            }
        }
    });
    wrap!(i, "[method]descriptor.unlink-file-at", (fd: Fd, path: String), unlink_file_at,
        |state, full, result| before {
            trap!(state, fd.rep(), &path, "remove", true);
            state.joined(fd.rep(), &path)
        } after { state.did(&full, Op::Remove, false, result) });
    wrap!(i, "[method]descriptor.remove-directory-at", (fd: Fd, path: String), remove_directory_at,
        |state, full, result| before {
            trap!(state, fd.rep(), &path, "remove", true);
            state.joined(fd.rep(), &path)
        } after { state.did(&full, Op::Remove, true, result) });
    wrap!(i, "[method]descriptor.stat-at", (fd: Fd, pf: PathFlags, path: String), stat_at,
    |state, full, result| before {
        trap!(state, fd.rep(), &path, "read", false);
        state.joined(fd.rep(), &path)
    } after {
        let directory = matches!(result, Ok(stat) if stat.type_ == DescriptorType::Directory);
        state.did(&full, Op::Read, directory, result);
    });
    wrap!(i, "[method]descriptor.readlink-at", (fd: Fd, path: String), readlink_at,
        |state, full, result| before {
            trap!(state, fd.rep(), &path, "read", false);
            state.joined(fd.rep(), &path)
        } after { state.did(&full, Op::Read, false, result) });
    wrap!(i, "[method]descriptor.set-times-at",
        (fd: Fd, pf: PathFlags, path: String, a: NewTimestamp, m: NewTimestamp), set_times_at,
        |state, full, result| before {
            trap!(state, fd.rep(), &path, "write", true);
            state.joined(fd.rep(), &path)
        } after { state.did(&full, Op::Write, false, result) });
    wrap!(i, "[method]descriptor.metadata-hash-at", (fd: Fd, pf: PathFlags, path: String),
        metadata_hash_at,
        |state, full, result| before {
            trap!(state, fd.rep(), &path, "read", false);
            state.joined(fd.rep(), &path)
        } after { state.did(&full, Op::Read, false, result) });
    wrap!(i, "[method]descriptor.read-directory", (fd: Fd), read_directory,
        |state, path, result| before {
            trap!(state, fd.rep(), "", "list", false, true);
            fd.rep()
        } after { state.did_fd(path, Op::List, true, result) });
    wrap!(i, "[method]descriptor.read", (fd: Fd, len: u64, offset: u64), read,
    |state, path, result| before { state.named(fd.rep()) }
    after {
        if let Ok((bytes, _)) = result {
            state.effects.bytes(&path, bytes.len() as u64, 0);
        }
    });
    wrap!(i, "[method]descriptor.write", (fd: Fd, buffer: Vec<u8>, offset: u64), write,
    |state, note, result| before {
        state.writes.wrote = true;
        (fd.rep(), state.named(fd.rep()))
    } after {
        match result {
            Ok(written) => state.effects.bytes(&note.1, 0, *written),
            Err(_) => state.did_fd(note.0, Op::Write, false, result),
        }
    });
    wrap!(i, "[method]descriptor.set-size", (fd: Fd, size: u64), set_size,
        |state, rep, result| before {
            state.writes.wrote = true;
            fd.rep()
        } after { state.did_fd(rep, Op::Write, false, result) });
    i.func_wrap(
        "[method]descriptor.read-via-stream",
        |mut store, (fd, offset): (Fd, u64)| {
            let state = store.data_mut();
            let path = state.named(fd.rep());
            let answer = {
                let mut fs = state.filesystem();
                let result = HostDescriptor::read_via_stream(&mut fs, fd, offset);
                answer(&mut fs, result)?
            };
            if let (Ok(stream), true) = (&answer.0, state.effects.active()) {
                let stream: &Resource<InputStream> = stream;
                count_input(&mut state.table, stream, &state.effects, Target::File(path))?;
            }
            Ok(answer)
        },
    )?;
    i.func_wrap(
        "[method]descriptor.write-via-stream",
        |store, (fd, offset): (Fd, u64)| {
            streamed(store, fd, |fs, fd| {
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

/// Runs a function that hands out a write stream: marks the instance
/// written, remembers the stream until the guest drops it (a stream kept
/// across calls can write in any later call), and counts what goes through
/// it while a call is recorded.
fn streamed(
    mut store: StoreContextMut<'_, HostState>,
    fd: Fd,
    call: impl FnOnce(&mut WasiFilesystemCtxView<'_>, Fd) -> FsResult<Resource<OutputStream>>,
) -> Answer<Resource<OutputStream>> {
    let state = store.data_mut();
    state.writes.wrote = true;
    let rep = fd.rep();
    let path = state.named(rep);
    let answer = {
        let mut fs = state.filesystem();
        let result = call(&mut fs, fd);
        answer(&mut fs, result)?
    };
    state.did_fd(rep, Op::Write, false, &answer.0);
    if let Ok(stream) = &answer.0 {
        state.writes.streams.push(stream.rep());
        if state.effects.active() {
            count_output(&mut state.table, stream, &state.effects, Target::File(path))?;
        }
    }
    Ok(answer)
}

/// `get-directories`, naming each preopen by its mount path, and the trap
/// after them (a guest takes the longest mount a path lies in, so the trap
/// at `/` gets only what no other mount covers).
fn link_preopens(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    let mut i = linker.instance(PREOPENS_INTERFACE)?;
    i.func_wrap(
        "get-directories",
        |mut store: StoreContextMut<'_, HostState>, (): ()| {
            let state = store.data_mut();
            let mut directories = preopens::Host::get_directories(&mut state.filesystem())?;
            for (fd, path) in &directories {
                state.names.name(fd.rep(), path.clone());
            }
            if let Some(trap) = state.names.trap_dir.clone() {
                let fd = state.table.push(Descriptor::Dir(trap))?;
                state.names.trap = Some(fd.rep());
                state.names.name(fd.rep(), TRAP_PATH.to_owned());
                directories.push((fd, TRAP_PATH.to_owned()));
            }
            Ok((directories,))
        },
    )?;
    Ok(())
}
