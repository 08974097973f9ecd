//! Target `request`: one JSONL request line as `lingxi-wasm-run` reads it
//! (`host/src/server.rs`): UTF-8 (or the lossy text, to recover an id),
//! `wire::decode_request` in either dialect, the params decoded into the
//! DTO of the method and converted to WIT, then the response encoded in
//! the request's dialect. A plugin stand-in echoes the params as result.
//!
//! Invariants: no panic; an empty line and only an empty line is skipped;
//! a request has params iff it has a dialect, and doc-dialect params are
//! never a string or null; re-encoding a decoded request in its dialect
//! decodes to the same request; every answer is one line of a JSON object
//! with the request's id and, in the Core dialect, a base64 result that
//! decodes to the JSON that was sent (in the doc dialect the result itself
//! and `"error": null`); an error answer carries the message unchanged;
//! an answer is at most 16 times as long as the line (plus 1 KiB).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use lingxi_protocol::wire::{self, Dialect, Request};
use lingxi_protocol::{dto, method, text};
use lingxi_wasm_host::convert;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::json::{parse_line, same};
use crate::{Violation, ensure};

const TARGET: &str = "request";

/// See the module documentation; `data` may hold several lines.
pub fn check(data: &[u8]) -> Result<(), Violation> {
    data.split(|b| *b == b'\n').try_for_each(check_line)
}

fn check_line(line: &[u8]) -> Result<(), Violation> {
    let Ok(text) = std::str::from_utf8(line) else {
        // As the server does: the id read from the lossy text, if any,
        // gets an error in the last dialect.
        let lossy = String::from_utf8_lossy(line);
        if let Some(request) = wire::decode_request(&lossy).ok().flatten() {
            check_error(
                &request.id,
                "request line is not valid UTF-8",
                Dialect::Core,
            )?;
        }
        return Ok(());
    };
    let request = match wire::decode_request(text) {
        Ok(None) => {
            ensure!(text.trim().is_empty(), "skipped a non-empty line {text:?}");
            return Ok(());
        }
        Err(failure) => {
            ensure!(!text.trim().is_empty(), "an empty line failed: {failure:?}");
            ensure!(!failure.message.is_empty(), "a failure without a message");
            if let Some(id) = &failure.id {
                for dialect in [Dialect::Core, Dialect::Doc] {
                    check_error(id, &failure.message, dialect)?;
                }
            }
            return Ok(());
        }
        Ok(Some(request)) => request,
    };
    ensure!(
        request.params.is_some() == request.dialect.is_some(),
        "params and dialect disagree: {request:?}"
    );
    ensure!(
        request.dialect != Some(Dialect::Doc)
            || !matches!(request.params, Some(Value::String(_) | Value::Null)),
        "doc-dialect params that are a string or null: {request:?}"
    );
    round_trip(&request)?;
    let dialect = request.dialect.unwrap_or(Dialect::Core);
    match dispatch(&request)? {
        Ok(result) => check_success(&request.id, result.as_ref(), dialect, line.len()),
        Err(message) => check_error(&request.id, &message, dialect),
    }
}

/// The request as a client would send it in its dialect.
fn encode_request(request: &Request) -> String {
    let mut object = Map::new();
    object.insert("id".into(), Value::String(request.id.clone()));
    object.insert("method".into(), Value::String(request.method.clone()));
    match (request.dialect, &request.params) {
        (Some(Dialect::Core), Some(params)) => {
            let encoded = STANDARD.encode(params.to_string());
            object.insert("params".into(), Value::String(encoded));
        }
        (Some(Dialect::Doc), Some(params)) => {
            object.insert("params".into(), params.clone());
        }
        _ => {}
    }
    Value::Object(object).to_string()
}

fn round_trip(request: &Request) -> Result<(), Violation> {
    let line = encode_request(request);
    let again = wire::decode_request(&line);
    let Ok(Some(again)) = again else {
        return Err(Violation {
            target: TARGET,
            what: format!("{request:?} re-encoded as {line:?} decodes as {again:?}"),
        });
    };
    let params_same = match (&request.params, &again.params) {
        (Some(a), Some(b)) => same(a, b),
        (a, b) => a == b,
    };
    ensure!(
        again.id == request.id
            && again.method == request.method
            && again.dialect == request.dialect
            && params_same,
        "{request:?} re-encoded as {line:?} decodes as {again:?}"
    );
    Ok(())
}

