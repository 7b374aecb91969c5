"""Preview benchmarks (issue 4): cost follows the affected pairs, not the store.

Two previews — a merge and a retroactive redefine — each touch 10,000 pairs and
200,000 events. Each is timed against a plain read of those same events
(listing and decoding them), in the same run, on a large store and on one whose
unaffected part is 10x smaller:

    python benchmarks/bench_preview.py                    # 200,000 affected + 800,000 other events
    python benchmarks/bench_preview.py --pairs 1000 --other 80000   # a quick run

Targets: preview / read <= 3x; preview on the small store within 1.3x of the
large one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recall_admin.demo import build_demo  # noqa: E402
from recall_admin.governance import Stager, preview  # noqa: E402
from recall_engine.instants import parse_instant  # noqa: E402
from recall_engine.memory import Memory  # noqa: E402
from recall_engine.records import make_event  # noqa: E402
from recall_engine.registry import Definition, RegistryRecord  # noqa: E402
from recall_engine.storage import open_backend  # noqa: E402

BASE = parse_instant("2026-02-01")
HOUR = 3_600_000_000_000


def affected(pairs: int):
    """m_source and m_target: pairs x 10 events each (the merge); r_pred: pairs x 20 (the redefine)."""
    for i in range(pairs):
        s = f"acct-{i:06d}"
        for k in range(10):
            yield make_event(s, "m_source", f"v{k % 4}", BASE + k * HOUR + 1)
            yield make_event(s, "m_target", f"v{(k + 1) % 4}", BASE + k * HOUR + 2)
        for k in range(20):
            yield make_event(s, "r_pred", f"w{k % 6}", BASE + k * HOUR + 3)


def build(folder: Path, pairs: int, other: int) -> Memory:
    backend = open_backend(f"sqlite:///{folder / 'p.db'}")
    build_demo(backend, events=other)
    store = backend.store("memories")
    memory = Memory(store)
    memory.append_records(
        [
            RegistryRecord(op="declare", name="m_source", definition=Definition("m_source", "single")),
            RegistryRecord(op="declare", name="m_target", definition=Definition("m_target", "single")),
            RegistryRecord(op="declare", name="r_pred", definition=Definition("r_pred", "single")),
        ]
    )
    store.append_many(affected(pairs))
    return memory


def timed(fn, reps: int) -> float:
    xs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t0)
    return statistics.median(xs)


def measure(memory: Memory, reps: int) -> dict[str, float]:
    store = memory.store
    stager = Stager(memory, "memories", "bench")
    merge = stager.merge("m_source", "m_target")
    redefine = stager.redefine("r_pred", cardinality="multi", retroactive=True)
    out = {}
    out["read_merge"] = timed(lambda: sum(1 for _ in store.predicate_events(["m_source", "m_target"])), reps)
    out["read_redefine"] = timed(lambda: sum(1 for _ in store.predicate_events(["r_pred"])), reps)
    pm = preview(memory, merge)
    pr = preview(memory, redefine)
    out["merge_pairs"], out["merge_events"] = pm.impact.pairs, pm.impact.events_read
    out["redefine_pairs"], out["redefine_events"] = pr.impact.pairs, pr.impact.events_read
    out["merge_changed"], out["redefine_changed"] = pm.impact.answers_changed, pr.impact.history_changed
    out["preview_merge"] = timed(lambda: preview(memory, merge), reps)
    out["preview_redefine"] = timed(lambda: preview(memory, redefine), reps)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=10_000)
    ap.add_argument("--other", type=int, default=800_000, help="unaffected events in the large store")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    results = {}
    for label, other in (("large", args.other), ("small", args.other // 10)):
        with tempfile.TemporaryDirectory(prefix="recall-preview-") as d:
            t0 = time.perf_counter()
            memory = build(Path(d), args.pairs, other)
            total = memory.store.count()
            print(f"{label} store: {total:,} events (built in {time.perf_counter() - t0:.0f} s)")
            r = measure(memory, args.reps)
            results[label] = r
            for kind in ("merge", "redefine"):
                ratio = r[f"preview_{kind}"] / r[f"read_{kind}"]
                print(
                    f"  {kind:9s}: {r[f'{kind}_pairs']:,} pairs, {r[f'{kind}_events']:,} events read; "
                    f"read {r[f'read_{kind}']:.2f} s, preview {r[f'preview_{kind}']:.2f} s -> {ratio:.2f}x   target <= 3x"
                )
            memory.store.backend.close()
    ok = True
    for kind in ("merge", "redefine"):
        ratio = (
            results["small"][f"preview_{kind}"]
            and results["large"][f"preview_{kind}"] / results["small"][f"preview_{kind}"]
        )
        print(f"{kind}: preview on the large store / on the small store = {ratio:.2f}x   target <= 1.3x")
        ok &= ratio <= 1.3
        ok &= results["large"][f"preview_{kind}"] / results["large"][f"read_{kind}"] <= 3
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
