//! Resources, crashes and hostile input. The attacks of one call each are
//! data (`tests/attacks/runtime.toml`); here are the others: several calls in
//! one session, raw lines, a generated input, a launcher driven or read in
//! another way, the library API.

use lingxi_wasm_host::CallOptions;
use serde_json::{Value, json};

use super::{Tree, allowed, attempt, denied, start};
use crate::support::{Session, guest, spec_snapshot, tool};

#[test]
fn out_stdout_flood_does_not_reach_the_channel() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    for _ in 0..3 {
        assert_eq!(allowed(&attempt(&mut s, "print-stdout", "")), "printed");
    }
}

/// A host that reads the launcher's stderr only after it exits: the log
/// thread is stuck on a full pipe at exit, and nothing but responses may
/// appear on stdout even then (the logging library prints to stdout when
/// its worker does not take the shutdown signal in time).
#[test]
fn out_stderr_never_read_leaves_stdout_protocol_only() {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut child = Session::command(&guest("testbed"), &[], "info")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for id in 0..3 {
        let line = json!({"id": id.to_string(), "method": "tool.execute",
                          "params": tool("log-flood", "5000")});
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .collect();
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    assert!(child.wait().unwrap().success());
    assert_eq!(lines.len(), 3, "stdout: {lines:?}");
    for line in &lines {
        let r: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(
            r["result"] == "logged 5000" || r["error"].is_string(),
            "{r}"
        );
    }
}

/// The testbed's stderr after `calls` calls of `log-flood 10000` (10 MB of
/// log lines each) made while nobody read stderr: the writer thread is
/// stuck on the full pipe, yet every call is answered; a reader comes once
/// they are. Returns stderr and how many flood lines it holds.
fn burst_then_late_reader(calls: usize) -> (String, usize) {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut child = Session::command(&guest("testbed"), &[], "info")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for id in 0..calls {
        let call = json!({"id": id.to_string(), "method": "tool.execute",
                          "params": tool("log-flood", "10000")});
        writeln!(stdin, "{call}").unwrap();
        let mut response = String::new();
        stdout.read_line(&mut response).unwrap();
        assert!(response.contains("logged 10000"), "{response}");
    }
    let mut stderr_pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut stderr = String::new();
        let _ = stderr_pipe.read_to_string(&mut stderr);
        stderr
    });
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let stderr = reader.join().unwrap();
    let line = "y".repeat(1024);
    let logged = stderr.lines().filter(|l| l.contains(&line)).count();
    (stderr, logged)
}

/// One call's burst waits in the writer's queue (it holds about one call's
/// output budget of 1 KiB lines) instead of being dropped; two calls' do
/// not fit, and the log says how many lines were dropped.
#[test]
fn out_a_log_burst_waits_for_a_late_stderr_reader_and_drops_are_counted() {
    let (stderr, logged) = burst_then_late_reader(1);
    assert_eq!(logged, 10_000, "log lines dropped");
    assert!(!stderr.contains("were dropped"), "a drop was reported");
    let (stderr, logged) = burst_then_late_reader(2);
    assert!(logged < 20_000, "{logged}");
    // The count covers every dropped line (a host line may be among them).
    let said = stderr
        .lines()
        .find_map(|l| {
            l.split(" log lines were dropped")
                .next()
                .filter(|_| l.contains("were dropped"))
        })
        .and_then(|head| head.rsplit(' ').next()?.parse::<usize>().ok());
    assert!(
        said.is_some_and(|n| n >= 20_000 - logged),
        "{logged} flood lines logged, drop notice {said:?}"
    );
}

// ---- crashes -------------------------------------------------------------------

#[test]
fn crash_storm_disables_the_plugin_and_the_host_lives() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    for i in 0..5 {
        let r = s.call(&format!("p{i}"), "tool.execute", tool("panic", ""));
        assert!(r["error"].is_string(), "{r}");
    }
    let r = s.call("after", "tool.execute", tool("ok", "x"));
    denied(&r, "is disabled: it crashed 5 times within 60 s");
    let r = s.call(
        "cmd",
        "command.execute",
        json!({"commandName": "info", "arguments": []}),
    );
    denied(&r, "disabled");
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
    denied(&r, "not valid UTF-8");
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
    denied(&r, "longer than");
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
    denied(&r, "did not finish within 0.5 s");
    assert!(s.finish().0.success());
}

