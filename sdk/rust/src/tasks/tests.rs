use super::*;
use crate::runtime::Runtime;
use crate::{Manifest, Plugin, PluginContext, Tool, ToolContext};

struct Count;
impl Task for Count {
    fn name(&self) -> &str {
        "count"
    }
    fn description(&self) -> &str {
        "Counts to its input"
    }
    fn run(&self, input: &str, ctx: &TaskContext) -> PluginResult<String> {
        Ok(format!("counted {input} in {}", ctx.id))
    }
}

struct Fail;
impl Task for Fail {
    fn name(&self) -> &str {
        "fail"
    }
    fn run(&self, input: &str, _ctx: &TaskContext) -> PluginResult<String> {
        Err(PluginError::new(format!("no: {input}")))
    }
}

struct Start;
impl Tool for Start {
    fn name(&self) -> &str {
        "start"
    }
    fn description(&self) -> &str {
        "starts"
    }
    fn execute(&self, arguments: &str, ctx: &ToolContext) -> PluginResult<String> {
        ctx.tasks.start(arguments, "")
    }
}

#[derive(Default)]
struct Worker;
impl Plugin for Worker {
    fn manifest(&self) -> Manifest {
        Manifest::new("com.test.worker", "Worker", "1.0.0", "test")
    }
    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        ctx.register_task(Count);
        ctx.register_task(Fail);
        ctx.register_tool(Start);
        Ok(())
    }
}

fn tool(name: &str, arguments: &str) -> crate::bindings::lingxi::plugin::types::ToolCall {
    crate::bindings::lingxi::plugin::types::ToolCall {
        tool_name: name.into(),
        arguments: arguments.into(),
        session_id: "s".into(),
        tool_call_id: "c".into(),
    }
}

#[test]
fn kinds_are_listed_and_run_by_name() {
    let mut rt = Runtime::new(Box::new(Worker));
    let kinds: Vec<_> = rt
        .task_kinds()
        .unwrap()
        .into_iter()
        .map(|k| (k.name, k.description))
        .collect();
    assert_eq!(
        kinds,
        [
            ("count".to_owned(), "Counts to its input".to_owned()),
            ("fail".to_owned(), String::new())
        ]
    );
    assert_eq!(
        rt.run_task("count".into(), "3".into(), "t-1".into()),
        Ok("counted 3 in t-1".into())
    );
    assert_eq!(
        rt.run_task("fail".into(), "why".into(), "t-2".into()),
        Err("no: why".into())
    );
    assert_eq!(
        rt.run_task("nope".into(), String::new(), "t-3".into()),
        Err("Task kind 'nope' not registered by plugin".into())
    );
}

/// An unknown kind is refused before the host is asked; natively the host
/// runs no tasks and says so.
#[test]
fn starting_names_the_registered_kinds_or_the_hosts_refusal() {
    let mut rt = Runtime::new(Box::new(Worker));
    assert_eq!(
        rt.execute_tool(tool("start", "nope")),
        Err("Task kind 'nope' not registered by plugin; registered: count, fail".into())
    );
    let refused = rt.execute_tool(tool("start", "count")).unwrap_err();
    assert!(
        refused.contains("only in the WebAssembly sandbox"),
        "{refused}"
    );
}

#[test]
fn states_are_described_for_status_tools() {
    let progress = |fraction, message: &str| {
        TaskState::Running(Some(TaskProgress {
            fraction,
            message: message.into(),
        }))
    };
    let cases = [
        (None, "unknown task"),
        (Some(TaskState::Running(None)), "running"),
        (Some(progress(None, "waiting")), "running: waiting"),
        (Some(progress(Some(0.25), "m")), "running (25%): m"),
        (
            Some(TaskState::Succeeded("42 lines".into())),
            "done: 42 lines",
        ),
        (Some(TaskState::Failed("boom".into())), "failed: boom"),
        (Some(TaskState::Cancelled), "cancelled"),
    ];
    for (state, text) in cases {
        assert_eq!(describe(state.as_ref()), text);
    }
}
