//! A tool's `inputSchema`, compiled once with `jsonschema`, and the
//! messages a failed validation gives: each failing location with its rule,
//! e.g. `arguments: /text: 12000 characters, more than maxLength 10000`.
//!
//! Nothing outside the schema is ever fetched (no `$ref` to a file or a
//! URL), and `pattern` uses the linear-time `regex` engine, so a hostile
//! schema or argument cannot make validation backtrack for long.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{PatternOptions, ValidationError, Validator};
use serde_json::Value;

use crate::limits::{
    MAX_PATTERN_BYTES, MAX_SCHEMA_BYTES, MAX_SCHEMA_PATTERNS, MAX_SCHEMA_TOTAL_BYTES,
};
use crate::text::printable;

use crate::limits::{MAX_LISTED_FAILURES as MAX_LISTED, MAX_QUOTED_VALUE as MAX_QUOTED};

/// What compiling one handshake's schemas may cost: compiling runs on the
/// host, outside the plugin's memory cap, so a plugin could otherwise make
/// the host spend seconds and gigabytes on regular expressions.
pub(crate) struct Budget {
    bytes: usize,
    patterns: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            bytes: MAX_SCHEMA_TOTAL_BYTES,
            patterns: MAX_SCHEMA_PATTERNS,
        }
    }
}

impl Budget {
    /// Takes what compiling `schema` (`text` bytes long) costs, or says why
    /// it is not compiled.
    pub(crate) fn take(&mut self, text: usize, schema: &Value) -> Result<usize, String> {
        if text > MAX_SCHEMA_BYTES {
            return Err(format!(
                "inputSchema is {text} bytes, more than the {MAX_SCHEMA_BYTES} this host compiles; make it smaller"
            ));
        }
        let patterns = patterns(schema, 0);
        if text > self.bytes || patterns > self.patterns {
            return Err(format!(
                "the plugin's schemas together exceed what this host compiles ({MAX_SCHEMA_TOTAL_BYTES} bytes and {MAX_SCHEMA_PATTERNS} patterns in all); make them smaller"
            ));
        }
        self.bytes -= text;
        self.patterns -= patterns;
        Ok(patterns)
    }
}

/// How many regular expressions `schema` holds.
fn patterns(schema: &Value, depth: usize) -> usize {
    if depth > crate::limits::MAX_SCHEMA_DEPTH {
        return 0;
    }
    match schema {
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| {
                let own = match (key.as_str(), value) {
                    ("pattern", Value::String(_)) => 1,
                    ("patternProperties", Value::Object(p)) => p.len(),
                    _ => 0,
                };
                own + patterns(value, depth + 1)
            })
            .sum(),
        Value::Array(items) => items.iter().map(|v| patterns(v, depth + 1)).sum(),
        _ => 0,
    }
}

/// Compiles `schema`, or says why it is not a valid JSON Schema.
pub(crate) fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .offline()
        .with_pattern_options(PatternOptions::regex().size_limit(MAX_PATTERN_BYTES))
        .build(schema)
        .map_err(|e| {
            let text = quoted(&e.to_string(), crate::limits::MAX_QUOTED_CONTRACT);
            if text.contains("is not a \"regex\"") {
                // Valid JSON Schema, but not for this engine.
                format!("{text}: patterns use Rust regex syntax, without look-around or back-references, and at most {} KiB compiled", MAX_PATTERN_BYTES / 1024)
            } else {
                text
            }
        })
}

/// Every way `arguments` fails `validator` (at most [`MAX_LISTED`], then how
/// many more), as `arguments: <location>: <rule>`.
pub(crate) fn failures(validator: &Validator, arguments: &Value) -> Vec<String> {
    let mut listed = Vec::new();
    let mut more = 0usize;
    for error in validator.iter_errors(arguments) {
        if listed.len() < MAX_LISTED {
            listed.push(describe(&error));
        } else {
            more += 1;
        }
    }
    if more > 0 {
        listed.push(format!("and {more} more"));
    }
    listed
}

fn describe(error: &ValidationError<'_>) -> String {
    let location = error.instance_path().as_str();
    let rule = rule(error.kind(), error.instance());
    if location.is_empty() {
        format!("arguments: {rule}")
    } else {
        format!(
            "arguments: {}: {rule}",
            quoted(location, crate::limits::MAX_QUOTED_CONTRACT)
        )
    }
}

