"""Agent benchmarks (issue 17): the stdio MCP tool's overhead, and `serve` under load.

Every figure is measured in the same run on the same kind of store, so the ratios hold
on a noisy machine:

- ``remember`` over stdio (the MCP SDK's client against ``recall-admin mcp --write``):
  p50 per call minus the p50 of the engine's own remember in-process (target <= 5 ms);
  the engine is measured as plain ``Memory`` and as the servers' ``agent_memory`` (the
  same engine plus the writer record each agent write carries);
- ``serve`` on SQLite, 8 concurrent clients sending ``POST /v1/remember``, as 8 agents
  would: 8 processes of their own, each with a keep-alive connection to a real ``serve``
  process: remembers a second (target >= 500), how many commits they took (group commit,
  docs/agents.md), and the same statements one by one in-process. The clients are lean
  (a socket, no HTTP library; ``LeanClient``): agents run elsewhere in real life, and
  here they share the server's 2 cores (``--client http.client`` uses the library);
- ``recall`` of one pair over ``POST /v1/recall``: p50 and p95 (target p50 <= 5 ms), next
  to ``GET /healthz`` (the HTTP round trip with no engine work) and the engine's own read;
- with ``--postgres``: the same 8 clients over two ``serve`` processes on one PostgreSQL
  (the test suite's pip-installed server, which runs with fsync off), and recalls;
- last, one line per backend: server CPU per remember, the ceiling it implies,
  remembers a second, recall p50.

On a machine whose cores are busy, wall-clock figures mostly measure the scheduler
(each call wakes two processes). So the CPU time each side spends is printed too: the
server process's CPU per request (from /proc) against the engine's own CPU per call in
one process, and the 8 client processes' CPU beside it (on a 2-core machine, clients
that cost more than the server take the core it would use). One server process spends
one core at most, so 1000 / (server CPU ms per remember) is the most remembers a second
it can take on a quiet machine. On PostgreSQL the server CPU is the two ``serve``
processes' (not the database's).

With ``--baseline DIR`` (a checkout of older code) it runs only the served load on
SQLite, that code's server and this one's in turns, each round on fresh stores, and
prints each run and the medians: remembers a second and server CPU per remember.

    python benchmarks/bench_agents.py                      # 200 stdio calls, 8 x 100 served remembers
    python benchmarks/bench_agents.py --baseline /tmp/main --rounds 4 --per-client 200
    python benchmarks/bench_agents.py --calls 0 --postgres # serve only, both backends
    python benchmarks/bench_agents.py --calls 1000 --per-client 500 --recalls 1000 --postgres
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def env(code: Path = ROOT) -> dict[str, str]:
    """This process's environment, with ``code`` (a checkout of the project) first on the path."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(code) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
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
    return None if before is None or after is None or not n else (after - before) * 1000 / n


def ms(x: float | None) -> str:
    return "    n/a" if x is None else f"{x:7.2f}"


def engine_remember(url: str, n: int, *, agent: bool) -> tuple[list[float], float]:
    """Wall time of each remember, and the CPU ms per remember."""
    with open_backend(url) as b:
        store = b.store("memories")
        m = agent_memory(store, {"agent": "bench"}) if agent else Memory(store)
        out: list[float] = []
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

    async def main() -> tuple[list[float], float | None, float]:
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


