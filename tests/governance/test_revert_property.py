"""Property: apply P; revert P answers exactly what was answered before P, now and at every instant.

For random logs, a random sequence of plans of every kind (define, redefine from now
on or retroactive, merge, split, promote, registry load, conflicts confirm and
exclude) and P the last of them, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import contextlib
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_admin.conflicts import confirm_plan, exclude_plan, find_conflicts
from recall_admin.governance import Stager, apply, revert
from recall_engine.errors import PlanError
from recall_engine.instants import DAY_NS, parse_instant
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.values import value_key

START = parse_instant("2026-01-01")
NOW = parse_instant("2026-11-30")
SUBJECTS = ["s0", "s1", "s2"]
DEFS = [
    Definition("one", "single"),
    Definition("many", "multi"),
    Definition("other", "single"),
    Definition("done", "multi", historical=True),
]

event = st.tuples(
    st.sampled_from(SUBJECTS),
    st.sampled_from(["one", "many", "other", "done", "note"]),
    st.sampled_from(["a", "b"]),  # few values: one value under two predicates (a conflict) is common
    st.integers(0, 120),  # day
    st.booleans(),  # a retraction?
)
change = st.sampled_from(
    [
        ("redefine", "one", {"cardinality": "multi"}),
        ("redefine", "one", {"cardinality": "multi", "retroactive": True}),
        ("redefine", "many", {"cardinality": "single"}),
        ("redefine", "many", {"cardinality": "single", "retroactive": True}),
        ("redefine", "other", {"add_excludes": ["many"], "retroactive": True}),
        ("merge", "other", "one"),
        ("split", "other", None),
        ("define", "fresh", None),
        ("promote", "other", None),
        ("load", "many", None),
        ("confirm", None, None),
        ("exclude", None, None),
    ]
)
# conflict decisions write operator statements: drawn as often as every registry change together
last_change = st.one_of(change, st.just(("confirm", None, None)), st.just(("exclude", None, None)))
_names = itertools.count()


class Clock:
    def __init__(self) -> None:
        self.t = START - DAY_NS

    def __call__(self) -> int:
        self.t += 1
        return self.t


def stage(stager: Stager, kind: str, name, arg):
    memory = stager.memory
    if kind == "redefine":
        return stager.redefine(name, **arg)
    if kind == "merge":
        return stager.merge(name, arg)
    if kind == "split":
        return stager.split(name)
    if kind == "define":
        return stager.define(name, cardinality="single", value_type="string")
    if kind == "promote":
        return stager.promote(name, match=r"^(\w)$")
    if kind == "load":  # what a registry file turning `many` single and adding `extra` declares
        return stager.registry_records(
            [
                RegistryRecord("declare", name, definition=Definition(name, "single")),
                RegistryRecord("declare", "extra", definition=Definition("extra", "multi")),
            ],
            "load registry test",
        )
    found = find_conflicts(memory).conflicts
    if not found:
        raise PlanError("no conflict")
    if kind == "confirm":
        return confirm_plan(stager, found[0], found[0].predicates[-1])
    return exclude_plan(stager, [found[0]])


def every_answer(memory: Memory, instants: list[int]) -> dict:
    out: dict = {}
    for t in instants:
        for s in SUBJECTS:
            for b in memory.profile(s, t):
                out.setdefault((t, s, b.predicate), []).append(value_key(b.value))
    return {k: sorted(v) for k, v in out.items()}


@pytest.fixture
def backend_for_examples(backend):
    return backend


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(log=st.lists(event, min_size=1, max_size=20), prefix=st.lists(change, max_size=3), last=last_change)
def test_revert_restores_every_answer_at_every_instant(backend_for_examples, log, prefix, last):
    clock = Clock()
    memory = Memory(backend_for_examples.store(f"r{next(_names)}"), now=clock)
    memory.append_records([RegistryRecord("declare", x.name, definition=x) for x in DEFS])
    clock.t = NOW
    memory.remember("s0", "one", "a", at=START)  # one conflict at least, for confirm and exclude
    memory.remember("s0", "other", "a", at=START + 1)
    for s, p, v, day, retract in log:
        at = START + day * DAY_NS
        if retract and p != "note":
            memory.forget(s, p, v) if memory.read_pair(s, p, at) else None
        else:
            memory.remember(s, p, v, at=at)
    stager = Stager(memory, memory.store.collection, "prop")
    for kind, name, arg in prefix:
        # a change that cannot be staged here (nothing to change, no conflict, ...) is skipped
        with contextlib.suppress(PlanError):
            apply(memory, stage(stager, kind, name, arg))
    instants = sorted(
        {START + day * DAY_NS for *_, day, _ in log} | {START, START + 1, START + 300 * DAY_NS, NOW + 400 * DAY_NS}
    )  # the last one: "now", after every plan
    instants += [i - 1 for i in instants]
    before = every_answer(memory, instants)
    try:
        p = stage(stager, *last)
    except PlanError:
        return
    apply(memory, p)
    r = revert(stager, p.id)
    apply(memory, r)
    assert every_answer(memory, instants) == before
    with pytest.raises(PlanError, match=f"already reverted by plan {r.id}"):
        revert(stager, p.id)
