"""The reference fixture of the LingXi protocol contract (spec §7), in Python:
plugin ``com.lingxi.test-probe`` with tool ``probe.echo``, command ``probe``
(alias ``pb``) and a ``sessionStart`` hook. On the wire it is identical to the
Rust probe (examples/probe); the end-to-end tests replay the contract
against both.

Build: ``scripts/componentize py examples/probe-py probe-py.wasm``
"""

from lingxi_plugin import (
    Capability, CommandResult, HookEvent, Manifest, Plugin, command, export, on, tool,
)


class Probe(Plugin):
    """The probe plugin."""

    manifest = Manifest(
        "com.lingxi.test-probe",
        "Probe",
        "0.1.0",
        "Contract fixture plugin",
        capabilities=[Capability.PROJECT_READ],
    )

    @tool("probe.echo", "Echoes its raw arguments, prefixed with 'echo:'.")
    def echo(self, arguments, ctx):
        """Answers ``echo:<arguments>``."""
        return f"echo:{arguments}"

    @command("probe", "Shows the workspace root the host published.", aliases=["pb"])
    def probe(self, args, ctx):
        """Answers ``root=<workspace.rootPath>`` (or InfoUnavailable's text)."""
        return CommandResult.message(f"root={ctx.info.workspace_info().root_path}")

    @on(HookEvent.SESSION_START)
    def session_started(self, payload):
        """Logs the session that started."""
        self.logger.info(f"session started: {payload.subject_id}")


Plugin = export(Probe)
