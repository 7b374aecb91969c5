"""8 concurrent agents remember through `serve`: each statement stored once, answers as if applied one by one.

SQLite: one server. PostgreSQL: two server processes on one database, agents spread over
both. Each agent has its own key; two agents share each of four namespaces and write the
same pairs (single- and multi-valued), with distinct instants, so their statements
interleave in every pair. The reference applies the same statements one by one, in
instant order, through the engine into a fresh store.

Size: RECALL_AGENTS_LOAD statements per agent (default 40, to keep the suite fast; the
issue's full size is 500: ``RECALL_AGENTS_LOAD=500 pytest tests/agents/test_load.py``).
"""

from __future__ import annotations

import http.client
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from recall_admin.views import recall_view
from recall_engine import clock
from recall_engine.memory import Memory
from recall_engine.storage import open_backend

from .helpers import cli_ok, new_key

AGENTS = 8
NAMESPACES = 4
PER_AGENT = int(os.environ.get("RECALL_AGENTS_LOAD", "40"))
SUBJECTS = 5
MS = 10**6


def statements(base: int) -> dict[int, list[dict[str, Any]]]:
    """Each agent's statements, in the order it sends them."""
    out: dict[int, list[dict[str, Any]]] = {}
    for a in range(AGENTS):
        out[a] = [
            {
                "subject": f"s{i % SUBJECTS}",
                "predicate": "prefers_editor" if i % 2 == 0 else "uses_technology",
                "value": f"v{a}-{i}",
                "at_ns": base + (i * AGENTS + a) * MS,
            }
            for i in range(PER_AGENT)
        ]
    return out


def rfc3339(ns: int) -> str:
    from recall_engine.instants import format_rfc3339

    return format_rfc3339(ns)


def agent(port: int, key: str, todo: list[dict[str, Any]], failures: list[Any]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        for st in todo:
            body = json.dumps(
                {
                    "subject": st["subject"],
                    "predicate": st["predicate"],
                    "value": st["value"],
                    "at": rfc3339(st["at_ns"]),
                }
            ).encode()  # one packet: no Nagle delay
            conn.request(
                "POST",
                "/v1/remember",
                body=body,
                headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
            resp = conn.getresponse()
            doc = json.loads(resp.read())
            if resp.status != 200 or doc["data"]["already_known"]:
                failures.append((st, resp.status, doc))
                return
    except Exception as e:  # noqa: BLE001 - reported by the test
        failures.append(repr(e))
    finally:
        conn.close()


def run_load(store_url: str, servers: list, tmp_path: Path) -> None:
    namespaces = [f"load:ns{n}" for n in range(NAMESPACES)]
    for ns in namespaces:
        cli_ok(store_url, "--collection", ns.replace(":", "."), "init", "--registry", "coding")
    keys = [new_key(store_url, namespaces[a % NAMESPACES]) for a in range(AGENTS)]
    base = clock.now_ns() - 24 * 3600 * 10**9
    plan = statements(base)
    failures: list[Any] = []
    threads = [
        threading.Thread(target=agent, args=(servers[a % len(servers)].port, keys[a], plan[a], failures))
        for a in range(AGENTS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []

    as_of = clock.now_ns()
    pairs = [(f"s{s}", p) for s in range(SUBJECTS) for p in ("prefers_editor", "uses_technology")]
    with open_backend(store_url) as served, open_backend(f"sqlite:///{tmp_path / 'reference.db'}") as ref:
        for n, ns in enumerate(namespaces):
            sent = sorted(
                (st for a in range(AGENTS) if a % NAMESPACES == n for st in plan[a]), key=lambda st: st["at_ns"]
            )
            store = served.store(ns.replace(":", "."), create=False)
            # every statement stored exactly once, as sent
            stored = sorted(
                (e.subject, e.predicate, e.value, e.observed_at) for s, p in pairs for e in store.pair_events(s, [p])
            )
            assert stored == sorted((st["subject"], st["predicate"], st["value"], st["at_ns"]) for st in sent)
            # the answers equal the same statements applied one by one
            reference = Memory(ref.store(f"ref{n}"))
            from recall_admin.registry_sync import sync_registry
            from recall_engine.registry_files import load_starter

            sync_registry(reference, [load_starter("coding")], "test")
            for st in sent:
                reference.remember(st["subject"], st["predicate"], st["value"], at=st["at_ns"])
            live = Memory(store)
            for s, p in pairs:
                assert recall_view(live, s, p, as_of) == recall_view(reference, s, p, as_of), (ns, s, p)


def test_eight_agents_through_one_sqlite_server(tmp_path, serve_factory):
    url = f"sqlite:///{tmp_path / 'recall.db'}"
    run_load(url, [serve_factory(url, "--rate", "100000")], tmp_path)


@pytest.mark.postgres
def test_eight_agents_through_two_servers_on_one_postgresql(tmp_path, serve_factory, pg_url):
    from tests.pg_server import fresh_database

    url = fresh_database(pg_url, f"agents_load_{os.getpid()}")
    servers = [serve_factory(url, "--rate", "100000") for _ in range(2)]
    run_load(url, servers, tmp_path)
