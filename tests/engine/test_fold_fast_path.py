"""The fold's fast path for plain pairs answers exactly as the general walk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from recall_engine.fold import Held, _apply, _beliefs, _fold_plain, moves, plain_answers, plain_own, prior_values
from recall_engine.preview import _walk_answers, _walk_steps, replaced_changes
from recall_engine.records import Replace, make_event
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.timeline import Timeline
from recall_engine.values import value_key

from .test_fold_properties import BASE as LOG_BASE
from .test_fold_properties import INSTANTS, PAIRS, SETTINGS, logs

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


# --- over random logs: merges, exclusions, notes, `replaces`, retroactive redefines --------


@st.composite
def mixed_logs(draw):
    """A random log of the fold's properties, or (half the time) one made for the plain paths:
    p, q and r always declared (q may exclude p or p exclude q, r may be merged into p, a
    retroactive redefine may fix p's cardinality anew), few notes and ``replaces``."""
    if draw(st.booleans()):
        return draw(logs())
    at = LOG_BASE - 10
    recs = []
    for name in ("p", "q", "r"):
        excludes = {"p": ("q",), "q": ("p",)}.get(name, ()) if draw(st.integers(0, 3)) == 0 else ()
        card = draw(st.sampled_from(["single", "multi"]))
        recs.append(RegistryRecord("declare", name, Definition(name, card, excludes=excludes)).to_event(at))
    for op in draw(st.lists(st.sampled_from(["merge", "retro", "redefine"]), max_size=2)):
        at += 1
        card = draw(st.sampled_from(["single", "multi"]))
        if op == "merge":
            recs.append(RegistryRecord("merge", "r", into="p").to_event(at))
        else:
            when = draw(st.sampled_from([at, *INSTANTS]))
            rec = RegistryRecord("redefine", "p", Definition("p", card), retroactive=op == "retro")
            recs.append(rec.to_event(when))
    events = []
    for _ in range(draw(st.integers(1, 15))):
        subject = draw(st.sampled_from(["user", "user", "bob"]))
        pred = draw(st.sampled_from(["p", "p", "q", "r", "y", "note"] if draw(st.integers(0, 9)) == 0 else "pqry"))
        kind = draw(st.sampled_from(["assert", "assert", "assert", "retract", "clear"]))
        t = draw(st.sampled_from(INSTANTS))
        v = draw(st.sampled_from(["a", "A", "b", 1, 1.0]))  # few, so a retraction often meets a held value
        reps = (Replace(draw(st.sampled_from("pq")), v),) if draw(st.integers(0, 9)) == 0 else ()
        if kind == "assert":
            events.append(make_event(subject, pred, v, t, replaces=reps))
        else:
            events.append(make_event(subject, pred, None if kind == "clear" else v, t, retraction=True))
    return Timeline(recs), list({e.id: e for e in reversed(events)}.values())[::-1]


MANY = settings(SETTINGS, max_examples=400)


def _held_shape(h):
    # repr tells 1, 1.0 and True apart, which == does not
    return (h.event.id, repr(h.value), h.promoted, h.pair, h.fresh, tuple(_held_shape(r) for r in h.replaced))


def _answers_shape(answers):
    series, now_values, as_of_values, held = answers
    values = None if as_of_values is None else [repr(v) for v in as_of_values]
    return series, [repr(v) for v in now_values], values, [_held_shape(h) for h in held]


@MANY
@given(mixed_logs(), st.sampled_from(INSTANTS), st.none() | st.sampled_from([LOG_BASE - 1, *INSTANTS]))
def test_plain_answers_equal_the_general_walk(log, now, as_of):
    """A preview's answers over time from the plain walk are the general walk's, step for step,
    down to each held value's ``replaced`` (and its ``fresh`` mark)."""
    tl, events = log
    for subject in ("user", "bob"):
        for pred in [*PAIRS, "y"]:
            fast = _walk_answers(events, subject, pred, tl, now, as_of)
            assert _answers_shape(fast) == _answers_shape(_walk_steps(events, subject, pred, tl, now, as_of))


@MANY
@given(mixed_logs(), st.sampled_from([LOG_BASE - 1, *INSTANTS]))
def test_plain_fold_equals_the_general_walk_over_random_logs(log, at):
    """``_fold_plain`` takes pairs whose cardinality a retroactive rule fixed, too: the same held values."""
    tl, events = log
    for pred in [*PAIRS, "y"]:
        held = _fold_plain(events, "user", pred, tl, at)
        if held is not None:
            walked = {}
            for m in moves(events, "user", pred, tl):
                if m.at > at:
                    break
                _apply(m, walked, pred, tl)
            assert {k: shape(h) for k, h in held.items()} == {k: shape(h) for k, h in walked.items()}


def test_plain_walk_takes_the_common_pairs_and_steps_aside_for_the_rest():
    merged = Timeline(
        [
            RegistryRecord("declare", "p", Definition("p", "single")).to_event(BASE - 10),
            RegistryRecord("declare", "q", Definition("q", "single")).to_event(BASE - 10),
            RegistryRecord("declare", "x", Definition("x", "single", excludes=("p",))).to_event(BASE - 10),
            RegistryRecord("merge", "q", into="p").to_event(BASE - 5),
            RegistryRecord("redefine", "p", Definition("p", "multi"), retroactive=True).to_event(BASE - 4),
        ]
    )
    own, other = make_event("s", "p", "vim", BASE + 2), make_event("s", "q", "zed", BASE + 1)
    unrelated, elsewhere = make_event("s", "y", "vim", BASE), make_event("t", "p", "vim", BASE)
    # a merged name's events are the pair's own, in fold order; another subject's and an unrelated predicate's are not
    assert plain_own([own, other, unrelated, elsewhere], "s", "p", merged) == [other, own]
    assert plain_own([own, make_event("s", "x", "vim", BASE)], "s", "p", merged) is None  # an excluding predicate
    assert plain_own([own, make_event("s", "note", "vim", BASE)], "s", "p", merged) is None  # a note
    replacing = make_event("s", "y", "vim", BASE, replaces=(Replace("p", "zed"),))
    assert plain_own([own, replacing], "s", "p", merged) is None  # a `replaces`
    assert plain_own([own, own], "s", "p", merged) is None  # an event twice
    changed = Timeline(
        [
            RegistryRecord("declare", "p", Definition("p", "single")).to_event(BASE - 10),
            RegistryRecord("redefine", "p", Definition("p", "multi")).to_event(BASE + 1),
        ]
    )
    assert plain_own([own], "s", "p", changed) is None  # cardinality changed over time
    series, held, _ = plain_answers(plain_own([own, other], "s", "p", merged) or [], True, BASE + 5, None)
    assert series == [(BASE + 1, frozenset({"s:zed"})), (BASE + 2, frozenset({"s:zed", "s:vim"}))]
    assert [h.value for h in held] == ["zed", "vim"]
    gone = make_event("s", "p", "ZED", BASE + 3, retraction=True)
    series, held, at_as_of = plain_answers([other, own, gone], True, BASE + 5, BASE + 2)
    assert series[-1] == (BASE + 3, frozenset({"s:vim"})) and [h.value for h in held] == ["vim"]
    assert [h.value for h in at_as_of] == ["zed", "vim"]


def _replaced_changes_reference(predicate, before, after, tl_before, tl_after):
    """``preview.replaced_changes`` as it was written first: every listing built, then compared."""

    def ident(h, tl):
        ps = prior_values(h, predicate, tl)
        return [p.to_json() for p in ps], frozenset(
            (p.predicate or predicate, value_key(p.value), p.event_id) for p in ps
        )

    old = {value_key(h.value): h for h in before}
    out = []
    for h in after:
        o = old.get(value_key(h.value))
        if o is None:
            continue
        (bj, bk), (aj, ak) = ident(o, tl_before), ident(h, tl_after)
        if bk != ak:
            out.append({"value": h.value, "before": bj, "after": aj})
    return tuple(out)


@SETTINGS
@given(logs(), mixed_logs(), st.sampled_from(INSTANTS))
def test_replaced_changes_list_what_every_listing_compared_would(log, other, now):
    tl, events = log
    tl_after = other[0]
    for pred in PAIRS:
        held = _walk_answers(events, "user", pred, tl, now, None)[3]
        held_after = _walk_answers(events, "user", pred, tl_after, now, None)[3]
        assert replaced_changes(pred, held, held_after, tl, tl_after) == _replaced_changes_reference(
            pred, held, held_after, tl, tl_after
        )


def test_replaced_changes_tell_apart_what_a_displaced_value_was_withdrawn_from_and_by_which_event():
    # held "vim" under both timelines, with one displaced "zed": listed only where the
    # displaced entry differs by the pair it was withdrawn from or by its event
    tl = timeline("single")
    assert tl.rules_at_read  # the pair is shown (fold v5 on), so it counts
    # zed stated under q at the same instant: another event (a merged name's statement is p's own)
    zed, zed_again = make_event("s", "p", "zed", BASE), make_event("s", "q", "zed", BASE)
    vim = make_event("s", "p", "vim", BASE + 1)

    def held(*replaced):
        return [Held(vim, "vim", tuple(replaced), False)]

    same = held(Held(zed, "zed", (), False))
    assert replaced_changes("p", same, held(Held(zed, "zed", (), False)), tl, tl) == ()
    elsewhere = held(Held(zed, "zed", (), False, pair="q"))  # withdrawn from q, not from p itself
    other_event = held(Held(zed_again, "zed", (), False))  # the same value, instant and pair, another event
    for after in (elsewhere, other_event):
        (change,) = replaced_changes("p", same, after, tl, tl)
        assert change["value"] == "vim"
        assert change["before"] == [p.to_json() for p in prior_values(same[0], "p", tl)]
        assert change["after"] == [p.to_json() for p in prior_values(after[0], "p", tl)]
