"""PostgreSQL-specific behaviour, on the real server the suite starts (tests/pg_server.py).

What the conformance suite cannot show for every backend: the database itself
refusing UPDATE and DELETE, a row corrupted behind the engine's back, roles
without privileges, passwords kept out of messages, the schema version, bulk
COPY, and several processes appending at once.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import traceback
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import psycopg
import pytest

from recall_engine.embed import embed
from recall_engine.errors import IncompleteHistory, InvalidEvent, InvalidInput, NotFound, ReadOnlyStore, StorageError
from recall_engine.records import Event, Replace, make_event
from recall_engine.storage import open_backend
from recall_engine.storage.common import SCHEMA_VERSION
from recall_engine.storage.postgres.backend import PostgresBackend
from tests.pg_server import database_url, fresh_database

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[2]
T0 = 1_750_000_000_000_000_000  # 2025-06-15, in nanoseconds
_names = itertools.count()

READER = "recall_test_reader"  # SELECT only
NOBODY = "recall_test_nobody"  # no grant at all
NOCREATE = "recall_test_nocreate"  # neither superuser nor CREATE on the database
PW_ROLE = "recall_test_pw"  # must give a password


@pytest.fixture
def db(pg_url: str) -> str:
    """A fresh, empty database; the URL connects as the superuser."""
    return fresh_database(pg_url, f"pg{os.getpid()}_{next(_names)}")


@pytest.fixture
def admin(db: str):
    """A superuser connection to the test database, outside the engine."""
    with psycopg.connect(db, autocommit=True) as conn:
        yield conn


def _role(pg_url: str, name: str, *extra: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        with contextlib.suppress(psycopg.errors.DuplicateObject):
            conn.execute(f"CREATE ROLE {name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
        for statement in extra:
            conn.execute(statement)


def _dbname(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def _events(n: int, subject: str = "ana", predicate: str = "likes", start: int = 0) -> list[Event]:
    return [make_event(subject, predicate, f"thing {i}", T0 + i) for i in range(start, start + n)]


def _message(excinfo: pytest.ExceptionInfo) -> str:
    return str(excinfo.value)


# --- append-only in the database itself --------------------------------------


def test_update_and_delete_of_events_are_refused_by_the_database(db: str, admin) -> None:
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append(_events(1) + [make_event("ana", "likes", "tea", T0 + 5, replaces=[Replace("likes", "thing 0")])])
        eid = store.pair_events("ana", ["likes"])[0].id

    with pytest.raises(psycopg.errors.RaiseException) as update:
        admin.execute("UPDATE recall.events SET subject = 'bob' WHERE id = %s", (eid,))
    assert f"events are append-only: UPDATE of event {eid} in recall.events is refused" in str(update.value)
    print("UPDATE refused:", update.value)

    with pytest.raises(psycopg.errors.RaiseException) as delete:
        admin.execute("DELETE FROM recall.events WHERE id = %s", (eid,))
    assert f"events are append-only: DELETE of event {eid} in recall.events is refused" in str(delete.value)
    print("DELETE refused:", delete.value)

    with pytest.raises(psycopg.errors.RaiseException) as truncate:
        admin.execute("TRUNCATE recall.events CASCADE")
    assert "events are append-only: TRUNCATE on recall.events is refused" in str(truncate.value)

    with pytest.raises(psycopg.errors.RaiseException) as links:
        admin.execute("DELETE FROM recall.event_replaces")
    assert "events are append-only: DELETE on recall.event_replaces is refused" in str(links.value)
    count = admin.execute("SELECT count(*) FROM recall.events").fetchone()[0]
    assert count == 2


def test_a_role_that_owns_nothing_cannot_update_either(pg_url: str, db: str, admin) -> None:
    """A writer role (INSERT and SELECT) has no UPDATE or DELETE privilege to begin with."""
    with PostgresBackend(db) as backend:
        backend.store("memories").append(_events(1))
    writer = "recall_test_writer"
    _role(pg_url, writer)
    admin.execute(f"GRANT USAGE ON SCHEMA recall TO {writer}")
    admin.execute(f"GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA recall TO {writer}")
    admin.execute(f"GRANT UPDATE ON recall.collections TO {writer}")
    url = database_url(pg_url, _dbname(db), user=writer)
    with PostgresBackend(url) as backend:
        assert not backend.read_only
        store = backend.store("memories")
        assert store.append(_events(1, start=1)) > 0
        assert store.count() == 2
    with psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
            conn.execute("DELETE FROM recall.events")
        assert "permission denied for table events" in str(e.value)


# --- corruption ----------------------------------------------------------------


def _corrupt(admin, eid: str, body_sql: str) -> None:
    admin.execute("ALTER TABLE recall.events DISABLE TRIGGER events_append_only")
    try:
        admin.execute(f"UPDATE recall.events SET body = {body_sql} WHERE id = %s", (eid,))
    finally:
        admin.execute("ALTER TABLE recall.events ENABLE TRIGGER events_append_only")


def test_a_row_corrupted_behind_the_engines_back_refuses_the_read(db: str, admin) -> None:
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append(_events(5))
        victim = store.pair_events("ana", ["likes"])[2].id
        _corrupt(admin, victim, "jsonb_set(body::jsonb, '{confidence}', '7')::json")

        with pytest.raises(InvalidEvent) as e:
            store.pair_events("ana", ["likes"])
        message = _message(e)
        print("pair read refused:", message)
        assert f"stored event {victim!r} in collection 'memories' does not decode" in message
        assert "invalid confidence" in message
        assert "the read is refused" in message
        # every other read of that event refuses too, never a partial answer
        with pytest.raises(InvalidEvent) as e:
            store.pair_read("ana", ["likes"], ["likes"])  # a first read's one statement
        assert _message(e) == message
        with pytest.raises(InvalidEvent, match=victim):
            store.subject_events("ana")
        with pytest.raises(InvalidEvent, match=victim):
            list(store.all_events())
        with pytest.raises(InvalidEvent, match=victim):
            store.events_by_id([victim])
        # reads that do not touch it still answer
        assert store.count() == 5


def test_a_body_that_names_another_event_is_refused(db: str, admin) -> None:
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append(_events(2))
        first, second = store.pair_events("ana", ["likes"])
        _corrupt(admin, second.id, f"(SELECT body FROM recall.events WHERE id = '{first.id}')")
        with pytest.raises(InvalidEvent) as e:
            store.pair_events("ana", ["likes"])
        assert f"stored event {second.id!r}" in _message(e)
        assert f"its body holds the id {first.id!r}" in _message(e)


# --- read-only -------------------------------------------------------------------


def test_read_only_mode_refuses_writes_and_the_session_is_read_only(db: str) -> None:
    with PostgresBackend(db) as backend:
        backend.store("memories").append(_events(3))
    with open_backend(db, read_only=True) as backend:
        assert backend.read_only
        store = backend.store("memories")
        assert store.read_only
        assert len(store.pair_events("ana", ["likes"])) == 3
        with pytest.raises(ReadOnlyStore) as e:
            store.append(_events(1, start=10))
        assert _message(e).startswith("the store is open read-only; writes are refused")
        with pytest.raises(ReadOnlyStore):
            store.append_many(_events(1, start=10))
        with pytest.raises(NotFound) as missing:
            backend.store("elsewhere")
        assert "no collection 'elsewhere'" in _message(missing) and "collections: memories" in _message(missing)
        # the database session itself refuses a write
        with backend.connection("a write behind the store's back") as conn:
            assert conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        with pytest.raises(ReadOnlyStore), backend.connection("a write behind the store's back") as conn:
            conn.execute("INSERT INTO recall.collections (name) VALUES ('sneaky')")
    with PostgresBackend(db) as backend:
        assert backend.store("memories").count() == 3
        assert [n for n, _ in backend.collections()] == ["memories"]


def test_read_only_on_a_database_without_a_store_says_so(db: str) -> None:
    with pytest.raises(StorageError) as e:
        PostgresBackend(db, read_only=True)
    assert "no recall store in database" in _message(e)
    assert "nothing to open read-only" in _message(e)


def test_a_role_without_insert_is_opened_read_only_on_its_own(pg_url: str, db: str, admin) -> None:
    with PostgresBackend(db) as backend:
        backend.store("memories").append(_events(4))
    _role(pg_url, READER)
    admin.execute(f"GRANT USAGE ON SCHEMA recall TO {READER}")
    admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA recall TO {READER}")
    url = database_url(pg_url, _dbname(db), user=READER)
    with open_backend(url) as backend:
        assert backend.read_only
        assert f"the role '{READER}' may not append" in backend.read_only_reason
        assert "lacks INSERT on recall.events" in backend.read_only_reason
        store = backend.store("memories")
        assert store.count() == 4
        assert [e.value for e in store.pair_events("ana", ["likes"])] == [f"thing {i}" for i in range(4)]
        with pytest.raises(ReadOnlyStore) as e:
            store.append(_events(1, start=9))
        assert "may not append" in _message(e) and "writes are refused" in _message(e)


def test_a_role_without_any_grant_is_told_what_to_ask_for(pg_url: str, db: str) -> None:
    with PostgresBackend(db) as backend:
        backend.store("memories")
    _role(pg_url, NOBODY)
    url = database_url(pg_url, _dbname(db), user=NOBODY)
    with pytest.raises(StorageError) as e:
        PostgresBackend(url)
    assert f"the role '{NOBODY}' may not read the recall store" in _message(e)
    assert f"GRANT USAGE ON SCHEMA recall TO {NOBODY}" in _message(e)


# --- passwords -------------------------------------------------------------------


def _assert_hidden(exc: BaseException, secret: str) -> None:
    shown = "".join(traceback.format_exception(exc)) + repr(exc.args)
    assert secret not in shown
    assert exc.__cause__ is None and exc.__suppress_context__


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ana:Sup3rSecret@/recall?host=/nonexistent/socket/dir",
        "postgresql://ana:Sup3rSecret@127.0.0.1:1/recall?connect_timeout=2",
        "postgresql://ana@/recall?host=/nonexistent/socket/dir&password=Sup3rSecret",
        "postgresql://ana:Sup3rSecret@[::1/recall",
        "postgres://ana:Sup3rSecret@/recall?host=/tmp&no_such_option=1",
    ],
)
def test_a_password_in_the_url_never_appears_in_an_error(url: str) -> None:
    with pytest.raises(StorageError) as e:
        open_backend(url)
    message = _message(e)
    print(message)
    assert message.startswith("cannot connect to the store at postgres")
    assert "***" in message
    _assert_hidden(e.value, "Sup3rSecret")


def test_a_wrong_password_is_refused_without_showing_it(pg_url: str, db: str) -> None:
    _role(pg_url, PW_ROLE, f"ALTER ROLE {PW_ROLE} PASSWORD 'the-right-one'")
    _require_password(pg_url, PW_ROLE)
    wrong = database_url(pg_url, _dbname(db), user=PW_ROLE, password="Wr0ng-Passw0rd")
    with pytest.raises(StorageError) as e:
        PostgresBackend(wrong)
    message = _message(e)
    assert f'password authentication failed for user "{PW_ROLE}"' in message
    assert f"postgresql://{PW_ROLE}:***@" in message
    _assert_hidden(e.value, "Wr0ng-Passw0rd")
    # the right password gets as far as the schema, and still shows no password
    right = database_url(pg_url, _dbname(db), user=PW_ROLE, password="the-right-one")
    with pytest.raises(StorageError) as e:
        PostgresBackend(right)
    assert "the role cannot create the pgvector extension" in _message(e)
    _assert_hidden(e.value, "the-right-one")


def _require_password(pg_url: str, role: str) -> None:
    """Make ``role`` authenticate with scram-sha-256 on the test server's socket."""
    line = f"local all {role} scram-sha-256\n"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])
        text = hba.read_text()
        if line not in text:
            hba.write_text(line + text)
            conn.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # the reload is asynchronous
        try:
            psycopg.connect(database_url(pg_url, "postgres", user=role), connect_timeout=2).close()
        except psycopg.OperationalError as e:
            if "password" in str(e):
                return
        time.sleep(0.05)
    raise AssertionError("the test server did not start asking for a password")


