"""The store's schema, defined once for both databases as SQLModel table models, and the
upgrades from every earlier version (docs/storage.md, "Schema and versions").

Imported only to create or upgrade a store: SQLAlchemy and SQLModel cost start-up time,
and the hot paths (sqlite/store.py, postgres/store.py) run plain SQL through sqlite3 and
psycopg. Opening a store at the current version never imports this module.

What is not a table column lives with its backend and is attached here as DDL run after
the tables are created, for that dialect only: indexes the bulk import drops and rebuilds
(``SECONDARY_INDEXES``), the append-only triggers, PostgreSQL's privileges. SQLite's
per-collection search tables (FTS5 is a virtual table SQLAlchemy cannot describe) are made
when a collection is created (sqlite/schema.py).

Columns that exist in one database only carry ``info={"only": {dialect}}`` and are left
out of the other's CREATE TABLE (``_column_for_dialect``): PostgreSQL keeps the search
text, its tsvector and the pgvector column inside ``events``; SQLite keeps them in the
collection's own tables.
"""

from __future__ import annotations

import functools

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    DDL,
    BigInteger,
    Boolean,
    CheckConstraint,
    Computed,
    ForeignKeyConstraint,
    Identity,
    Index,
    Integer,
    Text,
    create_mock_engine,
    event,
    text,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import registry
from sqlalchemy.schema import CreateColumn, CreateTable
from sqlmodel import Field, SQLModel

from ..embed import DIMENSIONS
from .common import SCHEMA_VERSION
from .postgres import schema as pg
from .sqlite import schema as lite

_registry = registry()  # the store's own metadata, apart from any other SQLModel user's


class _Table(SQLModel, registry=_registry):
    pass


# Types: integers are 64-bit in PostgreSQL and plain INTEGER in SQLite (where INTEGER
# PRIMARY KEY is the rowid); compared and ordered text uses byte order in PostgreSQL
# (COLLATE "C"), which is SQLite's own order.
BIGINT = BigInteger().with_variant(Integer(), "sqlite")
NAME = Text().with_variant(postgresql.TEXT(collation="C"), "postgresql")
FLAG = Boolean().with_variant(Integer(), "sqlite")
BODY = Text().with_variant(postgresql.JSON(), "postgresql")
PG_ONLY = {"info": {"only": {"postgresql"}}}


class SchemaMeta(_Table, table=True):
    """One row: the schema version of the store."""

    __tablename__ = "schema_meta"
    __table_args__ = (CheckConstraint("id = 1"),)
    id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    version: int


class Collection(_Table, table=True):
    """A collection and its event count (kept in the append transaction)."""

    __tablename__ = "collections"
    id: int = Field(primary_key=True, sa_column_args=[Identity(always=True)])
    name: str = Field(sa_type=NAME, unique=True)
    events: int = Field(sa_type=BIGINT, sa_column_kwargs={"server_default": text("0")})


class EventRow(_Table, table=True):
    """Every collection's log. ``position`` only grows and is never reused (AUTOINCREMENT
    in SQLite; an identity with CACHE 1 in PostgreSQL, so values are drawn in order)."""

    __tablename__ = "events"
    __table_args__ = (
        # duplicate detection and events_by_id; never dropped by a bulk import
        Index("events_id", "collection_id", "id", unique=True),
        # position order within a collection: all_events, touched_since, position()
        Index("events_position", "collection_id", "position"),
        CheckConstraint("retraction IN (0, 1)").ddl_if(dialect="sqlite"),
        {"sqlite_autoincrement": True},
    )
    position: int = Field(primary_key=True, sa_type=BIGINT, sa_column_args=[Identity(always=True, cache=1)])
    collection_id: int = Field(foreign_key="collections.id")
    id: str = Field(sa_type=NAME)
    subject: str = Field(sa_type=NAME)
    predicate: str = Field(sa_type=NAME)
    value_key: str = Field(sa_type=NAME)
    retraction: bool = Field(sa_type=FLAG)
    observed_at: int = Field(sa_type=BIGINT)  # nanoseconds
    body: str = Field(sa_type=BODY)  # the event's compact JSON form
    # PostgreSQL only: the words keyword search sees, their tsvector, the embedding
    terms: str = Field(sa_type=Text, sa_column_kwargs=PG_ONLY)
    tsv: str | None = Field(
        default=None,
        sa_type=postgresql.TSVECTOR,
        sa_column_args=[Computed("to_tsvector('pg_catalog.simple'::regconfig, terms)", persisted=True)],
        sa_column_kwargs=PG_ONLY,
    )
    vec: list[float] = Field(sa_type=Vector(DIMENSIONS), sa_column_kwargs=PG_ONLY)
    # when the store appended it (nanoseconds; docs/storage.md, "Recorded instants"). The
    # store always writes it; the default exists because SQLite adds a NOT NULL column to
    # a table only with one (the version 3 upgrade), and a new store has the same column.
    recorded_at: int = Field(sa_type=BIGINT, sa_column_kwargs={"server_default": text("0")})