/// What the server does with the params of each method, with a plugin
/// that echoes them; the outer error is a broken invariant.
fn dispatch(request: &Request) -> Result<Result<Option<Value>, String>, Violation> {
    let params = request.params.clone();
    let echo = params.clone();
    let missing = |text: &str| Ok(Err(text.to_owned()));
    match request.method.as_str() {
        method::SNAPSHOT => match params.map(decode::<dto::SnapshotDto>) {
            None => missing(text::SNAPSHOT_MISSING),
            Some(Err(e)) => Ok(Err(e)),
            Some(Ok(snapshot)) => crate::dto::check_snapshot(snapshot).map(|()| Ok(None)),
        },
        method::INITIALIZE => {
            let request = match params {
                Some(params) => decode::<dto::InitializeDto>(params),
                None => Ok(dto::InitializeDto::default()),
            };
            Ok(request.map(|r| {
                let _ = convert::initialize_request(r);
                echo
            }))
        }
        method::TOOL_EXECUTE => match params.map(decode::<dto::ToolExecuteDto>) {
            None => missing(text::TOOL_MISSING),
            Some(call) => Ok(call.map(|d| Some(Value::String(convert::tool_call(d).arguments)))),
        },
        method::COMMAND_EXECUTE => match params.map(decode::<dto::CommandExecuteDto>) {
            None => missing(text::COMMAND_MISSING),
            Some(call) => Ok(call.map(|d| {
                let _ = convert::command_call(d);
                echo
            })),
        },
        method::HOOK_EMIT => match params.map(decode::<dto::HookEmitDto>) {
            None => missing(text::HOOK_MISSING),
            Some(Err(e)) => Ok(Err(e)),
            Some(Ok(hook)) => crate::dto::check_hook(hook).map(|()| Ok(None)),
        },
        other => Ok(Err(text::unknown_method(other))),
    }
}

fn decode<T: DeserializeOwned>(params: Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|e| e.to_string())
}

fn check_success(
    id: &str,
    result: Option<&Value>,
    dialect: Dialect,
    line_len: usize,
) -> Result<(), Violation> {
    let line = wire::encode_success(id, result, dialect);
    ensure!(
        line.len() <= 16 * line_len + 1024,
        "an answer of {} bytes to a line of {line_len}",
        line.len()
    );
    let object = parse_line(&line);
    ensure!(
        object.is_some(),
        "answer {line:?} is not one JSON object line"
    );
    let object = object.unwrap_or_default();
    ensure!(
        object.get("id") == Some(&Value::String(id.to_owned())),
        "answer {line:?} lost the id {id:?}"
    );
    let sent = result.cloned().unwrap_or(Value::Null);
    let got = match (dialect, object.get("result")) {
        (Dialect::Core, Some(Value::String(encoded))) if encoded.is_empty() => Some(Value::Null),
        (Dialect::Core, Some(Value::String(encoded))) => STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok()),
        (Dialect::Doc, Some(value)) => {
            ensure!(
                object.get("error") == Some(&Value::Null),
                "doc answer {line:?} without \"error\": null"
            );
            Some(value.clone())
        }
        _ => None,
    };
    ensure!(
        got.as_ref().is_some_and(|got| same(got, &sent)),
        "answer {line:?} does not carry {sent}"
    );
    Ok(())
}

fn check_error(id: &str, message: &str, dialect: Dialect) -> Result<(), Violation> {
    let line = wire::encode_error(id, message, dialect);
    let object = parse_line(&line).unwrap_or_default();
    ensure!(
        object.get("id") == Some(&Value::String(id.to_owned()))
            && object.get("error") == Some(&Value::String(message.to_owned())),
        "error answer {line:?} lost the id {id:?} or the message {message:?}"
    );
    let result = object.get("result");
    ensure!(
        match dialect {
            Dialect::Core => result.is_none(),
            Dialect::Doc => result == Some(&Value::Null),
        },
        "error answer {line:?} has the wrong result for {dialect:?}"
    );
    Ok(())
}
