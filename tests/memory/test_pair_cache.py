"""The folded-pair cache answers exactly what a fold from scratch answers (both backends).

Two collections get the same random writes: one read and written through a Memory
that keeps folded pairs (plus a second such Memory writing beside it, as another
process would), the other through Memories that keep none. Every remember's answer
and every read, now and as of earlier instants, must be equal; and each cached pair
must equal a fold of the pair's input read from the store.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from recall_engine.errors import RecallError
from recall_engine.fold import fold
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.pair_cache import Entry, PairCache
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.values import value_key

from .conftest import declare

START = parse_instant("2026-03-01")
DAY = 86_400 * 10**9
SUBJECTS = ["ann", "ann", "bob"]
PREDICATES = [
    "prefers_editor",
    "likes",
    "dislikes",
    "prefers_editor",
    "likes",
    "dislikes",
    "uses_technology",
    "did",
    "goal",
]
VALUES = ["vim", "emacs", "zed"]
_names = itertools.count()


class Clock:
    def __init__(self) -> None:
        self.t = START

    def __call__(self) -> int:
        return self.t


class FromScratch(Entry):
    """A pair's input read from the store just now, every answer folded from scratch."""

    def keyed_at(self, at, tl):  # beliefs_at too
        beliefs = fold(self.events, self.subject, self.predicate, tl, at)
        return beliefs, [b.key for b in beliefs]

    def keyed_with(self, extra, at, tl):  # fold_with too
        beliefs = fold([*self.events, *extra], self.subject, self.predicate, tl, at)
        return beliefs, [b.key for b in beliefs]

    def carrying(self, key, tl):
        return 1  # never "cannot hold the value": every excluded and related pair is folded


class Uncached(Memory):
    """The engine as it was before the cache: every read and write folds the pair's input
    afresh, each pair's input read by its own queries (no batched or shared reads)."""

    def _pair(self, subject, predicate, tl):
        return FromScratch.build(subject, predicate, self.pair_input(subject, predicate, tl), set(), tl)

    def _own_inputs(self, subject, preds, tl, own, every):
        for q in preds:
            if q not in own:
                own[q] = self._own_input(subject, q, tl)

    def _preload(self, s, p, key, tl):
        pass

    def _value_predicates(self, subject, keys, tl, *, whole=False):
        return self.store.value_predicates(subject, keys)


def uncached(store, clock) -> Memory:
    return Uncached(store, now=clock)


REGISTRY_CHANGES = [
    RegistryRecord(
        op="redefine",
        name="prefers_editor",
        definition=Definition("prefers_editor", "multi", "string"),
        retroactive=True,
        operator="t",
    ),
    RegistryRecord(op="redefine", name="likes", definition=Definition("likes", "multi", "string"), operator="t"),
    RegistryRecord(op="merge", name="goal", into="uses_technology", operator="t"),
]

op = st.one_of(
    st.tuples(
        st.just("remember"),
        st.integers(0, 1),  # which writer
        st.sampled_from(SUBJECTS),
        st.sampled_from(PREDICATES),
        st.sampled_from(VALUES),
        st.one_of(st.none(), st.integers(0, 30)),  # days back: a write at an earlier instant
        st.one_of(st.none(), st.tuples(st.sampled_from(PREDICATES), st.sampled_from(VALUES))),
    ),
    st.tuples(st.just("forget"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from(VALUES)),
    st.tuples(st.just("registry"), st.integers(0, len(REGISTRY_CHANGES) - 1)),
    st.tuples(st.just("read"), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.integers(0, 40)),
)


def outcome(f, *args, **kwargs):
    try:
        r = f(*args, **kwargs)
    except RecallError as e:
        return ("error", type(e).__name__, e.message)
    if isinstance(r, list):
        return [b.to_json() for b in r]
    return r.to_json()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(op, min_size=1, max_size=25))
