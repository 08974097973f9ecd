"""``config-check``: validates the TOML and JSON files of the workspace.

The tool ``config.check`` takes ``{"path": "sub/dir-or-file", "max_files": 200}``
(both optional) and answers a JSON report: for each file ``ok`` or the parse
error with its line and column. The command ``/config-check [path]`` shows a
summary. Declares only ``projectRead``: the sandbox mounts the workspace
read-only and nothing else.

Build: ``scripts/componentize py examples/config-check-py config-check.wasm``
"""

import os

from checker import check_tree, summary
from lingxi_plugin import (
    Capability, CommandResult, InputSchema, Manifest, Plugin, PluginError, Property,
    command, export, json_arguments, tool,
)

DEFAULT_MAX_FILES = 200
MAX_FILES = 2000

# ANCHOR: schema
SCHEMA = (
    InputSchema()
    .property(
        "path",
        Property.string(
            "File or folder to check, relative to the workspace (default: the whole workspace)"
        ).read_path(),
    )
    .property(
        "max_files",
        Property.integer(f"Most files to check (default {DEFAULT_MAX_FILES})")
        .minimum(1)
        .maximum(MAX_FILES),
    )
    .no_additional_properties()
)
# ANCHOR_END: schema


class ConfigCheck(Plugin):
    """The config-check plugin."""

    manifest = Manifest(
        "com.lingxi.config-check",
        "Config Check",
        "0.1.0",
        "Validates the TOML and JSON files of the workspace",
        capabilities=[Capability.PROJECT_READ],
    )

    def _workspace_root(self):
        """The workspace root the host published, or ``None``."""
        try:
            return self.info.workspace_info().root_path
        except PluginError:
            return None

    def _report(self, path, max_files):
        root = self._workspace_root()
        if path is None:
            if root is None:
                # Raises the host's exact "info unavailable" text.
                self.info.workspace_info()
            path = root
        try:
            return check_tree(path, max_files, base=root)
        except FileNotFoundError as e:
            raise PluginError(str(e)) from None

    # ANCHOR: tool
    @tool(
        "config.check",
        "Checks that the TOML and JSON files of the workspace (or of one file or "
        "folder of it) parse; answers a JSON report with, for each file, `ok` or the "
        "parse error with its line and column. Skips hidden folders, `target` and "
        "`node_modules`.",
        SCHEMA,
        timeout_ms=2000,
        concurrency_safe=True,
    )
    def check(self, arguments, ctx):
        """The JSON report (the host has already resolved ``path``)."""
        args = json_arguments(arguments)
        max_files = args.get("max_files", DEFAULT_MAX_FILES)
        # An empty path means what no path means: the whole workspace.
        return self._report(args.get("path") or None, max_files)

    # ANCHOR_END: tool

    @command(
        "config-check",
        "Checks that the workspace's TOML and JSON files parse.",
        argument_hint="[path]",
    )
    def config_check(self, args, ctx):
        """A summary of the report for the workspace, or for ``args[0]``
        (relative to the workspace root)."""
        path = None
        if args:
            root = ctx.info.workspace_info().root_path
            path = os.path.normpath(os.path.join(root, args[0]))
        text = summary(self._report(path, DEFAULT_MAX_FILES))
        return CommandResult.message(text).with_title("config-check")


Plugin = export(ConfigCheck)
