//! The annotation vocabulary: `x-lingxi-*` keywords a tool's `inputSchema`
//! may carry. They ride inside the schema, so the LingXi wire is unchanged
//! (a host that does not know them ignores them, as JSON Schema says).
//!
//! | keyword | where | value | effect |
//! |---|---|---|---|
//! | `x-lingxi-path` | a string property (under `properties`, or `items` of an array property) | `"read"` or `"write"` | the value is a path: resolved and checked before the call, the plugin gets it canonical and absolute |
//! | `x-lingxi-timeout-ms` | top level | integer 1..=86 400 000 | the tool's deadline, if shorter than the plugin's |
//! | `x-lingxi-requires-approval` | top level | boolean | an embedding host asks its approval callback before each call |
//! | `x-lingxi-concurrency-safe` | top level | boolean | calls may run on more than one instance at once |
//! | `x-lingxi-starts-task` | top level | boolean | a call starts one background task and answers its handle: an MCP client that has tasks gets the task itself |

use std::fmt;
use std::time::Duration;

use crate::limits::{MAX_ANNOTATION_DEPTH, MAX_TIMEOUT_MS};
use serde_json::{Map, Value};

/// `x-lingxi-path`: the string property is a path (`"read"` or `"write"`).
pub const PATH: &str = "x-lingxi-path";
/// `x-lingxi-timeout-ms`: the tool's own deadline, in milliseconds.
pub const TIMEOUT_MS: &str = "x-lingxi-timeout-ms";
/// `x-lingxi-requires-approval`: ask the host before every call.
pub const REQUIRES_APPROVAL: &str = "x-lingxi-requires-approval";
/// `x-lingxi-concurrency-safe`: calls may overlap on several instances.
pub const CONCURRENCY_SAFE: &str = "x-lingxi-concurrency-safe";
/// `x-lingxi-starts-task`: a call starts a background task.
pub const STARTS_TASK: &str = "x-lingxi-starts-task";

/// What a path parameter is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAccess {
    /// The tool reads it: it must lie in a readable root.
    Read,
    /// The tool writes it (maybe creates it): it must lie in a writable root.
    Write,
}

impl fmt::Display for PathAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathAccess::Read => "read",
            PathAccess::Write => "write",
        })
    }
}

/// One step from the arguments object to a path parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// A property of an object.
    Key(String),
    /// Every element of an array.
    Each,
}

/// A property marked `x-lingxi-path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathParam {
    pub(crate) route: Vec<Step>,
    /// What the tool does with it.
    pub access: PathAccess,
}

impl PathParam {
    /// Where it is in the arguments, as a JSON pointer (`*`: every element).
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for step in &self.route {
            out.push('/');
            match step {
                Step::Key(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
                Step::Each => out.push('*'),
            }
        }
        out
    }
}

/// A tool's annotations, read from its schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations {
    /// Its path parameters.
    pub paths: Vec<PathParam>,
    /// Its own deadline (never above the plugin's).
    pub timeout: Option<Duration>,
    /// Whether a host must approve each call.
    pub requires_approval: bool,
    /// Whether calls may run on several instances at once.
    pub concurrency_safe: bool,
    /// Whether a call starts a background task (and answers its handle).
    pub starts_task: bool,
}

impl Annotations {
    /// As JSON, for reports and catalogs: `requiresApproval`,
    /// `concurrencySafe`, `timeoutMs` (or null) and `paths` (each
    /// `{"parameter", "access"}`; parameters made printable).
    pub fn to_json(&self) -> Value {
        let paths: Vec<Value> = self
            .paths
            .iter()
            .map(|p| {
                let pointer = crate::text::printable(&p.pointer()).into_owned();
                serde_json::json!({"parameter": pointer, "access": p.access.to_string()})
            })
            .collect();
        serde_json::json!({
            "requiresApproval": self.requires_approval,
            "concurrencySafe": self.concurrency_safe,
            "startsTask": self.starts_task,
            "timeoutMs": self.timeout.map(|t| t.as_millis() as u64),
            "paths": paths,
        })
    }
}