def test_the_display_url_hides_the_password(db: str) -> None:
    url = db.replace("postgresql://postgres@", "postgresql://postgres:Sup3rSecret@")
    with PostgresBackend(url) as backend:
        assert "Sup3rSecret" not in backend.url_for_display
        assert "Sup3rSecret" not in repr(backend)
        assert backend.url_for_display.startswith("postgresql://postgres:***@/")


# --- schema ----------------------------------------------------------------------


def test_a_schema_newer_than_the_code_is_refused(db: str, admin) -> None:
    PostgresBackend(db).close()
    assert admin.execute("SELECT version FROM recall.schema_meta").fetchone()[0] == SCHEMA_VERSION
    admin.execute("UPDATE recall.schema_meta SET version = %s", (SCHEMA_VERSION + 1,))
    for read_only in (False, True):
        with pytest.raises(StorageError) as e:
            PostgresBackend(db, read_only=read_only)
        assert (
            f"has schema version {SCHEMA_VERSION + 1}, newer than this release of recall-admin supports "
            f"({SCHEMA_VERSION}); upgrade recall-admin to open it"
        ) in _message(e)


def test_a_foreign_recall_schema_is_not_taken_over(db: str, admin) -> None:
    admin.execute("CREATE SCHEMA recall")
    admin.execute("CREATE TABLE recall.things (x int)")
    with pytest.raises(StorageError) as e:
        PostgresBackend(db)
    assert "has a schema named 'recall' that is not a recall store" in _message(e)


