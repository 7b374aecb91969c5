"""Search quality on the demo store: recall@10 for lexical, model and hybrid ranking.

    python benchmarks/bench_search_quality.py [--show]

Builds the demo store (``recall-admin demo``, collection "memories") in a
temporary SQLite file and asks each question of ``benchmarks/search_queries.txt``
three ways; a question counts when its expected pair is among the first 10 pairs:

- lexical: the shipped search without the sentence model (the keyword index and
  the stored lexical vectors: the fallback);
- model: every event of the store ranked by the model alone (cosine of the
  question and the event's sentence), grouped into pairs;
- hybrid: the shipped search with the model (docs/review-queues.md).

Exits 1 when hybrid recall is below lexical recall.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from recall_admin.demo import build_demo  # noqa: E402
from recall_engine import sentence  # noqa: E402
from recall_engine.embed import event_text  # noqa: E402
from recall_engine.memory import Memory  # noqa: E402
from recall_engine.ranking import rank_pairs  # noqa: E402
from recall_engine.search import search  # noqa: E402
from recall_engine.storage import open_backend  # noqa: E402

HERE = Path(__file__).resolve().parent
K = 10


def load_queries(path: Path = HERE / "search_queries.txt") -> list[tuple[str, tuple[str, str]]]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        q, _, want = (x.strip() for x in line.partition("|"))
        subject, _, predicate = want.partition("/")
        if not q or not subject or not predicate:
            raise SystemExit(f"{path}:{n}: expected 'question | subject/predicate'")
        out.append((q, (subject, predicate)))
    return out


def shipped(memory: Memory, q: str) -> list[tuple[str, str]]:
    return list(dict.fromkeys((b.subject, b.predicate) for b in search(memory, q, limit=K)))[:K]


def model_only(memory: Memory, events, matrix: np.ndarray, q: str) -> list[tuple[str, str]]:
    qv = sentence.embed_texts([q])[0]
    order = np.argsort(-(matrix @ qv), kind="stable")
    tl = memory.timeline()
    return [(p.subject, p.predicate) for p in rank_pairs([events[i] for i in order], tl.canonical)][:K]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="list the questions each ranking misses")
    args = ap.parse_args(argv)
    queries = load_queries()
    with tempfile.TemporaryDirectory() as tmp:
        backend = open_backend(f"sqlite:///{Path(tmp) / 'demo.db'}")
        build_demo(backend)
        memory = Memory(backend.store("memories"))
        if sentence.model() is None:
            print("the sentence model is not installed: nothing to compare", file=sys.stderr)
            return 1
        events = list(memory.store.all_events())
        matrix = sentence.embed_texts([event_text(e) for e in events])
        results: dict[str, list[bool]] = {"lexical": [], "model": [], "hybrid": []}
        misses: dict[str, list[str]] = {k: [] for k in results}
        timings = []
        for q, want in queries:
            t = time.perf_counter()
            got = {"hybrid": shipped(memory, q)}
            timings.append(time.perf_counter() - t)
            got["model"] = model_only(memory, events, matrix, q)
            enc = sentence._state.get("encoder")
            sentence._state["encoder"] = None  # the fallback: the same search without the model
            try:
                got["lexical"] = shipped(memory, q)
            finally:
                sentence._state["encoder"] = enc
            for k in results:
                results[k].append(want in got[k])
                if want not in got[k]:
                    misses[k].append(f"{q} -> {want[0]}/{want[1]}")
        backend.close()
    n = len(queries)
    print(f"questions: {n} over the demo store ({len(events)} events)")
    for k in ("lexical", "model", "hybrid"):
        print(f"recall@{K} {k:8}: {sum(results[k]) / n:.3f} ({sum(results[k])}/{n})")
    print(f"hybrid search p50: {sorted(timings)[len(timings) // 2] * 1000:.1f} ms (model loaded, warm cache)")
    if args.show:
        for k in results:
            for m in misses[k]:
                print(f"  {k:8} missed: {m}")
    if sum(results["hybrid"]) < sum(results["lexical"]):
        print("FAIL: hybrid recall is below lexical recall", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
