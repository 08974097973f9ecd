//! Tool contracts through the embedding API: the same module as the
//! launcher's, plus what only a host can do: see a call's resolved paths
//! before it runs, approve or deny it, and refuse a plugin whose handshake
//! or schemas are broken.

use lingxi_wasm_host::CallOptions;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lingxi_wasm_host::contract::PathAccess;
use lingxi_wasm_host::{
    CallError, Grant, PluginOptions, PluginSet, PreparedCall, Runtime, SetError, no_grant,
};

use crate::support::{guest, misfit, tokio};

/// A workspace with `src/a.txt`, and the testbed granted projectRead on it.
fn options(ws: &std::path::Path) -> PluginOptions {
    PluginOptions::grant(Grant {
        capabilities: Some(vec![lingxi_wasm_host::policy::Capability::ProjectRead]),
        workspace: Some(ws.to_path_buf()),
        ..no_grant()
    })
}

fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.txt"), "a").unwrap();
    (dir, ws)
}

#[test]
fn invalid_arguments_and_paths_outside_never_reach_the_plugin() {
    let (_dir, ws) = workspace();
    tokio().block_on(async {
        let mut set = PluginSet::new(Runtime::new().unwrap());
        set.load_file(&guest("testbed"), options(&ws))
            .await
            .unwrap();
        let session = set.session("s", None).unwrap();
        let error = session
            .call_tool("contract.strict", r#"{"text": 1}"#, CallOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(error, CallError::Refused { .. }), "{error}");
        assert!(
            error
                .to_string()
                .contains("arguments: /text: 1 is an integer, not string"),
            "{error}"
        );
        let error = session
            .call_tool(
                "contract.read",
                r#"{"path": "../x"}"#,
                CallOptions::default(),
            )
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("path parameter /path ('../x') leads outside"),
            "{error}"
        );
        assert_eq!(
            session
                .call_tool("contract.calls", "{}", CallOptions::default())
                .await
                .unwrap(),
            "0"
        );
        // Resolved before it runs: the host sees the file the call names.
        let prepared = session
            .prepare_tool(
                "contract.read",
                r#"{"path": "src/a.txt"}"#,
                CallOptions::default(),
            )
            .await
            .unwrap();
        let file = ws.join("src/a.txt").display().to_string();
        assert_eq!(prepared.paths.len(), 1);
        assert_eq!(prepared.paths[0].parameter, "/path");
        assert_eq!(prepared.paths[0].access, PathAccess::Read);
        assert_eq!(prepared.paths[0].given, "src/a.txt");
        assert_eq!(prepared.paths[0].resolved, file);
        let answer = session
            .call_prepared(&prepared, CallOptions::default())
            .await
            .unwrap();
        assert_eq!(answer, prepared.arguments);
        assert!(answer.contains(&file), "{answer}");
        assert_eq!(
            session
                .call_tool("contract.calls", "{}", CallOptions::default())
                .await
                .unwrap(),
            "1"
        );
        session.close().await;
    });
}

#[test]
fn the_approval_callback_sees_the_call_and_decides() {
    let (_dir, ws) = workspace();
    tokio().block_on(async {
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = asked.clone();
        let answer = Arc::new(Mutex::new(false));
        let decide = answer.clone();
        let mut set = PluginSet::new(Runtime::new().unwrap()).with_approval(move |call: &PreparedCall| {
            seen.lock().unwrap().push(format!("{} {} {}", call.plugin, call.tool, call.arguments));
            let yes = *decide.lock().unwrap();
            async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                yes
            }
        });
        set.load_file(&guest("testbed"), options(&ws)).await.unwrap();
        let session = set.session("s", None).unwrap();
        let error = session.call_tool("contract.approve", "{}", CallOptions::default()).await.unwrap_err();
        assert_eq!(error.to_string(), "tool.execute 'contract.approve' was not run: the host did not approve it");
        *answer.lock().unwrap() = true;
        assert_eq!(session.call_tool("contract.approve", "{}", CallOptions::default()).await.unwrap(), "{}");
        // Tools that do not require approval never ask.
        session.call_tool("contract.calls", "{}", CallOptions::default()).await.unwrap();
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked, ["com.lingxi.testbed contract.approve {}"; 2]);
        assert!(set.catalog().tools.iter().any(|t| t.descriptor.name == "contract.approve" && t.annotations.requires_approval));

        // Without a callback, such a tool is refused, naming what to do.
        let mut bare = PluginSet::new(Runtime::new().unwrap());
        bare.load_file(&guest("testbed"), options(&ws)).await.unwrap();
        let session = bare.session("s", None).unwrap();
        let error = session.call_tool("contract.approve", "{}", CallOptions::default()).await.unwrap_err();
        assert!(error.to_string().contains("set one with PluginSet::with_approval"), "{error}");
    });
}

