//! Resources, crashes and hostile input.

use serde_json::{Value, json};

use super::{Tree, allowed, attempt, denied, start};
use crate::support::{spec_snapshot, tool};

#[test]
fn cpu_endless_loop() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &["--timeout", "0.5"]), "spin", "");
    assert!(denied(&r).contains("did not finish within 0.5 s"), "{r}");
}

#[test]
fn mem_memory_bomb() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &["--max-memory", "32"]), "alloc-mib", "64");
    assert!(denied(&r).contains("memory limit of 32 MiB"), "{r}");
}

#[test]
fn stack_deep_recursion() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &[]), "recurse", "");
    assert!(denied(&r).contains("crashed the plugin"), "{r}");
}

#[test]
fn out_100_mb_result() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &[]), "big-result", "100");
    let error = denied(&r);
    assert!(
        error.contains("result limit") || error.contains("memory limit"),
        "{r}"
    );
}

#[test]
fn out_log_flood() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &[]), "log-flood", "20000");
    assert!(denied(&r).contains("MiB of output"), "{r}");
}

#[test]
fn out_stdout_flood_does_not_reach_the_channel() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    for _ in 0..3 {
        assert_eq!(allowed(&attempt(&mut s, "print-stdout", "")), "printed");
    }
}

// ---- crashes -------------------------------------------------------------------

#[test]
fn crash_panic() {
    let t = Tree::new();
    assert!(denied(&attempt(&mut start(&t, &[]), "panic", "")).contains("crashed the plugin"));
}

#[test]
fn crash_abort() {
    let t = Tree::new();
    assert!(denied(&attempt(&mut start(&t, &[]), "abort", "")).contains("crashed the plugin"));
}

#[test]
fn crash_unreachable() {
    let t = Tree::new();
    assert!(
        denied(&attempt(&mut start(&t, &[]), "unreachable", "")).contains("crashed the plugin")
    );
}

#[test]
fn crash_process_exit() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &[]), "exit", "");
    // WASI 0.2 `exit` carries only ok or error: status 3 arrives as 1.
    assert!(
        denied(&r).contains("made the plugin exit with status 1"),
        "{r}"
    );
}

#[test]
fn crash_storm_disables_the_plugin_and_the_host_lives() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    for i in 0..5 {
        let r = s.call(&format!("p{i}"), "tool.execute", tool("panic", ""));
        assert!(r["error"].is_string(), "{r}");
    }
    let r = s.call("after", "tool.execute", tool("ok", "x"));
    let error = denied(&r);
    assert!(
        error.contains("is disabled: it crashed 5 times within 60 s"),
        "{error}"
    );
    let r = s.call(
        "cmd",
        "command.execute",
        json!({"commandName": "info", "arguments": []}),
    );
    assert!(denied(&r).contains("disabled"), "{r}");
    let r = s.call("snap2", "host.snapshot", spec_snapshot("/repo"));
    assert_eq!(
        r["error"],
        Value::Null,
        "the launcher itself still answers: {r}"
    );
    assert!(s.finish().0.success());
}

// ---- hostile input ---------------------------------------------------------------

#[test]
fn input_invalid_utf8_in_arguments() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    let mut line =
        br#"{"id":"bad","method":"tool.execute","params":{"toolName":"len","arguments":""#.to_vec();
    line.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    line.extend_from_slice(br#"","sessionID":"s","toolCallID":"c"}}"#);
    s.send_bytes(&line);
    let r = s.recv();
    assert_eq!(r["id"], "bad");
    assert!(denied(&r).contains("not valid UTF-8"), "{r}");
    assert_eq!(allowed(&attempt(&mut s, "ok", "")), "ok:");
}

#[test]
fn input_huge_arguments() {
    let t = Tree::new();
    let big = "a".repeat(20 * 1024 * 1024);
    assert_eq!(
        allowed(&attempt(&mut start(&t, &[]), "len", &big)),
        (20 * 1024 * 1024).to_string()
    );
}

#[test]
fn input_line_longer_than_the_cap() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    let huge = format!(
        r#"{{"id":"huge","method":"tool.execute","params":"{}"}}"#,
        "A".repeat(65 * 1024 * 1024)
    );
    s.send_raw(&huge);
    let r = s.recv();
    assert_eq!(r["id"], "huge");
    assert!(denied(&r).contains("longer than"), "{r}");
    assert_eq!(allowed(&attempt(&mut s, "ok", "")), "ok:");
}

#[test]
fn eof_while_a_tool_never_returns() {
    let t = Tree::new();
    let mut s = start(&t, &["--timeout", "0.5"]);
    s.send_raw(&crate::support::core_line(
        "spin",
        "tool.execute",
        &tool("spin", ""),
    ));
    s.close_stdin();
    let r = s.recv();
    assert!(
        denied(&r).contains("did not finish within 0.5 s"),
        "the call in flight is answered: {r}"
    );
    assert!(s.finish().0.success());
}
