//! Start-up, shutdown and the examples, through the real launcher.

use serde_json::json;

use crate::support::{Session, guest, spec_snapshot};

#[test]
fn eof_deactivates_the_plugin_and_exits_zero() {
    let mut s = Session::start(&guest("testbed"), &[]);
    let r = s.call(
        "1",
        "plugin.initialize",
        json!({"hostIPCVersion": 1, "coreVersion": "1.1.0"}),
    );
    assert_eq!(r["result"]["ipcVersion"], 1);
    let (status, stderr) = s.finish();
    assert_eq!(status.code(), Some(0));
    assert!(
        stderr.contains("[com.lingxi.testbed] deactivated"),
        "{stderr}"
    );
}

#[test]
fn failing_hook_handlers_are_logged_not_raised() {
    let mut s = Session::start(&guest("testbed"), &[]);
    let r = s.call(
        "1",
        "hook.emit",
        json!({"event": "agentTurnEnd", "subjectID": "t-1", "metadata": {}}),
    );
    assert_eq!(r, json!({"id": "1", "result": null, "error": null}));
    let stderr = s.finish().1;
    assert!(stderr.contains("turn ended: t-1"), "{stderr}");
    assert!(
        stderr.contains("agentTurnEnd handler #2 failed for 't-1': second handler fails"),
        "{stderr}"
    );
}

#[test]
fn not_a_component_fails_with_a_clear_message() {
    let bogus = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bogus.path(), b"definitely not wasm").unwrap();
    let (status, stderr) = Session::start(bogus.path(), &[]).finish();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains("is a text file, not a WebAssembly component"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--target wasm32-wasip2"),
        "says what to do: {stderr}"
    );
}

#[test]
fn quickstart_status_shows_the_workspace_or_says_nothing_was_published() {
    let mut s = Session::start(&guest("quickstart"), &[]);
    let status = json!({"commandName": "status", "arguments": []});
    let r = s.call_core("1", "command.execute", status.clone());
    assert_eq!(
        r["result"],
        json!({"isPrompt": false, "text": "The host has not published a runtime snapshot yet", "presentation": "inline"})
    );
    s.call_core("2", "host.snapshot", spec_snapshot("/work/demo"));
    let r = s.call_core("3", "command.execute", status);
    assert_eq!(
        r["result"],
        json!({"isPrompt": false, "text": "Workspace /work/demo (main)", "presentation": "modal", "title": "Workspace"})
    );
    let r = s.call_core(
        "4",
        "tool.execute",
        json!({"toolName": "echo", "arguments": "{\"x\":1}", "sessionID": "s", "toolCallID": "c"}),
    );
    assert_eq!(r["result"], "{\"x\":1}");
}

#[test]
fn compiled_components_are_cached_and_a_bad_cache_file_is_replaced() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let args = ["--cache-dir", dir];
    let init = json!({"hostIPCVersion": 1, "coreVersion": "1.1.0"});
    let run = || {
        let mut s = Session::start_with_log(&guest("probe"), &args, "debug");
        let r = s.call("1", "plugin.initialize", init.clone());
        assert_eq!(
            r["result"]["manifest"]["id"], "com.lingxi.test-probe",
            "{r}"
        );
        let (status, stderr) = s.finish();
        assert!(status.success(), "{stderr}");
        stderr
    };
    run();
    // The compiled component (beside the folder of compiled functions).
    let files: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !p.ends_with("functions"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].extension().is_some_and(|e| e == "cwasm"));

    assert!(run().contains("loaded precompiled component"));

    std::fs::write(&files[0], b"tampered").unwrap();
    assert!(run().contains("ignoring unusable precompiled component"));
    assert!(
        run().contains("loaded precompiled component"),
        "the bad file was replaced"
    );
}
