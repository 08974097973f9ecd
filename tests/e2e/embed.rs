//! The embedding API, through the library's public surface only, as an
//! agent host uses it: a plugin set on a multi-threaded tokio runtime, its
//! catalog, sessions, parallel and queued calls, cancellation, deadlines,
//! hook fan-out, and memory given back when sessions end.

use lingxi_wasm_host::CallOptions;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lingxi_wasm_host::observe::LogSource;
use lingxi_wasm_host::types::{HookEvent, HookPayload};
use lingxi_wasm_host::{
    CallError, Grant, PluginOptions, PluginSet, Runtime, RuntimeConfig, SetError, no_grant,
};

use crate::support::{guest, tokio};

fn with_env(vars: &[(&str, &str)]) -> PluginOptions {
    PluginOptions::grant(Grant {
        env: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..no_grant()
    })
}

/// A pooled set of the guests `names`, each granted nothing.
async fn set_of(names: &[&str]) -> PluginSet {
    pooled_set_of(names, 64).await
}

/// The same with room for `instances` instances.
async fn pooled_set_of(names: &[&str], instances: u32) -> PluginSet {
    let runtime = Runtime::with_config(RuntimeConfig::pooled(instances)).unwrap();
    let mut set = PluginSet::new(runtime);
    for name in names {
        let options = PluginOptions::grant(no_grant());
        set.load_file(&guest(name), options).await.unwrap();
    }
    set
}

#[test]
fn the_catalog_lists_every_tool_and_command_with_its_owner_and_capabilities() {
    tokio().block_on(async {
        let mut set = set_of(&["testbed"]).await;
        let read = PluginOptions::grant(Grant::default());
        set.load_file(&guest("probe"), read).await.unwrap();
        let catalog = set.catalog();
        let echo = catalog
            .tools
            .iter()
            .find(|t| t.descriptor.name == "probe.echo")
            .unwrap();
        assert_eq!(echo.owner, "com.lingxi.test-probe");
        assert_eq!(echo.capabilities.len(), 1, "{:?}", echo.capabilities);
        let ok = catalog
            .tools
            .iter()
            .find(|t| t.descriptor.name == "ok")
            .unwrap();
        assert_eq!(ok.owner, "com.lingxi.testbed");
        assert!(ok.capabilities.is_empty(), "granted nothing");
        let probe = catalog
            .commands
            .iter()
            .find(|c| c.descriptor.name == "probe")
            .unwrap();
        assert_eq!(probe.descriptor.aliases, ["pb"]);
        let json = catalog.tools_json();
        let echo = json
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "probe.echo")
            .unwrap();
        assert_eq!(echo["owner"], "com.lingxi.test-probe");
        assert_eq!(echo["capabilities"], serde_json::json!(["projectRead"]));
        assert!(echo["inputSchema"].is_object(), "{echo}");
    });
}

#[test]
fn a_plugin_whose_names_clash_is_refused_naming_both_owners() {
    tokio().block_on(async {
        let mut set = set_of(&["probe"]).await;
        let clashing = with_env(&[("IMPOSTOR_CLASH", "1")]);
        let error = set
            .load_file(&guest("impostor"), clashing)
            .await
            .unwrap_err();
        let SetError::Clash { clashes, .. } = &error else {
            panic!("not a clash: {error}");
        };
        assert_eq!(clashes.len(), 2, "{error}");
        let text = error.to_string();
        assert!(text.contains("com.lingxi.impostor"), "{text}");
        assert!(
            text.contains("tool 'probe.echo' is already registered by com.lingxi.test-probe"),
            "{text}"
        );
        assert!(
            text.contains("command 'PB' is already registered by com.lingxi.test-probe"),
            "{text}"
        );
        let probe = guest("probe");
        let again = set.load_file(&probe, PluginOptions::default());
        let error = again.await.unwrap_err();
        assert!(matches!(error, SetError::DuplicateId { .. }), "{error}");
        assert_eq!(set.ids().collect::<Vec<_>>(), ["com.lingxi.test-probe"]);
        // The set still works with the plugin it kept.
        let session = set.session("s", None).unwrap();
        let echoed = session
            .call_tool("probe.echo", "{}", CallOptions::default())
            .await
            .unwrap();
        assert_eq!(echoed, "echo:{}");
        // Commands route without regard to case: `PB` is the probe's `pb`,
        // which reads the workspace (unavailable: no snapshot was given).
        let routed = session
            .run_command("PB", vec![], CallOptions::default())
            .await
            .unwrap_err();
        assert!(routed.to_string().contains("workspace"), "{routed}");
    });
}

