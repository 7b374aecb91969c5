"""Stores written by an earlier release open, upgrade and answer the same.

The fixtures (tests/storage/fixtures/) were made by the release with schema version 1,
before the schema moved to storage/models.py: ``sqlite-v1.db`` is ``recall-admin demo``
into a file, ``postgres-v1.sql.gz`` a ``pg_dump --schema=recall --inserts`` of the same
demo in PostgreSQL, and the ``*-answers.json.gz`` files what those stores answered then
through the Store contract (tests/storage/answers.py).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from recall_engine import clock
from recall_engine.errors import StorageError
from recall_engine.instants import parse_instant
from recall_engine.records import Replace, make_event
from recall_engine.storage import open_backend
from recall_engine.storage.common import SCHEMA_VERSION
from tests.storage.answers import backend_answers

FIXTURES = Path(__file__).parent / "fixtures"
T0 = parse_instant("2026-06-01T09:00:00Z")


def recorded(name: str) -> dict:
    with gzip.open(FIXTURES / name, "rt", encoding="utf-8") as f:
        return json.load(f)


def test_the_schema_version_moved_on_since_the_fixtures():
    # the fixtures test an upgrade only while they are older than the current schema
    assert SCHEMA_VERSION == 4


# --- SQLite ----------------------------------------------------------------------


@pytest.fixture
def v1_file(tmp_path: Path) -> Path:
    path = tmp_path / "v1.db"
    shutil.copyfile(FIXTURES / "sqlite-v1.db", path)
    return path


def _version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT version FROM schema_meta").fetchone()[0]


def test_a_version_1_sqlite_store_upgrades_and_answers_the_same(v1_file: Path):
    assert _version(v1_file) == 1
    with open_backend(str(v1_file)) as backend:
        assert backend_answers(backend) == recorded("sqlite-v1-answers.json.gz")
    assert _version(v1_file) == SCHEMA_VERSION
    with open_backend(str(v1_file), read_only=True) as backend:  # and again, already upgraded
        assert backend_answers(backend) == recorded("sqlite-v1-answers.json.gz")


def _expected_recorded(rows: list[tuple[int, int, int]], upgraded_at: int) -> dict[int, int]:
    """Version 3's choice for events appended before it (models._v2_to_v3): the latest
    statement instant of the collection's log up to the event, never after the upgrade."""
    out: dict[int, int] = {}
    upto: dict[int, int] = {}
    for position, collection, observed in sorted(rows):
        upto[collection] = max(upto.get(collection, observed), observed)
        out[position] = min(upto[collection], upgraded_at)
    return out


