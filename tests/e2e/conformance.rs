//! Replays the conformance transcripts in `tests/conformance/*.jsonl` against
//! the real launcher.
//!
//! A transcript's first line is a header `{"case", "plugin", "args"}`; every
//! further line is one step:
//! - `{"send": "<raw line>"}` writes that line to the launcher's stdin;
//! - `{"expect": {…}}` reads one response and matches it against the object;
//! - `{"expectInner": {…}}` does the same after decoding a base64 `result`.
//!
//! Matching is structural and strict: an object must have exactly the
//! expected keys, each with a matching value; arrays must have the same
//! length and match element-wise; scalars must be equal. A transcript
//! that tolerates more says where, with why: `"extraKeys": [PATH…]` in
//! its header (for every step) or in one step's line names the objects
//! (e.g. `response.result`) that may hold keys it does not list. After the last step no response may follow: every
//! answer the launcher gives is one the transcript expected.

use std::path::Path;

use serde_json::Value;

use crate::support::{Session, decode_core, guest, workspace_root};

/// Matches `actual` against `expected`; `extra` lists the object paths
/// that may hold keys `expected` does not.
fn matches(expected: &Value, actual: &Value, path: &str, extra: &[&str]) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                let Some(found) = a.get(key) else {
                    return Err(format!("{path}.{key} is missing in {actual}"));
                };
                matches(value, found, &format!("{path}.{key}"), extra)?;
            }
            let unexpected: Vec<&String> = a.keys().filter(|k| !e.contains_key(*k)).collect();
            if !unexpected.is_empty() && !extra.contains(&path) {
                return Err(format!(
                    "{path} has keys the transcript does not expect ({unexpected:?}) in {actual}; expect them, or list {path:?} in the header's extraKeys"
                ));
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{path}: expected {} elements, got {actual}",
                    e.len()
                ));
            }
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                matches(e, a, &format!("{path}[{i}]"), extra)?;
            }
            Ok(())
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{path}: expected {e}, got {a}")),
    }
}

/// Replays a transcript against the session `start(plugin, args)` returns;
/// the launcher must exit 0 at the end of its input.
pub fn replay_with(
    file: &Path,
    start: impl FnOnce(&str, &[&str]) -> Session,
) -> Result<(), String> {
    replay_judged(file, start, |status| status.success())
}

