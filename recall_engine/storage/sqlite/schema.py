"""SQLite's own DDL: what ../models.py attaches to the shared table models for SQLite,
and the tables each collection gets when it is created.

The shared tables (``schema_meta``, ``collections``, ``events``, ``event_replaces``)
are defined once in ../models.py; docs/storage.md describes the layout. Here:

- ``SECONDARY_INDEXES``: the read indexes, which a bulk import into an empty store
  drops and rebuilds (plain SQL: the backend rebuilds missing ones on every open
  without importing SQLAlchemy).
- ``TRIGGERS``: UPDATE and DELETE of ``events`` and ``event_replaces``, and DELETE of
  ``collections``, fail with ``events are append-only``; so does an insert that would
  replace a stored event or collection, renaming a collection or lowering its count,
  and removing or lowering the schema version (``ADDED_TRIGGERS``).
- ``check_guards(conn, cids)``: what opening for writing checks (every trigger there,
  as written here); ``add_guards`` gives a store from before ``ADDED_TRIGGERS`` them.
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

import sqlite3

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

# Guards added after version 2 (docs/storage.md, "Append-only in the database"). The
# internal delete of INSERT OR REPLACE fires no DELETE trigger, so an insert that
# would collide with a stored row is refused before it happens; a collection keeps its
# id and name and its count only grows; the version row is never removed or lowered.
# A store from before them gets them at its first open for writing.
ADDED_TRIGGERS = [
    "CREATE TRIGGER events_no_replace BEFORE INSERT ON events "
    "WHEN EXISTS (SELECT 1 FROM events WHERE position = NEW.position) "
    "OR EXISTS (SELECT 1 FROM events WHERE collection_id = NEW.collection_id AND id = NEW.id) "
    f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END",
    "CREATE TRIGGER collections_no_replace BEFORE INSERT ON collections "
    "WHEN EXISTS (SELECT 1 FROM collections WHERE id = NEW.id OR name = NEW.name) "
    f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END",
    "CREATE TRIGGER collections_no_rename BEFORE UPDATE ON collections "
    "WHEN NEW.id IS NOT OLD.id OR NEW.name IS NOT OLD.name OR NEW.events < OLD.events "
    f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END",
    f"CREATE TRIGGER schema_meta_no_delete BEFORE DELETE ON schema_meta BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END",
    "CREATE TRIGGER schema_meta_no_insert BEFORE INSERT ON schema_meta WHEN EXISTS (SELECT 1 FROM schema_meta) "
    f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END",
    "CREATE TRIGGER schema_meta_no_downgrade BEFORE UPDATE ON schema_meta "
    "WHEN NEW.id IS NOT OLD.id OR NEW.version < OLD.version "
    f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END",
]
TRIGGERS += ADDED_TRIGGERS


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


def _trigger_name(statement: str) -> str:
    return statement.split()[2] if statement.split()[2] != "IF" else statement.split()[5]


def _normal(statement: str) -> str:
    return " ".join(statement.replace("IF NOT EXISTS ", "").split())


def check_guards(conn: sqlite3.Connection, cids: list[int]) -> tuple[list[str], bool]:
    """The append-only triggers that are missing or not as written here (empty: intact),
    and whether they are exactly ``ADDED_TRIGGERS`` of a store from before them (none of
    them there, all the others intact), which ``add_guards`` installs. Reads only."""
    expected = {_trigger_name(s): s for s in TRIGGERS}
    for cid in cids:
        expected.update(
            (_trigger_name(s), s) for s in collection_tables(cid) if s.lstrip().startswith("CREATE TRIGGER")
        )
    present = {
        n: " ".join((sql or "").split())
        for n, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    }
    added = {_trigger_name(s) for s in ADDED_TRIGGERS}
    wrong = [n for n, s in expected.items() if present.get(n) != _normal(s)]
    return wrong, bool(wrong) and set(wrong) == added and not added & present.keys()


def add_guards(conn: sqlite3.Connection) -> None:
    """Install ``ADDED_TRIGGERS`` (inside the caller's write transaction)."""
    for statement in ADDED_TRIGGERS:
        conn.execute(statement)
