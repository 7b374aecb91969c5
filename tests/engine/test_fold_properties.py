"""Properties of the fold over random logs (hypothesis).

A random log mixes assertions, targeted and blanket retractions, ``replaces``,
exclusions, notes and their promotions, over a few values (some equal by value
identity: ``a``/``A``, ``1``/``1.0``) and a few instants (many equal), read
through a random registry timeline (single/multi changes, retroactive flags,
exclusions added and dropped, a merged name).
"""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_engine.fold import fold, walk
from recall_engine.history import diff_answers, history
from recall_engine.instants import NS
from recall_engine.records import Event, Replace, make_event
from recall_engine.registry import Definition, Promotion, RegistryRecord
from recall_engine.timeline import Timeline
from recall_engine.values import value_key

from .helpers import D

BASE = D("09-01")
INSTANTS = [BASE + k * NS for k in range(6)]
REG_INSTANTS = [BASE - NS] + INSTANTS
VALUES = ["a", "A", "b", "c", 1, 1.0, True]
PREDICATES = ["p", "q", "r"]  # p is folded; q may exclude p; r may be merged into p
PAIRS = ["p", "q", "r", "note"]
SUBJECTS = ["user", "user", "user", "bob"]

SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@st.composite
def statements(draw) -> list[Event]:
    out = []
    for _ in range(draw(st.integers(1, 18))):
        subject = draw(st.sampled_from(SUBJECTS))
        at = draw(st.sampled_from(INSTANTS))
        kind = draw(st.sampled_from(["assert"] * 5 + ["retract", "retract", "clear", "note"]))
        pred = draw(st.sampled_from(PREDICATES))
        src = draw(st.sampled_from(["user_stated", "agent_inferred"]))
        if kind == "note":
            out.append(make_event(subject, "note", draw(st.sampled_from(["n1", "n2", "N1"])), at))
        elif kind == "clear":
            out.append(make_event(subject, pred, None, at, retraction=True))
        elif kind == "retract":
            out.append(make_event(subject, pred, draw(st.sampled_from(VALUES)), at, retraction=True))
        else:
            reps = draw(st.lists(st.tuples(st.sampled_from(PREDICATES), st.sampled_from(VALUES)), max_size=2))
            out.append(
                make_event(
                    subject,
                    pred,
                    draw(st.sampled_from(VALUES)),
                    at,
                    source=src,
                    replaces=tuple(Replace(p, v) for p, v in reps),
                )
            )
    # a store holds one event per id; 1 and 1.0 make the same id (value_key), so keep the first
    return list({e.id: e for e in reversed(out)}.values())[::-1]


def _def(draw, name: str) -> Definition:
    historical = name == "p" and draw(st.booleans()) and draw(st.booleans())
    card = "multi" if historical else draw(st.sampled_from(["single", "multi"]))
    excludes = ("p",) if name == "q" and draw(st.booleans()) else ()
    return Definition(name, card, "string", excludes=excludes, historical=historical)


@st.composite
def registries(draw, notes: list[Event]) -> list[Event]:
    recs: list[Event] = []
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.sampled_from(REG_INSTANTS))
        op = draw(st.sampled_from(["declare", "define", "redefine", "redefine", "merge", "split", "promote"]))
        name = draw(st.sampled_from(PREDICATES))
        if op == "merge":
            rec = RegistryRecord("merge", "r", into="p")
        elif op == "split":
            rec = RegistryRecord("split", "r", definition=_def(draw, "r"))
        elif op == "promote":
            if not notes:
                continue
            picked = draw(st.lists(st.sampled_from(notes), min_size=1, max_size=2, unique_by=lambda e: e.id))
            target = draw(st.sampled_from(["p", "q", "note"]))
            rec = RegistryRecord(
                "promote",
                target,
                notes=tuple(
                    Promotion(e.id, e.subject, e.value if target == "note" else draw(st.sampled_from(VALUES)))
                    for e in picked
                ),
            )
        else:
            rec = RegistryRecord(
                op,
                name,
                definition=_def(draw, name),
                retroactive=op == "redefine" and draw(st.booleans()),
                auto=op == "define",
            )
        recs.append(rec.to_event(at))
    return recs


@st.composite
def logs(draw) -> tuple[Timeline, list[Event]]:
    events = draw(statements())
    notes = [e for e in events if e.predicate == "note"]
    return Timeline(draw(registries(notes))), events


def _json(beliefs) -> list[str]:
    return [json.dumps(b.to_json(), sort_keys=True) for b in beliefs]


