//! Effect receipts through the embedding API, as an agent host asks for
//! them (`CallOptions::with_receipt`): what a call did, counted where the
//! plugin meets WASI, bounded for a plugin that touches everything.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use lingxi_wasm_host::{
    CallOptions, Grant, Limits, NetRule, PluginHost, PluginOptions, PluginSet, Receipt,
    ReceiptSlot, Runtime, Server, Session,
};
use lingxi_wasm_policy::limits::MAX_RECEIPT_ENTRIES;

use crate::support::{guest, pong_server, tokio};

/// A session of the testbed under `grant`.
async fn testbed(grant: Grant) -> (PluginSet, Session) {
    let mut set = PluginSet::new(Runtime::new().unwrap());
    let options = PluginOptions::grant(grant);
    set.load_file(&guest("testbed"), options).await.unwrap();
    let session = set.session("receipts", None).unwrap();
    (set, session)
}

/// Calls `tool` and returns its answer and its receipt.
async fn call(session: &Session, tool: &str, arguments: &str) -> (Result<String, String>, Receipt) {
    let slot = ReceiptSlot::new();
    let options = CallOptions::default().with_receipt(&slot);
    let answer = session.call_tool(tool, arguments, options).await;
    let receipt = slot.take().expect("a call that ran leaves a receipt");
    (answer.map_err(|e| e.to_string()), receipt)
}

fn canonical(path: &Path) -> String {
    dunce::canonicalize(path).unwrap().display().to_string()
}

/// What the testbed declares, with its data directories under `root`.
fn with_storage(root: &Path) -> Grant {
    Grant {
        data_root: Some(root.to_owned()),
        ..Grant::default()
    }
}

#[test]
fn a_receipt_names_the_files_variables_and_hosts_of_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let ws = canonical(dir.path());
    std::fs::write(dir.path().join("in.txt"), "hello").unwrap();
    let port = pong_server();
    tokio().block_on(async {
        let grant = Grant {
            workspace: Some(ws.clone().into()),
            env: vec![("LANG".into(), "C".into()), ("MODE".into(), "x".into())],
            allow_net: [format!("127.0.0.1:{port}"), "localhost:*".into()]
                .iter()
                .map(|rule| rule.parse::<NetRule>().unwrap())
                .collect(),
            ..Grant::default()
        };
        let (_set, session) = testbed(grant).await;

        let (answer, receipt) = call(&session, "read-file", &format!("{ws}/in.txt")).await;
        assert_eq!(answer.as_deref(), Ok("hello"));
        assert_eq!(receipt.call, "tool.execute 'read-file'");
        let file = receipt
            .files
            .iter()
            .find(|f| f.path == format!("{ws}/in.txt"));
        let file = file.unwrap_or_else(|| panic!("{receipt:#?}"));
        assert!(file.read && !file.write && file.bytes_read == 5, "{file:?}");
        assert!(
            receipt.wall_micros > 0 && receipt.peak_memory_bytes > 0,
            "{receipt:?}"
        );
        assert!(
            receipt.environment.is_empty(),
            "read-file never reads the environment"
        );

        let (answer, receipt) = call(&session, "write-file", &format!("{ws}/out.txt")).await;
        assert_eq!(answer.as_deref(), Ok("written"));
        let file = receipt.files.iter().find(|f| f.path.ends_with("/out.txt"));
        let file = file.unwrap_or_else(|| panic!("{receipt:#?}"));
        assert!(file.created && file.write, "{file:?}");
        assert_eq!(file.bytes_written, "written by plugin".len() as u64);

        let (_, receipt) = call(&session, "list-dir", &ws).await;
        let listed = receipt.files.iter().find(|f| f.path == ws && f.listed);
        assert!(listed.is_some(), "{receipt:#?}");

        let (answer, receipt) = call(&session, "tcp", &format!("127.0.0.1:{port}")).await;
        assert_eq!(answer.as_deref(), Ok("pong"));
        let connection = &receipt.connections[0];
        assert_eq!(
            (
                connection.protocol.as_str(),
                connection.address.as_str(),
                connection.port
            ),
            ("tcp", "127.0.0.1", port)
        );
        assert_eq!(
            (connection.count, connection.bytes_out),
            (1, 5),
            "{connection:?}"
        );
        assert_eq!(
            connection.bytes_in, 5,
            "pong and its newline: {connection:?}"
        );

        let (_, receipt) = call(&session, "dns", "localhost").await;
        assert_eq!(receipt.lookups[0].name, "localhost", "{receipt:#?}");
        assert!(!receipt.lookups[0].addresses.is_empty(), "{receipt:#?}");
    });
}