def test_two_processes_creating_the_schema_at_once_both_succeed(db: str) -> None:
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            PostgresBackend(db).close()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_the_extension_creation_failure_says_what_to_ask_for(pg_url: str, db: str, admin) -> None:
    _role(pg_url, NOCREATE)
    name = _dbname(db)
    admin.execute(f"REVOKE CREATE ON DATABASE {name} FROM PUBLIC")
    url = database_url(pg_url, name, user=NOCREATE)
    with pytest.raises(StorageError) as e:
        PostgresBackend(url)
    message = _message(e)
    print(message)
    assert message.startswith(
        f"the role cannot create the pgvector extension; ask an administrator to run CREATE EXTENSION vector "
        f"in database '{name}'"
    )
    assert f"role '{NOCREATE}'" in message
    assert "permission denied to create extension" in message
    # an administrator creates the extension: now the tables are what is missing
    admin.execute("CREATE EXTENSION vector")
    with pytest.raises(StorageError) as e:
        PostgresBackend(url)
    assert f"the role cannot create the recall tables in database '{name}'" in _message(e)
    assert f"GRANT CREATE ON DATABASE {name} TO {NOCREATE}" in _message(e)
    # and with that grant the role builds the store itself
    admin.execute(f"GRANT CREATE ON DATABASE {name} TO {NOCREATE}")
    with PostgresBackend(url) as backend:
        assert not backend.read_only
        store = backend.store("memories")
        store.append(_events(2))
        assert store.count() == 2


