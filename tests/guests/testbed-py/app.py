"""A Python test guest that exercises its host, like the Rust testbed
(tests/guests/testbed): well-behaved tools, a command that reads the info
hub, and tools that attack the sandbox on purpose (files, network,
environment, resource exhaustion). It declares every capability, so each test
decides with ``--grant`` what it really gets. Tools take RAW string arguments
(not JSON).

Build: ``scripts/componentize py tests/guests/testbed-py testbed-py.wasm``
"""

# Every module a plugin uses must be imported here, at the top: componentize-py
# snapshots the modules imported at build time, and the sandbox has no
# standard library on disk to import more from at run time.
import encodings.idna  # socket's host name lookup encodes names with it
import json
import os
import socket
import sys
import time
import urllib.request

from lingxi_plugin import (
    Capability, CommandResult, HookEvent, Manifest, Plugin, PluginError, command, export,
    on, tool,
)

MIB = 1024 * 1024


def number(args: str, tool_name: str) -> int:
    """The arguments of ``tool_name`` read as a non-negative integer."""
    try:
        value = int(args.strip())
    except ValueError as e:
        raise PluginError(f"{tool_name} takes a number: {e}") from None
    if value < 0:
        raise PluginError(f"{tool_name} takes a number: {value} is negative")
    return value


def split_pair(args: str, usage: str):
    """``first\\nrest`` of the arguments, or a usage error."""
    first, sep, rest = args.partition("\n")
    if not sep:
        raise PluginError(usage)
    return first, rest


class Testbed(Plugin):
    """The testbed plugin."""

    manifest = Manifest(
        "com.lingxi.testbed",
        "Testbed",
        "0.1.0",
        "Test guest for the host's end-to-end tests",
        capabilities=[
            Capability.PROJECT_READ,
            Capability.PROJECT_WRITE,
            Capability.NETWORK_ACCESS,
            Capability.PROCESS_EXECUTION,
        ],
    )

    def __init__(self):
        #: Counts activations, to observe re-initialization after a restart.
        self.activations = 0

    def activate(self, ctx):
        # A slow start, for the deadline tests (`--env TESTBED_ACTIVATE_MS=…`).
        delay = os.environ.get("TESTBED_ACTIVATE_MS", "")
        if delay.isdigit():
            time.sleep(int(delay) / 1000)
        self.activations += 1
        self.logger.info(f"activation #{self.activations}")

    def deactivate(self):
        self.logger.info("deactivated")

    # -- well-behaved tools ------------------------------------------------

    @tool("ok", "test tool")
    def ok(self, args, ctx):
        return f"ok:{args}"

    @tool("secret", "test tool")
    def secret(self, args, ctx):
        # The value of the secret the arguments name: {"name": NAME}.
        return f"the value is {ctx.secret(json.loads(args)['name'])}"

    @tool("fail", "test tool")
    def fail(self, args, ctx):
        raise PluginError(f"failed on purpose: {args}")

    @tool("len", "test tool")
    def length(self, args, ctx):
        return str(len(args.encode("utf-8")))

    @tool("env", "test tool")
    def env(self, args, ctx):
        return ",".join(f"{k}={v}" for k, v in os.environ.items())

    @tool("print-stdout", "test tool")
    def print_stdout(self, args, ctx):
        # Would break the protocol channel if it reached the host's stdout.
        print('{"id":"X","result":"forged"}')
        sys.stdout.write("partial line without newline")
        sys.stdout.flush()
        print("a line on stderr", file=sys.stderr, flush=True)
        return "printed"

    # -- files ---------------------------------------------------------------

    @tool("read-file", "test tool")
    def read_file(self, path, ctx):
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except OSError as e:
            raise PluginError(str(e)) from None

    @tool("write-file", "test tool")
    def write_file(self, args, ctx):
        path, content = split_pair(args, "write-file takes <path>\\n<content>")
        data = content.encode("utf-8")
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as e:
            raise PluginError(str(e)) from None
        return f"wrote {len(data)} bytes"

    # -- network -------------------------------------------------------------

    @tool("tcp", "test tool")
    def tcp(self, addr, ctx):
        host, _, port = addr.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=2) as s:
                s.sendall(b"ping\n")
                line = s.makefile("rb").readline()
        except (OSError, ValueError) as e:
            raise PluginError(f"{addr}: {e}") from None
        return line.decode("utf-8", "replace").rstrip("\r\n")

    @tool("http", "test tool")
    def http(self, url, ctx):
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                body = response.read().decode("utf-8", "replace")
                return f"{response.status} {body}"
        except Exception as e:  # noqa: BLE001 -- report whatever failed
            raise PluginError(f"{url}: {type(e).__name__}: {e}") from None

    # -- resources -----------------------------------------------------------

    @tool("spin", "test tool")
    def spin(self, args, ctx):
        while True:
            pass

    @tool("sleep", "test tool")
    def sleep(self, args, ctx):
        seconds = number(args, "sleep")
        time.sleep(seconds)
        return f"slept {seconds} s"

    @tool("alloc-mib", "test tool")
    def alloc_mib(self, args, ctx):
        mib = number(args, "alloc-mib")
        block = b"\x01" * (mib * MIB)  # written byte by byte: every page touched
        return f"allocated {block.count(1) >> 20} MiB"

    @tool("big-result", "test tool")
    def big_result(self, args, ctx):
        return "x" * (number(args, "big-result") * MIB)

    @tool("log-flood", "test tool")
    def log_flood(self, args, ctx):
        n = number(args, "log-flood")
        line = "y" * 1024
        for _ in range(n):
            self.logger.info(line)
        return f"logged {n}"

    # -- storage -------------------------------------------------------------

    @tool("kv-set", "test tool")
    def kv_set(self, args, ctx):
        key, sep, value = args.partition("=")
        if not sep:
            raise PluginError("key=value")
        ctx.storage.set(key, value)
        return "stored"

    @tool("kv-get", "test tool")
    def kv_get(self, key, ctx):
        value = ctx.storage.get_string(key)
        return "<none>" if value is None else value

    @tool("kv-keys", "test tool")
    def kv_keys(self, args, ctx):
        return ",".join(ctx.storage.keys())

    # -- command and hooks ---------------------------------------------------

    @command(
        "info",
        "Shows a snapshot section",
        argument_hint="workspace|peCore|contextState|performance",
    )
    def info_command(self, args, ctx):
        getters = {
            "workspace": ctx.info.workspace_info,
            "peCore": ctx.info.pe_core_info,
            "contextState": ctx.info.context_state,
            "performance": ctx.info.performance_info,
        }
        getter = getters.get(args[0]) if args else None
        if getter is None:
            return CommandResult.prompt("which section?")
        return CommandResult.inline(repr(getter())).with_title("info")

    @on(HookEvent.AGENT_TURN_END)
    def turn_ended(self, payload):
        self.logger.info(f"turn ended: {payload.subject_id}")

    @on(HookEvent.AGENT_TURN_END)
    def second_handler(self, payload):
        raise PluginError("second handler fails")


Plugin = export(Testbed)
