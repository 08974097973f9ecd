//! Tools with contracts (schemas and `x-lingxi-*` annotations) for the
//! host's contract tests. Each counts its calls, so a test can prove that
//! refused arguments never reached the guest (`contract.calls`).

use std::sync::atomic::{AtomicU32, Ordering};

use lingxi_plugin_sdk::*;
use serde_json::json;

static CALLS: AtomicU32 = AtomicU32::new(0);

/// A tool that counts its calls and answers its arguments as it got them
/// (or, with `sleep`, sleeps `ms` first).
struct Contracted {
    name: &'static str,
    schema: String,
    sleep: bool,
}

impl Tool for Contracted {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "contract test tool"
    }
    fn input_schema(&self) -> &str {
        &self.schema
    }
    fn execute(&self, arguments: &str, _ctx: &ToolContext) -> PluginResult<String> {
        CALLS.fetch_add(1, Ordering::Relaxed);
        if self.sleep {
            let args: serde_json::Value = serde_json::from_str(arguments)?;
            let ms = args["ms"].as_u64().unwrap_or(0);
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        Ok(arguments.to_owned())
    }
}

/// Registers the contract tools.
pub fn register(ctx: &mut PluginContext) {
    let sleeper =
        || InputSchema::new().property("ms", Property::integer("how long to sleep").minimum(0));
    let strict = InputSchema::new()
        .property("text", Property::string("some text").max_length(10))
        .property("mode", Property::string("how").one_of(["fast", "slow"]))
        .property(
            "opts",
            Property::object(
                "options",
                InputSchema::new()
                    .property("depth", Property::integer("how deep").maximum(3))
                    .no_additional_properties(),
            ),
        )
        .required(["text"])
        .no_additional_properties();
    let read = InputSchema::new()
        .property("path", Property::string("a file to read").read_path())
        .property(
            "files",
            Property::array("files to read", Property::string("").read_path()),
        )
        .property("note", Property::string("not a path"));
    let write = InputSchema::new().property("to", Property::string("a file to write").write_path());
    let tools = [
        ("contract.strict", strict, false),
        ("contract.read", read, false),
        ("contract.write", write, false),
        ("contract.slow", sleeper().timeout_ms(300), true),
        (
            "contract.approve",
            InputSchema::new()
                .property("path", Property::string("a file it reads").read_path())
                .requires_approval(),
            false,
        ),
        ("contract.safe", sleeper().concurrency_safe(), true),
    ];
    for (name, schema, sleep) in tools {
        ctx.register_tool(Contracted {
            name,
            schema: schema.to_string(),
            sleep,
        });
    }
    // A schema the host cannot compile (`--env TESTBED_BROKEN_SCHEMA=1`):
    // the tool still runs, unvalidated.
    if std::env::var_os("TESTBED_BROKEN_SCHEMA").is_some() {
        ctx.register_tool(Contracted {
            name: "contract.broken-schema",
            schema: json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}})
                .to_string(),
        sleep: false,
        });
    }
    ctx.register_tool(Counter);
}

/// `contract.calls`: how many contract tool calls this instance ran.
struct Counter;

impl Tool for Counter {
    fn name(&self) -> &str {
        "contract.calls"
    }
    fn description(&self) -> &str {
        "how many contract tool calls ran"
    }
    fn execute(&self, _arguments: &str, _ctx: &ToolContext) -> PluginResult<String> {
        Ok(CALLS.load(Ordering::Relaxed).to_string())
    }
}