# --- writes ----------------------------------------------------------------------


def test_append_skips_stored_ids_and_positions_grow_per_collection(db: str) -> None:
    with PostgresBackend(db) as backend:
        a, b = backend.store("a"), backend.store("b.2-x")
        evs = _events(3)
        pa = a.append(evs + evs[:1])
        pb = b.append(evs)
        assert (a.count(), b.count()) == (3, 3)
        assert a.append(evs) == pa  # nothing new, same position
        pa2 = a.append(_events(1, start=3))
        assert pa < pb < pa2
        touched = a.touched_since(pa)
        assert [t.position for t in touched] == [pa2]
        assert backend.collections() == [("a", 4), ("b.2-x", 3)]


def test_a_failed_append_writes_nothing(db: str) -> None:
    good = _events(2)
    bad = make_event("ana", "likes", "x", T0 + 99, confidence=7.0)
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        with pytest.raises(InvalidEvent, match="invalid confidence"):
            store.append(good + [bad])
        assert store.count() == 0 and store.position() == 0


def test_bulk_import_uses_copy_per_batch_and_reports_progress(db: str) -> None:
    evs = _events(250)
    evs[7] = make_event(
        "ana",
        "likes",
        "Crème brûlée",
        T0 + 7,
        evidence="she said: I love crème brûlée",
        replaces=[Replace("dislikes", "cake")],
    )
    seen: list[tuple[int, int]] = []
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append(evs[:10])
        written = store.append_many(evs + evs[:5], batch_size=100, progress=lambda r, w: seen.append((r, w)))
        assert written == 240
        assert seen == [(100, 90), (200, 190), (255, 240)]
        assert store.count() == 250
        assert [e.id for e in store.all_events()] == [e.id for e in evs]
        assert [e.id for e in store.replacing_events("ana", ["dislikes"])] == [evs[7].id]
        hits = store.keyword_search("creme brulee", 5)
        assert [h.event.id for h in hits] == [evs[7].id]
        assert store.vector_search(embed("ana likes thing 42"), 1)[0].event.value == "thing 42"