#[test]
fn a_refusal_names_the_rule_that_would_allow_it() {
    let port = pong_server();
    tokio().block_on(async {
        let grant = Grant {
            allow_net: vec!["127.0.0.1:1".parse::<NetRule>().unwrap()],
            ..Grant::default()
        };
        let (_set, session) = testbed(grant).await;
        let (answer, receipt) = call(&session, "tcp", &format!("127.0.0.1:{port}")).await;
        assert!(answer.is_err(), "the port is not allowed: {answer:?}");
        assert!(receipt.connections.is_empty(), "{receipt:#?}");
        let refusal = &receipt.refused[0];
        assert_eq!(refusal.what, format!("connect to 127.0.0.1:{port} (tcp)"));
        assert!(
            refusal
                .allow
                .contains(&format!("allow-net = [\"127.0.0.1:{port}\"]")),
            "{refusal:?}"
        );
        assert_eq!(receipt.totals.refused, 1);
    });
}

#[test]
fn a_flood_is_counted_and_the_receipt_stays_bounded() {
    let data = tempfile::tempdir().unwrap();
    tokio().block_on(async {
        let (_set, session) = testbed(with_storage(data.path())).await;
        let slot = ReceiptSlot::new();
        let options = CallOptions::within(Duration::from_secs(60)).with_receipt(&slot);
        let answer = session.call_tool("touch-many", "3000", options).await;
        assert_eq!(answer.unwrap(), "created 3000 files");
        let receipt = slot.take().unwrap();
        assert_eq!(
            receipt.files.len(),
            MAX_RECEIPT_ENTRIES,
            "the first entries"
        );
        assert!(
            receipt.files[0].path.starts_with("/lingxi/data"),
            "{:?}",
            receipt.files[0]
        );
        assert!(
            receipt.totals.file_operations >= 3000,
            "{:?}",
            receipt.totals
        );
        assert!(receipt.totals.omitted > 0, "it says what it left out");
        let json = serde_json::to_string(&receipt).unwrap();
        assert!(json.len() < 32 * 1024, "{} bytes", json.len());
    });
}

#[test]
fn a_call_that_crashes_still_gets_its_receipt() {
    let data = tempfile::tempdir().unwrap();
    tokio().block_on(async {
        let (_set, session) = testbed(with_storage(data.path())).await;
        let (answer, receipt) = call(&session, "fill-then-panic", "1").await;
        assert!(answer.unwrap_err().contains("crashed"));
        let written: u64 = receipt.files.iter().map(|f| f.bytes_written).sum();
        assert_eq!(written, 1024 * 1024, "{receipt:#?}");
        // The restarted instance's first call has a receipt of its own.
        let (answer, receipt) = call(&session, "ok", "x").await;
        assert_eq!(answer.as_deref(), Ok("ok:x"));
        assert!(
            receipt.files.is_empty() && receipt.totals == Default::default(),
            "{receipt:#?}"
        );
    });
}

