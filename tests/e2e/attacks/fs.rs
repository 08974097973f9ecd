//! Files: escaping the workspace, writing without the grant, extra roots.
//! The attacks of one call each are data (`tests/attacks/fs.toml`); here
//! are the others.

use super::{Tree, allowed, attempt, denied, read_back, start};

/// A read and a write in one session: the extra directory is readable, not
/// writable, and its file is left as it was.
#[test]
fn fs_allow_read_mounts_an_extra_directory_read_only() {
    let t = Tree::new();
    let extra = t.top("extra");
    let mut s = start(&t, &["--grant", "projectRead", "--allow-read", &extra]);
    assert_eq!(
        allowed(&attempt(&mut s, "read-file", &t.top("extra/data.txt"))),
        "extra"
    );
    denied(
        &attempt(&mut s, "write-file", &t.top("extra/data.txt")),
        "Operation not permitted",
    );
    assert_eq!(
        read_back(&t.top.join("extra/data.txt")).as_deref(),
        Some("extra")
    );
}
