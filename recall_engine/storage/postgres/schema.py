"""PostgreSQL's own DDL and lock keys: what ../models.py attaches to the shared table
models for PostgreSQL.

Everything lives in the PostgreSQL schema ``recall`` (so a store can share a database
with other applications, and access is granted per schema); the pgvector extension
lives wherever it was installed, and its type and operators are always written
qualified by that schema in queries. The tables are defined once in ../models.py and
created (or upgraded) in one transaction that also creates the extension, under an
advisory lock so that two processes opening a new database at once do not race; see
backend.py and docs/storage.md.

- ``SECONDARY_INDEXES``: read indexes, which a bulk import into an empty database
  drops and rebuilds (plain SQL, so the backend rebuilds missing ones on open without
  importing SQLAlchemy).
- ``TRIGGERS``: UPDATE, DELETE and TRUNCATE of ``events`` and ``event_replaces`` (and
  DELETE and TRUNCATE of ``collections``) fail with ``events are append-only``, for
  every role, the owner included; those privileges are also revoked from PUBLIC and
  from the creating role. ``ADDED_TRIGGERS`` (after version 2): a collection keeps its
  id and name and its count only grows (an agent holds UPDATE on that count), and the
  version row is never removed or lowered. Opening for writing checks that every one
  is there and enabled (``TRIGGER_NAMES``); see docs/storage.md, "Roles".
"""

from __future__ import annotations

from ..common import APPEND_ONLY

SCHEMA = "recall"
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


TRIGGERS = [
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
    """CREATE TRIGGER event_replaces_append_only BEFORE UPDATE OR DELETE ON recall.event_replaces
        FOR EACH ROW EXECUTE FUNCTION recall.refuse_change()""",
    """CREATE TRIGGER event_replaces_no_truncate BEFORE TRUNCATE ON recall.event_replaces
        FOR EACH STATEMENT EXECUTE FUNCTION recall.refuse_change()""",
    """CREATE TRIGGER collections_no_delete BEFORE DELETE ON recall.collections
        FOR EACH ROW EXECUTE FUNCTION recall.refuse_change()""",
    """CREATE TRIGGER collections_no_truncate BEFORE TRUNCATE ON recall.collections
        FOR EACH STATEMENT EXECUTE FUNCTION recall.refuse_change()""",
    "REVOKE UPDATE, DELETE, TRUNCATE ON recall.events, recall.event_replaces FROM PUBLIC, CURRENT_USER",
    "REVOKE DELETE, TRUNCATE ON recall.collections FROM PUBLIC, CURRENT_USER",
]

ADDED_TRIGGERS = [
    f"""CREATE FUNCTION recall.guard_metadata() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            -- nested: plpgsql does not short-circuit AND, and each table has its own columns
            IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'collections' THEN
                IF NEW.id = OLD.id AND NEW.name = OLD.name AND NEW.events >= OLD.events THEN
                    RETURN NEW;
                END IF;
            ELSIF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'schema_meta' THEN
                IF NEW.id = OLD.id AND NEW.version >= OLD.version THEN
                    RETURN NEW;
                END IF;
            END IF;
            RAISE EXCEPTION '{APPEND_ONLY}: % on recall.% is refused', TG_OP, TG_TABLE_NAME
                USING HINT = 'a collection keeps its name and its count only grows; the schema version only rises';
        END
        $$""",
    """CREATE TRIGGER collections_guard BEFORE UPDATE ON recall.collections
        FOR EACH ROW EXECUTE FUNCTION recall.guard_metadata()""",
    """CREATE TRIGGER schema_meta_guard BEFORE UPDATE OR DELETE ON recall.schema_meta
        FOR EACH ROW EXECUTE FUNCTION recall.guard_metadata()""",
    """CREATE TRIGGER schema_meta_no_truncate BEFORE TRUNCATE ON recall.schema_meta
        FOR EACH STATEMENT EXECUTE FUNCTION recall.guard_metadata()""",
]
TRIGGERS += ADDED_TRIGGERS


# subject_counts (schema version 4, docs/storage.md "Subject counts"): every statement that
# appends events (COPY included) adds its new events per subject in the same transaction.
# SECURITY DEFINER: it runs as the tables' owner, so an agent that may only INSERT into the
# log needs no UPDATE on the counts (docs/storage.md, "Roles").
SUBJECT_COUNT_TRIGGER = [
    """CREATE FUNCTION recall.count_subjects() RETURNS trigger LANGUAGE plpgsql
        SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            INSERT INTO recall.subject_counts AS c (collection_id, subject, events)
                SELECT collection_id, subject, count(*) FROM added GROUP BY collection_id, subject
                ON CONFLICT (collection_id, subject) DO UPDATE SET events = c.events + EXCLUDED.events;
            RETURN NULL;
        END
        $$""",
    """CREATE TRIGGER events_count_subjects AFTER INSERT ON recall.events
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION recall.count_subjects()""",
]


def _trigger_names(statements: list[str]) -> list[str]:
    return [s.split()[2] for s in statements if s.startswith("CREATE TRIGGER")]


# the triggers opening for writing expects, present and enabled
TRIGGER_NAMES = _trigger_names(TRIGGERS + SUBJECT_COUNT_TRIGGER)
ADDED_TRIGGER_NAMES = _trigger_names(ADDED_TRIGGERS)
