"""The protocol semantics that live inside the plugin: IPC version check,
lazy activation with retry after failure, name and alias resolution, hook
dispatch in registration order, and the reference plugin's error texts.

:class:`Runtime` is plain Python over one plugin object; :func:`export`
makes the class componentize-py calls (``app.Plugin``), which forwards every
exported function to one ``Runtime`` per instance.
"""

import sys
import traceback
from typing import Any, List, Optional, Type

from . import _host
from ._host import wit
from .context import (
    Command, CommandContext, Logger, Plugin, PluginContext, ToolContext, register_declared,
)
from .info import InfoHub
from .model import (
    CommandResult, HookEvent, HookPayload, PluginError, describe_exception, sorted_unique,
)
from .schema import to_json
from .tasks import TaskContext, Tasks

__all__ = ["SDK_VERSION", "SUPPORTED_IPC_VERSIONS", "Runtime", "export"]

#: IPC versions this SDK speaks.
SUPPORTED_IPC_VERSIONS = (1,)
#: Version of this SDK, sent in the handshake.
SDK_VERSION = "0.1.0"


class _Failure(Exception):
    """An error text for the host (raised as ``Err`` at the boundary)."""


def _run(logger: Logger, what: str, function, *args):
    """Calls ``function``; an exception becomes a :class:`_Failure` with its
    error text, and one that is not a PluginError has its traceback logged."""
    try:
        return function(*args)
    except PluginError as e:
        raise _Failure(e.message) from None
    except Exception as e:  # noqa: BLE001 -- a plugin bug must not crash the instance
        text = describe_exception(e)
        logger.error(f"{what} raised {text}")
        log_traceback(logger)
        raise _Failure(text) from None


def log_traceback(logger: Logger) -> None:
    """Logs the traceback of the exception being handled, one line per log
    call (the host shows a log message on one line)."""
    for line in traceback.format_exc().rstrip().splitlines():
        logger.error(line)


def _wit_manifest(manifest) -> Any:
    return wit.Manifest(
        id=manifest.id,
        name=manifest.name,
        version=manifest.version,
        description=manifest.description,
        author=manifest.author,
        capabilities=[wit.Capability[c.name] for c in manifest.capabilities],
        minimum_core_version=manifest.minimum_core_version,
    )


def resolve_command(commands: List[Command], typed: str) -> Optional[Command]:
    """Finds a command by name, then alias; exact case first, then ignoring
    ASCII case (the host routes case-insensitively and sends the name as
    typed)."""
    for c in commands:
        if c.name == typed or typed in c.aliases:
            return c
    folded = _ascii_lower(typed)
    for c in commands:
        if _ascii_lower(c.name) == folded or any(_ascii_lower(a) == folded for a in c.aliases):
            return c
    return None


def _ascii_lower(text: str) -> str:
    return "".join(chr(ord(ch) + 32) if "A" <= ch <= "Z" else ch for ch in text)


