//! Files: escaping the workspace, writing without the grant, extra roots.

use std::path::Path;

use super::{Tree, allowed, attempt, denied, read_back, start};

#[test]
fn fs_read_inside_the_workspace_works() {
    let t = Tree::new();
    assert_eq!(
        allowed(&attempt(
            &mut start(&t, &[]),
            "read-file",
            &t.ws("notes.txt")
        )),
        "inside"
    );
}

#[test]
fn fs_dotdot_traversal_out_of_the_workspace() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "read-file", &t.ws("../secret.txt")),
        "Operation not permitted",
    );
}

#[test]
fn fs_relative_dotdot_path() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "read-file", "../../../../etc/passwd"),
        "No such file or directory",
    );
}

#[test]
fn fs_absolute_path_outside_the_workspace() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "read-file", &t.top("secret.txt")),
        "No such file or directory",
    );
}

#[test]
fn fs_read_etc_passwd() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "read-file", "/etc/passwd"),
        "No such file or directory",
    );
}

#[test]
fn fs_symlink_in_the_workspace_pointing_outside() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "read-file", &t.ws("link")),
        "Operation not permitted",
    );
}

#[test]
fn fs_symlink_to_the_parent_directory() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "read-file", &t.ws("up/secret.txt")),
        "Operation not permitted",
    );
}

#[test]
fn fs_hard_link_a_workspace_file_to_the_outside() {
    let t = Tree::new();
    let args = format!("{}\n{}", t.ws("notes.txt"), t.top("stolen.txt"));
    denied(
        &attempt(&mut start(&t, &[]), "hard-link", &args),
        "No such file or directory",
    );
    assert!(read_back(&t.top.join("stolen.txt")).is_none());
}

#[test]
fn fs_hard_link_an_outside_file_into_the_workspace() {
    let t = Tree::new();
    let args = format!("{}\n{}", t.top("secret.txt"), t.ws("copy.txt"));
    denied(
        &attempt(&mut start(&t, &[]), "hard-link", &args),
        "No such file or directory",
    );
    assert!(read_back(&t.ws.join("copy.txt")).is_none());
}

#[test]
fn fs_rename_a_file_out_of_the_workspace() {
    let t = Tree::new();
    let args = format!("{}\n{}", t.ws("notes.txt"), t.top("moved.txt"));
    denied(
        &attempt(&mut start(&t, &[]), "rename", &args),
        "No such file or directory",
    );
    assert_eq!(
        read_back(&t.ws.join("notes.txt")).as_deref(),
        Some("inside")
    );
}

#[test]
fn fs_proc_self_environ() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "read-file", "/proc/self/environ"),
        "No such file or directory",
    );
}

#[test]
fn fs_proc_self_maps() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "read-file", "/proc/self/maps"),
        "No such file or directory",
    );
}

#[test]
fn fs_list_the_host_root() {
    let t = Tree::new();
    denied(
        &attempt(&mut start(&t, &[]), "list-dir", "/"),
        "No such file or directory",
    );
}

#[test]
fn fs_write_under_a_read_only_grant() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead"]);
    denied(
        &attempt(&mut s, "write-file", &t.ws("new.txt")),
        "Operation not permitted",
    );
    assert!(read_back(&t.ws.join("new.txt")).is_none());
}

#[test]
fn fs_overwrite_under_a_read_only_grant() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead"]);
    denied(
        &attempt(&mut s, "write-file", &t.ws("notes.txt")),
        "Operation not permitted",
    );
    assert_eq!(
        read_back(&t.ws.join("notes.txt")).as_deref(),
        Some("inside")
    );
}

#[test]
fn fs_write_inside_with_project_write_works() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead,projectWrite"]);
    assert_eq!(
        allowed(&attempt(&mut s, "write-file", &t.ws("new.txt"))),
        "written"
    );
    assert_eq!(
        read_back(&t.ws.join("new.txt")).as_deref(),
        Some("written by plugin")
    );
}

#[test]
fn fs_create_a_file_outside_the_workspace() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead,projectWrite"]);
    denied(
        &attempt(&mut s, "write-file", &t.top("evil.txt")),
        "No such file or directory",
    );
    assert!(read_back(&t.top.join("evil.txt")).is_none());
}

#[test]
fn fs_write_to_tmp() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead,projectWrite"]);
    denied(
        &attempt(&mut s, "write-file", "/tmp/lingxi-wasm-attack.txt"),
        "No such file or directory",
    );
    assert!(read_back(Path::new("/tmp/lingxi-wasm-attack.txt")).is_none());
}

#[test]
fn fs_no_grant_no_files() {
    let t = Tree::new();
    denied(
        &attempt(
            &mut start(&t, &["--grant", "none"]),
            "read-file",
            &t.ws("notes.txt"),
        ),
        "No such file or directory",
    );
}

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

#[test]
fn fs_allow_write_needs_project_write() {
    let t = Tree::new();
    let extra = t.top("extra");
    let mut s = start(&t, &["--grant", "projectRead", "--allow-write", &extra]);
    denied(
        &attempt(&mut s, "write-file", &t.top("extra/new.txt")),
        "No such file or directory",
    );
    let (_, stderr) = s.finish();
    assert!(
        stderr.contains("--allow-write ignored: the plugin does not have projectWrite"),
        "{stderr}"
    );
}
