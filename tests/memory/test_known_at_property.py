"""Property (both backends): a read known at T equals a plain read of a copy of the
store that holds only the events recorded by T; known at or after the last append, it
equals a plain read (docs/history-diff-explain.md, "Two time axes")."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_engine import clock
from recall_engine.errors import RecallError
from recall_engine.instants import DAY_NS, NS, parse_instant
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord

START = parse_instant("2026-06-01T00:00:00Z")
HOUR_NS = 3600 * NS
SUBJECTS = ("ann", "bob")
PREDICATES = ("editor", "tools", "shell")
DEFS = [Definition("editor", "single", "string"), Definition("tools", "multi", "string")]
_names = itertools.count()


class Wall:
    def __init__(self, t: int) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t


# one step of the log: the clock moves (forward, or back an hour: recorded instants must
# still grow), then a statement (possibly backdated), a forget, or a registry record
step = st.tuples(
    st.sampled_from([-HOUR_NS, HOUR_NS, DAY_NS, 3 * DAY_NS]),
    st.one_of(
        st.tuples(
            st.just("remember"),
            st.sampled_from(SUBJECTS),
            st.sampled_from(PREDICATES),
            st.sampled_from("abc"),
            st.integers(0, 5),
        ),
        st.tuples(st.just("forget"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from("abc")),
        st.tuples(st.just("redefine"), st.sampled_from(["single", "multi"]), st.booleans()),
        st.just(("declare shell",)),
    ),
)


def run(memory: Memory, wall: Wall, steps) -> None:
    for move, op in steps:
        wall.t += move
        try:
            if op[0] == "remember":
                _, s, p, v, back = op
                memory.remember(s, p, v, at=wall.t - back * DAY_NS)
            elif op[0] == "forget":
                _, s, p, v = op
                memory.forget(s, p, v)
            elif op[0] == "redefine":
                d = Definition("editor", op[1], "string")
                memory.append_records([RegistryRecord("redefine", "editor", definition=d, retroactive=op[2])])
            else:
                memory.append_records(
                    [RegistryRecord("declare", "shell", definition=Definition("shell", "multi", "string"))]
                )
        except RecallError:
            pass  # e.g. a predicate not declared yet: the log is whatever the writes allowed


def said(step) -> dict:
    """A history step without its recorded instant (the copy recorded its events later)."""
    out = step.to_json()
    del out["recorded_at"]
    return out


def answers(memory: Memory, as_of: int | None, known_at: int | None) -> dict:
    """Every read of every pair and subject, and every failure, as data."""

    def attempt(read):
        try:
            return read()
        except RecallError as e:
            return ("refused", type(e).__name__, e.message)

    out: dict = {}
    for s in SUBJECTS:
        out[s] = attempt(lambda s=s: [b.to_json() for b in memory.profile(s, as_of, known_at=known_at)])
        for p in PREDICATES:
            out[s, p] = attempt(
                lambda s=s, p=p: [b.to_json() for b in memory.read_pair(s, p, as_of, known_at=known_at)]
            )
            out[s, p, "history"] = attempt(
                lambda s=s, p=p: [said(x) for x in memory.history(s, p, known_at=known_at)[2]]
            )
            out[s, p, "explain"] = attempt(lambda s=s, p=p: memory.explain(s, p, as_of, known_at=known_at).beliefs)
    # subjects come most events first, today's counts: compare the changes in one order
    out["diff"] = attempt(
        lambda: sorted(
            ([c.to_json() for c in memory.diff(START, as_of, known_at=known_at)]),
            key=lambda c: (c["subject"], c["predicate"]),
        )
    )
    return out


@pytest.fixture
def wall(monkeypatch) -> Wall:
    w = Wall(START)
    monkeypatch.setattr(clock, "now_ns", w)
    return w


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(step, min_size=1, max_size=14), pick=st.integers(0, 10**6), valid=st.integers(0, 40))
def test_a_read_known_at_t_is_a_plain_read_of_the_log_truncated_at_t(backend, wall, steps, pick, valid):
    wall.t = START
    memory = Memory(backend.store(f"k{next(_names)}"), now=wall)
    memory.append_records([RegistryRecord("declare", d.name, definition=d) for d in DEFS])
    run(memory, wall, steps)
    log = list(memory.store.all_events())
    recorded = sorted({e.recorded_at for e in log})
    assert [e.recorded_at for e in log] == sorted(e.recorded_at for e in log)  # they grow with positions
    # T: an append's own instant, or just before it
    t = recorded[pick % len(recorded)] - (pick // len(recorded)) % 2
    as_of = START + valid * DAY_NS // 4
    copy = Memory(backend.store(f"k{next(_names)}"), now=wall)
    copy.store.append([e for e in log if e.recorded_at <= t])
    assert answers(memory, as_of, known_at=t) == answers(copy, as_of, known_at=None)
    # known_at alone: "what a read at T answered", as_of is T
    assert answers(memory, None, known_at=t) == answers(copy, t, known_at=None)
    last = recorded[-1]
    for after in (last, last + DAY_NS):
        assert answers(memory, as_of, known_at=after) == answers(memory, as_of, known_at=None)
