//! Tool contracts: what the host enforces about a call before the plugin
//! sees it, the same for `lingxi-wasm-run` and for a
//! [`PluginSet`](crate::PluginSet), from this one module.
//!
//! At handshake each tool's `inputSchema` is parsed and compiled once
//! ([`Contracts::compile`]); before every `tool.execute` its arguments are
//! validated against it, its path parameters resolved inside the plugin's
//! granted roots and replaced by their canonical absolute form, and its
//! own deadline applied ([`ToolContract::check`]). The annotation
//! vocabulary is in [`annotations`](mod@annotations), the handshake checks
//! in `consistency`.

pub mod annotations;
mod consistency;
mod json;
mod paths;
mod schema;

pub use annotations::{Annotations, PathAccess, PathParam};
pub use paths::Roots;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::bindings::lingxi::plugin::types as wit;
use crate::error::CallError;
use crate::limits::{Deadline, Expired};

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Must be fixed: `check` fails, a plugin set refuses the plugin.
    Error,
    /// Should be fixed.
    Warning,
}

/// What a [`Problem`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// The handshake as a whole (names, aliases, IPC version, hooks).
    Handshake,
    /// A tool's `inputSchema` is not JSON, or not a JSON Schema: its
    /// arguments are not validated.
    Schema,
    /// A tool's `x-lingxi-*` annotation is malformed or misplaced: it is
    /// not enforced.
    Annotation,
}

/// One thing wrong with a handshake's contracts, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// How bad it is.
    pub severity: Severity,
    /// What it is about.
    pub kind: ProblemKind,
    /// The tool it is about, if one.
    pub tool: Option<String>,
    /// What is wrong and what to do.
    pub message: String,
}

impl Problem {
    fn handshake(message: String) -> Problem {
        Problem {
            severity: Severity::Error,
            kind: ProblemKind::Handshake,
            tool: None,
            message,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tool {
            Some(tool) => write!(f, "tool '{}': {}", schema::quoted(tool, 128), self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Why a call was refused before it reached the plugin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    /// The arguments text is not JSON.
    #[error(
        "its arguments are not valid JSON ({reason}); send the tool's arguments as a JSON object encoded in a string"
    )]
    NotJson {
        /// The parser's message.
        reason: String,
    },
    /// The arguments do not match the tool's schema.
    #[error(
        "its arguments do not match the tool's inputSchema: {}; fix the arguments (the plugin was not called)",
        failures.join("; ")
    )]
    Invalid {
        /// Each failing location with its rule.
        failures: Vec<String>,
    },
    /// A path parameter lies outside what the plugin may use.
    #[error("path parameter {parameter} ('{given}') {rule}")]
    Path {
        /// Where it is in the arguments (a JSON pointer).
        parameter: String,
        /// The value given (printable, cut).
        given: String,
        /// The rule it breaks.
        rule: String,
    },
    /// The host's approval callback said no.
    #[error("the host did not approve it")]
    NotApproved,
    /// The tool requires approval and nobody can give it.
    #[error(
        "the tool requires approval ({}) and the host has no approval callback; set one with PluginSet::with_approval",
        annotations::REQUIRES_APPROVAL
    )]
    NoApprover,
}

/// A path parameter of a call, as given and as the plugin gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Where it is in the arguments (a JSON pointer, e.g. `/files/2`).
    pub parameter: String,
    /// Read or write.
    pub access: PathAccess,
    /// The value the caller gave.
    pub given: String,
    /// The canonical absolute path the plugin gets.
    pub resolved: String,
}

/// A call that passed its tool's contract.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    /// The arguments the plugin gets, if they differ from the caller's
    /// (path parameters replaced).
    pub arguments: Option<String>,
    /// Its path parameters, resolved.
    pub paths: Vec<ResolvedPath>,
}

/// One tool's contract: its compiled schema and its annotations.
pub struct ToolContract {
    validator: Option<jsonschema::Validator>,
    annotations: Annotations,
}

impl ToolContract {
    /// Its annotations.
    pub fn annotations(&self) -> &Annotations {
        &self.annotations
    }

    /// Whether its arguments are validated (its schema compiled).
    pub fn validates(&self) -> bool {
        self.validator.is_some()
    }

