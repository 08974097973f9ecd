//! The embedding API, continued: plugin folders as LingXi lays them out,
//! sessions dropped without `close`, and guest lines as `tracing` events.

use lingxi_wasm_host::CallOptions;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lingxi_wasm_host::types::{HookEvent, HookPayload};
use lingxi_wasm_host::{PluginOptions, PluginSet, Runtime, RuntimeConfig, no_grant};

use crate::packed::pack;
use crate::support::{guest, launcher, tokio, workspace_root};

fn set() -> PluginSet {
    PluginSet::new(Runtime::with_config(RuntimeConfig::pooled(32)).unwrap())
}

#[test]
fn a_plugin_folder_loads_components_packed_executables_and_lingxi_folders() {
    let dir = tempfile::tempdir_in(workspace_root().join("target")).unwrap();
    // plugins/probe: a packed executable, packed with a grant of projectRead.
    pack(dir.path(), "probe", &["--grant", "projectRead"]);
    let plugins = dir.path().join("plugins");
    // plugins/stats/bin/stats: a LingXi plugin folder.
    std::fs::create_dir_all(plugins.join("stats/bin")).unwrap();
    let status = launcher()
        .arg("pack")
        .arg(guest("workspace-stats"))
        .arg("-o")
        .arg(plugins.join("stats/bin/stats"))
        .status()
        .unwrap();
    assert!(status.success());
    // A component, a hidden one, a text file, a native executable.
    std::fs::copy(guest("quickstart"), plugins.join("quickstart.wasm")).unwrap();
    std::fs::copy(guest("testbed"), plugins.join(".hidden.wasm")).unwrap();
    std::fs::write(plugins.join("notes.txt"), "not a plugin").unwrap();
    let native = plugins.join("native-plugin");
    std::fs::write(&native, "#!/bin/sh\necho hi\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&native, std::fs::Permissions::from_mode(0o755)).unwrap();

    tokio().block_on(async {
        let mut set = set();
        let results = set
            .load_dir(&plugins, |_| PluginOptions::grant(no_grant()))
            .await
            .unwrap();
        let names: Vec<_> = results
            .iter()
            .map(|(path, r)| {
                let name = path.strip_prefix(&plugins).unwrap().display().to_string();
                (name, r.as_ref().map_err(ToString::to_string).cloned())
            })
            .collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert_eq!(names[0].0, "native-plugin");
        let native_error = names[0].1.as_ref().unwrap_err();
        assert!(
            native_error.contains("not a WebAssembly component"),
            "{native_error}"
        );
        assert_eq!(
            names[1],
            ("probe".into(), Ok("com.lingxi.test-probe".into()))
        );
        let quickstart = ("quickstart.wasm".into(), Ok("com.example.my-plugin".into()));
        assert_eq!(names[2], quickstart);
        let stats = (
            "stats/bin/stats".into(),
            Ok("com.lingxi.workspace-stats".into()),
        );
        assert_eq!(names[3], stats);
        // The grant packed into the probe is ignored: the host granted nothing.
        let catalog = set.catalog();
        let echo = catalog
            .tools
            .iter()
            .find(|t| t.descriptor.name == "probe.echo");
        assert!(echo.unwrap().capabilities.is_empty());
        let session = set.session("s", None).unwrap();
        assert_eq!(
            session
                .call_tool("probe.echo", "1", CallOptions::default())
                .await
                .unwrap(),
            "echo:1"
        );
    });
}

#[test]
fn dropping_a_session_deactivates_its_instances_in_the_background() {
    tokio().block_on(async {
        let mut set = set();
        let lines: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let sink_lines = lines.clone();
        let options = PluginOptions {
            log_sink: Some(Arc::new(move |line| {
                let line = (line.session.to_owned(), line.text.to_owned());
                sink_lines.lock().unwrap().push(line);
            })),
            ..PluginOptions::grant(no_grant())
        };
        set.load_file(&guest("testbed"), options).await.unwrap();
        let session = set.session("dropped", None).unwrap();
        session
            .call_tool("ok", "", CallOptions::default())
            .await
            .unwrap();
        drop(session);
        let deactivated = ("dropped".to_owned(), "deactivated".to_owned());
        let started = Instant::now();
        while !lines.lock().unwrap().contains(&deactivated) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "never deactivated"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn guest_lines_are_tracing_events_with_plugin_and_session_fields() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    // The subscriber is this thread's: the calls run on it too.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            let mut set = set();
            let options = PluginOptions::grant(no_grant());
            set.load_file(&guest("probe"), options).await.unwrap();
            let session = set.session("s-42", None).unwrap();
            let payload = HookPayload {
                event: HookEvent::SessionStart,
                subject_id: "s-42".into(),
                metadata: vec![],
            };
            let outcomes = session.emit(payload, CallOptions::default()).await;
            assert_eq!(outcomes.len(), 1, "{outcomes:?}");
            outcomes[0].result.as_ref().unwrap();
        });
    });
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("session started: s-42"))
        .unwrap_or_else(|| panic!("no guest line in {text}"));
    assert!(line.contains("lingxi_wasm::guest"), "{line}");
    assert!(line.contains("plugin=\"com.lingxi.test-probe\""), "{line}");
    assert!(line.contains("session=\"s-42\""), "{line}");
    assert!(
        !line.contains("[com.lingxi"),
        "the id is a field, not text: {line}"
    );
}

