"""The PostgreSQL + pgvector backend: backend.py (connections, pool, schema upgrades,
privileges), store.py (one collection: the Store contract), schema.py (PostgreSQL's own
DDL and lock keys). Nothing is imported here: psycopg loads only when backend.py does,
that is when a PostgreSQL URL is opened."""
