"""remember_many: the answers of one remember at a time, one transaction (both backends)."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_engine.errors import InvalidInput
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory

from .conftest import declare

START = parse_instant("2026-03-01")
DAY = 86_400 * 10**9
_names = itertools.count()
ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.t = START

    def __call__(self) -> int:
        self.t += 1000
        return self.t


statement = st.fixed_dictionaries(
    {
        "subject": st.sampled_from(["ann", "bob"]),
        "predicate": st.sampled_from(["prefers_editor", "likes", "dislikes", "goal", "did", "Shell Used"]),
        "value": st.sampled_from(["vim", "emacs", "zed"]),
    },
    optional={
        "at": st.integers(1, 30).map(lambda d: START - d * DAY),
        "replaces": st.lists(
            st.tuples(st.sampled_from(["prefers_editor", "goal", "likes"]), st.sampled_from(["vim", "emacs"])),
            max_size=1,
        ),
    },
)


def pair_answers(m: Memory):
    return {
        (s, p): [b.to_json() for b in m.read_pair(s, p)]
        for s in ("ann", "bob")
        for p in ("prefers_editor", "likes", "dislikes", "goal", "did")
    }


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    statements=st.lists(statement, min_size=1, max_size=20),
    stored=st.lists(statement, max_size=4),
    open_vocabulary=st.booleans(),
)
def test_a_batch_answers_as_one_remember_at_a_time(backend, statements, stored, open_vocabulary):
    """``stored`` are remembered first, one at a time, into both: a batch reads the
    subjects the store holds, and skips reading the ones it holds nothing of."""
    n = next(_names)
    one = Memory(backend.store(f"one{n}"), now=Clock())
    batch = Memory(backend.store(f"batch{n}"), now=Clock())
    declare(one, open_vocabulary=open_vocabulary)
    declare(batch, open_vocabulary=open_vocabulary)
    for s in stored:
        try:
            one.remember(**s)
        except InvalidInput:
            return
        batch.remember(**s)
    expected = []
    for s in statements:
        try:
            expected.append(one.remember(**s).to_json())
        except InvalidInput:
            return  # an unknown name under a closed vocabulary: the error path is tested below
    got = [r.to_json() for r in batch.remember_many(statements)]
    assert got == expected
    assert [e.id for e in batch.store.all_events()] == [e.id for e in one.store.all_events()]
    assert pair_answers(batch) == pair_answers(one)


def test_an_error_names_the_statement_and_writes_nothing(store):
    m = Memory(store, now=Clock())
    declare(m)
    before = store.count()
    with pytest.raises(InvalidInput) as err:
        m.remember_many(
            [
                {"subject": "ann", "predicate": "prefers_editor", "value": "vim"},
                {"subject": "ann", "predicate": "prefers_editor", "value": "emacs"},
                {"subject": "ann", "predicate": "deal_value", "value": "a lot"},
            ]
        )
    assert err.value.message.startswith("statement 3: ")
    assert store.count() == before
    assert m.read_pair("ann", "prefers_editor") == []
    with pytest.raises(InvalidInput, match=r"^statement 1: unknown field 'colour'$"):
        m.remember_many([{"subject": "ann", "predicate": "goal", "value": "x", "colour": "red"}])
    with pytest.raises(InvalidInput, match=r"^statement 2: value is missing$"):
        m.remember_many(
            [{"subject": "ann", "predicate": "goal", "value": "x"}, {"subject": "ann", "predicate": "goal"}]
        )
    assert store.count() == before


KILLED = """
import os, signal, sys
from recall_engine.memory import Memory
from recall_engine.storage import open_backend
m = Memory(open_backend(sys.argv[1]).store("durable"))
for i in range(20):
    m.remember("ann", "uses_technology", f"tech-{i}")
    print(i, flush=True)  # committed: remember has returned


def statements():
    for i in range(50):
        yield {"subject": "bob", "predicate": "uses_technology", "value": f"t{i}"}
    os.kill(os.getpid(), signal.SIGKILL)  # dies inside the batch, before its commit


m.remember_many(statements())
"""


def test_a_committed_remember_survives_kill_9_and_a_killed_batch_leaves_nothing(backend, backend_url):
    memory = Memory(backend.store("durable"))
    declare(memory)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", KILLED, backend_url], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == -signal.SIGKILL, out.stderr
    assert out.stdout.split() == [str(i) for i in range(20)]
    memory = Memory(backend.store("durable"))  # as the next process finds it
    assert sorted(b.value for b in memory.read_pair("ann", "uses_technology")) == sorted(f"tech-{i}" for i in range(20))
    assert memory.read_pair("bob", "uses_technology") == []
    assert memory.remember("bob", "uses_technology", "t0").already_known is False


def test_a_batch_pauses_the_cycle_collector_and_leaves_it_as_it_found_it(store):
    import gc

    m = Memory(store, now=Clock())
    declare(m)
    assert gc.isenabled()
    with m.batch():
        assert not gc.isenabled()
        with m.batch():  # a batch inside joins the outer one
            m.remember("ann", "goal", "x")
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), m.batch():
        raise RuntimeError("the block fails")
    assert gc.isenabled()
    gc.disable()  # paused by the program: a batch leaves it paused
    try:
        m.remember_many([{"subject": "ann", "predicate": "goal", "value": "y"}])
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert sorted(b.value for b in m.read_pair("ann", "goal")) == ["x", "y"]


def test_what_a_batch_made_joins_the_oldest_generation(store):
    """The batch's objects are not walked by a young collection as the collector starts
    again (they join the oldest generation as survivors would); objects the program froze
    stay frozen."""
    import gc

    m = Memory(store, now=Clock())
    declare(m)
    statements = [{"subject": f"s{i}", "predicate": "goal", "value": f"v{i}"} for i in range(300)]
    collections: list[int] = []

    def seen(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(seen)
    try:
        m.remember_many(statements)
    finally:
        gc.callbacks.remove(seen)
    assert gc.isenabled() and collections == []
    kept = [[i] for i in range(1000)]
    gc.freeze()  # the program's own frozen objects
    try:
        m.remember_many([{"subject": "ann", "predicate": "goal", "value": "z"}])
        assert gc.isenabled() and gc.get_freeze_count() > 0  # not unfrozen by the batch
    finally:
        gc.unfreeze()
    assert len(kept) == 1000 and [b.value for b in m.read_pair("ann", "goal")] == ["z"]


def test_what_a_pairs_first_read_keeps_joins_the_oldest_generation(store):
    """A first read's events are kept (the folded pair, the decoder's memo), so they skip
    the young generations as a batch's objects do, and the collector runs on after it."""
    import gc

    clock = Clock()
    m = Memory(store, now=clock)
    declare(m)
    m.remember_many([{"subject": "ann", "predicate": "goal", "value": f"g{k}"} for k in range(50)])
    reader = Memory(store, now=clock)  # has folded nothing yet
    reader.timeline()
    gc.unfreeze()  # objects an earlier test froze (a server's start-up does) would keep the pause plain
    gc.collect()
    assert len(reader.read_pair("ann", "goal")) == 50
    assert gc.isenabled()
    entry = reader._pairs.get("ann", "goal")
    assert entry is not None and len(entry.events) == 50
    young = {id(o) for generation in (0, 1) for o in gc.get_objects(generation)}
    assert not any(id(e) in young for e in entry.events)
