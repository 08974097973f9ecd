//! One request line in, its response line out: the LingXi methods as the
//! wire carries them (spec §2–§3). Decoding (either dialect), the method
//! table, the answer in the request's dialect and the cap on the answer's
//! line are decided here, once: the launcher's [`Server`](crate::Server)
//! and an agent host's own wire front both answer through a [`Dispatcher`];
//! what answers each method is theirs ([`Methods`]).

use std::fmt::Display;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bindings::lingxi::plugin::types as wit;
use crate::convert;
use crate::error::{CallError, SnapshotError};
use crate::limits::MAX_LINE_BYTES;
use crate::options::CallOptions;
use crate::plugin::PluginHost;
use crate::protocol::wire::{self, Dialect, Request};
use crate::protocol::{dto, method, text};

/// What answers the LingXi methods behind a wire front: one plugin (a
/// [`PluginHost`], as `lingxi-wasm-run` serves it, with every call under
/// the plugin's own limits) or whatever an agent host routes them to (a
/// [`Session`](crate::Session) of a set, by tool and command name).
// The futures are awaited where they are made (one request at a time, on
// the front's own task): they need no `Send` bound.
#[allow(async_fn_in_trait)]
pub trait Methods {
    /// What a failed call says on the wire.
    type Error: Display;

    /// `host.snapshot`.
    fn snapshot(&mut self, snapshot: wit::RuntimeSnapshot) -> Result<(), Self::Error>;

    /// `plugin.initialize`.
    async fn initialize(
        &mut self,
        request: wit::InitializeRequest,
    ) -> Result<wit::Handshake, Self::Error>;

    /// `tool.execute`.
    async fn execute_tool(&mut self, call: wit::ToolCall) -> Result<String, Self::Error>;

    /// `command.execute`.
    async fn execute_command(
        &mut self,
        call: wit::CommandCall,
    ) -> Result<wit::CommandResult, Self::Error>;

    /// `hook.emit` of an event this version knows.
    async fn emit_hook(&mut self, payload: wit::HookPayload) -> Result<(), Self::Error>;
}

/// What a failed call of one plugin says: the snapshot's or the call's own
/// words.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The snapshot was refused.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The call failed.
    #[error(transparent)]
    Call(#[from] CallError),
}

impl Methods for PluginHost {
    type Error = PluginError;

    fn snapshot(&mut self, snapshot: wit::RuntimeSnapshot) -> Result<(), PluginError> {
        Ok(self.apply_snapshot(snapshot)?)
    }

    async fn initialize(
        &mut self,
        request: wit::InitializeRequest,
    ) -> Result<wit::Handshake, PluginError> {
        Ok(PluginHost::initialize(self, request).await?)
    }

    async fn execute_tool(&mut self, call: wit::ToolCall) -> Result<String, PluginError> {
        Ok(PluginHost::execute_tool(self, call, CallOptions::default()).await?)
    }

    async fn execute_command(
        &mut self,
        call: wit::CommandCall,
    ) -> Result<wit::CommandResult, PluginError> {
        Ok(PluginHost::execute_command(self, call, CallOptions::default()).await?)
    }

    async fn emit_hook(&mut self, payload: wit::HookPayload) -> Result<(), PluginError> {
        Ok(PluginHost::emit_hook(self, payload, CallOptions::default()).await?)
    }
}

/// A wire front's state: the dialect answers take until a request carries
/// params (Core's), and whose front it is, for its log lines.
#[derive(Debug)]
pub struct Dispatcher {
    last_dialect: Dialect,
    plugin: Option<String>,
    /// The id of the latest response, if the latest line had one.
    answered: Option<String>,
}

type Outcome = Result<Option<Value>, String>;

impl Dispatcher {
    /// A front for plugin `plugin` (named in its log lines), or for several
    /// (`None`).
    pub fn new(plugin: Option<String>) -> Self {
        Dispatcher {
            last_dialect: Dialect::Core,
            plugin,
            answered: None,
        }
    }

    /// The response to one raw line (without its newline). `None` means no
    /// response: the line was empty, or undecodable with no recoverable id.
    pub async fn answer_bytes(&mut self, to: &mut impl Methods, line: &[u8]) -> Option<String> {
        match std::str::from_utf8(line) {
            Ok(text) => self.answer_line(to, text).await,
            Err(e) => {
                let text = String::from_utf8_lossy(line);
                let id = wire::decode_request(&text).ok().flatten().map(|r| r.id);
                self.undecodable(id, format!("request line is not valid UTF-8: {e}"))
            }
        }
    }

