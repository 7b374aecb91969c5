"""One `serve` process per SQLite file; any number on PostgreSQL (docs/agents.md).

SQLite has one writer at a time and each server keeps its own per-key rate and cache,
so a second server on the same file is refused up front, by an exclusive lock on a file
next to the store (released by the operating system when the process ends, however it
ends). PostgreSQL holds all shared state, so servers there scale out.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from recall_engine.errors import StorageError


class ServerRunning(StorageError):
    code = "server_running"


@contextmanager
def single_server_lock(backend: Any) -> Iterator[None]:
    path = getattr(backend, "path", None)
    if not path or getattr(backend, "read_only", False) and not os.access(os.path.dirname(path), os.W_OK):
        yield
        return
    lock_path = f"{path}.serve.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
            raise ServerRunning(
                f"another `recall-admin serve` (pid {holder}) already serves {backend.url_for_display}; "
                "on SQLite one server process at a time (stop it, or use PostgreSQL to run several)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)
