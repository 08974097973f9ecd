//! Replays one exchange with the built component, as a LingXi host would:
//! `plugin.initialize`, then a `tool.execute` of `greet`, through
//! `lingxi-wasm-run` (found on PATH, or at $LINGXI_WASM_RUN).
//!
//! Build the component first: `cargo build --target wasm32-wasip2 --release`
//! (with the same target folder, if it is not `target/`).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Where the component is looked for.
const COMPONENT: &str = "wasm32-wasip2/release/__CRATE_FILE__.wasm";

/// The target folders the component may be in: `CARGO_TARGET_DIR`, the
/// one this test was built into (`--target-dir` too), and `target/`.
fn target_folders() -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    // This test runs as <target>/debug/deps/exchange-….
    if let Ok(exe) = std::env::current_exe() {
        folders.extend(exe.ancestors().skip(1).take(4).map(PathBuf::from));
    }
    folders.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    folders
}

#[test]
fn initialize_then_greet() {
    let folders = target_folders();
    let component = folders
        .iter()
        .map(|folder| folder.join(COMPONENT))
        .find(|path| path.exists())
        .unwrap_or_else(|| {
            panic!(
                "build the component first: cargo build --target wasm32-wasip2 --release (no {COMPONENT} in {folders:?})"
            )
        });
    let launcher = std::env::var("LINGXI_WASM_RUN").unwrap_or_else(|_| "lingxi-wasm-run".into());
    let mut child = Command::new(&launcher)
        .arg(&component)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {launcher} ({e}); install it or set LINGXI_WASM_RUN"));
    let requests = [
        json!({"id": "1", "method": "plugin.initialize", "params": {"hostIPCVersion": 1}}),
        json!({"id": "2", "method": "tool.execute", "params": {
            "toolName": "greet", "arguments": r#"{"name": "Ada"}"#,
            "sessionID": "s-1", "toolCallID": "c-1"}}),
    ];
    let mut stdin = child.stdin.take().expect("piped stdin");
    for request in &requests {
        writeln!(stdin, "{request}").expect("the launcher reads its stdin");
    }
    drop(stdin);
    let responses: Vec<Value> = BufReader::new(child.stdout.take().expect("piped stdout"))
        .lines()
        .map(|line| serde_json::from_str(&line.expect("a line")).expect("a JSON response"))
        .collect();
    assert!(child.wait().expect("the launcher exits").success());
    assert_eq!(responses.len(), 2, "{responses:?}");
    assert_eq!(responses[0]["result"]["manifest"]["id"], "__ID__", "{}", responses[0]);
    assert_eq!(responses[1]["result"], "Hello, Ada!", "{}", responses[1]);
}
