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
from wit_world.imports import types as wit

__all__ = ["Err", "wit", "log", "host_info"]

#: The generated ``host-info`` module (snapshot getters and ``data-dir``).
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
