//! Typed builders for a tool's `inputSchema`, with the host-enforced
//! contract annotations (`x-lingxi-*`): an author never writes the
//! keywords by hand.
//!
//! ```
//! use lingxi_plugin_sdk::{InputSchema, Property};
//!
//! let schema = InputSchema::new()
//!     .property("path", Property::string("File to summarise").read_path())
//!     .property("top", Property::integer("How many lines").minimum(0).maximum(100))
//!     .required(["path"])
//!     .no_additional_properties()
//!     .timeout_ms(5_000)
//!     .concurrency_safe()
//!     .to_string();
//! assert!(schema.contains(r#""x-lingxi-path":"read""#));
//! ```
//!
//! What the host does with each annotation:
//! - a **read path** / **write path** property: before the call, the value
//!   is resolved against the workspace root (relative paths allowed),
//!   symbolic links followed, and must lie inside a directory the plugin is
//!   granted for reading (writing; a file to be created needs an existing
//!   parent). The tool receives the canonical absolute path instead; a
//!   path outside is refused without calling the tool.
//! - **timeout**: the tool's own deadline, when shorter than the plugin's.
//! - **requires approval**: an embedding host asks its user first.
//! - **concurrency-safe**: calls may run on more than one instance at once.

use std::fmt;

use serde_json::{Map, Value, json};

/// The annotation keywords, as the host reads them.
pub mod keywords {
    /// On a string property: `"read"` or `"write"`.
    pub const PATH: &str = "x-lingxi-path";
    /// At the top level: the tool's own timeout in milliseconds.
    pub const TIMEOUT_MS: &str = "x-lingxi-timeout-ms";
    /// At the top level: ask the host's user before every call.
    pub const REQUIRES_APPROVAL: &str = "x-lingxi-requires-approval";
    /// At the top level: calls may overlap on several instances.
    pub const CONCURRENCY_SAFE: &str = "x-lingxi-concurrency-safe";
    /// At the top level: a call starts a background task and answers its
    /// handle.
    pub const STARTS_TASK: &str = "x-lingxi-starts-task";
}

/// A tool's `inputSchema`: an object with properties. Its `Display` is the
/// JSON text [`Tool::input_schema`](crate::Tool::input_schema) returns.
#[derive(Debug, Clone, PartialEq)]
pub struct InputSchema {
    schema: Map<String, Value>,
}

impl Default for InputSchema {
    fn default() -> Self {
        InputSchema::new()
    }
}

impl InputSchema {
    /// `{"type": "object", "properties": {}}`: any object.
    pub fn new() -> Self {
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), json!({}));
        InputSchema { schema }
    }

    /// Adds property `name`.
    pub fn property(mut self, name: &str, property: Property) -> Self {
        if let Some(Value::Object(properties)) = self.schema.get_mut("properties") {
            properties.insert(name.to_owned(), Value::Object(property.schema));
        }
        self
    }

    /// The properties that must be present.
    pub fn required<'a>(mut self, names: impl IntoIterator<Item = &'a str>) -> Self {
        let names: Vec<Value> = names.into_iter().map(|n| json!(n)).collect();
        self.schema.insert("required".into(), Value::Array(names));
        self
    }

    /// Refuses properties that are not listed.
    pub fn no_additional_properties(mut self) -> Self {
        self.schema
            .insert("additionalProperties".into(), json!(false));
        self
    }

    /// The tool's own deadline in milliseconds (1 to 86 400 000); the host
    /// applies it when it is shorter than the plugin's.
    pub fn timeout_ms(mut self, milliseconds: u64) -> Self {
        self.schema
            .insert(keywords::TIMEOUT_MS.into(), json!(milliseconds));
        self
    }

    /// Asks the host's user to approve every call.
    pub fn requires_approval(mut self) -> Self {
        self.schema
            .insert(keywords::REQUIRES_APPROVAL.into(), json!(true));
        self
    }

    /// Says calls may run at the same time on several instances.
    pub fn concurrency_safe(mut self) -> Self {
        self.schema
            .insert(keywords::CONCURRENCY_SAFE.into(), json!(true));
        self
    }

    /// Says a call starts one background task and answers its handle (an
    /// MCP client that has tasks then gets the task itself).
    pub fn starts_task(mut self) -> Self {
        self.schema
            .insert(keywords::STARTS_TASK.into(), json!(true));
        self
    }

    /// Any other JSON Schema keyword at the top level.
    pub fn with(mut self, keyword: &str, value: Value) -> Self {
        self.schema.insert(keyword.to_owned(), value);
        self
    }
}

