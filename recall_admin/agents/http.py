"""`serve`: the tools for many agents over HTTP, on the MCP SDK's own stack (Starlette, uvicorn).

Routes: ``POST /mcp`` (MCP streamable HTTP, stateless, JSON answers), ``POST /v1/<tool>``
(the tool's arguments as the JSON body), ``GET /healthz``. One gate in front of /mcp and
/v1 reads the body up to the size limit (413), checks the bearer key (401) and the key's
request rate (429), each refused with the CLI's JSON error envelope. The key decides the
collection; nothing in a request names one. Engine work runs on the event loop, one call
at a time per process; the server keeps no state a second
server would need (keys are re-read from the store), so several servers can share one
PostgreSQL. See docs/agents.md.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from recall_engine.errors import RecallError
from recall_engine.storage.base import Backend

from .keys import Key, KeyRing
from .mcp_server import build_server, dumps, envelope_error, envelope_ok, error_of
from .tools import DEFAULT_MAX_VALUE_BYTES, TooLarge, Toolbox, agent_memory

DEFAULT_MAX_BODY = 1 << 20
DEFAULT_RATE = 100.0  # requests per second per key; a burst of as many is allowed

STATUS = {
    "unauthorized": 401,
    "read_only": 403,
    "not_found": 404,
    "too_large": 413,
    "rate_limited": 429,
    "internal_error": 500,
    "storage_error": 503,
}
GATED = ("/mcp", "/v1/")
KEY_SCOPE = "recall.key"


class RateLimited(RecallError):
    code = "rate_limited"


@dataclass
class Limits:
    max_body: int = DEFAULT_MAX_BODY
    max_value: int = DEFAULT_MAX_VALUE_BYTES
    rate: float = DEFAULT_RATE


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

    async def engine(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Engine work, run on the event loop's own thread, one call at a time.

        The store takes one writer at a time anyway; handing each call to a worker thread
        and back cost more than the call on a busy machine (the GIL's switch interval and
        the scheduler at every hop; benchmarks/bench_agents.py)."""
        return fn(*args)

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

    def call(self, key: Key, name: str, args: Any) -> dict[str, Any]:
        """One tool call for a key (checked by the gate for this very request)."""
        return self.toolbox(key).call(name, args)

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


# --- ASGI plumbing ----------------------------------------------------------------------


async def _respond(
    send: Callable[..., Any], status: int, doc: Any, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = dumps(doc).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def status_of(doc: dict[str, Any]) -> int:
    return 200 if doc.get("ok") else STATUS.get(doc["error"]["code"], 400)


async def _error(send: Callable[..., Any], e: BaseException) -> None:
    doc = error_of(e)
    extra = [(b"www-authenticate", b'Bearer realm="recall"')] if doc["error"]["code"] == "unauthorized" else []
    await _respond(send, status_of(doc), doc, extra)


class Gate:
    """Body size, key and rate checks in front of /mcp and /v1; the body is read once and replayed."""

    def __init__(self, app: Any, agents: Agents) -> None:
        self.app = app
        self.agents = agents

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(GATED):
            await self.app(scope, receive, send)
            return
        limit = self.agents.limits.max_body
        try:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise TooLarge(f"the request body is {declared} bytes; this server takes at most {limit}")
            chunks, size, more = [], 0, True
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise TooLarge(f"the request body is over {limit} bytes, the most this server takes")
                chunks.append(chunk)
                more = message.get("more_body", False)
            key = await self.agents.engine(self.agents.keys.authenticate, headers.get("authorization"))
            self.agents.admit(key)
        except Exception as e:  # noqa: BLE001 - every refusal is an envelope
            await _error(send, e)
            return
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        scope = {**scope, KEY_SCOPE: key}
        await self.app(scope, replay, send)


def build_app(agents: Agents, *, host: str = "127.0.0.1") -> Any:
    """The ASGI app `serve` runs: the MCP SDK's Starlette app plus /v1 and /healthz, behind the gate."""
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    def key_of(ctx: Any) -> Key:
        request = getattr(ctx, "request", None)
        key = request.scope.get(KEY_SCOPE) if request is not None else None
        if key is None:  # only the gate lets a request through, and it always sets the key
            raise RecallError("the request carries no checked key", code="unauthorized")
        return key

    async def run_tool(ctx: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return await agents.engine(agents.call, key_of(ctx), name, args)

    def reply(doc: dict[str, Any]) -> Response:
        return Response(dumps(doc), status_code=status_of(doc), media_type="application/json")

    async def v1(request: Request) -> Response:
        key = request.scope.get(KEY_SCOPE)
        if key is None:
            return reply(envelope_error("unauthorized", "missing bearer key"))
        raw = await request.body()
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError as e:
            return reply(envelope_error("usage_error", f"the body must be a JSON object of the tool's arguments: {e}"))
        try:
            data = await agents.engine(agents.call, key, request.path_params["tool"], args)
        except Exception as e:  # noqa: BLE001
            return reply(error_of(e))
        return reply(envelope_ok(data))

    async def healthz(request: Request) -> Response:
        try:
            await agents.engine(agents.keys.refresh)
        except Exception as e:  # noqa: BLE001
            return reply(error_of(e))
        return reply(envelope_ok({"status": "ok", "store": agents.backend.url_for_display}))

    server = build_server(run_tool)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=agents.limits.max_body,
        host=host,
        custom_starlette_routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/v1/{tool}", v1, methods=["POST"]),
        ],
    )
    return Gate(app, agents)
