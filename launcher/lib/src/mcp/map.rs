//! What a LingXi plugin becomes over MCP: its tools as MCP tools (with the
//! hints its sandbox can vouch for), its slash commands as MCP prompts, and
//! a call's outcome as an MCP result or error. Every MCP-facing decision of
//! the mapping is here; `mcp/mod.rs` only moves messages.

use std::sync::Arc;

use lingxi_wasm_host::policy::Capability;
use lingxi_wasm_host::types::CommandResult;
use lingxi_wasm_host::{CallError, Catalog, CatalogCommand, CatalogTool};
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, JsonObject, Prompt, PromptArgument,
    PromptMessage, Role, Tool, ToolAnnotations,
};
use serde_json::{Value, json};

/// The `_meta` key under which a tool carries its LingXi contract (owner,
/// capabilities, approval, concurrency, timeout, path parameters).
pub const CONTRACT_META: &str = "dev.lingxi-wasm/contract";

/// The `_meta` key of a `tools/call` that asks for the call's receipt
/// (any value but `false`), and under which the result then carries it:
/// what the call did, counted where the plugin meets WASI
/// (`lingxi_wasm_host::effects`; its data: `lingxi_wasm_host::policy::receipt`). Nobody asking costs nothing.
pub const EFFECTS_META: &str = "dev.lingxi-wasm/effects";

/// The one argument of every prompt: the command's arguments as typed.
pub const PROMPT_ARGUMENT: &str = "arguments";

/// What is offered over MCP, made once from the plugins' catalog.
pub struct Offer {
    /// The tools served (those that require approval only to a client
    /// that can be asked: see `approval`).
    pub tools: Vec<Tool>,
    /// The tools that require the user's approval before each call
    /// (`x-lingxi-requires-approval`), each with why a client that cannot
    /// ask its user (no elicitation) is not served it.
    pub approval: Vec<(String, String)>,
    /// Tools whose calls may overlap (`x-lingxi-concurrency-safe`).
    pub concurrency_safe: Vec<String>,
    /// Tools whose call starts a background task (`x-lingxi-starts-task`),
    /// with the plugin that owns it.
    pub starts_task: Vec<(String, String)>,
    /// Every tool's owner.
    pub owners: std::collections::HashMap<String, String>,
    /// Every command's owner (by name).
    pub command_owners: std::collections::HashMap<String, String>,
    /// The commands, as prompts.
    pub prompts: Vec<Prompt>,
}

/// The offer of `catalog`.
pub fn offer(catalog: &Catalog) -> Offer {
    let mut offer = Offer {
        tools: Vec::new(),
        approval: Vec::new(),
        concurrency_safe: Vec::new(),
        starts_task: Vec::new(),
        owners: std::collections::HashMap::new(),
        command_owners: std::collections::HashMap::new(),
        prompts: catalog.commands.iter().map(prompt).collect(),
    };
    for command in &catalog.commands {
        let owner = command.owner.clone();
        offer
            .command_owners
            .insert(command.descriptor.name.clone(), owner);
    }
    for tool in &catalog.tools {
        if tool.annotations.requires_approval {
            offer.approval.push((
                tool.descriptor.name.clone(),
                format!(
                    "tool '{}' requires the user's approval before each call (x-lingxi-requires-approval), and this MCP client cannot be asked for it: it is served only to clients that declare the elicitation capability (form mode){}",
                    lingxi_wasm_host::printable(&tool.descriptor.name),
                    ", on stdio, in an HTTP session, or at protocol 2026-07-28 and later"
                ),
            ));
        }
        if tool.annotations.concurrency_safe {
            offer.concurrency_safe.push(tool.descriptor.name.clone());
        }
        let owner = tool.owner.clone();
        offer.owners.insert(tool.descriptor.name.clone(), owner);
        if tool.annotations.starts_task {
            let owner = tool.owner.clone();
            offer
                .starts_task
                .push((tool.descriptor.name.clone(), owner));
        }
        offer.tools.push(self::tool(tool));
    }
    offer
}

impl Offer {
    /// Why tool `name` is not served to a client that cannot be asked
    /// for approval, if it requires approval.
    pub fn needs_asking(&self, name: &str) -> Option<&str> {
        let found = self.approval.iter().find(|(n, _)| n == name);
        found.map(|(_, why)| why.as_str())
    }

    /// The plugin that owns tool `name`, if a call of it starts a task.
    pub fn task_owner(&self, name: &str) -> Option<&str> {
        let found = self.starts_task.iter().find(|(n, _)| n == name);
        found.map(|(_, owner)| owner.as_str())
    }

    /// Whether tool `name`'s plugin has a tool that starts tasks (its calls
    /// must reach the session its tasks live in).
    pub fn runs_tasks(&self, name: &str) -> bool {
        self.owners
            .get(name)
            .is_some_and(|owner| self.has_tasks(owner))
    }

