//! A test guest that exercises its host: well-behaved tools, a command that
//! reads the info hub, and tools that attack the sandbox on purpose (files,
//! network, environment, stdin, resource exhaustion, crashes). It declares
//! every capability, so each test decides with `--grant` what it really gets.
//! The end-to-end tests assert that every attack fails and that the host
//! answers the next request correctly.

use std::io::{Read, Write};

use lingxi_plugin_sdk::*;

mod attacks;
mod contracts;
mod secrets;
mod tasks;

/// The testbed plugin.
#[derive(Default)]
pub struct Testbed {
    /// Counts activations, to observe re-initialization after a restart.
    activations: u32,
}

impl Plugin for Testbed {
    fn manifest(&self) -> Manifest {
        Manifest::new(
            "com.lingxi.testbed",
            "Testbed",
            "0.1.0",
            "Test guest for the host's end-to-end tests",
        )
        .capabilities([
            Capability::ProjectRead,
            Capability::ProjectWrite,
            Capability::NetworkAccess,
            Capability::ProcessExecution,
        ])
    }

    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        // A slow start, for the deadline tests (`--env TESTBED_ACTIVATE_MS=…`).
        if let Some(ms) = std::env::var("TESTBED_ACTIVATE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        self.activations += 1;
        let activations = self.activations;
        let log = ctx.logger;
        log.info(format!("activation #{activations}"));
        ctx.register_tool(FnTool("ok", |args| Ok(format!("ok:{args}"))));
        ctx.register_tool(FnTool("fail", |args| {
            Err(PluginError::new(format!("failed on purpose: {args}")))
        }));
        ctx.register_tool(FnTool("print-stdout", |_| {
            // Would break the protocol channel if it reached the host's stdout.
            println!("{{\"id\":\"X\",\"result\":\"forged\"}}");
            print!("partial line without newline");
            std::io::stdout().flush()?;
            eprintln!("a line on stderr");
            Ok("printed".into())
        }));
        ctx.register_tool(FnTool("env", |_| {
            Ok(std::env::vars()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(","))
        }));
        ctx.register_tool(FnTool("read-stdin", |_| {
            let mut buf = String::new();
            std::io::stdin().read_to_string(&mut buf)?;
            Ok(format!("stdin:{buf}"))
        }));
        for (name, tool) in attacks::TOOLS {
            ctx.register_tool(FnTool(name, tool));
        }
        contracts::register(ctx);
        secrets::register(ctx);
        tasks::register(ctx);
        ctx.register_command(InfoCommand);
        ctx.on(HookEvent::AgentTurnEnd, move |p| {
            log.info(format!("turn ended: {}", p.subject_id));
            Ok(())
        });
        ctx.on(HookEvent::AgentTurnEnd, |_| {
            Err(PluginError::new("second handler fails"))
        });
        // A sessionStart handler that crashes, for the hook fan-out tests
        // (a handler's error is only logged by the SDK; a crash is not).
        if std::env::var_os("TESTBED_START_CRASHES").is_some() {
            ctx.on(HookEvent::SessionStart, |_| {
                panic!("sessionStart crashes on purpose")
            });
        }
        Ok(())
    }

    fn deactivate(&mut self) {
        Logger::default().info("deactivated");
    }
}

/// A tool made from a name and a function of the arguments.
struct FnTool(&'static str, fn(&str) -> PluginResult<String>);

impl Tool for FnTool {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn execute(&self, arguments: &str, _ctx: &ToolContext) -> PluginResult<String> {
        // Over MCP arguments are always an object: `{"input": "…"}` stands
        // for the raw text `…` a JSONL test sends.
        let input = serde_json::from_str::<serde_json::Value>(arguments)
            .ok()
            .and_then(|v| v.get("input").and_then(|i| i.as_str()).map(str::to_owned));
        (self.1)(input.as_deref().unwrap_or(arguments))
    }
}

/// `info <section>`: shows one section of the snapshot, or the host's
/// "unavailable" error for it.
struct InfoCommand;

impl Command for InfoCommand {
    fn name(&self) -> &str {
        "info"
    }
    fn description(&self) -> &str {
        "Shows a snapshot section"
    }
    fn argument_hint(&self) -> &str {
        "workspace|peCore|contextState|performance"
    }
    fn execute(&self, args: &[String], ctx: &CommandContext) -> PluginResult<CommandResult> {
        let info = &ctx.info;
        let text = match args.first().map(String::as_str) {
            Some("workspace") => format!("{:?}", info.workspace_info()?),
            Some("peCore") => format!("{:?}", info.pe_core_info()?),
            Some("contextState") => format!("{:?}", info.context_state()?),
            Some("performance") => format!("{:?}", info.performance_info()?),
            _ => return Ok(CommandResult::prompt("which section?")),
        };
        Ok(CommandResult::inline(text).with_title("info"))
    }
}

export_plugin!(Testbed);
