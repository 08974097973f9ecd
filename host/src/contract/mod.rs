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
mod arguments;
mod consistency;
mod json;
mod paths;
mod schema;

pub use annotations::{Annotations, PathAccess, PathParam};
pub use paths::Roots;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::json;

use crate::bindings::lingxi::plugin::types as wit;
use crate::limits::{MAX_PROBLEM_CHARS, MAX_PROBLEMS};

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
        let message = crate::text::printable(&self.message);
        match &self.tool {
            Some(tool) => write!(f, "tool '{}': {message}", schema::quoted(tool, 128)),
            None => f.write_str(&message),
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
    /// Checking the arguments failed inside the host (its checking task
    /// ended without an answer): the call is refused rather than run
    /// unchecked.
    #[error(
        "checking its arguments failed in the host ({reason}); this is a bug of lingxi-wasm: report it"
    )]
    Unchecked {
        /// What ended the check.
        reason: String,
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

use crate::limits::HEAVY_ARGUMENTS;

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
    /// How many regular expressions its schema holds.
    patterns: usize,
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
        if !self.looks_at_arguments(validate) {
            return Ok(Checked::default());
        }
        let validator = self.validator.as_ref().filter(|_| validate);
        let text = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let mut value = json::parse(text).map_err(|e| ContractError::NotJson {
            reason: schema::quoted(&e.to_string(), crate::limits::MAX_QUOTED_CONTRACT),
        })?;
        if let Some(validator) = validator {
            let failures = schema::failures(validator, &value);
            if !failures.is_empty() {
                return Err(ContractError::Invalid { failures });
            }
        }
        let mut found = arguments::ResolvedPaths::default();
        for param in &self.annotations.paths {
            let mut at = arguments::SchemaPosition::default();
            let (route, access) = (&param.route, param.access);
            arguments::resolve_at(&mut value, route, access, roots, &mut at, &mut found)?;
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

    /// Whether a call's arguments are looked at: validated against a
    /// schema (when `validate`), or searched for path parameters. A tool
    /// that does neither passes its arguments on as they are.
    pub(crate) fn looks_at_arguments(&self, validate: bool) -> bool {
        (validate && self.validator.is_some()) || !self.annotations.paths.is_empty()
    }

    /// Whether checking `arguments` may take long: it reads the filesystem
    /// (path parameters), or matches patterns against large arguments
    /// (linear, but in the pattern's size times the text's). Such a check
    /// runs off the async thread, within the call's deadline.
    pub(crate) fn is_heavy(&self, arguments: &str) -> bool {
        let long = arguments.len() > HEAVY_ARGUMENTS;
        !self.annotations.paths.is_empty()
            || (long && (self.patterns > 0 || arguments.len() > 64 * HEAVY_ARGUMENTS))
    }
}

/// `problems` cut to [`MAX_PROBLEMS`] (the last one saying how many more
/// there were), each message cut to [`MAX_PROBLEM_CHARS`].
fn bounded(mut problems: Vec<Problem>) -> Vec<Problem> {
    let more = problems.len().saturating_sub(MAX_PROBLEMS);
    problems.truncate(MAX_PROBLEMS);
    for problem in &mut problems {
        problem.message = schema::quoted(&problem.message, MAX_PROBLEM_CHARS);
    }
    if more > 0 {
        let severity = Severity::Error;
        let kind = ProblemKind::Handshake;
        let message = format!("and {more} more problems not listed");
        problems.push(Problem {
            severity,
            kind,
            tool: None,
            message,
        });
    }
    problems
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
            // Read strictly: a key given twice (one copy with a path
            // annotation, one without) is not left to chance.
            let (validator, annotations, patterns) = match json::parse(&tool.input_schema) {
                Err(e) => {
                    problem(
                        ProblemKind::Schema,
                        format!(
                            "inputSchema is not valid JSON ({}); its arguments are not validated",
                            schema::quoted(&e.to_string(), crate::limits::MAX_QUOTED_CONTRACT)
                        ),
                    );
                    (None, Annotations::default(), 0)
                }
                // The protocol's default schema means none was declared
                // (spec §5): nothing to enforce, and arguments that are not
                // JSON at all (spec §7's `"hi"`) still reach the tool.
                Ok(json) if json == json!({"type": "object", "properties": {}}) => {
                    (None, Annotations::default(), 0)
                }
                Ok(json) => {
                    let mut patterns = 0;
                    let compiled = match budget.take(tool.input_schema.len(), &json) {
                        Ok(found) => {
                            patterns = found;
                            schema::compile(&json).map_err(|reason| {
                                format!("inputSchema is not a valid JSON Schema ({reason})")
                            })
                        }
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
                    (validator, annotations, patterns)
                }
            };
            tools.entry(tool.name.clone()).or_insert_with(|| {
                Arc::new(ToolContract {
                    validator,
                    annotations,
                    patterns,
                })
            });
        }
        Contracts {
            tools,
            problems: bounded(problems),
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A handshake of plugin `p` with tools and commands (with aliases)
    /// of these names, for the tests of this crate.
    pub(crate) fn handshake_of(tools: &[&str], commands: &[(&str, &[&str])]) -> wit::Handshake {
        wit::Handshake {
            manifest: wit::Manifest {
                id: "p".into(),
                name: "P".into(),
                version: "1.0.0".into(),
                description: "d".into(),
                author: None,
                capabilities: Vec::new(),
                minimum_core_version: None,
            },
            ipc_version: 1,
            sdk_version: None,
            tools: tools
                .iter()
                .map(|name| wit::ToolDescriptor {
                    name: (*name).into(),
                    description: String::new(),
                    input_schema: String::new(),
                })
                .collect(),
            commands: commands
                .iter()
                .map(|(name, aliases)| wit::CommandDescriptor {
                    name: (*name).into(),
                    aliases: aliases.iter().map(|a| (*a).into()).collect(),
                    description: String::new(),
                    category: String::new(),
                    argument_hint: String::new(),
                })
                .collect(),
            supported_hooks: Vec::new(),
        }
    }

    fn handshake(schema: &str) -> wit::Handshake {
        let mut handshake = handshake_of(&["t"], &[]);
        handshake.tools[0].input_schema = schema.into();
        handshake
    }

    #[test]
    fn a_schema_that_repeats_a_key_is_not_trusted() {
        let schema = r#"{"type": "object", "properties": {"p": {"type": "string", "x-lingxi-path": "read"}, "p": {"type": "string"}}}"#;
        let contracts = Contracts::compile(&handshake(schema));
        let problem = contracts.problems()[0].to_string();
        assert!(
            problem.contains(r#"the key "p" appears twice"#),
            "{problem}"
        );
        assert!(!contracts.tool("t").unwrap().validates());
    }

    #[test]
    fn problems_are_bounded_in_number_and_length() {
        let schema = serde_json::json!({
            "x-lingxi-timeout-ms": "9".repeat(50_000),
            "properties": (0..100).map(|i| (format!("p{i}"), serde_json::json!({"x-lingxi-bogus": 1})))
                .collect::<serde_json::Map<_, _>>(),
        });
        let contracts = Contracts::compile(&handshake(&schema.to_string()));
        let problems = contracts.problems();
        assert_eq!(problems.len(), MAX_PROBLEMS + 1);
        assert!(
            problems
                .iter()
                .all(|p| p.message.chars().count() <= MAX_PROBLEM_CHARS + 1)
        );
        assert!(
            problems[MAX_PROBLEMS]
                .message
                .starts_with("and 69 more problems"),
            "{}",
            problems[MAX_PROBLEMS].message
        );
    }

    #[test]
    fn the_default_schema_declares_nothing_and_lets_any_text_through() {
        let contracts = Contracts::compile(&handshake(r#"{"type": "object", "properties": {}}"#));
        assert!(contracts.problems().is_empty());
        let tool = contracts.tool("t").unwrap();
        assert_eq!(
            tool.check("hi", &Roots::default(), true),
            Ok(Checked::default())
        );
    }
}
