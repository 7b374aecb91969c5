"""Agent benchmarks (issue 17): the stdio MCP tool's overhead, and `serve` on SQLite.

Every figure is measured in the same run on the same kind of store, so the ratios hold
on a noisy machine:

- ``remember`` over stdio (the MCP SDK's client against ``recall-admin mcp --write``):
  p50 per call, minus the p50 of the engine's own remember in-process (target <= 5 ms);
  the engine is measured both as ``Memory`` and as the server's ``AgentMemory`` (same
  engine, plus the writer record and the registry cache the server uses);
- ``serve`` on SQLite, 8 concurrent clients (keep-alive connections) sending
  ``POST /v1/remember``: remembers a second (target >= 500);
- ``recall`` of one pair over ``POST /v1/recall``: p50 (target <= 5 ms), next to the
  engine's in-process read.

    python benchmarks/bench_agents.py                 # 300 stdio calls, 8 x 150 served remembers
    python benchmarks/bench_agents.py --calls 1000 --per-client 500
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recall_admin.agents.keys import KeyRing  # noqa: E402
from recall_admin.agents.tools import agent_memory  # noqa: E402
from recall_admin.registry_sync import sync_registry  # noqa: E402
from recall_engine.memory import Memory  # noqa: E402
from recall_engine.registry_files import load_starter  # noqa: E402
from recall_engine.storage import open_backend  # noqa: E402

CLIENTS = 8


def p50_ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def fresh_store(folder: Path, name: str, collection: str = "memories") -> str:
    url = f"sqlite:///{folder / name}"
    with open_backend(url) as b:
        sync_registry(Memory(b.store(collection)), [load_starter("coding")], "bench")
    return url


def engine_remember(url: str, n: int, *, agent: bool) -> list[float]:
    with open_backend(url) as b:
        store = b.store("memories")
        m = agent_memory(store, {"agent": "bench"}) if agent else Memory(store)
        out = []
        for i in range(n):
            t = time.perf_counter()
            m.remember(f"user-{i}", "prefers_editor", f"editor {i}")
            out.append(time.perf_counter() - t)
        return out


def stdio_remember(url: str, n: int) -> list[float]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> list[float]:
        params = StdioServerParameters(
            command=shutil.which("recall-admin") or "recall-admin", args=["--store", url, "mcp", "--write"], env=env()
        )
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            out = []
            for i in range(n):
                t = time.perf_counter()
                res = await s.call_tool(
                    "remember", {"subject": f"user-{i}", "predicate": "prefers_editor", "value": f"editor {i}"}
                )
                out.append(time.perf_counter() - t)
                assert not res.is_error, res.content
            return out

    return anyio.run(main)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(conn: http.client.HTTPConnection, key: str, tool: str, args: dict) -> dict:
    conn.request(
        "POST",
        f"/v1/{tool}",
        body=json.dumps(args).encode(),  # one packet: no Nagle delay
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    resp = conn.getresponse()
    doc = json.loads(resp.read())
    assert resp.status == 200, doc
    return doc["data"]


def served(folder: Path, per_client: int, recalls: int) -> tuple[float, float, list[float], list[float]]:
    url = f"sqlite:///{folder / 'served.db'}"
    keys = []
    with open_backend(url) as b:
        ring = KeyRing(b)
        for c in range(CLIENTS):
            ns = f"bench:c{c}"
            sync_registry(Memory(b.store(ns.replace(":", "."))), [load_starter("coding")], "bench")
            keys.append(ring.create(ns, expires_in=None)[0])
    port = free_port()
    proc = subprocess.Popen(
        [
            shutil.which("recall-admin") or "recall-admin",
            "--store",
            url,
            "serve",
            "--port",
            str(port),
            "--rate",
            "1000000",
        ],
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:  # wait for /healthz, bounded
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/healthz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("serve did not start") from None
                time.sleep(0.05)

        def client(c: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            for i in range(per_client):
                post(
                    conn,
                    keys[c],
                    "remember",
                    {"subject": f"user-{i % 50}", "predicate": "uses_technology", "value": f"tech {c}-{i}"},
                )
            conn.close()

        threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rate = CLIENTS * per_client / (time.perf_counter() - t0)

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        http_recall = []
        for i in range(recalls):
            t = time.perf_counter()
            post(conn, keys[0], "recall", {"subject": f"user-{i % 50}", "predicate": "uses_technology"})
            http_recall.append(time.perf_counter() - t)
        conn.close()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    # the same statements, one process, no HTTP: what the engine alone does (into fresh collections)
    with open_backend(url) as b:
        boxes = []
        for c in range(CLIENTS):
            store = b.store(f"alone.c{c}")
            sync_registry(Memory(store), [load_starter("coding")], "bench")
            boxes.append(agent_memory(store, {"agent": "bench"}))
        t0 = time.perf_counter()
        for i in range(per_client):
            for c in range(CLIENTS):
                boxes[c].remember(f"user-{i % 50}", "uses_technology", f"tech {c}-{i}")
        alone = CLIENTS * per_client / (time.perf_counter() - t0)
    with open_backend(url) as b:
        m = Memory(b.store("bench.c0"))
        engine_recall = []
        for i in range(recalls):
            t = time.perf_counter()
            m.read_pair(f"user-{i % 50}", "uses_technology")
            engine_recall.append(time.perf_counter() - t)
    return rate, alone, http_recall, engine_recall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300, help="remember calls over stdio (and in-process)")
    ap.add_argument("--per-client", type=int, default=150, help="remembers each of the 8 served clients sends")
    ap.add_argument("--recalls", type=int, default=300)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain = p50_ms(engine_remember(fresh_store(folder, "engine.db"), a.calls, agent=False))
        agent = p50_ms(engine_remember(fresh_store(folder, "agent.db"), a.calls, agent=True))
        tool = p50_ms(stdio_remember(fresh_store(folder, "stdio.db"), a.calls))
        print(f"remember, engine in-process (Memory)        p50 {plain:7.2f} ms")
        print(f"remember, engine in-process (AgentMemory)   p50 {agent:7.2f} ms")
        print(f"remember, MCP tool over stdio               p50 {tool:7.2f} ms")
        print(
            f"  overhead over the server's engine path        {tool - agent:7.2f} ms (target <= 5)"
            f"  {'ok' if tool - agent <= 5 else 'MISSED'}"
        )
        print(
            f"  overhead over the engine's own Memory         {tool - plain:7.2f} ms (target <= 5)"
            f"  {'ok' if tool - plain <= 5 else 'MISSED'}"
        )
        rate, alone, http_recall, engine_recall = served(folder, a.per_client, a.recalls)
        print(
            f"serve on SQLite, {CLIENTS} clients x {a.per_client} remembers  {rate:7.0f} remembers/s (target >= 500)"
            f"  {'ok' if rate >= 500 else 'MISSED'}"
        )
        print(
            f"  the same remembers in-process, no HTTP        {alone:7.0f} remembers/s"
            f"  (serve reaches {rate / alone:.0%} of it)"
        )
        r = p50_ms(http_recall)
        print(
            f"recall over /v1                             p50 {r:7.2f} ms (target <= 5)  {'ok' if r <= 5 else 'MISSED'}"
        )
        print(
            f"recall, engine in-process                   p50 {p50_ms(engine_recall):7.2f} ms"
            f"  (HTTP adds {r - p50_ms(engine_recall):.2f} ms)"
        )


if __name__ == "__main__":
    main()
