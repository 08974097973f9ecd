//! Plugin tasks as MCP tasks (the tasks extension, SEP-2663), driven by
//! rmcp's own client over stdio: a client that declares the extension gets
//! a task for `index.start` and polls it to its result, sees its progress
//! as the status message, and cancels one (the plugin task stops); a
//! client without the extension gets today's answer, the handle as text.

use std::process::Stdio;
use std::time::{Duration, Instant};

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, GetTaskParams, Implementation, TaskPayload, TaskStatus,
    TaskStatusNotificationParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;

use crate::support::{guest, tokio};

type Client = RunningService<RoleClient, Watcher>;

/// rmcp's client, keeping the task status notifications it hears.
#[derive(Clone)]
struct Watcher {
    config: ClientConfig,
    heard: Arc<Mutex<Vec<(String, TaskStatus)>>>,
}

impl ClientHandler for Watcher {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        let heard = (params.task.task.task_id.clone(), params.task.status());
        self.heard.lock().unwrap().push(heard);
    }
}

/// `mcp` on the Rust indexer over `workspace`, and an rmcp client of it
/// that declares the tasks extension (`tasks`) or not.
async fn connect(workspace: &std::path::Path, tasks: bool) -> (Client, tokio::process::Child) {
    let mut command = tokio::process::Command::from(crate::support::launcher());
    command
        .arg("mcp")
        .arg(guest("indexer"))
        .args(["--workspace", workspace.to_str().unwrap(), "--no-storage"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("the launcher starts");
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let capabilities = match tasks {
        true => ClientCapabilities::builder().enable_tasks().build(),
        false => ClientCapabilities::default(),
    };
    let config = ClientConfig::new(capabilities, Implementation::new("e2e", "0"));
    let watcher = Watcher {
        config,
        heard: Arc::default(),
    };
    let client = watcher.serve((stdout, stdin)).await.expect("initialized");
    (client, child)
}

fn start(delay_ms: u64) -> CallToolRequestParams {
    let arguments = json!({"delay_ms": delay_ms});
    CallToolRequestParams::new("index.start").with_arguments(arguments.as_object().unwrap().clone())
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().expect("text").text.clone()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "1\n2\n3\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "4\n5").unwrap();
    dir
}

#[test]
fn a_task_capable_client_gets_the_plugin_task_as_an_mcp_task() {
    tokio().block_on(async {
        let dir = workspace();
        let (client, _child) = connect(dir.path(), true).await;
        let info = client.peer_info().expect("the server's info");
        assert!(
            info.capabilities.supports_tasks(),
            "{:?}",
            info.capabilities
        );

        let created = match client.call_tool_once(start(1500)).await.unwrap() {
            CallToolResponse::Task(created) => created,
            other => panic!("expected a task, got {other:?}"),
        };
        let id = created.task.task_id.clone();
        assert_eq!(created.task.status, TaskStatus::Working);
        assert!(
            created
                .task
                .status_message
                .as_deref()
                .unwrap_or("")
                .starts_with("task:t-")
        );
        let mut saw_progress = false;
        let end = Instant::now() + Duration::from_secs(60);
        let done = loop {
            let now = client
                .get_task(GetTaskParams::new(id.clone()))
                .await
                .unwrap();
            if now.task.status().is_terminal() {
                break now.task;
            }
            saw_progress |= now.task.task.status_message.as_deref() == Some("0%: waiting");
            assert!(Instant::now() < end, "the task never ended");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert!(
            saw_progress,
            "the status message follows the plugin's progress"
        );
        let TaskPayload::Completed { result } = done.payload else {
            panic!("completed: {done:?}");
        };
        let result: CallToolResult = serde_json::from_value(result.into()).unwrap();
        assert_eq!(text(&result), "5 lines");
        let heard = client.service().heard.lock().unwrap().clone();
        assert_eq!(heard, [(id, TaskStatus::Completed)], "notifications/tasks");
        client.cancel().await.unwrap();
    });
}

#[test]
fn cancelling_the_mcp_task_cancels_the_plugin_task() {
    tokio().block_on(async {
        let dir = workspace();
        let (client, _child) = connect(dir.path(), true).await;
        let CallToolResponse::Task(created) = client.call_tool_once(start(60_000)).await.unwrap()
        else {
            panic!("a task");
        };
        let handle = created.task.status_message.clone().unwrap();
        client
            .cancel_task(CancelTaskParams::new(created.task.task_id.clone()))
            .await
            .unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            let now = client
                .get_task(GetTaskParams::new(created.task.task_id.clone()))
                .await
                .unwrap();
            if now.task.status() == TaskStatus::Cancelled {
                break;
            }
            assert!(Instant::now() < end, "{now:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The plugin's own status tool says the same.
        let status = CallToolRequestParams::new("index.status")
            .with_arguments(json!({"task": handle}).as_object().unwrap().clone());
        let said = client.call_tool(status).await.unwrap();
        assert_eq!(text(&said), "cancelled");
        let unknown = client.get_task(GetTaskParams::new("no-such-task")).await;
        assert!(unknown.is_err(), "{unknown:?}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_client_without_tasks_gets_the_handle_as_text() {
    tokio().block_on(async {
        let dir = workspace();
        let (client, _child) = connect(dir.path(), false).await;
        let said = client.call_tool(start(0)).await.unwrap();
        let handle = text(&said);
        assert!(handle.starts_with("task:t-"), "{handle}");
        let status = CallToolRequestParams::new("index.status")
            .with_arguments(json!({"task": handle}).as_object().unwrap().clone());
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let now = text(&client.call_tool(status.clone()).await.unwrap());
            if now != "running" {
                assert_eq!(now, "done: 5 lines");
                break;
            }
            assert!(Instant::now() < end);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        client.cancel().await.unwrap();
    });
}

/// How the official Python SDK reaches the indexer.
enum Reach {
    /// `mcp PLUGIN` over stdio, started by the client.
    Stdio,
    /// `mcp PLUGIN --http` with these extra flags.
    Http(&'static [&'static str]),
}

/// The official MCP Python SDK at 2026-07-28 (tests/mcp/tasks.py adds the
/// extension it has no client for): over stdio, to an HTTP server with
/// sessions (a 2026-07-28 request is served on its own, so its task lives
/// in the server's place) and to a `--stateless` one, a task is followed to
/// its result through its progress, and another is cancelled.
#[test]
fn the_official_python_sdk_follows_tasks_over_stdio_and_http() {
    let calls = json!([
        {"tool": "index.start", "arguments": {"delay_ms": 1200}},
        {"tool": "index.start", "arguments": {"delay_ms": 60000}, "cancel": true},
        {"tool": "index.status", "arguments": {"task": "task:t-0000000000000000"}},
    ])
    .to_string();
    for reach in [
        Reach::Stdio,
        Reach::Http(&[]),
        Reach::Http(&["--stateless"]),
    ] {
        let dir = workspace();
        let root = dir.path().to_str().unwrap();
        let plugin = guest("indexer");
        let serve = ["--workspace", root, "--no-storage"];
        let mut args = vec!["--modern", "--tasks", "--calls", &calls];
        let server;
        let url;
        let command: Vec<String>;
        match reach {
            Reach::Stdio => {
                let exe = env!("CARGO_BIN_EXE_lingxi-wasm-run");
                command = [exe, "mcp", plugin.to_str().unwrap()]
                    .into_iter()
                    .chain(serve)
                    .map(str::to_owned)
                    .collect();
                args.push("--");
                args.extend(command.iter().map(String::as_str));
            }
            Reach::Http(extra) => {
                let mut flags = serve.to_vec();
                flags.extend_from_slice(extra);
                server = crate::mcp_http::Server::launcher(&plugin, &flags);
                url = server.url();
                args.extend(["--url", &url]);
            }
        }
        let (report, status) = crate::mcp::client(&args, dir.path());
        assert_eq!(status, 0, "{report}");
        let done = &report["results"][0]["task"];
        assert_eq!(done["status"], "completed", "{report}");
        assert_eq!(done["text"], "5 lines", "{report}");
        let said = done["statusMessages"].as_array().unwrap();
        assert!(said[0].as_str().unwrap().starts_with("task:t-"), "{report}");
        assert!(said.iter().any(|m| m == "0%: waiting"), "{report}");
        assert_eq!(said.last().unwrap(), "succeeded", "{report}");
        let cancelled = &report["results"][1]["task"];
        assert_eq!(cancelled["status"], "cancelled", "{report}");
        assert!(
            report["results"][2]["text"]
                .as_str()
                .unwrap()
                .starts_with("unknown task")
        );
    }
}

/// Without the extension, every transport answers the handle as text, and
/// the plugin's own status tool reads it: in the same HTTP session, and in
/// a later request when requests are served on their own (`--stateless`,
/// or 2026-07-28), where the task outlives the request that started it.
#[test]
fn a_python_client_without_tasks_reads_its_handle_over_http() {
    let dir = workspace();
    let root = dir.path().to_str().unwrap();
    let cases: [(&[&str], bool); 4] = [
        (&[], false),
        (&[], true),
        (&["--stateless"], false),
        (&["--stateless"], true),
    ];
    for (flags, modern) in cases {
        let mut serve = vec!["--workspace", root];
        serve.extend_from_slice(flags);
        let server = crate::mcp_http::Server::launcher(&guest("indexer"), &serve);
        let url = server.url();
        let run = |calls: serde_json::Value| {
            let calls = calls.to_string();
            let mut args = vec!["--url", url.as_str(), "--calls", &calls];
            if modern {
                args.push("--modern");
            }
            let (report, status) = crate::mcp::client(&args, dir.path());
            assert_eq!(status, 0, "{flags:?} {modern}: {report}");
            report
        };
        let status_of =
            |handle: &str| json!({"tool": "index.status", "arguments": {"task": handle}});
        let report = run(json!([{"tool": "index.start", "arguments": {"delay_ms": 300}}]));
        let handle = report["results"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(handle.starts_with("task:t-"), "{report}");
        let said = |report: &serde_json::Value, n: usize| {
            report["results"][n]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        if flags.is_empty() && !modern {
            // Sessions: another client's session does not know the task
            // (the plugin's status tool reads it in the session that
            // started it: tested over stdio).
            let other = run(json!([status_of(&handle)]));
            assert!(said(&other, 0).starts_with("unknown task"), "{other}");
            continue;
        }
        let end = Instant::now() + Duration::from_secs(30);
        let last = loop {
            std::thread::sleep(Duration::from_millis(300));
            let report = run(json!([status_of(&handle)]));
            if said(&report, 0) != "running" || Instant::now() > end {
                break said(&report, 0);
            }
        };
        assert_eq!(last, "done: 5 lines", "{flags:?} {modern}");
    }
}

/// `mcp` holds each plugin to `--max-tasks` alone: the set's own cap on a
/// session (8 by default) is raised to match.
#[test]
fn mcp_honours_max_tasks_above_the_sets_default() {
    let dir = workspace();
    let root = dir.path().to_str().unwrap();
    let start = json!({"tool": "index.start", "arguments": {"delay_ms": 60000}});
    let calls = serde_json::Value::Array(vec![start; 11]).to_string();
    let exe = env!("CARGO_BIN_EXE_lingxi-wasm-run");
    let plugin = guest("indexer");
    let server = [
        exe,
        "mcp",
        plugin.to_str().unwrap(),
        "--workspace",
        root,
        "--no-storage",
    ];
    let mut args = vec!["--calls", &calls, "--"];
    args.extend(server);
    args.extend(["--max-tasks", "10"]);
    let (report, status) = crate::mcp::client(&args, dir.path());
    assert_eq!(status, 0, "{report}");
    let results = report["results"].as_array().unwrap();
    for started in &results[..10] {
        assert!(
            started["text"]
                .as_str()
                .unwrap_or_default()
                .starts_with("task:t-"),
            "{report}"
        );
    }
    let refused = results[10]["text"].as_str().unwrap_or_default();
    assert!(
        refused.contains("already runs 10 background tasks"),
        "{report}"
    );
}
