"""Time of `conflicts list` on a store of N events.

    python benchmarks/bench_conflicts.py [--events N] [--store PATH] [--runs R]

Builds (or reuses, when it already holds at least N events) an SQLite store seeded
by the demo generator (``recall_admin.demo.build_demo``: storylines plus generated
subjects whose goal/did, likes/dislikes, prefers_language/uses_technology pools
overlap, so conflicts and conflict candidates are plentiful), then runs the
conflicts listing R times and prints its p50, with the same run's index scan
(``Store.shared_values`` alone) for comparison. The target is p50 <= 2 s at
1,000,000 events (``--events 1000000``); the default is a small store.
Exits 1 when ``--max-p50`` is given and exceeded.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recall_admin.conflicts import find_conflicts  # noqa: E402
from recall_admin.demo import build_demo  # noqa: E402
from recall_engine.memory import Memory  # noqa: E402
from recall_engine.storage import open_backend  # noqa: E402
from recall_engine.text import NOTE  # noqa: E402


def ensure_store(path: Path, events: int) -> None:
    with open_backend(str(path)) as backend:
        have = dict(backend.collections()).get("memories", 0)
        if have >= events * 0.99:
            print(f"reusing {path} ({have} events)", file=sys.stderr)
            return
        if have:
            raise SystemExit(f"{path} holds {have} events, fewer than {events}; give another --store")
        t = time.perf_counter()
        last = [0.0]

        def progress(read: int, written: int = 0) -> None:
            if time.perf_counter() - last[0] > 5:
                last[0] = time.perf_counter()
                print(f"  building: {read} events", file=sys.stderr)

        build_demo(backend, "memories", events=events, progress=progress)
        print(f"built {path} in {time.perf_counter() - t:.1f} s", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=20_000, help="store size (default 20000; the target is 1000000)")
    ap.add_argument("--store", type=Path, default=None, help="SQLite file to build or reuse")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--max-p50", type=float, default=None, help="fail when the p50 (seconds) is above this")
    ap.add_argument(
        "--cli",
        action="store_true",
        help="also time `recall-admin --json conflicts list` end to end (a new process each run)",
    )
    args = ap.parse_args(argv)
    path = args.store or Path(tempfile.gettempdir()) / f"recall-bench-conflicts-{args.events}.db"
    ensure_store(path, args.events)
    with open_backend(str(path)) as backend:
        store = backend.store("memories", create=False)
        memory = Memory(store)
        notes = memory.timeline().stored_names(NOTE)
        scans, lists = [], []
        listing = None
        for _ in range(args.runs):
            t = time.perf_counter()
            n_rows = sum(1 for _ in store.shared_values(exclude_predicates=notes))
            scans.append(time.perf_counter() - t)
            t = time.perf_counter()
            listing = find_conflicts(Memory(store))  # a fresh Memory: registry read included
            lists.append(time.perf_counter() - t)
        assert listing is not None
        p50 = statistics.median(lists)
        scan = statistics.median(scans)
        print(f"events: {store.count()}")
        print(
            f"candidates (index rows): {n_rows}; conflicts: {len(listing.conflicts)} in {len(listing.groups)} group(s)"
        )
        print(f"index scan p50: {scan:.3f} s")
        print(f"conflicts list p50: {p50:.3f} s (runs: {', '.join(f'{x:.3f}' for x in lists)})")
        print(f"ratio list / index scan: {p50 / scan:.2f}" if scan > 0 else "ratio: n/a")
        if args.cli:
            import subprocess

            cmd = [
                sys.executable,
                "-c",
                "from recall_admin.cli import main; main()",
                "--store",
                str(path),
                "--json",
                "conflicts",
                "list",
            ]
            walls = []
            for _ in range(args.runs):
                t = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                walls.append(time.perf_counter() - t)
            print(
                f"CLI conflicts list p50 (process start, imports, JSON included): {statistics.median(walls):.3f} s "
                f"(runs: {', '.join(f'{x:.3f}' for x in walls)})"
            )
        if args.max_p50 is not None and p50 > args.max_p50:
            print(f"FAIL: p50 {p50:.3f} s is above {args.max_p50} s", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