def _instants(events: list[Event]) -> list[int]:
    return sorted({e.observed_at for e in events} | {BASE - 1, INSTANTS[-1] + NS})


@SETTINGS
@given(logs(), st.randoms(use_true_random=False))
def test_fold_ignores_input_order_and_duplicates(log, rnd) -> None:
    tl, events = log
    messy = events + rnd.sample(events, k=rnd.randint(0, len(events)))
    rnd.shuffle(messy)
    for pred in PAIRS:
        for subject in ("user", "bob"):
            for t in _instants(events):
                assert _json(fold(messy, subject, pred, tl, t)) == _json(fold(events, subject, pred, tl, t))
        a = [s.to_json() for s in history(events, "user", pred, tl)]
        b = [s.to_json() for s in history(messy, "user", pred, tl)]
        assert a == b


@SETTINGS
@given(logs())
def test_last_history_step_at_an_instant_equals_the_fold_then(log) -> None:
    tl, events = log
    for pred in PAIRS:
        steps = history(events, "user", pred, tl)
        assert [s.at for s in steps] == sorted(s.at for s in steps)
        last = {s.at: s for s in steps}
        for t, s in last.items():
            now = fold(events, "user", pred, tl, t)
            assert [value_key(v) for v in s.after] == [b.key for b in now]
            assert list(s.after) == [b.value for b in now]
        # between steps the answer does not move
        for a, b in zip(steps, steps[1:], strict=False):
            assert a.after == b.before
            if a.at < b.at:
                assert tuple(x.value for x in fold(events, "user", pred, tl, b.at - 1)) == a.after


@SETTINGS
@given(logs(), st.sampled_from(INSTANTS + [BASE - 1]), st.sampled_from(INSTANTS + [BASE - 1]))
def test_diff_is_the_set_difference_of_two_folds(log, t1, t2) -> None:
    tl, events = log
    pairs = [(s, p) for s in ("user", "bob") for p in PAIRS]
    before = {pair: [b.value for b in fold(events, *pair, tl, t1)] for pair in pairs}
    after = {pair: [b.value for b in fold(events, *pair, tl, t2)] for pair in pairs}
    changes = {(c.subject, c.predicate): c for c in diff_answers(before, after)}
    for pair in pairs:
        bk = {value_key(v) for v in before[pair]}
        ak = {value_key(v) for v in after[pair]}
        c = changes.get(pair)
        if ak == bk:
            assert c is None
            continue
        assert c is not None
        assert {value_key(v) for v in c.began} == ak - bk
        assert {value_key(v) for v in c.stopped} == bk - ak
        assert list(c.before) == before[pair] and list(c.after) == after[pair]
    assert list(changes) == sorted(changes)


@SETTINGS
@given(logs())
def test_as_of_reads_only_the_events_up_to_the_instant(log) -> None:
    tl, events = log
    for t in _instants(events):
        upto = [e for e in events if e.observed_at <= t]
        for pred in PAIRS:
            assert _json(fold(events, "user", pred, tl, t)) == _json(fold(upto, "user", pred, tl, t))


@SETTINGS
@given(logs())
def test_a_note_is_held_in_exactly_one_place(log) -> None:
    """A note event is either a note or promoted into one typed pair, never both, never twice."""
    tl, events = log
    t = INSTANTS[-1]
    held = {}
    for pred in PAIRS:
        for b in fold(events, "user", pred, tl, t):
            if b.predicate == "note" or b.promoted_from:
                assert b.event_id not in held, (b.event_id, held.get(b.event_id), pred)
                held[b.event_id] = pred


@SETTINGS
@given(logs(), st.sampled_from(["p", "q"]), st.sampled_from(REG_INSTANTS[1:]), st.data())
def test_an_ordinary_redefine_never_changes_an_earlier_answer(log, name, T, data) -> None:
    """Cardinality is read as of each event: a non-retroactive change of it at T leaves every answer
    before T alone. (Excludes and historical are read at the read: kept as they are here.)

    (A name's first definition also governs older events, and a definition ends a merge of
    its name, so the name must already be defined and not merged away.)
    """
    tl, events = log
    own = tl.own_definition(name)
    if (
        own is None
        or tl.canonical(name) != name
        or not any(r.at < T and r.record.name == name and r.record.definition for r in tl.log)
    ):
        return
    card = data.draw(st.sampled_from(["single", "multi"]))
    rec = RegistryRecord("redefine", name, definition=replace(own, cardinality="multi" if own.historical else card))
    later = Timeline([*_events_of(tl), rec.to_event(T)])
    for t in [x for x in _instants(events) if x < T]:
        for pred in PAIRS:
            assert _json(fold(events, "user", pred, later, t)) == _json(fold(events, "user", pred, tl, t))