#[test]
fn sessions_do_not_share_instance_memory() {
    tokio().block_on(async {
        let set = set_of(&["testbed"]).await;
        let a = set.session("a", None).unwrap();
        let b = set.session("b", None).unwrap();
        assert_eq!(
            a.call_tool("mem-append", "secret", CallOptions::default())
                .await
                .unwrap(),
            "secret,"
        );
        assert_eq!(
            b.call_tool("mem-get", "", CallOptions::default())
                .await
                .unwrap(),
            ""
        );
        assert_eq!(
            a.call_tool("mem-get", "", CallOptions::default())
                .await
                .unwrap(),
            "secret,"
        );
        let stats = set.stats("com.lingxi.testbed").unwrap();
        assert_eq!(
            stats.instances, 3,
            "one to load, one per session: {stats:?}"
        );
    });
}

#[test]
fn calls_to_one_instance_run_in_the_order_they_were_made() {
    tokio().block_on(async {
        let set = set_of(&["testbed"]).await;
        let s = set.session("s", None).unwrap();
        // All queue behind the first, which sleeps; they are polled (and so
        // queue) in this order.
        let (slept, one, two, three, all) = tokio::join!(
            s.call_tool("sleep-ms", "200", CallOptions::default()),
            s.call_tool("mem-append", "1", CallOptions::default()),
            s.call_tool("mem-append", "2", CallOptions::default()),
            s.call_tool("mem-append", "3", CallOptions::default()),
            s.call_tool("mem-get", "", CallOptions::default()),
        );
        assert_eq!(slept.unwrap(), "slept 200 ms");
        assert_eq!((one.unwrap(), two.unwrap()), ("1,".into(), "1,2,".into()));
        assert_eq!(three.unwrap(), "1,2,3,");
        assert_eq!(all.unwrap(), "1,2,3,");
    });
}

#[test]
fn calls_to_different_sessions_run_in_parallel_on_worker_threads() {
    tokio().block_on(async {
        let set = Arc::new(set_of(&["testbed"]).await);
        let started = Instant::now();
        let tasks: Vec<_> = (0..2)
            .map(|i| {
                let set = set.clone();
                tokio::spawn(async move {
                    let s = set.session(format!("s{i}"), None).unwrap();
                    s.call_tool("sleep-ms", "1000", CallOptions::default())
                        .await
                })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap().unwrap(), "slept 1000 ms");
        }
        // One after the other would take 2 s.
        assert!(
            started.elapsed() < Duration::from_millis(1800),
            "{:?}",
            started.elapsed()
        );
    });
}

#[test]
fn dropping_a_call_cancels_it_and_the_next_call_gets_a_fresh_instance() {
    tokio().block_on(async {
        let set = set_of(&["testbed"]).await;
        let s = set.session("s", None).unwrap();
        s.call_tool("mem-append", "before", CallOptions::default())
            .await
            .unwrap();
        let started = Instant::now();
        let cancelled = tokio::time::timeout(
            Duration::from_millis(200),
            s.call_tool("sleep", "3600", CallOptions::default()),
        )
        .await;
        assert!(cancelled.is_err(), "the call was not cancelled");
        assert!(started.elapsed() < Duration::from_secs(2));
        // A new instance: the old one's memory is gone.
        assert_eq!(
            s.call_tool("mem-get", "", CallOptions::default())
                .await
                .unwrap(),
            ""
        );
        let stats = set.stats("com.lingxi.testbed").unwrap();
        assert_eq!(stats.instances, 3, "load, first, replacement: {stats:?}");
    });
}

