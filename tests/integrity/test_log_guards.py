"""The log cannot be rewritten in place, and `recall-admin verify` shows what was (issue 11).

Attacks run as an adversary with the file or a database login would: raw SQL on the
SQLite file, a superuser on PostgreSQL; the CLI runs in-process on the real store."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
from urllib.parse import urlsplit

import psycopg
import pytest
from typer.testing import CliRunner

from recall_admin.cli import app
from recall_engine.errors import StorageError
from recall_engine.instants import parse_instant
from recall_engine.records import event_id, make_event
from recall_engine.storage import open_backend
from recall_engine.storage.sqlite.schema import ADDED_TRIGGERS

T0 = parse_instant("2026-03-01T09:00:00Z")
_names = itertools.count()
REGISTRY = "registry: t\npredicates:\n  prefers_editor: {cardinality: single}\n  likes: {cardinality: multi}\n"


def run(url: str, *args: str):
    r = CliRunner().invoke(app, ["--store", url, "--json", *args])
    assert "Traceback" not in r.stdout + r.stderr
    return r.exit_code, json.loads(r.stdout)


def seeded(url: str) -> None:
    with open_backend(url) as b:
        b.store("memories").append(
            [make_event("carol", "prefers_editor", "vim", T0), make_event("carol", "likes", "tea", T0 + 1)]
        )


def rewritten_body(body: str, value: str) -> tuple[str, str]:
    """The body with another value and the id recomputed from the new content."""
    doc = json.loads(body)
    doc["value"] = value
    doc["id"] = event_id(doc["subject"], doc["predicate"], value, False, parse_instant(doc["observed_at"]))
    return doc["id"], json.dumps(doc, separators=(",", ":"))


# --- SQLite: the file refuses rewrites, opening for writing checks the guards ----------------


def test_insert_or_replace_cannot_rewrite_an_event_or_the_metadata(tmp_path):
    db = tmp_path / "r.db"
    seeded(str(db))
    conn = sqlite3.connect(db, isolation_level=None)
    row = conn.execute(
        "SELECT position, collection_id, id, subject, predicate, observed_at, body FROM events"
    ).fetchone()
    pos, cid, eid, subject, predicate, at, body = row
    for sql, args in (
        (  # the internal delete of REPLACE fires no DELETE trigger
            "INSERT OR REPLACE INTO events (position, collection_id, id, subject, predicate, value_key, "
            "retraction, observed_at, body) VALUES (?,?,?,?,?,'s:emacs',0,?,?)",
            (pos, cid, eid, subject, predicate, at, body.replace("vim", "emacs")),
        ),
        (  # same id, a fresh position
            "INSERT OR REPLACE INTO events (collection_id, id, subject, predicate, value_key, "
            "retraction, observed_at, body) VALUES (?,?,?,?,'s:emacs',0,?,?)",
            (cid, eid, subject, predicate, at, body.replace("vim", "emacs")),
        ),
        ("INSERT OR REPLACE INTO collections (id, name, events) VALUES (?, 'memories', 0)", (cid,)),
        ("UPDATE collections SET name = 'other' WHERE id = ?", (cid,)),
        ("UPDATE collections SET events = 0 WHERE id = ?", (cid,)),
        ("DELETE FROM schema_meta", ()),
        ("UPDATE schema_meta SET version = 0", ()),
        ("INSERT OR REPLACE INTO schema_meta (id, version) VALUES (1, 0)", ()),
    ):
        with pytest.raises(sqlite3.IntegrityError, match="events are append-only"):
            conn.execute(sql, args)
    assert conn.execute("SELECT body FROM events WHERE position = ?", (pos,)).fetchone()[0] == body
    assert conn.execute("SELECT name, events FROM collections").fetchall() == [("memories", 2)]
    with open_backend(str(db)) as b:  # and the engine still writes
        b.store("memories").append([make_event("carol", "likes", "coffee", T0 + 2)])
        assert b.store("memories").count() == 3


def test_a_dropped_trigger_is_found_when_the_store_is_opened_for_writing(tmp_path):
    db = tmp_path / "r.db"
    seeded(str(db))
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET body = replace(body, 'vim', 'nano') WHERE subject = 'carol'")
    with pytest.raises(StorageError) as err:
        open_backend(str(db))
    assert str(err.value).startswith(
        f"the store at sqlite:///{db} has lost its append-only guards (events_no_update missing or altered): "
        "it was changed outside recall-admin"
    )
    code, doc = run(str(db), "remember", "carol", "likes", "jam")
    assert (code, doc["error"]["code"]) == (1, "storage_error")
    # a trigger replaced by one that does nothing is caught the same way
    conn.execute("CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT 1; END")
    with pytest.raises(StorageError, match=r"\(events_no_update missing or altered\)"):
        open_backend(str(db))
    with open_backend(str(db), read_only=True) as b:  # verify still reads it
        assert b.store("memories").count() == 2


def test_a_store_from_before_the_insert_guards_gets_them_at_its_first_write_open(tmp_path):
    db = tmp_path / "r.db"
    seeded(str(db))
    conn = sqlite3.connect(db, isolation_level=None)
    names = [s.split()[2] for s in ADDED_TRIGGERS]
    for name in names:
        conn.execute(f"DROP TRIGGER {name}")
    open_backend(str(db)).close()
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert set(names) <= present
    conn.execute(f"DROP TRIGGER {names[0]}")  # one of them missing is tampering, not an old store
    with pytest.raises(StorageError, match=f"{names[0]} missing or altered"):
        open_backend(str(db))


def test_a_store_whose_version_row_was_removed_says_so(tmp_path):
    db = tmp_path / "r.db"
    seeded(str(db))
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TRIGGER schema_meta_no_delete")
    conn.execute("DELETE FROM schema_meta")
    for read_only in (False, True):
        with pytest.raises(StorageError) as err:
            open_backend(str(db), read_only=read_only)
        assert str(err.value) == (
            f"the store at sqlite:///{db} has lost its schema version (the row of schema_meta): it was changed "
            "outside recall-admin, so it cannot be opened or upgraded safely; restore it from a copy you trust"
        )


# --- verify, on both backends -------------------------------------------------------------


def _rewrite(url: str, eid: str, value: str) -> str:
    """Rewrite one event's value behind the engine's back, its id recomputed; the new id."""
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        body = conn.execute("SELECT body FROM events WHERE id = ?", (eid,)).fetchone()[0]
        new_id, new_body = rewritten_body(body, value)
        conn.execute("DROP TRIGGER events_no_update")
        conn.execute("UPDATE events SET id = ?, body = ? WHERE id = ?", (new_id, new_body, eid))
        conn.execute("CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT 1; END")
        return new_id
    with psycopg.connect(url, autocommit=True) as conn:
        body = conn.execute("SELECT body::text FROM recall.events WHERE id = %s", (eid,)).fetchone()[0]
        new_id, new_body = rewritten_body(body, value)
        conn.execute("ALTER TABLE recall.events DISABLE TRIGGER events_append_only")
        conn.execute("UPDATE recall.events SET id = %s, body = %s WHERE id = %s", (new_id, new_body, eid))
        conn.execute("ALTER TABLE recall.events ENABLE TRIGGER events_append_only")
        return new_id


def test_verify_prints_a_log_digest_and_a_kept_digest_catches_an_edit_with_a_recomputed_id(backend_url):
    seeded(backend_url)
    code, doc = run(backend_url, "verify")
    assert code == 0
    data = doc["data"]
    assert (data["valid"], data["events"], data["counted"], data["problems"]) == (True, 2, 2, [])
    kept = data["digest"]
    assert kept.startswith("recall-log-v1:2:")
    with open_backend(backend_url) as b:  # the log grows: the kept digest still matches its events
        b.store("memories").append([make_event("dave", "likes", "jam", T0 + 5)])
    assert run(backend_url, "verify", "--digest", kept)[1]["data"]["kept_matches"] is True
    with open_backend(backend_url) as b:
        eid = b.store("memories").subject_events("carol")[0].id
    _rewrite(backend_url, eid, "emacs")
    code, doc = run(backend_url, "verify")  # ids match their content again: only the digest shows it
    assert code == 0
    code, doc = run(backend_url, "verify", "--digest", kept)
    assert code == 1
    assert (doc["ok"], doc["data"]["valid"], doc["data"]["kept_matches"]) == (True, False, False)
    assert doc["data"]["problems"] == [
        {
            "position": None,
            "event_id": None,
            "subject": None,
            "reason": "the first 2 events of the log do not match the kept digest: "
            "events were changed since it was taken",
        }
    ]


def test_verify_lists_an_event_whose_id_does_not_match_with_its_position(backend_url):
    seeded(backend_url)
    with open_backend(backend_url) as b:
        store = b.store("memories")
        eid = store.subject_events("carol")[0].id
        position = store.touched_since(0)[0].position
    if backend_url.startswith("sqlite"):
        conn = sqlite3.connect(backend_url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("DROP TRIGGER events_no_update")
        conn.execute("UPDATE events SET body = replace(body, '\"vim\"', '\"nano\"') WHERE id = ?", (eid,))
    else:
        with psycopg.connect(backend_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE recall.events DISABLE TRIGGER events_append_only")
            conn.execute("UPDATE recall.events SET body = replace(body::text, '\"vim\"', '\"nano\"')::json")
            conn.execute("ALTER TABLE recall.events ENABLE TRIGGER events_append_only")
    r = CliRunner().invoke(app, ["--store", backend_url, "verify"])
    assert r.exit_code == 1
    assert "NOT verified" in r.stdout and str(position) in r.stdout
    assert r.stderr.startswith(f"collection 'memories' does not verify: {eid} of 'carol' at position {position}: ")
    code, doc = run(backend_url, "verify")
    assert doc["data"]["problems"] == [
        {
            "position": position,
            "event_id": eid,
            "subject": "carol",
            "reason": f"event {eid!r} has an id that does not match its content (subject, predicate, value, "
            "retraction and instant); it was changed after it was written",
        }
    ]


def test_verify_refuses_a_digest_that_is_not_one(sqlite_url):
    seeded(sqlite_url)
    code, doc = run(sqlite_url, "verify", "--digest", "sha256:abc")
    assert (code, doc["error"]["code"]) == (1, "invalid_input")
    assert doc["error"]["message"] == (
        "a log digest has the form recall-log-v1:<events>:<64 hex digits>, got 'sha256:abc'"
    )


# --- PostgreSQL: roles separated as docs/storage.md sets them up ---------------------------


def _pg_role(admin, name: str, *options: str) -> None:
    with contextlib.suppress(psycopg.errors.DuplicateObject):
        admin.execute(f"CREATE ROLE {name} {' '.join(options)}")


@pytest.fixture
def pg_db(pg_url):
    from tests.pg_server import fresh_database

    return fresh_database(pg_url, f"roles{os.getpid()}_{next(_names)}")


def test_postgres_roles_an_agent_cannot_rewrite_the_log_or_the_collections(pg_url, pg_db):
    from tests.pg_server import database_url

    name = urlsplit(pg_db).path.lstrip("/")
    with psycopg.connect(pg_db, autocommit=True) as admin:
        # docs/storage.md, "Roles, privileges, read-only": created by a setup role, handed to a
        # NOLOGIN owner, agents with column grants
        _pg_role(admin, "recall_owner", "NOLOGIN")
        _pg_role(admin, "recall_test_setup", "LOGIN")
        _pg_role(admin, "recall_test_agent", "LOGIN")
        admin.execute("CREATE EXTENSION IF NOT EXISTS vector")
        admin.execute(f"GRANT CREATE ON DATABASE {name} TO recall_test_setup")
        open_backend(database_url(pg_url, name, user="recall_test_setup")).close()
        admin.execute("REASSIGN OWNED BY recall_test_setup TO recall_owner")
        owner = admin.execute("SELECT relowner::regrole::text FROM pg_class WHERE oid = 'recall.events'::regclass")
        assert owner.fetchone()[0] == "recall_owner"
        admin.execute("GRANT USAGE ON SCHEMA recall TO recall_test_agent")
        admin.execute("GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA recall TO recall_test_agent")
        admin.execute("GRANT UPDATE (events) ON recall.collections TO recall_test_agent")
    agent = database_url(pg_url, name, user="recall_test_agent")
    with open_backend(agent) as b:
        assert not b.read_only, b.read_only_reason
        b.store("memories").append([make_event("carol", "likes", "tea", T0)])
        assert b.store("memories").count() == 1
    with psycopg.connect(agent, autocommit=True) as conn:
        for sql, error in (
            ("UPDATE recall.collections SET name = 'other'", psycopg.errors.InsufficientPrivilege),
            ("UPDATE recall.collections SET events = 0", psycopg.errors.RaiseException),
            ("UPDATE recall.events SET body = body", psycopg.errors.InsufficientPrivilege),
            ("ALTER TABLE recall.events DISABLE TRIGGER events_append_only", psycopg.errors.InsufficientPrivilege),
            ("DELETE FROM recall.schema_meta", psycopg.errors.InsufficientPrivilege),
            ("ALTER TABLE recall.collections RENAME TO c2", psycopg.errors.InsufficientPrivilege),
        ):
            with pytest.raises(error):
                conn.execute(sql)
        assert conn.execute("SELECT name, events FROM recall.collections").fetchall() == [("memories", 1)]
        conn.execute("GRANT UPDATE ON recall.events TO recall_test_agent")  # a warning: nothing granted
        assert conn.execute("SELECT has_table_privilege('recall.events', 'UPDATE')").fetchone() == (False,)


def test_postgres_a_disabled_append_only_trigger_is_found_at_open(pg_db):
    seeded(pg_db)
    with psycopg.connect(pg_db, autocommit=True) as admin:
        admin.execute("ALTER TABLE recall.events DISABLE TRIGGER events_append_only")
        with pytest.raises(StorageError, match=r"\(events_append_only missing or altered\)"):
            open_backend(pg_db)
        open_backend(pg_db, read_only=True).close()  # verify can still read it
        admin.execute("ALTER TABLE recall.events ENABLE TRIGGER events_append_only")
        admin.execute("DROP TRIGGER collections_guard ON recall.collections")
        with pytest.raises(StorageError, match=r"\(collections_guard missing or altered\)"):
            open_backend(pg_db)
        for name, table in (("schema_meta_guard", "schema_meta"), ("schema_meta_no_truncate", "schema_meta")):
            admin.execute(f"DROP TRIGGER {name} ON recall.{table}")
        open_backend(pg_db).close()  # none of the added guards: a store from before them gets them
        names = {r[0] for r in admin.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
        assert {"collections_guard", "schema_meta_guard", "schema_meta_no_truncate"} <= names
        with pytest.raises(psycopg.errors.RaiseException, match="events are append-only"):
            admin.execute("UPDATE recall.collections SET events = 0")


# --- bad rows got in anyway: reads go on, verify --all lists them (SQLite file access) ----------


def _smuggle(path: str, rows: list[tuple[str, str, str, str]]) -> list[int]:
    """Insert (id, subject, predicate, body) rows into the memories log as an attacker with the
    file would: the insert guard dropped, the rows appended, the count raised, the guard put
    back. Returns their positions."""
    conn = sqlite3.connect(path, isolation_level=None)
    cid = conn.execute("SELECT id FROM collections WHERE name = 'memories'").fetchone()[0]
    guard = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events_no_replace'").fetchone()[0]
    conn.execute("DROP TRIGGER events_no_replace")
    out = []
    for eid, subject, predicate, body in rows:
        (top,) = conn.execute("SELECT max(position) FROM events").fetchone()
        conn.execute(
            "INSERT INTO events (position, collection_id, id, subject, predicate, value_key, retraction, "
            "observed_at, body, recorded_at) VALUES (?,?,?,?,?,?,0,?,?,?)",
            (top + 1, cid, eid, subject, predicate, "s:x", T0 + 9, body, T0 + 9),
        )
        out.append(top + 1)
    conn.execute("UPDATE collections SET events = events + ? WHERE id = ?", (len(rows), cid))
    conn.execute(guard)
    conn.close()
    return out


def test_bad_rows_inserted_behind_the_engine_leave_the_collection_readable(sqlite_url, tmp_path):
    from recall_engine.records import REGISTRY_PREDICATE, REGISTRY_SUBJECT

    seeded(sqlite_url)
    with open_backend(sqlite_url) as b:  # a second collection, untouched
        b.store("support").append([make_event("dave", "likes", "jam", T0)])
    record = make_event(REGISTRY_SUBJECT, REGISTRY_PREDICATE, '{"op":"explode"}', T0 + 9)
    positions = _smuggle(
        sqlite_url.removeprefix("sqlite:///"),
        [
            (record.id, record.subject, record.predicate, json.dumps(record.to_json())),
            ("m-" + "1" * 24, "mallory", "likes", "{not json"),
        ],
    )
    # the other subject reads in full; the bad pair is refused alone, naming the event
    code, doc = run(sqlite_url, "recall", "carol")
    assert code == 0 and {b["value"] for b in doc["data"]["beliefs"]} == {"vim", "tea"}
    code, doc = run(sqlite_url, "recall", "mallory")
    assert code == 1 and doc["error"]["code"] == "invalid_event"
    assert "m-111111111111111111111111" in doc["error"]["message"], doc
    assert run(sqlite_url, "registry", "log")[0] == 0
    # verify --all: the bad collection lists both, with positions; the other one verifies
    r = CliRunner().invoke(app, ["--store", sqlite_url, "verify", "--all"])
    assert r.exit_code == 1, r.stdout
    assert "NOT verified  collection memories" in r.stdout and "verified  collection support" in r.stdout
    assert "1 of 2 collection(s) do NOT verify: memories" in " ".join(r.stdout.split())
    assert r.stderr.startswith("collection 'memories' does not verify: ")
    code, doc = run(sqlite_url, "verify", "--all")
    assert code == 1 and doc["ok"] is True and doc["data"]["valid"] is False
    memories, support = doc["data"]["collections"]
    assert (memories["collection"], support["collection"], support["valid"]) == ("memories", "support", True)
    assert (memories["events"], memories["counted"], memories["digest"]) == (4, 4, "")
    assert [(p["position"], p["event_id"], p["subject"]) for p in memories["problems"][:2]] == [
        (positions[0], record.id, "recall:registry"),
        (positions[1], "m-" + "1" * 24, "mallory"),
    ]
    # rows smuggled past the engine got no search-index rows either
    assert [p["reason"] for p in memories["problems"][2:]] == [
        "2 event(s) of the log have no row in the vector index (event_vectors_1)",
        "2 event(s) of the log have no row in the text index (event_text_1)",
    ]
    assert memories["problems"][0]["reason"] == f"registry event {record.id!r} names no usable predicate"
    assert memories["problems"][1]["reason"].startswith(
        "stored event 'm-111111111111111111111111' in collection 'memories' does not decode: its JSON is malformed"
    )


def test_verify_all_and_digest_do_not_mix(sqlite_url):
    seeded(sqlite_url)
    code, doc = run(sqlite_url, "verify", "--all", "--digest", "recall-log-v1:1:" + "0" * 64)
    assert code == 1 and doc["error"] == {
        "code": "invalid_input",
        "message": "--digest covers one collection's log: give it with --collection, not --all",
    }


def test_verify_finds_search_index_rows_that_match_no_event(sqlite_url):
    """The FTS5 and vector tables are derived indexes; rows smuggled into them are reported."""
    seeded(sqlite_url)
    assert run(sqlite_url, "verify")[0] == 0
    conn = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    cid = conn.execute("SELECT id FROM collections WHERE name = 'memories'").fetchone()[0]
    conn.execute(f"INSERT INTO event_text_{cid} (rowid, text) VALUES (999, 'free money')")
    first = conn.execute("SELECT min(position) FROM events").fetchone()[0]
    conn.execute(
        f"INSERT OR REPLACE INTO event_vectors_{cid} (position, observed_at, vector) VALUES (?, 1, x'00')", (first,)
    )
    conn.close()
    code, doc = run(sqlite_url, "verify")
    assert code == 1
    reasons = [p["reason"] for p in doc["data"]["problems"]]
    assert reasons == [
        f"1 row(s) of the vector index (event_vectors_{cid}) match no event of the log",
        f"1 row(s) of the text index (event_text_{cid}) match no event of the log",
    ]


def test_postgres_verify_finds_vector_rows_that_match_no_event(pg_db):
    """recall.event_meanings is derived from the log: a row smuggled in for another instant is reported."""
    seeded(pg_db)
    assert run(pg_db, "verify")[0] == 0
    with psycopg.connect(pg_db, autocommit=True) as conn:
        cid, position = conn.execute(
            "SELECT collection_id, min(position) FROM recall.events GROUP BY collection_id"
        ).fetchone()
        schema = conn.execute(
            "SELECT n.nspname FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace "
            "WHERE x.extname = 'vector'"
        ).fetchone()[0]
        vec = "[" + ",".join(["0.1"] * 384) + "]"
        conn.execute(
            f"INSERT INTO recall.event_meanings (position, collection_id, observed_at, vec) "
            f"VALUES (%s, %s, 1, %s::{schema}.vector)",
            (position, cid, vec),
        )
    code, doc = run(pg_db, "verify")
    assert code == 1
    assert [p["reason"] for p in doc["data"]["problems"]] == [
        "1 row(s) of the vector index (recall.event_meanings) match no event of the log"
    ]
    code, doc = run(pg_db, "verify", "--all")
    assert code == 1 and doc["data"]["valid"] is False
    assert [(c["collection"], c["valid"]) for c in doc["data"]["collections"]] == [("memories", False)]