/// [`replay_with`], with `ended_well` judging the launcher's exit status
/// once every response matched.
pub fn replay_judged(
    file: &Path,
    start: impl FnOnce(&str, &[&str]) -> Session,
    ended_well: impl FnOnce(std::process::ExitStatus) -> bool,
) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Value = serde_json::from_str(lines.next().ok_or("empty transcript")?)
        .map_err(|e| format!("bad header: {e}"))?;
    let plugin = header["plugin"].as_str().ok_or("header has no plugin")?;
    let args: Vec<&str> = header["args"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let extra: Vec<&str> = header["extraKeys"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let extra = extra.as_slice();
    let mut session = start(plugin, &args);
    for (n, line) in lines.enumerate() {
        let step: Value = serde_json::from_str(line).map_err(|e| format!("step {n}: {e}"))?;
        let mut extra = extra.to_vec();
        extra
            .extend((step["extraKeys"].as_array().into_iter().flatten()).filter_map(Value::as_str));
        let extra = extra.as_slice();
        if let Some(raw) = step.get("send").and_then(Value::as_str) {
            session.send_raw(raw);
        } else if let Some(expected) = step.get("expect") {
            let got = session.recv();
            matches(expected, &got, "response", extra).map_err(|e| format!("step {n}: {e}"))?;
        } else if let Some(expected) = step.get("expectInner") {
            let got = decode_core(session.recv());
            matches(expected, &got, "response", extra).map_err(|e| format!("step {n}: {e}"))?;
        } else {
            return Err(format!("step {n}: unknown step {line}"));
        }
    }
    // Nothing more: the launcher answers only what was asked, once.
    session.close_stdin();
    if let Some(more) = session.recv_line(std::time::Duration::from_secs(10)) {
        return Err(format!("a response after the last expected one: {more}"));
    }
    let (status, stderr) = session.finish();
    if !ended_well(status) {
        return Err(format!("exit status {status}; stderr:\n{stderr}"));
    }
    Ok(())
}

/// Replays every transcript of `tests/conformance/` with `start`, and fails
/// listing each transcript that did not pass.
pub(crate) fn replay_all(start: impl Fn(&str, &[&str]) -> Session) {
    replay_each(|file| replay_with(file, &start));
}

/// Runs `replay` on every transcript of `tests/conformance/`, and fails
/// listing each transcript that did not pass.
pub(crate) fn replay_each(replay: impl Fn(&Path) -> Result<(), String>) {
    let dir = workspace_root().join("tests").join("conformance");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/conformance exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 5,
        "expected the conformance transcripts in {}",
        dir.display()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| replay(f).err().map(|e| format!("{}: {e}", f.display())))
        .collect();
    assert!(
        failures.is_empty(),
        "{} transcript(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn conformance_transcripts() {
    replay_all(|plugin, args| Session::start(&guest(plugin), args));
}

/// The native build of the same plugins passes the same transcripts.
#[test]
fn conformance_transcripts_native_baseline() {
    replay_all(|plugin, _| {
        let mut command = std::process::Command::new(crate::support::native(plugin));
        command.env("HOME", crate::support::test_home());
        Session::spawn(command)
    });
}

#[test]
fn matcher_rejects_what_it_should() {
    let v = serde_json::json!({"a": [1, {"b": 2}], "c": "x"});
    let exact = serde_json::json!({"a": [1, {"b": 2}], "c": "x"});
    assert!(matches(&exact, &v, "r", &[]).is_ok());
    // An extra key fails, unless its object is listed.
    let fewer = serde_json::json!({"a": [1, {}], "c": "x"});
    assert!(matches(&fewer, &v, "r", &[]).is_err());
    assert!(matches(&fewer, &v, "r", &["r.a[1]"]).is_ok());
    assert!(matches(&serde_json::json!({"a": [1, {"b": 2}]}), &v, "r", &[]).is_err());
    assert!(matches(&serde_json::json!({"a": [1], "c": "x"}), &v, "r", &[]).is_err());
    assert!(
        matches(
            &serde_json::json!({"a": [1, {"b": 2}], "c": "y"}),
            &v,
            "r",
            &[]
        )
        .is_err()
    );
    let more = serde_json::json!({"a": [1, {"b": 2}], "c": "x", "d": null});
    assert!(matches(&more, &v, "r", &[]).is_err());
}

/// The spec §7 Core-dialect lines piped in at once, stdin closed right after:
/// every request is answered, in order, before the launcher exits 0.
#[test]
fn spec7_core_lines_piped_at_once() {
    let file = workspace_root().join("tests/conformance/spec7-core-dialect.jsonl");
    let text = std::fs::read_to_string(file).expect("transcript");
    let sends: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|step| step.get("send").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let output = crate::support::launcher()
        .arg(guest("probe"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all((sends.join("\n") + "\n").as_bytes())?;
            drop(stdin);
            child.wait_with_output()
        })
        .expect("run lingxi-wasm-run");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let responses: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect();
    let ids: Vec<&str> = responses.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(ids, ["A", "B", "C", "F", "G", "H", "I", "J", "K", "L", "M"]);
    assert_eq!(responses[0], serde_json::json!({"id": "A", "result": ""}));
    assert_eq!(
        responses[2],
        serde_json::json!({"id": "C", "result": "ImVjaG86aGki"})
    );
    assert_eq!(
        responses[3],
        serde_json::json!({"id": "F", "error": "Unknown IPC method: tool.call"})
    );
    let handshake = decode_core(responses[1].clone());
    assert_eq!(
        handshake["result"]["manifest"]["id"],
        "com.lingxi.test-probe"
    );
    assert_eq!(
        handshake["result"]["supportedHooks"],
        serde_json::json!(["sessionStart"])
    );
}
