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

On a machine whose cores are busy, wall-clock figures mostly measure the scheduler
(each call wakes two processes). So the CPU time each side spends is printed too: the
server process's CPU per request (from /proc) against the engine's own CPU per call in
one process. One server process spends one core at most, so 1000 / (server CPU ms per
remember) is the most remembers a second it can take on a quiet machine.

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
from dataclasses import dataclass
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


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU a process has used (Linux /proc), or None where there is no /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def per_call_ms(before: float | None, after: float | None, n: int) -> float | None:
    return None if before is None or after is None else (after - before) * 1000 / n


def ms(x: float | None) -> str:
    return "    n/a" if x is None else f"{x:7.2f}"


def engine_remember(url: str, n: int, *, agent: bool) -> tuple[list[float], float]:
    """Wall time of each remember, and the CPU ms per remember."""
    with open_backend(url) as b:
        store = b.store("memories")
        m = agent_memory(store, {"agent": "bench"}) if agent else Memory(store)
        out = []
        cpu = time.process_time()
        for i in range(n):
            t = time.perf_counter()
            m.remember(f"user-{i}", "prefers_editor", f"editor {i}")
            out.append(time.perf_counter() - t)
        return out, (time.process_time() - cpu) * 1000 / n


def stdio_remember(url: str, n: int) -> tuple[list[float], float | None, float]:
    """Wall time of each call; server CPU ms per call; this client's CPU ms per call."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> list[float]:
        params = StdioServerParameters(
            command=shutil.which("recall-admin") or "recall-admin", args=["--store", url, "mcp", "--write"], env=env()
        )
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            server = _child_pid()
            out = []
            before, mine = cpu_seconds(server), time.process_time()
            for i in range(n):
                t = time.perf_counter()
                res = await s.call_tool(
                    "remember", {"subject": f"user-{i}", "predicate": "prefers_editor", "value": f"editor {i}"}
                )
                out.append(time.perf_counter() - t)
                assert not res.is_error, res.content
            return out, per_call_ms(before, cpu_seconds(server), n), (time.process_time() - mine) * 1000 / n

    return anyio.run(main)


def _child_pid() -> int:
    """The server the stdio client started: this process's only child."""
    try:
        kids = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    except OSError:
        return -1
    return int(kids[-1]) if kids else -1


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


@dataclass
class Served:
    rate: float  # remembers a second, 8 clients
    remember_cpu: float | None  # server CPU ms per remember
    recall_wall: list[float]
    recall_cpu: float | None  # server CPU ms per recall
    alone_rate: float  # the same remembers, one process, no HTTP
    alone_cpu: float  # its CPU ms per remember
    engine_recall: list[float]
    engine_recall_cpu: float


def served(folder: Path, per_client: int, recalls: int) -> Served:
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
        before = cpu_seconds(proc.pid)
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rate = CLIENTS * per_client / (time.perf_counter() - t0)
        remember_cpu = per_call_ms(before, cpu_seconds(proc.pid), CLIENTS * per_client)

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        http_recall = []
        before = cpu_seconds(proc.pid)
        for i in range(recalls):
            t = time.perf_counter()
            post(conn, keys[0], "recall", {"subject": f"user-{i % 50}", "predicate": "uses_technology"})
            http_recall.append(time.perf_counter() - t)
        recall_cpu = per_call_ms(before, cpu_seconds(proc.pid), recalls)
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
        t0, cpu = time.perf_counter(), time.process_time()
        for i in range(per_client):
            for c in range(CLIENTS):
                boxes[c].remember(f"user-{i % 50}", "uses_technology", f"tech {c}-{i}")
        alone = CLIENTS * per_client / (time.perf_counter() - t0)
        alone_cpu = (time.process_time() - cpu) * 1000 / (CLIENTS * per_client)
    with open_backend(url) as b:
        m = Memory(b.store("bench.c0"))
        engine_recall = []
        cpu = time.process_time()
        for i in range(recalls):
            t = time.perf_counter()
            m.read_pair(f"user-{i % 50}", "uses_technology")
            engine_recall.append(time.perf_counter() - t)
        engine_recall_cpu = (time.process_time() - cpu) * 1000 / recalls
    return Served(rate, remember_cpu, http_recall, recall_cpu, alone, alone_cpu, engine_recall, engine_recall_cpu)


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300, help="remember calls over stdio (and in-process)")
    ap.add_argument("--per-client", type=int, default=150, help="remembers each of the 8 served clients sends")
    ap.add_argument("--recalls", type=int, default=300)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain_wall, plain_cpu = engine_remember(fresh_store(folder, "engine.db"), a.calls, agent=False)
        agent_wall, agent_cpu = engine_remember(fresh_store(folder, "agent.db"), a.calls, agent=True)
        tool_wall, server_cpu, client_cpu = stdio_remember(fresh_store(folder, "stdio.db"), a.calls)
        plain, agent, tool = p50_ms(plain_wall), p50_ms(agent_wall), p50_ms(tool_wall)
        print("                                                 wall p50   CPU per call")
        print(f"remember, engine in-process (Memory)            {plain:7.2f} ms  {plain_cpu:7.2f} ms")
        print(f"remember, engine in-process (AgentMemory)       {agent:7.2f} ms  {agent_cpu:7.2f} ms")
        print(
            f"remember, MCP tool over stdio                   {tool:7.2f} ms  {ms(server_cpu)} ms server"
            f" + {client_cpu:.2f} ms client"
        )
        print(
            f"  overhead over the server's engine path        {tool - agent:7.2f} ms (target <= 5)  {verdict(tool - agent <= 5)}"
        )
        print(
            f"  overhead over the engine's own Memory         {tool - plain:7.2f} ms (target <= 5)  {verdict(tool - plain <= 5)}"
        )
        if server_cpu is not None:
            over = server_cpu + client_cpu - agent_cpu
            print(f"  CPU the MCP layer adds (server + client)      {over:7.2f} ms (target <= 5)  {verdict(over <= 5)}")
        r = served(folder, a.per_client, a.recalls)
        print(
            f"serve on SQLite, {CLIENTS} clients x {a.per_client} remembers  {r.rate:7.0f} remembers/s (target >= 500)"
            f"  {verdict(r.rate >= 500)}"
        )
        print(
            f"  the same remembers in-process, no HTTP        {r.alone_rate:7.0f} remembers/s"
            f"  (serve reaches {r.rate / r.alone_rate:.0%} of it)"
        )
        if r.remember_cpu is not None:
            ceiling = 1000 / r.remember_cpu
            print(
                f"  server CPU per remember                       {r.remember_cpu:7.2f} ms"
                f"  (engine alone {r.alone_cpu:.2f} ms; HTTP, keys and JSON add {r.remember_cpu - r.alone_cpu:.2f} ms)"
            )
            print(
                f"  one server process can take at most           {ceiling:7.0f} remembers/s (target >= 500)"
                f"  {verdict(ceiling >= 500)}"
            )
        http_p50, eng_p50 = p50_ms(r.recall_wall), p50_ms(r.engine_recall)
        print(
            f"recall over /v1                             p50 {http_p50:7.2f} ms (target <= 5)  {verdict(http_p50 <= 5)}"
        )
        print(
            f"recall, engine in-process                   p50 {eng_p50:7.2f} ms  (HTTP adds {http_p50 - eng_p50:.2f} ms)"
        )
        if r.recall_cpu is not None:
            print(
                f"  server CPU per recall                         {r.recall_cpu:7.2f} ms"
                f"  (engine alone {r.engine_recall_cpu:.2f} ms)"
            )


if __name__ == "__main__":
    main()