def test_bulk_import_is_atomic_per_batch(db: str) -> None:
    evs = _events(6)
    evs[4] = make_event("ana", "likes", "bad", T0 + 4, confidence=2.0)
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        with pytest.raises(InvalidEvent, match="invalid confidence"):
            store.append_many(evs, batch_size=3)
        assert [e.value for e in store.all_events()] == ["thing 0", "thing 1", "thing 2"]
        assert store.count() == 3


def test_an_atomic_bulk_import_writes_nothing_when_a_late_batch_fails(db: str, admin) -> None:
    """``import`` of a file: one transaction for every batch, the dropped indexes included."""
    indexes = "SELECT indexname FROM pg_indexes WHERE schemaname = 'recall' AND tablename = 'events' ORDER BY 1"
    evs = _events(8)
    evs[6] = make_event("ana", "likes", "bad", T0 + 6, confidence=2.0)
    with PostgresBackend(db) as backend:
        full = [r[0] for r in admin.execute(indexes)]
        assert "events_pair" in full
        store = backend.store("memories")
        seen: list[tuple[int, int]] = []
        with pytest.raises(InvalidEvent, match="invalid confidence"):
            store.append_many(evs, batch_size=3, atomic=True, progress=lambda r, w: seen.append((r, w)))
        assert seen == [(3, 3), (6, 6)]  # two batches were written before the third failed
        assert store.count() == 0 and list(store.all_events()) == []
        assert [r[0] for r in admin.execute(indexes)] == full
        good = _events(8)
        assert store.append_many(good, batch_size=3, atomic=True) == 8
        assert [e.id for e in store.all_events()] == [e.id for e in good]
        assert [r[0] for r in admin.execute(indexes)] == full  # dropped and built again inside it
        assert store.index_problems() == []


_WORKER = textwrap.dedent(
    """
    import sys
    from recall_engine.records import make_event
    from recall_engine.storage.postgres.backend import PostgresBackend
    url, who, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    T0 = 1_750_000_000_000_000_000
    shared = [make_event("shared", "likes", f"s{i}", T0 + i) for i in range(20)]
    with PostgresBackend(url) as backend:
        store = backend.store("memories")
        for i in range(n):
            batch = [make_event(f"w{who}", "likes", f"v{i}-{j}", T0 + 1000 * i + j) for j in range(1 + i % 3)]
            store.append(batch + shared[i % 20 : i % 20 + 1])
    """
)


@pytest.mark.slow
def test_several_processes_append_at_once_and_no_event_is_lost(db: str) -> None:
    """Four writers append at once while a reader follows the watermark with
    touched_since: the reader sees every event exactly once, none committed
    later with a lower position."""
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        env = dict(os.environ, PYTHONPATH=str(REPO))
        procs = [
            subprocess.Popen([sys.executable, "-c", _WORKER, db, str(w), "60"], env=env, cwd=REPO) for w in range(4)
        ]
        seen: list[int] = []
        mark = 0
        while True:
            running = any(p.poll() is None for p in procs)
            touched = store.touched_since(mark)
            seen += [t.position for t in touched]
            if touched:
                mark = touched[-1].position
            if not running:
                seen += [t.position for t in store.touched_since(mark)]
                break
            time.sleep(0.002)  # leave the writers some of the machine
        assert [p.returncode for p in procs] == [0, 0, 0, 0]
        expected = 4 * sum(1 + i % 3 for i in range(60)) + 20
        assert store.count() == expected
        with backend.connection("checking") as conn:
            stored = [r[0] for r in conn.execute("SELECT position FROM recall.events ORDER BY position")]
        assert len(stored) == expected
        assert seen == stored  # every position once, in order: nothing appeared behind the watermark