#[test]
fn a_deadline_stops_a_call_blocked_in_wasi_on_a_multithreaded_runtime() {
    // A server that accepts and never answers.
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = server.local_addr().unwrap();
    std::thread::spawn(move || {
        let _held: Vec<_> = server.incoming().take(4).collect();
        std::thread::sleep(Duration::from_secs(3600));
    });
    tokio().block_on(async {
        let grant = Grant {
            allow_net: vec![address.to_string().parse().unwrap()],
            ..Grant::default()
        };
        let runtime = Runtime::with_config(RuntimeConfig::pooled(8)).unwrap();
        let mut set = PluginSet::new(runtime);
        let options = PluginOptions::grant(grant);
        set.load_file(&guest("testbed"), options).await.unwrap();
        let s = set.session("s", None).unwrap();
        let limit = Some(Duration::from_millis(500));
        for (tool, args) in [("sleep", "3600".to_owned()), ("tcp", address.to_string())] {
            let started = Instant::now();
            let error = s
                .call_tool(
                    tool,
                    &args,
                    limit.map_or_else(CallOptions::default, CallOptions::within),
                )
                .await
                .unwrap_err();
            assert!(
                matches!(error, CallError::Timeout { .. }),
                "{tool}: {error}"
            );
            assert!(started.elapsed() < Duration::from_secs(2), "{tool}");
            assert_eq!(
                s.call_tool("ok", "x", CallOptions::default())
                    .await
                    .unwrap(),
                "ok:x"
            );
        }
        let stats = set.stats("com.lingxi.testbed").unwrap();
        assert_eq!(stats.timeouts, 2, "{stats:?}");
    });
}

#[test]
fn a_hook_reaches_every_subscriber_and_a_failing_or_slow_one_holds_up_no_other() {
    tokio().block_on(async {
        let runtime = Runtime::with_config(RuntimeConfig::pooled(16)).unwrap();
        let mut set = PluginSet::new(runtime);
        // The probe logs "session started"; the sink records when.
        let heard: Arc<Mutex<Vec<(String, String, Instant)>>> = Arc::default();
        let sink_heard = heard.clone();
        let probe = PluginOptions {
            log_sink: Some(Arc::new(move |line| {
                assert_eq!(line.source, LogSource::Info);
                let mut heard = sink_heard.lock().unwrap();
                heard.push((
                    line.session.to_owned(),
                    line.text.to_owned(),
                    Instant::now(),
                ));
            })),
            ..PluginOptions::default()
        };
        set.load_file(&guest("probe"), probe).await.unwrap();
        let slow = with_env(&[("IMPOSTOR_HOOK_MS", "10000")]);
        set.load_file(&guest("impostor"), slow).await.unwrap();
        let crashing = with_env(&[("TESTBED_START_CRASHES", "1")]);
        set.load_file(&guest("testbed"), crashing).await.unwrap();
        heard.lock().unwrap().clear();

        let s = set.session("s-7", None).unwrap();
        let started = Instant::now();
        let payload = HookPayload {
            event: HookEvent::SessionStart,
            subject_id: "s-7".into(),
            metadata: vec![],
        };
        let outcomes = s
            .emit(payload, CallOptions::within(Duration::from_secs(1)))
            .await;
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        let plugins: Vec<_> = outcomes.iter().map(|o| o.plugin.as_str()).collect();
        assert_eq!(
            plugins,
            [
                "com.lingxi.test-probe",
                "com.lingxi.impostor",
                "com.lingxi.testbed"
            ]
        );
        assert!(outcomes[0].result.is_ok(), "{:?}", outcomes[0]);
        assert!(
            matches!(outcomes[1].result, Err(CallError::Timeout { .. })),
            "{:?}",
            outcomes[1]
        );
        assert!(
            matches!(outcomes[2].result, Err(CallError::Trap { .. })),
            "{:?}",
            outcomes[2]
        );
        // The probe answered while the slow plugin was still sleeping.
        let heard = heard.lock().unwrap();
        let (session, text, when) = heard.first().expect("the probe logged");
        assert_eq!(
            (session.as_str(), text.as_str()),
            ("s-7", "session started: s-7")
        );
        assert!(when.duration_since(started) < Duration::from_millis(900));
    });
}