    /// Checks `arguments` (the caller's JSON text; empty means `{}`):
    /// validates them when `validate` (and the schema compiled), then
    /// resolves its path parameters in `roots`. Blocking when the tool has
    /// path parameters (it reads the filesystem).
    pub fn check(
        &self,
        arguments: &str,
        roots: &Roots,
        validate: bool,
    ) -> Result<Checked, ContractError> {
        let validator = self.validator.as_ref().filter(|_| validate);
        if validator.is_none() && self.annotations.paths.is_empty() {
            return Ok(Checked::default());
        }
        let text = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let mut value = json::parse(text).map_err(|e| ContractError::NotJson {
            reason: schema::quoted(&e.to_string(), 200),
        })?;
        if let Some(validator) = validator {
            let failures = schema::failures(validator, &value);
            if !failures.is_empty() {
                return Err(ContractError::Invalid { failures });
            }
        }
        let mut found = Found::default();
        for param in &self.annotations.paths {
            let mut at = At::default();
            let (route, access) = (&param.route, param.access);
            resolve_at(&mut value, route, access, roots, &mut at, &mut found)?;
        }
        if found.paths.is_empty() {
            return Ok(Checked::default());
        }
        // Only the path strings change: the rest reaches the plugin as written.
        let arguments =
            json::splice(text, &found.replaced).map_err(|e| ContractError::NotJson {
                reason: e.to_string(),
            })?;
        let paths = found.paths;
        Ok(Checked {
            arguments: Some(arguments),
            paths,
        })
    }

    /// [`ToolContract::check`] within `deadline`, off the async thread when
    /// it reads the filesystem; `call` names the call in errors.
    pub(crate) async fn check_within(
        self: &Arc<Self>,
        arguments: &str,
        roots: impl FnOnce() -> Roots,
        validate: bool,
        deadline: Deadline,
        call: impl Fn() -> String,
    ) -> Result<Checked, CallError> {
        let refused = |reason| CallError::Refused {
            call: call(),
            reason,
        };
        if self.annotations.paths.is_empty() {
            return self
                .check(arguments, &Roots::default(), validate)
                .map_err(refused);
        }
        let (contract, arguments, roots) = (self.clone(), arguments.to_owned(), roots());
        let checking =
            tokio::task::spawn_blocking(move || contract.check(&arguments, &roots, validate));
        match deadline.run(checking).await {
            Ok(Ok(checked)) => checked.map_err(refused),
            Ok(Err(e)) => Err(CallError::Instantiate {
                plugin: call(),
                reason: format!("checking its path parameters failed: {e}"),
            }),
            Err(Expired) => Err(CallError::Timeout {
                call: format!("{} (checking its path parameters)", call()),
                limit: deadline.budget(),
            }),
        }
    }
}

/// Where `resolve_at` is: as a JSON pointer (for messages) and as steps
/// (for splicing).
#[derive(Default)]
struct At {
    pointer: String,
    segs: Vec<json::Seg>,
}

/// The path parameters resolved so far, and where their new values go.
#[derive(Default)]
struct Found {
    paths: Vec<ResolvedPath>,
    replaced: Vec<(Vec<json::Seg>, String)>,
}

/// Resolves every path at `route` in `value`, recording each.
fn resolve_at(
    value: &mut Value,
    route: &[annotations::Step],
    access: PathAccess,
    roots: &Roots,
    at: &mut At,
    found: &mut Found,
) -> Result<(), ContractError> {
    // A value of another shape than the schema says is refused even when
    // validation is off: a path must never slip through unresolved.
    let kind = value_kind(value);
    let misshapen = |what: &str, pointer: &str| ContractError::Path {
        parameter: pointer.to_owned(),
        given: kind.to_owned(),
        rule: format!("is not {what}; a path parameter must be given as one"),
    };
    let Some((step, rest)) = route.split_first() else {
        let given = match value {
            Value::Null => return Ok(()),
            Value::String(given) => given,
            _ => return Err(misshapen("a string", &at.pointer)),
        };
        if given.is_empty() {
            return Ok(());
        }
        let resolved =
            paths::resolve(given, access, roots).map_err(|rule| ContractError::Path {
                parameter: at.pointer.clone(),
                given: schema::quoted(given, 200),
                rule,
            })?;
        found.replaced.push((at.segs.clone(), resolved.clone()));
        found.paths.push(ResolvedPath {
            parameter: at.pointer.clone(),
            access,
            given: std::mem::replace(given, resolved.clone()),
            resolved,
        });
        return Ok(());
    };
    let len = at.pointer.len();
    match (step, value) {
        (annotations::Step::Key(key), Value::Object(map)) => {
            if let Some(child) = map.get_mut(key) {
                at.pointer.push('/');
                at.pointer
                    .push_str(&key.replace('~', "~0").replace('/', "~1"));
                at.segs.push(json::Seg::Key(key.clone()));
                resolve_at(child, rest, access, roots, at, found)?;
                at.segs.pop();
            }
        }
        (annotations::Step::Each, Value::Array(items)) => {
            for (i, item) in items.iter_mut().enumerate() {
                at.pointer.truncate(len);
                at.pointer.push_str(&format!("/{i}"));
                at.segs.push(json::Seg::Index(i));
                resolve_at(item, rest, access, roots, at, found)?;
                at.segs.pop();
            }
        }
        (_, Value::Null) => {}
        (annotations::Step::Key(_), _) => return Err(misshapen("an object", &at.pointer)),
        (annotations::Step::Each, _) => return Err(misshapen("an array", &at.pointer)),
    }
    at.pointer.truncate(len);
    Ok(())
}