# --- reads -----------------------------------------------------------------------


def test_complete_reads_are_refused_past_the_limit(db: str) -> None:
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append(_events(6))
        assert len(store.pair_events("ana", ["likes"], limit=6)) == 6
        with pytest.raises(IncompleteHistory) as e:
            store.pair_events("ana", ["likes"], limit=5)
        assert "more than 5 events (the limit)" in _message(e)
        with pytest.raises(IncompleteHistory, match="more than 2 events"):
            store.touched_since(0, limit=2)


def test_keyword_search_takes_any_text_as_plain_words(db: str) -> None:
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append(
            [
                make_event("ana", "likes", "Café au lait", T0),
                make_event("ana", "likes", "tea", T0 + 1),
                make_event("bob", "likes", "o'clock & tea", T0 + 2),
            ]
        )
        nasty = "cafe' | !tea & ( :* \\ \"); DROP TABLE recall.events; --"
        values = {h.event.value for h in store.keyword_search(nasty, 10)}
        assert values == {"Café au lait", "tea", "o'clock & tea"}
        assert store.keyword_search("'", 10) == []
        assert [h.event.value for h in store.keyword_search("CAFE", 10)] == ["Café au lait"]
        assert [h.event.value for h in store.keyword_search("tea", 10, since=T0 + 2)] == ["o'clock & tea"]
        assert store.count() == 3


def test_vector_search_ranks_by_cosine_and_the_index_is_built_only_on_request(db: str, admin) -> None:
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append(_events(50) + [make_event("bob", "prefers_editor", "Neovim", T0 + 100)])
        q = embed("bob prefers editor neovim")
        hits = store.vector_search(q, 3)
        assert hits[0].event.value == "Neovim" and hits[0].score == pytest.approx(1.0, abs=1e-5)
        assert hits[0].score >= hits[1].score >= hits[2].score
        assert store.vector_search(q, 3, until=T0 + 10)[0].event.subject == "ana"
        assert store.vector_search(np.zeros(256, dtype=np.float32), 2)[0].score == 0.0
        indexes = (
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'recall' AND tablename = 'events' "
            "AND indexdef LIKE '%hnsw%'"
        )
        assert admin.execute(indexes).fetchall() == []
        backend.build_vector_index()
        assert admin.execute(indexes).fetchall() == [("events_vec_hnsw",)]
        assert store.vector_search(q, 1)[0].event.value == "Neovim"
    with PostgresBackend(db) as backend:
        assert backend.has_vector_index
        assert backend.store("memories").vector_search(q, 1)[0].event.value == "Neovim"


def test_a_closed_backend_says_so(db: str) -> None:
    backend = PostgresBackend(db)
    store = backend.store("memories")
    backend.close()
    with pytest.raises(StorageError, match="is closed"):
        store.count()


def test_bodies_are_stored_as_json_the_database_can_read(db: str, admin) -> None:
    ev = make_event("ana", "height_cm", -0.0, T0, evidence="about nothing")
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append([ev])
        (back,) = store.pair_events("ana", ["height_cm"])
        assert back == ev and str(back.value) == "-0.0"  # json, not jsonb: -0 keeps its sign
    body, terms = admin.execute("SELECT body, terms FROM recall.events").fetchone()
    assert body["evidence"] == "about nothing" and json.loads(json.dumps(body))["subject"] == "ana"
    assert terms == "ana height cm 0 about nothing"


