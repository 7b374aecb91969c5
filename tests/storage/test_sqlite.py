"""The SQLite backend's own behaviour: URLs, the file, raw SQL against the database itself,
crashes, several processes, read-only files, the bulk path and the vector index."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_engine.embed import embed, embed_batch, event_text
from recall_engine.errors import InvalidEvent, InvalidInput, NotFound, ReadOnlyStore, StorageError
from recall_engine.instants import NS, parse_instant
from recall_engine.records import Replace, make_event
from recall_engine.storage import display_url, open_backend
from recall_engine.storage.common import SCHEMA_VERSION
from recall_engine.storage.sqlite.backend import SQLiteBackend
from recall_engine.storage.sqlite.schema import SECONDARY_INDEXES
from recall_engine.storage.sqlite.vectors import SparseVectors, encode_rows, encode_texts
from recall_engine.storage.urls import ACCEPTED_FORMS

ROOT = Path(__file__).resolve().parents[2]
T0 = parse_instant("2026-03-01T09:00:00Z")
HOUR = 3600 * NS


def ev(subject, predicate, value, hours=0, **kw):
    return make_event(subject, predicate, value, T0 + int(hours * HOUR), **kw)


def raw(path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), isolation_level=None)


def run_python(code: str, *args: str, drop_privileges: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", textwrap.dedent(code), *args]
    if drop_privileges and os.geteuid() == 0:
        # root ignores file permissions; without its capabilities it obeys them like anyone
        cmd = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", *cmd]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "recall.db"


# --- URLs ------------------------------------------------------------------------


def test_no_url_opens_recall_db_in_the_user_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for url in (None, ""):
        with open_backend(url) as b:
            assert b.path == str(tmp_path / "data" / "recall-admin" / "recall.db")
            b.store("memories").append([ev("user", "likes", "tea")])
    assert (tmp_path / "data" / "recall-admin" / "recall.db").is_file()


def test_sqlite_urls_and_plain_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    cases = {
        "sqlite:///rel/a.db": tmp_path / "rel" / "a.db",
        f"sqlite:///{tmp_path}/b.db": tmp_path / "b.db",
        "c.db": tmp_path / "c.db",
        str(tmp_path / "rel" / "d.db"): tmp_path / "rel" / "d.db",
    }
    for url, path in cases.items():
        with open_backend(url) as b:
            assert isinstance(b, SQLiteBackend)
            assert b.path == str(path)
            assert b.url_for_display == f"sqlite:///{path}"
        assert path.is_file()


def test_a_path_in_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(StorageError) as err:
        open_backend(f"sqlite:///{tmp_path}/nowhere/x.db")
    assert str(err.value) == (
        f"cannot create the store at sqlite:///{tmp_path}/nowhere/x.db: the folder {tmp_path}/nowhere does not exist"
    )


@pytest.mark.parametrize(
    "url, message",
    [
        (
            "mysql://ann:s3cret@db.example/recall",
            f"unsupported store URL 'mysql://ann:***@db.example/recall' (scheme 'mysql'); accepted: {ACCEPTED_FORMS}",
        ),
        (
            "sqlite://relative.db",
            "store URL 'sqlite://relative.db' has no path; write sqlite:///relative/path or "
            f"sqlite:////absolute/path; accepted: {ACCEPTED_FORMS}",
        ),
        (
            "sqlite:///",
            f"store URL 'sqlite:///' names no file (an in-memory store is not supported); accepted: {ACCEPTED_FORMS}",
        ),
        (
            "host=db.example user=ann password=s3cret dbname=recall",
            "'host=db.example user=ann password=*** dbname=recall' looks like a PostgreSQL keyword connection "
            f"string; write it as postgresql://USER@HOST/DATABASE; accepted: {ACCEPTED_FORMS}",
        ),
    ],
)
def test_unsupported_urls_are_refused_with_the_accepted_forms_and_no_password(url, message):
    with pytest.raises(InvalidInput) as err:
        open_backend(url)
    assert str(err.value) == message
    assert "s3cret" not in str(err.value)


def test_accepted_forms_name_every_form():
    assert ACCEPTED_FORMS == (
        "nothing (the default SQLite file in the user data folder), a file path, "
        "sqlite:///PATH (sqlite:////ABSOLUTE/PATH), or postgresql://USER@HOST/DATABASE (postgres:// also works)"
    )


@pytest.mark.parametrize(
    "url, shown",
    [
        ("postgresql://ann:s3cret@db.example:5432/recall", "postgresql://ann:***@db.example:5432/recall"),
        ("postgres://ann:p%40ss@db/recall?sslmode=require", "postgres://ann:***@db/recall?sslmode=require"),
        (
            "postgresql://ann@db/recall?password=s3cret&sslmode=require",
            "postgresql://ann@db/recall?password=***&sslmode=require",
        ),
        ("postgresql://ann@db/recall", "postgresql://ann@db/recall"),
        ("postgresql://postgres:@/postgres?host=/tmp/pg", "postgresql://postgres:***@/postgres?host=/tmp/pg"),
        ("postgresql://ann:s3cret@[::1", "postgresql://ann:***@[::1"),  # unparseable, still hidden
        ("host=db password='s 3cret' user=ann", "host=db password=*** user=ann"),
        ("sqlite:////tmp/x.db", "sqlite:////tmp/x.db"),
        (None, "(default)"),
    ],
)
def test_display_url_hides_passwords(url, shown):
    assert display_url(url) == shown


# --- the file ----------------------------------------------------------------------


def test_connection_settings(db):
    with open_backend(str(db)) as b:
        conn = b.conn()
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
        assert conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
        assert conn.execute("PRAGMA busy_timeout").fetchone() == (10_000,)
        assert conn.execute("SELECT version FROM schema_meta").fetchone() == (SCHEMA_VERSION,)


def test_the_database_itself_refuses_update_and_delete_of_events(db):
    with open_backend(str(db)) as b:
        b.store("memories").append([ev("user", "likes", "tea", replaces=[Replace("likes", "coffee")])])
    conn = raw(db)
    for sql in (
        "UPDATE events SET body = '{}'",
        "DELETE FROM events",
        "UPDATE event_replaces SET predicate = 'x'",
        "DELETE FROM event_replaces",
        "UPDATE event_vectors_1 SET observed_at = 0",
        "DELETE FROM event_vectors_1",
        "DELETE FROM collections",
    ):
        with pytest.raises(sqlite3.IntegrityError) as err:
            conn.execute(sql)
        assert str(err.value) == "events are append-only", sql
    with pytest.raises(sqlite3.OperationalError) as err:
        conn.execute("DELETE FROM event_text_1")
    assert str(err.value) == "cannot DELETE from contentless fts5 table: event_text_1"
    assert conn.execute("SELECT COUNT(*) FROM events").fetchone() == (1,)


def _corrupt(db, event_id: str, body: str) -> None:
    conn = raw(db)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET body = ? WHERE id = ?", (body, event_id))
    conn.close()


def test_a_row_corrupted_behind_the_engines_back_refuses_the_read(db):
    good, bad = ev("user", "prefers_editor", "vim"), ev("user", "prefers_editor", "zed", 1)
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append([good, bad, ev("user", "likes", "tea", 2)])
        assert len(store.pair_events("user", ["prefers_editor"])) == 2  # decoded once, remembered
        body = json.loads(raw(db).execute("SELECT body FROM events WHERE id = ?", (bad.id,)).fetchone()[0])
        _corrupt(db, bad.id, json.dumps({**body, "kind": "opinion"}))
        expected = (
            f"stored event {bad.id!r} in collection 'memories' does not decode: "
            f"event {bad.id!r} has invalid kind; the read is refused"
        )
        for read in (
            lambda: store.pair_events("user", ["prefers_editor"]),
            lambda: store.subject_events("user"),
            lambda: store.events_by_id([good.id, bad.id]),
            lambda: list(store.all_events()),
            lambda: list(store.predicate_events(["prefers_editor"])),
            lambda: store.keyword_search("zed", 5),
        ):
            with pytest.raises(InvalidEvent) as err:
                read()
            assert str(err.value) == expected
        assert store.pair_events("user", ["likes"])[0].value == "tea"  # other pairs still read


def test_a_row_that_is_not_json_or_names_another_event_is_refused(db):
    a, b_ = ev("user", "likes", "tea"), ev("user", "likes", "coffee", 1)
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append([a, b_])
        _corrupt(db, a.id, "{not json")
        with pytest.raises(InvalidEvent) as err:
            store.pair_events("user", ["likes"])
        assert str(err.value) == (
            f"stored event {a.id!r} in collection 'memories' does not decode: its JSON is malformed "
            "(Expecting property name enclosed in double quotes at character 1); the read is refused"
        )
        other = raw(db).execute("SELECT body FROM events WHERE id = ?", (b_.id,)).fetchone()[0]
        raw(db).execute("UPDATE events SET body = ? WHERE id = ?", (other, a.id))
        with pytest.raises(InvalidEvent) as err:
            store.pair_events("user", ["likes"])
        assert str(err.value) == (
            f"stored event {a.id!r} in collection 'memories' does not decode: "
            f"its body holds the id {b_.id!r}; the read is refused"
        )


def test_a_store_with_a_newer_schema_is_refused(db):
    with open_backend(str(db)) as b:
        b.store("memories").append([ev("user", "likes", "tea")])
    raw(db).execute("UPDATE schema_meta SET version = ?", (SCHEMA_VERSION + 1,))
    message = (
        f"the store at sqlite:///{db} has schema version {SCHEMA_VERSION + 1}, newer than this release of "
        f"recall-admin supports ({SCHEMA_VERSION}); upgrade recall-admin to open it"
    )
    for read_only in (False, True):
        with pytest.raises(StorageError) as err:
            open_backend(str(db), read_only=read_only)
        assert str(err.value) == message


def test_files_that_are_not_recall_stores_are_refused(tmp_path):
    other = tmp_path / "other.db"
    raw(other).execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(StorageError) as err:
        open_backend(str(other))
    assert str(err.value) == (
        f"the file at sqlite:///{other} is an SQLite database but not a recall store "
        "(it has tables invoices and no schema_meta)"
    )
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database at all, but it is long enough to be read" * 20)
    with pytest.raises(StorageError) as err:
        open_backend(str(text))
    assert str(err.value) == f"cannot open the store at sqlite:///{text}: file is not a database"


def test_missing_secondary_indexes_are_rebuilt_on_open(db):
    with open_backend(str(db)) as b:
        b.store("memories").append([ev("user", "likes", "tea")])
    conn = raw(db)
    conn.execute("DROP INDEX events_pair")
    conn.execute("DROP INDEX events_value")
    with open_backend(str(db)):
        pass
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert set(SECONDARY_INDEXES) <= names


def test_pair_reads_use_an_index(db):
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append([ev("user", "likes", "tea")])
        conn = b.conn()
        plan = " ".join(
            r[3]
            for r in conn.execute(
                "EXPLAIN QUERY PLAN SELECT position, id, observed_at, body FROM events WHERE collection_id = 1 "
                "AND subject = 'user' AND predicate IN ('likes', 'enjoys') ORDER BY +position LIMIT 5"
            )
        )
        assert "USING INDEX events_p" in plan and "events_position" not in plan


def test_a_pair_read_of_one_predicate_takes_its_rows_in_index_order_without_a_sort(db):
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append([ev(f"s{i % 7}", ("likes", "enjoys")[i % 2], f"v{i}", i) for i in range(60)])
        conn = b.conn()
        conn.execute("ANALYZE")  # the plan holds with statistics too
        run: list[str] = []
        conn.set_trace_callback(run.append)  # the statement as executed, its values in place
        try:
            got = store.pair_events("s3", ["likes"])
        finally:
            conn.set_trace_callback(None)
        plan = " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + run[-1]))
        assert "USING INDEX events_p" in plan and "TEMP B-TREE" not in plan, plan
        positions = [
            r[0] for r in conn.execute("SELECT position FROM events WHERE subject = 's3' AND predicate = 'likes'")
        ]
        assert [e.value for e in got] == [f"v{i}" for i in range(60) if i % 7 == 3 and i % 2 == 0]
        assert len(got) == len(positions) > 3


# --- read-only ---------------------------------------------------------------------


def test_read_only_opens_the_file_read_only(db):
    with open_backend(str(db)) as b:
        b.store("memories").append([ev("user", "likes", "tea")])
    with open_backend(str(db), read_only=True) as ro:
        store = ro.store("memories")
        with pytest.raises(ReadOnlyStore) as err:
            store.append_many([ev("user", "likes", "coffee", 1)])
        assert str(err.value) == (
            "the store is open read-only; writes are refused (open it without --read-only to write)"
        )
        with pytest.raises(sqlite3.OperationalError):  # the connection itself cannot write
            ro.conn().execute("INSERT INTO collections (name) VALUES ('x')")
        with pytest.raises(NotFound) as nf:
            ro.store("other")
        assert str(nf.value) == f"no collection 'other' in the store at sqlite:///{db}; collections: memories"
    assert raw(db).execute("SELECT COUNT(*) FROM events").fetchone() == (1,)


def test_read_only_needs_an_existing_file(db):
    with pytest.raises(StorageError) as err:
        open_backend(str(db), read_only=True)
    assert str(err.value) == f"no store at sqlite:///{db}; there is nothing to open read-only"
    assert not db.exists()


def test_a_file_this_process_cannot_write_opens_read_only(tmp_path):
    db = tmp_path / "shared.db"
    with open_backend(str(db)) as b:
        b.store("memories").append([ev("user", "likes", "tea")])
    db.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        out = run_python(
            """
            import sys
            from recall_engine.errors import ReadOnlyStore
            from recall_engine.records import make_event
            from recall_engine.storage import open_backend
            b = open_backend(sys.argv[1])
            s = b.store("memories")
            print(b.read_only, s.read_only, s.count())
            try:
                s.append([make_event("user", "likes", "coffee", 1)])
            except ReadOnlyStore as e:
                print(e)
            """,
            str(db),
            drop_privileges=True,
        )
    finally:
        db.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "True True 1",
        f"the store at sqlite:///{db} is not writable by this process (permission denied), "
        "so it is open read-only; writes are refused",
    ]


# --- atomicity, crashes, several processes --------------------------------------------


def test_a_batch_refused_by_the_database_leaves_nothing(db):
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append([ev("user", "likes", "tea")])
        raw(db).execute(
            "CREATE TRIGGER refuse_boom BEFORE INSERT ON events WHEN NEW.subject = 'boom' "
            "BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END"
        )
        first = ev("user", "likes", "coffee", 1, replaces=[Replace("likes", "tea")])
        with pytest.raises(StorageError) as err:
            store.append([first, ev("boom", "likes", "tea", 2)])
        assert str(err.value) == (
            f"the append to collection 'memories' of the store at sqlite:///{db} was refused: "
            "refused by a test trigger; nothing of it was written"
        )
        assert store.count() == 1 and store.events_by_id([first.id]) == []
        assert store.replacing_events("user", ["likes"]) == [] and store.keyword_search("coffee", 3) == []
        conn = raw(db)
        for table in ("events", "event_vectors_1", "event_replaces"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == (
                0 if table == "event_replaces" else 1
            )


def test_a_writer_that_cannot_get_the_write_lock_gives_up_and_writes_nothing(db):
    with open_backend(str(db)) as b:
        store = b.store("memories")
        b.conn().execute("PRAGMA busy_timeout = 200")  # 10 s by default
        other = raw(db)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            with pytest.raises(StorageError) as err:
                store.append([ev("user", "likes", "tea")])
        finally:
            other.execute("ROLLBACK")
        assert str(err.value) == (
            f"cannot write to collection 'memories' of the store at sqlite:///{db}: database is locked "
            "(another writer held the write lock for more than 0.2 s); nothing was written"
        )
        assert store.count() == 0
        store.append([ev("user", "likes", "tea")])
        assert store.count() == 1


CRASH = """
import os, sys
from recall_engine.records import make_event
from recall_engine.storage import open_backend
b = open_backend(sys.argv[1])
s = b.store("memories")
conn = b.conn()
conn.create_function("crash", 0, lambda: os._exit(7))
conn.execute("CREATE TEMP TRIGGER crash_now BEFORE INSERT ON main.events WHEN NEW.subject = 'crash' "
             "BEGIN SELECT crash(); END")
