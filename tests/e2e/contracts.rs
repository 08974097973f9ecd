//! Tool contracts through the real launcher: arguments validated against
//! the tool's schema before the plugin sees them (the testbed counts its
//! calls to prove it), path parameters resolved and guarded, per-tool
//! timeouts, `--no-validate`, and a schema the host cannot compile.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Session, guest, spec_snapshot, tool};

/// A workspace with `src/a.txt`, a sibling folder `outside/secret`, and
/// links: `in-link` → `src/a.txt`, `out-link` → `../outside/secret`.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(ws.join("src/a.txt"), "a").unwrap();
    std::fs::write(base.join("outside/secret"), "s").unwrap();
    std::os::unix::fs::symlink("src/a.txt", ws.join("in-link")).unwrap();
    std::os::unix::fs::symlink("../outside/secret", ws.join("out-link")).unwrap();
    (dir, ws)
}

/// The testbed, initialized, with `args` and a snapshot of `ws`.
fn testbed(ws: &Path, args: &[&str]) -> Session {
    let mut s = Session::start(&guest("testbed"), args);
    let r = s.call("s", "host.snapshot", spec_snapshot(ws.to_str().unwrap()));
    assert_eq!(r["error"], Value::Null, "{r}");
    let r = s.call("i", "plugin.initialize", json!({"hostIPCVersion": 1}));
    assert_eq!(r["error"], Value::Null, "{r}");
    s
}

fn run(s: &mut Session, name: &str, arguments: &str) -> Result<String, String> {
    let r = s.call("t", "tool.execute", tool(name, arguments));
    match (r["result"].as_str(), r["error"].as_str()) {
        (Some(result), None) => Ok(result.to_owned()),
        (None, Some(error)) => Err(error.to_owned()),
        _ => panic!("neither result nor error: {r}"),
    }
}

fn calls(s: &mut Session) -> String {
    run(s, "contract.calls", "{}").unwrap()
}

