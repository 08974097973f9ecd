//! The request lines the launcher sends a plugin itself, as a host would
//! (`call`, `learn`): built from the protocol's DTOs and encoded by
//! `protocol::wire`, so they are what LingXi sends, field for field.

use std::collections::BTreeMap;
use std::path::Path;

use lingxi_wasm_host::protocol::dto::{
    CommandExecuteDto, HookEmitDto, InitializeDto, ToolExecuteDto,
};
use lingxi_wasm_host::protocol::method;
use lingxi_wasm_host::protocol::wire::{Dialect, encode_request};
use serde::Serialize;

/// One request line (the doc dialect: nested JSON).
fn line(id: &str, method: &str, params: &impl Serialize) -> String {
    let params = serde_json::to_value(params).unwrap_or_default();
    encode_request(id, method, Some(&params), Dialect::Doc)
}

/// `host.snapshot` of the project at `root`.
pub fn snapshot(id: &str, root: &Path) -> String {
    line(
        id,
        method::SNAPSHOT,
        &lingxi_wasm_launcher::workspace::snapshot(root),
    )
}

/// `plugin.initialize`, as this launcher's version of Core.
pub fn initialize(id: &str) -> String {
    let params = InitializeDto {
        host_ipc_version: Some(1),
        core_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
    };
    line(id, method::INITIALIZE, &params)
}

/// `tool.execute` of `tool` with `arguments` (JSON text) in `session`.
pub fn tool(id: &str, session: &str, call: &str, tool: &str, arguments: &str) -> String {
    let params = ToolExecuteDto {
        tool_name: tool.to_owned(),
        arguments: arguments.to_owned(),
        session_id: session.to_owned(),
        tool_call_id: call.to_owned(),
    };
    line(id, method::TOOL_EXECUTE, &params)
}

/// `command.execute` of `/name` with `arguments` in `session`.
pub fn command(id: &str, session: &str, name: &str, arguments: Vec<String>) -> String {
    let params = CommandExecuteDto {
        command_name: name.to_owned(),
        arguments,
        session_id: Some(session.to_owned()),
    };
    line(id, method::COMMAND_EXECUTE, &params)
}

/// `hook.emit` of `event` for `subject`, without metadata.
pub fn hook(id: &str, event: &str, subject: &str) -> String {
    let params = HookEmitDto {
        event: event.to_owned(),
        subject_id: subject.to_owned(),
        metadata: BTreeMap::new(),
    };
    line(id, method::HOOK_EMIT, &params)
}

#[cfg(test)]
mod tests {
    use lingxi_wasm_host::protocol::wire::decode_request;
    use serde_json::json;

    #[test]
    fn requests_are_what_a_host_sends() {
        let cases = [
            (
                super::tool("c", "s", "call-1", "t.echo", "{}"),
                "tool.execute",
                json!({"toolName": "t.echo", "arguments": "{}", "sessionID": "s", "toolCallID": "call-1"}),
            ),
            (
                super::command("c", "s", "stats", vec!["src".into()]),
                "command.execute",
                json!({"commandName": "stats", "arguments": ["src"], "sessionID": "s"}),
            ),
            (
                super::hook("c", "sessionStart", "s-1"),
                "hook.emit",
                json!({"event": "sessionStart", "subjectID": "s-1", "metadata": {}}),
            ),
            (
                super::initialize("c"),
                "plugin.initialize",
                json!({"hostIPCVersion": 1, "coreVersion": env!("CARGO_PKG_VERSION")}),
            ),
        ];
        for (line, method, params) in cases {
            let request = decode_request(&line).unwrap().unwrap();
            assert_eq!(request.method, method, "{line}");
            assert_eq!(request.params, Some(params), "{line}");
        }
    }
}
