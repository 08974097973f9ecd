//! The JSON-Lines envelope: decoding a request line in either dialect and
//! encoding the response in the dialect the request arrived in (spec §1–§2).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use serde_json::{Map, Value};

/// The two encodings of `params` / `result` found in the wild.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// What LingXi Core sends: `params`/`result` are base64 strings of compact
    /// JSON; empty results are `""`; absent fields are omitted.
    Core,
    /// What the SDK documentation shows: nested JSON, `null` for empty results,
    /// `"error": null` on success.
    Doc,
}

/// A decoded request line.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The request id, echoed in the response.
    pub id: String,
    /// The method name, e.g. `tool.execute`.
    pub method: String,
    /// The inner params JSON, if any were sent (`null` counts as none).
    pub params: Option<Value>,
    /// The dialect the params arrived in; `None` when there were no params.
    pub dialect: Option<Dialect>,
}

/// Why a line is not a request. `id` is set when it could be recovered, so the
/// caller can still answer with an error.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeFailure {
    /// The request id, if the line had a string id.
    pub id: Option<String>,
    /// What is wrong with the line.
    pub message: String,
}

/// Decodes one line (without its `\n`; surrounding whitespace is ignored).
/// Returns `Ok(None)` for an empty line, which is skipped.
pub fn decode_request(line: &str) -> Result<Option<Request>, DecodeFailure> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let fail = |id: Option<String>, message: String| DecodeFailure { id, message };
    let value: Value = serde_json::from_str(line)
        .map_err(|e| fail(None, format!("request line is not valid JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        return Err(fail(None, "request line is not a JSON object".into()));
    };
    let id = match object.remove("id") {
        Some(Value::String(id)) => id,
        Some(other) => {
            return Err(fail(
                None,
                format!("request id must be a string, got {}", kind(&other)),
            ));
        }
        None => return Err(fail(None, "request has no \"id\"".into())),
    };
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => {
            return Err(fail(
                Some(id),
                "request has no string \"method\"; send {\"id\", \"method\", \"params\"?}".into(),
            ));
        }
    };
    let (params, dialect) = match object.remove("params") {
        None | Some(Value::Null) => (None, None),
        Some(Value::String(encoded)) => match decode_base64_json(&encoded) {
            Ok(inner) => (Some(inner), Some(Dialect::Core)),
            Err(message) => return Err(fail(Some(id), message)),
        },
        Some(nested) => (Some(nested), Some(Dialect::Doc)),
    };
    Ok(Some(Request {
        id,
        method,
        params,
        dialect,
    }))
}

fn decode_base64_json(encoded: &str) -> Result<Value, String> {
    let bytes = STANDARD
        .decode(encoded)
        .or_else(|_| STANDARD_NO_PAD.decode(encoded))
        .map_err(|e| {
            format!(
                "params string is not standard base64 ({e}); send base64 of JSON or nested JSON"
            )
        })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("params decode from base64 but are not valid JSON: {e}"))
}

/// What kind of JSON value `value` is, for messages ("a string", "null"…).
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Encodes a request line, as a host sends one: `params` is the inner JSON
/// (`None`: no params), nested in the doc dialect, base64 of compact JSON in
/// Core's.
pub fn encode_request(id: &str, method: &str, params: Option<&Value>, dialect: Dialect) -> String {
    let mut object = Map::new();
    object.insert("id".into(), Value::String(id.to_owned()));
    object.insert("method".into(), Value::String(method.to_owned()));
    if let Some(params) = params {
        let params = match dialect {
            Dialect::Core => Value::String(STANDARD.encode(params.to_string())),
            Dialect::Doc => params.clone(),
        };
        object.insert("params".into(), params);
    }
    Value::Object(object).to_string()
}

/// Encodes a success response. `result` is the inner JSON; `None` is the
/// empty result (`""` in the Core dialect, `null` in the doc dialect).
pub fn encode_success(id: &str, result: Option<&Value>, dialect: Dialect) -> String {
    let mut object = Map::new();
    object.insert("id".into(), Value::String(id.to_owned()));
    match dialect {
        Dialect::Core => {
            let encoded = match result {
                None => String::new(),
                Some(value) => STANDARD.encode(value.to_string()),
            };
            object.insert("result".into(), Value::String(encoded));
        }
        Dialect::Doc => {
            object.insert("result".into(), result.cloned().unwrap_or(Value::Null));
            object.insert("error".into(), Value::Null);
        }
    }
    Value::Object(object).to_string()
}

