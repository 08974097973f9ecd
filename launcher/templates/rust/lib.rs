//! __NAME__: a LingXi plugin, sandboxed as a WebAssembly component.
//!
//! Build: `cargo build --target wasm32-wasip2 --release`
//! (the component is `target/wasm32-wasip2/release/__CRATE_FILE__.wasm`).

// `cargo test` also builds this crate for the machine it runs on, where
// nothing exports the plugin (only the wasm32 component does): there its
// types are unused, which is expected.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use lingxi_plugin_sdk::*;

#[derive(Default)]
struct MyPlugin;

impl Plugin for MyPlugin {
    fn manifest(&self) -> Manifest {
        // Declare the capabilities the plugin needs, e.g.
        // `.capabilities([Capability::ProjectRead])`: the user must grant them too.
        Manifest::new("__ID__", "__NAME__", "0.1.0", "__DESCRIPTION__")
    }

    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        ctx.register_tool(Greet::default());
        ctx.register_command(Hello);
        let logger = ctx.logger;
        ctx.on(HookEvent::SessionStart, move |payload| {
            logger.info(format!("session started: {}", payload.subject_id));
            Ok(())
        });
        Ok(())
    }
}

/// `greet`: the model calls it with `{"name": "Ada"}`.
struct Greet {
    schema: String,
}

impl Default for Greet {
    fn default() -> Self {
        // The host checks every call's arguments against this schema
        // before the tool runs.
        let schema = InputSchema::new()
            .property("name", Property::string("Who to greet").min_length(1))
            .required(["name"])
            .no_additional_properties();
        Greet {
            schema: schema.to_string(),
        }
    }
}

impl Tool for Greet {
    fn name(&self) -> &str {
        "greet"
    }
    fn description(&self) -> &str {
        "Greets someone by name."
    }
    fn input_schema(&self) -> &str {
        &self.schema
    }
    fn execute(&self, arguments: &str, ctx: &ToolContext) -> PluginResult<String> {
        let arguments: serde_json::Value = serde_json::from_str(arguments)?;
        let name = arguments["name"].as_str().unwrap_or("world");
        ctx.logger.info(format!("greeting {name}"));
        Ok(format!("Hello, {name}!"))
    }
}

/// `/hello` (alias `/hi`): shows the workspace the host published.
struct Hello;

impl Command for Hello {
    fn name(&self) -> &str {
        "hello"
    }
    fn aliases(&self) -> &[&str] {
        &["hi"]
    }
    fn description(&self) -> &str {
        "Says hello and shows the workspace root."
    }
    fn execute(&self, _args: &[String], ctx: &CommandContext) -> PluginResult<CommandResult> {
        let workspace = ctx.info.workspace_info()?;
        Ok(CommandResult::message(format!("Hello from {}", workspace.root_path)).with_title("__NAME__"))
    }
}

export_plugin!(MyPlugin);
