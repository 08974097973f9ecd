//! `examples/workspace-stats` on this repository, through the real launcher.

use serde_json::{Value, json};

use crate::support::{Session, guest, spec_snapshot, tool, workspace_root};

fn session(args: &[&str]) -> Session {
    let mut s = Session::start(&guest("workspace-stats"), args);
    let root = workspace_root();
    let r = s.call(
        "snap",
        "host.snapshot",
        spec_snapshot(root.to_str().unwrap()),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    s
}

fn stats(s: &mut Session, arguments: &str) -> Value {
    let r = s.call("t", "tool.execute", tool("workspace.stats", arguments));
    let text = r["result"].as_str().unwrap_or_else(|| panic!("{r}"));
    serde_json::from_str(text).expect("the tool answers JSON")
}

#[test]
fn summarises_this_repository() {
    let mut s = session(&[]);
    let whole = stats(&mut s, "{}");
    assert_eq!(whole["path"], ".");
    let rust = whole["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["language"] == "Rust")
        .expect("Rust is counted");
    assert!(rust["files"].as_u64().unwrap() > 20, "{rust}");
    assert!(rust["lines"].as_u64().unwrap() > 2000, "{rust}");
    assert_eq!(whole["largest"].as_array().unwrap().len(), 5);
    assert_eq!(whole["truncated"], false);
    let listed = whole.to_string();
    assert!(!listed.contains("target/"), "build output is skipped");
    assert!(!listed.contains(".git/"), "hidden folders are skipped");

    let sdk = stats(&mut s, r#"{"path": "sdk", "top": 2}"#);
    assert_eq!(sdk["path"], "sdk");
    assert!(sdk["files"].as_u64().unwrap() < whole["files"].as_u64().unwrap());
    assert_eq!(sdk["largest"].as_array().unwrap().len(), 2);
    assert!(
        sdk["largest"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with("sdk/")
    );
}

/// `path` is a read path parameter: the launcher refuses one that leaves
/// the workspace before the plugin runs, and checks the arguments against
/// the schema.
#[test]
fn paths_outside_the_workspace_fail_cleanly() {
    let mut s = session(&[]);
    let cases = [
        ("../", "leads outside"),
        ("sdk/rust/../../../..", "leads outside"),
        ("/etc", "is outside the granted directories"),
        ("no-such-dir", "does not exist"),
    ];
    for (path, rule) in cases {
        let args = json!({"path": path}).to_string();
        let r = s.call("t", "tool.execute", tool("workspace.stats", &args));
        let error = r["error"].as_str().unwrap_or_else(|| panic!("{path}: {r}"));
        let want = format!(
            "tool.execute 'workspace.stats' was not run: path parameter /path ('{path}') {rule}"
        );
        assert!(error.starts_with(&want), "{error}");
    }
    let r = s.call(
        "t",
        "tool.execute",
        tool("workspace.stats", r#"{"path": 3, "top": 101, "depth": 1}"#),
    );
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    for expected in [
        "arguments: /path: 3 is an integer, not string",
        "arguments: /top: 101 is more than maximum 100",
        "arguments: property 'depth' not allowed (additionalProperties is false)",
    ] {
        assert!(error.contains(expected), "{expected}: {error}");
    }
}

#[test]
fn the_command_shows_a_modal() {
    let mut s = session(&[]);
    let r = s.call(
        "c",
        "command.execute",
        json!({"commandName": "ws-stats", "arguments": ["host"]}),
    );
    assert_eq!(r["result"]["presentation"], "modal", "{r}");
    assert_eq!(r["result"]["title"], "Workspace stats: host");
    assert!(
        r["result"]["text"].as_str().unwrap().contains("Rust"),
        "{r}"
    );
}

#[test]
fn without_the_grant_the_workspace_is_unreadable() {
    let mut s = session(&["--grant", "none"]);
    let r = s.call("t", "tool.execute", tool("workspace.stats", "{}"));
    assert!(r["error"].as_str().unwrap().contains("cannot read"), "{r}");
}