# a statement excluding a value of another pair, folded on from a kept state
@example(
    ops=[
        ("remember", 0, "ann", "likes", "emacs", None, None),
        ("remember", 0, "ann", "dislikes", "vim", None, None),
        ("remember", 1, "ann", "dislikes", "emacs", None, None),
        ("read", "ann", "dislikes", 1),
    ]
)
# a write at an earlier instant after the pair's state was kept, then a registry change
@example(
    ops=[
        ("remember", 0, "ann", "prefers_editor", "vim", None, None),
        ("read", "ann", "prefers_editor", 0),
        ("remember", 1, "ann", "prefers_editor", "emacs", 3, None),
        ("read", "ann", "prefers_editor", 2),
        ("remember", 0, "ann", "prefers_editor", "zed", None, ("prefers_editor", "vim")),
        ("registry", 0),
        ("forget", "ann", "prefers_editor", "zed"),
        ("read", "ann", "prefers_editor", 5),
    ]
)
# a statement whose replaces name another pair, then registry changes (a write told by its
# append what it wrote, not read back from the log)
@example(
    ops=[
        ("remember", 0, "ann", "prefers_editor", "vim", None, None),
        ("remember", 0, "ann", "prefers_editor", "vim", None, None),
        ("remember", 0, "ann", "likes", "vim", 10, ("prefers_editor", "zed")),
        ("registry", 0),
        ("registry", 0),
        ("remember", 0, "ann", "prefers_editor", "zed", 13, None),
    ]
)
def test_cached_reads_and_writes_equal_a_fold_from_scratch(backend, ops):
    n = next(_names)
    clock = Clock()
    cached_store = backend.store(f"cached{n}")
    plain_store = backend.store(f"plain{n}")
    cached = [Memory(cached_store, now=clock), Memory(cached_store, now=clock)]
    plain = [uncached(plain_store, clock), uncached(plain_store, clock)]
    declare(cached[0])
    declare(plain[0])
    applied: set[int] = set()
    for o in ops:
        clock.t += DAY
        kind = o[0]
        if kind == "remember":
            _, w, s, p, v, back, rep = o
            kw = {"at": clock.t - back * DAY} if back is not None else {}
            if rep is not None:
                kw["replaces"] = [rep]
            a = outcome(cached[w].remember, s, p, v, **kw)
            b = outcome(plain[w].remember, s, p, v, **kw)
            assert a == b
            assert outcome(cached[0].read_pair, s, p) == outcome(plain[0].read_pair, s, p)
        elif kind == "forget":
            _, s, p, v = o
            assert outcome(cached[0].forget, s, p, v) == outcome(plain[0].forget, s, p, v)
        elif kind == "registry":
            if o[1] in applied:
                continue
            applied.add(o[1])
            cached[1].append_records([REGISTRY_CHANGES[o[1]]])
            plain[1].append_records([REGISTRY_CHANGES[o[1]]])
        else:
            _, s, p, back = o
            for at in (None, clock.t - back * DAY):
                a = outcome(cached[0].read_pair, s, p, at)
                b = outcome(plain[0].read_pair, s, p, at)
                assert a == b
    # every pair the cache holds equals the fold of its input read now, at now and before
    m = cached[0]
    tl = m.timeline()
    assert m._pairs.timeline is tl
    for s in SUBJECTS:
        for p in PREDICATES:
            q = tl.canonical(p)
            if not tl.knows(q):
                continue
            events = m.pair_input(s, q, tl)
            # the batched reads and the subject read give each pair's input exactly as its own reads do
            plain_input = uncached(cached_store, clock).pair_input(s, q, tl)
            assert events == plain_input
            assert m._gather(s, q, tl, {}, cached_store.subject_events(s))[0] == plain_input
            for at in (clock.t, clock.t - 5 * DAY, clock.t - 20 * DAY):
                assert m._fold_pair(s, q, tl, at) == fold(events, s, q, tl, at)
    # and the names each value is asserted under, kept beside them, equal the store's
    for s in SUBJECTS:
        for v in VALUES:
            key = value_key(v)
            assert m._value_predicates(s, [key], tl) == cached_store.value_predicates(s, [key])
            assert m._value_predicates(s, [key], tl, whole=True) == cached_store.value_predicates(s, [key])
        kept = m._pairs.subject_values.get(s)
        if kept is not None:
            assert {k: names for k, names in kept.items() if names} == {
                k: cached_store.value_predicates(s, [k]) for k in kept if cached_store.value_predicates(s, [k])
            }


def test_an_entry_extended_event_by_event_equals_one_built_at_once(store):
    """The incremental path itself: a plain pair, statements in order, retractions included."""
    m = Memory(store, now=Clock())
    declare(m)
    tl = m.timeline()
    entry = Entry.build("ann", "prefers_editor", [], set(), tl)
    entry.beliefs_at(START, tl)  # a state to extend
    from recall_engine.records import make_event

    events = [
        make_event("ann", "prefers_editor", v, START + i * DAY, retraction=(i % 4 == 3))
        for i, v in enumerate(["vim", "emacs", "zed", "emacs", "vim", "zed"])
    ]
    for e in events:
        assert entry.offer(e, tl)
        assert entry.state is not None  # moved on, not dropped
    assert entry.beliefs_at(START + 10 * DAY, tl) == fold(events, "ann", "prefers_editor", tl, START + 10 * DAY)
    # an event at an earlier instant drops the state; the next read folds it again
    early = make_event("ann", "prefers_editor", "nano", START + DAY // 2)
    assert entry.offer(early, tl) and entry.state is None
    everything = [*events, early]
    for at in (START + DAY, START + 10 * DAY):
        assert entry.beliefs_at(at, tl) == fold(everything, "ann", "prefers_editor", tl, at)


def test_the_cache_stays_within_its_budget(store):
    m = Memory(store, now=Clock())
    m._pairs = PairCache(budget=5)
    declare(m)
    for i in range(8):
        m.remember(f"s{i}", "goal", "rust", at=START + i)
        m.read_pair(f"s{i}", "goal")
    assert m._pairs.size <= 5 and len(m._pairs) <= 5
    assert [b.value for b in m.read_pair("s0", "goal")] == ["rust"]  # evicted, read again from the store


def test_a_read_asks_for_its_values_only_and_a_remember_keeps_the_subjects(memory, store, clock):
    """A first read looks up the names of the values it answers, not the whole subject's
    (that would decode the subject a second time); a remember keeps a small subject's."""
    memory.remember("ann", "likes", "emacs")
    memory.remember("bob", "likes", "vim")
    fresh = Memory(store, now=clock)
    assert [b.value for b in fresh.read_pair("ann", "likes")] == ["emacs"]
    assert "ann" not in fresh._pairs.subject_values
    fresh.remember("bob", "goal", "vim")
    assert fresh._pairs.subject_values["bob"] == {value_key("vim"): {"likes", "goal"}}