/// Reads the annotations of `schema`; every malformed or misplaced one is
/// left out and described in `problems` (with what to write instead).
pub(crate) fn read(schema: &Value, problems: &mut Vec<String>) -> Annotations {
    let mut annotations = Annotations::default();
    let Some(top) = schema.as_object() else {
        return annotations;
    };
    if let Some(value) = top.get(TIMEOUT_MS) {
        match value.as_u64().filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms)) {
            Some(ms) => annotations.timeout = Some(Duration::from_millis(ms)),
            None => problems.push(format!(
                "{TIMEOUT_MS} is {value}; it must be an integer from 1 to {MAX_TIMEOUT_MS} (milliseconds)"
            )),
        }
    }
    for (key, flag) in [
        (REQUIRES_APPROVAL, &mut annotations.requires_approval),
        (CONCURRENCY_SAFE, &mut annotations.concurrency_safe),
        (STARTS_TASK, &mut annotations.starts_task),
    ] {
        match top.get(key) {
            None => {}
            Some(Value::Bool(b)) => *flag = *b,
            Some(other) => problems.push(format!("{key} is {other}; it must be true or false")),
        }
    }
    let mut walk = Walk {
        problems,
        paths: &mut annotations.paths,
    };
    walk.object(top, "", Some(Vec::new()), 0);
    annotations
}

struct Walk<'a> {
    problems: &'a mut Vec<String>,
    paths: &'a mut Vec<PathParam>,
}