s.append([make_event("user", "likes", "coffee", 10), make_event("crash", "likes", "tea", 11)])
"""


def test_a_process_that_dies_in_the_middle_of_a_batch_leaves_nothing_of_it(db):
    with open_backend(str(db)) as b:
        b.store("memories").append([ev("user", "likes", "tea")])
    out = run_python(CRASH, str(db))
    assert out.returncode == 7, out.stderr
    with open_backend(str(db)) as b:
        store = b.store("memories")
        assert store.count() == 1
        assert [e.value for e in store.all_events()] == ["tea"]
        assert b.conn().execute("PRAGMA integrity_check").fetchone() == ("ok",)
        store.append([ev("user", "likes", "coffee", 1)])
        assert store.count() == 2


WRITER = """
import sys
from recall_engine.records import make_event
from recall_engine.storage import open_backend
b = open_backend(sys.argv[1])
s = b.store("memories")
who = sys.argv[2]
for i in range(60):
    s.append([make_event(who, "counts", i, 1_700_000_000_000_000_000 + i)])
print("done")
"""


def test_several_processes_writing_one_file_lose_nothing(db):
    # they also race to create the file, its schema and the collection
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), who],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for who in ("ann", "bob", "cid")
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "done", err
    with open_backend(str(db)) as b:
        store = b.store("memories")
        assert store.count() == 180
        assert store.subjects() == [("ann", 60), ("bob", 60), ("cid", 60)]
        positions = [t.position for t in store.touched_since(0)]
        assert positions == sorted(set(positions)) and len(positions) == 180


# --- the bulk path ---------------------------------------------------------------------


def test_append_many_imports_in_batches_and_skips_stored_ids(db):
    events = [ev(f"user {i % 7}", "likes", f"thing {i}", i) for i in range(23)]
    calls = []
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append(events[:3])
        n = store.append_many(iter(events), batch_size=10, progress=lambda read, written: calls.append((read, written)))
        assert n == 20
        assert calls == [(10, 7), (20, 17), (23, 20)]
        assert store.count() == 23
        assert [e.id for e in store.all_events()] == [e.id for e in events]
        assert store.append_many(events) == 0
        with pytest.raises(InvalidInput) as err:
            store.append_many(events, batch_size=0)
        assert str(err.value) == "batch_size must be at least 1, got 0"


def test_append_many_into_an_empty_file_builds_the_indexes_at_the_end(db):
    events = [ev(f"user {i % 5}", "likes", f"thing {i}", i) for i in range(50)]
    with open_backend(str(db)) as b:
        store = b.store("memories")
        seen = []

        def progress(read, written):
            names = {r[0] for r in raw(db).execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
            seen.append(bool(set(SECONDARY_INDEXES) & names))

        assert store.append_many(events, batch_size=20, progress=progress) == 50
        assert seen == [False, False, False]  # dropped while importing
        names = {r[0] for r in b.conn().execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert set(SECONDARY_INDEXES) <= names
        assert len(store.pair_events("user 1", ["likes"])) == 10


def test_append_many_is_atomic_per_batch(db):
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append([ev("user", "likes", "tea")])
        raw(db).execute(
            "CREATE TRIGGER refuse_boom BEFORE INSERT ON events WHEN NEW.subject = 'boom' "
            "BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END"
        )
        events = [ev("user", "likes", f"x{i}", i + 1) for i in range(3)] + [ev("boom", "likes", "y", 9)]
        with pytest.raises(StorageError):
            store.append_many(events, batch_size=2)
        assert [e.value for e in store.all_events()] == ["tea", "x0", "x1"]  # the first batch stayed


def test_append_many_atomic_writes_nothing_when_a_late_batch_fails(db):
    """``import`` of a file: one transaction for every batch, the dropped indexes included."""
    with open_backend(str(db)) as b:
        store = b.store("memories")
        raw(db).execute(
            "CREATE TRIGGER refuse_boom BEFORE INSERT ON events WHEN NEW.subject = 'boom' "
            "BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END"
        )
        events = [ev("user", "likes", f"x{i}", i + 1) for i in range(5)] + [ev("boom", "likes", "y", 9)]
        seen = []
        with pytest.raises(StorageError) as err:
            store.append_many(events, batch_size=2, atomic=True, progress=lambda r, w: seen.append((r, w)))
        assert "refused by a test trigger" in str(err.value) and str(err.value).endswith("nothing of it was written")
        assert seen == [(2, 2), (4, 4)]  # two batches were written before the third failed
        assert store.count() == 0 and list(store.all_events()) == []
        names = {r[0] for r in b.conn().execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert set(SECONDARY_INDEXES) <= names  # the drop was taken back with the rows
        assert store.append_many(events[:5], batch_size=2, atomic=True) == 5
        assert [e.value for e in store.all_events()] == [f"x{i}" for i in range(5)]
        assert store.index_problems() == []


def _rows_of(conn: sqlite3.Connection, cid: int) -> dict[str, list[tuple]]:
    """A collection's rows in every table an append writes, positions as ranks in the collection."""
    ranked = "(SELECT position, ROW_NUMBER() OVER (ORDER BY position) AS n FROM events WHERE collection_id = ?) AS r"
    return {
        "events": conn.execute(
            "SELECT n, id, subject, predicate, value_key, retraction, observed_at, body FROM events "
            f"JOIN {ranked} USING (position) ORDER BY position",
            (cid,),
        ).fetchall(),
        "order": conn.execute(
            "SELECT id FROM events WHERE collection_id = ? ORDER BY recorded_at, position", (cid,)
        ).fetchall(),
        "vectors": conn.execute(
            f"SELECT n, observed_at, vector FROM event_vectors_{cid} JOIN {ranked} USING (position) ORDER BY position",
            (cid,),
        ).fetchall(),
        "words": conn.execute(f"SELECT term, doc, cnt FROM event_vocab_{cid} ORDER BY term").fetchall(),
        "replaces": conn.execute(
            "SELECT subject, predicate, event_id FROM event_replaces WHERE collection_id = ? ORDER BY 1, 2, 3", (cid,)
        ).fetchall(),
        "subjects": conn.execute(
            "SELECT subject, events FROM subject_counts WHERE collection_id = ? ORDER BY subject", (cid,)
        ).fetchall(),
        "count": conn.execute("SELECT events FROM collections WHERE id = ?", (cid,)).fetchall(),
    }


