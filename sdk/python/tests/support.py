"""Test support: makes the SDK importable natively.

The SDK imports componentize-py's generated bindings (``wit_world``,
``componentize_py_types``). They are generated once per test process into a
temporary folder with the pinned toolchain
(``target/toolchains/py/bin/componentize-py``, installed by
``scripts/toolchains py``) and put on ``sys.path``. Natively the generated
import functions raise ``NotImplementedError``; :class:`FakeHost` replaces
them with a recording logger and a settable snapshot and data directory.
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SDK = os.path.join(ROOT, "sdk", "python")
COMPONENTIZE_PY = os.path.join(ROOT, "target", "toolchains", "py", "bin", "componentize-py")


def _generate_bindings() -> str:
    if not os.access(COMPONENTIZE_PY, os.X_OK):
        raise unittest.SkipTest(
            f"{COMPONENTIZE_PY} is missing: install it with scripts/toolchains py"
        )
    out = tempfile.mkdtemp(prefix="lingxi-py-bindings-")
    atexit.register(shutil.rmtree, out, True)
    subprocess.run(
        [COMPONENTIZE_PY, "-d", os.path.join(ROOT, "wit"), "-w", "lingxi-plugin",
         "bindings", out],
        check=True, stdout=subprocess.DEVNULL,
    )
    return out


if "wit_world" not in sys.modules:
    sys.path[:0] = [_generate_bindings(), SDK]

from componentize_py_types import Err  # noqa: E402
from wit_world.imports import host_info, logging as wit_logging, tasks as wit_tasks, types as wit  # noqa: E402

import lingxi_plugin  # noqa: E402

__all__ = ["Err", "wit", "wit_tasks", "FakeHost", "lingxi_plugin", "timestamp", "workspace"]


def timestamp(seconds: int, nanoseconds: int = 0):
    """A WIT timestamp."""
    return wit.Timestamp(seconds=seconds, nanoseconds=nanoseconds)


def workspace(root: str = "/repo"):
    """A WIT workspace section."""
    return wit.WorkspaceInfo(
        root_path=root, is_git_repository=True, current_git_branch="main",
        dirty_file_count=3, primary_languages=None, core_version="1.1.0",
    )


class FakeHost:
    """Replaces the host's import functions while a test runs: a context
    manager, or ``start()`` in ``setUp`` with ``addCleanup(stop)``."""

    def __init__(self):
        #: (level name, message) of every line logged.
        self.logs = []
        #: The snapshot the host "accepted" (a WIT RuntimeSnapshot), or None.
        self.snapshot = None
        #: The data directory, or None for no storage.
        self.data_dir = None
        #: Tasks "started": id → (kind, input); their WIT states by id.
        self.started = {}
        self.states = {}
        #: Set to a text to make the host refuse the next starts.
        self.refuse = None
        #: Progress reports, as (fraction, message).
        self.progress = []
        #: The secrets the host hands out, by name.
        self.secrets = {}
        self._saved = {}

    def _start(self, kind, input):
        if self.refuse is not None:
            raise Err(self.refuse)
        id = f"t-{len(self.started)}"
        self.started[id] = (kind, input)
        self.states[id] = wit_tasks.TaskState_Running(None)
        return id

    def _secret(self, name):
        if name not in self.secrets:
            raise Err(f"secret {name} is not granted to this plugin: grant it with --secret {name}")
        return self.secrets[name]

    def _cancel(self, id):
        if isinstance(self.states.get(id), wit_tasks.TaskState_Running):
            self.states[id] = wit_tasks.TaskState_Cancelled()
            return True
        return False

    def _section(self, field, attribute):
        def get():
            value = getattr(self.snapshot, attribute) if self.snapshot else None
            if value is None:
                last = self.snapshot.observed_at if self.snapshot else None
                raise Err(wit.InfoUnavailable(field=field, last_snapshot=last))
            return value
        return get

    def start(self):
        """Installs the fakes."""
        fakes = {
            (wit_logging, "log"): lambda level, message: self.logs.append(
                (level.name.lower(), message)),
            (host_info, "latest_snapshot"): lambda: self.snapshot,
            (host_info, "workspace"): self._section("workspace", "workspace"),
            (host_info, "pe_core"): self._section("peCore", "pe_core"),
            (host_info, "context_state"): self._section("contextState", "context_state"),
            (host_info, "performance"): self._section("performance", "performance"),
            (host_info, "data_dir"): lambda: self.data_dir,
            (host_info, "secret"): self._secret,
            (wit_tasks, "start"): self._start,
            (wit_tasks, "status"): lambda id: self.states.get(id),
            (wit_tasks, "cancel"): self._cancel,
            (wit_tasks, "report_progress"): lambda p: self.progress.append((p.fraction, p.message)),
        }
        for (module, name), fake in fakes.items():
            self._saved[(module, name)] = getattr(module, name)
            setattr(module, name, fake)
        return self

    def stop(self):
        """Restores the generated functions."""
        for (module, name), original in self._saved.items():
            setattr(module, name, original)
        self._saved.clear()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def set_snapshot(self, seconds: int, **sections):
        """Makes the host hold a snapshot observed at ``seconds`` with the
        given sections (``workspace=…``, ``pe_core=…``, …)."""
        self.snapshot = wit.RuntimeSnapshot(
            observed_at=timestamp(seconds), ipc_version=1,
            workspace=sections.get("workspace"), pe_core=sections.get("pe_core"),
            context_state=sections.get("context_state"),
            performance=sections.get("performance"),
        )

    def messages(self, level=None):
        """The logged messages (of ``level`` only, if given)."""
        return [m for lv, m in self.logs if level is None or lv == level]
