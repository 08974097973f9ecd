//! The conformance probe (spec §7: plugin `com.lingxi.test-probe`, tool
//! `probe.echo`, command `probe` alias `pb`, a `sessionStart` hook) written
//! against the WIT with wit-bindgen alone, no SDK: what an author who
//! targets `wit/lingxi-plugin.wit` directly writes. `build.rs` picks the
//! WIT and world; the source is the same for every released shape.

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));

use exports::lingxi::plugin::plugin::Guest;
use lingxi::plugin::types::{
    Capability, CommandCall, CommandDescriptor, CommandMessage, CommandResult, Handshake,
    HookEvent, HookPayload, InfoUnavailable, InitializeRequest, Manifest, Presentation, ToolCall,
    ToolDescriptor,
};
use lingxi::plugin::{host_info, logging};

const IPC_VERSION: u32 = 1;

struct Probe;

fn manifest() -> Manifest {
    Manifest {
        id: "com.lingxi.test-probe".into(),
        name: "Probe".into(),
        version: "0.1.0".into(),
        description: "Contract fixture plugin".into(),
        author: None,
        capabilities: vec![Capability::ProjectRead],
        minimum_core_version: None,
    }
}

fn tool() -> ToolDescriptor {
    ToolDescriptor {
        name: "probe.echo".into(),
        description: "Echoes its raw arguments, prefixed with 'echo:'.".into(),
        input_schema: r#"{"type": "object", "properties": {}}"#.into(),
    }
}

fn command() -> CommandDescriptor {
    CommandDescriptor {
        name: "probe".into(),
        aliases: vec!["pb".into()],
        description: "Shows the workspace root the host published.".into(),
        category: "Plugin".into(),
        argument_hint: String::new(),
    }
}

/// The protocol's text for info the host did not send.
fn unavailable(why: InfoUnavailable) -> String {
    let when = match why.last_snapshot {
        None => "no snapshot received".to_owned(),
        Some(at) => format!("last snapshot at {} s", at.seconds),
    };
    format!("Plugin runtime info unavailable: {} ({when})", why.field)
}

impl Guest for Probe {
    fn get_manifest() -> Manifest {
        manifest()
    }

    fn initialize(request: InitializeRequest) -> Result<Handshake, String> {
        match request.host_ipc_version {
            Some(v) if v != i64::from(IPC_VERSION) => Err(format!(
                "Unsupported host IPC version {v}; plugin supports [1]."
            )),
            _ => Ok(Handshake {
                manifest: manifest(),
                ipc_version: IPC_VERSION,
                sdk_version: Some("0.1.0".into()),
                tools: vec![tool()],
                commands: vec![command()],
                supported_hooks: vec![HookEvent::SessionStart],
            }),
        }
    }

    fn execute_tool(call: ToolCall) -> Result<String, String> {
        if call.tool_name != tool().name {
            return Err(format!("Tool '{}' not found in plugin", call.tool_name));
        }
        Ok(format!("echo:{}", call.arguments))
    }

    fn execute_command(call: CommandCall) -> Result<CommandResult, String> {
        // A name or an alias, in any case (as typed by the user).
        let command = command();
        let known = std::iter::once(&command.name).chain(&command.aliases);
        if !known
            .into_iter()
            .any(|n| n.eq_ignore_ascii_case(&call.command_name))
        {
            return Err(format!(
                "Command '{}' not found in plugin",
                call.command_name
            ));
        }
        let workspace = host_info::workspace().map_err(unavailable)?;
        Ok(CommandResult::Message(CommandMessage {
            text: format!("root={}", workspace.root_path),
            presentation: Presentation::Modal,
            title: None,
        }))
    }

    fn emit_hook(payload: HookPayload) -> Result<(), String> {
        if payload.event == HookEvent::SessionStart {
            let line = format!("session started: {}", payload.subject_id);
            logging::log(logging::Level::Info, &line);
        }
        Ok(())
    }

    fn deactivate() {}
}

/// The task runner, for the worlds with tasks: one kind, `echo`, whose
/// result is its input.
#[cfg(tasks)]
impl exports::lingxi::plugin::task_runner::Guest for Probe {
    fn kinds() -> Vec<exports::lingxi::plugin::task_runner::TaskKind> {
        vec![exports::lingxi::plugin::task_runner::TaskKind {
            name: "echo".into(),
            description: "Answers its input.".into(),
        }]
    }

    fn run(kind: String, input: String, _id: String) -> Result<String, String> {
        match kind.as_str() {
            "echo" => Ok(input),
            other => Err(format!("no task kind '{other}'")),
        }
    }
}

export!(Probe);