    /// The id of the latest response (of [`Dispatcher::answer_bytes`],
    /// [`Dispatcher::answer_line`] or [`Dispatcher::too_long`]); `None`
    /// if that line got no response.
    pub fn answered_id(&self) -> Option<&str> {
        self.answered.as_deref()
    }

    /// The response to one line of text.
    pub async fn answer_line(&mut self, to: &mut impl Methods, line: &str) -> Option<String> {
        self.answered = None;
        let request = match wire::decode_request(line) {
            Ok(Some(request)) => request,
            Ok(None) => return None,
            Err(failure) => return self.undecodable(failure.id, failure.message),
        };
        let dialect = request.dialect.unwrap_or(self.last_dialect);
        if let Some(d) = request.dialect {
            self.last_dialect = d;
        }
        let id = request.id.clone();
        self.answered = Some(id.clone());
        let response = match dispatch(to, request).await {
            Ok(result) => wire::encode_success(&id, result.as_ref(), dialect),
            Err(message) => wire::encode_error(&id, &message, dialect),
        };
        // Escaping (JSON, base64) can make a line several times longer than
        // the text the limits were checked on: the line itself is capped too.
        if response.len() > MAX_LINE_BYTES {
            let message = format!(
                "the answer is {} bytes on the wire, more than the {MAX_LINE_BYTES}-byte line limit; return less, or write large data to the workspace",
                response.len()
            );
            match &self.plugin {
                Some(plugin) => tracing::warn!(plugin = %plugin, "{message}"),
                None => tracing::warn!("{message}"),
            }
            return Some(wire::encode_error(&id, &message, dialect));
        }
        Some(response)
    }

    /// The response to a line longer than [`MAX_LINE_BYTES`], of which
    /// `prefix` was kept.
    pub fn too_long(&mut self, prefix: &[u8]) -> Option<String> {
        let message = format!(
            "request line is longer than {MAX_LINE_BYTES} bytes and was skipped; send large data through the workspace instead"
        );
        // The id usually comes first: try to read it from the kept prefix.
        let text = String::from_utf8_lossy(prefix);
        let id = text
            .split_once("\"id\":\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(id, _)| id.to_owned());
        self.undecodable(id, message)
    }

    fn undecodable(&mut self, id: Option<String>, message: String) -> Option<String> {
        tracing::warn!("skipping an undecodable request line: {message}");
        self.answered = id.clone();
        id.map(|id| wire::encode_error(&id, &message, self.last_dialect))
    }
}

/// The method table.
async fn dispatch(to: &mut impl Methods, request: Request) -> Outcome {
    let failed = |e: &dyn Display| e.to_string();
    let params = request.params;
    match request.method.as_str() {
        method::SNAPSHOT => {
            let params = params.ok_or(text::SNAPSHOT_MISSING)?;
            let snapshot: dto::SnapshotDto = decode(params)?;
            to.snapshot(convert::snapshot(snapshot))
                .map_err(|e| failed(&e))?;
            Ok(None)
        }
        method::INITIALIZE => {
            let request = match params {
                Some(params) => decode::<dto::InitializeDto>(params)?,
                None => dto::InitializeDto::default(),
            };
            let request = convert::initialize_request(request);
            let handshake = to.initialize(request).await.map_err(|e| failed(&e))?;
            to_value(convert::handshake(handshake))
        }
        method::TOOL_EXECUTE => {
            let params = params.ok_or(text::TOOL_MISSING)?;
            let call = convert::tool_call(decode(params)?);
            let text = to.execute_tool(call).await.map_err(|e| failed(&e))?;
            Ok(Some(Value::String(text)))
        }
        method::COMMAND_EXECUTE => {
            let params = params.ok_or(text::COMMAND_MISSING)?;
            let call = convert::command_call(decode(params)?);
            let result = to.execute_command(call).await.map_err(|e| failed(&e))?;
            to_value(convert::command_result(result))
        }
        method::HOOK_EMIT => {
            let params = params.ok_or(text::HOOK_MISSING)?;
            let payload: dto::HookEmitDto = decode(params)?;
            match convert::hook_payload(payload.clone()) {
                Some(payload) => to.emit_hook(payload).await.map_err(|e| failed(&e))?,
                // No plugin can have a handler for an event this version
                // does not know: acknowledge it, as for any unhandled event.
                None => tracing::debug!("acknowledging unknown hook event {}", payload.event),
            }
            Ok(None)
        }
        other => Err(text::unknown_method(other)),
    }
}

fn decode<T: DeserializeOwned>(params: Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|e| e.to_string())
}

fn to_value(value: impl serde::Serialize) -> Outcome {
    serde_json::to_value(value)
        .map(Some)
        .map_err(|e| format!("cannot encode the plugin's answer: {e}"))
}
