"""One open store for one operator: backend, collection store, and Memory.

The CLI opens a ``Session`` from its global options; the TUI opens one the same
way, so both read and write through identical objects. Nothing here decides
anything about memory: it only wires the engine together.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recall_engine.errors import InvalidInput, NotFound
from recall_engine.memory import Memory
from recall_engine.storage.base import Backend, Store, check_collection

from .defaults import DEFAULT_COLLECTION
from .display import visible

FALLBACK_OPERATOR = "operator"
MAX_OPERATOR = 64  # characters of an operator name (recorded on every registry event)


def default_operator() -> str:
    """The login name of whoever runs the console, or a neutral name when there is none."""
    try:
        name = getpass.getuser()
    except Exception:  # no login name (containers, odd platforms): KeyError, OSError, ImportError
        name = ""
    name = (name or "").strip()
    return name or FALLBACK_OPERATOR


def display_url(url: str | None) -> str:
    """A store URL safe to print (never shows a password)."""
    try:
        from recall_engine.storage.urls import display_url as _display
    except ImportError:  # pragma: no cover - urls.py ships with the engine
        return "(default)" if not url else str(url)
    return _display(url)


RESERVED_COLLECTIONS = "recall."  # recall.keys holds the API keys (agents/keys.py)


def check_user_collection(name: str) -> str:
    """A collection an ordinary command may read and write: the engine's own (the API key
    records) are reached only through the commands that own them (`key`), never by
    --collection, so no remember, import or export can read or forge a key."""
    check_collection(name)
    if name.casefold().startswith(RESERVED_COLLECTIONS):
        raise InvalidInput(
            f"collection {name!r} is reserved: names starting with {RESERVED_COLLECTIONS!r} belong to the "
            "engine (recall.keys holds the API keys; manage them with `recall-admin key`)"
        )
    return name


def check_operator(name: str) -> str:
    """An operator name given explicitly (--operator, RECALL_OPERATOR, the TUI): a blank one is
    refused rather than silently replaced, and its length and characters are bounded, since
    it is recorded on registry events and shown to other operators."""
    op = name.strip() if isinstance(name, str) else ""
    if not op:
        raise InvalidInput("--operator must not be blank (leave it out to use the login name)")
    if len(op) > MAX_OPERATOR:
        raise InvalidInput(f"--operator is at most {MAX_OPERATOR} characters, got {len(op)}")
    if not all(c.isprintable() for c in op):
        # visible() escapes the characters once; a repr on top would double every backslash.
        raise InvalidInput(f"--operator holds a control or invisible character: '{visible(op)}'")
    return op


@dataclass
class Session:
    backend: Backend
    store: Store
    memory: Memory
    operator: str
    collection: str
    display_url: str
    read_only: bool
    store_url: str | None = None

    @classmethod
    def open(
        cls,
        store_url: str | None = None,
        collection: str = DEFAULT_COLLECTION,
        operator: str | None = None,
        read_only: bool = False,
        *,
        create: bool = True,
        now: Callable[[], int] | None = None,
        match_threshold: float | None = None,
    ) -> Session:
        """Open the backend named by ``store_url`` (None: the default SQLite file) and
        one collection of it. ``create`` makes the store file and the collection when
        they do not exist yet (never on a read-only store); without it a missing one is
        ``NotFound`` and nothing is written (docs/governance.md, "Reads never write")."""
        from recall_engine.storage import open_backend

        check_user_collection(collection)
        op = default_operator() if operator is None else check_operator(operator)
        if not create:
            require_store_file(store_url)
        elif read_only:  # a write refused below, but on a missing file: no store to refuse it from
            require_store_file(store_url, "--read-only creates nothing; run it without --read-only to create it")
        backend = open_backend(store_url, read_only=read_only)
        try:
            store = backend.store(collection, create=create and not read_only)
            kwargs: dict[str, Any] = {}
            if now is not None:
                kwargs["now"] = now
            if match_threshold is not None:
                kwargs["match_threshold"] = match_threshold
            memory = Memory(store, **kwargs)
        except BaseException:
            backend.close()
            raise
        shown = getattr(backend, "url_for_display", "") or display_url(store_url)
        return cls(
            backend=backend,
            store=store,
            memory=memory,
            operator=op,
            collection=collection,
            display_url=shown,
            read_only=bool(read_only or getattr(backend, "read_only", False)),
            store_url=store_url,
        )

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_existing(store_url: str | None) -> Backend:
    """An existing store opened read-only, every collection of it (``verify --all``)."""
    from recall_engine.storage import open_backend

    require_store_file(store_url)
    return open_backend(store_url, read_only=True)


def require_store_file(
    store_url: str | None,
    what_to_do: str = "nothing to read; `recall-admin init` (or demo, remember, import) creates it",
) -> None:
    """A read of a SQLite store file that does not exist is refused before SQLite creates it."""
    from recall_engine.storage.urls import parse_store_url

    where = parse_store_url(store_url)
    if where.kind == "sqlite" and not os.path.exists(where.target):
        raise NotFound(f"no store at {display_url(store_url or where.target)} (no such file): {what_to_do}")


def env_default(name: str, default: str | None = None) -> str | None:
    """An environment variable's value, or ``default`` when it is unset or blank."""
    value = os.environ.get(name, "")
    return value if value.strip() else default
