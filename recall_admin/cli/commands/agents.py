"""Commands that let agents in: `mcp` (stdio), `serve` (HTTP) and `key create|list|revoke`.

Thin like the rest of the CLI: the services are in ``recall_admin.agents`` (docs/agents.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from ..options import CommandGroup
from ..options import state as _state
from ..render.agents import render_key, render_keys, render_revoked


@contextmanager
def _backend(state: Any, *, create: bool = True, read_only: bool = False) -> Iterator[Any]:
    """The store alone (no collection opened), for keys and `serve`. Without ``create``, a
    missing store is ``not_found`` and no file is made (`key list`, `key revoke`)."""
    from recall_engine.storage import open_backend

    from ...session import require_store_file

    if not create:
        require_store_file(state.store_url)
    backend = open_backend(state.store_url, read_only=state.read_only or read_only)
    try:
        yield backend
    finally:
        backend.close()


def _writer(operator: str) -> dict[str, str]:
    return {"agent": "mcp-stdio", "operator": operator}


def mcp(
    ctx: typer.Context,
    write: Annotated[
        bool, typer.Option("--write", help="Let the agent write (remember, forget); read-only without it.")
    ] = False,
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection", metavar="NAME", help="The collection to serve (default: the global --collection)."
        ),
    ] = None,
) -> None:
    """Serve the memory tools to one agent over MCP on stdin/stdout (read-only unless --write)."""
    import anyio

    from ...agents.mcp_server import serve_stdio
    from ...agents.tools import Toolbox, agent_memory
    from ...session import Session

    state = _state(ctx)
    if collection:
        state.collection = collection
    s = Session.open(
        state.store_url,
        state.collection,
        state.operator,
        state.read_only or not write,
        create=write and not state.read_only,
    )
    state._session = s  # closed with the invocation
    kwargs = {} if state.match_threshold is None else {"match_threshold": state.match_threshold}
    memory = agent_memory(s.store, _writer(s.operator), **kwargs)
    box = Toolbox(
        memory,
        writable=write and not s.read_only,
        read_only_reason="" if not (write and s.read_only) else "the store is open read-only; writes are refused",
    )
    state.output.message(
        f"recall MCP server on stdio: {s.display_url}, collection {s.collection}, "
        f"{'read-write' if box.writable else 'read-only'}",
        style="dim",
    )
    anyio.run(serve_stdio, box)


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8765,
    max_body: Annotated[int, typer.Option("--max-body", metavar="BYTES", help="Largest request body (413 above).")] = 1
    << 20,
    max_value: Annotated[
        int, typer.Option("--max-value", metavar="BYTES", help="Largest value in a statement (413 above).")
    ] = 16 * 1024,
    rate: Annotated[float, typer.Option("--rate", metavar="N", help="Requests a second per key (429 above).")] = 100.0,
    group_window: Annotated[
        float,
        typer.Option(
            "--group-window",
            metavar="MS",
            help="Milliseconds a write waits for others to share its commit (0: those that arrived meanwhile).",
        ),
    ] = 0.0,
) -> None:
    """Serve the memory tools to many agents over HTTP: /mcp, /v1/<tool>, /healthz; bearer keys."""
    from recall_engine.errors import InvalidInput

    from ...agents.serving import single_server_lock

    if max_body < 1 or max_value < 1 or not rate > 0:
        raise InvalidInput("--max-body, --max-value and --rate must be positive")
    if not 0 <= group_window <= 1000:
        raise InvalidInput(f"--group-window takes 0 to 1000 milliseconds, got {group_window:g}")
    if not 1 <= port <= 65535:
        raise InvalidInput(f"--port takes 1 to 65535, got {port}")
    state = _state(ctx)
    with _backend(state) as backend, single_server_lock(backend):
        _check_listen(host, port)
        import gc

        import uvicorn  # the HTTP stack loads only once this process may serve

        from ...agents.http import Agents, Limits, build_app

        agents = Agents(
            backend,
            Limits(max_body=max_body, max_value=max_value, rate=rate, group_window=group_window / 1000),
            match_threshold=state.match_threshold,
        )
        app = build_app(agents, host=host)
        state.output.err.print(
            f"recall serving {backend.url_for_display} on http://{host}:{port} (/mcp, /v1/<tool>, /healthz)",
            markup=False,
            highlight=False,
        )
        # what start-up built (the HTTP stack, the MCP SDK, the engine's caches) lives as long
        # as the server: full collections of the cycle collector need not walk it again
        gc.collect()
        gc.freeze()
        try:
            # no access log: its line is built for every request, then dropped at "warning";
            # no proxy-header middleware: nothing here reads the client's address
            uvicorn.run(
                app, host=host, port=port, log_level="warning", lifespan="on", access_log=False, proxy_headers=False
            )
        finally:
            agents.close()


def _check_listen(host: str, port: int) -> None:
    """Refuse an address the server could not listen on, as every command refuses: uvicorn
    would log the failure and end the process with status 3 and no JSON envelope. Each
    address the host names is bound once and let go (the server binds it again next)."""
    import socket

    from recall_engine.errors import InvalidInput

    try:
        for family, kind, proto, _, address in socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        ):
            with socket.socket(family, kind, proto) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(address)
    except OSError as e:
        raise InvalidInput(
            f"cannot listen on {host}:{port}: {e.strerror or e}; choose another --host or --port"
        ) from None


def key_create(
    ctx: typer.Context,
    namespace: Annotated[
        str, typer.Option("--namespace", metavar="NS", help="Whose memory: team:agent-1 (its own collection).")
    ],
    expires: Annotated[str, typer.Option("--expires", metavar="DURATION", help="168h, 30d, 1h30m, or never.")] = "720h",
    read_only: Annotated[bool, typer.Option("--read-only", help="The key may read but not write.")] = False,
    registry: Annotated[
        list[str] | None,
        typer.Option(
            "--registry", metavar="NAME_OR_PATH", help="Also declare these registries in the namespace's collection."
        ),
    ] = None,
    open_vocabulary: Annotated[bool, typer.Option("--open", help="Also open the namespace's vocabulary.")] = False,
) -> None:
    """Create a bearer key for one namespace; the key is shown once."""
    from ...agents.keys import KeyRing, collection_for, parse_duration

    state = _state(ctx)
    if state.read_only:  # refused before the namespace's registry is declared, not after
        from recall_engine.errors import ReadOnlyStore
        from recall_engine.storage.common import READ_ONLY_MESSAGE

        raise ReadOnlyStore(READ_ONLY_MESSAGE)
    expires_in = parse_duration(expires)
    collection = collection_for(namespace)
    if registry or open_vocabulary:
        from recall_engine.registry_files import load_starter

        from ...registry_sync import sync_registry
        from ...session import Session

        files = [load_starter(r) for r in registry or []]
        with Session.open(state.store_url, collection, state.operator) as ns:
            sync_registry(ns.memory, files, ns.operator, open_vocabulary=open_vocabulary)
    with _backend(state) as backend:
        key, k = KeyRing(backend).create(namespace, expires_in=expires_in, read_only=read_only)
    state.output.emit({"key": key, **k.to_json()}, render_key)


def key_list(ctx: typer.Context) -> None:
    """Every key: id, namespace, expiry, read-only, revoked (never the key itself)."""
    from ...agents.keys import KeyRing

    state = _state(ctx)
    with _backend(state, create=False, read_only=True) as backend:
        keys = KeyRing(backend).keys()
    state.output.emit({"keys": [k.to_json() for k in keys]}, render_keys)


def key_revoke(
    ctx: typer.Context, key_id: Annotated[str, typer.Argument(metavar="ID", help="The key's id (key list).")]
) -> None:
    """Revoke a key: from the next request on, every server refuses it; nothing can undo it."""
    from ...agents.keys import KeyRing

    state = _state(ctx)
    with _backend(state, create=False) as backend:
        k = KeyRing(backend).revoke(key_id)
    state.output.emit({"revoked": k.id}, render_revoked)


def register(app: typer.Typer) -> None:
    app.command(rich_help_panel="Agents")(mcp)
    app.command(rich_help_panel="Agents")(serve)
    key_app = typer.Typer(
        help="Bearer keys for `serve`: one namespace each, stored hashed.", no_args_is_help=True, cls=CommandGroup
    )
    key_app.command("create")(key_create)
    key_app.command("list")(key_list)
    key_app.command("revoke")(key_revoke)
    app.add_typer(key_app, name="key", rich_help_panel="Agents")