def test_an_atomic_append_many_writes_what_appends_write_and_keeps_the_guard(db):
    """The atomic bulk path (``import``) places its batches from watermarks read once, writes
    the counts and replaces rows at the end and lifts the guard trigger while it inserts:
    the rows are a plain append's, into a collection that holds events and one that does
    not, and the guard is back as stored, after a failed import too."""
    held = [ev(f"user {i % 3}", "likes", f"x{i}", i) for i in range(4)]
    batch = (
        [ev(f"user {i % 5}", "likes", f"y{i}", 10 + i) for i in range(9)]
        + held[1:3]  # stored before: skipped
        + [ev("user 1", "likes", "tea", 30, replaces=[Replace("likes", "y1"), Replace("likes", "x1")])]
        + [ev("user 2", "likes", "y2", 12)]  # a repeat within the import, in a later batch
        + [ev(f"user {i}", "uses", "python", 40 + i) for i in range(4)]
    )
    with open_backend(str(db)) as b:
        conn = b.conn()
        guard = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events_no_replace'").fetchone()
        for name, first in (("held", held), ("fresh", [])):
            plain, bulk = b.store(f"{name}-appended"), b.store(f"{name}-imported")
            for store in (plain, bulk):
                store.append(first)
            for e in batch:
                plain.append([e])
            assert bulk.append_many(batch, batch_size=4, atomic=True) == len(batch) - (2 if first else 0) - 1
            assert _rows_of(conn, bulk.cid) == _rows_of(conn, plain.cid)
            assert bulk.index_problems() == []
        raw(db).execute(
            "CREATE TRIGGER refuse_boom BEFORE INSERT ON events WHEN NEW.subject = 'boom' "
            "BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END"
        )
        with pytest.raises(StorageError):
            b.store("refused").append_many([*batch, ev("boom", "likes", "y", 9)], batch_size=4, atomic=True)
        assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events_no_replace'").fetchone() == guard
    with raw(db) as c:  # the guard refuses as it always has
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            c.execute("INSERT OR REPLACE INTO events SELECT * FROM events LIMIT 1")


