"""The SQLite schema, versioned, and the migrations that build it.

``MIGRATIONS[i]`` moves a store from version ``i`` to ``i + 1``. They run in
order, inside one ``BEGIN IMMEDIATE`` transaction, when a store is opened, so
a store written by this release opens in the next one. A store whose version
is newer than ``SCHEMA_VERSION`` is refused (see backend.py).

Layout (version 1):

- ``schema_meta(id = 1, version)``: one row.
- ``collections(id, name UNIQUE, events)``: ``events`` counts the collection's
  events; it is maintained in the append transaction.
- ``events``: every collection's log. ``position`` is the INTEGER PRIMARY KEY
  (AUTOINCREMENT, so a position is never reused), then collection_id, the event
  ``id`` (unique per collection), subject, predicate, value_key, retraction,
  observed_at (integer ns) and ``body`` (the event's compact JSON form).
- ``event_replaces``: one row per (event, predicate named in its ``replaces``).
- Per collection (``collection_tables``, named by the collection's integer id,
  never by its name): ``event_text_<id>``, a contentless FTS5 index over
  ``search_text(event)`` whose rowid is the event's position, and
  ``event_vectors_<id>(position, observed_at, vector)``: the embedding of the
  event's sentence (256 float32 values, stored sparse: see vectors.py).
  Kept apart from ``events`` so that a collection's vectors load with one
  contiguous scan and event rows stay small.
- Triggers make UPDATE and DELETE of ``events``, ``event_replaces`` and the
  vector tables fail with ``events are append-only``. (SQLite allows no trigger
  on a virtual table, so the FTS index is protected only by the code never
  deleting.)
"""

from __future__ import annotations

SCHEMA_VERSION = 1

APPEND_ONLY = "events are append-only"

_V1 = [
    """CREATE TABLE schema_meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        version INTEGER NOT NULL
    )""",
    """CREATE TABLE collections (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        events INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        collection_id INTEGER NOT NULL REFERENCES collections(id),
        id TEXT NOT NULL,
        subject TEXT NOT NULL,
        predicate TEXT NOT NULL,
        value_key TEXT NOT NULL,
        retraction INTEGER NOT NULL CHECK (retraction IN (0, 1)),
        observed_at INTEGER NOT NULL,
        body TEXT NOT NULL
    )""",
    # duplicate detection and events_by_id
    "CREATE UNIQUE INDEX events_id ON events (collection_id, id)",
    # position order within a collection: all_events, touched_since, position()
    "CREATE INDEX events_position ON events (collection_id, position)",
    # pair_events, subject_events, pairs(), subjects(), registry_events
    "CREATE INDEX events_pair ON events (collection_id, subject, predicate)",
    # predicate_events (in (subject, position) order without a sort), predicate_counts
    "CREATE INDEX events_predicate ON events (collection_id, predicate, subject)",
    # value_events; covering for shared_values (grouped in index order, no sort)
    "CREATE INDEX events_value ON events (collection_id, subject, value_key, predicate, retraction)",
    """CREATE TABLE event_replaces (
        collection_id INTEGER NOT NULL,
        subject TEXT NOT NULL,
        predicate TEXT NOT NULL,
        position INTEGER NOT NULL REFERENCES events(position),
        PRIMARY KEY (collection_id, subject, predicate, position)
    ) WITHOUT ROWID""",
    f"""CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
    f"""CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
    f"""CREATE TRIGGER event_replaces_no_update BEFORE UPDATE ON event_replaces
        BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
    f"""CREATE TRIGGER event_replaces_no_delete BEFORE DELETE ON event_replaces
        BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
    f"""CREATE TRIGGER collections_no_delete BEFORE DELETE ON collections
        BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
    "INSERT INTO schema_meta (id, version) VALUES (1, 0)",
]

# Secondary indexes of the current version. A bulk import into an empty store drops
# them and builds them once at the end (a sort is much faster than row-by-row
# upkeep); opening a store rebuilds any that a crash left missing.
SECONDARY_INDEXES = {
    "events_pair": "CREATE INDEX IF NOT EXISTS events_pair ON events (collection_id, subject, predicate)",
    "events_predicate": "CREATE INDEX IF NOT EXISTS events_predicate ON events (collection_id, predicate, subject)",
    "events_value": (
        "CREATE INDEX IF NOT EXISTS events_value ON events "
        "(collection_id, subject, value_key, predicate, retraction)"
    ),
}


def collection_tables(cid: int) -> list[str]:
    """The tables of one collection (version 1), created with the collection."""
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


# MIGRATIONS[i] takes a store from version i to version i + 1.
MIGRATIONS: list[list[str]] = [_V1]

assert len(MIGRATIONS) == SCHEMA_VERSION