def _events_of(tl: Timeline) -> list[Event]:
    return [r.record.to_event(r.at) for r in tl.log]


# --- exclusions read at the read; replaced across pairs (issues 18, 19) ---------------------

LATE = INSTANTS[-1] + 2 * NS  # after every statement


@st.composite
def declarations(draw) -> list[Definition]:
    p_hist = draw(st.booleans()) and draw(st.booleans())
    return [
        Definition("p", "multi" if p_hist else draw(st.sampled_from(["single", "multi"])), "string", historical=p_hist),
        Definition("q", draw(st.sampled_from(["single", "multi"])), "string"),
        Definition("r", draw(st.sampled_from(["single", "multi"])), "string"),
    ]


def _declare(defs: list[Definition], at: int) -> list[Event]:
    return [RegistryRecord("declare", d.name, definition=d).to_event(at) for d in defs]


def _answers(events: list[Event], tl: Timeline) -> dict:
    return {
        (s, p, t): _json(fold(events, s, p, tl, t)) for s in ("user", "bob") for p in PAIRS for t in _instants(events)
    }


@SETTINGS
@given(statements(), declarations(), st.sampled_from(["p", "r"]))
def test_an_exclusion_acts_the_same_declared_before_or_after_the_statements(events, defs, target) -> None:
    q = defs[1]
    with_rule = replace(q, excludes=(target,))
    before = Timeline(_declare([defs[0], with_rule, defs[2]], BASE - NS))
    after = Timeline([*_declare(defs, BASE - NS), RegistryRecord("redefine", "q", definition=with_rule).to_event(LATE)])
    assert _answers(events, before) == _answers(events, after)


@SETTINGS
@given(statements(), declarations(), st.sampled_from(["p", "r"]))
def test_removing_an_exclusion_restores_the_earlier_answers_exactly(events, defs, target) -> None:
    q = defs[1]
    never = Timeline(_declare(defs, BASE - NS))
    added = Timeline(
        [
            *_declare(defs, BASE - NS),
            RegistryRecord("redefine", "q", definition=replace(q, excludes=(target,))).to_event(LATE),
        ]
    )
    removed = Timeline([*_events_of(added), RegistryRecord("redefine", "q", definition=q).to_event(LATE + NS)])
    assert _answers(events, removed) == _answers(events, never)


@SETTINGS
@given(logs())
def test_a_listed_replaced_value_is_one_the_other_pair_stopped_holding_then(log) -> None:
    """Each `replaced` entry from another pair: that pair held exactly that value (its event) and
    stopped holding it at a step credited to one of this pair's statements, no later than the read;
    and this pair's history lists it on that statement's step (as-of reads agree with history)."""
    tl, events = log
    for pred in PAIRS:
        own_ids = {s_.move.event.id for s_ in walk(events, "user", pred, tl) if s_.move.action == "assert"}
        steps = history(events, "user", pred, tl)
        for t in _instants(events):
            for b in fold(events, "user", pred, tl, t):
                for r in b.replaced:
                    assert r.predicate  # fold v5 names every entry's predicate
                    if r.predicate == pred:
                        continue
                    hits = [
                        s_
                        for s_ in walk(events, "user", r.predicate, tl, cross=False)
                        if s_.move.at <= t
                        and any(
                            h.event.id == r.event_id and value_key(h.value) == value_key(r.value) for h in s_.withdrawn
                        )
                        and (s_.move.event.id in own_ids or s_.move.event.caused_by in own_ids)
                    ]
                    assert hits, (pred, r)
                    assert not tl.historical_at(r.predicate, t) or hits[0].move.action == "retract"
                    listed = [
                        s_
                        for s_ in steps
                        if s_.at <= t
                        and any(
                            (x.predicate, x.event_id, value_key(x.value))
                            == (r.predicate, r.event_id, value_key(r.value))
                            for x in s_.replaced
                        )
                    ]
                    assert listed, (pred, r)


@SETTINGS
@given(logs())
def test_each_walk_step_names_the_value_keys_it_leaves_held(log) -> None:
    """``Step.keys`` (which previews read instead of keying the held values again) are the
    keys of the values held after the step, notes promoted and cross moves included."""
    tl, events = log
    for pred in PAIRS:
        for step in walk(events, "user", pred, tl):
            assert step.keys == frozenset(value_key(h.value) for h in step.after)
