//! Tasks through the embedding API, as an agent host uses it: start, poll,
//! wait, cancel, the session's event stream, a dropped handle (no cancel),
//! a closed or dropped session (cancel), the session's cap, and expiry.

use std::time::{Duration, Instant};

use lingxi_wasm_host::{
    CallOptions, Limits, PluginHost, PluginOptions, PluginSet, Runtime, RuntimeConfig, Session,
    TaskError, TaskState, no_grant,
};

use crate::support::{guest, tokio};

const TESTBED: &str = "com.lingxi.testbed";

/// A set with the testbed under `limits`, sessions capped at `session_tasks`.
async fn set_with(limits: Limits, session_tasks: usize) -> PluginSet {
    let runtime = Runtime::with_config(RuntimeConfig::pooled(64)).unwrap();
    let mut set = PluginSet::new(runtime).with_session_tasks(session_tasks);
    let options = PluginOptions {
        limits: Some(limits),
        ..PluginOptions::grant(no_grant())
    };
    set.load_file(&guest("testbed"), options).await.unwrap();
    set
}

/// How `task` ended, within a guard (a test fails instead of hanging).
async fn ended(task: &mut lingxi_wasm_host::TaskHandle) -> TaskState {
    match tokio::time::timeout(Duration::from_secs(30), task.wait()).await {
        Ok(state) => state,
        Err(_) => panic!("{task:?} did not end within 30 s"),
    }
}

fn session(set: &PluginSet, id: &str) -> Session {
    set.session(id, None).unwrap()
}

#[test]
fn start_poll_and_wait_with_progress_in_the_event_stream() {
    tokio().block_on(async {
        let set = set_with(Limits::default(), 8).await;
        let session = session(&set, "s1");
        let mut events = session.task_events();
        let mut task = session.start_task(TESTBED, "sleep", "400").unwrap();
        assert!(task.id().starts_with("t-"), "{task:?}");
        assert!(matches!(task.status(), TaskState::Running(_)));
        assert_eq!(
            ended(&mut task).await,
            TaskState::Succeeded("slept 400 ms".into())
        );
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            assert_eq!(&*event.task, task.id());
            assert_eq!(&*event.plugin, TESTBED);
            assert_eq!(&*event.session, "s1");
            seen.push(event.state);
        }
        assert_eq!(seen.first(), Some(&TaskState::Running(None)), "{seen:?}");
        let progress = seen
            .iter()
            .filter(|s| matches!(s, TaskState::Running(Some(_))));
        assert_eq!(progress.count(), 10, "{seen:?}");
        assert_eq!(
            seen.last(),
            Some(&TaskState::Succeeded("slept 400 ms".into()))
        );
        // The plugin's own calls read the same task.
        let status = session
            .call_tool("task-status", task.id(), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(status, "done: slept 400 ms");
    });
}

/// A task the plugin started is the host's to read and cancel too.
#[test]
fn a_task_the_plugin_started_can_be_cancelled_by_the_host() {
    tokio().block_on(async {
        let set = set_with(Limits::default(), 8).await;
        let session = session(&set, "s1");
        let handle = session
            .call_tool("task-start", "block", CallOptions::default())
            .await
            .unwrap();
        let id = handle.strip_prefix("task:").unwrap();
        let mut task = session.task(TESTBED, id).expect("known");
        assert!(task.cancel());
        assert!(!task.cancel(), "only once");
        assert_eq!(ended(&mut task).await, TaskState::Cancelled);
        assert!(
            session.task("com.other", id).is_none(),
            "scoped to its plugin"
        );
    });
}

#[test]
fn dropping_a_handle_does_not_cancel_the_task() {
    tokio().block_on(async {
        let set = set_with(Limits::default(), 8).await;
        let session = session(&set, "s1");
        let id = session
            .start_task(TESTBED, "sleep", "300")
            .unwrap()
            .id()
            .to_owned();
        let mut again = session.task(TESTBED, &id).unwrap();
        assert_eq!(
            ended(&mut again).await,
            TaskState::Succeeded("slept 300 ms".into())
        );
    });
}

/// Closing a session and dropping one both cancel its tasks at once.
#[test]
fn a_closed_or_dropped_session_cancels_its_tasks() {
    tokio().block_on(async {
        let set = set_with(Limits::default(), 8).await;
        for close in [true, false] {
            let session = session(&set, "s1");
            let mut blocked = session.start_task(TESTBED, "block", "").unwrap();
            let mut spinning = session.start_task(TESTBED, "spin", "").unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
            let stopped = Instant::now();
            if close {
                session.close().await;
            } else {
                drop(session);
            }
            assert_eq!(ended(&mut blocked).await, TaskState::Cancelled);
            assert_eq!(ended(&mut spinning).await, TaskState::Cancelled);
            assert!(stopped.elapsed() < Duration::from_secs(3), "close {close}");
        }
    });
}

