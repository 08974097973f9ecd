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

/// Refusing a path outside the grants tells the plugin nothing about the
/// host: an existing and a missing file, or folder, get the same error, for
/// every kind of access.
#[test]
fn fs_no_existence_oracle_outside_the_grants() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead,projectWrite"]);
    let mut guest_error = |tool: &str, input: &str| {
        let r = attempt(&mut s, tool, input);
        let error = r["error"].as_str().unwrap_or_default().to_owned();
        let guest = error
            .split(" [refused by the sandbox")
            .next()
            .unwrap_or_default();
        assert_ne!(
            guest, error,
            "{tool} {input}: not refused by the sandbox: {error}"
        );
        guest.replace(input, "INPUT")
    };
    for tool in ["read-file", "write-file", "list-dir"] {
        let existing = guest_error(tool, &t.top("secret.txt"));
        let missing = guest_error(tool, &t.top("missing.txt"));
        assert_eq!(existing, missing, "{tool}");
    }
    let existing = guest_error("list-dir", &t.top("extra"));
    let missing = guest_error("list-dir", &t.top("no-such-folder"));
    assert_eq!(existing, missing, "list-dir of folders");
    let (_, stderr) = s.finish();
    assert!(
        stderr.contains(&format!("read {} denied", t.top("missing.txt"))),
        "{stderr}"
    );
}

/// A flood of refusals logs a bounded number of lines, and says the rest
/// are not logged.
#[test]
fn fs_refusal_floods_are_bounded_per_call_and_per_instance() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    for _ in 0..6 {
        denied(
            &attempt(&mut s, "read-file", "/etc/passwd"),
            "allow it with --allow-read /etc",
        );
    }
    let (_, stderr) = s.finish();
    let lines = stderr.matches("read /etc/passwd denied").count();
    assert_eq!(lines, 6, "one line a refusal below the bounds:\n{stderr}");
    let mut s = start(&t, &["--timeout", "30"]);
    denied(
        &attempt(&mut s, "refuse-many", "200"),
        "allow it with --allow-read /etc",
    );
    denied(
        &attempt(&mut s, "refuse-many", "200"),
        "allow it with --allow-read /etc",
    );
    for _ in 0..4 {
        denied(
            &attempt(&mut s, "refuse-many", "200"),
            "allow it with --allow-read /etc",
        );
    }
    let (_, stderr) = s.finish();
    let lines = stderr.matches("denied: outside the folders").count();
    assert_eq!(lines, 32, "32 lines an instance, 8 a call:\n{stderr}");
    assert!(
        stderr.contains("more sandbox denials in this call follow"),
        "{stderr}"
    );
    assert!(
        stderr.contains("more sandbox denials follow; they are not logged"),
        "{stderr}"
    );
}

/// A refusal's line and note stay bounded whatever path the plugin names,
/// and the note survives the result limit.
#[test]
fn fs_refusal_lines_are_bounded_for_huge_paths() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    let huge = format!("/{}/x", "a".repeat(200_000));
    let r = attempt(&mut s, "read-file", &huge);
    let error = r["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("[refused by the sandbox: read /aaa"),
        "{}",
        &error[error.len().saturating_sub(300)..]
    );
    let (_, stderr) = s.finish();
    let line = stderr
        .lines()
        .find(|l| l.contains(" denied: "))
        .unwrap_or_default();
    assert!(
        !line.is_empty() && line.len() < 4096,
        "{} bytes",
        line.len()
    );
}

/// Refusals a mount makes are named too: a rename out of a read-only
/// folder, a hard link from one mount into another.
#[test]
fn fs_refusals_between_mounts_are_named() {
    let t = Tree::new();
    let extra = t.top("extra");
    let args = [
        "--grant",
        "projectRead,projectWrite",
        "--allow-read",
        &extra,
    ];
    let mut s = start(&t, &args);
    let moved = format!("{}\n{}", t.top("extra/data.txt"), t.ws("moved.txt"));
    denied(
        &attempt(&mut s, "rename", &moved),
        "allow it with --allow-write",
    );
    let linked = format!("{}\n{}", t.top("extra/data.txt"), t.ws("linked.txt"));
    denied(
        &attempt(&mut s, "hard-link", &linked),
        "copy the file instead",
    );
    let (_, stderr) = s.finish();
    let rename = format!(
        "write {} denied: {} is mounted read-only",
        t.top("extra/data.txt"),
        extra
    );
    assert!(stderr.contains(&rename), "{stderr}");
    let link = format!(
        "link {} denied: a hard link from one mounted folder into another is refused",
        t.ws("linked.txt")
    );
    assert!(stderr.contains(&link), "{stderr}");
    assert_eq!(
        read_back(&t.top.join("extra/data.txt")).as_deref(),
        Some("extra")
    );
}
