"""SQLite's own DDL: what ../models.py attaches to the shared table models for SQLite,
and the tables each collection gets when it is created.

The shared tables (``schema_meta``, ``collections``, ``events``, ``event_replaces``)
are defined once in ../models.py; docs/storage.md describes the layout. Here:

- ``SECONDARY_INDEXES``: the read indexes, which a bulk import into an empty store
  drops and rebuilds (plain SQL: the backend rebuilds missing ones on every open
  without importing SQLAlchemy).
- ``TRIGGERS``: UPDATE and DELETE of ``events`` and ``event_replaces``, and DELETE of
  ``collections``, fail with ``events are append-only``.
- ``collection_tables(id)``: per collection, named by its integer id (never by its
  name): ``event_text_<id>``, a contentless FTS5 index over ``search_text(event)``
  whose rowid is the event's position; ``event_vocab_<id>``, its word frequencies;
  ``event_vectors_<id>(position, observed_at, vector)``, the embedding of the
  event's sentence (stored sparse: see vectors.py), kept apart from ``events`` so a
  collection's vectors load with one contiguous scan and event rows stay small.
  SQLite allows no trigger on a virtual table, so the FTS index is protected only by
  the code never deleting.
"""

from __future__ import annotations

from ..common import APPEND_ONLY

# Secondary indexes of the current version. A bulk import into an empty store drops
# them and builds them once at the end (a sort is much faster than row-by-row
# upkeep); opening a store rebuilds any that a crash left missing.
SECONDARY_INDEXES = {
    "events_pair": "CREATE INDEX IF NOT EXISTS events_pair ON events (collection_id, subject, predicate)",
    "events_predicate": "CREATE INDEX IF NOT EXISTS events_predicate ON events (collection_id, predicate, subject)",
    "events_value": (
        "CREATE INDEX IF NOT EXISTS events_value ON events (collection_id, subject, value_key, predicate, retraction)"
    ),
}


# UPDATE and DELETE of the log fail inside the database, whoever asks
TRIGGERS = [
    f"CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table} BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END"
    for table, ops in (
        ("events", ("UPDATE", "DELETE")),
        ("event_replaces", ("UPDATE", "DELETE")),
        ("collections", ("DELETE",)),
    )
    for op in ops
]


def collection_tables(cid: int) -> list[str]:
    """The tables of one collection (unchanged since version 1), created with the collection."""
    cid = int(cid)  # an integer from the collections table, never user text
    return [
        f"""CREATE VIRTUAL TABLE IF NOT EXISTS event_text_{cid} USING fts5(
            text, content='', tokenize='unicode61 remove_diacritics 2'
        )""",
        # document frequencies of the words, read to leave very common words out of a ranked query
        f"CREATE VIRTUAL TABLE IF NOT EXISTS event_vocab_{cid} USING fts5vocab(event_text_{cid}, 'row')",
        f"""CREATE TABLE IF NOT EXISTS event_vectors_{cid} (
            position INTEGER PRIMARY KEY REFERENCES events(position),
            observed_at INTEGER NOT NULL,
            vector BLOB NOT NULL
        )""",
        f"""CREATE TRIGGER IF NOT EXISTS event_vectors_{cid}_no_update BEFORE UPDATE ON event_vectors_{cid}
            BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
        f"""CREATE TRIGGER IF NOT EXISTS event_vectors_{cid}_no_delete BEFORE DELETE ON event_vectors_{cid}
            BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
    ]
