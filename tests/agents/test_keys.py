"""Bearer keys on both backends: stored hashed, expiring, revoked for good, shared by every server."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recall_admin.agents.attribution import AttributedStore, written_by
from recall_admin.agents.keys import (
    CREATED,
    KEY_SUBJECT,
    REVOKED,
    SYSTEM_COLLECTION,
    KeyRing,
    Unauthorized,
    collection_for,
    parse_duration,
)
from recall_admin.cli import app
from recall_engine.errors import InvalidInput, NotFound
from recall_engine.records import make_event
from recall_engine.storage import open_backend

from .helpers import cli_ok, new_key

HOUR = 3600 * 10**9
T0 = 1_790_000_000 * 10**9


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> int:
        return self.t


def test_keys_are_hashed_expire_and_stay_revoked(backend):
    clock = Clock()
    ring = KeyRing(backend, now=clock)
    key, k = ring.create("team:agent-1", expires_in=2 * HOUR)
    assert key.startswith(f"rcl_{k.id}_") and k.collection == "team.agent-1"
    assert ring.authenticate(f"Bearer {key}").id == k.id
    stored = list(backend.store(SYSTEM_COLLECTION).all_events())
    assert key not in json.dumps([e.to_json() for e in stored])  # only its hash is kept

    clock.t += 2 * HOUR
    with pytest.raises(Unauthorized, match="expired at"):
        ring.authenticate(f"Bearer {key}")

    other, o = ring.create("team:agent-1", expires_in=None)
    second_server = KeyRing(backend, now=clock)
    assert second_server.authenticate(f"bearer {other}").id == o.id
    ring.revoke(o.id)
    with pytest.raises(Unauthorized, match="was revoked at"):
        second_server.authenticate(f"Bearer {other}")  # the other server sees it on its next request

    # nothing appended later brings the key back: not a retraction of the revocation, not a new record
    sys_store = backend.store(SYSTEM_COLLECTION)
    revocation = next(e for e in sys_store.all_events() if e.predicate == REVOKED)
    created = next(e for e in sys_store.all_events() if e.predicate == CREATED and o.id in str(e.value))
    clock.t += 1
    sys_store.append(
        [
            make_event(KEY_SUBJECT, REVOKED, revocation.value, clock.t, retraction=True),
            make_event(KEY_SUBJECT, CREATED, created.value, clock.t + 1),
        ]
    )
    with pytest.raises(Unauthorized, match="was revoked"):
        KeyRing(backend, now=clock).authenticate(f"Bearer {other}")
    assert [x.revoked is not None for x in KeyRing(backend).keys()]  # noqa: SIM118 - KeyRing.keys() lists the keys; it is no dict == [False, True]


@pytest.mark.parametrize(
    "header, words",
    [
        (None, "missing bearer key"),
        ("", "missing bearer key"),
        ("Basic abc", "missing bearer key"),
        ("Bearer ", "missing bearer key"),
        ("Bearer rcl_nothex_abc", "not valid"),
        ("Bearer rcl_0123456789ab_" + "z" * 32, "not valid"),
    ],
)
def test_bad_headers_are_refused(backend, header, words):
    KeyRing(backend).create("team:a", expires_in=None)
    with pytest.raises(Unauthorized, match=words):
        KeyRing(backend).authenticate(header)


def test_revoking_an_unknown_key(backend):
    with pytest.raises(NotFound, match="no key with id 'abc'"):
        KeyRing(backend).revoke("abc")


@pytest.mark.parametrize(
    "namespace, collection",
    [
        ("team:agent-1", "team.agent-1"),
        ("a", "a"),
        ("x_1:y-2:z", "x_1.y-2.z"),
    ],
)
def test_namespaces_map_to_their_own_collection(namespace, collection):
    assert collection_for(namespace) == collection


@pytest.mark.parametrize(
    "namespace, words",
    [
        ("Team:a", "lower-case"),
        ("team::a", "lower-case"),
        ("team.a", "lower-case"),
        ("", "lower-case"),
        (":a", "lower-case"),
        ("a" * 64, "at most 63"),
        ("recall:keys", "reserved"),
        ("recall", "reserved"),
    ],
)
def test_bad_namespaces_are_refused(namespace, words):
    with pytest.raises(InvalidInput, match=words):
        collection_for(namespace)


@pytest.mark.parametrize(
    "text, ns",
    [
        ("168h", 168 * HOUR),
        ("30d", 720 * HOUR),
        ("1h30m", 90 * 60 * 10**9),
        ("90s", 90 * 10**9),
        ("1.5h", 90 * 60 * 10**9),
        ("never", None),
        (" 2h ", 2 * HOUR),
    ],
)
def test_durations(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize("text", ["", "h", "10", "-1h", "1h x", "0h", "1y"])
def test_bad_durations(text):
    with pytest.raises(InvalidInput, match="--expires takes a duration"):
        parse_duration(text)


def test_key_commands(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"

    def run(*args: str) -> tuple[int, dict]:
        r = CliRunner().invoke(app, ["--store", url, "--json", *args])
        return r.exit_code, json.loads(r.stdout)

    code, doc = run("key", "create", "--namespace", "team:a", "--expires", "168h", "--read-only")
    assert code == 0
    data = doc["data"]
    assert data["key"].startswith("rcl_") and data["namespace"] == "team:a" and data["read_only"] is True
    code, doc = run("key", "list")
    assert [k["id"] for k in doc["data"]["keys"]] == [data["id"]]
    assert set(doc["data"]["keys"][0]) >= {"id", "namespace", "expires", "read_only", "revoked"}
    assert run("key", "revoke", data["id"]) == (0, {"ok": True, "data": {"revoked": data["id"]}})
    assert run("key", "list")[1]["data"]["keys"][0]["revoked"] is True
    code, doc = run("key", "revoke", "nope")
    assert code == 1 and doc["error"]["code"] == "not_found"
    code, doc = run("key", "create", "--namespace", "Team")
    assert code == 1 and doc["error"]["code"] == "invalid_input" and "lower-case" in doc["error"]["message"]
    code, doc = run("key", "create", "--namespace", "team:b", "--expires", "soon")
    assert code == 1 and "--expires takes a duration" in doc["error"]["message"]
    with open_backend(url) as b:
        assert "team.b" not in [n for n, _ in b.collections()]  # a refused key creates nothing


def test_attribution_is_written_with_the_event_and_read_back(store):
    from recall_engine.records import make_event as mk

    agent = AttributedStore(store, {"key": "k1", "namespace": "team:a"})
    e = mk("user", "note", "hello", T0)
    agent.append([e])
    assert written_by(store, [e.id, "m-unknown"]) == {e.id: {"key": "k1", "namespace": "team:a"}}
    assert [s for s, _ in store.subjects()] == ["user"]  # the record is not a subject anyone browses


def test_agent_services_import_no_cli_stack():
    root = Path(__file__).resolve().parents[2] / "recall_admin" / "agents"
    for path in root.glob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
        assert not names & {"typer", "rich", "click"}, path
        if path.name in ("tools.py", "keys.py", "attribution.py", "__init__.py"):
            assert not names & {"mcp", "starlette", "uvicorn"}, path  # the CLI's explain needs no MCP stack


def test_no_agent_reaches_the_key_collection(tmp_path: Path, serve_factory):
    store = f"sqlite:///{tmp_path / 'recall.db'}"
    key = new_key(store, "team:a", "--registry", "coding")
    # MCP: the operator cannot point the server at it
    r = CliRunner().invoke(app, ["--store", store, "--json", "--collection", "recall.keys", "mcp"], input="")
    assert r.exit_code == 1
    assert json.loads(r.stdout)["error"]["message"].startswith("collection 'recall.keys' is reserved")
    # HTTP: a key's collection comes from its namespace, which cannot start with 'recall';
    # nothing in a request names a collection
    srv = serve_factory(store)
    status, doc = srv.call(key, "recall", subject="recall:keys", collection="recall.keys")
    assert status == 400 and doc["error"]["code"] == "usage_error"
    assert "unknown argument 'collection'" in doc["error"]["message"]
    assert srv.ok(key, "recall", subject="recall:keys")["beliefs"] == []
    srv.stop()
    assert len(cli_ok(store, "key", "list")["keys"]) == 1
