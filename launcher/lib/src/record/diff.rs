//! Comparing a recorded response with a new one: masks for volatile values,
//! base64 (Core dialect) results read as the JSON they carry, and a diff
//! that names each differing path.

use base64::Engine as _;
use serde_json::Value;

/// A value no longer compared: a member name anywhere (`observedAt`), or a
/// path from the response's root (`/result/stats/*/ms`, `*` for any key or
/// index). Core results are masked after they are decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Mask {
    /// Every member with this name, at any depth.
    Key(String),
    /// The members at this path.
    Path(Vec<String>),
}

impl Mask {
    /// Reads a rule: `/a/b` is a path, anything else a member name.
    pub fn parse(rule: &str) -> Result<Mask, String> {
        match rule.strip_prefix('/') {
            Some(path) if !path.is_empty() => Ok(Mask::Path(
                path.split('/')
                    .map(|p| p.replace("~1", "/").replace("~0", "~"))
                    .collect(),
            )),
            Some(_) => Err("a mask path names at least one member, e.g. /result/time".into()),
            None if rule.is_empty() => Err("a mask is a member name or a /path".into()),
            None => Ok(Mask::Key(rule.to_owned())),
        }
    }
}

const MASKED: &str = "<masked>";

/// `value` with the masked members replaced by a placeholder.
pub fn apply(masks: &[Mask], value: &mut Value) {
    for mask in masks {
        match mask {
            Mask::Key(key) => mask_key(value, key),
            Mask::Path(path) => mask_path(value, path),
        }
    }
}

fn mask_key(value: &mut Value, key: &str) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k == key {
                    *v = Value::from(MASKED);
                } else {
                    mask_key(v, key);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask_key(v, key)),
        _ => {}
    }
}

fn mask_path(value: &mut Value, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        *value = Value::from(MASKED);
        return;
    };
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if first == "*" || k == first {
                    mask_path(v, rest);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                if first == "*" || *first == i.to_string() {
                    mask_path(v, rest);
                }
            }
        }
        _ => {}
    }
}

/// A response line as compared: its JSON, with a base64 `result` that holds
/// JSON decoded in place (the Core dialect); a line that is not JSON stays
/// its text.
pub fn normalize(line: &str) -> Value {
    let Ok(mut value) = serde_json::from_str::<Value>(line) else {
        return Value::from(line);
    };
    decode_result(&mut value);
    value
}

/// Replaces a base64 `result` that holds JSON by that JSON.
pub fn decode_result(value: &mut Value) {
    let Some(result) = value.get_mut("result") else {
        return;
    };
    let decoded = result
        .as_str()
        .filter(|s| !s.is_empty())
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    if let Some(decoded) = decoded {
        *result = decoded;
    }
}

/// Every difference between `recorded` and `now`, one line each.
pub fn diff(recorded: &Value, now: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(recorded, now, String::new(), &mut out);
    out
}

fn walk(recorded: &Value, now: &Value, path: String, out: &mut Vec<String>) {
    let here = || {
        if path.is_empty() {
            "/".to_owned()
        } else {
            path.clone()
        }
    };
    match (recorded, now) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let sub = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                match b.get(k) {
                    Some(vb) => walk(va, vb, sub, out),
                    None => out.push(format!("{sub}: recorded {}, now missing", short(va))),
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    out.push(format!(
                        "{path}/{k}: now {}, not in the recording",
                        short(vb)
                    ));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                walk(va, vb, format!("{path}/{i}"), out);
            }
            if a.len() != b.len() {
                out.push(format!(
                    "{}: recorded {} items, now {}",
                    here(),
                    a.len(),
                    b.len()
                ));
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(format!(
            "{}: recorded {}, now {}",
            here(),
            short(a),
            short(b)
        )),
    }
}

/// Where `now` does not match `expected` as the conformance transcripts
/// mean it: every member of an expected object present and matching (extra
/// members allowed), arrays of the same length matching item by item,
/// other values equal.
pub fn unmet(expected: &Value, now: &Value) -> Vec<String> {
    let mut out = Vec::new();
    subset(expected, now, String::new(), &mut out);
    out
}

fn subset(expected: &Value, now: &Value, path: String, out: &mut Vec<String>) {
    match (expected, now) {
        (Value::Object(e), Value::Object(n)) => {
            for (k, ve) in e {
                let sub = format!("{path}/{k}");
                match n.get(k) {
                    Some(vn) => subset(ve, vn, sub, out),
                    None => out.push(format!("{sub}: expected {}, now missing", short(ve))),
                }
            }
        }
        (Value::Array(e), Value::Array(n)) if e.len() == n.len() => {
            for (i, (ve, vn)) in e.iter().zip(n).enumerate() {
                subset(ve, vn, format!("{path}/{i}"), out);
            }
        }
        (e, n) if e == n => {}
        (e, n) => {
            let at = if path.is_empty() { "/" } else { &path };
            out.push(format!("{at}: expected {}, now {}", short(e), short(n)));
        }
    }
}

/// A value as shown in a diff: its JSON, cut to 120 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_hide_volatile_values_by_name_or_path() {
        let mut v = json!({"id": "1", "result": {"at": 5, "list": [{"ms": 1}, {"ms": 2}], "deep": {"at": 6}}});
        apply(&[Mask::parse("at").unwrap()], &mut v);
        assert_eq!(v["result"]["at"], MASKED);
        assert_eq!(v["result"]["deep"]["at"], MASKED);
        apply(&[Mask::parse("/result/list/*/ms").unwrap()], &mut v);
        assert_eq!(v["result"]["list"], json!([{"ms": MASKED}, {"ms": MASKED}]));
        assert!(Mask::parse("/").is_err() && Mask::parse("").is_err());
    }

    #[test]
    fn core_results_are_compared_as_the_json_they_carry() {
        // base64 of {"ok":true}
        let v = normalize(r#"{"id":"1","result":"eyJvayI6dHJ1ZX0="}"#);
        assert_eq!(v, json!({"id": "1", "result": {"ok": true}}));
        // An empty result, and text that is not JSON, stay as they are.
        assert_eq!(normalize(r#"{"id":"1","result":""}"#)["result"], "");
        assert_eq!(normalize("not json"), json!("not json"));
    }

    #[test]
    fn a_diff_names_every_differing_path() {
        let a = json!({"id": "1", "result": {"name": "x", "list": [1, 2], "gone": 1}});
        let b = json!({"id": "1", "result": {"name": "y", "list": [1], "new": true}});
        let lines = diff(&a, &b);
        assert_eq!(
            lines,
            [
                "/result/name: recorded \"x\", now \"y\"",
                "/result/list: recorded 2 items, now 1",
                "/result/gone: recorded 1, now missing",
                "/result/new: now true, not in the recording",
            ]
        );
        assert!(diff(&a, &a).is_empty());
    }
}
