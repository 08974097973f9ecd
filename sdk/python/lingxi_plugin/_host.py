"""The SDK's only door to the host and to componentize-py's generated bindings.

Everything that names ``wit_world`` or ``componentize_py_types`` lives here, so
plugin authors (and the rest of the SDK) never touch the bindings. The host
functions are looked up on their modules at every call, never bound at import
time: the unit tests replace them natively, where the generated functions
raise ``NotImplementedError``.
"""

from componentize_py_types import Err
from wit_world.imports import host_info as _host_info
from wit_world.imports import logging as _wit_logging
from wit_world.imports import tasks as _wit_tasks
from wit_world.imports import types as wit

__all__ = ["Err", "wit", "log", "host_info", "tasks"]

#: The generated ``tasks`` module (start, status, cancel, report-progress).
tasks = _wit_tasks

#: The generated ``host-info`` module (snapshot getters, ``data-dir``, ``secret``).
host_info = _host_info

_LEVELS = {
    "info": _wit_logging.Level.INFO,
    "warn": _wit_logging.Level.WARN,
    "error": _wit_logging.Level.ERROR,
}


def log(level: str, message: str) -> None:
    """Writes one log line at ``level`` (``info``, ``warn`` or ``error``)."""
    _wit_logging.log(_LEVELS[level], message)


def data_dir():
    """The guest path of the plugin's data directory, or ``None``."""
    return _host_info.data_dir()


def secret(name: str) -> str:
    """The value of granted secret ``name``; raises ``Err`` with the host's
    reason when there is none."""
    return _host_info.secret(name)


def start_task(kind: str, input: str) -> str:
    """Starts a task; raises ``Err`` with the host's refusal."""
    return _wit_tasks.start(kind, input)


def task_status(id: str):
    """The host's (WIT) state of task ``id``, or ``None``."""
    return _wit_tasks.status(id)


def cancel_task(id: str) -> bool:
    """Cancels task ``id``: whether it was running."""
    return _wit_tasks.cancel(id)


def report_progress(fraction, message: str) -> None:
    """Reports the running task's progress."""
    _wit_tasks.report_progress(_wit_tasks.Progress(fraction=fraction, message=message))
