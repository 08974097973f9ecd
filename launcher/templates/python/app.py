"""__NAME__: a LingXi plugin written in Python, run as a sandboxed
WebAssembly component.

Build: ``./build.sh`` (writes ``build/plugin.wasm``).
"""

from lingxi_plugin import (
    CommandResult, HookEvent, InputSchema, Manifest, Plugin, Property,
    command, export, json_arguments, on, tool,
)


class MyPlugin(Plugin):
    """The plugin. Declare the capabilities it needs in the manifest, e.g.
    ``capabilities=[Capability.PROJECT_READ]``: the user must grant them too."""

    manifest = Manifest("__ID__", "__NAME__", "0.1.0", "__DESCRIPTION__")

    # The host checks every call's arguments against this schema before the
    # tool runs.
    @tool(
        "greet",
        "Greets someone by name.",
        InputSchema()
        .property("name", Property.string("Who to greet").min_length(1))
        .required(["name"])
        .no_additional_properties(),
    )
    def greet(self, arguments, ctx):
        """The model calls it with ``{"name": "Ada"}``."""
        name = json_arguments(arguments).get("name", "world")
        ctx.logger.info(f"greeting {name}")
        return f"Hello, {name}!"

    @command("hello", "Says hello and shows the workspace root.", aliases=["hi"])
    def hello(self, args, ctx):
        """``/hello`` (alias ``/hi``): shows the workspace the host published."""
        root = ctx.info.workspace_info().root_path
        return CommandResult.message(f"Hello from {root}").with_title("__NAME__")

    @on(HookEvent.SESSION_START)
    def session_started(self, payload):
        """Logs each session that starts."""
        self.logger.info(f"session started: {payload.subject_id}")


Plugin = export(MyPlugin)
