"""The plugin-facing data types: manifest, capabilities, hook events, command
results, hook payloads and the error type handlers raise.

These are the SDK's own types (plain Python); :mod:`lingxi_plugin.runtime`
converts them to and from the generated WIT types at the boundary.
"""

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Dict, Optional, Sequence, Tuple

__all__ = [
    "Capability",
    "HookEvent",
    "Presentation",
    "Manifest",
    "CommandResult",
    "HookPayload",
    "PluginError",
]


class Capability(Enum):
    """What a plugin says it intends to do. A host grants a capability only
    if the plugin declares it AND the user allows it. The value is the wire
    name."""

    #: Read files of the user's workspace.
    PROJECT_READ = "projectRead"
    #: Create and modify files of the user's workspace.
    PROJECT_WRITE = "projectWrite"
    #: Start processes.
    PROCESS_EXECUTION = "processExecution"
    #: Open network connections.
    NETWORK_ACCESS = "networkAccess"

    @property
    def wire_name(self) -> str:
        """The capability's name on the wire, e.g. ``projectRead``."""
        return self.value

    @classmethod
    def from_wire(cls, name: str) -> Optional["Capability"]:
        """Parses a wire name; ``None`` if unknown."""
        return next((c for c in cls if c.value == name), None)


class HookEvent(Enum):
    """The lifecycle events a plugin can subscribe to. The value is the wire
    name."""

    #: A session started.
    SESSION_START = "sessionStart"
    #: A session ended.
    SESSION_END = "sessionEnd"
    #: The agent starts a turn.
    AGENT_TURN_START = "agentTurnStart"
    #: The agent finished a turn.
    AGENT_TURN_END = "agentTurnEnd"
    #: A tool is about to run.
    TOOL_BEFORE = "toolBefore"
    #: A tool has run.
    TOOL_AFTER = "toolAfter"

    @property
    def wire_name(self) -> str:
        """The event's name on the wire, e.g. ``sessionStart``."""
        return self.value

    @classmethod
    def from_wire(cls, name: str) -> Optional["HookEvent"]:
        """Parses a wire name; ``None`` if unknown."""
        return next((e for e in cls if e.value == name), None)


class Presentation(Enum):
    """How a command's message is shown."""

    #: A centred pop-up that scrolls and closes with Esc (the default).
    MODAL = "modal"
    #: A card in the timeline.
    INLINE = "inline"


@dataclass(frozen=True)
class Manifest:
    """Who the plugin is and what it declares (wire: ``manifest``).

    It must not depend on activation: the host reads it before it builds the
    sandbox, in an instance with no capabilities at all.
    """

    #: Reverse-DNS identifier, unique among installed plugins.
    id: str
    #: Display name.
    name: str
    #: Semantic version of the plugin.
    version: str
    #: One-line description.
    description: str
    #: Author, if stated.
    author: Optional[str] = None
    #: Declared capabilities; a host grants only these (and only if allowed).
    capabilities: Sequence[Capability] = ()
    #: Oldest LingXi Core the author tested with (for people only).
    minimum_core_version: Optional[str] = None


@dataclass(frozen=True)
class CommandResult:
    """What a slash command returns: a message shown to the user (no model
    tokens) or a prompt handed to the model. Build one with
    :meth:`message`, :meth:`inline` or :meth:`prompt`."""

    #: The text to show, or the prompt.
    text: str
    #: ``True`` for a prompt for the model.
    is_prompt: bool = False
    #: Where a message is shown (a prompt is always inline).
    presentation: Presentation = Presentation.MODAL
    #: Optional title of a message (a prompt has none).
    title: Optional[str] = None

    @classmethod
    def message(cls, text: str) -> "CommandResult":
        """A message shown in a modal pop-up (the protocol's default)."""
        return cls(text=str(text))

    @classmethod
    def inline(cls, text: str) -> "CommandResult":
        """A message shown as an inline timeline card."""
        return cls(text=str(text), presentation=Presentation.INLINE)

    @classmethod
    def prompt(cls, text: str) -> "CommandResult":
        """A prompt for the model."""
        return cls(text=str(text), is_prompt=True, presentation=Presentation.INLINE)

    def with_title(self, title: str) -> "CommandResult":
        """The same message with a title (a prompt is returned unchanged)."""
        return self if self.is_prompt else replace(self, title=str(title))

    def with_presentation(self, presentation: Presentation) -> "CommandResult":
        """The same message shown differently (a prompt is always inline)."""
        return self if self.is_prompt else replace(self, presentation=presentation)


@dataclass(frozen=True)
class HookPayload:
    """One lifecycle event delivered to hook handlers."""

    #: Which event happened.
    event: HookEvent
    #: What it happened to (a session, turn or tool call id).
    subject_id: str
    #: Free-form string pairs sent by the host; Core sets ``sessionID``.
    metadata: Dict[str, str] = field(default_factory=dict)


class PluginError(Exception):
    """The error a plugin's activation, tool, command or hook raises on
    purpose. Its text goes back to the host verbatim as the response's
    ``error``. Any other exception becomes ``<ExceptionType>: <message>``
    and its traceback is logged."""

    def __init__(self, message: str):
        super().__init__(str(message))
        #: The text sent to the host.
        self.message = str(message)

    def __str__(self) -> str:
        return self.message


def describe_exception(error: BaseException) -> str:
    """The error text for ``error``: a :class:`PluginError`'s message as is,
    anything else as ``<ExceptionType>: <message>`` (just the type if the
    message is empty)."""
    if isinstance(error, PluginError):
        return error.message
    text = str(error)
    name = type(error).__name__
    return f"{name}: {text}" if text else name


def sorted_unique(events: Sequence[HookEvent]) -> Tuple[HookEvent, ...]:
    """``events`` without duplicates, sorted ascending by wire name."""
    return tuple(sorted(set(events), key=lambda e: e.value))
