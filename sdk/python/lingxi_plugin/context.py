"""What plugin code is handed and declares: the :class:`Plugin` base class, the
``@tool`` / ``@command`` / ``@on`` decorators, the activation context it
registers with, the per-call contexts and the logger."""

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _host
from .info import InfoHub
from .model import CommandResult, HookEvent, HookPayload, Manifest, PluginError
from .schema import DEFAULT_INPUT_SCHEMA, InputSchema, keywords, to_json
from .secrets import SecretAccess
from .storage import Storage
from .tasks import Task, TaskHandler, Tasks

__all__ = [
    "Logger", "ToolContext", "CommandContext", "PluginContext", "Tool", "Command",
    "Plugin", "tool", "command", "on", "task", "json_arguments",
]

_MAX_TIMEOUT_MS = 86_400_000


class Logger:
    """Writes log lines to the host's stderr, prefixed with the plugin id.
    Nothing logged can reach the protocol channel."""

    def info(self, message: str) -> None:
        """Logs normal operation."""
        _host.log("info", str(message))

    def warn(self, message: str) -> None:
        """Logs something unexpected that the plugin recovered from."""
        _host.log("warn", str(message))

    def error(self, message: str) -> None:
        """Logs a failure."""
        _host.log("error", str(message))

    def __repr__(self) -> str:
        return "Logger()"


@dataclass
class ToolContext(SecretAccess):
    """Context of one tool call. It has no info hub on purpose (tools map
    input to output), but a tool may read ``self.info`` of its plugin."""

    #: Session the call belongs to.
    session_id: str
    #: Identifier of this tool call.
    tool_call_id: str
    #: The plugin's logger.
    logger: Logger = field(default_factory=Logger)
    #: The plugin's persistent storage.
    storage: Storage = field(default_factory=Storage)
    #: The plugin's background tasks.
    tasks: Tasks = field(default_factory=Tasks)


@dataclass
class CommandContext(SecretAccess):
    """Context of one slash command."""

    #: Session, if the command runs inside one.
    session_id: Optional[str]
    #: Read-only view of the host's runtime snapshot.
    info: InfoHub = field(default_factory=InfoHub)
    #: The plugin's logger.
    logger: Logger = field(default_factory=Logger)
    #: The plugin's persistent storage.
    storage: Storage = field(default_factory=Storage)
    #: The plugin's background tasks.
    tasks: Tasks = field(default_factory=Tasks)


#: ``handler(arguments, ctx) -> str | JSON-serialisable value``.
ToolHandler = Callable[[str, ToolContext], Any]
#: ``handler(args, ctx) -> CommandResult | str``.
CommandHandler = Callable[[List[str], CommandContext], Union[CommandResult, str]]
#: ``handler(payload) -> None``; raising fails only this handler.
HookHandler = Callable[[HookPayload], None]


@dataclass
class Tool:
    """A registered tool: what the handshake describes, and its handler."""

    #: The name the model calls it by.
    name: str
    #: What the tool does, for the model.
    description: str
    #: JSON Schema text of the arguments.
    input_schema: str
    #: ``handler(arguments: str, ctx: ToolContext)``.
    handler: ToolHandler


@dataclass
class Command:
    """A registered slash command and its handler."""

    #: Name without the slash.
    name: str
    #: What the command does.
    description: str
    #: ``handler(args: list[str], ctx: CommandContext)``.
    handler: CommandHandler
    #: Other names that run the same command.
    aliases: Tuple[str, ...] = ()
    #: Menu group.
    category: str = "Plugin"
    #: Hint shown after the name while typing.
    argument_hint: str = ""


