//! Native mode (feature `native`): the same plugin source as a native
//! JSON-Lines executable, speaking the protocol on stdin/stdout itself, with
//! no sandbox. It is the baseline every performance figure of the wasm build
//! is measured against, and a quick way to debug a plugin natively.
//!
//! ```ignore
//! // src/main.rs of a plugin crate (crate-type = ["cdylib", "rlib"]),
//! // built with `cargo build --features native --bin my-plugin-native`:
//! fn main() -> std::io::Result<()> {
//!     lingxi_plugin_sdk::native::serve::<my_plugin::MyPlugin>()
//! }
//! ```
//!
//! Snapshot reads see what this driver accepted; plugin storage is not
//! available natively (there is no host to give a data directory).

use std::io::{self, BufRead, Write};

use lingxi_protocol::wire::{self, Dialect};
use lingxi_protocol::{SUPPORTED_IPC_VERSIONS, dto, method, text};
use serde_json::Value;

use crate::Plugin;
use crate::runtime::Runtime;
use crate::sys;

mod convert {
    lingxi_protocol::conversions!(crate::bindings::lingxi::plugin::types);
}

/// Serves plugin `P` on stdin/stdout until EOF, then deactivates it.
pub fn serve<P: Plugin + Default>() -> io::Result<()> {
    serve_io::<P>(io::stdin().lock(), io::stdout().lock())
}

/// Serves `runtime` on `input`/`output`: one response line per decodable
/// request, in order, flushed per response.
pub fn serve_io<P: Plugin + Default>(
    input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    let mut runtime = Runtime::new(Box::new(P::default()));
    let mut driver = Driver {
        last_dialect: Dialect::Core,
        observed_at: None,
    };
    for line in input.split(b'\n') {
        let line = line?;
        let text = String::from_utf8_lossy(&line);
        let request = match wire::decode_request(&text) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(failure) => {
                eprintln!("skipping an undecodable request line: {}", failure.message);
                if let Some(id) = failure.id {
                    writeln!(
                        output,
                        "{}",
                        wire::encode_error(&id, &failure.message, driver.last_dialect)
                    )?;
                    output.flush()?;
                }
                continue;
            }
        };
        let dialect = request.dialect.unwrap_or(driver.last_dialect);
        if let Some(d) = request.dialect {
            driver.last_dialect = d;
        }
        let response = match driver.dispatch(&mut runtime, &request.method, request.params) {
            Ok(result) => wire::encode_success(&request.id, result.as_ref(), dialect),
            Err(message) => wire::encode_error(&request.id, &message, dialect),
        };
        writeln!(output, "{response}")?;
        output.flush()?;
    }
    runtime.deactivate();
    Ok(())
}

struct Driver {
    last_dialect: Dialect,
    /// `observedAt` (Unix seconds) of the stored snapshot.
    observed_at: Option<f64>,
}

fn decode<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|e| e.to_string())
}

fn encode(value: impl serde::Serialize) -> Result<Option<Value>, String> {
    serde_json::to_value(value)
        .map(Some)
        .map_err(|e| e.to_string())
}

impl Driver {
    fn dispatch(
        &mut self,
        rt: &mut Runtime,
        method: &str,
        params: Option<Value>,
    ) -> Result<Option<Value>, String> {
        match method {
            method::SNAPSHOT => {
                let snapshot: dto::SnapshotDto = decode(params.ok_or(text::SNAPSHOT_MISSING)?)?;
                if !SUPPORTED_IPC_VERSIONS.contains(&snapshot.ipc_version) {
                    return Err(text::unsupported_snapshot_version(snapshot.ipc_version));
                }
                if self
                    .observed_at
                    .is_none_or(|stored| snapshot.observed_at >= stored)
                {
                    self.observed_at = Some(snapshot.observed_at);
                    sys::set_snapshot(convert::snapshot(snapshot));
                }
                Ok(None)
            }
            method::INITIALIZE => {
                let request: dto::InitializeDto = match params {
                    Some(params) => decode(params)?,
                    None => dto::InitializeDto::default(),
                };
                let handshake = rt.initialize(convert::initialize_request(request))?;
                encode(convert::handshake(handshake))
            }
            method::TOOL_EXECUTE => {
                let call = convert::tool_call(decode(params.ok_or(text::TOOL_MISSING)?)?);
                Ok(Some(Value::String(rt.execute_tool(call)?)))
            }
            method::COMMAND_EXECUTE => {
                let call = convert::command_call(decode(params.ok_or(text::COMMAND_MISSING)?)?);
                encode(convert::command_result(rt.execute_command(call)?))
            }
            method::HOOK_EMIT => {
                let payload: dto::HookEmitDto = decode(params.ok_or(text::HOOK_MISSING)?)?;
                if let Some(payload) = convert::hook_payload(payload) {
                    rt.emit_hook(payload)?;
                }
                Ok(None)
            }
            other => Err(text::unknown_method(other)),
        }
    }
}