# --- search details ----------------------------------------------------------------------


def test_keyword_search_ranks_rare_words_and_fills_with_common_ones(db):
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append([ev("user", "likes", f"thing {i}", i) for i in range(40)])
        target = ev("user", "prefers_editor", "neovim", 50)
        store.append([target])
        hits = store.keyword_search("does the user like neovim", 3)
        assert hits[0].event.id == target.id and hits[0].score > 0
        # "user" is in every event: no weight, so those fill the list newest first, score 0
        assert [(h.event.observed_at, h.score) for h in hits[1:]] == [(T0 + 39 * HOUR, 0.0), (T0 + 38 * HOUR, 0.0)]
        only_common = store.keyword_search("user", 2, until=T0 + 10 * HOUR)
        assert [(h.event.observed_at, h.score) for h in only_common] == [(T0 + 10 * HOUR, 0.0), (T0 + 9 * HOUR, 0.0)]


def test_keyword_search_folds_diacritics(db):
    with open_backend(str(db)) as b:
        store = b.store("memories")
        cafe = ev("user", "likes", "Café Noir")
        store.append([cafe, ev("user", "likes", "tea", 1)])
        assert [h.event.id for h in store.keyword_search("cafe", 5)] == [cafe.id]
        assert [h.event.id for h in store.keyword_search("CAFÉ", 5)] == [cafe.id]


