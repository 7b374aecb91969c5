"""The sentence model's vectors in PostgreSQL: a pgvector table with an HNSW index that
``init`` (any opening with write access) builds, filled by search, read through the
index (recall_engine/storage/postgres/meanings.py, docs/storage.md "Vectors")."""

from __future__ import annotations

import itertools
import os

import psycopg
import pytest

from recall_engine import sentence
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.search import search
from recall_engine.storage.postgres import meanings
from recall_engine.storage.postgres.backend import PostgresBackend
from tests.pg_server import fresh_database

_names = itertools.count()
HNSW = "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'recall' AND tablename = 'event_meanings'"


@pytest.fixture
def db(pg_url: str) -> str:
    return fresh_database(pg_url, f"mv{os.getpid()}_{next(_names)}")


@pytest.fixture
def admin(db: str):
    with psycopg.connect(db, autocommit=True) as conn:
        yield conn


def _memory(backend: PostgresBackend) -> Memory:
    clock = {"t": parse_instant("2026-01-01")}

    def now() -> int:
        clock["t"] += 1000
        return clock["t"]

    m = Memory(backend.store("memories"), now=now)
    defs = [
        Definition("works_at", "single", "string", "The company the person works for"),
        Definition("home_city", "single", "string", "The city the person lives in"),
        Definition("likes", "multi", "string", "Things the person enjoys"),
    ]
    m.append_records([RegistryRecord(op="declare", name=d.name, definition=d) for d in defs])
    m.remember("alice", "works_at", "Acme Corp")
    m.remember("alice", "home_city", "Lisbon")
    m.remember("bob", "likes", "sailing")
    return m


def test_opening_with_write_access_builds_the_hnsw_index(db: str, admin) -> None:
    with PostgresBackend(db) as backend:
        assert backend.has_meanings
    ((name, definition),) = [r for r in admin.execute(HNSW).fetchall() if "hnsw" in r[1]]
    assert name == meanings.INDEX and "vector_cosine_ops" in definition
    # a read-only opening finds it and builds nothing
    with PostgresBackend(db, read_only=True) as backend:
        assert backend.has_meanings


def test_search_keeps_the_model_vectors_and_reads_them_through_the_index(db: str, admin) -> None:
    assert sentence.available(), "the model ships with the default install"
    with PostgresBackend(db) as backend:
        m = _memory(backend)
        assert admin.execute("SELECT count(*) FROM recall.event_meanings").fetchone()[0] == 0  # not on write
        found = search(m, "where does alice work")
        assert found[0].predicate == "works_at"
        kept = admin.execute("SELECT count(*) FROM recall.event_meanings").fetchone()[0]
        assert kept >= 1
        # the kept vectors are the model's: the nearest to a question sharing no word with it
        qv = sentence.embed_texts(["employer of alice"])[0]
        hits = m.store.meaning_search(qv, 3)
        assert hits[0].event.predicate == "works_at" and 0 < hits[0].score <= 1.0001
        assert m.store.meaning_search(qv, 3, until=hits[0].event.observed_at - 1) == [] or all(
            h.event.observed_at < hits[0].event.observed_at
            for h in m.store.meaning_search(qv, 3, until=hits[0].event.observed_at - 1)
        )
        assert m.store.meaning_search(qv, 3, since=hits[0].event.observed_at + 10**15) == []
        # a second search embeds nothing new for the same events
        search(m, "where does alice work")
        assert admin.execute("SELECT count(*) FROM recall.event_meanings").fetchone()[0] == kept
        # the planner walks the HNSW graph for the nearest-events query
        with backend.connection("explain") as conn:
            conn.execute("SET enable_seqscan = off")  # the table is tiny; the plan must be able to use the index
            plan = "\n".join(
                r[0]
                for r in conn.execute(
                    "EXPLAIN " + meanings.nearest_query(backend.vector_schema), (qv, m.store.cid, 10)
                ).fetchall()
            )
            conn.execute("RESET enable_seqscan")
        assert meanings.INDEX in plan, plan


def test_a_read_only_store_searches_without_keeping_anything(db: str, admin) -> None:
    with PostgresBackend(db) as backend:
        _memory(backend)
    with PostgresBackend(db, read_only=True) as backend:
        m = Memory(backend.store("memories", create=False))
        assert search(m, "where does alice work")[0].predicate == "works_at"
    assert admin.execute("SELECT count(*) FROM recall.event_meanings").fetchone()[0] == 0


def test_events_stay_append_only_with_their_vectors_kept(db: str, admin) -> None:
    with PostgresBackend(db) as backend:
        m = _memory(backend)
        search(m, "where does alice work")
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        admin.execute("DELETE FROM recall.events")
