"""An MCP host for the end-to-end tests, built on the official MCP Python SDK
(pinned in requirements.lock): it starts a server, lists and calls what the
tests ask, and prints one JSON report on stdout.

    client.py [options] -- COMMAND [ARG...]     start COMMAND as a stdio server
    client.py [options] --url URL               connect to a streamable-HTTP
                                                server
    client.py [options] --package DIR --data D  load an Agent Plugins 1.0.0
                                                package as a client must, then
                                                start its one MCP server

Options:
    --calls JSON     a list of steps: {"tool": NAME, "arguments": {...},
                     "meta": {...} (the request's _meta, optional),
                     "swap": {...} (other arguments for an input_required
                     retry, optional)} or
                     {"prompt": NAME, "arguments": "typed text"}
    --roots URI      offer this MCP root (repeatable); without any, the client
                     offers no roots capability
    --modern         connect with the 2026-07-28 `server/discover` instead of
                     the `initialize` handshake
    --timeout SECS   how long one request may take before the client gives up
    --token T        (--url) send `Authorization: Bearer T`
    --origin O       (--url) send `Origin: O`, as a browser page would
    --elicit ACTION  declare elicitation (form) and answer every request with
                     accept, decline or cancel (reported under "elicitations")
    --checkpoint F   after --checkpoint-after calls, create F.reached and wait
                     for F.go before going on (a test acts in between)
    --schemas DIR    the vendored Agent Plugins schemas (with --package)
    --tasks          declare the tasks extension (SEP-2663, see tasks.py): a
                     call answered with a task is polled to its end and
                     reported under "task"; a step with "cancel": true
                     cancels its task first

The report: {"protocolVersion", "serverInfo", "tools", "prompts",
"results": [{"ms", "isError", "text", "meta" (the result's _meta, if any)} |
{"ms", "error": {"code", "message"}}], "elicitations": [messages],
"package": {...} (with --package)}. A package that does not load is reported
with its problems and exit status 3; nothing is started.
"""

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time

from mcp import types
from mcp.client._input_required import run_input_required_driver
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

import agent_plugins
import tasks


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
    parser.add_argument("--url")
    parser.add_argument("--token")
    parser.add_argument("--origin")
    parser.add_argument("--elicit", choices=["accept", "decline", "cancel"])
    parser.add_argument("--checkpoint")
    parser.add_argument("--checkpoint-after", type=int, default=0)
    parser.add_argument("--tasks", action="store_true")
    args = parser.parse_args(argv)
    args.command = command
    if [bool(args.package), bool(command), bool(args.url)].count(True) != 1:
        parser.error("give one of --package DIR, --url URL or -- COMMAND [ARG...]")
    return args


def text_of(content):
    return "".join(block.text for block in content if getattr(block, "type", None) == "text")


async def call_tool(session, entry, timeout, answer):
    """A tools/call, its 2026-07-28 `input_required` rounds driven to the end."""
    name, arguments, meta = entry["tool"], entry.get("arguments"), entry.get("meta")
    result = await session.call_tool(
        name, arguments, read_timeout_seconds=timeout, meta=meta, allow_input_required=True, allow_claimed=True,
    )
    if not isinstance(result, types.InputRequiredResult):
        return result

    async def dispatch(key, request):
        return await answer(None, request.params)

    async def retry(responses, state):
        # "swap": other arguments for the retry (a client that changes the
        # call after its user approved it).
        return await session.call_tool(
            name, entry.get("swap", arguments), read_timeout_seconds=timeout, meta=meta,
            input_responses=responses, request_state=state, allow_input_required=True,
        )

    return await run_input_required_driver(result, dispatch=dispatch, retry=retry)


async def step(session, entry, timeout, answer):
    start = time.monotonic()
    out = {}
    try:
        if "tool" in entry:
            result = await call_tool(session, entry, timeout, answer)
            if isinstance(result, tasks.CreatedTask):
                out["task"] = await tasks.follow(session, result, entry.get("cancel", False), timeout)
                out["ms"] = round((time.monotonic() - start) * 1000, 1)
                return out
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


async def checkpoint(args, done):
    if args.checkpoint and done == args.checkpoint_after:
        open(args.checkpoint + ".reached", "w").close()
        deadline = time.monotonic() + 120
        while not os.path.exists(args.checkpoint + ".go"):
            if time.monotonic() > deadline:
                raise TimeoutError("the test never said go")
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def connect(args, server):
    if args.url:
        headers = {}
        if args.token:
            headers["Authorization"] = f"Bearer {args.token}"
        if args.origin:
            headers["Origin"] = args.origin
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(args.url, http_client=http) as (read, write):
                yield read, write
    else:
        async with stdio_client(server, errlog=sys.stderr) as (read, write):
            yield read, write


async def run(args, server, report):
    roots = [types.Root(uri=uri) for uri in args.roots]
    report["elicitations"] = []

    async def list_roots(context):
        return types.ListRootsResult(roots=roots)

    async def answer(context, params):
        report["elicitations"].append(params.message)
        return types.ElicitResult(action=args.elicit, content={} if args.elicit == "accept" else None)

    async with connect(args, server) as (read, write):
        session = ClientSession(
            read,
            write,
            list_roots_callback=list_roots if roots else None,
            elicitation_callback=answer if args.elicit else None,
            client_info=types.Implementation(name="lingxi-wasm-tests", version="1"),
            **(tasks.SESSION_OPTIONS if args.tasks else {}),
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
            report["results"] = []
            for entry in json.loads(args.calls):
                await checkpoint(args, len(report["results"]))
                report["results"].append(await step(session, entry, args.timeout, answer))


def main():
    args = parse_args(sys.argv[1:])
    report = {}
    if args.package:
        loaded = agent_plugins.load(args.package, args.data, args.schemas)
        report["package"] = loaded.report()
        if not loaded.ok:
            print(json.dumps(report))
            sys.exit(3)
        if loaded.url:
            args.url, server = loaded.url, None
        else:
            # The base environment is the client's choice (spec §9): ours.
            env = dict(os.environ) | loaded.env
            server = StdioServerParameters(command=loaded.command, args=loaded.args, env=env, cwd=loaded.cwd)
    elif args.command:
        server = StdioServerParameters(
            command=args.command[0], args=args.command[1:], env=dict(os.environ)
        )
    else:
        server = None
    try:
        asyncio.run(run(args, server, report))
    except BaseException as e:  # an HTTP refusal ends the connection: report it
        report["failure"] = failure(e)
        print(json.dumps(report))
        sys.exit(4)
    print(json.dumps(report))


def failure(e):
    """What stopped the client: an HTTP status if there was one, and the messages."""
    found = {"messages": []}
    stack = [e]
    while stack:
        e = stack.pop()
        found["messages"].append(f"{type(e).__name__}: {e}")
        if isinstance(e, MCPError) and "error" not in found:
            found["error"] = e.error.model_dump(mode="json", exclude_none=True)
        response = getattr(e, "response", None)
        if response is not None and getattr(response, "status_code", None):
            found["status"] = response.status_code
        stack.extend(getattr(e, "exceptions", []) or [])
        for inner in (e.__cause__, e.__context__):
            if inner is not None and len(found["messages"]) < 20:
                stack.append(inner)
    return found


if __name__ == "__main__":
    main()