/// The session's cap counts all its plugins' tasks; other sessions have
/// their own.
#[test]
fn the_session_cap_is_per_session() {
    tokio().block_on(async {
        let set = set_with(Limits::default(), 1).await;
        let one = session(&set, "one");
        let running = one.start_task(TESTBED, "sleep", "60000").unwrap();
        let refused = one.start_task(TESTBED, "echo", "x").unwrap_err();
        assert_eq!(refused, TaskError::SessionFull { limit: 1 });
        let two = session(&set, "two");
        let mut other = two.start_task(TESTBED, "echo", "x").unwrap();
        assert_eq!(
            ended(&mut other).await,
            TaskState::Succeeded("echo:x".into())
        );
        assert!(running.cancel());
        let missing = one.start_task("com.nobody", "echo", "x").unwrap_err();
        assert!(
            matches!(missing, TaskError::NoSuchPlugin { .. }),
            "{missing}"
        );
    });
}

/// A finished task is kept `task_keep` and among the last
/// `max_kept_tasks`; then it is unknown, to the host and to the plugin.
#[test]
fn finished_tasks_expire_by_count_and_by_age() {
    tokio().block_on(async {
        let limits = Limits {
            task_keep: Duration::from_millis(1500),
            max_kept_tasks: 2,
            ..Limits::default()
        };
        let set = set_with(limits, 8).await;
        let session = session(&set, "s1");
        let mut ids = Vec::new();
        for n in 0..3 {
            let mut task = session.start_task(TESTBED, "echo", &n.to_string()).unwrap();
            ended(&mut task).await;
            ids.push(task.id().to_owned());
        }
        assert!(
            session.task(TESTBED, &ids[0]).is_none(),
            "the oldest of three is forgotten"
        );
        assert!(session.task(TESTBED, &ids[1]).is_some());
        let said = session
            .call_tool("task-status", &ids[2], CallOptions::default())
            .await
            .unwrap();
        assert_eq!(said, "done: echo:2");
        tokio::time::sleep(Duration::from_millis(1700)).await;
        assert!(
            session.task(TESTBED, &ids[2]).is_none(),
            "forgotten after task_keep"
        );
        let said = session
            .call_tool("task-status", &ids[2], CallOptions::default())
            .await
            .unwrap();
        assert_eq!(said, "unknown task");
    });
}

/// A lone plugin host has the same API.
#[test]
fn a_plugin_host_starts_and_stops_tasks() {
    tokio().block_on(async {
        let runtime = Runtime::new().unwrap();
        let component = runtime.load_file(&guest("testbed")).await.unwrap();
        let mut host = PluginHost::new(component, no_grant(), Limits::default());
        let mut echo = host.start_task("echo", "hi").unwrap();
        assert_eq!(
            ended(&mut echo).await,
            TaskState::Succeeded("echo:hi".into())
        );
        let mut blocked = host.start_task("block", "").unwrap();
        host.stop_tasks().await;
        assert_eq!(ended(&mut blocked).await, TaskState::Cancelled);
        let refused = host.start_task("echo", "late").unwrap_err();
        assert!(matches!(refused, TaskError::Stopping { .. }), "{refused}");
    });
}

/// Finished tasks hold at most `max_kept_bytes` of results together: the
/// oldest go first, the newest is always kept.
#[test]
fn kept_results_are_held_to_a_byte_budget() {
    tokio().block_on(async {
        let limits = Limits {
            max_kept_bytes: 3 * 1024 * 1024,
            ..Limits::default()
        };
        let set = set_with(limits, 8).await;
        let session = session(&set, "s1");
        let mut ids = Vec::new();
        for _ in 0..3 {
            let mut task = session.start_task(TESTBED, "big", "2").unwrap();
            assert!(matches!(ended(&mut task).await, TaskState::Succeeded(_)));
            ids.push(task.id().to_owned());
        }
        let kept: Vec<bool> = ids
            .iter()
            .map(|id| session.task(TESTBED, id).is_some())
            .collect();
        assert_eq!(kept, [false, false, true], "2 MiB each, 3 MiB kept");
    });
}