def test_a_bulk_import_into_an_empty_database_builds_the_indexes_once_at_the_end(db: str, admin) -> None:
    indexes = "SELECT indexname FROM pg_indexes WHERE schemaname = 'recall' AND tablename = 'events' ORDER BY 1"
    during: list[list[str]] = []

    def look(read: int, written: int) -> None:
        during.append([x[0] for x in admin.execute(indexes)])

    with PostgresBackend(db) as backend:
        full = [r[0] for r in admin.execute(indexes)]
        assert "events_pair" in full and "events_tsv" in full
        store = backend.store("memories")
        store.append_many(_events(30), batch_size=10, progress=look)
        assert during[0] == ["events_id", "events_pkey"]
        assert [r[0] for r in admin.execute(indexes)] == full
        # into a database that holds events, nothing is dropped
        during.clear()
        store.append_many(_events(10, start=30), batch_size=5, progress=look)
        assert during == [full, full]
    # an import that died half-way: the next open with write access repairs it
    admin.execute("DROP INDEX recall.events_pair, recall.events_tsv")
    with PostgresBackend(db, read_only=True) as backend:
        assert len(backend.store("memories").pair_events("ana", ["likes"])) == 40  # slower, still right
    with PostgresBackend(db) as backend:
        assert [r[0] for r in admin.execute(indexes)] == full
        assert backend.store("memories").keyword_search("thing 3", 1)[0].event.value == "thing 3"


def test_rendered_search_terms_and_vectors_are_the_embedders(db: str, admin) -> None:
    """The COPY rows' terms and vectors are rendered from the sentence's tokens once
    (store.py, ``_index_fields``): byte for byte ``search_terms(search_text(e))`` and
    ``embed(event_text(e))``, here on texts with diacritics, case folding, cancelling
    dimensions, long sentences and none at all, and in the database after a bulk COPY."""
    from recall_engine.embed import embed_batch, event_text, search_text
    from recall_engine.storage.postgres.store import _index_fields, search_terms

    words = ["Crème", "brûlée", "İstanbul", "ǅemal", "straße", "ﬁne", "a_b", "٣", "e\u0301", "Ω", "x", "x", "y"]
    evs = [make_event("ana", "likes", "thing", T0), make_event("ana", "height_cm", 1.5e-7, T0, retraction=True)]
    evs.append(make_event("zoë", "likes", " ".join(f"w{i}" for i in range(200)), T0))  # most dimensions set
    evs.append(make_event("ana", "likes", "x x y y z", T0, evidence="x y"))
    for i in range(60):
        value = " ".join(words[(i + k) % len(words)] for k in range(1 + i % 7))
        evs.append(make_event("ana", "likes", value, T0 + i, evidence=" ".join(words[: i % 5])))
    for e in evs:
        terms, vector = _index_fields(e)
        assert terms == " ".join(search_terms(search_text(e)))
        assert vector == embed_batch([event_text(e)]).astype(">f4").tobytes()
    many = evs + _events(1200, start=100)  # more than a render slice: rendered while sending
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        assert store.append_many(many, batch_size=2000) == len({e.id for e in many})
        rows = dict(admin.execute("SELECT id, terms FROM recall.events").fetchall())
        assert all(rows[e.id] == " ".join(search_terms(search_text(e))) for e in many)
        vec = store.vector_search(embed(event_text(evs[3])), 1)[0]
        assert vec.event.id == evs[3].id and abs(vec.score - 1.0) < 1e-6


def test_a_bulk_copy_refused_while_sending_writes_nothing(db: str, monkeypatch) -> None:
    """A refusal found while a big batch is rendered and sent on the sender thread: the
    message is the append's, and nothing of the batch (or, atomic, of the import) is written."""
    import dataclasses

    monkeypatch.setattr("recall_engine.records.instant_problem", lambda ns: None)
    evs = _events(1500)
    evs[1200] = dataclasses.replace(evs[1200], observed_at=2**63 + 5)
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        for atomic in (False, True):
            with pytest.raises(StorageError) as err:
                store.append_many(evs, batch_size=2000, atomic=atomic)
            assert str(err.value) == (
                f"the append to collection 'memories' of the store at {backend.url_for_display} was refused: "
                f"event {evs[1200].id!r} has an instant ({2**63 + 5} ns) that does not fit a 64-bit integer "
                "(instants run from 1677 to 2262); nothing of it was written"
            )
            assert store.count() == 0 and store.position() == 0
        bad = make_event("ana", "likes", "bad", T0 + 5, confidence=2.0)
        for atomic in (False, True):
            with pytest.raises(InvalidEvent) as err2:
                store.append_many(_events(1000) + [bad] + _events(500, start=2000), batch_size=2000, atomic=atomic)
            assert str(err2.value) == f"event {bad.id!r} has invalid confidence"
            assert store.count() == 0
        assert store.append_many(_events(1500), batch_size=2000, atomic=True) == 1500  # the connection still works
        assert [e.id for e in store.all_events()] == [e.id for e in _events(1500)]
        assert store.index_problems() == []


