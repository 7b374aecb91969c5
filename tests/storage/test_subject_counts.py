"""Subject counts (schema version 4, docs/storage.md "Subject counts"): every append keeps
each subject's event count in its own transaction, on both backends; ``subjects()`` reads
them instead of counting the log; an upgraded store counts its log once; verify compares
them with the log.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import psycopg
import pytest

from recall_engine.errors import StorageError
from recall_engine.instants import NS, parse_instant
from recall_engine.integrity import verify_log
from recall_engine.records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, make_event
from recall_engine.storage import open_backend
from recall_engine.text import NOTE

T0 = parse_instant("2026-03-01T09:00:00Z")
FIXTURES = Path(__file__).parent / "fixtures"


def ev(subject: str, predicate: str, value: str, hours: int = 0):
    return make_event(subject, predicate, value, T0 + hours * 3600 * NS)


def logged(store) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in store.all_events():
        out[e.subject] = out.get(e.subject, 0) + 1
    return out


def listed_from_log(store, prefix: str = "", limit: int = 1000) -> list[tuple[str, int]]:
    """What ``subjects()`` answered when it counted the log: most events first, then by
    name, reserved subjects left out, by name prefix."""
    rows = [(s, n) for s, n in logged(store).items() if not s.startswith("recall:") and s.startswith(prefix)]
    return sorted(rows, key=lambda r: (-r[1], r[0]))[:limit]


def test_every_append_path_keeps_the_counts_of_the_log(backend):
    store, other = backend.store("memories"), backend.store("support")
    first = [ev("carol", "likes", "tea"), ev("carol", "lives_in", "Oslo", 1), ev("dave", "likes", "jam", 2)]
    store.append(first)
    store.append(first)  # stored ids are skipped: nothing counted twice
    store.append([ev("carol", "likes", "coffee", 3), ev(REGISTRY_SUBJECT, REGISTRY_PREDICATE, "{}", 4)])
    store.appended([ev("erin", "likes", "tea", 5)])
    many = [ev(f"s{i % 7}", "p", f"v{i}", i) for i in range(60)]
    assert store.append_many(many, batch_size=16) == 60
    assert store.append_many(many, batch_size=16) == 0
    bodies = [ev("frank", "likes", f"v{i}", i) for i in range(5)]
    store.append_many(bodies, atomic=True, bodies=[json.dumps(e.to_json()) for e in bodies])
    other.append([ev("carol", "likes", "tea", 9)])

    assert store.subject_counts() == logged(store)
    assert store.subject_counts()["carol"] == 3 and store.subject_counts()[REGISTRY_SUBJECT] == 1
    assert other.subject_counts() == {"carol": 1}
    assert store.subjects() == listed_from_log(store)
    assert store.subjects("s", limit=3) == listed_from_log(store, "s", 3)
    assert store.subjects(limit=0) == []
    assert all(not s.startswith("recall:") for s, _ in store.subjects())


def test_an_import_into_an_empty_store_counts_its_subjects(backend, tmp_path):
    from recall_admin.transfer import import_file

    path = tmp_path / "in.jsonl"
    events = [ev(f"person-{i % 11}", NOTE, f"said thing {i}", i) for i in range(200)]  # notes need no registry
    path.write_text("".join(json.dumps(e.to_json()) + "\n" for e in events), encoding="utf-8")
    store = backend.store("memories")
    import_file(store, str(path))
    assert store.count() == 200
    assert store.subject_counts() == logged(store)
    assert store.subjects(limit=3) == listed_from_log(store, limit=3)


def test_verify_reports_a_count_that_differs_from_the_log(backend_url):
    with open_backend(backend_url) as b:
        store = b.store("memories")
        store.append([ev("carol", "likes", "tea"), ev("dave", "likes", "jam", 1)])
        assert verify_log(store).ok
    if backend_url.startswith("sqlite"):
        with sqlite3.connect(backend_url.removeprefix("sqlite:///")) as conn:
            conn.execute("UPDATE subject_counts SET events = 7 WHERE subject = 'carol'")
    else:
        with psycopg.connect(backend_url, autocommit=True) as conn:
            conn.execute("UPDATE recall.subject_counts SET events = 7 WHERE subject = 'carol'")
    with open_backend(backend_url, read_only=True) as b:
        result = verify_log(b.store("memories", create=False))
    assert not result.ok
    assert result.problems == (
        "the kept event counts of 1 subject(s) differ from the log: 'carol' counted 7, logged 1; "
        "events were removed or added behind the engine's back",
    )


def test_an_upgraded_sqlite_store_counts_its_log(tmp_path):
    path = tmp_path / "v1.db"
    shutil.copyfile(FIXTURES / "sqlite-v1.db", path)
    with open_backend(str(path)) as b:
        names = [name for name, _ in b.collections()]
        assert names
        for name in names:
            store = b.store(name, create=False)
            assert store.subject_counts() == logged(store)
            assert verify_log(store).ok
        store = b.store(names[0], create=False)
        before = store.subject_counts()
        store.append([ev("carol", "likes", "a new one", 99)])
        assert store.subject_counts() == {**before, "carol": before.get("carol", 0) + 1}


@pytest.mark.postgres
def test_postgres_a_disabled_count_trigger_is_found_at_open(pg_url):
    from tests.pg_server import fresh_database

    url = fresh_database(pg_url, f"counts{os.getpid()}")
    with open_backend(url) as b:
        b.store("memories").append([ev("carol", "likes", "tea")])
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("ALTER TABLE recall.events DISABLE TRIGGER events_count_subjects")
        with pytest.raises(StorageError, match=r"\(events_count_subjects missing or altered\)"):
            open_backend(url)
        admin.execute("ALTER TABLE recall.events ENABLE TRIGGER events_count_subjects")
    with open_backend(url) as b:
        store = b.store("memories")
        store.append([ev("carol", "likes", "jam", 1)])
        assert store.subject_counts() == {"carol": 2}


@pytest.mark.postgres
def test_an_upgraded_postgres_store_counts_its_log(pg_url):
    from tests.pg_server import fresh_database
    from tests.storage.test_upgrade import _load_v1_dump

    url = fresh_database(pg_url, f"countsup{os.getpid()}")
    _load_v1_dump(url)
    with open_backend(url) as b:
        names = [name for name, _ in b.collections()]
        assert names
        for name in names:
            store = b.store(name, create=False)
            assert store.subject_counts() == logged(store)
        store = b.store(names[0], create=False)
        before = store.subject_counts()
        store.append([ev("carol", "likes", "a new one", 99)])
        assert store.subject_counts() == {**before, "carol": before.get("carol", 0) + 1}