    /// The same for command (prompt) `name`.
    pub fn command_runs_tasks(&self, name: &str) -> bool {
        let owner = self.command_owners.get(name);
        owner.is_some_and(|owner| self.has_tasks(owner))
    }

    /// Whether plugin `owner` has a tool that starts tasks.
    fn has_tasks(&self, owner: &str) -> bool {
        self.starts_task.iter().any(|(_, o)| o == owner)
    }

    /// The tools served to a client that can (`asks`) or cannot be asked
    /// for approval.
    pub fn tools_for(&self, asks: bool) -> Vec<Tool> {
        let served = |t: &&Tool| asks || self.needs_asking(&t.name).is_none();
        self.tools.iter().filter(served).cloned().collect()
    }
}

/// One tool: name, description, the input schema as an object (an object
/// schema that takes anything when the plugin gave none or not JSON), the
/// hints the sandbox guarantees, and the full contract under `_meta`.
fn tool(tool: &CatalogTool) -> Tool {
    let schema = match serde_json::from_str::<Value>(&tool.descriptor.input_schema) {
        Ok(Value::Object(schema)) => schema,
        _ => JsonObject::from_iter([("type".to_owned(), json!("object"))]),
    };
    let mut out = Tool::new(
        tool.descriptor.name.clone(),
        tool.descriptor.description.clone(),
        Arc::new(schema),
    )
    .with_annotations(hints(tool));
    let mut contract = tool.annotations.to_json();
    if let Value::Object(map) = &mut contract {
        map.insert("owner".into(), json!(tool.owner));
        let names: Vec<_> = tool.capabilities.iter().map(|c| c.wire_name()).collect();
        map.insert("capabilities".into(), json!(names));
        map.insert("validated".into(), json!(tool.validated));
    }
    let mut meta = rmcp::model::MetaObject::new();
    meta.insert(CONTRACT_META.into(), contract);
    out.meta = Some(meta);
    out
}

/// The MCP hints the sandbox enforces, whatever the plugin claims: a tool
/// whose plugin may not write the project, run processes or reach the
/// network, and has no path parameter to write, cannot change the user's
/// environment (`readOnlyHint`); one without network access cannot reach
/// the outside world (`openWorldHint: false`). A tool that asks for
/// approval is marked destructive. Nothing else is claimed.
fn hints(tool: &CatalogTool) -> ToolAnnotations {
    let has = |c: Capability| tool.capabilities.contains(&c);
    let writes_path = tool
        .annotations
        .paths
        .iter()
        .any(|p| p.access == lingxi_wasm_host::contract::PathAccess::Write);
    let read_only = !has(Capability::ProjectWrite)
        && !has(Capability::ProcessExecution)
        && !has(Capability::NetworkAccess)
        && !writes_path;
    let mut hints = ToolAnnotations::new()
        .read_only(read_only)
        .open_world(has(Capability::NetworkAccess));
    if tool.annotations.requires_approval {
        hints = hints.destructive(true);
    }
    hints
}

/// One command as a prompt with one optional argument, the command's
/// arguments as typed.
fn prompt(command: &CatalogCommand) -> Prompt {
    let d = &command.descriptor;
    let hint = if d.argument_hint.is_empty() {
        "The command's arguments, as typed after its name".to_owned()
    } else {
        format!(
            "The command's arguments, as typed after its name: {}",
            d.argument_hint
        )
    };
    let argument = PromptArgument::new(PROMPT_ARGUMENT)
        .with_description(hint)
        .with_required(false);
    Prompt::new(
        d.name.clone(),
        Some(d.description.clone()),
        Some(vec![argument]),
    )
}

/// A command's arguments from the prompt's one string: split at white
/// space, as a user types them after the command's name.
pub fn command_arguments(typed: Option<&str>) -> Vec<String> {
    typed
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// A command's result as a prompt: text for the model becomes a user
/// message; a message meant for the user's eyes only (LingXi shows it
/// without waking the model) becomes an assistant message, its title the
/// prompt's description.
pub fn prompt_result(result: CommandResult) -> GetPromptResult {
    match result {
        CommandResult::Prompt(text) => GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            with_workspace_hint(text),
        )]),
        CommandResult::Message(message) => {
            let text = with_workspace_hint(message.text);
            let out = GetPromptResult::new(vec![PromptMessage::new_text(Role::Assistant, text)]);
            match message.title {
                Some(title) => out.with_description(title),
                None => out,
            }
        }
    }
}

/// The protocol's words for a plugin that asked for the workspace before
/// any snapshot came (an SDK's `InfoUnavailable`).
const NO_WORKSPACE: &str = "Plugin runtime info unavailable: workspace (no snapshot received)";