/// What kind of JSON value `value` is, for messages.
fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The contracts of every tool of one handshake.
#[derive(Default)]
pub struct Contracts {
    tools: HashMap<String, Arc<ToolContract>>,
    problems: Vec<Problem>,
    /// The descriptors they were compiled from.
    from: Vec<wit::ToolDescriptor>,
}

impl Contracts {
    /// Compiles each tool's schema and reads its annotations; checks the
    /// handshake's consistency. A schema that is not JSON or not a valid
    /// JSON Schema leaves that tool unvalidated (and is a [`Problem`]); so
    /// does the protocol's default `{"type": "object", "properties": {}}`,
    /// which means the tool declared none (its arguments may be any text).
    pub fn compile(handshake: &wit::Handshake) -> Contracts {
        let mut problems = consistency::problems(handshake);
        let mut tools = HashMap::new();
        let mut budget = schema::Budget::default();
        for tool in &handshake.tools {
            let mut problem = |kind, message| {
                problems.push(Problem {
                    severity: Severity::Error,
                    kind,
                    tool: Some(tool.name.clone()),
                    message,
                })
            };
            let (validator, annotations) = match serde_json::from_str::<Value>(&tool.input_schema) {
                Err(e) => {
                    problem(
                        ProblemKind::Schema,
                        format!(
                            "inputSchema is not valid JSON ({}); its arguments are not validated",
                            schema::quoted(&e.to_string(), 200)
                        ),
                    );
                    (None, Annotations::default())
                }
                // The protocol's default schema means none was declared
                // (spec §5): nothing to enforce, and arguments that are not
                // JSON at all (spec §7's `"hi"`) still reach the tool.
                Ok(json) if json == json!({"type": "object", "properties": {}}) => {
                    (None, Annotations::default())
                }
                Ok(json) => {
                    let compiled = match budget.take(tool.input_schema.len(), &json) {
                        Ok(()) => schema::compile(&json).map_err(|reason| {
                            format!("inputSchema is not a valid JSON Schema ({reason})")
                        }),
                        Err(too_big) => Err(too_big),
                    };
                    let validator = match compiled {
                        Ok(validator) => Some(validator),
                        Err(reason) => {
                            problem(
                                ProblemKind::Schema,
                                format!("{reason}; its arguments are not validated"),
                            );
                            None
                        }
                    };
                    let mut found = Vec::new();
                    let annotations = annotations::read(&json, &mut found);
                    for message in found {
                        problem(ProblemKind::Annotation, message);
                    }
                    (validator, annotations)
                }
            };
            tools.entry(tool.name.clone()).or_insert_with(|| {
                Arc::new(ToolContract {
                    validator,
                    annotations,
                })
            });
        }
        Contracts {
            tools,
            problems,
            from: handshake.tools.clone(),
        }
    }

    /// The contract of tool `name`.
    pub fn tool(&self, name: &str) -> Option<&Arc<ToolContract>> {
        self.tools.get(name)
    }

    /// Everything wrong with the handshake's contracts.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Whether these were compiled from exactly `tools`.
    pub(crate) fn compiled_from(&self, tools: &[wit::ToolDescriptor]) -> bool {
        self.from == tools
    }
}
