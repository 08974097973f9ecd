//! The trap: an empty folder every instance sees mounted at `/` (unless a
//! real mount is there), so a path outside every mount reaches the host,
//! which refuses it and says which setting would allow it (`files.rs`,
//! `refusals.rs`), instead of the guest's libc failing it unseen with "No
//! such file or directory". Every path call through it is refused before
//! any file system work, so the plugin gets the same error for a host path
//! that exists and one that does not.
//!
//! One folder per process, opened once and handed to each instance as a
//! descriptor (no system call per instance). Its folder is removed as soon
//! as it is open: the handle stays an empty folder in which nothing can be
//! created, and nothing is left behind when the process ends, however it
//! ends. Where the system cannot remove an open folder, the empty folder
//! is left in the temporary folder (and said at debug level).

use std::sync::OnceLock;

use wasmtime_wasi::filesystem::Dir;
use wasmtime_wasi::{FsPerms, OpenMode};

/// The process's trap, or why it could not be made.
static TRAP: OnceLock<Result<Dir, String>> = OnceLock::new();

/// The trap's folder, made on first use. An error (no temporary folder)
/// is logged once by the caller; instances then run without the trap, and
/// paths outside every mount fail inside the guest as before, unexplained.
pub(crate) fn trap() -> Result<Dir, &'static str> {
    match TRAP.get_or_init(|| make().map_err(|e| e.to_string())) {
        Ok(dir) => Ok(dir.clone()),
        Err(e) => Err(e.as_str()),
    }
}

fn make() -> std::io::Result<Dir> {
    let folder = tempfile::Builder::new()
        .prefix("lingxi-wasm-trap-")
        .tempdir()?;
    let opened = cap_std::fs::Dir::open_ambient_dir(folder.path(), cap_std::ambient_authority())?
        .into_std_file();
    if let Err(kept) = folder.close() {
        tracing::debug!("the trap's empty folder stays until exit: {kept}");
    }
    Ok(Dir::new(opened, FsPerms::ReadOnly, OpenMode::READ, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trap_is_one_empty_folder_left_nowhere() {
        let a = trap().unwrap();
        let b = trap().unwrap();
        assert!(std::sync::Arc::ptr_eq(&a.dir, &b.dir), "one per process");
        assert!(a.dir.metadata().unwrap().is_dir());
    }
}
