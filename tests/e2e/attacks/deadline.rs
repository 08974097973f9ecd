//! Deadlines hold whatever the guest does. A spinning guest is in
//! `runtime.rs`; here the guest blocks inside WASI (a sleep, a poll on a
//! clock, a socket read, a name lookup), where no instruction of its own runs.
//! Each call must be answered with the deadline error within the deadline
//! plus 10%, and the next request must be answered.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Tree, allowed, denied, start};
use crate::support::{Session, guest, spec_snapshot, tool, workspace_root};

/// `--timeout 1`, and what "within the deadline + 10%" allows.
const TIMEOUT: &str = "1";
const BOUND: Duration = Duration::from_millis(1100);

/// Warms the instance up, makes the blocking call, checks it was stopped by
/// the deadline in time, and that the next request is answered.
fn stopped_in_time(s: &mut Session, tool_name: &str, input: &str) {
    assert_eq!(
        allowed(&s.call("warm", "tool.execute", tool("ok", "x"))),
        "ok:x"
    );
    let started = Instant::now();
    let r = s.call("blocked", "tool.execute", tool(tool_name, input));
    let took = started.elapsed();
    denied(&r, "did not finish within 1.0 s");
    assert!(
        took <= BOUND,
        "{tool_name} was answered after {took:?}, more than the deadline + 10%"
    );
    let next = s.call("next", "tool.execute", tool("ok", "alive"));
    assert_eq!(allowed(&next), "ok:alive");
}

#[test]
fn deadline_guest_sleeps_an_hour() {
    let t = Tree::new();
    stopped_in_time(&mut start(&t, &["--timeout", TIMEOUT]), "sleep", "3600");
}

#[test]
fn deadline_guest_polls_a_clock_at_the_end_of_time() {
    let t = Tree::new();
    stopped_in_time(&mut start(&t, &["--timeout", TIMEOUT]), "poll-far", "");
}

#[test]
fn deadline_tcp_read_from_a_server_that_never_answers() {
    let t = Tree::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    // Accepts and holds the connection, never writing a byte.
    let holder = std::thread::spawn(move || listener.accept().map(|(stream, _)| stream));
    let args = [
        "--timeout",
        TIMEOUT,
        "--grant",
        "networkAccess",
        "--allow-net",
        &addr,
    ];
    stopped_in_time(&mut start(&t, &args), "tcp", &addr);
    drop(holder);
}

/// The shim that makes lookups of `*.never-answers.test` hang, built once.
fn slow_resolver() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = workspace_root();
            let out = root.join("target").join("e2e-slow-resolver.so");
            let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
                .args(["-shared", "-fPIC", "-o"])
                .arg(&out)
                .arg(root.join("tests/e2e/slow_resolver.c"))
                .arg("-ldl")
                .status()
                .expect("cannot run the C compiler (cc) to build the test resolver");
            assert!(status.success(), "building the test resolver failed");
            out
        })
        .clone()
}

#[test]
fn deadline_name_lookup_that_never_answers() {
    let mut command = Session::command(
        &guest("testbed"),
        &[
            "--timeout",
            TIMEOUT,
            "--grant",
            "networkAccess",
            "--allow-net",
            "*.never-answers.test:*",
        ],
        "info",
    );
    command.env("LD_PRELOAD", slow_resolver());
    let mut s = Session::spawn(command);
    let r = s.call("snap", "host.snapshot", spec_snapshot("/repo"));
    assert_eq!(r["error"], Value::Null, "{r}");
    stopped_in_time(&mut s, "dns", "api.never-answers.test");
    // The hung lookup does not keep the launcher from exiting at EOF.
    assert!(s.finish().0.success());
}

#[test]
fn deadline_covers_the_restart_and_the_call() {
    // Activation takes 0.7 s; after a crash, the next request needs a fresh
    // instance, the replayed initialize (0.7 s) and the call (a 1 s sleep):
    // one deadline holds for all of it.
    let t = Tree::new();
    let args = ["--timeout", TIMEOUT, "--env", "TESTBED_ACTIVATE_MS=700"];
    let mut s = start(&t, &args);
    let r = s.call(
        "init",
        "plugin.initialize",
        serde_json::json!({"hostIPCVersion": 1}),
    );
    assert!(r["error"].is_null(), "{r}");
    denied(
        &s.call("crash", "tool.execute", tool("panic", "")),
        "crashed the plugin",
    );
    let started = Instant::now();
    let r = s.call("slow", "tool.execute", tool("sleep", "1"));
    let took = started.elapsed();
    denied(&r, "did not finish within 1.0 s");
    assert!(
        took <= BOUND,
        "answered after {took:?}, more than the deadline + 10%"
    );
}
