"""The conformance probe (spec section 7) written against the WIT alone:
componentize-py's bindings of ``lingxi:plugin``, no SDK. The compatibility
matrix (tests/e2e/compat/mod.rs) builds it against every released shape of the
WIT (wit/history/) and today's, with the pinned componentize-py directly:

    componentize-py -d WIT_DIR -w WORLD componentize -p DIR app -o OUT.wasm

The same source serves every world: the base worlds take ``Plugin``; the
worlds with tasks take ``TaskRunner`` as well.
"""

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host_info, logging, types

IPC_VERSION = 1
TOOL = types.ToolDescriptor(
    name="probe.echo",
    description="Echoes its raw arguments, prefixed with 'echo:'.",
    input_schema='{"type": "object", "properties": {}}',
)
COMMAND = types.CommandDescriptor(
    name="probe",
    aliases=["pb"],
    description="Shows the workspace root the host published.",
    category="Plugin",
    argument_hint="",
)
MANIFEST = types.Manifest(
    id="com.lingxi.test-probe",
    name="Probe",
    version="0.1.0",
    description="Contract fixture plugin",
    author=None,
    capabilities=[types.Capability.PROJECT_READ],
    minimum_core_version=None,
)


def unavailable(why: types.InfoUnavailable) -> str:
    """The protocol's text for info the host did not send."""
    if why.last_snapshot is None:
        return f"Plugin runtime info unavailable: {why.field} (no snapshot received)"
    return f"Plugin runtime info unavailable: {why.field} (last snapshot at {why.last_snapshot.seconds} s)"


class Plugin(exports.Plugin):
    """``lingxi:plugin/plugin``: the probe."""

    def get_manifest(self) -> types.Manifest:
        return MANIFEST

    def initialize(self, request: types.InitializeRequest) -> types.Handshake:
        version = request.host_ipc_version
        if version is not None and version != IPC_VERSION:
            raise Err(f"Unsupported host IPC version {version}; plugin supports [1].")
        return types.Handshake(
            manifest=MANIFEST,
            ipc_version=IPC_VERSION,
            sdk_version="0.1.0",
            tools=[TOOL],
            commands=[COMMAND],
            supported_hooks=[types.HookEvent.SESSION_START],
        )

    def execute_tool(self, call: types.ToolCall) -> str:
        if call.tool_name != TOOL.name:
            raise Err(f"Tool '{call.tool_name}' not found in plugin")
        return "echo:" + call.arguments

    def execute_command(self, call: types.CommandCall) -> types.CommandResult:
        # A name or an alias, in any case (as typed by the user).
        if call.command_name.lower() not in [COMMAND.name, *COMMAND.aliases]:
            raise Err(f"Command '{call.command_name}' not found in plugin")
        try:
            workspace = host_info.workspace()
        except Err as e:
            raise Err(unavailable(e.value)) from None
        return types.CommandResult_Message(
            types.CommandMessage(
                text=f"root={workspace.root_path}",
                presentation=types.Presentation.MODAL,
                title=None,
            )
        )

    def emit_hook(self, payload: types.HookPayload) -> None:
        if payload.event == types.HookEvent.SESSION_START:
            logging.log(logging.Level.INFO, f"session started: {payload.subject_id}")

    def deactivate(self) -> None:
        pass


class TaskRunner:
    """``lingxi:plugin/task-runner``, for the worlds with tasks: one kind,
    ``echo``, whose result is its input. (Its base class and records exist
    only in those worlds' bindings, so they are looked up when called.)"""

    def kinds(self):
        from wit_world.exports import task_runner

        return [task_runner.TaskKind(name="echo", description="Answers its input.")]

    def run(self, kind: str, input: str, id: str) -> str:
        if kind != "echo":
            raise Err(f"no task kind '{kind}'")
        return input
