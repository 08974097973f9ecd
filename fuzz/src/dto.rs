//! Target `dto`: JSON through the protocol's DTOs (`protocol/src/dto.rs`)
//! and the WIT ↔ protocol conversion (`protocol/src/convert.rs`, as the
//! host instantiates it), both ways: params LingXi sends, and the answers
//! a plugin returns (its handshake, a command result, a tool's text),
//! encoded on the wire in both dialects.
//!
//! Invariants: no panic; a decoded snapshot has a finite time whose WIT
//! timestamp has nanoseconds below 10^9 and adds up to the same time, and
//! keeps every section; a hook is converted iff its event is known, with
//! the same name and metadata; the manifest round-trips through JSON and
//! through WIT (iff every capability is known); a handshake's hooks come
//! out sorted and without duplicates, its manifest, tools and commands
//! unchanged; every answer decodes from its response line, in both
//! dialects, to the JSON that was sent; an ISO-8601 time is finite.

use lingxi_protocol::dto::{
    CommandExecuteDto, HookEmitDto, InitializeDto, ManifestDto, SnapshotDto, ToolExecuteDto,
    parse_iso8601,
};
use lingxi_protocol::wire::{self, Dialect};
use lingxi_wasm_host::convert;
use lingxi_wasm_host::types as wit;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::json::{parse_line, same};
use crate::{Violation, ensure};

const TARGET: &str = "dto";

/// See the module documentation.
pub fn check(data: &[u8]) -> Result<(), Violation> {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        if let Ok(text) = std::str::from_utf8(data) {
            check_time(text)?;
        }
        return Ok(());
    };
    if let Value::String(text) = &value {
        check_time(text)?;
    }
    if let Some(snapshot) = decode::<SnapshotDto>(&value) {
        check_snapshot(snapshot)?;
    }
    if let Some(hook) = decode::<HookEmitDto>(&value) {
        check_hook(hook)?;
    }
    if let Some(init) = decode::<InitializeDto>(&value) {
        let wit = convert::initialize_request(init.clone());
        ensure!(
            wit.host_ipc_version == init.host_ipc_version && wit.core_version == init.core_version,
            "initialize {init:?} became {wit:?}"
        );
    }
    if let Some(call) = decode::<ToolExecuteDto>(&value) {
        let wit = convert::tool_call(call.clone());
        ensure!(
            (
                &wit.tool_name,
                &wit.arguments,
                &wit.session_id,
                &wit.tool_call_id
            ) == (
                &call.tool_name,
                &call.arguments,
                &call.session_id,
                &call.tool_call_id
            ),
            "tool call {call:?} became {wit:?}"
        );
    }
    if let Some(call) = decode::<CommandExecuteDto>(&value) {
        let wit = convert::command_call(call.clone());
        ensure!(
            (&wit.command_name, &wit.arguments, &wit.session_id)
                == (&call.command_name, &call.arguments, &call.session_id),
            "command call {call:?} became {wit:?}"
        );
    }
    if let Some(manifest) = decode::<ManifestDto>(&value) {
        check_manifest(&manifest)?;
    }
    if let Some(handshake) = decode::<HandshakeIn>(&value) {
        check_handshake(handshake)?;
    }
    if let Some(result) = decode::<CommandResultIn>(&value) {
        check_command_result(result)?;
    }
    // Whatever the plugin answers (a tool's text is a JSON string), on the
    // wire in both dialects.
    check_answer(&value)
}

fn decode<T: DeserializeOwned>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
}

fn check_time(text: &str) -> Result<(), Violation> {
    if let Some(seconds) = parse_iso8601(text) {
        ensure!(seconds.is_finite(), "{text:?} is {seconds} s");
    }
    Ok(())
}

