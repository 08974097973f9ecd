//! [`super::access`] on Unix: the owner's uid and the mode bits.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Access, Owner};

pub(super) fn access(path: &Path) -> std::io::Result<Access> {
    let meta = std::fs::metadata(path)?;
    let me = rustix::process::geteuid().as_raw();
    let owner = match meta.uid() {
        uid if uid == me => Owner::Me,
        0 => Owner::System,
        uid => Owner::Other(format!("user {uid}")),
    };
    let open = meta.mode() & 0o022 != 0;
    let sticky = meta.mode() & 0o1000 != 0;
    Ok(Access {
        owner,
        others_may_write: open,
        others_may_rename_entries: open && !sticky,
        others_may_read: meta.mode() & 0o044 != 0,
    })
}