#[test]
fn invalid_arguments_never_reach_the_plugin_and_each_failure_is_named() {
    let (_dir, ws) = workspace();
    let mut s = testbed(&ws, &[]);
    let long = "x".repeat(12);
    let cases = [
        (
            "not json",
            "its arguments are not valid JSON (expected ident at line 1 column 2)",
        ),
        ("[1]", "arguments: [1] is an array, not object"),
        (
            r#"{"mode": "fast"}"#,
            "arguments: missing required property \"text\"",
        ),
        (
            &format!(r#"{{"text": "{long}"}}"#),
            "arguments: /text: 12 characters, more than maxLength 10",
        ),
        (
            r#"{"text": "a", "mode": "medium"}"#,
            "arguments: /mode: \"medium\" is not one of [\"fast\",\"slow\"]",
        ),
        (
            r#"{"text": "a", "extra": true}"#,
            "arguments: property 'extra' not allowed (additionalProperties is false)",
        ),
        (
            r#"{"text": "a", "opts": {"depth": 9}}"#,
            "arguments: /opts/depth: 9 is more than maximum 3",
        ),
        (
            r#"{"text": "a", "opts": {"depth": 1, "x": 1}}"#,
            "arguments: /opts: property 'x' not allowed",
        ),
        (
            r#"{"text": 5}"#,
            "arguments: /text: 5 is an integer, not string",
        ),
    ];
    for (arguments, expected) in cases {
        let error = run(&mut s, "contract.strict", arguments).expect_err(arguments);
        assert!(
            error.starts_with("tool.execute 'contract.strict' was not run: "),
            "{error}"
        );
        assert!(
            error.contains(expected),
            "{arguments}: want {expected:?} in {error}"
        );
    }
    let error = run(&mut s, "contract.strict", r#"{"text": 1, "mode": "x"}"#).unwrap_err();
    assert!(
        error.contains("/text: 1 is an integer") && error.contains("/mode: \"x\" is not one of")
    );
    assert_eq!(calls(&mut s), "0", "a refused call reached the plugin");
    let valid = r#"{"text": "hello", "mode": "slow", "opts": {"depth": 3}}"#;
    assert_eq!(run(&mut s, "contract.strict", valid).as_deref(), Ok(valid));
    assert_eq!(calls(&mut s), "1");
}

#[test]
fn path_parameters_resolve_inside_the_workspace_and_are_refused_outside() {
    let (_dir, ws) = workspace();
    let mut s = testbed(&ws, &["--grant", "projectRead"]);
    let file = ws.join("src/a.txt").display().to_string();
    // Only the path changes: every other value reaches the plugin as written.
    let text = run(
        &mut s,
        "contract.read",
        r#"{"path": "src/a.txt", "n": 1e2, "big": 123456789012345678901}"#,
    );
    let want = format!(r#"{{"path":"{file}","n":1e2,"big":123456789012345678901}}"#);
    assert_eq!(text, Ok(want));
    let mut resolved = |arguments: &str| -> Value {
        let text =
            run(&mut s, "contract.read", arguments).unwrap_or_else(|e| panic!("{arguments}: {e}"));
        serde_json::from_str(&text).unwrap()
    };
    for given in ["src/a.txt", "./src/../src/a.txt", file.as_str(), "in-link"] {
        let args = json!({"path": given, "note": "src/a.txt"}).to_string();
        let got = resolved(&args);
        assert_eq!(got["path"], file.as_str(), "{given}");
        assert_eq!(got["note"], "src/a.txt", "only marked properties are paths");
    }
    let got = resolved(&json!({"files": ["src", "src/a.txt"]}).to_string());
    assert_eq!(
        got["files"],
        json!([ws.join("src").display().to_string(), file])
    );
    let outside = ws
        .parent()
        .unwrap()
        .join("outside/secret")
        .display()
        .to_string();
    let cases = [
        (
            json!({"path": "../outside/secret"}),
            "path parameter /path ('../outside/secret') leads outside",
        ),
        (
            json!({"path": "out-link"}),
            "path parameter /path ('out-link') leads outside",
        ),
        (
            json!({"path": outside}),
            "is outside the granted directories",
        ),
        (
            json!({"files": ["src", "../x"]}),
            "path parameter /files/1 ('../x') leads outside",
        ),
        (
            json!({"path": "nope.txt"}),
            "path parameter /path ('nope.txt') does not exist",
        ),
    ];
    // Parsers disagree on which of two values for one key counts: refused.
    let twice = r#"{"path": "../outside/secret", "path": ""}"#;
    let error = run(&mut s, "contract.read", twice).unwrap_err();
    assert!(
        error.contains(r#"the key "path" appears twice in one object"#),
        "{error}"
    );
    let before = calls(&mut s);
    for (arguments, expected) in cases {
        let error = run(&mut s, "contract.read", &arguments.to_string()).unwrap_err();
        assert!(
            error.contains(expected),
            "{arguments}: want {expected:?} in {error}"
        );
    }
    assert_eq!(calls(&mut s), before, "a refused call reached the plugin");
    // projectRead only: nothing may be written.
    let error = run(&mut s, "contract.write", r#"{"to": "src/new.txt"}"#).unwrap_err();
    assert!(error.contains("which the plugin may not write"), "{error}");
}

#[test]
fn a_file_to_be_created_needs_a_writable_root_and_an_existing_parent() {
    let (_dir, ws) = workspace();
    let mut s = testbed(&ws, &["--grant", "projectRead,projectWrite"]);
    let text = run(&mut s, "contract.write", r#"{"to": "src/new.txt"}"#).unwrap();
    let got: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(got["to"], ws.join("src/new.txt").display().to_string());
    let error = run(&mut s, "contract.write", r#"{"to": "missing/new.txt"}"#).unwrap_err();
    assert!(error.contains("needs an existing parent"), "{error}");
    let error = run(&mut s, "contract.write", r#"{"to": "../new.txt"}"#).unwrap_err();
    assert!(error.contains("leads outside"), "{error}");
}

#[test]
fn a_tool_timeout_shorter_than_the_plugins_stops_the_call_at_the_tools() {
    let (_dir, ws) = workspace();
    // A slow start (250 ms) must not count against the tool's 300 ms.
    let mut s = testbed(
        &ws,
        &["--timeout", "20", "--env", "TESTBED_ACTIVATE_MS=250"],
    );
    let started = Instant::now();
    let error = run(&mut s, "contract.slow", r#"{"ms": 5000}"#).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let expected = "tool.execute 'contract.slow' did not finish within the tool's own timeout of 0.3 s (x-lingxi-timeout-ms in its inputSchema)";
    assert!(error.starts_with(expected), "{error}");
    // The restart after the timeout is not the tool's time.
    for _ in 0..2 {
        let answer = run(&mut s, "contract.slow", r#"{"ms": 100}"#);
        assert_eq!(answer.as_deref(), Ok(r#"{"ms": 100}"#));
    }
}

#[test]
fn no_validate_lets_arguments_through_but_keeps_the_path_guard() {
    let (_dir, ws) = workspace();
    let mut s = testbed(&ws, &["--no-validate"]);
    assert_eq!(
        run(&mut s, "contract.strict", r#"{"bogus": 1}"#).as_deref(),
        Ok(r#"{"bogus": 1}"#)
    );
    assert_eq!(calls(&mut s), "1");
    let error = run(&mut s, "contract.read", r#"{"path": "../outside/secret"}"#).unwrap_err();
    assert!(error.contains("leads outside"), "{error}");
    // A path given in another shape than the schema's is refused all the same.
    let error = run(&mut s, "contract.read", r#"{"files": "../outside/secret"}"#).unwrap_err();
    assert!(
        error.contains("path parameter /files ('a string') is not an array"),
        "{error}"
    );
}

#[test]
fn a_schema_the_host_cannot_compile_is_logged_once_and_its_tool_still_runs() {
    let (_dir, ws) = workspace();
    let mut s = testbed(&ws, &["--env", "TESTBED_BROKEN_SCHEMA=1"]);
    let r = s.call("i2", "plugin.initialize", json!({"hostIPCVersion": 1}));
    assert_eq!(r["error"], Value::Null, "{r}");
    assert_eq!(
        run(&mut s, "contract.broken-schema", r#"{"n": "any"}"#).as_deref(),
        Ok(r#"{"n": "any"}"#)
    );
    let (_, stderr) = s.finish();
    let logged = "tool 'contract.broken-schema': inputSchema is not a valid JSON Schema";
    assert_eq!(stderr.matches(logged).count(), 1, "{stderr}");
}