class Runtime:
    """One plugin instance and its activation state. Every method takes and
    returns the generated WIT types and raises :class:`_Failure` with the
    error text the host receives."""

    def __init__(self, plugin: Plugin) -> None:
        """Wraps a freshly constructed plugin; it is not active yet."""
        self.plugin = plugin
        self.active: Optional[PluginContext] = None
        self.logger = Logger()

    def _manifest(self):
        manifest = self.plugin.manifest
        return manifest() if callable(manifest) else manifest

    def manifest(self):
        """The manifest (WIT), without activating."""
        return _wit_manifest(_run(self.logger, "manifest", self._manifest))

    def _activate(self) -> PluginContext:
        """Activates once; after a failure the next request tries again."""
        if self.active is None:
            ctx = PluginContext()

            def activate():
                register_declared(self.plugin, ctx)
                self.plugin.activate(ctx)

            _run(self.logger, "activate", activate)
            self.active = ctx
        return self.active

    def initialize(self, request):
        """``plugin.initialize``: the handshake (WIT)."""
        version = request.host_ipc_version
        if version is not None and version not in SUPPORTED_IPC_VERSIONS:
            supported = "[" + ", ".join(str(v) for v in SUPPORTED_IPC_VERSIONS) + "]"
            raise _Failure(f"Unsupported host IPC version {version}; plugin supports {supported}.")
        manifest = self.manifest()
        registry = self._activate()
        hooks = sorted_unique([event for event, _ in registry.hooks])
        return wit.Handshake(
            manifest=manifest,
            ipc_version=SUPPORTED_IPC_VERSIONS[0],
            sdk_version=SDK_VERSION,
            tools=[
                wit.ToolDescriptor(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in registry.tools
            ],
            commands=[
                wit.CommandDescriptor(
                    name=c.name, aliases=list(c.aliases), description=c.description,
                    category=c.category, argument_hint=c.argument_hint,
                )
                for c in registry.commands
            ],
            supported_hooks=[wit.HookEvent[e.name] for e in hooks],
        )

    def execute_tool(self, call) -> str:
        """``tool.execute``: the tool's text output."""
        registry = self._activate()
        found = next((t for t in registry.tools if t.name == call.tool_name), None)
        if found is None:
            raise _Failure(f"Tool '{call.tool_name}' not found in plugin")
        ctx = ToolContext(
            session_id=call.session_id, tool_call_id=call.tool_call_id, tasks=self._tasks(registry)
        )
        result = _run(self.logger, f"tool '{found.name}'", found.handler, call.arguments, ctx)
        if isinstance(result, str):
            return result
        return _run(self.logger, f"tool '{found.name}' result", to_json, result)

    def execute_command(self, call):
        """``command.execute``: the command's result (WIT), aliases resolved."""
        registry = self._activate()
        found = resolve_command(registry.commands, call.command_name)
        if found is None:
            raise _Failure(f"Command '{call.command_name}' not found in plugin")
        ctx = CommandContext(session_id=call.session_id, info=InfoHub(), tasks=self._tasks(registry))
        result = _run(
            self.logger, f"command '{found.name}'", found.handler, list(call.arguments), ctx
        )
        if isinstance(result, str):
            result = CommandResult.message(result)
        if not isinstance(result, CommandResult):
            text = f"TypeError: command '{found.name}' returned {type(result).__name__}, not CommandResult"
            self.logger.error(text)
            raise _Failure(text)
        if result.is_prompt:
            return wit.CommandResult_Prompt(result.text)
        return wit.CommandResult_Message(
            wit.CommandMessage(
                text=result.text,
                presentation=wit.Presentation[result.presentation.name],
                title=result.title,
            )
        )

    def emit_hook(self, payload) -> None:
        """``hook.emit``: handlers run in registration order; failures are
        logged, never returned."""
        registry = self._activate()
        event = HookEvent[payload.event.name]
        hook = HookPayload(event=event, subject_id=payload.subject_id, metadata=dict(payload.metadata))
        handlers = [h for e, h in registry.hooks if e == event]
        for index, handler in enumerate(handlers, start=1):
            try:
                handler(hook)
            except Exception as e:  # noqa: BLE001 -- logged, never returned
                text = describe_exception(e)
                self.logger.error(
                    f"{event.wire_name} handler #{index} failed for '{hook.subject_id}': {text}"
                )
                if not isinstance(e, PluginError):
                    log_traceback(self.logger)

    @staticmethod
    def _tasks(registry: PluginContext) -> Tasks:
        return Tasks(t.name for t in registry.tasks)

    def task_kinds(self) -> list:
        """``task-runner.kinds``: the registered task kinds (name,
        description), activating first; none if activation fails."""
        try:
            registry = self._activate()
        except _Failure:
            return []
        return [(t.name, t.description) for t in registry.tasks]

    def run_task(self, kind: str, input: str, id: str) -> str:
        """``task-runner.run``: runs task ``id`` of ``kind`` on this (the
        task's own) instance: its result text."""
        registry = self._activate()
        found = next((t for t in registry.tasks if t.name == kind), None)
        if found is None:
            raise _Failure(f"Task kind '{kind}' not registered by plugin")
        ctx = TaskContext(id=id, logger=self.logger)
        result = _run(self.logger, f"task '{found.name}'", found.handler, input, ctx)
        if isinstance(result, str):
            return result
        return _run(self.logger, f"task '{found.name}' result", to_json, result)

    def deactivate(self) -> None:
        """End of session: deactivates the plugin if it is active."""
        if self.active is not None:
            self.active = None
            try:
                self.plugin.deactivate()
            except Exception as e:  # noqa: BLE001 -- nobody is left to answer
                self.logger.error(f"deactivate failed: {describe_exception(e)}")
                if not isinstance(e, PluginError):
                    log_traceback(self.logger)


def _boundary(method):
    """Runs a Runtime method, turning its failure into the WIT ``Err``."""
    try:
        return method()
    except _Failure as e:
        raise _host.Err(str(e)) from None


def export(plugin_class: Type[Plugin]):
    """Makes the class componentize-py exports: write
    ``Plugin = lingxi_plugin.export(MyPlugin)`` at the end of ``app.py``.
    ``plugin_class`` is instantiated with no arguments on first use, once
    per component instance."""
    if not (isinstance(plugin_class, type) and issubclass(plugin_class, Plugin)):
        raise TypeError("export() takes a subclass of lingxi_plugin.Plugin")
    from wit_world.exports import Plugin as Exports  # the generated protocols
    from wit_world.exports import TaskRunner as TaskExports
    from wit_world.exports import task_runner

    state: dict = {}

    def runtime() -> Runtime:
        if "runtime" not in state:
            state["runtime"] = Runtime(plugin_class())
        return state["runtime"]

    class Export(Exports):
        """The component's exports, forwarded to the plugin's runtime."""

        def get_manifest(self):
            return runtime().manifest()

        def initialize(self, request):
            return _boundary(lambda: runtime().initialize(request))

        def execute_tool(self, call):
            return _boundary(lambda: runtime().execute_tool(call))

        def execute_command(self, call):
            return _boundary(lambda: runtime().execute_command(call))

        def emit_hook(self, payload):
            return _boundary(lambda: runtime().emit_hook(payload))

        def deactivate(self):
            runtime().deactivate()

    class TaskRunner(TaskExports):
        """The component's task runner, forwarded to the plugin's runtime."""

        def kinds(self):
            return [task_runner.TaskKind(name=n, description=d) for n, d in runtime().task_kinds()]

        def run(self, kind, input, id):
            return _boundary(lambda: runtime().run_task(kind, input, id))

    Export.__name__ = Export.__qualname__ = "Plugin"
    Export.__doc__ = f"LingXi exports of {plugin_class.__name__}."
    Export.runtime = staticmethod(runtime)
    Export.TaskRunner = TaskRunner
    # componentize-py takes each exported interface's class from the app
    # module: `Plugin = export(MyPlugin)` there defines `TaskRunner` too.
    caller = sys._getframe(1).f_globals
    caller.setdefault("TaskRunner", TaskRunner)
    return Export
