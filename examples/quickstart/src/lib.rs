//! The LingXi SDK page's Quick Start plugin, in Rust: an `echo` tool, a
//! `status` command that shows the workspace the host published, and a
//! `sessionStart` hook that logs.

use lingxi_plugin_sdk::*;

#[derive(Default)]
struct MyFirstPlugin;

impl Plugin for MyFirstPlugin {
    fn manifest(&self) -> Manifest {
        Manifest::new(
            "com.example.my-plugin",
            "My Plugin",
            "0.1.0",
            "Demonstrates command registration and reading the host's runtime snapshot",
        )
        .capabilities([Capability::ProjectRead])
    }

    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        ctx.register_tool(EchoTool);
        ctx.register_command(StatusCommand);
        let logger = ctx.logger;
        ctx.on(HookEvent::SessionStart, move |payload| {
            logger.info(format!("session started: {}", payload.subject_id));
            Ok(())
        });
        Ok(())
    }
}

struct EchoTool;

impl Tool for EchoTool {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its argument back."
    }
    fn execute(&self, arguments: &str, _ctx: &ToolContext) -> PluginResult<String> {
        Ok(arguments.to_owned())
    }
}

struct StatusCommand;

impl Command for StatusCommand {
    fn name(&self) -> &str {
        "status"
    }
    fn description(&self) -> &str {
        "Reports what the host published."
    }
    fn execute(&self, _args: &[String], ctx: &CommandContext) -> PluginResult<CommandResult> {
        let Ok(workspace) = ctx.info.workspace_info() else {
            return Ok(CommandResult::inline(
                "The host has not published a runtime snapshot yet",
            ));
        };
        let branch = workspace
            .current_git_branch
            .as_deref()
            .unwrap_or("not a git repository");
        Ok(
            CommandResult::message(format!("Workspace {} ({branch})", workspace.root_path))
                .with_title("Workspace"),
        )
    }
}

export_plugin!(MyFirstPlugin);
