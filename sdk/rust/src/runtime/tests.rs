use std::cell::Cell;
use std::rc::Rc;

use super::*;
use crate::{PluginError, PluginResult, Presentation};

struct Echo;
impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "echo"
    }
    fn execute(&self, arguments: &str, ctx: &ToolContext) -> PluginResult<String> {
        Ok(format!(
            "{arguments}@{}/{}",
            ctx.session_id, ctx.tool_call_id
        ))
    }
}

struct Status;
impl Command for Status {
    fn name(&self) -> &str {
        "status"
    }
    fn aliases(&self) -> &[&str] {
        &["st"]
    }
    fn description(&self) -> &str {
        "status"
    }
    fn execute(&self, args: &[String], _ctx: &CommandContext) -> PluginResult<CommandResult> {
        Ok(CommandResult::inline(args.join(",")).with_title("T"))
    }
}

/// Fails activation `failures` times, counts activations, records hook order.
#[derive(Default)]
struct Fixture {
    failures: u32,
    activations: Rc<Cell<u32>>,
    hook_log: Rc<std::cell::RefCell<Vec<&'static str>>>,
}

impl Plugin for Fixture {
    fn manifest(&self) -> Manifest {
        Manifest::new("com.test.fixture", "Fixture", "1.0.0", "test")
    }
    fn activate(&mut self, ctx: &mut PluginContext) -> PluginResult<()> {
        self.activations.set(self.activations.get() + 1);
        if self.failures > 0 {
            self.failures -= 1;
            return Err(PluginError::new("database not ready"));
        }
        ctx.register_tool(Echo);
        ctx.register_command(Status);
        for (event, name, fail) in [
            (HookEvent::ToolAfter, "after", false),
            (HookEvent::SessionStart, "first", true),
            (HookEvent::SessionStart, "second", false),
        ] {
            let log = self.hook_log.clone();
            ctx.on(event, move |_| {
                log.borrow_mut().push(name);
                if fail {
                    Err(PluginError::new("boom"))
                } else {
                    Ok(())
                }
            });
        }
        Ok(())
    }
}

fn init(v: Option<i64>) -> wit::InitializeRequest {
    wit::InitializeRequest {
        host_ipc_version: v,
        core_version: Some("1.1.0".into()),
    }
}

fn cmd(name: &str) -> wit::CommandCall {
    wit::CommandCall {
        command_name: name.into(),
        arguments: vec!["a".into(), "b".into()],
        session_id: None,
    }
}

#[test]
fn handshake_lists_registrations_and_sorted_hooks() {
    let mut rt = Runtime::new(Box::new(Fixture::default()));
    let hs = rt.initialize(init(Some(1))).unwrap();
    assert_eq!(hs.ipc_version, 1);
    assert_eq!(hs.manifest.id, "com.test.fixture");
    assert_eq!(hs.tools[0].input_schema, crate::DEFAULT_INPUT_SCHEMA);
    assert_eq!(hs.commands[0].aliases, vec!["st".to_owned()]);
    assert_eq!(hs.commands[0].category, "Plugin");
    // sessionStart < toolAfter, each once.
    assert_eq!(
        hs.supported_hooks,
        vec![HookEvent::SessionStart, HookEvent::ToolAfter]
    );
    // A second initialize returns the same handshake without re-activating.
    assert_eq!(rt.initialize(init(None)).unwrap(), hs);
}

#[test]
fn unsupported_ipc_version_has_reference_text() {
    let mut rt = Runtime::new(Box::new(Fixture::default()));
    assert_eq!(
        rt.initialize(init(Some(42))).unwrap_err(),
        "Unsupported host IPC version 42; plugin supports [1]."
    );
}

#[test]
fn failed_activation_is_retried_by_the_next_request() {
    let activations = Rc::new(Cell::new(0));
    let mut rt = Runtime::new(Box::new(Fixture {
        failures: 1,
        activations: activations.clone(),
        ..Default::default()
    }));
    assert_eq!(
        rt.initialize(init(Some(1))).unwrap_err(),
        "database not ready"
    );
    let call = wit::ToolCall {
        tool_name: "echo".into(),
        arguments: "{}".into(),
        session_id: "s".into(),
        tool_call_id: "c".into(),
    };
    assert_eq!(rt.execute_tool(call.clone()).unwrap(), "{}@s/c");
    assert_eq!(rt.execute_tool(call).unwrap(), "{}@s/c");
    assert_eq!(activations.get(), 2);
}

#[test]
fn tools_activate_lazily_and_unknown_names_have_reference_text() {
    let mut rt = Runtime::new(Box::new(Fixture::default()));
    let call = wit::ToolCall {
        tool_name: "nope".into(),
        arguments: String::new(),
        session_id: String::new(),
        tool_call_id: String::new(),
    };
    assert_eq!(
        rt.execute_tool(call).unwrap_err(),
        "Tool 'nope' not found in plugin"
    );
    assert_eq!(
        rt.execute_command(cmd("Nope")).unwrap_err(),
        "Command 'Nope' not found in plugin"
    );
}

#[test]
fn commands_resolve_by_name_alias_and_case() {
    let mut rt = Runtime::new(Box::new(Fixture::default()));
    let expected = wit::CommandResult::Message(wit::CommandMessage {
        text: "a,b".into(),
        presentation: Presentation::Inline,
        title: Some("T".into()),
    });
    for name in ["status", "st", "STATUS", "St"] {
        assert_eq!(rt.execute_command(cmd(name)).unwrap(), expected, "{name}");
    }
}

#[test]
fn hooks_run_in_order_and_failures_do_not_fail_the_event() {
    let fixture = Fixture::default();
    let log = fixture.hook_log.clone();
    let mut rt = Runtime::new(Box::new(fixture));
    let payload = |event| wit::HookPayload {
        event,
        subject_id: "s-1".into(),
        metadata: vec![],
    };
    rt.emit_hook(payload(HookEvent::SessionStart)).unwrap();
    rt.emit_hook(payload(HookEvent::AgentTurnEnd)).unwrap();
    assert_eq!(*log.borrow(), vec!["first", "second"]);
}