def test_vector_search_matches_a_dense_brute_force(db):
    rng = np.random.default_rng(3)
    words = ["editor", "vim", "zed", "tea", "coffee", "berlin", "paris", "hiking", "rust", "python", "cats", "dogs"]
    events = [
        ev(f"user {i % 9}", "likes", " ".join(rng.choice(words, size=int(rng.integers(1, 4)))), i) for i in range(300)
    ]
    with open_backend(str(db)) as b:
        store = b.store("memories")
        store.append(events[:200])
        store.vector_search(embed("warm up"), 1)  # the index is loaded, the rest arrives as a tail
        store.append(events[200:])
        unique = {e.id: e for e in events}
        stored = [e for e in store.all_events()]
        assert len(stored) == len(unique)
        matrix = np.stack([embed(event_text(e)) for e in stored])
        for text in ("vim editor", "tea in paris", "rust python cats", "user 3 likes dogs"):
            q = embed(text)
            dense = matrix @ q
            order = sorted(range(len(stored)), key=lambda i: (-round(float(dense[i]), 5), i))[:10]
            hits = store.vector_search(q, 10)
            assert [round(h.score, 5) for h in hits] == [round(float(dense[i]), 5) for i in order], text
            assert {h.event.id for h in hits if h.score > dense[order[-1]] + 1e-5} <= {stored[i].id for i in order}