class EventReplace(_Table, table=True):
    """One row per (event, predicate named in its ``replaces``): replacing_events by index."""

    __tablename__ = "event_replaces"
    __table_args__ = (
        ForeignKeyConstraint(["collection_id", "event_id"], ["events.collection_id", "events.id"]),
        {"sqlite_with_rowid": False},
    )
    collection_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    subject: str = Field(primary_key=True, sa_type=NAME)
    predicate: str = Field(primary_key=True, sa_type=NAME)
    event_id: str = Field(primary_key=True, sa_type=NAME)


class SubjectCount(_Table, table=True):
    """Events per subject of a collection, kept in the append transaction (docs/storage.md,
    "Subject counts"): the console lists the subjects with the most events without
    counting the whole log. SQLite adds to it in the insert's code, PostgreSQL by a
    statement trigger (so an agent role needs no UPDATE on it)."""

    __tablename__ = "subject_counts"
    __table_args__ = ({"sqlite_with_rowid": False},)
    collection_id: int = Field(
        primary_key=True, foreign_key="collections.id", sa_column_kwargs={"autoincrement": False}
    )
    subject: str = Field(primary_key=True, sa_type=NAME)
    events: int = Field(sa_type=BIGINT)


# registered for every CREATE TABLE SQLAlchemy compiles in the process, but it changes
# only columns that carry info["only"]
@compiles(CreateColumn)
def _column_for_dialect(element, compiler, **kw):
    only = element.element.info.get("only")
    if only and compiler.dialect.name not in only:
        return None  # SQLAlchemy leaves the column out of CREATE TABLE
    return compiler.visit_create_column(element, **kw)


def _after(target, statements, dialect: str) -> None:
    for statement in statements:
        event.listen(target, "after_create", DDL(statement).execute_if(dialect=dialect))


_events = _registry.metadata.tables["events"]
_replaces = _registry.metadata.tables["event_replaces"]
_subject_counts = _registry.metadata.tables["subject_counts"]
# the version row starts at 0; the backend records the version in the same transaction
event.listen(
    _registry.metadata.tables["schema_meta"], "after_create", DDL("INSERT INTO schema_meta (id, version) VALUES (1, 0)")
)
_after(_events, lite.SECONDARY_INDEXES.values(), "sqlite")
_after(_events, pg.SECONDARY_INDEXES.values(), "postgresql")
_after(_registry.metadata, lite.TRIGGERS, "sqlite")
_after(_registry.metadata, pg.TRIGGERS, "postgresql")
_after(_registry.metadata, pg.SUBJECT_COUNT_TRIGGER, "postgresql")


@functools.cache
def _create_statements(dialect: str) -> tuple[str, ...]:
    return tuple(_compiled(dialect, lambda engine: _registry.metadata.create_all(engine, checkfirst=False)))


def create_statements(dialect: str) -> list[str]:
    """The DDL that builds the current schema in an empty database (``dialect`` is
    "sqlite" or "postgresql"), in order, as text for the backend's own connection."""
    return list(_create_statements(dialect))


def _compiled(dialect: str, build) -> list[str]:
    out: list[str] = []
    url = {"sqlite": "sqlite://", "postgresql": "postgresql+psycopg://"}[dialect]

    def collect(element, *args, **kw) -> None:
        # the attached DDL is plain SQL, kept as written (compiling it would read its %
        # signs, plpgsql's RAISE placeholders, as format markers)
        out.append(element.statement if isinstance(element, DDL) else str(element.compile(dialect=engine.dialect)))

    engine = create_mock_engine(url, collect)
    build(engine)
    return [s.strip() for s in out]


