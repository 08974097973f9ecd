//! What plugin code is handed: the activation context it registers tools,
//! commands and hooks with, the per-call contexts, and the logger.

use crate::info::InfoHub;
use crate::logger::Logger;
use crate::storage::Storage;
use crate::tasks::{Task, Tasks};
use crate::types::{CommandResult, HookEvent, HookPayload, PluginResult};

/// The JSON Schema used when a tool does not give one.
pub const DEFAULT_INPUT_SCHEMA: &str = r#"{"type": "object", "properties": {}}"#;

/// A tool the model may call (Swift: `PluginTool`).
pub trait Tool: 'static {
    /// The name the model calls the tool by.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the arguments, as JSON text.
    fn input_schema(&self) -> &str {
        DEFAULT_INPUT_SCHEMA
    }
    /// Runs the tool on the model's raw JSON `arguments` text; the returned
    /// text is the tool's output, an error fails the call with its text.
    fn execute(&self, arguments: &str, context: &ToolContext) -> PluginResult<String>;
}

/// A slash command (Swift: `PluginCommand`).
pub trait Command: 'static {
    /// Name without the slash.
    fn name(&self) -> &str;
    /// Other names that run the same command.
    fn aliases(&self) -> &[&str] {
        &[]
    }
    /// What the command does.
    fn description(&self) -> &str;
    /// Menu group.
    fn category(&self) -> &str {
        "Plugin"
    }
    /// Hint shown after the name while typing.
    fn argument_hint(&self) -> &str {
        ""
    }
    /// Runs the command with the words the user typed after its name.
    fn execute(&self, args: &[String], context: &CommandContext) -> PluginResult<CommandResult>;
}

/// Context of one tool call (Swift: `ToolExecutionContext`). It has no info
/// hub on purpose: tools map input to output; read host state in commands.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Session the call belongs to.
    pub session_id: String,
    /// Identifier of this tool call.
    pub tool_call_id: String,
    /// The plugin's logger.
    pub logger: Logger,
    /// The plugin's persistent storage.
    pub storage: Storage,
    /// The plugin's background tasks.
    pub tasks: Tasks,
}

/// Context of one slash command (Swift: `CommandExecutionContext`).
#[derive(Debug, Clone)]
pub struct CommandContext {
    /// Session, if the command runs inside one.
    pub session_id: Option<String>,
    /// Read-only view of the host's runtime snapshot.
    pub info: InfoHub,
    /// The plugin's logger.
    pub logger: Logger,
    /// The plugin's persistent storage.
    pub storage: Storage,
    /// The plugin's background tasks.
    pub tasks: Tasks,
}

pub(crate) type HookHandler = Box<dyn Fn(&HookPayload) -> PluginResult<()>>;

/// What `activate` registers with (Swift: `PluginContext`).
pub struct PluginContext {
    pub(crate) tools: Vec<Box<dyn Tool>>,
    pub(crate) commands: Vec<Box<dyn Command>>,
    pub(crate) hooks: Vec<(HookEvent, HookHandler)>,
    pub(crate) tasks: Vec<Box<dyn Task>>,
    /// The plugin's logger.
    pub logger: Logger,
    /// Read-only view of the host's runtime snapshot.
    pub info: InfoHub,
    /// The plugin's persistent storage.
    pub storage: Storage,
}

impl PluginContext {
    pub(crate) fn new() -> Self {
        PluginContext {
            tools: Vec::new(),
            commands: Vec::new(),
            hooks: Vec::new(),
            tasks: Vec::new(),
            logger: Logger::new(),
            info: InfoHub::new(),
            storage: Storage::new(),
        }
    }

    /// Registers a tool. A second tool with the same name replaces the first.
    pub fn register_tool(&mut self, tool: impl Tool) {
        let name = tool.name().to_owned();
        replace_or_push(
            &mut self.tools,
            Box::new(tool),
            &name,
            "tool",
            |t| t.name(),
            self.logger,
        );
    }

    /// Registers a slash command. A second command with the same name replaces
    /// the first.
    pub fn register_command(&mut self, command: impl Command) {
        let name = command.name().to_owned();
        let (list, logger) = (&mut self.commands, self.logger);
        replace_or_push(
            list,
            Box::new(command),
            &name,
            "command",
            |c| c.name(),
            logger,
        );
    }

    /// Registers a kind of background task, started from calls with
    /// [`Tasks::start`]. A second kind with the same name replaces the first.
    pub fn register_task(&mut self, task: impl Task) {
        let name = task.name().to_owned();
        replace_or_push(
            &mut self.tasks,
            Box::new(task),
            &name,
            "task kind",
            |t| t.name(),
            self.logger,
        );
    }

    /// Subscribes a handler to an event. Handlers of one event run in the
    /// order they were registered; a failing handler is logged and does not
    /// stop the others or fail the event.
    pub fn on(
        &mut self,
        event: HookEvent,
        handler: impl Fn(&HookPayload) -> PluginResult<()> + 'static,
    ) {
        self.hooks.push((event, Box::new(handler)));
    }
}

/// Puts `item` (named `name`) in `list`, in place of one of the same name
/// (saying so: the later one wins), else at the end.
fn replace_or_push<T: ?Sized>(
    list: &mut Vec<Box<T>>,
    item: Box<T>,
    name: &str,
    what: &str,
    name_of: impl Fn(&T) -> &str,
    logger: Logger,
) {
    match list.iter_mut().find(|old| name_of(old) == name) {
        Some(slot) => {
            logger.warn(format!(
                "{what} '{name}' registered twice; the later one wins"
            ));
            *slot = item;
        }
        None => list.push(item),
    }
}

/// The value of secret `name`, which the user granted the plugin
/// (`--secret NAME`, its value set with `lingxi-wasm-run secret set`); an
/// error naming the flag when it is not granted, or the command when it
/// has no value. The host hides the value wherever the plugin writes it
/// (output, logs, results, errors become `[secret NAME]`), and refuses an
/// HTTP request that carries a secret granted as `NAME@HOST` to another
/// host.
fn secret(name: &str) -> PluginResult<String> {
    crate::sys::secret(name).map_err(crate::types::PluginError::new)
}

macro_rules! secret_method {
    ($($context:ty),*) => {$(
        impl $context {
            /// The value of secret `name` the user granted this plugin
            /// (`--secret NAME`), or an error naming the flag that grants
            /// it (or the command that sets it). The host hides the value
            /// in everything the plugin writes.
            pub fn secret(&self, name: &str) -> PluginResult<String> {
                secret(name)
            }
        }
    )*};
}

secret_method!(
    ToolContext,
    CommandContext,
    PluginContext,
    crate::tasks::TaskContext
);
