//! Plugin storage: private, persistent, bounded, and unable to escape. The
//! attacks of one call each are data (`tests/attacks/storage.toml`); here are
//! the others.

use super::{Tree, allowed, attempt, denied, read_back, start};

fn data_args(root: &str) -> [&str; 2] {
    ["--data-root", root]
}

#[test]
fn storage_persists_across_restarts() {
    let t = Tree::new();
    let root = t.top("data");
    let mut s = start(&t, &data_args(&root));
    assert_eq!(allowed(&attempt(&mut s, "kv-set", "counter=41")), "stored");
    assert!(s.finish().0.success());
    let mut s = start(&t, &data_args(&root));
    assert_eq!(allowed(&attempt(&mut s, "kv-get", "counter")), "41");
    assert_eq!(allowed(&attempt(&mut s, "kv-keys", "")), "counter");
    let file = t.top.join("data/com.lingxi.testbed/kv/counter");
    assert_eq!(
        read_back(&file).as_deref(),
        Some("41"),
        "kept in <root>/<plugin id>/"
    );
}

#[test]
fn storage_keys_cannot_escape_the_data_directory() {
    let t = Tree::new();
    let root = t.top("data");
    let mut s = start(&t, &data_args(&root));
    assert_eq!(
        allowed(&attempt(&mut s, "kv-set", "../../../escape=x")),
        "stored"
    );
    assert_eq!(allowed(&attempt(&mut s, "kv-get", "../../../escape")), "x");
    assert!(read_back(&t.top.join("escape")).is_none());
    let kv = t.top.join("data/com.lingxi.testbed/kv");
    let names: Vec<String> = std::fs::read_dir(kv)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["%2E%2E%2F%2E%2E%2F%2E%2E%2Fescape"]);
}

#[test]
fn storage_raw_paths_cannot_leave_the_data_directory() {
    let t = Tree::new();
    let root = t.top("data");
    let mut s = start(&t, &data_args(&root));
    denied(
        &attempt(&mut s, "write-file", "/lingxi/data/../../escape.txt"),
        "Operation not permitted",
    );
    denied(
        &attempt(
            &mut s,
            "read-file",
            "/lingxi/data/../com.other.plugin/kv/secret",
        ),
        "Operation not permitted",
    );
}

#[test]
fn storage_quota_makes_the_directory_read_only() {
    let t = Tree::new();
    let root = t.top("data");
    let mut s = start(&t, &["--data-root", &root, "--storage-quota", "1"]);
    let r = attempt(&mut s, "fill-data", "2");
    let error = denied(&r, "over its quota");
    assert!(error.contains("over its quota"), "{error}");
    assert!(error.contains("--storage-quota"), "{error}");
    denied(
        &attempt(&mut s, "kv-set", "more=data"),
        "Operation not permitted",
    );
    assert_eq!(allowed(&attempt(&mut s, "kv-get", "more")), "<none>");
}

#[test]
fn storage_quota_counts_writes_through_a_file_kept_open() {
    let t = Tree::new();
    let root = t.top("data");
    let mut s = start(&t, &["--data-root", &root, "--storage-quota", "1"]);
    allowed(&attempt(&mut s, "hold-open", ""));
    // This call opens nothing: it writes through the stream of the last one.
    let r = attempt(&mut s, "write-held", "2");
    let error = denied(&r, "over its quota");
    assert!(error.contains("over its quota"), "{error}");
}

#[test]
fn storage_quota_is_charged_to_calls_that_write() {
    let t = Tree::new();
    let root = t.top("data");
    let mut s = start(&t, &["--data-root", &root, "--storage-quota", "1"]);
    allowed(&attempt(&mut s, "kv-set", "k=v"));
    // Someone else fills the directory: a call that writes nothing is not
    // failed for it, the next call that writes is.
    let dir = std::path::Path::new(&root).join("com.lingxi.testbed");
    std::fs::write(dir.join("outside.bin"), vec![0u8; 2 << 20]).expect("fill");
    assert_eq!(allowed(&attempt(&mut s, "kv-get", "k")), "v");
    let r = attempt(&mut s, "kv-set", "k=w");
    let error = denied(&r, "over its quota");
    assert!(error.contains("over its quota"), "{error}");
}

#[test]
fn storage_crash_that_also_overfills_counts_toward_the_breaker() {
    let t = Tree::new();
    let root = t.top("data");
    let mut s = start(&t, &["--data-root", &root, "--storage-quota", "1"]);
    // Each call writes past the quota (the first one) and then crashes.
    for _ in 0..5 {
        denied(
            &attempt_raw(&mut s, "fill-then-panic", "2"),
            "crashed the plugin",
        );
    }
    let r = s.call("after", "tool.execute", crate::support::tool("ok", "x"));
    denied(&r, "is disabled: it crashed 5 times");
}

/// One call, without the liveness check of `attempt` (which would count).
fn attempt_raw(s: &mut crate::support::Session, tool_name: &str, input: &str) -> serde_json::Value {
    s.call(
        "attack",
        "tool.execute",
        crate::support::tool(tool_name, input),
    )
}

#[test]
fn storage_rename_into_the_data_directory_counts() {
    let t = Tree::new();
    std::fs::write(t.ws.join("big.bin"), vec![0u8; 2 << 20]).unwrap();
    let root = t.top("data");
    let args = [
        "--data-root",
        &root,
        "--storage-quota",
        "1",
        "--grant",
        "projectWrite",
    ];
    let mut s = start(&t, &args);
    let moved = format!("{}\n/lingxi/data/big.bin", t.ws("big.bin"));
    denied(&attempt(&mut s, "rename", &moved), "over its quota");
}