def test_an_atomic_bulk_import_is_one_copy_with_a_recorded_instant_per_batch(db: str, admin, monkeypatch) -> None:
    """``append_many(atomic=True)`` writes every batch's new events in one COPY (one run of
    the subject-counts trigger), yet each batch keeps its own recorded instant, ids stored
    before or earlier in the import are skipped, progress is called batch by batch, and a
    batch holding something other than an event refuses the whole import when reached."""
    from recall_engine import clock

    monkeypatch.setattr(clock, "now_ns", lambda: T0 + 10**12)
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        store.append(_events(2))  # recorded at T0 + 10**12
        evs = _events(1300, subject="bo") + _events(4) + _events(700, subject="bo")  # 2 stored, 700 repeated
        evs[1000] = make_event("cy", "likes", "x", T0, replaces=[Replace("dislikes", "x")])
        seen: list[tuple[int, int]] = []
        copies: list[str] = []
        real = type(store)._copy.__func__  # the classmethod's function

        def counted(cls, cur, statement, rows, ahead=False):
            copies.append(statement.split()[1])
            return real(cls, cur, statement, rows, ahead)

        monkeypatch.setattr(type(store), "_copy", classmethod(counted))
        written = store.append_many(evs, batch_size=600, progress=lambda r, w: seen.append((r, w)), atomic=True)
        assert written == 1302 and copies == ["recall.events", "recall.event_replaces"]
        assert seen == [(600, 600), (1200, 1200), (1800, 1302), (2004, 1302)]
        recorded = admin.execute("SELECT recorded_at, count(*) FROM recall.events GROUP BY 1 ORDER BY 1").fetchall()
        assert recorded == [(T0 + 10**12, 2), (T0 + 10**12 + 1, 600), (T0 + 10**12 + 2, 600), (T0 + 10**12 + 3, 102)]
        assert store.subject_counts() == {"ana": 4, "bo": 1299, "cy": 1}
        assert [e.id for e in store.replacing_events("cy", ["dislikes"])] == [evs[1000].id]
        assert store.count() == 1304 and store.index_problems() == []
        seen.clear()
        with pytest.raises(InvalidInput, match="append takes events, got str"):
            store.append_many(
                [*_events(700, subject="dee"), "not an event"],
                batch_size=600,
                progress=lambda r, w: seen.append((r, w)),
                atomic=True,
            )  # type: ignore[list-item]
        assert seen == [(600, 600)] and store.count() == 1304 and "dee" not in store.subject_counts()


def test_an_error_while_sending_a_copy_is_the_same_on_the_sender_thread(db: str, monkeypatch) -> None:
    """A driver error while COPY data is sent (here made up: the third write fails) reads the
    same whether the rows were sent on the calling thread (a small batch) or on the sender
    thread (a bulk one), and nothing of either is written."""
    from recall_engine.storage.postgres import store as pg_store

    monkeypatch.setattr(pg_store, "COPY_CHUNK", 20_000)  # several writes for either size
    real = psycopg.Copy.write
    writes: list[int] = []

    def failing(self, buffer):
        writes.append(len(buffer))
        if len(writes) == 3:
            raise psycopg.OperationalError("the server closed the connection unexpectedly")
        return real(self, buffer)

    messages = []
    with PostgresBackend(db) as backend:
        store = backend.store("memories")
        for n in (400, 1500):  # at most a render slice: this thread; more: the sender thread
            writes.clear()
            monkeypatch.setattr(psycopg.Copy, "write", failing)
            with pytest.raises(StorageError) as err:
                store.append_many(_events(n), batch_size=2000)
            monkeypatch.setattr(psycopg.Copy, "write", real)
            messages.append(str(err.value))
            assert store.count() == 0 and store.position() == 0
        assert messages[0] == messages[1] and "was lost or refused" in messages[0]
        assert store.append_many(_events(1500), batch_size=2000) == 1500