/// The snapshot invariants (also used by the `request` target).
pub(crate) fn check_snapshot(snapshot: SnapshotDto) -> Result<(), Violation> {
    let seconds = snapshot.observed_at;
    ensure!(seconds.is_finite(), "observedAt decoded to {seconds}");
    let wit = convert::snapshot(snapshot.clone());
    let at = wit.observed_at;
    ensure!(at.nanoseconds < 1_000_000_000, "{seconds} s became {at:?}");
    if seconds.abs() < 9.0e15 {
        let back = at.seconds as f64 + f64::from(at.nanoseconds) / 1e9;
        ensure!(
            (back - seconds).abs() <= 1e-6_f64.max(seconds.abs() * 1e-15),
            "{seconds} s became {at:?}"
        );
    }
    let turns = |s: &SnapshotDto| {
        s.context_state
            .as_ref()
            .map(|c| c.recent_turns.as_ref().map(Vec::len))
    };
    ensure!(
        wit.ipc_version == snapshot.ipc_version
            && wit.workspace.map(|w| w.root_path)
                == snapshot.workspace.as_ref().map(|w| w.root_path.clone())
            && wit.pe_core.is_some() == snapshot.pe_core.is_some()
            && wit.performance.is_some() == snapshot.performance.is_some()
            && wit.context_state.map(|c| c.recent_turns.map(|t| t.len())) == turns(&snapshot),
        "snapshot sections changed in conversion: {snapshot:?}"
    );
    Ok(())
}

/// The hook invariants (also used by the `request` target).
pub(crate) fn check_hook(hook: HookEmitDto) -> Result<(), Violation> {
    let known = wit::HookEvent::from_wire(&hook.event);
    match convert::hook_payload(hook.clone()) {
        Some(payload) => ensure!(
            known.is_some()
                && payload.event.wire_name() == hook.event
                && payload.subject_id == hook.subject_id
                && payload.metadata.iter().cloned().eq(hook.metadata.clone()),
            "hook {hook:?} became {payload:?}"
        ),
        None => ensure!(known.is_none(), "known hook {hook:?} dropped"),
    }
    Ok(())
}

fn check_manifest(manifest: &ManifestDto) -> Result<(), Violation> {
    let json = serde_json::to_value(manifest).unwrap_or_default();
    let back = decode::<ManifestDto>(&json);
    ensure!(
        back.as_ref() == Some(manifest),
        "manifest {manifest:?} came back from JSON as {back:?}"
    );
    let known = manifest
        .capabilities
        .iter()
        .all(|c| wit::Capability::from_wire(c).is_some());
    match convert::manifest_from_dto(manifest.clone()) {
        Some(wit) => {
            let back = convert::manifest(wit);
            ensure!(
                known && back == *manifest,
                "manifest {manifest:?} came back from WIT as {back:?}"
            );
        }
        None => ensure!(
            !known,
            "manifest {manifest:?} with known capabilities refused"
        ),
    }
    Ok(())
}

