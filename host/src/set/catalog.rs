//! The [`Catalog`]: every tool and command of a set, with its owner and
//! the capabilities the owner really has, ready to hand to a model.

use serde_json::{Value, json};

use super::Members;
use crate::bindings::lingxi::plugin::types as wit;
use crate::contract::Annotations;
use crate::policy::Capability;

/// One tool of the set.
#[derive(Debug, Clone)]
pub struct CatalogTool {
    /// The plugin that offers it.
    pub owner: String,
    /// Name, description and input schema, as the plugin registered them.
    pub descriptor: wit::ToolDescriptor,
    /// What the owner may do (declared ∩ granted).
    pub capabilities: Vec<Capability>,
    /// Its `x-lingxi-*` annotations: path parameters, own timeout,
    /// whether it requires approval, whether it is concurrency-safe.
    pub annotations: Annotations,
    /// Whether its arguments are validated against its schema.
    pub validated: bool,
}

/// One slash command of the set.
#[derive(Debug, Clone)]
pub struct CatalogCommand {
    /// The plugin that offers it.
    pub owner: String,
    /// Name, aliases, description, category and argument hint.
    pub descriptor: wit::CommandDescriptor,
    /// What the owner may do (declared ∩ granted).
    pub capabilities: Vec<Capability>,
}

/// Every tool and command of a set, in the order the plugins were added.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The tools.
    pub tools: Vec<CatalogTool>,
    /// The slash commands.
    pub commands: Vec<CatalogCommand>,
}

impl Catalog {
    pub(super) fn of(members: &Members) -> Catalog {
        let mut catalog = Catalog::default();
        for member in &members.list {
            let owner = member.id().to_owned();
            let capabilities = member.policy.effective().to_vec();
            for tool in &member.handshake.tools {
                let contract = member.contracts.tool(&tool.name);
                catalog.tools.push(CatalogTool {
                    owner: owner.clone(),
                    descriptor: tool.clone(),
                    capabilities: capabilities.clone(),
                    annotations: contract
                        .map(|c| c.annotations().clone())
                        .unwrap_or_default(),
                    validated: member.validate && contract.is_some_and(|c| c.validates()),
                });
            }
            for command in &member.handshake.commands {
                catalog.commands.push(CatalogCommand {
                    owner: owner.clone(),
                    descriptor: command.clone(),
                    capabilities: capabilities.clone(),
                });
            }
        }
        catalog
    }

    /// The tools as JSON, one object each: `name`, `description`,
    /// `inputSchema` (the plugin's schema, parsed; an object schema that
    /// accepts anything when the plugin gave none or not valid JSON),
    /// `owner`, `capabilities` (wire names), `requiresApproval`,
    /// `concurrencySafe`, `timeoutMs` (or null) and `paths` (each
    /// `{"parameter", "access"}`).
    pub fn tools_json(&self) -> Value {
        let tools = self.tools.iter().map(|tool| {
            let schema = serde_json::from_str::<Value>(&tool.descriptor.input_schema)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({ "type": "object" }));
            let mut entry = tool.annotations.to_json();
            let fields = [
                ("name", json!(tool.descriptor.name)),
                ("description", json!(tool.descriptor.description)),
                ("inputSchema", schema),
                ("owner", json!(tool.owner)),
                ("capabilities", json!(wire_names(&tool.capabilities))),
            ];
            if let Value::Object(map) = &mut entry {
                for (key, value) in fields.into_iter().rev() {
                    map.shift_insert(0, key.to_owned(), value);
                }
            }
            entry
        });
        Value::Array(tools.collect())
    }
}

fn wire_names(capabilities: &[Capability]) -> Vec<&'static str> {
    capabilities.iter().map(|c| c.wire_name()).collect()
}