def test_an_upgraded_sqlite_store_gives_old_events_a_recorded_instant(v1_file: Path, monkeypatch):
    with sqlite3.connect(v1_file) as conn:
        rows = conn.execute("SELECT position, collection_id, observed_at FROM events").fetchall()
    # the upgrade instant falls inside the demo's statements, so the cap is exercised too
    instants = sorted(r[2] for r in rows)
    upgraded_at = instants[len(instants) // 2]
    monkeypatch.setattr(clock, "now_ns", lambda: upgraded_at)
    open_backend(str(v1_file)).close()
    with sqlite3.connect(v1_file) as conn:
        got = dict(conn.execute("SELECT position, recorded_at FROM events").fetchall())
    want = _expected_recorded(rows, upgraded_at)
    assert got == want
    assert any(v == upgraded_at for v in got.values()) and any(v < upgraded_at for v in got.values())
    # the next append is recorded after every old event, though the clock is behind them
    monkeypatch.setattr(clock, "now_ns", lambda: instants[0])
    with open_backend(str(v1_file)) as backend:
        store = backend.store("memories")
        store.append([make_event("user", "uses_editor", "helix", T0)])
        last = list(store.all_events())[-1]
        old = max(v for p, v in want.items() if p < store.position())
        assert last.recorded_at == old + 1
    with sqlite3.connect(v1_file) as conn, pytest.raises(sqlite3.IntegrityError, match="events are append-only"):
        conn.execute("UPDATE events SET recorded_at = 0")


def test_a_version_1_sqlite_store_is_not_upgraded_read_only(v1_file: Path):
    before = v1_file.read_bytes()
    with pytest.raises(StorageError) as e:
        open_backend(str(v1_file), read_only=True)
    assert e.value.message == (
        f"the store at sqlite:///{v1_file} has schema version 1, older than this release uses "
        f"({SCHEMA_VERSION}); open it once without --read-only to upgrade it"
    )
    assert v1_file.read_bytes() == before


def _structure(path: Path) -> dict:
    """Tables (columns: name, affinity, not null, default, key), indexes and triggers of
    the shared tables; SQL text is left out (an upgraded table keeps its old wording)."""

    def affinity(declared: str) -> str:
        t = declared.upper()
        if "INT" in t:
            return "INTEGER"
        if any(s in t for s in ("CHAR", "CLOB", "TEXT")):
            return "TEXT"
        return "BLOB" if t in ("", "BLOB") else "REAL" if any(s in t for s in ("REAL", "FLOA", "DOUB")) else "NUMERIC"

    with sqlite3.connect(path) as conn:
        out: dict = {}
        for table in ("schema_meta", "collections", "events", "event_replaces"):
            cols = conn.execute(f"PRAGMA table_info({table})").fetchall()
            # an INTEGER PRIMARY KEY (the rowid) is never NULL, written NOT NULL or not
            rowid = [c[1] for c in cols if c[5] and affinity(c[2]) == "INTEGER"] if table != "event_replaces" else []
            out[table] = [(c[1], affinity(c[2]), c[3] or c[1] in rowid, c[4], c[5]) for c in cols]
            out[f"{table} keys"] = conn.execute(f"PRAGMA foreign_key_list({table})").fetchall()
            out[f"{table} indexes"] = sorted(
                (name, unique, [r[2] for r in conn.execute(f"PRAGMA index_info({name})")])
                for _, name, unique, *_ in conn.execute(f"PRAGMA index_list({table})")
            )
        out["triggers"] = sorted(
            (name, table)
            for name, table in conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'")
        )
        out["without rowid"] = sorted(
            conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%WITHOUT ROWID%'")
        )
    return out


def test_an_upgraded_sqlite_store_has_the_schema_of_a_new_one(v1_file: Path, tmp_path: Path):
    open_backend(str(v1_file)).close()
    fresh = tmp_path / "fresh.db"
    with open_backend(str(fresh)) as backend:
        for name in ("memories", "sales", "support", "voice"):  # the same collection tables
            backend.store(name)
    upgraded, new = _structure(v1_file), _structure(fresh)
    assert upgraded == new
    assert [c[0] for c in new["event_replaces"]] == ["collection_id", "subject", "predicate", "event_id"]


def test_an_upgraded_sqlite_store_keeps_its_replaces_links_and_their_protection(v1_file: Path):
    with sqlite3.connect(v1_file) as conn:
        links_v1 = conn.execute(
            "SELECT r.collection_id, r.subject, r.predicate, e.id FROM event_replaces r "
            "JOIN events e ON e.position = r.position ORDER BY 1, 2, 3, 4"
        ).fetchall()
    assert links_v1  # the demo replaces values: the upgrade has rows to carry over
    with open_backend(str(v1_file)) as backend:
        store = backend.store("memories")
        new = make_event("user", "uses_editor", "helix", T0, replaces=[Replace("prefers_editor", "zed")])
        store.append([new])
        assert new.id in [e.id for e in store.replacing_events("user", ["prefers_editor"])]
    with sqlite3.connect(v1_file) as conn:
        links = conn.execute("SELECT * FROM event_replaces ORDER BY 1, 2, 3, 4").fetchall()
        assert set(links_v1) <= set(links) and len(links) == len(links_v1) + 1
        with pytest.raises(sqlite3.IntegrityError, match="events are append-only"):
            conn.execute("DELETE FROM event_replaces")


def test_opening_a_current_store_does_not_import_sqlalchemy(v1_file: Path):
    open_backend(str(v1_file)).close()  # upgraded: the next open only reads
    code = (
        "import sys\n"
        "from recall_engine.storage import open_backend\n"
        f"b = open_backend({str(v1_file)!r})\n"
        "b.store('memories').pair_events('user', ['prefers_editor'])\n"
        "print(sorted(m for m in ('sqlalchemy', 'sqlmodel', 'pgvector') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


# --- PostgreSQL ------------------------------------------------------------------


def _load_v1_dump(url: str) -> None:
    with gzip.open(FIXTURES / "postgres-v1.sql.gz", "rt", encoding="utf-8") as f:
        dump = f.read()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        conn.execute(dump)  # no parameters: psycopg sends the script as it is


def _catalog(url: str) -> dict:
    """Columns, constraints, indexes and triggers of the recall schema, by name."""
    with psycopg.connect(url) as conn:
        q = lambda sql: sorted(tuple(r) for r in conn.execute(sql).fetchall())  # noqa: E731
        return {
            "columns": q(
                "SELECT table_name, column_name, data_type, udt_name, is_nullable, collation_name, "
                "is_generated, generation_expression, is_identity, identity_generation "
                "FROM information_schema.columns WHERE table_schema = 'recall'"
            ),
            "constraints": q(
                "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE connamespace = 'recall'::regnamespace"
            ),
            "indexes": q("SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'recall'"),
            "triggers": q(
                "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger "
                "WHERE NOT tgisinternal AND tgrelid::regclass::text LIKE 'recall.%'"
            ),
            "privileges": q(
                "SELECT table_name, grantee, privilege_type FROM information_schema.table_privileges "
                "WHERE table_schema = 'recall'"
            ),
        }


@pytest.mark.postgres
def test_a_version_1_postgres_store_upgrades_and_answers_the_same(pg_url: str, monkeypatch):
    from tests.pg_server import fresh_database

    url = fresh_database(pg_url, f"upgrade{os.getpid()}")
    _load_v1_dump(url)
    with pytest.raises(StorageError, match="has schema version 1, older than this release uses"):
        open_backend(url, read_only=True)
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT position, collection_id, observed_at FROM recall.events").fetchall()
    instants = sorted(r[2] for r in rows)
    upgraded_at = instants[len(instants) // 2]
    monkeypatch.setattr(clock, "now_ns", lambda: upgraded_at)
    with open_backend(url) as backend:
        assert backend_answers(backend) == recorded("postgres-v1-answers.json.gz")
        store = backend.store("memories")
        new = make_event("user", "uses_editor", "helix", T0, replaces=[Replace("prefers_editor", "zed")])
        store.append([new])
        assert new.id in [e.id for e in store.replacing_events("user", ["prefers_editor"])]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM recall.schema_meta").fetchone()[0] == SCHEMA_VERSION
        got = dict(conn.execute("SELECT position, recorded_at FROM recall.events").fetchall())
        with pytest.raises(psycopg.Error, match="events are append-only"):
            conn.execute("UPDATE recall.events SET recorded_at = 0")
    want = _expected_recorded(rows, upgraded_at)
    top = max(want)
    assert {p: v for p, v in got.items() if p in want} == want
    assert [v for p, v in got.items() if p > top] == [max(want.values()) + 1]  # the clock is behind them

    fresh = fresh_database(pg_url, f"upgradefresh{os.getpid()}")
    open_backend(fresh).close()
    assert _catalog(url) == _catalog(fresh)
