//! A plugin that breaks the rule named by `MISFIT_RULE` when it was built
//! (none: a correct plugin), for the tests of `lingxi-wasm-run check`:
//! every rule's exact diagnostic is asserted on a real component.

wit_bindgen::generate!({
    world: "lingxi-plugin",
    path: "../../../wit",
});

/// An interface no host provides, for the `imports` rule.
#[cfg(feature = "foreign")]
mod foreign {
    wit_bindgen::generate!({
        inline: "package example:foreign@0.1.0;
            interface oracle { ask: func() -> u32; }
            world foreign { import oracle; }",
        world: "foreign",
    });
    pub use example::foreign::oracle::ask;
}

use exports::lingxi::plugin::plugin::Guest;
use lingxi::plugin::types::{
    Capability, CommandCall, CommandDescriptor, CommandResult, Handshake, HookEvent, HookPayload,
    InitializeRequest, Manifest, ToolCall, ToolDescriptor,
};

/// The rule this build breaks.
const RULE: &str = match option_env!("MISFIT_RULE") {
    Some(rule) => rule,
    None => "",
};

struct Misfit;

fn manifest() -> Manifest {
    let pick = |rule: &str, bad: &str, good: &str| if RULE == rule { bad } else { good }.to_owned();
    let mut capabilities = vec![Capability::ProjectRead];
    if RULE == "net-unused" {
        capabilities.push(Capability::NetworkAccess);
    }
    Manifest {
        id: pick("id", "Com.Example..Misfit", "com.example.misfit"),
        name: pick("name", " ", "Misfit"),
        version: pick("version", "1.0", "0.1.0"),
        description: pick("description", "", "Breaks one rule"),
        author: None,
        capabilities,
        minimum_core_version: None,
    }
}

fn tool(name: &str, schema: &str) -> ToolDescriptor {
    ToolDescriptor {
        name: name.into(),
        description: "a tool".into(),
        input_schema: schema.into(),
    }
}

fn command(name: &str, aliases: &[&str]) -> CommandDescriptor {
    CommandDescriptor {
        name: name.into(),
        aliases: aliases.iter().map(|a| (*a).into()).collect(),
        description: "a command".into(),
        category: "Plugin".into(),
        argument_hint: String::new(),
    }
}

impl Guest for Misfit {
    fn get_manifest() -> Manifest {
        manifest()
    }

    fn initialize(_request: InitializeRequest) -> Result<Handshake, String> {
        if RULE == "initialize-fails" {
            return Err("cannot start: misfit on purpose".into());
        }
        let good = r#"{"type": "object", "properties": {"q": {"type": "string"}}}"#;
        let mut tools = vec![tool("misfit.echo", good)];
        let mut commands = vec![command("run", &["go"])];
        // Sorted by wire name, as the protocol lists them.
        let mut hooks = vec![HookEvent::SessionEnd, HookEvent::SessionStart];
        match RULE {
            "duplicate-tool" => tools.push(tool("misfit.echo", good)),
            "duplicate-alias" => commands.push(command("walk", &["GO"])),
            "alias-is-a-name" => commands.push(command("stop", &["run"])),
            "hooks-twice" => hooks.push(HookEvent::SessionStart),
            "hooks-unsorted" => hooks.reverse(),
            "schema-not-json" => tools.push(tool("misfit.broken", "{type: object")),
            "schema-invalid" => tools.push(tool("misfit.broken", r#"{"type": "objekt"}"#)),
            "annotation" => tools.push(tool(
                "misfit.paths",
                r#"{"type": "object", "properties": {"p": {"type": "string", "x-lingxi-path": "rw"}}}"#,
            )),
            _ => {}
        }
        Ok(Handshake {
            manifest: manifest(),
            ipc_version: if RULE == "ipc-version" { 2 } else { 1 },
            sdk_version: None,
            tools,
            commands,
            supported_hooks: hooks,
        })
    }

    fn execute_tool(call: ToolCall) -> Result<String, String> {
        #[cfg(feature = "http")]
        {
            use wasip2::http::types::{Fields, OutgoingRequest};
            let request = OutgoingRequest::new(Fields::new());
            let _ = wasip2::http::outgoing_handler::handle(request, None);
        }
        #[cfg(feature = "sockets")]
        {
            let _ = std::net::TcpStream::connect("127.0.0.1:9");
        }
        #[cfg(feature = "foreign")]
        {
            let _ = foreign::ask();
        }
        Ok(call.arguments)
    }

    fn execute_command(call: CommandCall) -> Result<CommandResult, String> {
        Err(format!("no command {}", call.command_name))
    }

    fn emit_hook(_payload: HookPayload) -> Result<(), String> {
        Ok(())
    }

    fn deactivate() {}
}

export!(Misfit);

/// Runs no background tasks: registers no kinds, and refuses to run one.
impl exports::lingxi::plugin::task_runner::Guest for Misfit {
    fn kinds() -> Vec<exports::lingxi::plugin::task_runner::TaskKind> {
        Vec::new()
    }

    fn run(kind: String, _input: String, _id: String) -> Result<String, String> {
        Err(format!("no task kind {kind}"))
    }
}
