"""lingxi_plugin: write LingXi plugins in Python that run inside a WebAssembly
sandbox (componentize-py turns them into components of ``wit/lingxi-plugin.wit``).

The API has the Rust SDK's shape: a :class:`Plugin` has a :class:`Manifest`
and declares tools (``@tool``), slash commands (``@command``) and hook
handlers (``@on``); more can be registered in :meth:`Plugin.activate`.
Commands read the host's runtime snapshot through a read-only
:class:`InfoHub` whose getters raise :class:`InfoUnavailable` when the host
did not publish a section, never a made-up default::

    from lingxi_plugin import *

    class Hello(Plugin):
        manifest = Manifest("com.example.hello", "Hello", "0.1.0", "Says hello")

        @tool("echo", "Echoes its argument back.")
        def echo(self, arguments, ctx):
            return arguments

    Plugin = export(Hello)      # the class componentize-py calls

Build with ``scripts/componentize py DIR OUT.wasm`` (``DIR/app.py`` is the
plugin's module). Authors never touch the generated bindings.
"""

from .context import (
    Command,
    CommandContext,
    Logger,
    Plugin,
    PluginContext,
    Tool,
    ToolContext,
    command,
    json_arguments,
    on,
    task,
    tool,
)
from .info import InfoHub, InfoUnavailable, iso8601
from .model import (
    Capability,
    CommandResult,
    HookEvent,
    HookPayload,
    Manifest,
    PluginError,
    Presentation,
)
from .runtime import SDK_VERSION, SUPPORTED_IPC_VERSIONS, export
from .schema import DEFAULT_INPUT_SCHEMA, InputSchema, Property
from .storage import MAX_KEY_BYTES, Storage, StorageError
from .tasks import Task, TaskContext, TaskState, Tasks, describe

__version__ = SDK_VERSION

__all__ = [
    "Capability",
    "Command",
    "CommandContext",
    "CommandResult",
    "DEFAULT_INPUT_SCHEMA",
    "HookEvent",
    "HookPayload",
    "InfoHub",
    "InfoUnavailable",
    "InputSchema",
    "Logger",
    "MAX_KEY_BYTES",
    "Manifest",
    "Plugin",
    "PluginContext",
    "PluginError",
    "Presentation",
    "Property",
    "SDK_VERSION",
    "SUPPORTED_IPC_VERSIONS",
    "Storage",
    "StorageError",
    "Task",
    "TaskContext",
    "TaskState",
    "Tasks",
    "Tool",
    "ToolContext",
    "command",
    "describe",
    "export",
    "iso8601",
    "json_arguments",
    "on",
    "task",
    "tool",
]