/// Encodes an error response: `error` is a plain string in both dialects.
pub fn encode_error(id: &str, message: &str, dialect: Dialect) -> String {
    let mut object = Map::new();
    object.insert("id".into(), Value::String(id.to_owned()));
    if dialect == Dialect::Doc {
        object.insert("result".into(), Value::Null);
    }
    object.insert("error".into(), Value::String(message.to_owned()));
    Value::Object(object).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_encoded_request_decodes_in_its_dialect() {
        let params = json!({"toolName": "t", "arguments": "{}"});
        for dialect in [Dialect::Core, Dialect::Doc] {
            let line = encode_request("r-1", "tool.execute", Some(&params), dialect);
            let request = decode_request(&line).unwrap().unwrap();
            assert_eq!(request.id, "r-1");
            assert_eq!(request.method, "tool.execute");
            assert_eq!(request.params.as_ref(), Some(&params));
            assert_eq!(request.dialect, Some(dialect));
        }
        let bare = encode_request("r-2", "plugin.initialize", None, Dialect::Doc);
        assert_eq!(bare, r#"{"id":"r-2","method":"plugin.initialize"}"#);
    }

    #[test]
    fn core_params_are_base64_json() {
        let r = decode_request(r#"{"id":"B","method":"plugin.initialize","params":"eyJob3N0SVBDVmVyc2lvbiI6MSwiY29yZVZlcnNpb24iOiIxLjEuMCJ9"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(r.dialect, Some(Dialect::Core));
        assert_eq!(
            r.params,
            Some(json!({"hostIPCVersion": 1, "coreVersion": "1.1.0"}))
        );
    }

    #[test]
    fn doc_params_are_nested_and_null_is_none() {
        let r = decode_request(r#" {"id":"x","method":"m","params":{"a":1}}  "#)
            .unwrap()
            .unwrap();
        assert_eq!(r.dialect, Some(Dialect::Doc));
        let r = decode_request(r#"{"id":"x","method":"m","params":null}"#)
            .unwrap()
            .unwrap();
        assert_eq!((r.params, r.dialect), (None, None));
    }

    #[test]
    fn empty_lines_are_skipped() {
        assert_eq!(decode_request("  \r"), Ok(None));
    }

    #[test]
    fn undecodable_lines_recover_the_id_when_possible() {
        assert_eq!(decode_request("{nope").unwrap_err().id, None);
        assert_eq!(
            decode_request(r#"{"id":7,"method":"m"}"#).unwrap_err().id,
            None
        );
        let bad = decode_request(r#"{"id":"q","method":"m","params":"***"}"#).unwrap_err();
        assert_eq!(bad.id.as_deref(), Some("q"));
        assert!(bad.message.contains("base64"), "{}", bad.message);
        let no_method = decode_request(r#"{"id":"q"}"#).unwrap_err();
        assert_eq!(no_method.id.as_deref(), Some("q"));
    }

    #[test]
    fn responses_follow_the_dialect() {
        let v = json!("echo:hi");
        let core: Value =
            serde_json::from_str(&encode_success("C", Some(&v), Dialect::Core)).unwrap();
        assert_eq!(core, json!({"id": "C", "result": "ImVjaG86aGki"}));
        let empty: Value = serde_json::from_str(&encode_success("A", None, Dialect::Core)).unwrap();
        assert_eq!(empty, json!({"id": "A", "result": ""}));
        let doc: Value = serde_json::from_str(&encode_success("A", None, Dialect::Doc)).unwrap();
        assert_eq!(doc, json!({"id": "A", "result": null, "error": null}));
        let err: Value = serde_json::from_str(&encode_error("F", "no", Dialect::Core)).unwrap();
        assert_eq!(err, json!({"id": "F", "error": "no"}));
    }
}
