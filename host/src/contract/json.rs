//! The arguments as JSON, read strictly: an object that repeats a key is
//! refused. Parsers disagree on which of two values for one key counts
//! (serde_json's `Value` keeps the last, others the first), so the value
//! the host checked could otherwise differ from the one the plugin uses.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Parses `text` as JSON, refusing repeated keys and anything after the value.
pub(crate) fn parse(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Strict.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Deserializes one JSON value, refusing repeated keys at any depth.
struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(Strict)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Strict)?;
            if object.contains_key(&key) {
                let shown = super::schema::quoted(&key, 60);
                return Err(de::Error::custom(format!(
                    "the key \"{shown}\" appears twice in one object; send each key once"
                )));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// One step into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// A property of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// `text` (checked by [`parse`]) with the value at each path of
/// `replaced` replaced by a JSON string, and everything else as it was
/// written: only the objects and arrays on the way are written anew, so
/// numbers, escapes and the other values reach the plugin unchanged.
pub(crate) fn splice(
    text: &str,
    replaced: &[(Vec<Seg>, String)],
) -> Result<String, serde_json::Error> {
    let all: Vec<(&[Seg], &str)> = replaced
        .iter()
        .map(|(at, new)| (at.as_slice(), new.as_str()))
        .collect();
    splice_at(text, &all)
}

fn splice_at(text: &str, replaced: &[(&[Seg], &str)]) -> Result<String, serde_json::Error> {
    if let Some((_, new)) = replaced.iter().find(|(at, _)| at.is_empty()) {
        return serde_json::to_string(new);
    }
    if replaced.is_empty() {
        return Ok(text.trim().to_owned());
    }
    let below = |step: &Seg| -> Vec<(&[Seg], &str)> {
        replaced
            .iter()
            .filter(|(at, _)| at.first() == Some(step))
            .map(|(at, new)| (&at[1..], *new))
            .collect()
    };
    let mut out = String::with_capacity(text.len() + 64);
    if text.trim_start().starts_with('{') {
        let entries: Vec<(String, &RawValue)> = serde_json::from_str::<Entries>(text)?.0;
        out.push('{');
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(key)?);
            out.push(':');
            out.push_str(&splice_at(value.get(), &below(&Seg::Key(key.clone())))?);
        }
        out.push('}');
    } else {
        let items: Vec<&RawValue> = serde_json::from_str(text)?;
        out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&splice_at(item.get(), &below(&Seg::Index(i)))?);
        }
        out.push(']');
    }
    Ok(out)
}

/// An object's entries in order, each value as written.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Collect<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Collect<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'a>, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.push((key, map.next_value::<&'a RawValue>()?));
                }
                Ok(Entries(entries))
            }
        }
        de.deserialize_map(Collect(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_refused_at_any_depth() {
        for text in [r#"{"a": 1, "a": 2}"#, r#"{"x": [{"p": "", "p": "../x"}]}"#] {
            let error = parse(text).unwrap_err().to_string();
            assert!(error.contains("appears twice in one object"), "{error}");
        }
        let value = parse(r#"{"a": {"b": [1, 2.5, null, true, "s"]}, "c": 18446744073709551615}"#);
        assert_eq!(
            value.unwrap(),
            serde_json::json!({"a": {"b": [1, 2.5, null, true, "s"]}, "c": 18446744073709551615u64})
        );
        assert!(parse("{} trailing").is_err());
    }

    #[test]
    fn splicing_changes_only_the_replaced_strings() {
        let text = r#" {"path": "src/a", "big": 12345678901234567890123, "f": 1e2, "h": -0,
            "files": ["x", "y\u0041"], "deep": {"p": "q", "n": 1.50}} "#;
        let replaced = [
            (vec![Seg::Key("path".into())], "/ws/src/a".to_owned()),
            (
                vec![Seg::Key("files".into()), Seg::Index(1)],
                "/ws/yA".to_owned(),
            ),
            (
                vec![Seg::Key("deep".into()), Seg::Key("p".into())],
                "/ws/q".to_owned(),
            ),
        ];
        let out = splice(text, &replaced).unwrap();
        assert_eq!(
            out,
            r#"{"path":"/ws/src/a","big":12345678901234567890123,"f":1e2,"h":-0,"files":["x","/ws/yA"],"deep":{"p":"/ws/q","n":1.50}}"#
        );
    }
}
