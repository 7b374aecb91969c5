"""`recall-admin serve` as a real process on 127.0.0.1: MCP over streamable HTTP, /v1, keys, namespaces, limits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from recall_admin.agents.keys import KeyRing
from recall_engine import clock
from recall_engine.storage import open_backend

from .helpers import child_env, cli_ok, new_key, recall_admin_command

HOUR = 3600 * 10**9


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'recall.db'}"


def test_v1_tools_with_a_key_write_into_its_namespace_and_record_the_writer(store, serve_factory):
    key = new_key(store, "team:agent-1", "--registry", "coding")
    key_id = key.split("_")[1]
    srv = serve_factory(store)
    assert srv.request("GET", "/healthz")[1]["data"]["status"] == "ok"

    first = srv.ok(key, "remember", subject="user", predicate="prefers_editor", value="vim", at="2026-01-01")
    assert first["already_known"] is False
    srv.ok(key, "remember", subject="user", predicate="prefers_editor", value="zed", at="2026-02-01")
    recalled = srv.ok(key, "recall", subject="user", predicate="prefers_editor")
    assert [(b["value"], [r["value"] for r in b["replaced"]]) for b in recalled["beliefs"]] == [("zed", ["vim"])]
    # the namespace's own collection holds it, and the CLI reads the same answer there
    assert (
        cli_ok(store, "--collection", "team.agent-1", "recall", "user", "prefers_editor", "--as-of", recalled["as_of"])
        == recalled
    )
    assert not _has_memories(store)  # no other collection was touched

    explained = srv.ok(key, "explain", subject="user", predicate="prefers_editor")
    assert [e["written_by"] for e in explained["events"]] == [{"key": key_id, "namespace": "team:agent-1"}] * 2
    cli_explained = cli_ok(store, "--collection", "team.agent-1", "explain", "user", "prefers_editor")
    assert [e["written_by"]["key"] for e in cli_explained["events"]] == [key_id, key_id]

    assert [s["value"] for s in srv.ok(key, "history", subject="user", predicate="prefers_editor")["steps"]] == [
        "vim",
        "zed",
    ]
    changes = srv.ok(key, "diff", **{"from": "2026-01-15", "to": "2026-02-15"})["changes"]
    assert [(c["began"], c["stopped"]) for c in changes] == [(["zed"], ["vim"])]
    assert "prefers_editor" in {p["name"] for p in srv.ok(key, "predicates")["predicates"]}
    assert "zed" in [b["value"] for b in srv.ok(key, "search", question="zed")["beliefs"]]
    assert [
        b["value"] for b in srv.ok(key, "forget", subject="user", predicate="prefers_editor", all=True)["withdrawn"]
    ] == ["zed"]

    status, doc = srv.call(key, "remember", subject="user", predicate="nope", value="x")
    assert status == 400 and doc["error"]["code"] == "unknown_predicate"
    status, doc = srv.call(key, "nonesuch")
    assert status == 400 and doc["error"]["code"] == "usage_error"
    status, doc = srv.request("POST", "/v1/recall", raw=b"{not json", key=key)
    assert status == 400 and doc["error"]["code"] == "usage_error"
    # the write calls (2 remembers, a forget, the refused remember), one after another: one commit each
    assert srv.request("GET", "/healthz")[1]["data"]["writes"] == {"calls": 4, "commits": 4}


def _has_memories(store: str) -> bool:
    with open_backend(store) as b:
        return "memories" in [n for n, _ in b.collections()]


def test_wrong_expired_revoked_and_read_only_keys(store, serve_factory):
    good = new_key(store, "team:a", "--registry", "coding")
    reader = new_key(store, "team:a", "--read-only")
    revoked = new_key(store, "team:a")
    with open_backend(store) as b:  # a key created two hours ago that lived one hour
        expired, _ = KeyRing(b, now=lambda: clock.now_ns() - 2 * HOUR).create("team:a", expires_in=HOUR)
    srv = serve_factory(store)
    srv.ok(good, "remember", subject="user", predicate="prefers_editor", value="vim")
    assert srv.ok(revoked, "recall", subject="user")["beliefs"]  # usable until revoked
    assert cli_ok(store, "key", "revoke", revoked.split("_")[1]) == {"revoked": revoked.split("_")[1]}

    for key, words in [
        (None, "missing bearer key"),
        ("rcl_000000000000_" + "x" * 32, "not valid"),
        (good[:-1] + ("A" if good[-1] != "A" else "B"), "not valid"),  # right id, wrong secret
        (expired, "expired at"),
        (revoked, "was revoked at"),
    ]:
        status, doc = srv.call(key, "recall", subject="user")
        assert status == 401, (key, doc)
        assert doc["error"]["code"] == "unauthorized" and words in doc["error"]["message"]

    status, doc = srv.call(reader, "remember", subject="user", predicate="prefers_editor", value="zed")
    assert status == 403 and doc["error"]["code"] == "read_only" and "read-only" in doc["error"]["message"]
    status, doc = srv.call(reader, "forget", subject="user", predicate="prefers_editor", all=True)
    assert status == 403
    assert [b["value"] for b in srv.ok(reader, "recall", subject="user")["beliefs"]] == ["vim"]

    listed = {k["id"]: k for k in cli_ok(store, "key", "list")["keys"]}
    assert listed[revoked.split("_")[1]]["revoked"] is True
    assert listed[reader.split("_")[1]]["read_only"] is True
    assert all("hash" not in k and "key" not in k for k in listed.values())  # never the key, nor its hash


def test_a_key_of_namespace_a_can_neither_read_nor_write_namespace_b(store, serve_factory):
    a = new_key(store, "team:a", "--registry", "coding")
    b = new_key(store, "team:b", "--registry", "coding")
    srv = serve_factory(store)
    srv.ok(a, "remember", subject="user", predicate="prefers_editor", value="vim", at="2026-01-01")
    srv.ok(a, "remember", subject="user", predicate="uses_technology", value="rust", at="2026-01-01")
    before = srv.ok(a, "recall", subject="user", as_of="2026-06-01")

    # every read of B sees nothing of A
    assert srv.ok(b, "recall", subject="user")["beliefs"] == []
    assert srv.ok(b, "recall", subject="user", predicate="prefers_editor")["beliefs"] == []
    assert srv.ok(b, "history", subject="user", predicate="prefers_editor")["steps"] == []
    assert srv.ok(b, "explain", subject="user", predicate="prefers_editor")["events"] == []
    assert srv.ok(b, "diff", **{"from": "2025-01-01"})["changes"] == []
    assert srv.ok(b, "search", question="vim rust")["beliefs"] == []
    assert srv.ok(b, "forget", subject="user", predicate="prefers_editor", all=True)["withdrawn"] == []
    assert srv.ok(b, "forget", subject="user", predicate="uses_technology", value="rust")["withdrawn"] == []
    # nothing a caller sends names a collection or another namespace
    for extra in ({"collection": "team.a"}, {"namespace": "team:a"}):
        status, doc = srv.call(b, "recall", subject="user", **extra)
        assert status == 400 and doc["error"]["code"] == "usage_error"
    status, doc = srv.call(b, "remember", subject="recall:keys", predicate="note", value="x")
    assert status == 400 and "reserved" in doc["error"]["message"]
    # B's writes land in B
    srv.ok(b, "remember", subject="user", predicate="prefers_editor", value="emacs", at="2026-02-01")
    assert srv.ok(a, "recall", subject="user", as_of="2026-06-01") == before
    assert [x["value"] for x in srv.ok(b, "recall", subject="user")["beliefs"]] == ["emacs"]
    a_pred = {p["name"]: p["events"] for p in srv.ok(a, "predicates")["predicates"]}
    b_pred = {p["name"]: p["events"] for p in srv.ok(b, "predicates")["predicates"]}
    assert (a_pred["prefers_editor"], b_pred["prefers_editor"]) == (1, 1)


def test_mcp_over_streamable_http(store, serve_factory):
    key = new_key(store, "team:a", "--registry", "coding")
    reader = new_key(store, "team:a", "--read-only")
    srv = serve_factory(store)

    async def session_calls(k: str) -> list:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {k}"}) as hc:
            async with streamable_http_client(f"{srv.url}/mcp", http_client=hc) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()
                    names = {t.name for t in (await s.list_tools()).tools}
                    w = await s.call_tool(
                        "remember", {"subject": "user", "predicate": "prefers_editor", "value": "vim"}
                    )
                    r = await s.call_tool("recall", {"subject": "user", "predicate": "prefers_editor"})
                    return [names, w, r]

    names, w, r = anyio.run(session_calls, key)
    assert names == {"remember", "recall", "forget", "history", "diff", "explain", "predicates", "search"}
    assert not w.is_error and w.structured_content["data"]["stored"]["value"] == "vim"
    assert [b["value"] for b in r.structured_content["data"]["beliefs"]] == ["vim"]
    assert (
        r.structured_content
        == srv.call(
            key, "recall", subject="user", predicate="prefers_editor", as_of=r.structured_content["data"]["as_of"]
        )[1]
    )

    _, w, r = anyio.run(session_calls, reader)
    assert w.is_error and json.loads(w.content[0].text)["error"]["code"] == "read_only"
    assert not r.is_error

    async def with_wrong_key() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer rcl_000000000000_" + "y" * 32}) as hc:
            async with streamable_http_client(f"{srv.url}/mcp", http_client=hc) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    await s.initialize()

    with pytest.raises(ExceptionGroup) as refused:  # the client's task group carries the server's refusal
        anyio.run(with_wrong_key)
    assert "Server returned an error response" in repr(refused.value)
    status, doc = srv.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert status == 401 and doc["error"]["code"] == "unauthorized"


def test_limits_are_refused_with_413_and_429(store, serve_factory):
    key = new_key(store, "team:a", "--registry", "coding")
    with open_backend(store) as b:
        before = b.store("team.a").count()  # the registry's declarations
    srv = serve_factory(store, "--max-body", "4000", "--max-value", "100", "--rate", "1")
    status, doc = srv.call(key, "remember", subject="user", predicate="prefers_editor", value="x" * 101)
    assert status == 413 and doc["error"]["code"] == "too_large" and "at most 100 bytes" in doc["error"]["message"]
    status, doc = srv.call(key, "recall", subject="user")
    assert status == 429 and doc["error"]["code"] == "rate_limited"  # the bucket of one a second is empty
    other = new_key(store, "team:a")
    status, doc = srv.request("POST", "/v1/remember", raw=b" " * 5000, key=other)
    assert status == 413 and doc["error"]["code"] == "too_large"
    with open_backend(store) as b:
        assert b.store("team.a").count() == before  # nothing refused was written


def test_a_second_server_on_one_sqlite_file_is_refused(store, serve_factory):
    new_key(store, "team:a")
    serve_factory(store)
    r = subprocess.run(
        [recall_admin_command(), "--store", store, "--json", "serve", "--port", "1"],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "server_running"
    assert "one server process at a time" in err["message"] and "PostgreSQL" in err["message"]


def test_unknown_routes_and_wrong_methods_answer_the_json_envelope(store, serve_factory):
    key = new_key(store, "team:a", "--registry", "coding")
    srv = serve_factory(store)
    for method, path, status, code, words in [
        ("GET", "/nowhere", 404, "not_found", "the routes are /mcp, /v1/<tool> and /healthz"),
        ("GET", "/v1/recall", 405, "method_not_allowed", "takes POST"),
        ("POST", "/healthz", 405, "method_not_allowed", "/healthz takes GET"),
    ]:
        got, doc = srv.request(method, path, key=key)
        assert (got, doc["ok"], doc["error"]["code"]) == (status, False, code), (method, path, doc)
        assert words in doc["error"]["message"]
    status, doc = srv.call(key, "recall", subject="user")
    assert status == 200 and doc["ok"]  # the refusals left the server answering


@pytest.mark.postgres
def test_a_key_revoked_while_two_servers_run_on_postgresql_is_refused_by_both(tmp_path, serve_factory, pg_url):
    import os

    from tests.pg_server import fresh_database

    url = fresh_database(pg_url, f"agents_revoke_{os.getpid()}")
    key = new_key(url, "team:a", "--registry", "coding")
    servers = [serve_factory(url) for _ in range(2)]
    for srv in servers:  # each server has read and cached the key
        srv.ok(key, "remember", subject="user", predicate="uses_technology", value=f"tech {srv.port}")
    assert cli_ok(url, "key", "revoke", key.split("_")[1])["revoked"] == key.split("_")[1]
    for srv in servers:
        status, doc = srv.call(key, "recall", subject="user")
        assert status == 401 and "was revoked at" in doc["error"]["message"]
    with open_backend(url) as b:  # both servers wrote into the one namespace
        values = {e.value for e in b.store("team.a").pair_events("user", ["uses_technology"])}
    assert values == {f"tech {srv.port}" for srv in servers}
