"""Background tasks: long work a plugin starts from a tool or command call
and reads in later calls. LingXi Core gives a call 3.0 s; a task gets
minutes, on an instance of its own, so the plugin keeps answering.

Declare kinds of task with ``@task`` (or ``ctx.register_task`` in
``activate``), start one from a call with ``ctx.tasks.start(kind, input)``
(the id comes back at once) and read it later with ``ctx.tasks.status(id)``.
The host runs the task with the plugin's grants, under budgets of its own
(a deadline, memory, output, how many run at once, how long a result is
kept).
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from . import _host
from .info import InfoHub
from .model import PluginError
from .secrets import SecretAccess
from .storage import Storage

__all__ = ["Task", "TaskContext", "TaskState", "Tasks", "describe"]


@dataclass
class TaskContext(SecretAccess):
    """What a running task is handed."""

    #: The task's id (what ``Tasks.start`` returned).
    id: str
    #: The plugin's logger.
    logger: Any
    #: The plugin's persistent storage.
    storage: Storage = field(default_factory=Storage)
    #: Read-only view of the host's snapshot as it was when the task started.
    info: InfoHub = field(default_factory=InfoHub)

    def progress(self, fraction: Optional[float], message: str) -> None:
        """Reports progress: ``fraction`` done (0 to 1, or ``None`` if not
        known) and what the task is doing. Hosts show it; ``status`` reads
        it. It counts against the task's output budget: report when
        something changed, not in a tight loop."""
        _host.report_progress(None if fraction is None else float(fraction), str(message))


#: ``handler(input: str, ctx: TaskContext) -> str | JSON-serialisable value``.
TaskHandler = Callable[[str, TaskContext], Any]


@dataclass
class Task:
    """A registered kind of task and its handler."""

    #: The name ``Tasks.start`` is given.
    name: str
    #: What a task of this kind does, for people.
    description: str
    #: ``handler(input: str, ctx: TaskContext)``.
    handler: TaskHandler


@dataclass(frozen=True)
class TaskState:
    """What a task is doing, or how it ended. ``state`` is ``running``,
    ``succeeded``, ``failed`` or ``cancelled``."""

    state: str
    #: A succeeded task's result.
    result: Optional[str] = None
    #: A failed task's error text.
    error: Optional[str] = None
    #: A running task's last reported fraction, if it reported one.
    fraction: Optional[float] = None
    #: A running task's last reported message, if it reported one.
    message: Optional[str] = None

    @property
    def running(self) -> bool:
        """Whether it has not ended."""
        return self.state == "running"


def _state(value) -> Optional[TaskState]:
    """The SDK's state of the host's (WIT) one."""
    if value is None:
        return None
    name = type(value).__name__
    if name.endswith("Running"):
        progress = value.value
        if progress is None:
            return TaskState("running")
        return TaskState("running", fraction=progress.fraction, message=progress.message)
    if name.endswith("Succeeded"):
        return TaskState("succeeded", result=value.value)
    if name.endswith("Failed"):
        return TaskState("failed", error=value.value)
    return TaskState("cancelled")


class Tasks:
    """Starts, reads and cancels the plugin's background tasks, from a tool
    or command call."""

    def __init__(self, kinds: Sequence[str] = ()) -> None:
        self._kinds = tuple(kinds)

    def start(self, kind: str, input: str = "") -> str:
        """Starts a task of kind ``kind`` with ``input`` and returns its id
        at once. Raises :class:`PluginError` if no such kind is registered,
        or if the host refuses (too many tasks running, the plugin is
        stopping…), with its reason."""
        if kind not in self._kinds:
            known = ", ".join(self._kinds) or "none"
            raise PluginError(f"Task kind '{kind}' not registered by plugin; registered: {known}")
        try:
            return _host.start_task(kind, str(input))
        except _host.Err as e:
            raise PluginError(str(e.value)) from None

    def status(self, id: str) -> Optional[TaskState]:
        """The state of task ``id``; ``None`` if the plugin has no such task
        or its result expired."""
        return _state(_host.task_status(str(id)))

    def cancel(self, id: str) -> bool:
        """Cancels task ``id`` if it is running: ``True`` if it was."""
        return bool(_host.cancel_task(str(id)))

    def __repr__(self) -> str:
        return f"Tasks(kinds={list(self._kinds)!r})"


def describe(state: Optional[TaskState]) -> str:
    """``state`` in a word or a line, as a status tool would answer:
    ``running`` (with its progress), ``done: <result>``, ``failed: <error>``,
    ``cancelled``; ``unknown task`` for ``None``."""
    if state is None:
        return "unknown task"
    if state.state == "running":
        if state.message is None:
            return "running"
        if state.fraction is None:
            return f"running: {state.message}"
        return f"running ({state.fraction * 100:.0f}%): {state.message}"
    if state.state == "succeeded":
        return f"done: {state.result}"
    if state.state == "failed":
        return f"failed: {state.error}"
    return "cancelled"