def _v1_to_v2(dialect: str) -> list[str]:
    """Version 2: ``event_replaces`` names the replacing event by id in both databases
    (SQLite named it by position), and PostgreSQL's ``replaces`` takes that name."""
    if dialect == "sqlite":
        return [
            "DROP TRIGGER event_replaces_no_update",
            "DROP TRIGGER event_replaces_no_delete",
            "ALTER TABLE event_replaces RENAME TO event_replaces_v1",
            str(CreateTable(_replaces).compile(dialect=sqlite.dialect())).strip(),
            *(statement for statement in lite.TRIGGERS if " ON event_replaces " in statement),
            "INSERT INTO event_replaces (collection_id, subject, predicate, event_id) "
            "SELECT r.collection_id, r.subject, r.predicate, e.id FROM event_replaces_v1 r "
            "JOIN events e ON e.position = r.position",
            "DROP TABLE event_replaces_v1",  # an implicit delete: no trigger fires
        ]
    return [
        "ALTER TABLE recall.replaces RENAME TO event_replaces",
        # its constraints take the names PostgreSQL gives a new table (primary key, foreign
        # key and, from PostgreSQL 18, the named NOT NULL constraints)
        """DO $$
        DECLARE c record;
        BEGIN
            FOR c IN SELECT conname FROM pg_catalog.pg_constraint
                     WHERE conrelid = 'recall.event_replaces'::regclass AND conname LIKE 'replaces\\_%' LOOP
                EXECUTE format('ALTER TABLE recall.event_replaces RENAME CONSTRAINT %I TO %I',
                               c.conname, 'event_' || c.conname);
            END LOOP;
        END
        $$""",
        "ALTER TRIGGER replaces_append_only ON recall.event_replaces RENAME TO event_replaces_append_only",
        "ALTER TRIGGER replaces_no_truncate ON recall.event_replaces RENAME TO event_replaces_no_truncate",
    ]


def _v2_to_v3(dialect: str, now: int) -> list[str]:
    """Version 3: ``events.recorded_at``, the instant the store appended the event. When
    older events were appended is not known; each gets the latest statement instant of its
    collection's log up to it (a statement is never appended before the instant it says it
    was made, nor before the events ahead of it in the log), never later than the upgrade
    itself (``now``): the earliest instant the log allows, growing with positions
    (docs/storage.md, "Recorded instants")."""
    now = int(now)  # an integer from the clock, never user text
    fill = (
        "SET recorded_at = {least}(r.upto, {now}) FROM (SELECT position, MAX(observed_at) OVER "
        "(PARTITION BY collection_id ORDER BY position) AS upto FROM {events}) AS r WHERE {alias}.position = r.position"
    )
    if dialect == "sqlite":
        no_update = next(s for s in lite.TRIGGERS if s.startswith("CREATE TRIGGER events_no_update "))
        return [
            "DROP TRIGGER events_no_update",
            "ALTER TABLE events ADD COLUMN recorded_at INTEGER NOT NULL DEFAULT 0",
            "UPDATE events " + fill.format(least="MIN", now=now, events="events", alias="events"),
            no_update,
        ]
    return [
        "ALTER TABLE recall.events ADD COLUMN recorded_at BIGINT DEFAULT 0 NOT NULL",
        # the one UPDATE the log ever takes: the trigger and the revoked privilege refuse
        # it otherwise, and both are back before the transaction commits
        "ALTER TABLE recall.events DISABLE TRIGGER events_append_only",
        "GRANT UPDATE ON recall.events TO CURRENT_USER",
        "UPDATE recall.events AS e " + fill.format(least="LEAST", now=now, events="recall.events", alias="e"),
        "REVOKE UPDATE ON recall.events FROM CURRENT_USER",
        "ALTER TABLE recall.events ENABLE TRIGGER events_append_only",
    ]


def _v3_to_v4(dialect: str) -> list[str]:
    """Version 4: ``subject_counts``, the events of each subject of a collection, counted
    once from the log here and kept in every append's transaction from then on."""
    fill = (
        "INSERT INTO {t}subject_counts (collection_id, subject, events) "
        "SELECT collection_id, subject, COUNT(*) FROM {t}events GROUP BY collection_id, subject"
    )
    if dialect == "sqlite":
        return [str(CreateTable(_subject_counts).compile(dialect=sqlite.dialect())).strip(), fill.format(t="")]
    return [
        str(CreateTable(_subject_counts).compile(dialect=postgresql.dialect())).strip(),
        fill.format(t="recall."),
        *pg.SUBJECT_COUNT_TRIGGER,
    ]


# UPGRADES[v] takes a store from version v to v + 1 (version 0 is an empty database,
# built at the current version at once by create_statements); each takes the dialect
# and the instant of the upgrade.
UPGRADES = {1: lambda dialect, now: _v1_to_v2(dialect), 2: _v2_to_v3, 3: lambda dialect, now: _v3_to_v4(dialect)}
assert sorted(UPGRADES) == list(range(1, SCHEMA_VERSION)), "one upgrade per earlier version"


def upgrade_statements(version: int, dialect: str, now: int) -> list[str]:
    """The DDL that takes a store at ``version`` (0: empty) to ``SCHEMA_VERSION``, run
    at the instant ``now``."""
    if version == 0:
        return create_statements(dialect)
    out: list[str] = []
    for v in range(version, SCHEMA_VERSION):
        out += UPGRADES[v](dialect, now)
    return out
