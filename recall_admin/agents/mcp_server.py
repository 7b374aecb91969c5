"""The tools as an MCP server (the official SDK's low-level server), over stdio or HTTP.

The low-level server takes the tools' own JSON schemas as they are (``diff`` has an
argument named ``from``, which no Python function can take). A tool's answer is the
CLI's JSON envelope, as structured content and as text; an error is the envelope
``{"ok": false, "error": {"code", "message"}}`` in a result marked ``is_error``, with
the codes the CLI uses (docs/agents.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types
import orjson
from mcp.server.lowlevel import Server
from pydantic_core import from_json

from recall_engine.errors import RecallError
from recall_engine.storage.decoding import loads

from ..display import json_safe
from ..inputs import check_tiny_numbers, json_problem
from .tools import TOOLS, Toolbox

SERVER_NAME = "recall"
MAX_MESSAGE_BYTES = 64 << 20
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
    return encode(doc).decode("utf-8")


def encode(doc: Any) -> bytes:
    """A JSON document as UTF-8, made safe for terminals (display.json_safe). orjson is
    several times faster than the json module; what it refuses (an int beyond 64 bits, a
    lone surrogate) goes through json, all in ASCII escapes: the same data."""
    try:
        raw = orjson.dumps(doc)
    except TypeError:
        raw = json.dumps(doc, separators=(",", ":")).encode("ascii")
    if raw.isascii() and b"\x7f" not in raw:
        return raw  # nothing json_safe escapes: C1 controls and separators are not ASCII
    return json_safe(raw.decode("utf-8")).encode("utf-8")


def decode(raw: bytes) -> Any:
    """A JSON document, as ``json.loads`` reads it (and words its errors), faster. Nesting
    past the parser's depth is a ValueError too, and a number past 4300 digits one in
    words an agent's author can act on (Python's advise changing the interpreter)."""
    try:
        text = raw.decode(json.detect_encoding(raw), "surrogatepass")
        check_tiny_numbers(text)
        return loads(text)
    except RecursionError:
        raise ValueError("it is nested too deeply") from None
    except ValueError as e:
        if type(e) is ValueError:  # not a JSONDecodeError nor a UnicodeDecodeError: int()'s digit limit
            raise ValueError(json_problem(e)) from None
        raise


def tool_list(writable: bool | None = None) -> list[types.Tool]:
    out = []
    for t in TOOLS.values():
        desc = t.description
        if t.writes and writable is False:
            desc += " (This server is read-only: the call is refused with code read_only.)"
        out.append(
            types.Tool(
                name=t.name,
                description=desc,
                input_schema=t.schema,
                annotations=types.ToolAnnotations(
                    read_only_hint=not t.writes,
                    destructive_hint=False,
                    idempotent_hint=t.name != "remember",
                    open_world_hint=False,
                ),
            )
        )
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
            content=[types.TextContent(type="text", text=dumps(doc))],
            structured_content=doc,
            is_error=failed,
        )

    return Server(
        SERVER_NAME,
        version="1",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class _Lines:
    """An async iterator of standard input's lines, for the SDK's stdio transport.

    A line that is not JSON is answered here with a JSON-RPC parse error (id null, code
    -32700) and skipped: the SDK drops it without a word, leaving the client waiting. A
    blank line carries no message and is skipped quietly."""

    out: _FdWriter

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._line()
            if not line.strip():
                continue
            try:
                message = from_json(line)  # the parser the SDK reads the line with
            except ValueError as e:
                await _refuse(self.out, -32700, f"Parse error: the line is not JSON ({e})")
                continue
            try:
                check_tiny_numbers(line)  # the SDK would read 1e-400 as 0
            except ValueError as e:
                await _refuse(
                    self.out, -32602, f"Invalid params: {e}", message.get("id") if isinstance(message, dict) else None
                )
                continue
            return line

    async def _line(self) -> str:
        raise NotImplementedError


class _PipeLines(_Lines):
    """Lines of a pipe read on the event loop itself.

    The SDK's default stdin reader hands every line to a worker thread and back; on a
    busy machine each hop waits for the scheduler, which came to milliseconds per call
    (benchmarks/bench_agents.py). A pipe can be read by the loop directly.

    A message past ``MAX_MESSAGE_BYTES`` is skipped to its end and answered with a
    JSON-RPC error (its id unread, so null), and the session goes on: one oversized call
    must not end the server for every call after it."""

    def __init__(self, reader: asyncio.StreamReader, out: _FdWriter) -> None:
        self.reader = reader
        self.out = out

    async def _line(self) -> str:
        skipping = False
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as e:
                line = e.partial
            except asyncio.LimitOverrunError as e:
                await self.reader.readexactly(e.consumed)  # drop what the limit let in; the rest follows
                skipping = True
                continue
            if skipping:  # ``line`` is the oversized message's tail
                await _refuse_oversized(self.out)
                skipping = False
                if line.endswith(b"\n"):
                    continue
            if not line:
                raise StopAsyncIteration
            return line.decode("utf-8", "replace")


class _FileLines(_Lines):
    """Lines of a standard input that is not a pipe (a file, a terminal, /dev/zero), each
    read in a worker thread no further than ``limit`` bytes: the SDK's own reader takes a
    line whole, so a file without a newline filled the memory until the server died. An
    oversized message is refused as on a pipe."""

    def __init__(self, raw: Any, out: _FdWriter, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.raw = raw
        self.out = out
        self.limit = limit

    async def _line(self) -> str:
        import anyio

        skipping = False
        while True:
            line = await anyio.to_thread.run_sync(self.raw.readline, self.limit + 1)
            if not line:
                if skipping:
                    await _refuse_oversized(self.out)
                raise StopAsyncIteration
            whole = line.endswith(b"\n")
            if skipping or (len(line) > self.limit and not whole):
                skipping = not whole
                if whole:  # the oversized message's end
                    await _refuse_oversized(self.out)
                continue
            return line.decode("utf-8", "replace")


async def _refuse_oversized(out: _FdWriter) -> None:
    message = f"a message over {MAX_MESSAGE_BYTES >> 20} MiB was refused unread; send smaller ones"
    print(f"recall MCP server: {message}", file=sys.stderr, flush=True)
    await _refuse(out, -32600, message)


async def _refuse(out: _FdWriter, code: int, message: str, id: Any = None) -> None:
    """A JSON-RPC error for a message the SDK never sees (id null when it was not read)."""
    error = {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}
    await out.write(dumps(error) + "\n")


class _FdWriter:
    """Whole messages written straight to a file descriptor (a message is one line)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(self.fd, data) :]

    async def flush(self) -> None:
        return None


async def _pipes() -> tuple[Any, Any]:
    """stdin and stdout for the SDK's stdio transport: a pipe read on the loop, anything
    else (a file, a terminal) in a worker thread; both a bounded line at a time."""
    out = os.dup(1)
    os.dup2(2, 1)  # stray prints go to stderr, never onto the wire
    writer = _FdWriter(out)
    stdin = os.fdopen(0, "rb", closefd=False)
    if not stat.S_ISFIFO(os.fstat(0).st_mode):
        return _FileLines(stdin, writer), writer
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    return _PipeLines(reader, writer), writer


async def serve_stdio(toolbox: Toolbox) -> None:
    """One agent over stdin/stdout. Calls run in turn on this thread: one client, one store."""
    from mcp.server.stdio import stdio_server

    async def run(ctx: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return toolbox.call(name, args)

    server = build_server(run, writable=toolbox.writable)
    async with stdio_server(*await _pipes()) as (read, write):
        await server.run(read, write, server.create_initialization_options())
