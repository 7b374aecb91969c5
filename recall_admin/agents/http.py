"""`serve`: the tools for many agents over HTTP (uvicorn; /mcp on the MCP SDK's own app).

Routes: ``POST /mcp`` (MCP streamable HTTP, stateless, JSON answers), ``POST /v1/<tool>``
(the tool's arguments as the JSON body), ``GET /healthz``. One gate in front of /mcp and
/v1 reads the body up to the size limit (413), checks the bearer key (401) and the key's
request rate (429), each refused with the CLI's JSON error envelope. The key decides the
collection; nothing in a request names one.

One process holds one backend (one connection per thread) and one ``Memory`` per key for
its whole life. Engine calls run on the event loop's own thread, one at a time: the store
takes one writer at a time anyway, and handing each call to a worker thread and back
cost more than the call on a busy machine. Writes that arrive together share one commit
(``GroupCommit``), each answered as if applied alone. The server keeps no state a second server
would need (new key events are read at each request, past a watermark), so several
servers can share one PostgreSQL. See docs/agents.md.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from recall_engine.errors import NotFound, ReadOnlyStore, RecallError, StorageError
from recall_engine.storage.base import Backend

from .keys import Key, KeyRing
from .mcp_server import build_server, decode, encode, envelope_error, envelope_ok, error_of
from .tools import DEFAULT_MAX_VALUE_BYTES, TOOLS, TooLarge, Toolbox, agent_memory

DEFAULT_MAX_BODY = 1 << 20
DEFAULT_RATE = 100.0  # requests per second per key; a burst of as many is allowed

STATUS = {
    "unauthorized": 401,
    "read_only": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "too_large": 413,
    "rate_limited": 429,
    "internal_error": 500,
    "storage_error": 503,
}
KEY_SCOPE = "recall.key"


class RateLimited(RecallError):
    code = "rate_limited"


class NotAllowed(RecallError):
    code = "method_not_allowed"


@dataclass
class Limits:
    max_body: int = DEFAULT_MAX_BODY
    max_value: int = DEFAULT_MAX_VALUE_BYTES
    rate: float = DEFAULT_RATE
    group_window: float = 0.0  # seconds a write waits for others to share its commit


class Bucket:
    """A token bucket: ``rate`` tokens a second, holding at most ``rate`` (at least one)."""

    def __init__(self, rate: float, now: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate)
        self.tokens = self.capacity
        self.at = now

    def take(self, now: float) -> bool:
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Agents:
    """What one server process holds: the store, its keys, one toolbox per key, the limits."""

    def __init__(
        self,
        backend: Backend,
        limits: Limits,
        *,
        match_threshold: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backend = backend
        self.limits = limits
        self.keys = KeyRing(backend)
        self.match_threshold = match_threshold
        self.clock = clock
        self._boxes: dict[str, Toolbox] = {}
        self._buckets: dict[str, Bucket] = {}
        self._lock = threading.Lock()
        self.writes: GroupCommit | None = None

    def toolbox(self, key: Key) -> Toolbox:
        box = self._boxes.get(key.id)
        if box is None:
            kwargs = {} if self.match_threshold is None else {"match_threshold": self.match_threshold}
            store = self.backend.store(key.collection, create=not self.backend_read_only)
            memory = agent_memory(store, {"key": key.id, "namespace": key.namespace}, **kwargs)
            box = Toolbox(
                memory,
                writable=not key.read_only and not self.backend_read_only,
                read_only_reason=f"the key {key.id} is read-only; writes are refused"
                if key.read_only
                else "the store is open read-only; writes are refused",
                max_value_bytes=self.limits.max_value,
            )
            self._boxes[key.id] = box
        return box

    @property
    def backend_read_only(self) -> bool:
        return bool(getattr(self.backend, "read_only", False))

    async def run(self, key: Key, name: str, args: Any) -> dict[str, Any]:
        """One tool call for a key (checked by the gate for this very request): a write
        waits for its group's commit, a read is answered at once."""
        tool = TOOLS.get(name)
        if tool is not None and tool.writes:
            if self.writes is None:
                self.writes = GroupCommit(self, window=self.limits.group_window)
            return await self.writes.call(key, name, args)
        return self.call(key, name, args)

    def call(self, key: Key, name: str, args: Any) -> dict[str, Any]:
        """One tool call for a key, applied now."""
        return self.toolbox(key).call(name, args)

    def apply(self, calls: Sequence[tuple[Key, str, Any]]) -> list[dict[str, Any] | Exception]:
        """Write calls in one transaction, applied one by one in this order: each answer (or
        error) is the one the call would get alone at this point, and an error in one call
        takes back only its own appends (Backend.group). If the group as a whole cannot be
        committed, nothing of it was stored: each call is then applied alone."""
        for key, _, _ in calls:
            with suppress(Exception):  # opening a collection may create it: outside the transaction
                self.toolbox(key)
        if len(calls) == 1:
            return [self._outcome(*calls[0])]
        try:
            with self.backend.group(collections=[key.collection for key, _, _ in calls]):
                outcomes = [self._outcome(*c) for c in calls]
                if any(_not_the_input(o) for o in outcomes):
                    # the store failed, not the input: maybe because of the group (a lock
                    # another server's group holds), so none of it stands
                    raise StorageError("a call of the group failed in the store")
            return outcomes
        except Exception:  # noqa: BLE001 - the commit failed: retried one by one below
            for key, _, _ in calls:
                # their caches saw appends that were taken back: start them afresh
                self._boxes.pop(key.id, None)
            return [self._outcome(*c) for c in calls]

    def _outcome(self, key: Key, name: str, args: Any) -> dict[str, Any] | Exception:
        try:
            return self.call(key, name, args)
        except Exception as e:  # noqa: BLE001 - the caller's own answer
            return e

    def admit(self, key: Key) -> None:
        with self._lock:
            bucket = self._buckets.get(key.id)
            now = self.clock()
            if bucket is None:
                bucket = self._buckets[key.id] = Bucket(self.limits.rate, now)
            if not bucket.take(now):
                raise RateLimited(
                    f"too many requests for key {key.id}: this server takes {self.limits.rate:g} a second per key; "
                    "retry later"
                )

    def close(self) -> None:
        return None


