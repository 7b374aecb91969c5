"""The tools as an MCP server (the official SDK's low-level server), over stdio or HTTP.

The low-level server takes the tools' own JSON schemas as they are (``diff`` has an
argument named ``from``, which no Python function can take). A tool's answer is the
CLI's JSON envelope, as structured content and as text; an error is the envelope
``{"ok": false, "error": {"code", "message"}}`` in a result marked ``is_error``, with
the codes the CLI uses (docs/agents.md).
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

import mcp.types as types
from mcp.server.lowlevel import Server

from recall_engine.errors import RecallError

from ..display import json_safe
from .tools import TOOLS, Toolbox

SERVER_NAME = "recall"
INSTRUCTIONS = (
    "Typed long-term memory. Call predicates first to learn the vocabulary; remember one statement "
    "per call; recall before answering from memory. Every answer is {ok, data} or {ok: false, error: "
    "{code, message}}."
)

# Runs one tool call for the request at hand: (request context, tool name, arguments) -> data.
Runner = Callable[[Any, str, dict[str, Any]], Awaitable[dict[str, Any]]]


def envelope_ok(data: Any) -> dict[str, Any]:
    return {"ok": True, "data": data}


def envelope_error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


def error_of(e: BaseException) -> dict[str, Any]:
    if isinstance(e, RecallError):
        return envelope_error(e.code, e.message)
    return envelope_error("internal_error", f"internal error: {type(e).__name__}: {e}".rstrip(": "))


def dumps(doc: Any) -> str:
    return json_safe(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))


def tool_list(writable: bool | None = None) -> list[types.Tool]:
    out = []
    for t in TOOLS.values():
        desc = t.description
        if t.writes and writable is False:
            desc += " (This server is read-only: the call is refused with code read_only.)"
        out.append(types.Tool(
            name=t.name, description=desc, input_schema=t.schema,
            annotations=types.ToolAnnotations(
                read_only_hint=not t.writes, destructive_hint=False, idempotent_hint=t.name != "remember",
                open_world_hint=False,
            ),
        ))
    return out


def build_server(run: Runner, *, writable: bool | None = None) -> Server:
    """A low-level MCP server whose tool calls go through ``run``."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(writable))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            doc = envelope_ok(await run(ctx, params.name, dict(params.arguments or {})))
            failed = False
        except Exception as e:  # noqa: BLE001 - every failure reaches the agent as a tool error
            doc, failed = error_of(e), True
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=dumps(doc))], structured_content=doc, is_error=failed,
        )

    return Server(
        SERVER_NAME, version="1", instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool,
    )


async def serve_stdio(toolbox: Toolbox) -> None:
    """One agent over stdin/stdout. Calls run in turn on this thread: one client, one store."""
    from mcp.server.stdio import stdio_server

    async def run(ctx: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return toolbox.call(name, args)

    server = build_server(run, writable=toolbox.writable)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
