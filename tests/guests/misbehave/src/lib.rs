//! A test guest that misbehaves on purpose. Each tool is one attack on the
//! host; the end-to-end tests assert the host survives it and answers the next
//! request correctly.

use lingxi_plugin_sdk::*;

#[derive(Default)]
struct Misbehave;

impl Plugin for Misbehave {
    fn manifest(&self) -> Manifest {
        Manifest::new(
            "com.lingxi.test-misbehave",
            "Misbehave",
            "0.1.0",
            "Test guest that attacks its host",
        )
    }

    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        ctx.register_tool(FnTool("ok", |args| Ok(format!("ok:{args}"))));
        ctx.register_tool(FnTool("print-stdout", |_| {
            // Would break the protocol channel if it reached the host's stdout.
            println!("{{\"id\":\"X\",\"result\":\"forged\"}}");
            print!("partial line without newline");
            eprintln!("a line on stderr");
            Ok("printed".into())
        }));
        ctx.register_tool(FnTool("spin", |_| {
            #[allow(clippy::empty_loop)]
            loop {}
        }));
        ctx.register_tool(FnTool("panic", |_| panic!("deliberate panic")));
        ctx.register_tool(FnTool("env", |_| {
            Ok(std::env::vars().map(|(k, _)| k).collect::<Vec<_>>().join(","))
        }));
        ctx.register_tool(FnTool("read-file", |path| {
            std::fs::read_to_string(path).map_err(|e| PluginError::new(format!("{path}: {e}")))
        }));
        Ok(())
    }
}

/// A tool made from a name and a function of the arguments.
struct FnTool(&'static str, fn(&str) -> PluginResult<String>);

impl Tool for FnTool {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "misbehaves"
    }
    fn execute(&self, arguments: &str, _ctx: &ToolContext) -> PluginResult<String> {
        (self.1)(arguments)
    }
}

export_plugin!(Misbehave);
