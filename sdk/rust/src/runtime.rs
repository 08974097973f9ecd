//! The protocol semantics that live inside the plugin: IPC version check,
//! lazy activation with retry after failure, name and alias resolution, hook
//! dispatch in registration order, and the reference plugin's error texts.
//!
//! [`Runtime`] is plain Rust; `export_plugin!` forwards the component's
//! exported functions to one `Runtime` per instance (see [`with_runtime`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::bindings::lingxi::plugin::types as wit;
use crate::context::{CommandContext, HookHandler, PluginContext, ToolContext};
use crate::info::InfoHub;
use crate::logger::Logger;
use crate::storage::Storage;
use crate::tasks::{Task, TaskContext, Tasks};
use crate::types::{CommandResult, HookEvent, HookPayload, Manifest};
use crate::{Command, Plugin, Tool};

/// A task kind as the host lists it.
pub use crate::bindings::exports::lingxi::plugin::task_runner::TaskKind;

/// IPC versions this SDK speaks.
pub const SUPPORTED_IPC_VERSIONS: [u32; 1] = [1];

/// What activation registered.
struct Registry {
    tools: Vec<Box<dyn Tool>>,
    commands: Vec<Box<dyn Command>>,
    hooks: Vec<(HookEvent, HookHandler)>,
    tasks: Vec<Box<dyn Task>>,
    /// The names of `tasks`, handed to every call's context.
    task_names: Rc<[String]>,
}

/// One plugin instance and its activation state.
pub struct Runtime {
    plugin: Box<dyn Plugin>,
    active: Option<Registry>,
}

impl Runtime {
    /// Wraps a freshly constructed plugin; it is not active yet.
    pub fn new(plugin: Box<dyn Plugin>) -> Self {
        Runtime {
            plugin,
            active: None,
        }
    }

    /// The manifest, without activating.
    pub fn manifest(&self) -> Manifest {
        self.plugin.manifest()
    }

    /// Activates once; after a failure the next request tries again.
    fn activate(&mut self) -> Result<&Registry, String> {
        if self.active.is_none() {
            let mut ctx = PluginContext::new();
            self.plugin
                .activate(&mut ctx)
                .map_err(|e| e.message().to_owned())?;
            let task_names = ctx.tasks.iter().map(|t| t.name().to_owned()).collect();
            self.active = Some(Registry {
                tools: ctx.tools,
                commands: ctx.commands,
                hooks: ctx.hooks,
                tasks: ctx.tasks,
                task_names,
            });
        }
        // Just set above if it was empty.
        self.active
            .as_ref()
            .ok_or_else(|| "plugin is not active".to_owned())
    }

    /// `plugin.initialize`.
    pub fn initialize(
        &mut self,
        request: wit::InitializeRequest,
    ) -> Result<wit::Handshake, String> {
        if let Some(v) = request
            .host_ipc_version
            .filter(|v| !SUPPORTED_IPC_VERSIONS.iter().any(|s| i64::from(*s) == *v))
        {
            return Err(format!(
                "Unsupported host IPC version {v}; plugin supports {SUPPORTED_IPC_VERSIONS:?}."
            ));
        }
        let manifest = self.plugin.manifest();
        let registry = self.activate()?;
        let mut supported_hooks: Vec<HookEvent> = Vec::new();
        for (event, _) in &registry.hooks {
            if !supported_hooks.contains(event) {
                supported_hooks.push(*event);
            }
        }
        supported_hooks.sort_by_key(|e| e.wire_name());
        Ok(wit::Handshake {
            manifest,
            ipc_version: SUPPORTED_IPC_VERSIONS[0],
            sdk_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            tools: registry
                .tools
                .iter()
                .map(|t| wit::ToolDescriptor {
                    name: t.name().to_owned(),
                    description: t.description().to_owned(),
                    input_schema: t.input_schema().to_owned(),
                })
                .collect(),
            commands: registry
                .commands
                .iter()
                .map(|c| wit::CommandDescriptor {
                    name: c.name().to_owned(),
                    aliases: c.aliases().iter().map(|a| (*a).to_owned()).collect(),
                    description: c.description().to_owned(),
                    category: c.category().to_owned(),
                    argument_hint: c.argument_hint().to_owned(),
                })
                .collect(),
            supported_hooks,
        })
    }

    /// `tool.execute`.
    pub fn execute_tool(&mut self, call: wit::ToolCall) -> Result<String, String> {
        let registry = self.activate()?;
        let tool = registry
            .tools
            .iter()
            .find(|t| t.name() == call.tool_name)
            .ok_or_else(|| format!("Tool '{}' not found in plugin", call.tool_name))?;
        let ctx = ToolContext {
            session_id: call.session_id,
            tool_call_id: call.tool_call_id,
            logger: Logger::new(),
            storage: Storage::new(),
            tasks: Tasks::new(registry.task_names.clone()),
        };
        tool.execute(&call.arguments, &ctx)
            .map_err(|e| e.message().to_owned())
    }