def schema_text(
    schema: Union[None, str, dict, InputSchema],
    timeout_ms: Optional[int] = None,
    requires_approval: bool = False,
    concurrency_safe: bool = False,
) -> str:
    """The ``inputSchema`` text of ``schema`` (an :class:`InputSchema`, a dict,
    JSON text or ``None`` for the protocol default) with the contract
    annotations added."""
    annotated = timeout_ms is not None or requires_approval or concurrency_safe
    if not annotated:
        if schema is None:
            return DEFAULT_INPUT_SCHEMA
        if isinstance(schema, str):
            return schema
        return str(schema) if isinstance(schema, InputSchema) else to_json(schema)
    if schema is None:
        value = InputSchema().to_dict()
    elif isinstance(schema, InputSchema):
        value = schema.to_dict()
    elif isinstance(schema, str):
        value = json.loads(schema)
    else:
        value = dict(schema)
    if not isinstance(value, dict):
        raise ValueError("a tool's input schema must be a JSON object")
    if timeout_ms is not None:
        if isinstance(timeout_ms, bool) or not 1 <= int(timeout_ms) <= _MAX_TIMEOUT_MS:
            raise ValueError(f"timeout_ms must be 1 to {_MAX_TIMEOUT_MS}, not {timeout_ms!r}")
        value[keywords.TIMEOUT_MS] = int(timeout_ms)
    if requires_approval:
        value[keywords.REQUIRES_APPROVAL] = True
    if concurrency_safe:
        value[keywords.CONCURRENCY_SAFE] = True
    return to_json(value)


class PluginContext(SecretAccess):
    """What activation registers tools, commands and hooks with. The
    decorated members of the plugin are registered before
    :meth:`Plugin.activate` runs; ``activate`` may register more here."""

    def __init__(self) -> None:
        self.tools: List[Tool] = []
        self.commands: List[Command] = []
        self.hooks: List[Tuple[HookEvent, HookHandler]] = []
        self.tasks: List[Task] = []
        #: The plugin's logger.
        self.logger = Logger()
        #: Read-only view of the host's runtime snapshot.
        self.info = InfoHub()
        #: The plugin's persistent storage.
        self.storage = Storage()

    def register_tool(
        self,
        name: str,
        description: str,
        handler: ToolHandler,
        schema: Union[None, str, dict, InputSchema] = None,
        *,
        timeout_ms: Optional[int] = None,
        requires_approval: bool = False,
        concurrency_safe: bool = False,
    ) -> None:
        """Registers a tool. A second tool with the same name replaces the
        first (and logs a warning)."""
        text = schema_text(schema, timeout_ms, requires_approval, concurrency_safe)
        new = Tool(str(name), str(description), text, handler)
        for i, old in enumerate(self.tools):
            if old.name == new.name:
                self.logger.warn(f"tool '{new.name}' registered twice; the later one wins")
                self.tools[i] = new
                return
        self.tools.append(new)

    def register_command(
        self,
        name: str,
        description: str,
        handler: CommandHandler,
        *,
        aliases: Sequence[str] = (),
        category: str = "Plugin",
        argument_hint: str = "",
    ) -> None:
        """Registers a slash command. A second command with the same name
        replaces the first (and logs a warning)."""
        if isinstance(aliases, str):
            aliases = (aliases,)
        new = Command(
            str(name), str(description), handler, tuple(str(a) for a in aliases),
            str(category), str(argument_hint),
        )
        for i, old in enumerate(self.commands):
            if old.name == new.name:
                self.logger.warn(f"command '{new.name}' registered twice; the later one wins")
                self.commands[i] = new
                return
        self.commands.append(new)

    def register_task(self, name: str, description: str, handler: TaskHandler) -> None:
        """Registers a kind of background task, started from calls with
        ``ctx.tasks.start(name, input)``. A second kind with the same name
        replaces the first (and logs a warning)."""
        new = Task(str(name), str(description), handler)
        for i, old in enumerate(self.tasks):
            if old.name == new.name:
                self.logger.warn(f"task kind '{new.name}' registered twice; the later one wins")
                self.tasks[i] = new
                return
        self.tasks.append(new)

    def on(self, event: HookEvent, handler: HookHandler) -> None:
        """Subscribes ``handler(payload)`` to ``event``. Handlers of one event
        run in registration order; one that raises is logged and does not
        stop the others or fail the event."""
        if not isinstance(event, HookEvent):
            raise TypeError(f"on() takes a HookEvent, not {event!r}")
        self.hooks.append((event, handler))


# The attribute the decorators leave on a function: a list of
# ("tool" | "command" | "hook", keyword arguments of the registration).
_MARK = "__lingxi_registrations__"


def _mark(kind: str, options: Dict[str, Any]) -> Callable:
    def decorate(function: Callable) -> Callable:
        marks = list(getattr(function, _MARK, ()))
        marks.append((kind, options))
        setattr(function, _MARK, marks)
        return function

    return decorate


