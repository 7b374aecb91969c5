"""Fold cost against decode cost for one pair of 10,000 events.

The issue's target: folding a pair costs at most 3x decoding its stored events.
This builds one realistic pair (single-valued with changes, restatements,
targeted and blanket retractions, corrections by ``replaces``, events under a
former name, a registry timeline with a few definitions), serialises each event
as a store holds it (``json.dumps(e.to_json())``), then measures in the same run:

- decode: ``decode_event(json.loads(text))`` for all 10,000;
- fold: ``fold(events, subject, predicate, timeline, now)``.

Each is repeated; the median counts. Prints events/second for both and the
ratio fold/decode; exits 1 if the ratio is above 3.0.

    python benchmarks/bench_fold.py [--events 10000] [--repeat 7] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recall_engine.fold import fold  # noqa: E402
from recall_engine.instants import NS, parse_instant  # noqa: E402
from recall_engine.records import Replace, decode_event, make_event  # noqa: E402
from recall_engine.registry import Definition, RegistryRecord  # noqa: E402
from recall_engine.timeline import Timeline  # noqa: E402

TARGET = 3.0
SUBJECT = "user"
PREDICATE = "favorite_editor"
START = parse_instant("2024-01-01")
EDITORS = [
    "vim",
    "emacs",
    "zed",
    "helix",
    "neovim",
    "vscode",
    "sublime",
    "nano",
    "kakoune",
    "micro",
    "IntelliJ",
    "Xcode",
    "Atom",
    "TextMate",
    "BBEdit",
    "notepad++",
    "gedit",
    "kate",
    "geany",
    "acme",
]


def build(n: int, seed: int = 7):
    rng = random.Random(seed)
    t0 = START
    step = 37 * 60 * NS  # about 37 minutes apart, with jitter and some equal instants
    registry = [
        RegistryRecord("declare", "editor", definition=Definition("editor", "single", "string", "editor")).to_event(t0),
        RegistryRecord(
            "declare",
            PREDICATE,
            definition=Definition(PREDICATE, "single", "string", "the editor the user prefers", aliases=("editor",)),
        ).to_event(t0 + 1000 * step),
        RegistryRecord(
            "redefine", PREDICATE, definition=Definition(PREDICATE, "multi", "string", "the editors the user uses")
        ).to_event(t0 + 4000 * step),
        RegistryRecord(
            "redefine", PREDICATE, definition=Definition(PREDICATE, "single", "string", "the editor the user prefers")
        ).to_event(t0 + 6000 * step),
        RegistryRecord("declare", "shell", definition=Definition("shell", "single")).to_event(t0 + 10),
    ]
    events = []
    at = t0
    for i in range(n):
        if rng.random() > 0.05:  # 5% share an instant with the previous event
            at += step + rng.randrange(NS)
        name = "editor" if i < 1000 else PREDICATE  # the first thousand under the former name
        r = rng.random()
        value = rng.choice(EDITORS)
        if r < 0.80:
            reps = (Replace(PREDICATE, rng.choice(EDITORS)),) if rng.random() < 0.03 else ()
            events.append(
                make_event(
                    SUBJECT,
                    name,
                    value,
                    at,
                    source=rng.choice(["user_stated", "agent_inferred", "tool_result"]),
                    confidence=rng.choice([1.0, 0.9, 0.75]),
                    evidence=f"I switched to {value} today" if rng.random() < 0.3 else "",
                    replaces=reps,
                )
            )
        elif r < 0.97:
            events.append(make_event(SUBJECT, name, value, at, retraction=True))
        else:
            events.append(make_event(SUBJECT, name, None, at, retraction=True))
    rng.shuffle(events)  # a store returns them in position order, not fold order
    now = at + 1000 * NS
    return registry, events, now


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--profile", action="store_true", help="print a cProfile of one fold")
    args = ap.parse_args(argv)

    registry, events, now = build(args.events)
    texts = [json.dumps(e.to_json()) for e in events]
    decoded = [decode_event(json.loads(t)) for t in texts]
    assert decoded == events, "decoding must give back the events"

    def decode_all():
        return [decode_event(json.loads(t)) for t in texts]

    def fold_all():
        tl = Timeline(registry)  # the timeline is folded per read too
        return fold(decoded, SUBJECT, PREDICATE, tl, now)

    beliefs = fold_all()
    decode_all()  # warm up
    d = median_time(decode_all, args.repeat)
    f = median_time(fold_all, args.repeat)
    ratio = f / d
    n = len(events)
    print(f"events: {n} (answer now: {[b.value for b in beliefs]})")
    print(f"decode: {n / d:12,.0f} events/s  ({d * 1000:.1f} ms, median of {args.repeat})")
    print(f"fold:   {n / f:12,.0f} events/s  ({f * 1000:.1f} ms, median of {args.repeat})")
    print(f"ratio fold/decode: {ratio:.2f} (target at most {TARGET:.1f})")
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(fold_all)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(15)
    if ratio > TARGET:
        print("FAIL: folding costs more than 3x decoding", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