class LeanClient:
    """An agent's HTTP/1.1 keep-alive connection to ``serve``, with no HTTP library: the
    request is one write, the answer is read up to its Content-Length and its JSON
    envelope checked. Agents run elsewhere in real life, so on this 2-core machine a
    client should take as little of the server's CPU as it can: ``http.client`` parses
    each answer's headers with the email package, about 0.5 ms a request
    (``--client http.client`` measures with it)."""

    def __init__(self, port: int, key: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.head = f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        self.buf = b""

    def post(self, tool: str, args: dict) -> dict:
        body = json.dumps(args).encode()
        self.sock.sendall(f"POST /v1/{tool} HTTP/1.1\r\n{self.head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length = next(int(v) for k, _, v in (h.partition(":") for h in lines[1:]) if k.lower() == "content-length")
        while len(self.buf) < length:
            self._more()
        raw, self.buf = self.buf[:length], self.buf[length:]
        doc = json.loads(raw)
        assert status == 200 and doc["ok"], doc
        return doc["data"]

    def _more(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("serve closed the connection")
        self.buf += chunk

    def close(self) -> None:
        self.sock.close()


class LibraryClient:
    """The same, through ``http.client``."""

    def __init__(self, port: int, key: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.conn.connect()
        self.key = key

    def post(self, tool: str, args: dict) -> dict:
        return post(self.conn, self.key, tool, args)

    def close(self) -> None:
        self.conn.close()


CLIENT_KINDS: dict[str, type[LeanClient] | type[LibraryClient]] = {"lean": LeanClient, "http.client": LibraryClient}


def healthz(port: int) -> dict:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/healthz")
    resp = c.getresponse()
    doc = json.loads(resp.read())
    c.close()
    assert resp.status == 200, doc
    return doc["data"]


def start_serve(url: str, code: Path = ROOT) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        [shutil.which("recall-admin") or "recall-admin", "--store", url, "serve", "--port", str(port)]
        + ["--rate", "1000000"],
        env=env(code),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while True:  # wait for /healthz, bounded
        try:
            healthz(port)
            return proc, port
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit("serve did not start") from None
            time.sleep(0.05)


def make_keys(url: str) -> list[str]:
    keys = []
    with open_backend(url) as b:
        ring = KeyRing(b)
        for c in range(CLIENTS):
            ns = f"bench:c{c}"
            sync_registry(Memory(b.store(ns.replace(":", "."))), [load_starter("coding")], "bench")
            keys.append(ring.create(ns, expires_in=None)[0])
    return keys


def statement(c: int, i: int) -> dict:
    return {"subject": f"user-{i % 50}", "predicate": "uses_technology", "value": f"tech {c}-{i}"}


@dataclass
class Load:
    rate: float  # remembers a second, all clients
    server_cpu: float | None  # CPU ms per remember, all server processes
    client_cpu: float  # CPU ms per remember, all 8 client processes
    commits: int  # transactions the remembers took, all servers


def _client(kind: str, port: int, key: str, c: int, per_client: int, ready: Any, go: Any, out: Any) -> None:
    """One agent: its own process and keep-alive connection, remembers one after another."""
    client = CLIENT_KINDS[kind](port, key)
    ready.put(c)
    go.wait()
    cpu = time.process_time()
    for i in range(per_client):
        client.post("remember", statement(c, i))
    out.put(time.process_time() - cpu)
    client.close()


def run_load(
    procs: list[subprocess.Popen], ports: list[int], keys: list[str], per_client: int, kind: str = "lean"
) -> Load:
    """8 client processes (as 8 agents would be) against the servers, started together."""
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no state of this one
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    clients = [
        ctx.Process(target=_client, args=(kind, ports[c % len(ports)], keys[c], c, per_client, ready, go, out))
        for c in range(CLIENTS)
    ]
    for p in clients:
        p.start()
    for _ in clients:  # every client has started and connected
        ready.get(timeout=120)
    n = CLIENTS * per_client
    before = [cpu_seconds(p.pid) for p in procs]
    t0 = time.perf_counter()
    go.set()
    client_cpu = sum(out.get(timeout=600) for _ in clients) * 1000 / n
    rate = n / (time.perf_counter() - t0)
    after = [cpu_seconds(p.pid) for p in procs]
    for p in clients:
        p.join(timeout=60)
        if p.exitcode != 0:
            raise SystemExit(f"a client process failed (exit {p.exitcode})")
    server: float | None = None
    if None not in before + after:
        server = sum(a - b for a, b in zip(after, before, strict=True) if a is not None and b is not None) * 1000 / n
    commits = sum(healthz(port)["writes"]["commits"] for port in ports)
    return Load(rate, server, client_cpu, commits)


@dataclass
class Recalls:
    wall: list[float]  # each recall's round trip
    healthz: list[float]  # each GET /healthz, taken in turn with the recalls
    server_cpu: float | None  # server CPU ms per recall + /healthz


def recalls_and_healthz(proc: subprocess.Popen, port: int, key: str, n: int) -> Recalls:
    """Round trips of recall and of /healthz, taken in turn so both meet the same load."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    recalls, probes = [], []
    before = cpu_seconds(proc.pid)
    for i in range(n):
        t = time.perf_counter()
        post(conn, key, "recall", {"subject": f"user-{i % 50}", "predicate": "uses_technology"})
        recalls.append(time.perf_counter() - t)
        t = time.perf_counter()
        conn.request("GET", "/healthz")
        resp = conn.getresponse()
        resp.read()
        probes.append(time.perf_counter() - t)
        assert resp.status == 200
    conn.close()
    return Recalls(recalls, probes, per_call_ms(before, cpu_seconds(proc.pid), n))


@dataclass
class Served:
    load: Load
    recalls: Recalls


def served(url: str, servers: int, per_client: int, recalls: int, *, kind: str = "lean", code: Path = ROOT) -> Served:
    """8 client processes over ``servers`` serve processes (of the code in ``code``) on
    one store, then recalls."""
    keys = make_keys(url)
    started = [start_serve(url, code) for _ in range(servers)]
    try:
        load = run_load([p for p, _ in started], [port for _, port in started], keys, per_client, kind)
        return Served(load, recalls_and_healthz(*started[0], keys[0], recalls))
    finally:
        for p, _ in started:
            p.terminate()
        for p, _ in started:
            p.wait(timeout=60)


@dataclass
class Engine:
    alone_rate: float  # the served remembers, one process, no HTTP, one at a time
    alone_cpu: float  # its CPU ms per remember
    recall: list[float]
    recall_cpu: float


def engine_alone(url: str, per_client: int, recalls: int) -> Engine:
    """The same statements, one process, no HTTP, one at a time (into fresh collections),
    and the engine's own read of the pair a served recall reads."""
    with open_backend(url) as b:
        boxes = []
        for c in range(CLIENTS):
            store = b.store(f"alone.c{c}")
            sync_registry(Memory(store), [load_starter("coding")], "bench")
            boxes.append(agent_memory(store, {"agent": "bench"}))
        t0, cpu = time.perf_counter(), time.process_time()
        for i in range(per_client):
            for c in range(CLIENTS):
                boxes[c].remember(**statement(c, i))
        alone = CLIENTS * per_client / (time.perf_counter() - t0)
        alone_cpu = (time.process_time() - cpu) * 1000 / (CLIENTS * per_client)
    with open_backend(url) as b:
        m = Memory(b.store("bench.c0"))
        out = []
        cpu = time.process_time()
        for i in range(recalls):
            t = time.perf_counter()
            m.read_pair(f"user-{i % 50}", "uses_technology")
            out.append(time.perf_counter() - t)
        return Engine(alone, alone_cpu, out, (time.process_time() - cpu) * 1000 / recalls)


def postgres_url() -> str:
    """A fresh database on the test suite's pip-installed PostgreSQL (fsync off)."""
    from tests.pg_server import fresh_database, start_server

    return fresh_database(start_server(), f"bench_agents_{os.getpid()}")


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def p95_ms(xs: list[float]) -> float:
    return sorted(xs)[int(len(xs) * 0.95)] * 1000


def print_served(what: str, r: Served, n: int) -> None:
    load, rec = r.load, r.recalls
    print(f"{what:<48}{load.rate:7.0f} remembers/s (target >= 500)  {verdict(load.rate >= 500)}")
    print(
        f"  commits (group commit)                        {load.commits:7d} for {n} remembers"
        f" ({n / max(load.commits, 1):.1f} a commit)"
    )
    if load.server_cpu is not None:
        ceiling = 1000 / load.server_cpu  # per server process, one core each
        print(
            f"  server CPU per remember                       {load.server_cpu:7.2f} ms"
            f"  (the 8 client processes: {load.client_cpu:.2f} ms)"
        )
        print(f"  one server process (one core) takes at most   {ceiling:7.0f} remembers/s  {verdict(ceiling >= 500)}")
    rec50, hz50 = p50_ms(rec.wall), p50_ms(rec.healthz)
    print(
        f"  recall over /v1                           p50 {rec50:7.2f} ms (target <= 5)  {verdict(rec50 <= 5)}"
        f"   p95 {p95_ms(rec.wall):.2f} ms"
    )
    print(f"  GET /healthz (the round trip alone)       p50 {hz50:7.2f} ms  (recall adds {rec50 - hz50:.2f} ms)")
    if rec.server_cpu is not None:
        print(f"  server CPU per recall + /healthz              {rec.server_cpu:7.2f} ms")


def summary(rows: list[tuple[str, Served]]) -> None:
    print()
    print(f"{'':<24}{'server CPU/remember':>20}{'ceiling/s':>11}{'remembers/s':>13}{'recall p50':>12}")
    for name, r in rows:
        cpu = r.load.server_cpu
        print(
            f"{name:<24}{ms(cpu):>17} ms{'n/a' if cpu is None else f'{1000 / cpu:.0f}':>11}"
            f"{r.load.rate:>13.0f}{p50_ms(r.recalls.wall):>9.2f} ms"
        )


def stdio_figures(folder: Path, calls: int) -> None:
    plain_wall, plain_cpu = engine_remember(fresh_store(folder, "engine.db"), calls, agent=False)
    agent_wall, agent_cpu = engine_remember(fresh_store(folder, "agent.db"), calls, agent=True)
    tool_wall, server_cpu, client_cpu = stdio_remember(fresh_store(folder, "stdio.db"), calls)
    plain, agent, tool = p50_ms(plain_wall), p50_ms(agent_wall), p50_ms(tool_wall)
    print("                                                 wall p50   CPU per call")
    print(f"remember, engine in-process (Memory)            {plain:7.2f} ms  {plain_cpu:7.2f} ms")
    print(f"remember, engine in-process (agent_memory)      {agent:7.2f} ms  {agent_cpu:7.2f} ms")
    print(
        f"remember, MCP tool over stdio                   {tool:7.2f} ms  {ms(server_cpu)} ms server"
        f" + {client_cpu:.2f} ms client"
    )
    print(
        f"  stdio p50 minus the engine's (agent_memory)   {tool - agent:7.2f} ms (target <= 5)"
        f"  {verdict(tool - agent <= 5)}"
    )
    print(
        f"  stdio p50 minus the engine's (Memory)         {tool - plain:7.2f} ms (target <= 5)"
        f"  {verdict(tool - plain <= 5)}"
    )
    if server_cpu is not None:
        over = server_cpu + client_cpu - agent_cpu
        print(f"  CPU the MCP layer adds (server + client)      {over:7.2f} ms (target <= 5)  {verdict(over <= 5)}")


def ab(folder: Path, baseline: Path, rounds: int, per_client: int, kind: str) -> None:
    """The served load on SQLite, the code in ``baseline`` against this checkout's, in turns
    (each round on fresh stores, the order swapped every round), so both meet the same
    machine: remembers a second and server CPU per remember, each run and the medians."""
    print(f"A/B, SQLite, 1 server, {CLIENTS} clients x {per_client} remembers: before = {baseline}, this = {ROOT}")
    runs: dict[str, list[Load]] = {"before": [], "this": []}
    for r in range(rounds):
        order = [("before", baseline), ("this", ROOT)]
        for label, code in order if r % 2 == 0 else order[::-1]:
            load = served(f"sqlite:///{folder / f'ab-{r}-{label}.db'}", 1, per_client, 0, kind=kind, code=code).load
            runs[label].append(load)
            print(
                f"  round {r + 1:2d} {label:<7}{load.rate:7.0f} remembers/s   server CPU {ms(load.server_cpu)} ms"
                f"   clients' CPU {load.client_cpu:5.2f} ms   {load.commits} commits"
            )
    med: dict[str, tuple[float, float | None]] = {}
    for label, loads in runs.items():
        cpus = [x.server_cpu for x in loads if x.server_cpu is not None]
        med[label] = (statistics.median(x.rate for x in loads), statistics.median(cpus) if cpus else None)
        print(f"  median   {label:<7}{med[label][0]:7.0f} remembers/s   server CPU {ms(med[label][1])} ms")
    (b_rate, b_cpu), (t_rate, t_cpu) = med["before"], med["this"]
    cpu_ratio = f", {b_cpu / t_cpu:.2f}x less server CPU a remember" if b_cpu and t_cpu else ""
    print(f"  this / before: {t_rate / b_rate:.2f}x the remembers a second{cpu_ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=200, help="remember calls over stdio (and in-process); 0 skips")
    ap.add_argument("--per-client", type=int, default=100, help="remembers each of the 8 client processes sends")
    ap.add_argument("--recalls", type=int, default=300)
    ap.add_argument(
        "--postgres", action="store_true", help="also two servers on one PostgreSQL (starts the test server)"
    )
    ap.add_argument(
        "--client",
        choices=sorted(CLIENT_KINDS),
        default="lean",
        help="the agents' HTTP client: lean (a socket, no HTTP library; the default) or http.client",
    )
    ap.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="only the A/B: a checkout of older code (e.g. `git archive main | tar -x -C DIR`), served in turns with this one",
    )
    ap.add_argument("--rounds", type=int, default=4, help="A/B rounds (each runs both servers)")
    a = ap.parse_args()
    print(
        f"agents: {CLIENTS} client processes on this machine, HTTP/1.1 keep-alive, "
        + (
            "a lean client (a socket, no HTTP library: agents run elsewhere in real life)"
            if a.client == "lean"
            else "http.client"
        )
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if a.baseline is not None:
            ab(folder, a.baseline.resolve(), a.rounds, a.per_client, a.client)
            return
        if a.calls > 0:
            stdio_figures(folder, a.calls)
        n = CLIENTS * a.per_client
        url = f"sqlite:///{folder / 'served.db'}"
        rows = [("SQLite, 1 server", served(url, 1, a.per_client, a.recalls, kind=a.client))]
        print_served(f"serve on SQLite, {CLIENTS} clients x {a.per_client} remembers", rows[0][1], n)
        e = engine_alone(url, a.per_client, a.recalls)
        print(
            f"  the same remembers in-process, one at a time  {e.alone_rate:7.0f} remembers/s"
            f"  ({e.alone_cpu:.2f} ms CPU each; serve reaches {rows[0][1].load.rate / e.alone_rate:.0%} of it)"
        )
        print(
            f"  recall, engine in-process                 p50 {p50_ms(e.recall):7.2f} ms  ({e.recall_cpu:.2f} ms CPU)"
        )
        if a.postgres:
            rows.append(("PostgreSQL, 2 servers", served(postgres_url(), 2, a.per_client, a.recalls, kind=a.client)))
            print_served(f"serve x2 on PostgreSQL, {CLIENTS} clients x {a.per_client}", rows[1][1], n)
        summary(rows)


if __name__ == "__main__":
    main()