def test_sparse_vectors_score_like_a_matrix_product_before_and_after_merging():
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((120, 256)).astype(np.float32)
    rows[rows < 1.2] = 0  # mostly sparse
    rows[7] = rng.standard_normal(256).astype(np.float32)  # and one dense row
    vs = SparseVectors()
    vs.add(list(range(1, 61)), [0] * 60, [r.astype("<f4").tobytes() for r in rows[:60]])
    q = rng.standard_normal(256).astype(np.float32)
    np.testing.assert_allclose(vs.scores(q), rows[:60] @ q, rtol=1e-5, atol=1e-5)
    vs._merge()
    vs.add(list(range(61, 121)), list(range(60)), [r.astype("<f4").tobytes() for r in rows[60:]])
    np.testing.assert_allclose(vs.scores(q), rows @ q, rtol=1e-5, atol=1e-5)
    vs._merge()
    np.testing.assert_allclose(vs.scores(q), rows @ q, rtol=1e-5, atol=1e-5)
    top = vs.top(q, 5, since=10, until=20)  # rows 70..80 by observed_at
    expected = sorted(range(70, 81), key=lambda i: -float(rows[i] @ q))[:5]
    assert [p for p, _ in top] == [i + 1 for i in expected]
    with pytest.raises(ValueError):
        vs.add([121], [0], [b"\x00" * 12])


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(
        st.one_of(
            st.text(max_size=60),
            st.lists(
                st.sampled_from(["a", "vim", "Straße", "日本", "x1", "tech-5", "café", "_", "0"]), max_size=20
            ).map(" ".join),
        ),
        max_size=8,
    )
)
def test_vectors_written_on_append_are_the_embedders_byte_for_byte(texts):
    # the append path encodes without numpy's dense matrix; search reads what the embedder would give
    long = " ".join(f"w{i}" for i in range(400))  # too many dimensions for the sparse form
    for batch in (texts, [*texts, long, "", "a a"]):
        assert encode_texts(batch) == encode_rows(embed_batch(batch))
