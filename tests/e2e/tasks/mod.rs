//! Background tasks: on the LingXi wire through the real launcher
//! (`wire.rs`: the start → handle → poll pattern, every budget against a
//! hostile task, cancellation from a call and from EOF) and through the
//! embedding API (`embed.rs`: start, wait, poll, cancel, events, a dropped
//! session, expiry).

mod embed;
mod mcp;
mod wire;

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Session, guest, tool};

/// The testbed under the launcher with `args`, initialized.
fn testbed(args: &[&str]) -> Session {
    let mut args = args.to_vec();
    args.push("--no-storage");
    let mut s = Session::start(&guest("testbed"), &args);
    let r = s.call(
        "init",
        "plugin.initialize",
        serde_json::json!({"hostIPCVersion": 1}),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    s
}

/// Calls tool `name` with raw `arguments`: its result text, or `Err` with
/// the error text.
fn call(s: &mut Session, name: &str, arguments: &str) -> Result<String, String> {
    let r = s.call("t", "tool.execute", tool(name, arguments));
    match (&r["result"], &r["error"]) {
        (Value::String(text), Value::Null) => Ok(text.clone()),
        (_, Value::String(error)) => Err(error.clone()),
        _ => panic!("neither a result nor an error: {r}"),
    }
}

/// Starts a testbed task (`KIND [INPUT]`): its id.
fn start(s: &mut Session, task: &str) -> String {
    let handle = call(s, "task-start", task).unwrap_or_else(|e| panic!("{task}: {e}"));
    handle
        .strip_prefix("task:")
        .unwrap_or_else(|| panic!("a handle: {handle}"))
        .to_owned()
}

/// Polls `task-status` until it no longer says `running` or `within`
/// passes: the last answer.
fn settle(s: &mut Session, id: &str, within: Duration) -> String {
    let end = Instant::now() + within;
    loop {
        let state = call(s, "task-status", id).expect("task-status answers");
        if !state.starts_with("running") || Instant::now() > end {
            return state;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