/// `text`, with what an MCP user does about [`NO_WORKSPACE`] when it says
/// so: an MCP server has a workspace only from `--workspace` or the
/// client's roots.
pub fn with_workspace_hint(text: String) -> String {
    match text.contains(NO_WORKSPACE) {
        true => format!(
            "{text}\n(this MCP server has no workspace: start it with --workspace DIR, or use a client that sends roots)"
        ),
        false => text,
    }
}

/// A tool's answer as an MCP result: its text as text content.
pub fn tool_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// A failed call as an MCP tool result with `isError`: the model (and the
/// user) read why, in the launcher's words (the flag that raises a
/// limit). Failures of the plugin, of the sandbox's limits
/// and of the tool's contract (arguments against its schema, path
/// parameters) are all results of running the tool: MCP says such errors
/// are reported in the result, so the model can correct itself.
pub fn tool_failure(error: &CallError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(with_workspace_hint(
        error.to_string(),
    ))])
}

/// Puts `receipt` into `result`'s `_meta`, under [`EFFECTS_META`].
pub fn attach_receipt(result: &mut CallToolResult, receipt: &lingxi_wasm_host::Receipt) {
    let value = serde_json::to_value(receipt).unwrap_or_default();
    result
        .meta
        .get_or_insert_with(Default::default)
        .0
        .insert(EFFECTS_META.into(), value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_workspace_says_which_flag_gives_it() {
        let text = with_workspace_hint(NO_WORKSPACE.to_string());
        assert!(text.contains("--workspace DIR"), "{text}");
        assert_eq!(with_workspace_hint("fine".into()), "fine");
    }
    use lingxi_wasm_host::contract::Annotations;
    use lingxi_wasm_host::types::{CommandMessage, Presentation, ToolDescriptor};

    fn tool(capabilities: &[Capability], schema: &str, annotations: Annotations) -> CatalogTool {
        CatalogTool {
            owner: "p".into(),
            descriptor: ToolDescriptor {
                name: "t".into(),
                description: "d".into(),
                input_schema: schema.into(),
            },
            capabilities: capabilities.to_vec(),
            annotations,
            validated: true,
        }
    }

    #[test]
    fn hints_claim_only_what_the_sandbox_enforces() {
        use Capability::*;
        let cases: [(&[Capability], Option<bool>, Option<bool>); 5] = [
            (&[], Some(true), Some(false)),
            (&[ProjectRead], Some(true), Some(false)),
            (&[ProjectRead, ProjectWrite], Some(false), Some(false)),
            (&[ProcessExecution], Some(false), Some(false)),
            (&[NetworkAccess], Some(false), Some(true)),
        ];
        for (caps, read_only, open_world) in cases {
            let hints = hints(&tool(caps, "{}", Annotations::default()));
            assert_eq!(hints.read_only_hint, read_only, "{caps:?}");
            assert_eq!(hints.open_world_hint, open_world, "{caps:?}");
            assert_eq!(hints.destructive_hint, None, "{caps:?}");
        }
    }

    #[test]
    fn schemas_are_objects_and_approval_tools_need_a_client_that_asks() {
        let mut catalog = Catalog::default();
        catalog
            .tools
            .push(tool(&[], "not json", Annotations::default()));
        let approve = Annotations {
            requires_approval: true,
            ..Annotations::default()
        };
        let mut withheld = tool(&[], "{}", approve);
        withheld.descriptor.name = "ask".into();
        catalog.tools.push(withheld);
        let offer = offer(&catalog);
        assert_eq!(offer.tools.len(), 2);
        assert_eq!(offer.tools_for(false).len(), 1);
        assert_eq!(offer.tools_for(true).len(), 2);
        assert_eq!(
            offer.tools[0].input_schema.get("type"),
            Some(&json!("object"))
        );
        let meta = offer.tools[0].meta.as_ref().unwrap();
        assert_eq!(meta[CONTRACT_META]["owner"], "p");
        let why = offer.needs_asking("ask").unwrap();
        assert!(why.contains("requires the user's approval"), "{why}");
        assert!(offer.needs_asking("t").is_none());
    }

    #[test]
    fn command_results_become_prompt_messages() {
        assert_eq!(command_arguments(Some("  a  b\tc ")), ["a", "b", "c"]);
        assert!(command_arguments(None).is_empty());
        let prompt = prompt_result(CommandResult::Prompt("do it".into()));
        assert_eq!(prompt.messages[0].role, Role::User);
        let message = prompt_result(CommandResult::Message(CommandMessage {
            text: "shown".into(),
            presentation: Presentation::Inline,
            title: Some("Title".into()),
        }));
        assert_eq!(message.messages[0].role, Role::Assistant);
        assert_eq!(message.description.as_deref(), Some("Title"));
    }
}