    /// `command.execute`.
    pub fn execute_command(
        &mut self,
        call: wit::CommandCall,
    ) -> Result<wit::CommandResult, String> {
        let registry = self.activate()?;
        let command = resolve_command(&registry.commands, &call.command_name)
            .ok_or_else(|| format!("Command '{}' not found in plugin", call.command_name))?;
        let ctx = CommandContext {
            session_id: call.session_id,
            info: InfoHub::new(),
            logger: Logger::new(),
            storage: Storage::new(),
            tasks: Tasks::new(registry.task_names.clone()),
        };
        let result = command
            .execute(&call.arguments, &ctx)
            .map_err(|e| e.message().to_owned())?;
        Ok(match result {
            CommandResult::Message {
                text,
                presentation,
                title,
            } => wit::CommandResult::Message(wit::CommandMessage {
                text,
                presentation,
                title,
            }),
            CommandResult::Prompt(text) => wit::CommandResult::Prompt(text),
        })
    }

    /// `hook.emit`: handlers run in registration order; failures are logged.
    pub fn emit_hook(&mut self, payload: wit::HookPayload) -> Result<(), String> {
        let registry = self.activate()?;
        let payload = HookPayload {
            event: payload.event,
            subject_id: payload.subject_id,
            metadata: payload.metadata.into_iter().collect::<BTreeMap<_, _>>(),
        };
        let logger = Logger::new();
        for (index, (_, handler)) in registry
            .hooks
            .iter()
            .filter(|(event, _)| *event == payload.event)
            .enumerate()
        {
            if let Err(e) = handler(&payload) {
                logger.error(format!(
                    "{} handler #{} failed for '{}': {}",
                    payload.event.wire_name(),
                    index + 1,
                    payload.subject_id,
                    e
                ));
            }
        }
        Ok(())
    }

    /// The task kinds the plugin registered (`task-runner.kinds`).
    pub fn task_kinds(&mut self) -> Result<Vec<TaskKind>, String> {
        let registry = self.activate()?;
        Ok(registry
            .tasks
            .iter()
            .map(|t| TaskKind {
                name: t.name().to_owned(),
                description: t.description().to_owned(),
            })
            .collect())
    }

    /// `task-runner.run`: runs task `id` of `kind` on this (the task's own)
    /// instance.
    pub fn run_task(&mut self, kind: String, input: String, id: String) -> Result<String, String> {
        let registry = self.activate()?;
        let task = registry
            .tasks
            .iter()
            .find(|t| t.name() == kind)
            .ok_or_else(|| format!("Task kind '{kind}' not registered by plugin"))?;
        let ctx = TaskContext {
            id,
            logger: Logger::new(),
            storage: Storage::new(),
            info: InfoHub::new(),
        };
        task.run(&input, &ctx).map_err(|e| e.message().to_owned())
    }

    /// End of session: deactivate if active.
    pub fn deactivate(&mut self) {
        if self.active.take().is_some() {
            self.plugin.deactivate();
        }
    }
}

/// Finds a command by name, then alias; exact case first, then ignoring case
/// (the host routes case-insensitively and sends the name as typed).
fn resolve_command<'a>(commands: &'a [Box<dyn Command>], typed: &str) -> Option<&'a dyn Command> {
    let exact = |c: &dyn Command| c.name() == typed || c.aliases().contains(&typed);
    let folded = |c: &dyn Command| {
        c.name().eq_ignore_ascii_case(typed)
            || c.aliases().iter().any(|a| a.eq_ignore_ascii_case(typed))
    };
    let find = |pred: &dyn Fn(&dyn Command) -> bool| {
        commands.iter().map(|c| c.as_ref()).find(|c| pred(*c))
    };
    find(&exact).or_else(|| find(&folded))
}

thread_local! {
    static RUNTIME: RefCell<Option<Runtime>> = const { RefCell::new(None) };
}

/// Runs `f` on this instance's runtime, creating it with `P::default()` on
/// first use. Used by `export_plugin!`; not part of the public API.
pub fn with_runtime<P: Plugin + Default, R>(f: impl FnOnce(&mut Runtime) -> R) -> R {
    RUNTIME.with(|cell| {
        let mut slot = cell.borrow_mut();
        let runtime = slot.get_or_insert_with(|| Runtime::new(Box::new(P::default())));
        f(runtime)
    })
}

#[cfg(test)]
mod tests;