/// A plugin's handshake, in the JSON shape of the `plugin.initialize`
/// result, to build the WIT record a guest returns.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HandshakeIn {
    manifest: ManifestDto,
    ipc_version: u32,
    #[serde(default)]
    sdk_version: Option<String>,
    tools: Vec<ToolIn>,
    commands: Vec<CommandIn>,
    supported_hooks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolIn {
    name: String,
    #[serde(default)]
    description: String,
    input_schema: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommandIn {
    name: String,
    aliases: Vec<String>,
    #[serde(default)]
    description: String,
    category: String,
    argument_hint: String,
}

fn check_handshake(input: HandshakeIn) -> Result<(), Violation> {
    let Some(manifest) = convert::manifest_from_dto(input.manifest.clone()) else {
        return Ok(());
    };
    let hooks: Vec<wit::HookEvent> = input
        .supported_hooks
        .iter()
        .filter_map(|h| wit::HookEvent::from_wire(h))
        .collect();
    let handshake = wit::Handshake {
        manifest,
        ipc_version: input.ipc_version,
        sdk_version: input.sdk_version.clone(),
        tools: (input.tools.iter().cloned())
            .map(|t| wit::ToolDescriptor {
                name: t.name,
                description: t.description,
                input_schema: t.input_schema,
            })
            .collect(),
        commands: (input.commands.iter().cloned())
            .map(|c| wit::CommandDescriptor {
                name: c.name,
                aliases: c.aliases,
                description: c.description,
                category: c.category,
                argument_hint: c.argument_hint,
            })
            .collect(),
        supported_hooks: hooks.clone(),
    };
    let dto = convert::handshake(handshake);
    ensure!(
        dto.supported_hooks.windows(2).all(|w| w[0] < w[1])
            && hooks
                .iter()
                .all(|h| dto.supported_hooks.contains(&h.wire_name())),
        "hooks {:?} became {:?}",
        input.supported_hooks,
        dto.supported_hooks
    );
    let tools: Vec<ToolIn> = (dto.tools.iter().cloned())
        .map(|t| ToolIn {
            name: t.name,
            description: t.description,
            input_schema: t.input_schema,
        })
        .collect();
    let commands: Vec<CommandIn> = (dto.commands.iter().cloned())
        .map(|c| CommandIn {
            name: c.name,
            aliases: c.aliases,
            description: c.description,
            category: c.category,
            argument_hint: c.argument_hint,
        })
        .collect();
    ensure!(
        dto.manifest == input.manifest
            && dto.ipc_version == input.ipc_version
            && dto.sdk_version == input.sdk_version
            && tools == input.tools
            && commands == input.commands,
        "handshake {input:?} became {dto:?}"
    );
    check_answer(&serde_json::to_value(&dto).unwrap_or_default())
}

/// A plugin's command result, in the JSON shape of the `command.execute`
/// result: a prompt, or a message shown modal or inline.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommandResultIn {
    is_prompt: bool,
    text: String,
    #[serde(default)]
    presentation: Option<String>,
    #[serde(default)]
    title: Option<String>,
}

fn check_command_result(input: CommandResultIn) -> Result<(), Violation> {
    let modal = input.presentation.as_deref() == Some("modal");
    let wit = match input.is_prompt {
        true => wit::CommandResult::Prompt(input.text.clone()),
        false => wit::CommandResult::Message(wit::CommandMessage {
            text: input.text.clone(),
            presentation: match modal {
                true => wit::Presentation::Modal,
                false => wit::Presentation::Inline,
            },
            title: input.title.clone(),
        }),
    };
    let dto = convert::command_result(wit);
    let expected = match input.is_prompt {
        true => (true, &input.text, "inline", None),
        false => {
            let shown = if modal { "modal" } else { "inline" };
            (false, &input.text, shown, input.title.as_ref())
        }
    };
    ensure!(
        (
            dto.is_prompt,
            &dto.text,
            dto.presentation,
            dto.title.as_ref()
        ) == (expected.0, expected.1, Some(expected.2), expected.3),
        "command result {input:?} became {dto:?}"
    );
    check_answer(&serde_json::to_value(&dto).unwrap_or_default())
}

/// `value` as a plugin's answer: the response line decodes to it, in both
/// dialects.
fn check_answer(value: &Value) -> Result<(), Violation> {
    for dialect in [Dialect::Core, Dialect::Doc] {
        let line = wire::encode_success("fuzz", Some(value), dialect);
        let result = parse_line(&line).and_then(|mut o| o.remove("result"));
        let got = match (dialect, result) {
            (Dialect::Core, Some(Value::String(encoded))) => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .ok()
                    .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            }
            (Dialect::Doc, result) => result,
            _ => None,
        };
        ensure!(
            got.as_ref().is_some_and(|got| same(got, value)),
            "answer {value} came back from {line:?} as {got:?}"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_near_the_epoch_offset_split_exactly() {
        let snapshot: SnapshotDto =
            serde_json::from_str(r#"{"observedAt": 0.25, "ipcVersion": 1}"#).unwrap();
        check_snapshot(snapshot).unwrap();
    }
}
