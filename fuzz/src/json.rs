//! JSON comparisons for round trips.
//!
//! serde_json (without its `float_roundtrip` feature, which the workspace
//! does not enable) may parse a float one unit in the last place away from
//! the nearest double, so a float that goes through text and back is
//! compared with that tolerance; everything else must be equal.

use serde_json::Value;

/// Whether two floats are equal up to a few units in the last place.
pub fn close(a: f64, b: f64) -> bool {
    a == b
        || (a.is_nan() && b.is_nan())
        || (a - b).abs() <= 4.0 * f64::EPSILON * a.abs().max(b.abs())
}

#[cfg_attr(not(feature = "engine"), allow(dead_code))]
/// Whether `a` and `b` are the same JSON, numbers compared with [`close`].
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || match (x.as_f64(), y.as_f64()) {
                    (Some(x), Some(y)) => close(x, y),
                    _ => false,
                }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && same(vx, vy))
        }
        _ => a == b,
    }
}

#[cfg_attr(not(feature = "engine"), allow(dead_code))]
/// A JSON line parsed back: it must be one object on one line.
pub fn parse_line(line: &str) -> Option<serde_json::Map<String, Value>> {
    if line.contains(['\n', '\r']) {
        return None;
    }
    match serde_json::from_str(line) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_are_close_and_the_rest_is_exact() {
        assert!(same(&json!({"a": [1.0, "x"]}), &json!({"a": [1.0, "x"]})));
        assert!(same(&json!(0.1), &json!(0.1 + f64::EPSILON / 16.0)));
        assert!(!same(&json!(0.1), &json!(0.2)));
        assert!(!same(&json!({"a": 1}), &json!({"b": 1})));
        assert!(!same(&json!("1"), &json!(1)));
        assert!(parse_line("{\"a\":1}").is_some());
        assert!(parse_line("{\"a\":\n1}").is_none());
        assert!(parse_line("[1]").is_none());
    }
}
