//! Background tasks for the task tests: kinds that behave (sleep with
//! progress, echo, count files) and kinds that attack their budgets (spin,
//! block, trap, flood output, a huge result, start a task from a task),
//! and the tools that start, read and cancel them.

use std::io::Write;
use std::time::Duration;

use lingxi_plugin_sdk::tasks::describe;
use lingxi_plugin_sdk::*;

/// Registers the task kinds and the tools that drive them.
pub fn register(ctx: &mut PluginContext) {
    for (name, run) in KINDS {
        ctx.register_task(FnTask(name, run));
    }
    ctx.register_tool(TaskTool("task-start"));
    ctx.register_tool(TaskTool("task-status"));
    ctx.register_tool(TaskTool("task-cancel"));
}

type RunFn = fn(&str, &TaskContext) -> PluginResult<String>;

/// (kind, run) of every task kind.
const KINDS: [(&str, RunFn); 10] = [
    ("echo", |input, _| Ok(format!("echo:{input}"))),
    ("sleep", sleep),
    ("spin", |_, _| {
        #[allow(clippy::empty_loop)]
        loop {}
    }),
    ("block", |_, _| {
        // A blocking WASI sleep that never ends.
        std::thread::sleep(Duration::from_secs(u64::MAX / 4));
        Ok("woke".into())
    }),
    ("trap", |_, _| panic!("the task traps on purpose")),
    ("flood", |_, _| {
        let line = "z".repeat(1023);
        let mut out = std::io::stdout();
        loop {
            writeln!(out, "{line}")?;
        }
    }),
    ("progress-flood", |_, ctx| {
        let message = "p".repeat(1000);
        loop {
            ctx.progress(Some(0.5), message.clone());
        }
    }),
    ("alloc", |input, _| {
        // `n` — allocates and touches n MiB.
        let mib: usize = input.trim().parse().unwrap_or(1);
        let block = vec![1u8; mib * 1024 * 1024];
        Ok(format!(
            "allocated {} MiB",
            block.iter().map(|b| usize::from(*b)).sum::<usize>() >> 20
        ))
    }),
    ("big", |input, _| {
        let mib: usize = input.trim().parse().unwrap_or(1);
        Ok("b".repeat(mib * 1024 * 1024))
    }),
    ("print", |input, _| {
        // Would break the protocol if it reached the launcher's stdout.
        println!("{{\"id\":\"forged\",\"result\":\"from a task\"}}");
        eprintln!("task stderr: {input}");
        Ok("printed".into())
    }),
];

/// `ms` — sleeps `ms` milliseconds in ten steps, reporting progress.
fn sleep(input: &str, ctx: &TaskContext) -> PluginResult<String> {
    let ms: u64 = input
        .trim()
        .parse()
        .map_err(|e| PluginError::new(format!("sleep takes milliseconds: {e}")))?;
    for step in 0..10u32 {
        ctx.progress(Some(f64::from(step) / 10.0), format!("step {step}"));
        std::thread::sleep(Duration::from_millis(ms / 10));
    }
    Ok(format!("slept {ms} ms"))
}

struct FnTask(&'static str, RunFn);

impl Task for FnTask {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "test task"
    }
    fn run(&self, input: &str, context: &TaskContext) -> PluginResult<String> {
        (self.1)(input, context)
    }
}

/// `task-start KIND [INPUT]` → `task:<id>`; `task-status ID`;
/// `task-cancel ID` → `cancelled` or `not running`.
struct TaskTool(&'static str);

impl Tool for TaskTool {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "drives the test tasks"
    }
    fn execute(&self, arguments: &str, ctx: &ToolContext) -> PluginResult<String> {
        let arguments = arguments.trim();
        match self.0 {
            "task-start" => {
                let (kind, input) = arguments.split_once(' ').unwrap_or((arguments, ""));
                Ok(format!("task:{}", ctx.tasks.start(kind, input)?))
            }
            "task-status" => Ok(describe(ctx.tasks.status(arguments).as_ref())),
            _ => Ok(if ctx.tasks.cancel(arguments) {
                "cancelled".into()
            } else {
                "not running".into()
            }),
        }
    }
}
