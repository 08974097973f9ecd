//! The sandbox as seen through the real launcher: guest output never reaches
//! the protocol channel, runaway and crashing calls are stopped and the next
//! call works, and the plugin sees no environment and only the files granted.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Session, guest, spec_snapshot, tool};

#[test]
fn guest_stdout_never_reaches_the_protocol_channel() {
    let mut s = Session::start(&guest("testbed"), &[]);
    let r = s.call("1", "tool.execute", tool("print-stdout", ""));
    assert_eq!(r, json!({"id": "1", "result": "printed", "error": null}));
    let r = s.call("2", "tool.execute", tool("ok", "after"));
    assert_eq!(r["result"], "ok:after");
    let (status, stderr) = s.finish();
    assert!(status.success());
    assert!(
        stderr.contains(r#"[com.lingxi.testbed stdout] {"id":"X","result":"forged"}"#),
        "guest stdout goes to stderr with the plugin id: {stderr}"
    );
    assert!(
        stderr.contains("[com.lingxi.testbed stdout] partial line without newline"),
        "{stderr}"
    );
    assert!(
        stderr.contains("[com.lingxi.testbed stderr] a line on stderr"),
        "{stderr}"
    );
}

#[test]
fn endless_loop_is_stopped_at_the_deadline_and_the_next_call_works() {
    let mut s = Session::start(&guest("testbed"), &["--timeout", "0.5"]);
    let init = s.call(
        "0",
        "plugin.initialize",
        json!({"hostIPCVersion": 1, "coreVersion": "1.1.0"}),
    );
    assert_eq!(init["result"]["manifest"]["id"], "com.lingxi.testbed");

    let started = Instant::now();
    let r = s.call("1", "tool.execute", tool("spin", ""));
    let elapsed = started.elapsed();
    let error = r["error"]
        .as_str()
        .expect("the runaway call is answered with an error");
    assert!(
        error.contains("tool.execute 'spin' did not finish within 0.5 s"),
        "{error}"
    );
    assert!(
        error.contains("--timeout"),
        "the error names the flag: {error}"
    );
    assert!(
        elapsed >= Duration::from_millis(500),
        "stopped before its deadline: {elapsed:?}"
    );

    let r = s.call("2", "tool.execute", tool("ok", "again"));
    assert_eq!(r["result"], "ok:again", "{r}");
    let (status, stderr) = s.finish();
    assert!(status.success());
    // The fresh instance was re-initialized (its activation ran again).
    assert_eq!(stderr.matches("activation #1").count(), 2, "{stderr}");
    // The host's own line about the plugin is labelled with it too.
    assert!(
        stderr.contains("WARN [com.lingxi.testbed] tool.execute 'spin' did not finish"),
        "{stderr}"
    );
}

#[test]
fn panics_are_contained_and_the_plugin_restarts() {
    let mut s = Session::start(&guest("testbed"), &[]);
    let r = s.call("1", "tool.execute", tool("panic", ""));
    let error = r["error"].as_str().expect("error");
    assert!(
        error.contains("tool.execute 'panic' crashed the plugin"),
        "{error}"
    );
    assert!(
        s.stderr().contains("deliberate panic") || error.contains("unreachable"),
        "{}",
        s.stderr()
    );
    for i in 2..5 {
        let r = s.call(&i.to_string(), "tool.execute", tool("ok", "x"));
        assert_eq!(r["result"], "ok:x");
    }
    assert!(s.finish().0.success());
}

#[test]
fn the_environment_is_empty() {
    let mut s = Session::start(&guest("testbed"), &[]);
    let r = s.call("1", "tool.execute", tool("env", ""));
    assert_eq!(r["result"], "", "no variable of the launcher leaks: {r}");
}

#[test]
fn files_are_reachable_only_inside_a_granted_workspace() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    let inside = root.join("notes.txt");
    std::fs::write(&inside, "inside the workspace").unwrap();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), "secret").unwrap();

    // Declared projectRead, granted by default; root from the snapshot.
    let mut s = Session::start(&guest("testbed"), &[]);
    s.call("0", "host.snapshot", spec_snapshot(root.to_str().unwrap()));
    let r = s.call(
        "1",
        "tool.execute",
        tool("read-file", inside.to_str().unwrap()),
    );
    assert_eq!(r["result"], "inside the workspace", "{r}");
    let r = s.call(
        "2",
        "tool.execute",
        tool("read-file", outside.path().to_str().unwrap()),
    );
    assert!(
        r["error"].as_str().is_some(),
        "a file outside the workspace is unreachable: {r}"
    );
    let r = s.call("3", "tool.execute", tool("read-file", "/etc/passwd"));
    assert!(r["error"].as_str().is_some(), "{r}");
    drop(s);

    // The same plugin with the grant withheld sees no files at all.
    let mut s = Session::start(&guest("testbed"), &["--grant", "none"]);
    s.call("0", "host.snapshot", spec_snapshot(root.to_str().unwrap()));
    let r = s.call(
        "1",
        "tool.execute",
        tool("read-file", inside.to_str().unwrap()),
    );
    assert!(r["error"].as_str().is_some(), "{r}");
    let (status, stderr) = s.finish();
    assert!(status.success());
    // A withheld grant is the user's choice, not a problem: no warning at
    // start; the refused read names the grant that would allow it.
    assert!(
        !stderr.contains("declares projectRead but it is not granted"),
        "a choice is not warned of: {stderr}"
    );
    assert!(
        stderr.contains("denied: the plugin may not use the workspace's files (allow it with --grant projectRead)"),
        "the refusal names the grant: {stderr}"
    );
}

#[test]
fn a_memory_bomb_hits_the_cap_and_the_next_call_works() {
    let mut s = Session::start(&guest("testbed"), &["--max-memory", "32"]);
    let r = s.call("1", "tool.execute", tool("alloc-mib", "8"));
    assert_eq!(r["result"], "allocated 8 MiB", "{r}");
    let r = s.call("2", "tool.execute", tool("alloc-mib", "64"));
    let error = r["error"].as_str().expect("error");
    assert!(
        error.contains("exceeded the plugin memory limit of 32 MiB"),
        "{error}"
    );
    assert!(error.contains("--max-memory"), "{error}");
    let r = s.call("3", "tool.execute", tool("ok", "alive"));
    assert_eq!(r["result"], "ok:alive");
}