impl fmt::Display for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(&self.schema).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

/// One property of an [`InputSchema`].
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    schema: Map<String, Value>,
}

impl Property {
    fn typed(kind: &str, description: &str) -> Self {
        let mut schema = Map::new();
        schema.insert("type".into(), json!(kind));
        if !description.is_empty() {
            schema.insert("description".into(), json!(description));
        }
        Property { schema }
    }

    /// A string.
    pub fn string(description: &str) -> Self {
        Property::typed("string", description)
    }

    /// An integer.
    pub fn integer(description: &str) -> Self {
        Property::typed("integer", description)
    }

    /// A number.
    pub fn number(description: &str) -> Self {
        Property::typed("number", description)
    }

    /// `true` or `false`.
    pub fn boolean(description: &str) -> Self {
        Property::typed("boolean", description)
    }

    /// An array whose elements are `items`.
    pub fn array(description: &str, items: Property) -> Self {
        Property::typed("array", description).with("items", Value::Object(items.schema))
    }

    /// An object with the properties (and rules) of `schema`.
    pub fn object(description: &str, schema: InputSchema) -> Self {
        let mut property = Property::typed("object", description);
        for (key, value) in schema.schema {
            if key != "type" {
                property.schema.insert(key, value);
            }
        }
        property
    }

    /// A path the tool reads: the host checks it and hands it over
    /// canonical and absolute.
    pub fn read_path(self) -> Self {
        self.with(keywords::PATH, json!("read"))
    }

    /// A path the tool writes (or creates).
    pub fn write_path(self) -> Self {
        self.with(keywords::PATH, json!("write"))
    }

    /// Shortest string, in characters.
    pub fn min_length(self, characters: u64) -> Self {
        self.with("minLength", json!(characters))
    }

    /// Longest string, in characters.
    pub fn max_length(self, characters: u64) -> Self {
        self.with("maxLength", json!(characters))
    }

    /// A regular expression the string must match.
    pub fn pattern(self, regex: &str) -> Self {
        self.with("pattern", json!(regex))
    }

    /// The smallest number allowed.
    pub fn minimum(self, minimum: impl Into<serde_json::Number>) -> Self {
        self.with("minimum", Value::Number(minimum.into()))
    }

    /// The largest number allowed.
    pub fn maximum(self, maximum: impl Into<serde_json::Number>) -> Self {
        self.with("maximum", Value::Number(maximum.into()))
    }

    /// The only values allowed.
    pub fn one_of<'a>(self, values: impl IntoIterator<Item = &'a str>) -> Self {
        let values: Vec<Value> = values.into_iter().map(|v| json!(v)).collect();
        self.with("enum", Value::Array(values))
    }

    /// Any other JSON Schema keyword.
    pub fn with(mut self, keyword: &str, value: Value) -> Self {
        self.schema.insert(keyword.to_owned(), value);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_annotated_schema() {
        let schema = InputSchema::new()
            .property("src", Property::string("from").read_path())
            .property("dst", Property::string("").write_path())
            .property(
                "files",
                Property::array("many", Property::string("").read_path())
                    .with("maxItems", json!(3)),
            )
            .property("mode", Property::string("how").one_of(["a", "b"]))
            .required(["src"])
            .no_additional_properties()
            .timeout_ms(250)
            .requires_approval()
            .concurrency_safe();
        let value: Value = serde_json::from_str(&schema.to_string()).unwrap();
        assert_eq!(
            value,
            json!({
                "type": "object",
                "properties": {
                    "src": {"type": "string", "description": "from", "x-lingxi-path": "read"},
                    "dst": {"type": "string", "x-lingxi-path": "write"},
                    "files": {"type": "array", "description": "many",
                              "items": {"type": "string", "x-lingxi-path": "read"}, "maxItems": 3},
                    "mode": {"type": "string", "description": "how", "enum": ["a", "b"]}
                },
                "required": ["src"],
                "additionalProperties": false,
                "x-lingxi-timeout-ms": 250,
                "x-lingxi-requires-approval": true,
                "x-lingxi-concurrency-safe": true
            })
        );
        assert_eq!(
            InputSchema::new().to_string(),
            r#"{"type":"object","properties":{}}"#
        );
    }
}
