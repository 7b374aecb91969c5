"""The PostgreSQL schema, versioned, and the migrations that build it.

Everything lives in the PostgreSQL schema ``recall`` (so a store can share a
database with other applications, and access is granted per schema); the
pgvector extension lives wherever it was installed, and its type and operators
are always written qualified by that schema.

``migrations(vector_schema)[i]`` moves a database from version ``i`` to
``i + 1``. They run in order, in one transaction that also creates the
extension, under an advisory lock so that two processes opening a new
database at once do not race. A database whose version is newer than
``SCHEMA_VERSION`` is refused (see backend.py).

Layout (version 1):

- ``recall.schema_meta(id = 1, version)``: one row.
- ``recall.collections(id, name UNIQUE, events)``: ``events`` counts the
  collection's events; it is maintained in the append transaction.
- ``recall.events``: every collection's log. ``position`` is a bigint identity
  (cache 1, so values only grow in the order they are drawn), then
  collection_id, the event ``id`` (unique per collection), subject, predicate,
  value_key, retraction, observed_at (bigint nanoseconds), ``body`` (the event's
  compact JSON form, ``json``), ``terms`` (the tokens of ``search_text(event)``,
  lower-cased, diacritics removed, space separated), ``tsv`` (generated:
  ``to_tsvector('simple', terms)``) and ``vec`` (``vector(256)``, the lexical
  embedding of the event's sentence).
- ``recall.replaces``: one row per (event, predicate named in its ``replaces``).
- Text columns that are compared or ordered use ``COLLATE "C"``: byte order,
  the same as SQLite, whatever the database's default collation.
- A trigger refuses UPDATE, DELETE and TRUNCATE of ``events`` and ``replaces``
  (message ``events are append-only``), for every role, the owner included;
  those privileges are also revoked from PUBLIC and from the creating role.
"""

from __future__ import annotations

SCHEMA_VERSION = 1
SCHEMA = "recall"
APPEND_ONLY = "events are append-only"
# advisory lock namespace (first key of pg_advisory_xact_lock(int, int)): "RCLL"
LOCK_CLASS = 0x52434C4C
SCHEMA_LOCK = 0  # second key while migrating; collection ids start at 1


# Secondary indexes of the current version (the unique id index is not one of them:
# duplicate detection needs it). A bulk import into a database that holds no event
# yet drops them and builds them once at the end (a sort is much faster than upkeep
# row by row); opening a store with write access rebuilds any a crash left missing.
SECONDARY_INDEXES = {
    # position order within a collection: all_events, touched_since, position()
    "events_position": "CREATE INDEX IF NOT EXISTS events_position ON recall.events (collection_id, position)",
    # pair_events, subject_events, pairs(), subjects(), registry_events
    "events_pair": (
        "CREATE INDEX IF NOT EXISTS events_pair ON recall.events (collection_id, subject, predicate, position)"
    ),
    # predicate_events in (subject, position) order, predicate_counts
    "events_predicate": (
        "CREATE INDEX IF NOT EXISTS events_predicate ON recall.events (collection_id, predicate, subject, position)"
    ),
    # value_events; covering for value_predicates and shared_values
    "events_value": (
        "CREATE INDEX IF NOT EXISTS events_value ON recall.events "
        "(collection_id, subject, value_key, predicate, retraction)"
    ),
    # a time span searched first ("two weeks ago")
    "events_observed": "CREATE INDEX IF NOT EXISTS events_observed ON recall.events (collection_id, observed_at)",
    # keyword search
    "events_tsv": "CREATE INDEX IF NOT EXISTS events_tsv ON recall.events USING gin (tsv)",
}


def migrations(vector_schema: str) -> list[list[str]]:
    """The DDL, with the pgvector type qualified by ``vector_schema`` (an already
    quoted identifier)."""
    vector = f"{vector_schema}.vector"
    v1 = [
        "CREATE SCHEMA IF NOT EXISTS recall",
        """CREATE TABLE recall.schema_meta (
            id integer PRIMARY KEY CHECK (id = 1),
            version integer NOT NULL
        )""",
        "INSERT INTO recall.schema_meta (id, version) VALUES (1, 0)",
        """CREATE TABLE recall.collections (
            id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            name text COLLATE "C" NOT NULL UNIQUE,
            events bigint NOT NULL DEFAULT 0
        )""",
        f"""CREATE TABLE recall.events (
            position bigint GENERATED ALWAYS AS IDENTITY (CACHE 1) PRIMARY KEY,
            collection_id integer NOT NULL REFERENCES recall.collections (id),
            id text COLLATE "C" NOT NULL,
            subject text COLLATE "C" NOT NULL,
            predicate text COLLATE "C" NOT NULL,
            value_key text COLLATE "C" NOT NULL,
            retraction boolean NOT NULL,
            observed_at bigint NOT NULL,
            body json NOT NULL,
            terms text NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('pg_catalog.simple'::regconfig, terms)) STORED,
            vec {vector}(256) NOT NULL
        )""",
        # duplicate detection and events_by_id
        "CREATE UNIQUE INDEX events_id ON recall.events (collection_id, id)",
        *SECONDARY_INDEXES.values(),
        """CREATE TABLE recall.replaces (
            collection_id integer NOT NULL,
            subject text COLLATE "C" NOT NULL,
            predicate text COLLATE "C" NOT NULL,
            event_id text COLLATE "C" NOT NULL,
            PRIMARY KEY (collection_id, subject, predicate, event_id),
            FOREIGN KEY (collection_id, event_id) REFERENCES recall.events (collection_id, id)
        )""",
        f"""CREATE FUNCTION recall.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_LEVEL = 'ROW' AND TG_TABLE_NAME = 'events' THEN
                RAISE EXCEPTION '{APPEND_ONLY}: % of event % in recall.events is refused', TG_OP, OLD.id
                    USING HINT = 'events are never changed; append a retraction instead';
            END IF;
            RAISE EXCEPTION '{APPEND_ONLY}: % on recall.% is refused', TG_OP, TG_TABLE_NAME
                USING HINT = 'events are never changed; append a retraction instead';
        END
        $$""",
        """CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON recall.events
            FOR EACH ROW EXECUTE FUNCTION recall.refuse_change()""",
        """CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON recall.events
            FOR EACH STATEMENT EXECUTE FUNCTION recall.refuse_change()""",
        """CREATE TRIGGER replaces_append_only BEFORE UPDATE OR DELETE ON recall.replaces
            FOR EACH ROW EXECUTE FUNCTION recall.refuse_change()""",
        """CREATE TRIGGER replaces_no_truncate BEFORE TRUNCATE ON recall.replaces
            FOR EACH STATEMENT EXECUTE FUNCTION recall.refuse_change()""",
        """CREATE TRIGGER collections_no_delete BEFORE DELETE ON recall.collections
            FOR EACH ROW EXECUTE FUNCTION recall.refuse_change()""",
        """CREATE TRIGGER collections_no_truncate BEFORE TRUNCATE ON recall.collections
            FOR EACH STATEMENT EXECUTE FUNCTION recall.refuse_change()""",
        "REVOKE UPDATE, DELETE, TRUNCATE ON recall.events, recall.replaces FROM PUBLIC, CURRENT_USER",
        "REVOKE DELETE, TRUNCATE ON recall.collections FROM PUBLIC, CURRENT_USER",
    ]
    return [v1]
