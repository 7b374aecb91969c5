"""Property: for random logs and random staged changes, the preview's "after" is what
the store answers once the plan is applied, and every pair it does not list keeps its answer."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_admin.governance import Stager, apply, preview
from recall_engine.instants import DAY_NS, parse_instant
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.storage import open_backend
from recall_engine.values import value_key

START = parse_instant("2026-01-01")
NOW = parse_instant("2026-11-30")
SUBJECTS = ["s0", "s1", "s2"]
VALUES = ["a", "b", "c"]
DEFS = [
    Definition("one", "single"),
    Definition("many", "multi"),
    Definition("other", "single"),
    Definition("done", "multi", historical=True),
]

event = st.tuples(
    st.sampled_from(SUBJECTS),
    st.sampled_from(["one", "many", "other", "done", "note"]),
    st.sampled_from(VALUES),
    st.integers(0, 200),  # day
    st.booleans(),  # a retraction?
)
change = st.sampled_from(
    [
        ("redefine", "one", {"cardinality": "multi"}),
        ("redefine", "one", {"cardinality": "multi", "retroactive": True}),
        ("redefine", "many", {"cardinality": "single"}),
        ("redefine", "many", {"cardinality": "single", "retroactive": True}),
        ("redefine", "other", {"add_excludes": ["many"], "retroactive": True}),
        ("redefine", "many", {"add_excludes": ["done"], "retroactive": True}),
        ("merge", "other", "one"),
        ("promote", "other", None),
    ]
)


class Clock:
    def __init__(self) -> None:
        self.t = START - DAY_NS

    def __call__(self) -> int:
        self.t += 1
        return self.t


def answers(memory: Memory) -> dict[tuple[str, str], list[str]]:
    out = {}
    for s in SUBJECTS:
        for b in memory.profile(s):
            out.setdefault((s, b.predicate), []).append(value_key(b.value))
    return {k: sorted(v) for k, v in out.items()}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(event, min_size=1, max_size=25), change)
def test_preview_after_is_what_apply_gives(log, staged):
    with tempfile.TemporaryDirectory() as d:
        backend = open_backend(f"sqlite:///{Path(d) / 'p.db'}")
        clock = Clock()
        memory = Memory(backend.store("memories"), now=clock)
        memory.append_records([RegistryRecord("declare", x.name, definition=x) for x in DEFS])
        clock.t = NOW
        for s, p, v, day, retract in log:
            at = START + day * DAY_NS
            if retract and p != "note":
                memory.forget(s, p, v) if memory.read_pair(s, p, at) else None
            else:
                memory.remember(s, p, v, at=at)
        stager = Stager(memory, "memories", "prop")
        kind, name, arg = staged
        try:
            if kind == "redefine":
                plan = stager.redefine(name, **arg)
            elif kind == "merge":
                plan = stager.merge(name, arg)
            else:
                plan = stager.promote(name, match=r"^(\w)$")
        except Exception as exc:  # a change that cannot be staged here (nothing to change, no note)
            assert getattr(exc, "code", None) == "invalid_plan", exc
            backend.close()
            return
        before = answers(memory)
        pv = preview(memory, plan, as_of=START + 100 * DAY_NS)
        apply(memory, plan)
        after = answers(memory)
        listed = set()
        for c in pv.impact.changes:
            listed.add((c.subject, c.predicate))
            got = after.get((c.subject, c.predicate), [])
            assert got == sorted(value_key(v) for v in c.after), (c, got)
            at = START + 100 * DAY_NS
            then = (
                sorted(b.key for b in memory.read_pair(c.subject, c.predicate, at))
                if c.predicate in (memory.timeline().predicates())
                else []
            )
            if c.after_as_of is not None:
                assert then == sorted(value_key(v) for v in c.after_as_of), (c, then)
        for pair, vals in before.items():
            if pair not in listed and pair[1] in memory.timeline().predicates():
                assert after.get(pair, []) == vals, (pair, vals, after.get(pair))
        backend.close()
