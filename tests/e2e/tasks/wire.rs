//! Tasks on the LingXi wire, through the real launcher: a tool answers a
//! handle at once, later calls read it; every budget holds against a
//! hostile task while the plugin keeps answering.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{call, settle, start, testbed};
use crate::support::{Lang, Session, guest, polyglot, tool};

/// `examples/indexer` (Rust), `indexer-py` and `indexer-js`: the same
/// wire, the same answers.
#[test]
fn a_task_outlives_three_request_deadlines_and_succeeds() {
    indexer_outlives_three_deadlines(&guest("indexer"));
}

#[test]
fn a_python_task_outlives_three_request_deadlines_and_succeeds() {
    indexer_outlives_three_deadlines(&polyglot(Lang::Python, "indexer"));
}

#[test]
fn a_javascript_task_outlives_three_request_deadlines_and_succeeds() {
    indexer_outlives_three_deadlines(&polyglot(Lang::JavaScript, "indexer"));
}

/// An indexer over a workspace of known size, with `--timeout 1`: a task
/// that waits 3.5 s first outlives three request deadlines, every poll
/// meanwhile is answered at once, and it counts the right lines; a second
/// one is cancelled by `index.cancel`, a third by EOF.
fn indexer_outlives_three_deadlines(component: &std::path::Path) {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "1\n2\n3\n").unwrap();
    std::fs::create_dir(workspace.path().join("sub")).unwrap();
    std::fs::write(workspace.path().join("sub/b.rs"), "x\ny").unwrap();
    let root = dunce::canonicalize(workspace.path()).unwrap();
    let mut s = Session::start(component, &["--timeout", "1", "--no-storage"]);
    let snapshot = crate::support::spec_snapshot(root.to_str().unwrap());
    assert_eq!(
        s.call("snap", "host.snapshot", snapshot)["error"],
        Value::Null
    );

    let started = Instant::now();
    let r = s.call(
        "1",
        "tool.execute",
        tool("index.start", r#"{"delay_ms": 3500}"#),
    );
    let handle = r["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned();
    assert!(handle.starts_with("task:t-"), "{handle}");
    let status = json!({"task": handle}).to_string();
    let mut polls = 0;
    let last = loop {
        let asked = Instant::now();
        let r = s.call("p", "tool.execute", tool("index.status", &status));
        assert!(
            asked.elapsed() < Duration::from_millis(900),
            "a poll waits for nothing"
        );
        let text = r["result"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_owned();
        if text != "running" {
            break text;
        }
        polls += 1;
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the task never ended"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        started.elapsed() > Duration::from_secs(3),
        "three 1 s deadlines passed"
    );
    assert!(polls >= 10, "polled while it ran: {polls}");
    assert_eq!(last, "done: 5 lines");

    let r = s.call(
        "2",
        "tool.execute",
        tool("index.start", r#"{"delay_ms": 60000}"#),
    );
    let second = json!({"task": r["result"]}).to_string();
    let r = s.call("3", "tool.execute", tool("index.cancel", &second));
    assert_eq!(r["result"], "cancelled", "{r}");
    let r = s.call("4", "tool.execute", tool("index.status", &second));
    assert_eq!(r["result"], "cancelled", "{r}");
    let r = s.call(
        "5",
        "tool.execute",
        tool("index.start", r#"{"delay_ms": 60000}"#),
    );
    assert!(
        r["result"].as_str().is_some_and(|h| h.starts_with("task:")),
        "{r}"
    );
    let closed = Instant::now();
    let (status, log) = s.finish();
    assert!(status.success());
    assert!(
        closed.elapsed() < Duration::from_secs(3),
        "EOF waited for a task"
    );
    assert!(
        log.contains("background task 'count-lines' started"),
        "{log}"
    );
    assert!(
        log.contains("background task 'count-lines' succeeded after 3."),
        "{log}"
    );
    let cancelled = log
        .matches("background task 'count-lines' was cancelled")
        .count();
    assert_eq!(cancelled, 2, "{log}");
}

/// A hostile task, the flags it runs under, and what its failure says.
struct Hostile {
    task: &'static str,
    flags: &'static [&'static str],
    says: &'static [&'static str],
}

const HOSTILE: [Hostile; 7] = [
    Hostile {
        task: "block",
        flags: &["--task-timeout", "2"],
        says: &[
            "within the task deadline of 2.0 s",
            "--task-timeout SECONDS",
        ],
    },
    Hostile {
        task: "spin",
        flags: &["--task-timeout", "2"],
        says: &[
            "within the task deadline of 2.0 s",
            "--task-timeout SECONDS",
        ],
    },
    Hostile {
        task: "trap",
        flags: &[],
        says: &["crashed", "the plugin keeps answering"],
    },
    Hostile {
        task: "flood",
        flags: &[],
        says: &["wrote more than 16 MiB of output"],
    },
    Hostile {
        task: "progress-flood",
        flags: &[],
        says: &["wrote more than 16 MiB of output"],
    },
    Hostile {
        task: "alloc 64",
        flags: &["--max-memory", "32"],
        says: &[
            "exceeded the plugin memory limit of 32 MiB",
            "--max-memory MIB",
        ],
    },
    Hostile {
        task: "big 20",
        flags: &[],
        says: &["returned 20971520 bytes, more than the 16 MiB result limit"],
    },
];

/// Each hostile task is stopped by its budget (the deadline stops one
/// blocked in WASI as surely as one spinning) and fails alone: a sibling
/// task started beside it succeeds, and the plugin answers at once.
#[test]
fn every_budget_stops_a_hostile_task_and_nothing_else() {
    for case in &HOSTILE {
        let mut s = testbed(case.flags);
        let sibling = start(&mut s, "sleep 1500");
        let hostile = start(&mut s, case.task);
        let asked = Instant::now();
        assert_eq!(
            call(&mut s, "ok", "alive"),
            Ok("ok:alive".into()),
            "{}",
            case.task
        );
        assert!(asked.elapsed() < Duration::from_secs(1), "{}", case.task);
        let ended = settle(&mut s, &hostile, Duration::from_secs(30));
        assert!(ended.starts_with("failed: "), "{}: {ended}", case.task);
        for words in case.says {
            assert!(ended.contains(words), "{}: {ended}", case.task);
        }
        let sibling = settle(&mut s, &sibling, Duration::from_secs(30));
        assert_eq!(sibling, "done: slept 1500 ms", "{}", case.task);
        assert_eq!(call(&mut s, "ok", "after"), Ok("ok:after".into()));
        let (status, _) = s.finish();
        assert!(status.success(), "{}", case.task);
    }
}

/// What a task prints goes to the log, never to stdout: the next response
/// is the next line.
#[test]
fn a_task_never_writes_to_stdout() {
    let mut s = testbed(&[]);
    let id = start(&mut s, "print hello");
    assert_eq!(
        settle(&mut s, &id, Duration::from_secs(30)),
        "done: printed"
    );
    let r = s.call("after", "tool.execute", tool("ok", "x"));
    assert_eq!(r["id"], "after", "{r}");
    assert_eq!(
        s.recv_line(Duration::from_millis(300)),
        None,
        "no stray line"
    );
    let (_, log) = s.finish();
    assert!(
        log.contains(r#"{"id":"forged","result":"from a task"}"#),
        "{log}"
    );
    assert!(log.contains("task stderr: hello"), "{log}");
}

#[test]
fn a_call_cancels_a_task() {
    let mut s = testbed(&[]);
    let id = start(&mut s, "sleep 60000");
    assert_eq!(call(&mut s, "task-cancel", &id), Ok("cancelled".into()));
    assert_eq!(call(&mut s, "task-status", &id), Ok("cancelled".into()));
    assert_eq!(call(&mut s, "task-cancel", &id), Ok("not running".into()));
    assert_eq!(
        call(&mut s, "task-status", "t-0"),
        Ok("unknown task".into())
    );
    let (_, log) = s.finish();
    assert!(
        log.contains("background task 'sleep' was cancelled"),
        "{log}"
    );
}

/// stdin's EOF cancels every running task (one sleeping, one blocked in
/// WASI, one spinning) and the launcher exits at once.
#[test]
fn eof_cancels_every_running_task() {
    let mut s = testbed(&[]);
    for task in ["sleep 100000", "block", "spin"] {
        start(&mut s, task);
    }
    std::thread::sleep(Duration::from_millis(300));
    let closed = Instant::now();
    let (status, log) = s.finish();
    assert!(status.success(), "{log}");
    assert!(
        closed.elapsed() < Duration::from_secs(3),
        "{:?}",
        closed.elapsed()
    );
    assert_eq!(log.matches("was cancelled").count(), 3, "{log}");
    assert!(log.contains("deactivated"), "{log}");
}

/// The N+1th start is refused naming the limit; ending one frees a place.
#[test]
fn the_task_cap_refuses_one_more_start_naming_the_flag() {
    let mut s = testbed(&["--max-tasks", "2"]);
    let first = start(&mut s, "sleep 60000");
    start(&mut s, "sleep 60000");
    let refused = call(&mut s, "task-start", "echo x").unwrap_err();
    assert!(
        refused.contains("already runs 2 background tasks"),
        "{refused}"
    );
    assert!(refused.contains("--max-tasks N"), "{refused}");
    call(&mut s, "task-cancel", &first).unwrap();
    let third = start(&mut s, "echo x");
    assert_eq!(
        settle(&mut s, &third, Duration::from_secs(30)),
        "done: echo:x"
    );
}

/// A task's crashes count toward the plugin's crash breaker: five disable
/// the plugin, its calls and its tasks (a running one is cancelled).
#[test]
fn task_crashes_count_toward_the_breaker() {
    let mut s = testbed(&["--max-tasks", "8"]);
    start(&mut s, "sleep 60000");
    for _ in 0..4 {
        let id = start(&mut s, "trap");
        let ended = settle(&mut s, &id, Duration::from_secs(30));
        assert!(ended.contains("crashed"), "{ended}");
    }
    start(&mut s, "trap");
    let end = Instant::now() + Duration::from_secs(30);
    while call(&mut s, "ok", "x").is_ok() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    let refused = call(&mut s, "ok", "x").unwrap_err();
    assert!(
        refused.contains("is disabled: it crashed 5 times"),
        "{refused}"
    );
    let (_, log) = s.finish();
    let cancelled =
        "cancelling 1 background task(s): the plugin was disabled after repeated crashes";
    assert!(log.contains(cancelled), "{log}");
    assert!(
        log.contains("background task 'sleep' was cancelled"),
        "{log}"
    );
}

/// A task mounts the workspace it started with: when the host moves to
/// another root, the plugin's running tasks are cancelled.
#[test]
fn a_new_workspace_root_cancels_the_running_tasks() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let snapshot = |dir: &tempfile::TempDir, at: u64| {
        let root = dunce::canonicalize(dir.path()).unwrap();
        let mut snapshot = crate::support::spec_snapshot(root.to_str().unwrap());
        snapshot["observedAt"] = json!(at);
        snapshot
    };
    let mut s = Session::start(&guest("indexer"), &["--no-storage"]);
    assert_eq!(
        s.call("s1", "host.snapshot", snapshot(&one, 900_000_000))["error"],
        Value::Null
    );
    let r = s.call(
        "1",
        "tool.execute",
        tool("index.start", r#"{"delay_ms": 60000}"#),
    );
    let status = json!({"task": r["result"]}).to_string();
    assert_eq!(
        s.call("s2", "host.snapshot", snapshot(&two, 900_000_001))["error"],
        Value::Null
    );
    let r = s.call("2", "tool.execute", tool("index.status", &status));
    assert_eq!(r["result"], "cancelled", "{r}");
    let (_, log) = s.finish();
    assert!(log.contains("the workspace root changed"), "{log}");
}

/// A packed indexer, spawned as LingXi spawns a plugin and spoken to in
/// LingXi Core's dialect, runs a task past a request deadline.
#[test]
fn a_packed_plugin_spawned_like_lingxi_runs_a_task() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(workspace.join("a.txt"), "1\n2\n").unwrap();
    let args = ["--timeout", "1", "--no-storage"];
    let exe = crate::packed::pack_component(dir.path(), &guest("indexer"), "indexer", &args);
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let mut s = Session::spawn(crate::packed::lingxi_spawn(&exe, &home));
    let root = dunce::canonicalize(&workspace).unwrap();
    let snapshot = crate::support::spec_snapshot(root.to_str().unwrap());
    assert_eq!(
        s.call_core("s", "host.snapshot", snapshot)["error"],
        Value::Null
    );
    let init = json!({"hostIPCVersion": 1, "coreVersion": "1.1.0"});
    assert_eq!(
        s.call_core("i", "plugin.initialize", init)["error"],
        Value::Null
    );
    let r = s.call_core(
        "1",
        "tool.execute",
        tool("index.start", r#"{"delay_ms": 1500}"#),
    );
    let handle = r["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned();
    let status = json!({"task": handle}).to_string();
    let end = Instant::now() + Duration::from_secs(30);
    let last = loop {
        let r = s.call_core("2", "tool.execute", tool("index.status", &status));
        let text = r["result"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_owned();
        if text != "running" || Instant::now() > end {
            break text;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(last, "done: 2 lines");
    let (status, log) = s.finish();
    assert!(status.success(), "{log}");
}