def _not_the_input(outcome: object) -> bool:
    """An error the store (or a bug) caused, which the same call alone might not meet."""
    if not isinstance(outcome, Exception):
        return False
    return not isinstance(outcome, RecallError) or (
        isinstance(outcome, StorageError) and not isinstance(outcome, ReadOnlyStore)
    )


class GroupCommit:
    """Write calls that arrive together are applied together (docs/agents.md, group commit).

    A write call waits in a queue; one task takes what has queued while the loop turned
    (or for ``window`` seconds), at most ``max_group`` calls, applies them in arrival order
    in one transaction (``Agents.apply``), and answers each once the transaction is
    committed. Engine calls stay on the event loop's thread, one group at a time."""

    def __init__(self, agents: Agents, *, window: float = 0.0, max_group: int = 64) -> None:
        self.agents = agents
        self.window = window
        self.max_group = max(1, max_group)
        self._queue: list[tuple[Key, str, Any, asyncio.Future[dict[str, Any]]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self.groups = 0  # how many transactions the queued writes took (benchmarks/bench_agents.py)
        self.calls = 0

    async def call(self, key: Key, name: str, args: Any) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._queue.append((key, name, args, done))
        if self._drainer is None:
            self._drainer = loop.create_task(self._drain())
        return await done

    async def _drain(self) -> None:
        try:
            while self._queue:
                # one turn of the loop (or the window): requests read meanwhile join this group
                await asyncio.sleep(self.window)
                group, self._queue = self._queue[: self.max_group], self._queue[self.max_group :]
                try:
                    outcomes = self.agents.apply([(k, n, a) for k, n, a, _ in group])
                except Exception as e:  # noqa: BLE001 - apply answers each call; this is a bug guard
                    outcomes = [e] * len(group)
                self.groups += 1
                self.calls += len(group)
                for (_, _, _, done), outcome in zip(group, outcomes, strict=True):
                    if done.done():
                        continue  # the caller went away; its write stands, as any answered write
                    if isinstance(outcome, Exception):
                        done.set_exception(outcome)
                    else:
                        done.set_result(outcome)
        finally:
            self._drainer = None
            left, self._queue = self._queue, []  # only when the server stops mid-wait
            for _, _, _, done in left:
                done.cancel()


# --- ASGI plumbing ----------------------------------------------------------------------
#
# /v1/<tool> and /healthz are answered here, in plain ASGI: the request is read once,
# checked once and answered with one body. Routing them through Starlette's middleware,
# router and request/response objects cost about as much CPU as a recall itself
# (benchmarks/bench_agents.py). Only /mcp goes on to the MCP SDK's Starlette app, which
# also owns the lifespan (it starts the SDK's session manager).

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
_JSON_HEADERS = [(b"content-type", b"application/json")]
_BEARER_CHALLENGE = [(b"www-authenticate", b'Bearer realm="recall"')]


async def _respond(send: Send, status: int, doc: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = encode(doc)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*_JSON_HEADERS, (b"content-length", str(len(body)).encode()), *(headers or ())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def status_of(doc: dict[str, Any]) -> int:
    return 200 if doc.get("ok") else STATUS.get(doc["error"]["code"], 400)


async def _reply(send: Send, doc: dict[str, Any]) -> None:
    extra = _BEARER_CHALLENGE if not doc.get("ok") and doc["error"]["code"] == "unauthorized" else []
    await _respond(send, status_of(doc), doc, extra)


class App:
    """The ASGI app `serve` runs: /healthz and /v1/<tool> here, /mcp (after the same gate) in the SDK."""

    def __init__(self, mcp_app: Any, agents: Agents) -> None:
        self.mcp_app = mcp_app
        self.agents = agents

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.mcp_app(scope, receive, send)  # the lifespan, which runs the SDK's session manager
            return
        path, method = scope["path"], scope["method"]
        try:
            if path == "/healthz":
                if method not in ("GET", "HEAD"):
                    raise NotAllowed("/healthz takes GET")
                await _reply(send, self.healthz())
                return
            v1 = path.startswith("/v1/")
            if not (v1 or path == "/mcp" or path.startswith("/mcp/")):
                raise NotFound(f"no route {path}; the routes are /mcp, /v1/<tool> and /healthz")
            if v1 and method != "POST":
                raise NotAllowed(f"{path} takes POST with the tool's arguments as a JSON object")
            headers = _headers(scope)
            body = await self._body(headers, receive)
            if body is None:
                return  # the client went away
            key = self.agents.keys.authenticate(headers.get("authorization"))
            self.agents.admit(key)
        except Exception as e:  # noqa: BLE001 - every refusal is an envelope
            await _reply(send, error_of(e))
            return
        if v1:
            await _reply(send, await self.v1(key, path[len("/v1/") :], body))
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.mcp_app({**scope, KEY_SCOPE: key}, replay, send)

    async def _body(self, headers: dict[str, str], receive: Receive) -> bytes | None:
        """The whole request body, refused (413) as soon as it is known to be over the limit."""
        limit = self.agents.limits.max_body
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise TooLarge(f"the request body is {declared} bytes; this server takes at most {limit}")
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"the request body is over {limit} bytes, the most this server takes")
            chunks.append(chunk)
            more = message.get("more_body", False)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def v1(self, key: Key, tool: str, raw: bytes) -> dict[str, Any]:
        try:
            args = decode(raw) if raw.strip() else {}
        except ValueError as e:
            return envelope_error("usage_error", f"the body must be a JSON object of the tool's arguments: {e}")
        try:
            return envelope_ok(await self.agents.run(key, tool, args))
        except Exception as e:  # noqa: BLE001
            return error_of(e)

    def healthz(self) -> dict[str, Any]:
        try:
            self.agents.keys.refresh()
        except Exception as e:  # noqa: BLE001
            return error_of(e)
        w = self.agents.writes
        # how many write calls, in how many commits (group commit: docs/agents.md)
        writes = {"calls": w.calls if w else 0, "commits": w.groups if w else 0}
        return envelope_ok({"status": "ok", "store": self.agents.backend.url_for_display, "writes": writes})


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}


def build_app(agents: Agents, *, host: str = "127.0.0.1") -> App:
    """The ASGI app `serve` runs."""

    def key_of(ctx: Any) -> Key:
        request = getattr(ctx, "request", None)
        key = request.scope.get(KEY_SCOPE) if request is not None else None
        if key is None:  # only App lets a request through to /mcp, and it always sets the key
            raise RecallError("the request carries no checked key", code="unauthorized")
        return key

    async def run_tool(ctx: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return await agents.run(key_of(ctx), name, args)

    server = build_server(run_tool)
    mcp_app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=agents.limits.max_body,
        host=host,
    )
    return App(mcp_app, agents)
