//! The reference fixture of the LingXi protocol contract (spec §7): plugin
//! `com.lingxi.test-probe` with tool `probe.echo`, command `probe` (alias `pb`)
//! and a `sessionStart` hook. The end-to-end tests replay the contract against it.

use lingxi_plugin_sdk::*;

/// The probe plugin.
#[derive(Default)]
pub struct Probe;

impl Plugin for Probe {
    fn manifest(&self) -> Manifest {
        Manifest::new(
            "com.lingxi.test-probe",
            "Probe",
            "0.1.0",
            "Contract fixture plugin",
        )
        .capabilities([Capability::ProjectRead])
    }

    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        ctx.register_tool(EchoTool);
        ctx.register_command(ProbeCommand);
        let logger = ctx.logger;
        ctx.on(HookEvent::SessionStart, move |payload| {
            logger.info(format!("session started: {}", payload.subject_id));
            Ok(())
        });
        Ok(())
    }
}

/// `probe.echo`: answers `echo:<arguments>`.
struct EchoTool;

impl Tool for EchoTool {
    fn name(&self) -> &str {
        "probe.echo"
    }
    fn description(&self) -> &str {
        "Echoes its raw arguments, prefixed with 'echo:'."
    }
    fn execute(&self, arguments: &str, _ctx: &ToolContext) -> PluginResult<String> {
        Ok(format!("echo:{arguments}"))
    }
}

/// `probe` / `pb`: answers `root=<workspace.rootPath>`.
struct ProbeCommand;

impl Command for ProbeCommand {
    fn name(&self) -> &str {
        "probe"
    }
    fn aliases(&self) -> &[&str] {
        &["pb"]
    }
    fn description(&self) -> &str {
        "Shows the workspace root the host published."
    }
    fn execute(&self, _args: &[String], ctx: &CommandContext) -> PluginResult<CommandResult> {
        let workspace = ctx.info.workspace_info()?;
        Ok(CommandResult::message(format!(
            "root={}",
            workspace.root_path
        )))
    }
}

export_plugin!(Probe);