impl Walk<'_> {
    /// Looks at one schema object at `pointer`. `route` is where its value
    /// sits in the arguments, if it is reached through `properties` and
    /// `items` only (the only places a path parameter is enforced).
    fn object(
        &mut self,
        schema: &Map<String, Value>,
        pointer: &str,
        route: Option<Vec<Step>>,
        depth: usize,
    ) {
        if depth > MAX_ANNOTATION_DEPTH {
            return;
        }
        let top = pointer.is_empty();
        for key in schema.keys().filter(|k| k.starts_with("x-lingxi-")) {
            let at = if top { "the top level" } else { pointer };
            match key.as_str() {
                PATH => {}
                TIMEOUT_MS | REQUIRES_APPROVAL | CONCURRENCY_SAFE | STARTS_TASK if top => {}
                TIMEOUT_MS | REQUIRES_APPROVAL | CONCURRENCY_SAFE | STARTS_TASK => self.problems.push(format!(
                    "{key} at {at} is ignored: it belongs at the top level of the schema"
                )),
                other => self.problems.push(format!(
                    "unknown keyword {other} at {at}; the known ones are {PATH}, {TIMEOUT_MS}, {REQUIRES_APPROVAL}, {CONCURRENCY_SAFE} and {STARTS_TASK}"
                )),
            }
        }
        if let Some(value) = schema.get(PATH) {
            self.path(schema, value, pointer, route.as_ref());
        }
        for (key, child) in schema {
            let child_pointer = format!("{pointer}/{}", escape(key));
            match (key.as_str(), child, &route) {
                ("properties", Value::Object(properties), Some(route)) => {
                    for (name, sub) in properties {
                        let mut next = route.clone();
                        next.push(Step::Key(name.clone()));
                        let at = format!("{child_pointer}/{}", escape(name));
                        self.value(sub, &at, Some(next), depth + 1);
                    }
                }
                ("items", Value::Object(_), Some(route)) => {
                    let mut next = route.clone();
                    next.push(Step::Each);
                    self.value(child, &child_pointer, Some(next), depth + 1);
                }
                _ => self.value(child, &child_pointer, None, depth + 1),
            }
        }
    }

    fn value(&mut self, value: &Value, pointer: &str, route: Option<Vec<Step>>, depth: usize) {
        match value {
            Value::Object(map) => self.object(map, pointer, route, depth),
            Value::Array(items) if depth <= MAX_ANNOTATION_DEPTH => {
                for (i, item) in items.iter().enumerate() {
                    self.value(item, &format!("{pointer}/{i}"), None, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn path(
        &mut self,
        schema: &Map<String, Value>,
        value: &Value,
        pointer: &str,
        route: Option<&Vec<Step>>,
    ) {
        let at = if pointer.is_empty() {
            "the top level"
        } else {
            pointer
        };
        let access = match value.as_str() {
            Some("read") => PathAccess::Read,
            Some("write") => PathAccess::Write,
            _ => {
                return self.problems.push(format!(
                    "{PATH} at {at} is {value}; it must be \"read\" or \"write\""
                ));
            }
        };
        match route {
            Some(route) if !route.is_empty() => {
                if schema.get("type").and_then(Value::as_str) != Some("string") {
                    return self.problems.push(format!(
                        "{PATH} at {at} is on a property that is not {{\"type\": \"string\"}}; a path parameter must be a string"
                    ));
                }
                self.paths.push(PathParam {
                    route: route.clone(),
                    access,
                });
            }
            _ => self.problems.push(format!(
                "{PATH} at {at} is not enforced: a path parameter must be a property reached through \"properties\" (and \"items\" of arrays) only"
            )),
        }
    }
}

/// A key as a JSON pointer segment.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn annotations(schema: Value) -> (Annotations, Vec<String>) {
        let mut problems = Vec::new();
        (read(&schema, &mut problems), problems)
    }

    #[test]
    fn reads_paths_timeout_and_flags() {
        let (a, problems) = annotations(json!({
            "type": "object",
            "x-lingxi-timeout-ms": 500,
            "x-lingxi-requires-approval": true,
            "x-lingxi-concurrency-safe": true,
            "properties": {
                "src": {"type": "string", "x-lingxi-path": "read"},
                "out": {"type": "object", "properties": {
                    "to": {"type": "string", "x-lingxi-path": "write"}}},
                "files": {"type": "array", "items": {"type": "string", "x-lingxi-path": "read"}}
            }
        }));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(a.timeout, Some(Duration::from_millis(500)));
        assert!(a.requires_approval && a.concurrency_safe);
        let found: Vec<_> = a.paths.iter().map(|p| (p.pointer(), p.access)).collect();
        assert_eq!(
            found,
            [
                ("/src".to_owned(), PathAccess::Read),
                ("/out/to".to_owned(), PathAccess::Write),
                ("/files/*".to_owned(), PathAccess::Read),
            ]
        );
    }

    #[test]
    fn malformed_annotations_are_named_and_left_out() {
        let (a, problems) = annotations(json!({
            "x-lingxi-timeout-ms": 0,
            "x-lingxi-requires-approval": "yes",
            "x-lingxi-timeout": 5,
            "properties": {
                "a": {"type": "string", "x-lingxi-path": "rw"},
                "b": {"type": "integer", "x-lingxi-path": "read"},
                "c": {"anyOf": [{"type": "string", "x-lingxi-path": "read"}]},
                "d": {"type": "string", "x-lingxi-concurrency-safe": true}
            }
        }));
        assert_eq!(a, Annotations::default());
        let all = problems.join("\n");
        for expected in [
            "x-lingxi-timeout-ms is 0; it must be an integer from 1 to 86400000",
            "x-lingxi-requires-approval is \"yes\"; it must be true or false",
            "unknown keyword x-lingxi-timeout at the top level",
            "x-lingxi-path at /properties/a is \"rw\"; it must be \"read\" or \"write\"",
            "x-lingxi-path at /properties/b is on a property that is not {\"type\": \"string\"}",
            "x-lingxi-path at /properties/c/anyOf/0 is not enforced",
            "x-lingxi-concurrency-safe at /properties/d is ignored: it belongs at the top level",
        ] {
            assert!(all.contains(expected), "missing {expected:?} in\n{all}");
        }
        assert_eq!(problems.len(), 7, "{all}");
    }
}
