"""The MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) for
the official MCP Python SDK, which has its types for 2025-11-25 tasks but no
client for the extension: the shape of a `tools/call` answered with a task
(a result claim, declared through the SDK's own extension API), and the
`tasks/get` and `tasks/cancel` requests (each naming its task in the
`Mcp-Name` header, as the extension requires over HTTP).

`follow` polls a created task to its end and reports what it saw.
"""

import asyncio
from typing import Any, ClassVar, Literal

from mcp import types
from mcp.client.extension import ResultClaim
from mcp_types import CallToolResult, Result
from pydantic import ConfigDict, TypeAdapter

EXTENSION = "io.modelcontextprotocol/tasks"

_RAW = TypeAdapter(dict[str, Any])


class CreatedTask(Result):
    """A `tools/call` answered with a task (`resultType: "task"`)."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    name_param: ClassVar[str] = "taskId"
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    name_param: ClassVar[str] = "taskId"
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams


async def _unused(created, ctx):  # the claim is resolved by `follow`, not the SDK
    raise NotImplementedError


#: What a session that takes tasks passes to ClientSession.
SESSION_OPTIONS = {
    "extensions": {EXTENSION: {}},
    "result_claims": {EXTENSION: [ResultClaim(result_type="task", model=CreatedTask, resolve=_unused)]},
}


async def get(session, task_id):
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), _RAW)


async def cancel(session, task_id):
    return await session.send_request(CancelTask(params=TaskParams(task_id=task_id)), _RAW)


async def follow(session, created, cancel_it=False, timeout=60.0):
    """Polls `created` to its end (cancelling it first if asked): the
    report `{"id", "status", "statusMessages", "result" | "error"}`."""
    report = {"id": created.task_id, "statusMessages": [created.status_message]}
    if cancel_it:
        await cancel(session, created.task_id)
    interval = (created.poll_interval_ms or 500) / 1000
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        now = await get(session, created.task_id)
        message = now.get("statusMessage")
        if message != report["statusMessages"][-1]:
            report["statusMessages"].append(message)
        if now["status"] not in ("working", "input_required"):
            report["status"] = now["status"]
            if "result" in now:
                result = CallToolResult.model_validate(now["result"])
                report["isError"] = bool(result.is_error)
                report["text"] = "".join(b.text for b in result.content if getattr(b, "type", None) == "text")
            if "error" in now:
                report["error"] = now["error"]
            return report
        if asyncio.get_running_loop().time() > deadline:
            report["status"] = "timeout"
            return report
        await asyncio.sleep(min(interval, 0.25))
