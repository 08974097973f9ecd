"""An MCP host for the end-to-end tests, built on the official MCP Python SDK
(pinned in requirements.lock): it starts a server, lists and calls what the
tests ask, and prints one JSON report on stdout.

    client.py [options] -- COMMAND [ARG...]     start COMMAND as a stdio server
    client.py [options] --package DIR --data D  load an Agent Plugins 1.0.0
                                                package as a client must, then
                                                start its one MCP server

Options:
    --calls JSON     a list of steps: {"tool": NAME, "arguments": {...},
                     "meta": {...} (the request's _meta, optional)} or
                     {"prompt": NAME, "arguments": "typed text"}
    --roots URI      offer this MCP root (repeatable); without any, the client
                     offers no roots capability
    --modern         connect with the 2026-07-28 `server/discover` instead of
                     the `initialize` handshake
    --timeout SECS   how long one request may take before the client gives up
    --schemas DIR    the vendored Agent Plugins schemas (with --package)

The report: {"protocolVersion", "serverInfo", "tools", "prompts",
"results": [{"ms", "isError", "text", "meta" (the result's _meta, if any)} |
{"ms", "error": {"code", "message"}}],
"package": {...} (with --package)}. A package that does not load is reported
with its problems and exit status 3; nothing is started.
"""

import argparse
import asyncio
import json
import os
import sys
import time

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

import agent_plugins


def parse_args(argv):
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    else:
        command = []
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", default="[]")
    parser.add_argument("--roots", action="append", default=[])
    parser.add_argument("--modern", action="store_true")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--package")
    parser.add_argument("--data")
    parser.add_argument("--schemas")
    args = parser.parse_args(argv)
    args.command = command
    if bool(args.package) == bool(command):
        parser.error("give either --package DIR or -- COMMAND [ARG...]")
    return args


def text_of(content):
    return "".join(block.text for block in content if getattr(block, "type", None) == "text")


async def step(session, entry, timeout):
    start = time.monotonic()
    out = {}
    try:
        if "tool" in entry:
            meta = entry.get("meta")
            result = await session.call_tool(entry["tool"], entry.get("arguments"), read_timeout_seconds=timeout, meta=meta)
            out["isError"] = bool(result.is_error)
            out["text"] = text_of(result.content)
            if result.meta:
                out["meta"] = result.meta
        else:
            arguments = entry.get("arguments")
            arguments = None if arguments is None else {"arguments": arguments}
            result = await session.get_prompt(entry["prompt"], arguments)
            out["description"] = result.description
            out["messages"] = [{"role": m.role, "text": getattr(m.content, "text", None)} for m in result.messages]
    except MCPError as e:
        out["error"] = {"code": e.error.code, "message": e.error.message}
    out["ms"] = round((time.monotonic() - start) * 1000, 1)
    return out


async def run(args, server, report):
    roots = [types.Root(uri=uri) for uri in args.roots]

    async def list_roots(context):
        return types.ListRootsResult(roots=roots)

    async with stdio_client(server, errlog=sys.stderr) as (read, write):
        session = ClientSession(
            read,
            write,
            list_roots_callback=list_roots if roots else None,
            client_info=types.Implementation(name="lingxi-wasm-tests", version="1"),
        )
        async with session:
            if args.modern:
                discovered = await session.discover()
                session.adopt(discovered)
                report["protocolVersion"] = session._negotiated_version
                info = session._discover_server_info
            else:
                initialized = await session.initialize()
                report["protocolVersion"] = initialized.protocol_version
                info = initialized.server_info
            report["serverInfo"] = info.model_dump(by_alias=True, exclude_none=True) if info else None
            tools = await session.list_tools()
            report["tools"] = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools.tools]
            try:
                prompts = await session.list_prompts()
                report["prompts"] = [p.model_dump(by_alias=True, exclude_none=True) for p in prompts.prompts]
            except MCPError as e:
                report["prompts"] = {"error": e.error.message}
            if not args.modern:  # 2026-07-28 has no ping
                await session.send_ping()
            report["results"] = [await step(session, entry, args.timeout) for entry in json.loads(args.calls)]


def main():
    args = parse_args(sys.argv[1:])
    report = {}
    if args.package:
        loaded = agent_plugins.load(args.package, args.data, args.schemas)
        report["package"] = loaded.report()
        if not loaded.ok:
            print(json.dumps(report))
            sys.exit(3)
        # The base environment is the client's choice (spec §9): ours.
        env = dict(os.environ) | loaded.env
        server = StdioServerParameters(command=loaded.command, args=loaded.args, env=env, cwd=loaded.cwd)
    else:
        server = StdioServerParameters(
            command=args.command[0], args=args.command[1:], env=dict(os.environ)
        )
    asyncio.run(run(args, server, report))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