#[test]
fn a_tool_timeout_shortens_the_deadline_in_a_session() {
    tokio().block_on(async {
        let mut set = PluginSet::new(Runtime::new().unwrap());
        set.load_file(&guest("testbed"), PluginOptions::default()).await.unwrap();
        let session = set.session("s", None).unwrap();
        let started = Instant::now();
        let error = session
            .call_tool("contract.slow", r#"{"ms": 5000}"#, CallOptions::within(Duration::from_secs(20)))
            .await
            .unwrap_err();
        assert!(matches!(error, CallError::ToolTimeout { limit, .. } if limit == Duration::from_millis(300)), "{error}");
        assert!(started.elapsed() < Duration::from_secs(4));
        let json = set.catalog().tools_json();
        let slow = json.as_array().unwrap().iter().find(|t| t["name"] == "contract.slow").unwrap();
        assert_eq!(slow["timeoutMs"], 300);
    });
}

#[test]
fn a_plugin_with_a_broken_handshake_or_schema_is_refused_with_the_diagnostic() {
    tokio().block_on(async {
        let mut set = PluginSet::new(Runtime::new().unwrap());
        let misfit = misfit("duplicate-tool", &[]);
        let error = set
            .load_file(&misfit, PluginOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(error, SetError::Contract { .. }), "{error}");
        let expected =
            "tool 'misfit.echo' is registered more than once; give each tool its own name";
        assert!(error.to_string().ends_with(expected), "{error}");

        let broken = Grant {
            env: vec![("TESTBED_BROKEN_SCHEMA".into(), "1".into())],
            ..no_grant()
        };
        let error = set
            .load_file(&guest("testbed"), PluginOptions::grant(broken.clone()))
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("tool 'contract.broken-schema': inputSchema is not a valid JSON Schema"),
            "{error}"
        );
        // Accepted when the host turns validation off for it.
        let options = PluginOptions {
            validate_arguments: false,
            ..PluginOptions::grant(broken)
        };
        set.load_file(&guest("testbed"), options).await.unwrap();
        let session = set.session("s", None).unwrap();
        let answer = session
            .call_tool(
                "contract.strict",
                r#"{"anything": 1}"#,
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(answer, r#"{"anything": 1}"#);
    });
}

/// Calls of a concurrency-safe tool made while the session's instance is
/// busy run on extra instances; calls of any other tool queue on the one.
#[test]
fn a_concurrency_safe_tool_runs_on_more_than_one_instance() {
    tokio().block_on(async {
        let mut set = PluginSet::new(Runtime::new().unwrap());
        set.load_file(&guest("testbed"), PluginOptions::default())
            .await
            .unwrap();
        let id = "com.lingxi.testbed";
        let session = Arc::new(set.session("s", None).unwrap());
        let loading = set.stats(id).unwrap().instances;
        let calls = |tool: &'static str, ms: u64| {
            let session = session.clone();
            let arguments = format!(r#"{{"ms": {ms}}}"#);
            tokio::spawn(async move {
                session
                    .call_tool(tool, &arguments, CallOptions::default())
                    .await
            })
        };
        // contract.slow is not concurrency-safe (and has a 300 ms timeout).
        let (a, b) = (calls("contract.slow", 50), calls("contract.slow", 50));
        assert!(a.await.unwrap().is_ok() && b.await.unwrap().is_ok());
        let queued = set.stats(id).unwrap().instances - loading;
        assert_eq!(queued, 1, "queued on one instance");
        let safe = || calls("contract.safe", 300);
        let (a, b, c) = (safe(), safe(), safe());
        for call in [a, b, c] {
            assert_eq!(call.await.unwrap().unwrap(), r#"{"ms": 300}"#);
        }
        let made = set.stats(id).unwrap().instances - loading;
        assert!(
            made >= 2,
            "only {made} instance(s) for three overlapping safe calls"
        );
        // Closing deactivates the extra instances too.
        let session = Arc::try_unwrap(session).ok().unwrap();
        session.close().await;
    });
}
