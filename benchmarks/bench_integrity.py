"""Integrity figures (issue 11): bad inputs handled, events lost, kill -9 all-or-nothing,
concurrent writers with a reader, on SQLite and PostgreSQL (the test server of
tests/pg_server.py).

    python benchmarks/bench_integrity.py                   # both backends, small: 4 x 300 writes, 4 kills
    python benchmarks/bench_integrity.py --full            # the issue's sizes: 4 x 2,000 writes, 25 kills
    python benchmarks/bench_integrity.py --writes 500 --kills 5 --backend sqlite

Every figure is a count from this run; nothing here is timed against a threshold.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recall_engine.memory import Memory  # noqa: E402
from recall_engine.storage import open_backend  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
REGISTRY = "registry: bench\npredicates:\n  prefers_editor: {cardinality: single}\n"

# --- workers (run as: python bench_integrity.py --worker KIND URL ARGS...) -------------------


def worker(kind: str, url: str, *args: str) -> None:
    backend = open_backend(url)
    memory = Memory(backend.store("memories"))
    if kind == "write":  # N remembers, each its own transaction
        w, n = int(args[0]), int(args[1])
        for k in range(n):
            memory.remember(f"w{w}-{k % 50}", "note", f"writer {w} note {k}", at=10**18 + k * 8 + w)
    elif kind == "read":  # recall in a loop until killed; count failures
        fails = 0
        while True:
            try:
                memory.profile("w0-1")
            except Exception as e:  # noqa: BLE001 - counted, printed
                fails += 1
                print(f"read failed: {e}", flush=True)
            sys.stdout.flush()
    elif kind in ("remember", "apply", "promote"):
        from recall_admin.governance import Stager, apply

        for k in range(10**9):
            if k == 1:  # after one whole unit: the first one also loads the embedder
                print("started", flush=True)
            if kind == "remember":  # a statement with replaces: the event and its retraction together
                s = f"{args[0]}-{k}"
                memory.remember(s, "goal", "run", at=10**18 + k)
                memory.remember(s, "did", "run", at=10**18 + k + 1, replaces=[("goal", "run")])
            elif kind == "apply":  # a plan: its record and its `applied` record together
                stager = Stager(memory, "memories", "bench")
                plan = stager.define(f"p_{args[0]}_{k}", cardinality="single", value_type="string")
                apply(memory, plan, "bench")
            else:  # promote 5 notes: the record and every promoted note together
                ids = [
                    memory.remember(f"{args[0]}-{k}", "note", f"I use vim {j}", at=10**18 + k * 10 + j).stored.event_id
                    for j in range(5)
                ]
                stager = Stager(memory, "memories", "bench")
                plan = stager.promote("prefers_editor", notes={i: "vim" for i in ids})
                apply(memory, plan, "bench")


# --- figures -------------------------------------------------------------------------------


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def fresh(kind: str, tmp: str, name: str) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp}/{name}.db"
    from tests.pg_server import fresh_database, start_server

    return fresh_database(start_server(), f"bench_{name}_{os.getpid()}")


def seeded(url: str) -> Memory:
    """A collection with the coding registry (goal, did, prefers_editor, ...) declared."""
    from recall_admin.demo import registry_events

    memory = Memory(open_backend(url).store("memories"))
    memory.store.append(registry_events(["coding"], "bench"))
    return memory


def concurrent(url: str, writers: int, per: int) -> dict:
    memory = seeded(url)
    before = memory.store.count()
    reader = spawn("read", url)
    procs = [spawn("write", url, str(w), str(per)) for w in range(writers)]
    errors = []
    for p in procs:
        _, err = p.communicate()
        if p.returncode:
            errors.append(err.strip().splitlines()[-1] if err.strip() else f"exit {p.returncode}")
    reader.send_signal(signal.SIGKILL)
    out, _ = reader.communicate()
    notes = sum(1 for e in memory.store.all_events() if e.predicate == "note") - 0
    return {
        "written": notes,
        "expected": writers * per,
        "lost": writers * per - notes,
        "writer_errors": errors,
        "reader_failures": out.count("read failed"),
        "locked": sum("locked" in x for x in errors) + out.count("locked"),
        "log_grew": memory.store.count() - before,
    }


def kills(url: str, kind: str, runs: int) -> dict:
    memory = seeded(url)
    for run in range(runs):
        p = spawn(kind, url, f"r{run}")
        assert p.stdout.readline().strip() == "started", p.stderr.read()
        time.sleep(0.3 + 0.37 * (run % 4))  # kill at varied points of the loop
        p.send_signal(signal.SIGKILL)
        p.wait()
    events = list(memory.store.all_events())
    broken = 0
    if kind == "remember":
        retracted = {e.caused_by for e in events if e.retraction and e.caused_by}
        done = [e for e in events if e.predicate == "did" and not e.retraction]
        broken = sum(1 for e in done if e.id not in retracted)
    else:
        tl = memory.timeline()
        plans = {r.record.plan for r in tl.log if r.record.plan}
        applied = {r.record.plan for r in tl.log if r.record.op == "applied"}
        done = [r for r in tl.log if r.record.op == "applied"]
        broken = len(plans ^ applied)
        if kind == "promote":
            promoted = [r.record for r in tl.log if r.record.op == "promote"]
            broken += sum(1 for r in promoted if len(r.notes) != 5)
    return {"runs": runs, "broken": broken, "done": len(done)}


def bad_inputs(url: str, tmp: str) -> dict:
    from typer.testing import CliRunner

    from recall_admin.cli import app

    runner = CliRunner()
    store = ["--store", url, "--json"]
    d = Path(tmp)
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "notjson.json").write_text("{nope")
    (d / "bin.json").write_bytes(bytes(range(256)))
    (d / "laughs.yaml").write_text(
        "a: &a ["
        + ",".join(["x"] * 50)
        + "]\n"
        + "".join(f"{c}: &{c} [" + ",".join([f"*{p}"] * 50) + "]\n" for p, c in zip("abcdefg", "bcdefgh", strict=True))
    )
    (d / "tag.yaml").write_text("registry: !!python/object/apply:os.system ['true']\n")
    (d / "empty.db").write_bytes(b"")
    (d / "junk.db").write_bytes(bytes(range(256)) * 8)
    (d / "bad.jsonl").write_text('{"id":"m-0","subject":"a","predicate":"note","value":"x"}\n')
    long = "x" * 5000
    attacks: list[list[str]] = [
        ["remember", "carol", "note", long],
        ["remember", long[:300], "note", "x"],
        ["remember", "carol", "shell\x1b[2Jused", "zsh"],
        ["remember", "carol", "note", "x", "--at", "1960-01-01"],
        ["remember", "carol", "note", "x", "--at", "2150-01-01"],
        ["remember", "carol", "note", "x", "--at", "99999-01-01"],
        ["remember", "carol", "note", "x", "--at", "2026-13-01"],
        ["remember", "carol", "shoe_size", "1,2,3"],
        ["remember", "carol", "shoe_size", "1_000"],
        ["remember", "carol", "shoe_size", "nan"],
        ["remember", "carol", "shoe_size", "1e999"],
        ["remember", "carol", "shoe_size", "8", "--replaces", "shoe_size=abc"],
        ["remember", "recall:registry", "note", "x"],
        ["search", "ab\udcff"],
        ["remember", "carol", "note", "x\udcffy"],
        ["--operator", "  ", "define", "foo_a", "--type", "string", "--cardinality", "single", "--apply"],
        ["--operator", "x" * 300, "define", "foo_b", "--type", "string", "--cardinality", "single", "--apply"],
        ["--operator", "a\x1b[2Jb", "define", "foo_c", "--type", "string", "--cardinality", "single", "--apply"],
        ["apply", str(d)],
        ["apply", str(d / "missing.json")],
        ["apply", str(d / "deep.json")],
        ["apply", str(d / "notjson.json")],
        ["apply", str(d / "bin.json")],
        ["import", str(d / "deep.json")],
        ["import", str(d / "bin.json")],
        ["import", str(d / "bad.jsonl")],
        ["audit", "verify", str(d / "deep.json")],
        ["audit", "verify", str(d / "bin.json")],
        ["audit", "import", str(d / "notjson.json")],
        ["registry", "load", str(d / "laughs.yaml")],
        ["registry", "load", str(d / "tag.yaml")],
        ["notes", "list", "--match", "(a|aa)+$"],
        ["notes", "list", "--match", "("],
        ["verify", "--digest", "sha256:abc"],
        ["export", "-o", str(d / "no-such-folder" / "x.jsonl")],
        ["export", "-o", str(d)],
        ["recall", "carol", "--as-of", "yesterday-ish"],
    ]
    stores = [
        ["--store", "postgresql://agent:secret", "--json", "recall", "carol"],
        ["--store", "postgresql://agent:secret/db", "--json", "recall", "carol"],
        ["--store", "sqlite://", "--json", "recall", "carol"],
        ["--store", "ftp://host/x", "--json", "recall", "carol"],
        ["--store", str(d / "empty.db"), "--json", "recall", "carol"],
        ["--store", str(d / "junk.db"), "--json", "recall", "carol"],
    ]
    runner.invoke(app, [*store, "init", "--registry", "coding", "--registry", "personal-assistant"])
    runner.invoke(app, [*store, "define", "shoe_size", "--type", "number", "--cardinality", "single", "--apply"])
    runner.invoke(app, [*store, "remember", "zed", "note", "a" * 40 + "c"])
    runner.invoke(app, [*store, "remember", "u1", "likes", "coffee", "--at", "2026-01-01"])
    runner.invoke(app, [*store, "remember", "u1", "prefers_language", "coffee", "--at", "2026-01-02"])
    attacks += resealed_plans(runner, store, d) + bad_imports(d)
    before = open_backend(url, read_only=True).store("memories").count()
    failed = []
    for argv in [[*store, *a] for a in attacks] + stores:
        r = runner.invoke(app, argv)
        out = r.stdout + r.stderr
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            doc = {}
        clean = (
            r.exit_code == 1
            and doc.get("ok") is False
            and doc["error"]["code"] != "internal_error"
            and "Traceback" not in out
            and "secret" not in out
            and "\x1b" not in out
        )
        if not clean:
            failed.append((argv[3:6] if argv[0] == "--store" else argv, r.exit_code, out[:160]))
    after = open_backend(url, read_only=True).store("memories").count()
    return {
        "tried": len(attacks) + len(stores),
        "handled": len(attacks) + len(stores) - len(failed),
        "failed": failed,
        "events_written_by_refusals": after - before,
    }


def resealed_plans(runner, store: list[str], d: Path) -> list[list[str]]:
    """Plan files edited and sealed again (the seal is an unkeyed hash): `apply` arguments."""
    import dataclasses

    from recall_admin.plans import read_plan, write_plan
    from recall_engine.records import make_event

    runner.invoke(app_(), [*store, "redefine", "likes", "--description", "Liked.", "--plan-out", str(d / "r.json")])
    conflict = json.loads(runner.invoke(app_(), [*store, "conflicts", "list"]).stdout)["data"]["conflicts"][0]["id"]
    runner.invoke(
        app_(), [*store, "conflicts", "confirm", conflict, "--keep", "likes", "--plan-out", str(d / "c.json")]
    )
    redefine, confirm = read_plan(d / "r.json"), read_plan(d / "c.json")
    rec, d0 = redefine.records[0], redefine.records[0].definition
    assert d0 is not None
    first, *rest = confirm.statements
    tea = make_event(
        first.subject, first.predicate, "tea", first.observed_at, source="operator", evidence=first.evidence
    )
    edits = {
        "enum": dataclasses.replace(
            redefine, records=(dataclasses.replace(rec, definition=dataclasses.replace(d0, value_type="enum")),)
        ),
        "alias": dataclasses.replace(
            redefine, records=(dataclasses.replace(rec, definition=dataclasses.replace(d0, aliases=("adores",))),)
        ),
        "number": dataclasses.replace(
            redefine, records=(dataclasses.replace(rec, definition=dataclasses.replace(d0, value_type="number")),)
        ),
        "nobody": dataclasses.replace(redefine, records=(dataclasses.replace(rec, operator="nobody"),)),
        "control-planner": dataclasses.replace(
            redefine, operator="x\x1b]0;PWNED\x07", records=(dataclasses.replace(rec, operator="x\x1b]0;PWNED\x07"),)
        ),
        "2100": dataclasses.replace(redefine, at=4102444800 * 10**9),
        "backdated": dataclasses.replace(redefine, at=1_600_000_000 * 10**9),
        "kind": dataclasses.replace(confirm, statements=(dataclasses.replace(first, kind="preference"), *rest)),
        "replaces": dataclasses.replace(confirm, statements=(dataclasses.replace(first, replaces=()), *rest)),
        "no-retraction": dataclasses.replace(confirm, statements=(first,)),
        "value": dataclasses.replace(
            confirm, statements=(tea, *(dataclasses.replace(e, caused_by=tea.id) for e in rest))
        ),
        "agent-source": dataclasses.replace(
            confirm, statements=(dataclasses.replace(first, source="user_stated"), *rest)
        ),
    }
    out = []
    for name, plan in edits.items():
        write_plan(plan.sealed(), d / f"resealed-{name}.json")
        out.append(["apply", str(d / f"resealed-{name}.json")])
    return out


def bad_imports(d: Path) -> list[list[str]]:
    """JSONL lines `remember` would refuse: `import` arguments."""
    import dataclasses

    from recall_engine.records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, make_event

    day = 1767312000 * 10**9  # 2026-01-02
    lines = {
        "number-under-string": make_event("carol", "likes", 42, day),
        "unknown-predicate": make_event("carol", "shoe_size_xx", "9", day),
        "dated-2100": make_event("carol", "likes", "cake", 4102444800 * 10**9),
        "forged-id": dataclasses.replace(make_event("carol", "likes", "coffee", day), value="whisky"),
        "bad-registry-record": make_event(REGISTRY_SUBJECT, REGISTRY_PREDICATE, '{"op":"explode"}', day),
        "reserved-subject": make_event("recall:admin", "likes", "tea", day),
    }
    out = []
    for name, e in lines.items():
        (d / f"{name}.jsonl").write_text(json.dumps(e.to_json()) + "\n")
        out.append(["import", str(d / f"{name}.jsonl")])
    return out


def app_():
    from recall_admin.cli import app

    return app


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--writes", type=int, default=300, help="per writer (the issue's figure: 2,000; see --full)")
    ap.add_argument("--kills", type=int, default=4, help="kill -9 runs per write kind (--full: 25)")
    ap.add_argument("--full", action="store_true", help="the issue's sizes: 4 x 2,000 writes, 25 kills")
    a = ap.parse_args()
    if a.full:
        a.writers, a.writes, a.kills = 4, 2000, 25
    kinds = ["sqlite", "postgres"] if a.backend == "both" else [a.backend]
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            print(f"== {kind}")
            b = bad_inputs(fresh(kind, tmp, "bad"), tmp)
            print(
                f"bad inputs: {b['handled']}/{b['tried']} handled cleanly; "
                f"events written by refused inputs: {b['events_written_by_refusals']}"
            )
            for f in b["failed"]:
                print("  NOT handled:", f)
            for what in ("remember", "apply", "promote"):
                k = kills(fresh(kind, tmp, f"kill_{what}"), what, a.kills)
                print(f"kill -9 during {what}: {k['runs']} runs, {k['done']} complete writes, {k['broken']} partial")
            c = concurrent(fresh(kind, tmp, "conc"), a.writers, a.writes)
            print(
                f"concurrent writers: {a.writers} x {a.writes}: {c['written']} written, {c['lost']} lost; "
                f"writer errors {len(c['writer_errors'])}, reader failures {c['reader_failures']}, "
                f"'database is locked' {c['locked']}"
            )
            for e in c["writer_errors"][:3]:
                print("  writer error:", e)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:])
    else:
        sys.exit(main())