/// The rule an instance broke, in words, with the schema's limit.
fn rule(kind: &ValidationErrorKind, instance: &Value) -> String {
    use ValidationErrorKind as K;
    let chars = || instance.as_str().map_or(0, |s| s.chars().count());
    let items = || instance.as_array().map_or(0, Vec::len);
    let shown = || quoted(&instance.to_string(), MAX_QUOTED);
    match kind {
        K::MaxLength { limit } => format!("{} characters, more than maxLength {limit}", chars()),
        K::MinLength { limit } => format!("{} characters, fewer than minLength {limit}", chars()),
        K::Required { property } => format!(
            "missing required property {}",
            quoted(&property.to_string(), MAX_QUOTED)
        ),
        K::AdditionalProperties { unexpected } => format!(
            "{} not allowed (additionalProperties is false)",
            names("property", "properties", unexpected)
        ),
        K::UnevaluatedProperties { unexpected } => format!(
            "{} not allowed (unevaluatedProperties)",
            names("property", "properties", unexpected)
        ),
        K::Enum { options } => format!(
            "{} is not one of {}",
            shown(),
            quoted(&options.to_string(), crate::limits::MAX_QUOTED_CONTRACT)
        ),
        K::Constant { expected_value } => format!(
            "{} is not the constant {}",
            shown(),
            quoted(&expected_value.to_string(), MAX_QUOTED)
        ),
        K::Type { kind } => format!("{} is {}, not {}", shown(), type_of(instance), types(kind)),
        K::Minimum { limit } => format!("{} is less than minimum {limit}", shown()),
        K::Maximum { limit } => format!("{} is more than maximum {limit}", shown()),
        K::ExclusiveMinimum { limit } => {
            format!("{} is not more than exclusiveMinimum {limit}", shown())
        }
        K::ExclusiveMaximum { limit } => {
            format!("{} is not less than exclusiveMaximum {limit}", shown())
        }
        K::MultipleOf { multiple_of } => format!("{} is not a multiple of {multiple_of}", shown()),
        K::MaxItems { limit } => format!("{} items, more than maxItems {limit}", items()),
        K::MinItems { limit } => format!("{} items, fewer than minItems {limit}", items()),
        K::UniqueItems => "items are not unique (uniqueItems)".to_owned(),
        K::MaxProperties { limit } => format!("more than maxProperties {limit}"),
        K::MinProperties { limit } => format!("fewer than minProperties {limit}"),
        K::Pattern { pattern } => format!(
            "{} does not match pattern {}",
            shown(),
            quoted(pattern, MAX_QUOTED)
        ),
        K::Format { format } => format!("{} is not a valid {}", shown(), quoted(format, 40)),
        K::FalseSchema => "no value is allowed here (the schema is false)".to_owned(),
        K::AnyOf { .. } => "matches none of anyOf".to_owned(),
        K::OneOfNotValid { .. } => "matches none of oneOf".to_owned(),
        K::OneOfMultipleValid { .. } => "matches more than one of oneOf".to_owned(),
        K::Not { .. } => "matches the schema under not".to_owned(),
        other => format!("fails {}", quoted(other.keyword(), 40)),
    }
}

fn names(one: &str, many: &str, names: &[String]) -> String {
    let list: Vec<String> = names
        .iter()
        .take(MAX_LISTED)
        .map(|n| format!("'{}'", quoted(n, MAX_QUOTED)))
        .collect();
    let word = if names.len() == 1 { one } else { many };
    let rest = names.len().saturating_sub(MAX_LISTED);
    let more = if rest > 0 {
        format!(" and {rest} more")
    } else {
        String::new()
    };
    format!("{word} {}{more}", list.join(", "))
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn types(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => format!("{t}"),
        TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
            names.join(" or ")
        }
    }
}

/// `text` made printable and cut to `max` characters.
pub(crate) fn quoted(text: &str, max: usize) -> String {
    let text = printable(text);
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, arguments: Value) -> Vec<String> {
        let validator = compile(&schema).expect("valid schema");
        failures(&validator, &arguments)
    }

    #[test]
    fn each_failure_names_its_location_and_rule() {
        let schema = json!({
            "type": "object",
            "required": ["text", "mode"],
            "additionalProperties": false,
            "properties": {
                "text": {"type": "string", "maxLength": 10000},
                "mode": {"enum": ["fast", "slow"]},
                "opts": {"type": "object", "properties": {"depth": {"type": "integer", "maximum": 3}}}
            }
        });
        let args =
            json!({"text": "x".repeat(12000), "mode": "medium", "extra": 1, "opts": {"depth": 9}});
        let failures = check(schema.clone(), args);
        let all = failures.join("\n");
        for expected in [
            "arguments: /text: 12000 characters, more than maxLength 10000",
            "arguments: /mode: \"medium\" is not one of [\"fast\",\"slow\"]",
            "arguments: property 'extra' not allowed (additionalProperties is false)",
            "arguments: /opts/depth: 9 is more than maximum 3",
        ] {
            assert!(all.contains(expected), "missing {expected:?} in\n{all}");
        }
        assert_eq!(failures.len(), 4, "{all}");
        let missing = check(schema.clone(), json!({"mode": "fast"}));
        assert_eq!(missing, ["arguments: missing required property \"text\""]);
        let typed = check(schema, json!({"text": 5, "mode": "fast"}));
        assert_eq!(typed, ["arguments: /text: 5 is an integer, not string"]);
    }

    #[test]
    fn long_lists_and_values_are_cut() {
        let schema = json!({"type": "array", "items": {"type": "string", "pattern": "^a+$"}});
        let failures = check(schema, json!(vec!["b".repeat(500); 20]));
        assert_eq!(failures.len(), MAX_LISTED + 1);
        assert_eq!(failures[MAX_LISTED], "and 12 more");
        assert!(failures[0].len() < 200, "{}", failures[0]);
    }

    #[test]
    fn the_budget_bounds_what_one_handshake_compiles() {
        let mut budget = Budget::default();
        let one = json!({"properties": {"a": {"pattern": "^a$"}}, "patternProperties": {"^x": {}}});
        assert_eq!(patterns(&one, 0), 2);
        for _ in 0..MAX_SCHEMA_PATTERNS / 2 {
            budget.take(100, &one).unwrap();
        }
        let error = budget.take(100, &one).unwrap_err();
        assert!(error.contains("exceed what this host compiles"), "{error}");
        let error = Budget::default()
            .take(MAX_SCHEMA_BYTES + 1, &json!({}))
            .unwrap_err();
        assert!(
            error.contains("more than the 65536 this host compiles"),
            "{error}"
        );
    }

    #[test]
    fn references_outside_the_schema_are_never_fetched() {
        for reference in ["file:///etc/passwd", "http://127.0.0.1:9/schema.json"] {
            let error = compile(&json!({"$ref": reference})).err();
            assert!(error.is_some(), "{reference} compiled");
        }
        assert!(compile(&json!({"type": 5})).is_err());
    }
}
