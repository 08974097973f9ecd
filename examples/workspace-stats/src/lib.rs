//! `workspace-stats`: files and lines per language and the largest files of
//! the workspace, or of a sub-path of it. Declares only `projectRead`: the
//! sandbox mounts the workspace read-only and nothing else.
//!
//! The tool `workspace.stats` takes `{"path": "sub/dir", "top": 5}` (both
//! optional) and answers JSON; the command `/stats [sub/dir]` shows the same
//! as a modal table.

mod scan;

use lingxi_plugin_sdk::*;
use serde::Deserialize;

use crate::scan::{Summary, scan};

#[derive(Default)]
struct WorkspaceStats;

impl Plugin for WorkspaceStats {
    fn manifest(&self) -> Manifest {
        Manifest::new(
            "com.lingxi.workspace-stats",
            "Workspace Stats",
            "0.1.0",
            "Files and lines per language, and the largest files, of the workspace",
        )
        .capabilities([Capability::ProjectRead])
    }

    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        // Tools get no info hub per call; this one needs the workspace root,
        // so it keeps the hub it was registered with.
        ctx.register_tool(StatsTool {
            info: ctx.info,
            schema: schema(),
        });
        ctx.register_command(StatsCommand);
        Ok(())
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Arguments {
    /// Sub-path of the workspace (relative, or absolute inside it).
    #[serde(default)]
    path: Option<String>,
    /// How many of the largest files to list.
    #[serde(default)]
    top: Option<usize>,
}

// ANCHOR: schema
/// The arguments' schema. `path` is a read path parameter: the host
/// resolves it inside the workspace (refusing `..` and symbolic links that
/// lead out) and hands the tool its canonical absolute form.
fn schema() -> String {
    InputSchema::new()
        .property(
            "path",
            Property::string(
                "Sub-path of the workspace to summarise (default: the whole workspace)",
            )
            .read_path(),
        )
        .property(
            "top",
            Property::integer("How many of the largest files to list (default 5)")
                .minimum(0)
                .maximum(100),
        )
        .no_additional_properties()
        .concurrency_safe()
        .to_string()
}
// ANCHOR_END: schema

struct StatsTool {
    info: InfoHub,
    schema: String,
}

impl Tool for StatsTool {
    fn name(&self) -> &str {
        "workspace.stats"
    }
    fn description(&self) -> &str {
        "Counts files and lines per language and lists the largest files of the workspace or of a sub-path of it."
    }
    fn input_schema(&self) -> &str {
        &self.schema
    }
    fn execute(&self, arguments: &str, _ctx: &ToolContext) -> PluginResult<String> {
        let args: Arguments = if arguments.trim().is_empty() {
            Arguments::default()
        } else {
            serde_json::from_str(arguments).map_err(|e| {
                PluginError::new(format!("invalid arguments ({e}); expected {}", self.schema))
            })?
        };
        let root = self.info.workspace_info()?.root_path;
        let summary = scan(&root, args.path.as_deref(), args.top.unwrap_or(5).min(100))?;
        Ok(serde_json::to_string(&summary)?)
    }
}

struct StatsCommand;

impl Command for StatsCommand {
    fn name(&self) -> &str {
        "stats"
    }
    fn aliases(&self) -> &[&str] {
        &["ws-stats"]
    }
    fn description(&self) -> &str {
        "Shows files and lines per language of the workspace"
    }
    fn argument_hint(&self) -> &str {
        "[sub/path]"
    }
    fn execute(&self, args: &[String], ctx: &CommandContext) -> PluginResult<CommandResult> {
        let root = ctx.info.workspace_info()?.root_path;
        let summary = scan(&root, args.first().map(String::as_str), 5)?;
        Ok(CommandResult::message(render(&summary))
            .with_title(format!("Workspace stats: {}", summary.path)))
    }
}

fn render(s: &Summary) -> String {
    let mut out = format!("{} files, {} lines\n\n", s.files, s.lines);
    out.push_str(&format!(
        "{:<14} {:>7} {:>9}\n",
        "language", "files", "lines"
    ));
    for l in &s.languages {
        out.push_str(&format!(
            "{:<14} {:>7} {:>9}\n",
            l.language, l.files, l.lines
        ));
    }
    out.push_str("\nlargest files\n");
    for f in &s.largest {
        out.push_str(&format!("{:>10} B  {}\n", f.bytes, f.path));
    }
    if s.truncated {
        out.push_str("\n(stopped early: too many files)\n");
    }
    out
}

export_plugin!(WorkspaceStats);
