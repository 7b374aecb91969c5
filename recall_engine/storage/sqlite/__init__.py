"""The SQLite backend: backend.py (the file, connections, schema upgrades), store.py (one
collection: the Store contract), search.py (keyword and vector search), vectors.py (the
in-memory vector index), schema.py (SQLite's own DDL: indexes, triggers, per-collection
tables), sql.py (SQL text helpers). Nothing is imported here, so models.py can read
schema.py alone."""
