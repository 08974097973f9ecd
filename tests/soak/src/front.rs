//! The embedding soak's wire front: what an agent host that speaks the
//! LingXi wire to its own side does with a plugin set. Each request line is
//! decoded with the host library's own decoder (either dialect), routed
//! through the set's session API (tools and commands by name, hooks to
//! every subscriber, `plugin.initialize` to the testbed) and answered in
//! the dialect it came in, as `lingxi-wasm-run` answers.

use std::sync::Arc;
use std::time::Duration;

use lingxi_wasm_host::protocol::wire::{self, Dialect, Request};
use lingxi_wasm_host::protocol::{dto, method, text};
use lingxi_wasm_host::{Session, convert};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The testbed's plugin id.
pub const TESTBED: &str = "com.lingxi.testbed";

/// One session of a set behind a wire front.
pub struct Front {
    session: Arc<Session>,
    last_dialect: Dialect,
    /// The deadline the host gives the runaway tool (`spin`); other calls
    /// get the plugin's own call timeout.
    spin_deadline: Duration,
}

type Outcome = Result<Option<Value>, String>;

impl Front {
    /// A front for `session`.
    pub fn new(session: Arc<Session>, spin_deadline: Duration) -> Self {
        Front {
            session,
            last_dialect: Dialect::Core,
            spin_deadline,
        }
    }

    /// The session behind it.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The response line to `line`, if it gets one.
    pub async fn answer(&mut self, line: &str) -> Option<String> {
        let request = match wire::decode_request(line) {
            Ok(Some(request)) => request,
            Ok(None) => return None,
            Err(failure) => {
                let dialect = self.last_dialect;
                return failure
                    .id
                    .map(|id| wire::encode_error(&id, &failure.message, dialect));
            }
        };
        let dialect = request.dialect.unwrap_or(self.last_dialect);
        self.last_dialect = dialect;
        let id = request.id.clone();
        Some(match self.dispatch(request).await {
            Ok(result) => wire::encode_success(&id, result.as_ref(), dialect),
            Err(message) => wire::encode_error(&id, &message, dialect),
        })
    }

    async fn dispatch(&self, request: Request) -> Outcome {
        let params = request.params;
        let session = &self.session;
        match request.method.as_str() {
            method::SNAPSHOT => {
                let params = params.ok_or(text::SNAPSHOT_MISSING)?;
                let snapshot: dto::SnapshotDto = decode(params)?;
                session
                    .set_snapshot(convert::snapshot(snapshot))
                    .map_err(|e| e.to_string())?;
                Ok(None)
            }
            method::INITIALIZE => {
                let request = match params {
                    Some(params) => decode::<dto::InitializeDto>(params)?,
                    None => dto::InitializeDto::default(),
                };
                let request = convert::initialize_request(request);
                let handshake = session.initialize(TESTBED, request).await;
                to_value(convert::handshake(handshake.map_err(|e| e.to_string())?))
            }
            method::TOOL_EXECUTE => {
                let params = params.ok_or(text::TOOL_MISSING)?;
                let call: dto::ToolExecuteDto = decode(params)?;
                let deadline = (call.tool_name == "spin").then_some(self.spin_deadline);
                let output = session.call_tool_within(&call.tool_name, &call.arguments, deadline);
                Ok(Some(Value::String(
                    output.await.map_err(|e| e.to_string())?,
                )))
            }
            method::COMMAND_EXECUTE => {
                let params = params.ok_or(text::COMMAND_MISSING)?;
                let call: dto::CommandExecuteDto = decode(params)?;
                let result = session.run_command(&call.command_name, call.arguments);
                to_value(convert::command_result(
                    result.await.map_err(|e| e.to_string())?,
                ))
            }
            method::HOOK_EMIT => {
                let params = params.ok_or(text::HOOK_MISSING)?;
                let payload: dto::HookEmitDto = decode(params)?;
                // An event this version does not know has no subscriber:
                // acknowledged, as the launcher does.
                let Some(payload) = convert::hook_payload(payload) else {
                    return Ok(None);
                };
                let failed: Vec<String> = (session.emit(payload).await.into_iter())
                    .filter_map(|o| o.result.err().map(|e| format!("{}: {e}", o.plugin)))
                    .collect();
                if failed.is_empty() {
                    Ok(None)
                } else {
                    Err(failed.join("; "))
                }
            }
            other => Err(text::unknown_method(other)),
        }
    }
}

fn decode<T: DeserializeOwned>(params: Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|e| e.to_string())
}

fn to_value(value: impl serde::Serialize) -> Outcome {
    serde_json::to_value(value)
        .map(Some)
        .map_err(|e| format!("cannot encode the answer: {e}"))
}
