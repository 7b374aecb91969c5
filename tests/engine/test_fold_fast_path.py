"""The fold's fast path for plain pairs answers exactly as the general walk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from recall_engine.fold import _apply, _beliefs, _fold_plain, moves
from recall_engine.records import make_event
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.timeline import Timeline

BASE = 1_780_000_000_000_000_000


def timeline(cardinality: str) -> Timeline:
    return Timeline([RegistryRecord("declare", "p", Definition("p", cardinality)).to_event(BASE - 10)])


def general_state(events, tl, at):
    held = {}
    for m in moves(events, "s", "p", tl):
        if m.at > at:
            break
        _apply(m, held, "p", tl)
    return held


def general(events, tl, at):
    return _beliefs(general_state(events, tl, at), "p", tl)


def shape(h):
    """A held value with everything it displaced, all the way back (``fresh`` aside: the
    walk marks its own corrections, which only cross moves read, and the fast path has none)."""
    return (h.event, h.value, h.promoted, h.pair, tuple(shape(r) for r in h.replaced))


step = st.tuples(
    st.integers(0, 6),  # instant (few values, so instants collide)
    st.sampled_from(["assert", "retract", "clear"]),
    st.sampled_from(["vim", "VIM", "emacs", "zed", "helix"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=25), st.sampled_from(["single", "multi"]), st.integers(-1, 7))
def test_fast_path_equals_the_general_walk(steps, cardinality, at_step):
    events = []
    for t, kind, v in steps:
        at = BASE + t
        if kind == "assert":
            e = make_event("s", "p", v, at)
        else:
            e = make_event("s", "p", None if kind == "clear" else v, at, retraction=True)
        if all(x.id != e.id for x in events):
            events.append(e)
    tl = timeline(cardinality)
    at = BASE + at_step
    held = _fold_plain(events, "s", "p", tl, at)
    assert held is not None  # a plain pair takes the fast path
    assert _beliefs(held, "p", tl) == general(events, tl, at)
    walked = general_state(events, tl, at)
    assert {k: shape(h) for k, h in held.items()} == {k: shape(h) for k, h in walked.items()}
    assert all(not h.fresh for h in held.values())


def test_fast_path_steps_aside_when_it_does_not_apply():
    tl = timeline("single")
    e = make_event("s", "p", "vim", BASE)
    assert _fold_plain([e, e], "s", "p", tl, BASE) is None  # an event twice
    assert _fold_plain([make_event("s", "q", "vim", BASE)], "s", "p", tl, BASE) is None  # another predicate
    changed = Timeline(
        [
            RegistryRecord("declare", "p", Definition("p", "single")).to_event(BASE - 10),
            RegistryRecord("redefine", "p", Definition("p", "multi")).to_event(BASE - 5),
        ]
    )
    assert _fold_plain([e], "s", "p", changed, BASE) is None  # cardinality changed over time
