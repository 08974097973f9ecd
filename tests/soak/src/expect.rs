//! What a request must be answered with, and checking one response line
//! against it: the envelope of the dialect it must come in (spec §1–§2),
//! then success or error, then the content.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use lingxi_wasm_host::protocol::wire::Dialect;
use serde_json::Value;

/// The answer a request must get.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// Success with the empty result (snapshot, hook).
    Empty,
    /// Success with this string as the result (a tool's output).
    Text(String),
    /// Success with this JSON as the result.
    Json(Value),
    /// Success with the testbed's handshake.
    Handshake,
    /// Success with a command message whose text contains `has` (and whose
    /// title is `title`, when given).
    Message { has: String, title: Option<String> },
    /// An error with exactly this text.
    Error(String),
    /// An error whose text contains each of these.
    ErrorHas(Vec<String>),
}

/// The id of a response line, if it has one.
pub fn response_id(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    value.get("id")?.as_str().map(str::to_owned)
}

/// Checks `line` against `expect` in `dialect`; `Err` says what is wrong.
pub fn check(line: &str, dialect: Dialect, expect: &Expect) -> Result<(), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    let object = value.as_object().ok_or("not a JSON object")?;
    let error = object.get("error");
    let result = object.get("result");
    let outcome: Result<Option<Value>, String> = match (dialect, error, result) {
        (Dialect::Core, Some(Value::String(e)), None) => Err(e.clone()),
        (Dialect::Core, None, Some(Value::String(encoded))) => Ok(decode_core(encoded)?),
        (Dialect::Doc, Some(Value::String(e)), Some(Value::Null)) => Err(e.clone()),
        (Dialect::Doc, Some(Value::Null), Some(r)) => Ok(Some(r.clone()).filter(|r| !r.is_null())),
        _ => return Err(format!("not a {dialect:?}-dialect response envelope")),
    };
    if object.len() != 2 + usize::from(dialect == Dialect::Doc) {
        return Err(format!("unexpected fields for the {dialect:?} dialect"));
    }
    match (expect, outcome) {
        (Expect::Error(want), Err(got)) if *want == got => Ok(()),
        (Expect::ErrorHas(parts), Err(got)) if parts.iter().all(|p| got.contains(p.as_str())) => {
            Ok(())
        }
        (Expect::Error(_) | Expect::ErrorHas(_), Err(got)) => Err(format!("wrong error: {got}")),
        (_, Err(got)) => Err(format!("error instead of success: {got}")),
        (Expect::Error(_) | Expect::ErrorHas(_), Ok(got)) => {
            Err(format!("success instead of an error: {got:?}"))
        }
        (expect, Ok(got)) => success(expect, got),
    }
}

/// `text` cut to at most `max` bytes, on a character boundary.
pub fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn decode_core(encoded: &str) -> Result<Option<Value>, String> {
    if encoded.is_empty() {
        return Ok(None);
    }
    let bytes = STANDARD
        .decode(encoded)
        .map_err(|e| format!("result is not base64 ({e})"))?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| format!("result is not base64 of JSON ({e})"))
}

fn success(expect: &Expect, got: Option<Value>) -> Result<(), String> {
    let ok = match (expect, &got) {
        (Expect::Empty, None) => true,
        (Expect::Text(want), Some(Value::String(text))) => want == text,
        (Expect::Json(want), Some(value)) => want == value,
        (Expect::Handshake, Some(value)) => is_testbed_handshake(value),
        (Expect::Message { has, title }, Some(value)) => {
            value["isPrompt"] == false
                && value["text"]
                    .as_str()
                    .is_some_and(|t| t.contains(has.as_str()))
                && title.as_ref().is_none_or(|t| value["title"] == t.as_str())
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("wrong result: {}", cut(&format!("{got:?}"), 300)))
    }
}

/// The testbed's handshake: its id, IPC version 1, its tools and command,
/// and its one hook.
fn is_testbed_handshake(value: &Value) -> bool {
    let names = |key: &str| -> Vec<&str> {
        value[key]
            .as_array()
            .map(|list| list.iter().filter_map(|d| d["name"].as_str()).collect())
            .unwrap_or_default()
    };
    let tools = names("tools");
    value["manifest"]["id"] == "com.lingxi.testbed"
        && value["ipcVersion"] == 1
        && ["ok", "len", "kv-get", "spin", "panic"]
            .iter()
            .all(|t| tools.contains(t))
        && names("commands") == ["info"]
        && value["supportedHooks"] == serde_json::json!(["agentTurnEnd"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelopes_follow_the_dialect() {
        let core_ok = r#"{"id":"A","result":"ImVjaG86aGki"}"#;
        assert!(check(core_ok, Dialect::Core, &Expect::Text("echo:hi".into())).is_ok());
        assert!(check(core_ok, Dialect::Doc, &Expect::Text("echo:hi".into())).is_err());
        let doc_empty = r#"{"id":"A","result":null,"error":null}"#;
        assert!(check(doc_empty, Dialect::Doc, &Expect::Empty).is_ok());
        assert!(check(r#"{"id":"A","result":""}"#, Dialect::Core, &Expect::Empty).is_ok());
        let doc_err = r#"{"id":"F","result":null,"error":"Unknown IPC method: x"}"#;
        let want = Expect::Error("Unknown IPC method: x".into());
        assert!(check(doc_err, Dialect::Doc, &want).is_ok());
        assert!(check(doc_err, Dialect::Core, &want).is_err());
        let has = Expect::ErrorHas(vec!["method".into()]);
        assert!(check(doc_err, Dialect::Doc, &has).is_ok());
        assert!(check(doc_err, Dialect::Doc, &Expect::Empty).is_err());
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut("aé", 2), "a");
        assert_eq!(cut("abc", 10), "abc");
    }

    #[test]
    fn messages_are_matched_on_their_text_and_title() {
        let line =
            json!({"id":"c","result":{"isPrompt":false,"text":"root=/a","title":"t"},"error":null});
        let want = |title: &str| Expect::Message {
            has: "/a".into(),
            title: Some(title.into()),
        };
        assert!(check(&line.to_string(), Dialect::Doc, &want("t")).is_ok());
        assert!(check(&line.to_string(), Dialect::Doc, &want("u")).is_err());
    }
}