#[test]
fn the_call_that_reads_the_environment_names_what_it_was_handed() {
    let tokio = lingxi_wasm_host::call_runtime().unwrap();
    let component = tokio.block_on(async {
        let runtime = Runtime::new().unwrap();
        runtime.load_file(&guest("testbed")).await.unwrap()
    });
    let grant = Grant {
        env: vec![("LANG".into(), "C".into()), ("MODE".into(), "x".into())],
        ..Grant::default()
    };
    let host = PluginHost::new(component, grant, Limits::default());
    // A JSONL server hands every line's receipt, `plugin.initialize`'s
    // too, to its sink, with the id of the response it belongs to.
    let mut server = Server::with_runtime(host, tokio);
    let (sender, receipts) = mpsc::channel();
    server.on_receipt(Box::new(move |id, receipt| {
        sender.send((id.cloned(), receipt.clone())).unwrap();
    }));
    // The testbed reads a variable when it activates; WASI hands a
    // guest its whole environment on its first read, and its libc
    // keeps it: that call's receipt names what it was handed.
    let init = r#"{"id":"i","method":"plugin.initialize","params":{"hostIPCVersion":1}}"#;
    server.handle_line(init).unwrap();
    let (id, receipt) = receipts.try_recv().unwrap();
    assert_eq!(id, Some("i".into()));
    assert_eq!(receipt.call, "plugin.initialize");
    assert_eq!(receipt.environment, ["LANG", "MODE"], "{receipt:#?}");
    let call = r#"{"id":"c","method":"tool.execute","params":{"toolName":"getenv","arguments":"LANG","sessionID":"s","toolCallID":"c"}}"#;
    let answer = server.handle_line(call).unwrap();
    assert!(answer.contains(r#""result":"C""#), "{answer}");
    let (id, receipt) = receipts.try_recv().unwrap();
    assert_eq!(id, Some("c".into()));
    assert!(receipt.environment.is_empty(), "read once: {receipt:#?}");
    assert!(receipts.try_recv().is_err(), "one receipt per line");
}

/// `call --effects FILE` writes the call's receipt as JSON: here the
/// workspace-stats example walking a small project.
#[test]
fn call_writes_the_receipt_of_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/main.rs"), "fn main() {}\n").unwrap();
    let effects = dir.path().join("effects.json");
    let out = crate::support::launcher()
        .arg("call")
        .arg(guest("workspace-stats"))
        .args(["workspace.stats", "{}", "--workspace"])
        .arg(&project)
        .arg("--effects")
        .arg(&effects)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let receipt: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&effects).unwrap()).unwrap();
    assert_eq!(
        receipt["call"], "tool.execute 'workspace.stats'",
        "{receipt}"
    );
    let src = canonical(&project.join("src"));
    let files = receipt["files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .any(|f| f["path"] == src.as_str() && f["listed"] == true),
        "{receipt:#}"
    );
    assert!(receipt["wallMicros"].as_u64().unwrap() > 0, "{receipt}");
}

/// `call` logs its call's receipt like serving does, when the log takes
/// receipts, with or without `--effects`; an `--effects` file that cannot
/// be written fails the call before the plugin runs, naming the flag.
#[test]
fn call_logs_its_receipt_and_checks_its_effects_file_first() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let call = |extra: &[&std::ffi::OsStr]| {
        crate::support::launcher()
            .env("LINGXI_WASM_LOG", "info,lingxi_wasm::receipt=debug")
            .arg("call")
            .arg(guest("workspace-stats"))
            .args(["workspace.stats", "{}", "--workspace"])
            .arg(&project)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = call(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("receipt {") && l.contains("tool.execute 'workspace.stats'")),
        "no receipt logged:\n{stderr}"
    );

    let unwritable = dir.path().join("no-such-folder").join("effects.json");
    let out = call(&["--effects".as_ref(), unwritable.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("cannot write the receipt to") && stderr.contains("--effects"),
        "{stderr}"
    );
    assert!(!stderr.contains("receipt {"), "the plugin ran:\n{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Serving JSONL with `lingxi_wasm::receipt=debug` in the log filter logs
/// every call's receipt on stderr; stdout keeps protocol lines only.
#[test]
fn receipts_are_logged_at_debug_when_the_log_takes_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.txt"), "hello").unwrap();
    let ws = canonical(dir.path());
    let log = "info,lingxi_wasm::receipt=debug";
    let args = ["--workspace", ws.as_str()];
    let mut session = crate::support::Session::start_with_log(&guest("testbed"), &args, log);
    let params = crate::support::tool("read-file", &format!("{ws}/in.txt"));
    let answer = session.call("1", "tool.execute", params);
    assert_eq!(answer["result"], "hello", "{answer}");
    let (status, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("receipt {") && l.contains("tool.execute 'read-file'"))
        .unwrap_or_else(|| panic!("no receipt logged:\n{stderr}"));
    assert!(
        line.contains(&format!("\"path\":\"{ws}/in.txt\"")),
        "{line}"
    );
}