#[test]
fn counters_add_up_calls_errors_and_traps() {
    tokio().block_on(async {
        let set = set_of(&["testbed"]).await;
        let s = set.session("s", None).unwrap();
        s.call_tool("ok", "", CallOptions::default()).await.unwrap();
        s.call_tool("fail", "", CallOptions::default())
            .await
            .unwrap_err();
        s.call_tool("panic", "", CallOptions::default())
            .await
            .unwrap_err();
        let error = s
            .call_tool("nope", "", CallOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(error, CallError::NoSuchTool { .. }), "{error}");
        let stats = set.stats("com.lingxi.testbed").unwrap();
        // Loading: initialize, deactivate; the session: initialize, ok,
        // fail, panic; `nope` never ran.
        assert_eq!(
            (stats.calls, stats.errors, stats.traps),
            (6, 2, 1),
            "{stats:?}"
        );
        assert!(stats.busy > Duration::ZERO);
    });
}

/// Resident memory of this process, in bytes (Linux).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// Runs in a process of its own (see the test below): other tests' memory
/// must not blur what it measures.
#[test]
#[ignore = "run by a_thousand_sessions_come_and_go_and_give_their_memory_back"]
fn thousand_sessions_child() {
    tokio().block_on(async {
        let set = pooled_set_of(&["probe"], 1100).await;
        let warm = set.session("warm", None).unwrap();
        warm.call_tool("probe.echo", "{}", CallOptions::default())
            .await
            .unwrap();
        warm.close().await;
        let before = rss();
        let mut rounds = Vec::new();
        for round in 0..3 {
            let mut sessions = Vec::new();
            for i in 0..1000 {
                let s = set.session(format!("r{round}-s{i}"), None).unwrap();
                s.call_tool("probe.echo", "{}", CallOptions::default())
                    .await
                    .unwrap();
                sessions.push(s);
            }
            let full = rss();
            for s in sessions {
                s.close().await;
            }
            rounds.push((full, rss()));
        }
        let stats = set.stats("com.lingxi.test-probe").unwrap();
        println!("RSS before {before}, (full, after) × 3: {rounds:?}; {stats:?}");
        assert_eq!(stats.instances, 3002);
        let (full, after) = rounds[0];
        assert!(full > before, "1000 instances cost nothing?");
        let held = full - before;
        // Their memory (linear memories, tables, stacks) goes back to the
        // system; what the allocator keeps for reuse is at most a third.
        assert!(after < before + held / 3, "{before} {rounds:?}");
        // Nothing accumulates: later rounds end where the first did.
        for (_, later) in &rounds[1..] {
            assert!(*later < after + held / 10, "{before} {rounds:?}");
        }
    });
}

#[test]
fn a_thousand_sessions_come_and_go_and_give_their_memory_back() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "embed::thousand_sessions_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_lone_plugin_host_hands_its_log_lines_to_its_sink() {
    use lingxi_wasm_host::types::InitializeRequest;
    use lingxi_wasm_host::{Grant, Limits, PluginHost};
    tokio().block_on(async {
        let runtime = Runtime::new().unwrap();
        let component = runtime.load_file(&guest("probe")).await.unwrap();
        let mut host = PluginHost::new(component, Grant::default(), Limits::default());
        let heard: Arc<Mutex<Vec<(LogSource, String)>>> = Arc::default();
        let sink_heard = heard.clone();
        host.set_log_sink(Arc::new(move |line| {
            let mut heard = sink_heard.lock().unwrap();
            heard.push((line.source, line.text.to_owned()));
        }));
        host.initialize(InitializeRequest {
            host_ipc_version: Some(1),
            core_version: Some("1.1.0".into()),
        })
        .await
        .unwrap();
        let payload = HookPayload {
            event: HookEvent::SessionStart,
            subject_id: "s-1".into(),
            metadata: vec![],
        };
        host.emit_hook(payload, CallOptions::default())
            .await
            .unwrap();
        let heard = heard.lock().unwrap();
        assert!(
            heard.iter().any(
                |(source, text)| *source == LogSource::Info && text.contains("session started")
            ),
            "{heard:?}"
        );
    });
}