/// The testbed, granted only `env`, in a pooled set.
async fn testbed_with(env: &[(&str, &str)]) -> PluginSet {
    let mut set = set();
    let grant = lingxi_wasm_host::Grant {
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..no_grant()
    };
    set.load_file(&guest("testbed"), PluginOptions::grant(grant))
        .await
        .unwrap();
    set
}

#[test]
fn a_first_call_cancelled_mid_initialize_is_initialized_by_the_next() {
    tokio().block_on(async {
        let set = testbed_with(&[("TESTBED_ACTIVATE_MS", "300")]).await;
        let session = set.session("s", None).unwrap();
        let first = tokio::time::timeout(
            Duration::from_millis(100),
            session.call_tool("ok", "", CallOptions::default()),
        );
        assert!(first.await.is_err(), "not cancelled");
        assert_eq!(
            session
                .call_tool("ok", "x", CallOptions::default())
                .await
                .unwrap(),
            "ok:x"
        );
        let stats = set.stats("com.lingxi.testbed").unwrap();
        // Loading: initialize, deactivate. The session: the cancelled
        // initialize (not counted), initialize again, the call.
        assert_eq!((stats.calls, stats.instances), (4, 3), "{stats:?}");
    });
}

#[test]
fn a_deadline_counts_the_wait_behind_the_previous_call() {
    tokio().block_on(async {
        let set = testbed_with(&[]).await;
        let session = Arc::new(set.session("s", None).unwrap());
        session
            .call_tool("ok", "", CallOptions::default())
            .await
            .unwrap();
        let busy = tokio::spawn({
            let session = session.clone();
            async move {
                session
                    .call_tool("sleep-ms", "1500", CallOptions::default())
                    .await
            }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let limit = Some(Duration::from_millis(200));
        let error = session
            .call_tool(
                "ok",
                "",
                limit.map_or_else(CallOptions::default, CallOptions::within),
            )
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_millis(1000));
        let text = error.to_string();
        assert!(
            matches!(error, lingxi_wasm_host::CallError::Busy { .. }),
            "{text}"
        );
        assert!(
            text.contains("was not run: the plugin was still busy"),
            "{text}"
        );
        assert_eq!(busy.await.unwrap().unwrap(), "slept 1500 ms");
    });
}

#[test]
fn deadlines_a_caller_chooses_do_not_disable_the_plugin() {
    tokio().block_on(async {
        let set = testbed_with(&[]).await;
        let session = set.session("s", None).unwrap();
        let short = Some(Duration::from_millis(30));
        for _ in 0..6 {
            let error = session
                .call_tool(
                    "sleep",
                    "3600",
                    short.map_or_else(CallOptions::default, CallOptions::within),
                )
                .await;
            assert!(matches!(
                error,
                Err(lingxi_wasm_host::CallError::Timeout { .. })
            ));
        }
        assert_eq!(
            session
                .call_tool("ok", "y", CallOptions::default())
                .await
                .unwrap(),
            "ok:y"
        );
    });
}

#[test]
fn names_a_catalog_cannot_hold_are_refused() {
    tokio().block_on(async {
        for (names, expected) in [
            ("evil\nWARN forged", "contains control characters, spaces"),
            ("", "is empty"),
        ] {
            let mut set = set();
            let grant = lingxi_wasm_host::Grant {
                env: vec![("IMPOSTOR_TOOL".into(), names.into())],
                ..no_grant()
            };
            let impostor = guest("impostor");
            let loading = set.load_file(&impostor, PluginOptions::grant(grant));
            let error = match loading.await {
                Ok(_) => panic!("{names:?} was accepted"),
                Err(e) => e.to_string(),
            };
            assert!(error.contains(expected), "{names:?}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
    });
}

#[test]
fn a_fifo_or_a_folder_given_as_a_plugin_file_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("plugin.wasm");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (done, answer) = std::sync::mpsc::channel();
    let folder = dir.path().to_owned();
    std::thread::spawn(move || {
        tokio().block_on(async {
            let mut set = set();
            let from_fifo = set.load_file(&fifo, PluginOptions::default()).await;
            let from_fifo = from_fifo.err().map(|e| e.to_string());
            let from_folder = set.load_file(&folder, PluginOptions::default()).await;
            let from_folder = from_folder.err().map(|e| e.to_string());
            let _ = done.send((from_fifo, from_folder));
        })
    });
    let (fifo_error, folder_error) = answer
        .recv_timeout(Duration::from_secs(30))
        .expect("loading a FIFO never returned");
    let fifo_error = fifo_error.unwrap_or_default();
    assert!(fifo_error.contains("not a regular file"), "{fifo_error}");
    let folder_error = folder_error.unwrap_or_default();
    assert!(folder_error.contains("is a directory"), "{folder_error}");
}

/// A spinning guest yields to its runtime at every epoch tick in a way that
/// lets the runtime look at its timers and I/O first: on a single-threaded
/// runtime (the MCP server's, the launcher's), other tasks' timers fire in
/// time while a guest spins, and so does the spinning call's own deadline.
/// (Yielding as wasmtime does by itself, the guest was polled again at once
/// and timers were looked at every 61 polls, ~0.6 s of spinning: ten 10 ms
/// sleeps beside a call spinning to its 2 s deadline took ~2 s.)
#[test]
fn timers_fire_on_time_beside_a_spinning_guest_on_one_thread() {
    let tokio = lingxi_wasm_host::call_runtime().unwrap();
    tokio.block_on(async {
        let mut set = set();
        set.load_file(&guest("testbed"), PluginOptions::grant(no_grant()))
            .await
            .unwrap();
        let session = Arc::new(set.session("spinner", None).unwrap());
        // Started, so that the spin below is all guest code.
        let warm = session.call_tool("ok", "x", CallOptions::default()).await;
        assert_eq!(warm.unwrap(), "ok:x");
        let started = Instant::now();
        let spinner = session.clone();
        let spin = tokio::spawn(async move {
            let options = CallOptions::within(Duration::from_secs(2));
            let outcome = spinner.call_tool("spin", "", options).await;
            (outcome, started.elapsed())
        });
        let sleeps = tokio::spawn(async move {
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            started.elapsed()
        });
        let slept = sleeps.await.unwrap();
        let (outcome, spun) = spin.await.unwrap();
        let error = outcome.unwrap_err().to_string();
        assert!(error.contains("did not finish within 2.0 s"), "{error}");
        assert!(
            slept < Duration::from_millis(1000),
            "ten 10 ms sleeps beside a spinning guest took {slept:?}"
        );
        assert!(
            spun < Duration::from_millis(2200),
            "a call with a 2 s deadline was stopped after {spun:?}"
        );
    });
}
