"""``indexer`` in Python: long work in the background. ``index.start`` starts
a task that counts the lines of the workspace's files and answers
``task:<id>`` at once (a LingXi call has 3 s; the count may take minutes);
``index.status`` reads the task, ``index.cancel`` stops it. On the wire it
is the Rust ``examples/indexer``; the end-to-end tests drive both alike.

- ``index.start {"delay_ms": N}`` (optional: wait N ms first) → ``task:<id>``
- ``index.status {"task": "<id>"}`` → ``running``, ``done: <N> lines``,
  ``failed: …`` or ``cancelled``
- ``index.cancel {"task": "<id>"}`` → ``cancelled`` or ``not running``

Build: ``scripts/componentize py examples/indexer-py indexer-py.wasm``
"""

import os
import time

from lingxi_plugin import (
    Capability, InputSchema, Manifest, Plugin, PluginError, Property, export,
    json_arguments, task, tool,
)

START = (
    InputSchema()
    .property("delay_ms", Property.integer("Wait this many milliseconds first (for demos and tests)")
              .minimum(0).maximum(3_600_000))
    .no_additional_properties()
    .starts_task()
)
TASK = (
    InputSchema()
    .property("task", Property.string("The id index.start answered (task:<id>)"))
    .required(["task"])
    .no_additional_properties()
)


def count(path: str) -> int:
    """Lines under ``path``: a file's newlines (a last line without one
    counts), a folder's files', skipping what cannot be read and links."""
    if os.path.islink(path):
        return 0
    if os.path.isdir(path):
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return 0
        return sum(count(os.path.join(path, name)) for name in names)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return 0
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def task_id(arguments: str) -> str:
    """The id of ``{"task": "<id>"}``, with or without ``task:``."""
    value = json_arguments(arguments).get("task")
    if not isinstance(value, str):
        raise PluginError('expected {"task": "<id>"}')
    return value.removeprefix("task:")


class Indexer(Plugin):
    """Counts the workspace's lines in the background."""

    manifest = Manifest(
        "com.lingxi.indexer-py",
        "Indexer (Python)",
        "0.1.0",
        "Counts the lines of the workspace in the background",
        capabilities=[Capability.PROJECT_READ],
    )

    # ANCHOR: task
    @task("count-lines", "Counts the lines of the workspace's files")
    def count_lines(self, input, ctx):
        """Waits ``delay_ms`` if asked, then counts, reporting progress per
        top-level entry."""
        delay = json_arguments(input).get("delay_ms", 0)
        if delay:
            ctx.progress(0.0, "waiting")
            time.sleep(delay / 1000)
        root = ctx.info.workspace_info().root_path
        names = sorted(os.listdir(root))
        lines = 0
        for done, name in enumerate(names):
            ctx.progress(done / max(len(names), 1), f"counting {name}")
            lines += count(os.path.join(root, name))
        return f"{lines} lines"
    # ANCHOR_END: task

    # ANCHOR: start
    @tool("index.start", "Starts counting the workspace's lines in the background; "
          "answers task:<id> at once. Read it with index.status.", START)
    def start(self, arguments, ctx):
        """Starts the task and answers its handle at once."""
        return "task:" + ctx.tasks.start("count-lines", arguments.strip() or "{}")
    # ANCHOR_END: start

    @tool("index.status", "Reads an indexing task: running, done: <N> lines, failed: … or cancelled.",
          TASK)
    def status(self, arguments, ctx):
        """What the task is doing, or how it ended."""
        id = task_id(arguments)
        state = ctx.tasks.status(id)
        if state is None:
            return f"unknown task {id} (finished tasks are kept for a while, then forgotten)"
        if state.running:
            return "running"
        if state.state == "succeeded":
            return f"done: {state.result}"
        if state.state == "failed":
            return f"failed: {state.error}"
        return "cancelled"

    @tool("index.cancel", "Cancels an indexing task.", TASK)
    def cancel(self, arguments, ctx):
        """Cancels the task if it runs."""
        return "cancelled" if ctx.tasks.cancel(task_id(arguments)) else "not running"


Plugin = export(Indexer)
