"""The PostgreSQL + pgvector backend: backend.py (connections, pool, schema upgrades,
privileges), store.py (one collection: the Store contract), schema.py (lock keys and
index names). psycopg is imported only when a PostgreSQL URL is opened."""

from .backend import PostgresBackend

__all__ = ["PostgresBackend"]
