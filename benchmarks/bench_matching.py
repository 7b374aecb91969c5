"""Matching quality of the vocabulary suggestions on a labelled set of predicate name pairs.

    python benchmarks/bench_matching.py [--threshold X] [--pairs FILE] [--show]

Each pair of ``benchmarks/match_pairs.json`` is scored as ``vocab suggest`` scores it
(``recall_admin.vocab.pair_score``: names with rapidfuzz after stemming and a table of
same-meaning words, descriptions with the lexical embedder) and suggested as a merge
when the score is at or above the threshold (default: the engine's
``DEFAULT_THRESHOLD``). Prints precision and recall (and the confusion counts), lists
the mistakes with --show, and exits 1 when precision is below 0.95.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recall_admin.vocab import pair_score  # noqa: E402
from recall_engine.registry import Definition  # noqa: E402
from recall_engine.vocabulary import DEFAULT_THRESHOLD  # noqa: E402

MIN_PRECISION = 0.95
HERE = Path(__file__).resolve().parent


def load(path: Path) -> list[dict]:
    pairs = json.loads(path.read_text(encoding="utf-8"))["pairs"]
    for p in pairs:
        if not isinstance(p.get("same"), bool) or not p.get("a") or not p.get("b"):
            raise SystemExit(f"{path}: every pair needs a, b and same (true or false): {p!r}")
    return pairs


def score(p: dict) -> float:
    a = Definition(p["a"], "single", p.get("a_type", "string"), p.get("a_description", ""))
    b = Definition(p["b"], "single", p.get("b_type", "string"), p.get("b_description", ""))
    return pair_score(a, b)


def evaluate(pairs: list[dict], threshold: float) -> dict:
    tp = fp = fn = tn = 0
    mistakes = []
    for p in pairs:
        s = score(p)
        suggested = s >= threshold
        if suggested and p["same"]:
            tp += 1
        elif suggested:
            fp += 1
            mistakes.append(("false merge", p, s))
        elif p["same"]:
            fn += 1
            mistakes.append(("missed", p, s))
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"threshold": threshold, "pairs": len(pairs), "same": tp + fn, "different": fp + tn,
            "tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall,
            "mistakes": mistakes}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    ap.add_argument("--pairs", type=Path, default=HERE / "match_pairs.json")
    ap.add_argument("--show", action="store_true", help="list every mistake")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    r = evaluate(load(args.pairs), args.threshold)
    if args.json:
        print(json.dumps({k: v for k, v in r.items() if k != "mistakes"}))
    else:
        print(f"pairs: {r['pairs']} ({r['same']} same-meaning, {r['different']} different-meaning)")
        print(f"threshold: {r['threshold']}")
        print(f"suggested merges: {r['tp'] + r['fp']} (right {r['tp']}, wrong {r['fp']})")
        print(f"precision: {r['precision']:.3f}")
        print(f"recall: {r['recall']:.3f}")
    if args.show:
        for kind, p, s in r["mistakes"]:
            print(f"  {kind:12} {s:.3f}  {p['a']} / {p['b']}  ({p.get('why', '')})")
    if r["precision"] < MIN_PRECISION:
        print(f"FAIL: precision {r['precision']:.3f} is below {MIN_PRECISION}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
