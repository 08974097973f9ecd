//! The arguments as JSON, read strictly: an object that repeats a key is
//! refused. Parsers disagree on which of two values for one key counts
//! (serde_json's `Value` keeps the last, others the first), so the value
//! the host checked could otherwise differ from the one the plugin uses.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
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
}