// ---- every channel has a limit ---------------------------------------------------

#[test]
fn inspect_never_shows_a_plugin_s_escapes_or_forged_lines() {
    let out = crate::support::launcher()
        .arg("inspect")
        .arg(guest("impostor"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("granted      projectWrite")),
        "{text}"
    );
    assert!(
        text.contains("description  Declares nothing?granted      projectWrite?[8m"),
        "{text}"
    );
}

#[test]
fn out_huge_error_text_is_capped() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    let r = attempt(&mut s, "fail-big", "20");
    let error = denied(&r, "cut to the 16777216-byte limit");
    assert!(
        error.len() <= 16 * 1024 * 1024 + 200,
        "{} bytes",
        error.len()
    );
}

#[test]
fn handshake_claiming_another_manifest_is_refused() {
    // Declares nothing when loaded; claims another id and every capability
    // once it runs with IMPOSTOR=1.
    let mut s = Session::start(&guest("impostor"), &["--env", "IMPOSTOR=1"]);
    let r = s.call("init", "plugin.initialize", json!({"hostIPCVersion": 1}));
    let error = denied(&r, "does not match the manifest its sandbox was built from");
    assert!(
        error.contains("id is \"com.lingxi.trusted\" in the handshake but \"com.lingxi.impostor\"")
            && error.contains("capabilities is [networkAccess, processExecution, projectRead, projectWrite] in the handshake but []"),
        "{error}"
    );
    assert!(r["result"].is_null(), "no handshake is passed on: {r}");
    // Without the lie the same plugin starts.
    let mut honest = Session::start(&guest("impostor"), &[]);
    let r = honest.call("init", "plugin.initialize", json!({"hostIPCVersion": 1}));
    assert_eq!(r["result"]["manifest"]["id"], "com.lingxi.impostor", "{r}");
}

/// A library user may pass any timeout: one too long to represent is no
/// deadline, never an overflow.
#[test]
fn huge_timeout_from_a_library_user() {
    use lingxi_wasm_host::types::{InitializeRequest, ToolCall};
    use lingxi_wasm_host::{Grant, Limits, PluginHost, Runtime};

    let tokio = lingxi_wasm_host::call_runtime().unwrap();
    let runtime = Runtime::new().unwrap();
    let component = tokio.block_on(runtime.load_file(&guest("probe"))).unwrap();
    let limits = Limits {
        call_timeout: std::time::Duration::MAX,
        ..Limits::default()
    };
    let mut plugin = PluginHost::new(component, Grant::default(), limits);
    tokio.block_on(async {
        let request = InitializeRequest {
            host_ipc_version: Some(1),
            core_version: None,
        };
        plugin.initialize(request).await.unwrap();
        let call = ToolCall {
            tool_name: "probe.echo".into(),
            arguments: "{}".into(),
            session_id: "s".into(),
            tool_call_id: "c".into(),
        };
        assert_eq!(
            plugin
                .execute_tool(call, CallOptions::default())
                .await
                .unwrap(),
            "echo:{}"
        );
    });
}

/// A library user who drops a call's future mid-flight (their own timeout,
/// a cancelled task) gets a fresh instance at the next call, not a crash.
#[test]
fn a_call_dropped_by_its_caller_does_not_poison_the_next() {
    use lingxi_wasm_host::types::ToolCall;
    use lingxi_wasm_host::{Grant, Limits, PluginHost, Runtime};

    let tokio = lingxi_wasm_host::call_runtime().unwrap();
    let runtime = Runtime::new().unwrap();
    let component = tokio
        .block_on(runtime.load_file(&guest("testbed")))
        .unwrap();
    let mut plugin = PluginHost::new(component, Grant::default(), Limits::default());
    let call = |name: &str, args: &str| ToolCall {
        tool_name: name.into(),
        arguments: args.into(),
        session_id: "s".into(),
        tool_call_id: "c".into(),
    };
    tokio.block_on(async {
        let slow = plugin.execute_tool(call("sleep", "60"), CallOptions::default());
        let cut = tokio::time::timeout(std::time::Duration::from_millis(200), slow).await;
        assert!(cut.is_err(), "the caller's own timeout ended the call");
        let next = plugin
            .execute_tool(call("ok", "x"), CallOptions::default())
            .await;
        assert_eq!(next.unwrap(), "ok:x");
    });
    assert!(plugin.disabled().is_none());
}