def tool(
    name: str,
    description: str,
    schema: Union[None, str, dict, InputSchema] = None,
    *,
    timeout_ms: Optional[int] = None,
    requires_approval: bool = False,
    concurrency_safe: bool = False,
) -> Callable:
    """Declares a method ``def f(self, arguments: str, ctx: ToolContext)`` as
    the tool ``name``. ``arguments`` is the model's raw JSON text (see
    :func:`json_arguments`); return a ``str`` (sent as is) or any
    JSON-serialisable value (sent as its JSON text); raise
    :class:`PluginError` to fail with a text. ``schema`` is an
    :class:`InputSchema` (or dict, or JSON text); the keyword arguments add
    the contract annotations."""
    schema_text(schema, timeout_ms, requires_approval, concurrency_safe)  # fail early
    return _mark("tool", dict(
        name=name, description=description, schema=schema, timeout_ms=timeout_ms,
        requires_approval=requires_approval, concurrency_safe=concurrency_safe,
    ))


def command(
    name: str,
    description: str,
    *,
    aliases: Sequence[str] = (),
    category: str = "Plugin",
    argument_hint: str = "",
) -> Callable:
    """Declares a method ``def f(self, args: list[str], ctx: CommandContext)``
    as the slash command ``name`` (without the slash). Return a
    :class:`CommandResult` (a plain ``str`` is shown as a modal message)."""
    return _mark("command", dict(
        name=name, description=description, aliases=aliases, category=category,
        argument_hint=argument_hint,
    ))


def task(name: str, description: str = "") -> Callable:
    """Declares a method ``def f(self, input: str, ctx: TaskContext)`` as the
    background task kind ``name``: started from a call with
    ``ctx.tasks.start(name, input)``, it runs on an instance of its own.
    Return a ``str`` (its result) or any JSON-serialisable value; raise
    :class:`PluginError` to fail with a text."""
    return _mark("task", dict(name=name, description=description))


def on(event: HookEvent) -> Callable:
    """Declares a method ``def f(self, payload: HookPayload)`` as a handler of
    ``event``; stack it for several events."""
    if not isinstance(event, HookEvent):
        raise TypeError(f"on() takes a HookEvent, not {event!r}")
    return _mark("hook", dict(event=event))


def register_declared(plugin: "Plugin", ctx: PluginContext) -> None:
    """Registers the decorated methods of ``plugin``, in definition order
    (base classes first; an override keeps the place of what it overrides)."""
    names: Dict[str, None] = {}
    for cls in reversed(type(plugin).__mro__):
        for name in vars(cls):
            names[name] = None
    for name in names:
        member = getattr(type(plugin), name, None)
        marks = getattr(member, _MARK, None)
        if not marks or not callable(member):
            continue
        bound = getattr(plugin, name)
        for kind, options in marks:
            if kind == "tool":
                ctx.register_tool(handler=bound, **options)
            elif kind == "command":
                ctx.register_command(handler=bound, **options)
            elif kind == "task":
                ctx.register_task(handler=bound, **options)
            else:
                ctx.on(options["event"], bound)


def json_arguments(arguments: str) -> Dict[str, Any]:
    """A tool's raw ``arguments`` text parsed as a JSON object (empty text is
    ``{}``). Raises :class:`PluginError` ``invalid arguments: …`` otherwise."""
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError as e:
        raise PluginError(f"invalid arguments: {e}") from None
    if not isinstance(value, dict):
        raise PluginError("invalid arguments: expected a JSON object")
    return value


class Plugin:
    """Base class of a LingXi plugin. Give it a ``manifest`` (a class
    attribute, or a property), declare tools, commands and hooks with the
    decorators, and export it from ``app.py`` with
    ``Plugin = lingxi_plugin.export(MyPlugin)``. The class is instantiated
    once per instance, with no arguments."""

    #: Who the plugin is and what it declares. Must not depend on activation.
    manifest: Manifest
    #: The plugin's logger.
    logger = Logger()
    #: Read-only view of the host's runtime snapshot.
    info = InfoHub()
    #: The plugin's persistent storage.
    storage = Storage()

    def activate(self, ctx: PluginContext) -> None:
        """Runs once, on ``plugin.initialize`` or lazily on the first call,
        after the decorated members are registered; may register more with
        ``ctx``. If it raises, the error goes back to the host and the next
        request tries again."""

    def deactivate(self) -> None:
        """Called when the host closes the channel, if the plugin was active."""
