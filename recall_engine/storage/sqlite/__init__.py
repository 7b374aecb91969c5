"""The SQLite backend: backend.py (the file, connections, schema upgrades), store.py (one
collection: the Store contract), search.py (keyword and vector search), vectors.py (the
in-memory vector index), schema.py (the per-collection tables), sql.py (SQL helpers)."""

from .backend import SQLiteBackend, open_sqlite

__all__ = ["SQLiteBackend", "open_sqlite"]
