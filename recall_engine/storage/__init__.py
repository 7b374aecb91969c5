"""Storage adapters behind one contract (see base.py and docs/storage.md).

``open_backend(url)`` picks the backend from the URL:

- ``None`` or ``""``: the default SQLite file ``recall.db`` in the user data
  folder (``platformdirs.user_data_dir("recall-admin")``, created if missing);
- ``sqlite:///relative/path``, ``sqlite:////absolute/path`` or a plain file path: SQLite;
- ``postgresql://...`` or ``postgres://...``: PostgreSQL (imported only when asked for).

Anything else is refused with the accepted forms. URLs in messages go through
``display_url``, which hides passwords.
"""

from __future__ import annotations

from ..errors import InvalidInput
from .base import MAX_PAIR_EVENTS, Backend, Hit, Store, Touch, check_collection
from .urls import ACCEPTED_FORMS, display_url, parse_store_url

__all__ = [
    "ACCEPTED_FORMS",
    "MAX_PAIR_EVENTS",
    "Backend",
    "Hit",
    "Store",
    "Touch",
    "check_collection",
    "display_url",
    "open_backend",
]


def open_backend(url: str | None, *, read_only: bool = False) -> Backend:
    """Open the store a URL names (see the module docstring for the accepted forms)."""
    where = parse_store_url(url)
    if where.kind == "sqlite":
        from .sqlite.backend import SQLiteBackend

        return SQLiteBackend(where.target, read_only=read_only)
    if where.kind == "postgres":
        from .postgres.backend import PostgresBackend

        return PostgresBackend(where.target, read_only=read_only)
    raise InvalidInput(f"unsupported store URL {display_url(url)!r}; accepted: {ACCEPTED_FORMS}")  # pragma: no cover
