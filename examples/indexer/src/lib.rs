//! `indexer`: long work in the background. `index.start` starts a task
//! that counts the lines of the workspace's files and answers `task:<id>`
//! at once (a LingXi call has 3 s; the count may take minutes);
//! `index.status` reads the task, `index.cancel` stops it. Declares only
//! `projectRead`: the task's own instance gets the workspace read-only,
//! like the instance answering calls.
//!
//! - `index.start {"delay_ms": N}` (optional: wait N ms first, for demos
//!   and tests) → `task:<id>`
//! - `index.status {"task": "<id>"}` → `running`, `done: <N> lines`,
//!   `failed: …` or `cancelled`
//! - `index.cancel {"task": "<id>"}` → `cancelled` or `not running`

use std::path::Path;
use std::time::Duration;

use lingxi_plugin_sdk::*;
use serde::Deserialize;

#[derive(Default)]
struct Indexer;

impl Plugin for Indexer {
    fn manifest(&self) -> Manifest {
        Manifest::new(
            "com.lingxi.indexer",
            "Indexer",
            "0.1.0",
            "Counts the lines of the workspace in the background",
        )
        .capabilities([Capability::ProjectRead])
    }

    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        ctx.register_task(CountLines);
        ctx.register_tool(Start);
        ctx.register_tool(Status(
            "index.status",
            "Reads an indexing task: running, done: <N> lines, failed: … or cancelled.",
        ));
        ctx.register_tool(Status("index.cancel", "Cancels an indexing task."));
        Ok(())
    }
}

// ANCHOR: task
/// The task kind: counts the lines of every file under the workspace root,
/// reporting progress per top-level entry.
struct CountLines;

#[derive(Deserialize, Default)]
struct Input {
    #[serde(default)]
    delay_ms: u64,
}

impl Task for CountLines {
    fn name(&self) -> &str {
        "count-lines"
    }
    fn description(&self) -> &str {
        "Counts the lines of the workspace's files"
    }
    fn run(&self, input: &str, ctx: &TaskContext) -> PluginResult<String> {
        let input: Input = serde_json::from_str(input).unwrap_or_default();
        if input.delay_ms > 0 {
            ctx.progress(Some(0.0), "waiting");
            std::thread::sleep(Duration::from_millis(input.delay_ms));
        }
        let root = ctx.info.workspace_info()?.root_path;
        let entries = sorted_entries(Path::new(&root))?;
        let mut lines = 0u64;
        for (done, entry) in entries.iter().enumerate() {
            let fraction = done as f64 / entries.len().max(1) as f64;
            ctx.progress(Some(fraction), format!("counting {}", entry.display()));
            lines += count(entry);
        }
        Ok(format!("{lines} lines"))
    }
}
// ANCHOR_END: task

/// The entries of `dir`, sorted (a stable order for progress).
fn sorted_entries(dir: &Path) -> PluginResult<Vec<std::path::PathBuf>> {
    let read = std::fs::read_dir(dir)
        .map_err(|e| PluginError::new(format!("cannot read {}: {e}", dir.display())))?;
    let mut entries: Vec<_> = read.filter_map(|e| Some(e.ok()?.path())).collect();
    entries.sort();
    Ok(entries)
}

/// Lines under `path`: a file's newlines (a last line without one counts),
/// a folder's files', skipping what cannot be read and symbolic links.
fn count(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        return sorted_entries(path)
            .map(|entries| entries.iter().map(|e| count(e)).sum())
            .unwrap_or(0);
    }
    if !meta.is_file() {
        return 0;
    }
    let Ok(bytes) = std::fs::read(path) else {
        return 0;
    };
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    newlines + u64::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArgument {
    task: String,
}

// ANCHOR: start
/// `index.start`: starts the task and answers its handle at once.
struct Start;

impl Tool for Start {
    fn name(&self) -> &str {
        "index.start"
    }
    fn description(&self) -> &str {
        "Starts counting the workspace's lines in the background; answers task:<id> at once. Read it with index.status."
    }
    fn input_schema(&self) -> &str {
        r#"{"type": "object", "properties": {"delay_ms": {"type": "integer", "minimum": 0, "maximum": 3600000, "description": "Wait this many milliseconds first (for demos and tests)"}}, "additionalProperties": false, "x-lingxi-starts-task": true}"#
    }
    fn execute(&self, arguments: &str, ctx: &ToolContext) -> PluginResult<String> {
        let input = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let id = ctx.tasks.start("count-lines", input)?;
        Ok(format!("task:{id}"))
    }
}
// ANCHOR_END: start

/// `index.status` and `index.cancel`, on `{"task": "<id>"}` (with or
/// without the `task:` prefix `index.start` answered).
struct Status(&'static str, &'static str);

impl Tool for Status {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        self.1
    }
    fn input_schema(&self) -> &str {
        r#"{"type": "object", "properties": {"task": {"type": "string", "description": "The id index.start answered (task:<id>)"}}, "required": ["task"], "additionalProperties": false}"#
    }
    fn execute(&self, arguments: &str, ctx: &ToolContext) -> PluginResult<String> {
        let argument: TaskArgument = serde_json::from_str(arguments)
            .map_err(|e| PluginError::new(format!("expected {{\"task\": \"<id>\"}}: {e}")))?;
        let id = argument
            .task
            .strip_prefix("task:")
            .unwrap_or(&argument.task);
        if self.0 == "index.cancel" {
            return Ok(if ctx.tasks.cancel(id) {
                "cancelled"
            } else {
                "not running"
            }
            .into());
        }
        Ok(match ctx.tasks.status(id) {
            None => {
                format!("unknown task {id} (finished tasks are kept for a while, then forgotten)")
            }
            Some(TaskState::Running(_)) => "running".into(),
            Some(TaskState::Succeeded(result)) => format!("done: {result}"),
            Some(TaskState::Failed(error)) => format!("failed: {error}"),
            Some(TaskState::Cancelled) => "cancelled".into(),
        })
    }
}

export_plugin!(Indexer);
