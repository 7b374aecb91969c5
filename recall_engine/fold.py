"""The fold: a pair's events, read through the registry timeline, give the answer.

``fold`` is pure (no clock, no I/O). Its input may be any superset of what the
pair needs: the pair's own events under every name that resolves to it, note
events promoted into it, and the subject's events under predicates that
exclude it or that name it in ``replaces``; and, for ``replaced`` (docs/fold.md),
the same for every pair this one excludes or names in a ``replaces``. Everything
else is ignored, so the same log in any order, or with an event twice, folds the
same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter

from .records import Belief, Event, PriorValue, belief_from_event
from .text import NOTE
from .timeline import Timeline
from .values import _STR_KEYS, Value, value_key

# What a move does to the held values.
ASSERT = "assert"  # an assertion of the pair (or a note promoted into it)
RETRACT = "retract"  # a targeted retraction
CLEAR = "retract_all"  # a blanket retraction
EXCLUDE = "exclude"  # an assertion under a predicate that excludes this one
REPLACES = "replaces"  # an assertion whose `replaces` names a value of this pair
CROSS = "withdrew"  # values another pair stopped holding because of a statement of this pair
PROMOTED_OUT = "promoted_to"  # a note event read as an assertion of another predicate (note pair only)


@dataclass(slots=True)
class Move:
    at: int
    order: int  # 0 for assertions, 1 for everything that withdraws
    event: Event
    action: str
    value: Value | None
    key: str
    via: str = ""  # EXCLUDE: the excluding predicate
    promoted: bool = False
    keys: tuple[str, ...] = ()  # REPLACES: the value keys named
    credit: str = ""  # CROSS: the id of this pair's statement that withdrew them
    gone: tuple[Held, ...] = ()  # CROSS: what the other pair (``via``) stopped holding


@dataclass(slots=True)
class Held:
    event: Event
    value: Value
    replaced: tuple[Held, ...]  # the values this one displaced, one step back
    promoted: bool
    pair: str = ""  # as an entry of ``replaced``: the other predicate it was withdrawn from
    fresh: bool = False  # ``replaced`` is this statement's own correction, not one a restatement kept


@dataclass(slots=True)
class Step:
    """One move of the walk with what it did."""

    move: Move
    before: list[Held]
    after: list[Held]
    withdrawn: list[Held]  # values this move took away (replaced, retracted, excluded)
    effective: bool  # did it change the held values (or refresh one)?
    keys: frozenset[str]  # the value keys held after it


def _content(e: Event) -> str:
    return json.dumps(e.to_json(), sort_keys=True)


def _put(out: dict[tuple[str, str], Move], k: tuple[str, str], m: Move) -> None:
    """Keep one move per (event id, action); an event given twice counts once.

    Two different events can share an id (ids ignore letter case, kind, source,
    confidence and evidence), so which one stays must not depend on input order.
    """
    prev = out.get(k)
    if prev is None or prev.event != m.event and _content(m.event) < _content(prev.event):
        out[k] = m


def moves(
    events: Iterable[Event], subject: str, predicate: str, timeline: Timeline, *, cross: bool = True
) -> list[Move]:
    """Classify and order the events that bear on one pair."""
    events = events if isinstance(events, (list, tuple)) else list(events)
    canonical = timeline.canonical
    excluders = timeline.excluders(predicate)
    out: dict[tuple[str, str], Move] = {}
    direct = predicate != NOTE and canonical(predicate) == predicate
    withdrawn = timeline.withdrawn_events  # statements of a reverted plan count for nothing
    for e in events:
        if e.subject != subject or (withdrawn and e.id in withdrawn):
            continue
        if direct and e.predicate == predicate and not e.replaces:
            # the common case: an event stored under the predicate's own name
            if e.retraction:
                act = CLEAR if e.value is None else RETRACT
                m = Move(e.observed_at, 1, e, act, e.value, value_key(e.value))
            else:
                act = ASSERT
                m = Move(e.observed_at, 0, e, ASSERT, e.value, value_key(e.value))
            k = (e.id, act)
            if k in out:
                _put(out, k, m)
            else:
                out[k] = m
            continue
        c = canonical(e.predicate)
        if c == NOTE and not e.retraction:
            promo = timeline.promotion(e.id)
            if promo is not None:
                if predicate == NOTE:
                    # seen from the note's side: never held here, shown where it went
                    _put(
                        out,
                        (e.id, PROMOTED_OUT),
                        Move(
                            e.observed_at, 0, e, PROMOTED_OUT, promo[1].value, value_key(promo[1].value), via=promo[0]
                        ),
                    )
                elif promo[0] == predicate:
                    _put(
                        out,
                        (e.id, ASSERT),
                        Move(e.observed_at, 0, e, ASSERT, promo[1].value, value_key(promo[1].value), promoted=True),
                    )
                elif promo[0] in excluders:
                    # a promoted note reads as an assertion of its predicate: it excludes like one
                    _put(
                        out,
                        (e.id, EXCLUDE),
                        Move(e.observed_at, 1, e, EXCLUDE, promo[1].value, value_key(promo[1].value), via=promo[0]),
                    )
                continue
        if c == predicate:
            if e.retraction:
                act = CLEAR if e.value is None else RETRACT
                _put(out, (e.id, act), Move(e.observed_at, 1, e, act, e.value, e.key))
            else:
                _put(out, (e.id, ASSERT), Move(e.observed_at, 0, e, ASSERT, e.value, e.key))
        elif c in excluders and not e.retraction:
            _put(out, (e.id, EXCLUDE), Move(e.observed_at, 1, e, EXCLUDE, e.value, e.key, via=c))
        if e.replaces and not e.retraction:
            own = e.key if c == predicate else None
            keys = tuple(
                vk for r in e.replaces if canonical(r.predicate) == predicate and (vk := value_key(r.value)) != own
            )
            if keys:
                _put(out, (e.id, REPLACES), Move(e.observed_at, 1, e, REPLACES, None, "", keys=keys))
    found = sorted(out.values(), key=_order)
    if cross and timeline.rules_at_read:
        extra = _cross_moves(events, subject, predicate, timeline, found)
        if extra:
            found = sorted([*found, *extra], key=_order)
    return found


def _order(m: Move) -> tuple[int, int, str, str]:
    return (m.at, m.order, m.event.id, m.action)


def _cross_moves(
    events: Iterable[Event], subject: str, predicate: str, timeline: Timeline, own: list[Move]
) -> list[Move]:
    """What this pair's statements withdrew from other pairs, for ``replaced`` (fold v5).

    The other pairs are the ones this predicate excludes and the ones its statements
    name in ``replaces``; each is walked (without this step, so nothing recurses) and
    every value it stopped holding through one of our statements is credited to that
    statement: its exclusion, its ``replaces``, or a retraction ``caused_by`` it.
    A historical pair is never withdrawn that way, so it is never listed.
    """
    ids = {m.event.id for m in own if m.action == ASSERT}
    if not ids:
        return []
    canonical = timeline.canonical
    others = timeline.excluded_by(predicate)
    for m in own:
        if m.action == ASSERT and not m.promoted:
            others.update(canonical(r.predicate) for r in m.event.replaces)
    others.discard(predicate)
    out: list[Move] = []
    for x in sorted(others):
        for st in walk(events, subject, x, timeline, cross=False):
            if not st.withdrawn:
                continue
            m = st.move
            credit = m.event.id if m.action in (EXCLUDE, REPLACES) else m.event.caused_by if m.action == RETRACT else ""
            if credit in ids:
                out.append(Move(m.at, 1, m.event, CROSS, None, "", via=x, credit=credit, gone=tuple(st.withdrawn)))
    return out


def _apply(m: Move, held: dict[str, Held], predicate: str, timeline: Timeline) -> list[Held]:
    """Apply one move in place; return the values it withdrew."""
    if m.action == ASSERT:
        assert m.value is not None, "an assertion carries its value"
        prev = held.get(m.key)
        if timeline.multi_at(predicate, m.at):
            held[m.key] = Held(m.event, m.value, prev.replaced if prev else (), m.promoted)
            return []
        if not held or (prev is not None and len(held) == 1):
            others = []  # the common single-valued case: nothing else to replace
        else:
            others = [h for k, h in held.items() if k != m.key]
        # what it displaced, kept as the held values themselves; PriorValues are built
        # only for the beliefs that come out (most steps of a long history never do)
        replaced = tuple(others) if others else (prev.replaced if prev else ())
        held.clear()
        held[m.key] = Held(m.event, m.value, replaced, m.promoted, fresh=bool(others))
        return others
    if m.action == RETRACT:
        h = held.pop(m.key, None)
        return [h] if h else []
    if m.action == CLEAR:
        gone = list(held.values())
        held.clear()
        return gone
    if m.action == CROSS:
        # the statement's own correction in another pair: it replaces what a restatement
        # kept; several corrections of one statement add up
        for k, h in held.items():
            if h.event.id == m.credit:
                lost = tuple(Held(g.event, g.value, (), g.promoted, pair=m.via) for g in m.gone)
                held[k] = Held(h.event, h.value, (h.replaced if h.fresh else ()) + lost, h.promoted, fresh=True)
                break
        return []
    if m.action == PROMOTED_OUT:
        return []
    if m.action == EXCLUDE:
        if (
            m.key in held
            and timeline.excludes_at(m.via, predicate, m.at)
            and not timeline.historical_at(predicate, m.at)
        ):
            return [held.pop(m.key)]
        return []
    # REPLACES
    gone = []
    if not timeline.historical_at(predicate, m.at):
        for k in m.keys:
            h = held.pop(k, None)
            if h:
                gone.append(h)
    return gone


def prior_values(h: Held, predicate: str, timeline: Timeline) -> tuple[PriorValue, ...]:
    """A held value's ``replaced`` as it is shown (with predicates from fold v5 on)."""
    named = timeline.rules_at_read
    return tuple(
        PriorValue(r.value, r.event.observed_at, r.event.id, r.event.source, (r.pair or predicate) if named else "")
        for r in h.replaced
    )


def _beliefs(held: dict[str, Held], predicate: str, timeline: Timeline) -> list[Belief]:
    out = []
    for h in held.values():
        prior = prior_values(h, predicate, timeline) if h.replaced else ()
        out.append(belief_from_event(h.event, predicate, h.value, promoted=h.promoted, replaced=prior))
    return out


def fold(events: Iterable[Event], subject: str, predicate: str, timeline: Timeline, at: int) -> list[Belief]:
    """What is believed about (subject, predicate) at an instant (an event exactly at it counts)."""
    return _beliefs(fold_state(events, subject, predicate, timeline, at), predicate, timeline)


def fold_state(events: Iterable[Event], subject: str, predicate: str, timeline: Timeline, at: int) -> dict[str, Held]:
    """The held values ``fold`` turns into beliefs, by value key."""
    evs = events if isinstance(events, list) else list(events)
    held = _fold_plain(evs, subject, predicate, timeline, at)
    if held is None:
        held = {}
        for m in moves(evs, subject, predicate, timeline):
            if m.at > at:
                break
            _apply(m, held, predicate, timeline)
    return held


def extend_state(
    held: dict[str, Held], events: list[Event], subject: str, predicate: str, timeline: Timeline
) -> dict[str, Held]:
    """``held`` (a state after every event it came from) moved on by later ``events``.

    Equal to folding everything again when every one of ``events`` is later than all
    the events ``held`` came from, none of them was among those, and the pair has no
    cross moves (nothing it excludes, no ``replaces``: see recall_engine.pair_cache).
    ``held`` itself is left as it was.
    """
    out = dict(held)
    for m in moves(events, subject, predicate, timeline, cross=False):
        _apply(m, out, predicate, timeline)
    return out


def state_beliefs(held: dict[str, Held], predicate: str, timeline: Timeline) -> list[Belief]:
    """The beliefs of a state from ``fold_state`` or ``extend_state``."""
    return _beliefs(held, predicate, timeline)


def _fold_plain(
    events: list[Event], subject: str, predicate: str, timeline: Timeline, at: int
) -> dict[str, Held] | None:
    """The same walk for the common pair, without building moves; None when it does not apply.

    It applies when every event is the pair's own, stored under the predicate's own
    name, carries no ``replaces``, ids are unique, and the cardinality never changed:
    then only assertions and retractions of this pair remain, in the same order.
    """
    multi = timeline.fixed_multi(predicate)
    if multi is None or timeline.withdrawn_events or predicate == NOTE or timeline.canonical(predicate) != predicate:
        return None
    if len({e.id for e in events}) < len(events):
        return None
    last = -1  # the latest instant so far: while each event is later, they are in fold order already
    ordered = True
    for e in events:
        if e.subject != subject or e.predicate != predicate or e.replaces:
            return None
        t = e.observed_at
        if t > last:
            last = t
        else:
            ordered = False
    if multi:
        return _fold_multi(events if ordered else sorted(events, key=_FOLD_ORDER), at)
    # Single-valued: at most one value is held at a time, so the walk keeps it (and its
    # key) in two names instead of a dict; every step builds what ``_apply`` builds.
    keys = _STR_KEYS
    cur: Held | None = None
    cur_key = ""
    for e in events if ordered else sorted(events, key=_FOLD_ORDER):
        if e.observed_at > at:
            break
        v = e.value
        if e.retraction:
            if v is None or (cur is not None and value_key(v) == cur_key):
                cur = None  # every value withdrawn, or the one held
            continue
        assert v is not None, "an assertion carries its value"
        k = keys.get(v) if type(v) is str else None  # value_key, its cache read here first
        if k is None:
            k = value_key(v)
        h = _new(Held)  # Held(e, v, replaced, False), its slots set here: one per event
        h.event = e
        h.value = v
        h.replaced = () if cur is None else cur.replaced if k == cur_key else (cur,)
        h.promoted = False
        h.pair = ""
        h.fresh = False
        cur, cur_key = h, k
    return {} if cur is None else {cur_key: cur}


def _fold_multi(events: list[Event], at: int) -> dict[str, Held]:
    """``_fold_plain`` of a multi-valued pair, its events in fold order."""
    held: dict[str, Held] = {}
    for e in events:
        if e.observed_at > at:
            break
        if e.retraction:
            if e.value is None:
                held.clear()
            else:
                held.pop(value_key(e.value), None)
            continue
        assert e.value is not None, "an assertion carries its value"
        k = value_key(e.value)
        prev = held.get(k)
        held[k] = Held(e, e.value, prev.replaced if prev else (), False)
    return held


# records.sort_key, computed in C (the retraction flag sorts as its 0 or 1)
_FOLD_ORDER = attrgetter("observed_at", "retraction", "id")
_new = object.__new__


def plain_own(events: Iterable[Event], subject: str, predicate: str, timeline: Timeline) -> list[Event] | None:
    """The pair's own events in fold order when its walk is plain; None when it is not.

    Plain: the cardinality never changes, the pair is not the note pair, no event of
    the subject carries ``replaces`` or is a note, and each of them reads as the pair's
    own (under any stored name, ids unique) or as a predicate that neither excludes it
    nor is excluded by it. Then every own event is one move (an assertion, a targeted
    or a blanket retraction), in this order, and there is no other: no exclusion, no
    ``replaces``, no promotion, and no cross move (the pairs it excludes hold nothing).
    """
    if predicate == NOTE or timeline.fixed_multi(predicate) is None:
        return None
    canonical = timeline.canonical
    bearing = timeline.excluders(predicate) | timeline.excluded_by(predicate)
    bearing.add(NOTE)
    withdrawn = timeline.withdrawn_events
    own_names: dict[str, bool] = {}  # stored name -> its events are the pair's own
    own: list[Event] = []
    for e in events:
        if e.subject != subject or (withdrawn and e.id in withdrawn):
            continue
        if e.replaces:
            return None
        is_own = own_names.get(e.predicate)
        if is_own is None:
            c = canonical(e.predicate)
            if c != predicate and c in bearing:
                return None
            is_own = own_names[e.predicate] = c == predicate
        if is_own:
            own.append(e)
    if len({e.id for e in own}) < len(own):
        return None
    last = -1
    for e in own:
        if e.observed_at <= last:
            own.sort(key=_FOLD_ORDER)  # moves' order: with ids unique, (instant, retraction, id)
            break
        last = e.observed_at
    return own


def plain_answers(
    own: list[Event], multi: bool, now: int, as_of: int | None
) -> tuple[list[tuple[int, frozenset[str]]], list[Held], list[Held]]:
    """``walk`` of a plain pair (its events from ``plain_own``) read as answers: the value keys
    held after each instant up to ``now``, and the values held at ``now`` and at ``as_of``.

    Each event is one step, applied as ``_apply`` applies it (the same held values, the
    same ``replaced``), without building moves and steps."""
    series: list[tuple[int, frozenset[str]]] = []
    empty: frozenset[str] = frozenset()
    str_keys = _STR_KEYS
    one: dict[str, frozenset[str]] = {}  # a single value's keys, built once
    # multi-valued: the events held by value key (a fixed multi-valued pair never displaces
    # a value, so each is held as Held(event, value, (), False), built where asked for)
    held: dict[str, Event] = {}
    cur: Held | None = None  # single-valued: the held value and its key
    cur_key = ""
    keys = empty
    last = None
    at_as_of: list[Held] = []
    pending = as_of is not None  # the values at ``as_of`` are taken before the first later step
    until = now if as_of is None else as_of
    for e in own:
        at = e.observed_at
        if at > now:
            break
        if pending and at > until:
            at_as_of = _held_multi(held) if multi else [cur] if cur else []
            pending = False
        v = e.value
        k = str_keys.get(v) if type(v) is str else None  # value_key, its cache read here first
        if k is None:
            k = value_key(v)
        if multi:
            if e.retraction:
                if v is None:
                    held.clear()
                    keys = empty
                elif held.pop(k, None) is not None:
                    keys = frozenset(held)
            else:
                assert v is not None, "an assertion carries its value"
                added = k not in held  # else the same keys: the set built before still answers
                held[k] = e
                if added:
                    keys = frozenset(held)
        elif e.retraction:
            if cur is not None and (v is None or k == cur_key):
                cur, keys = None, empty
        else:
            assert v is not None, "an assertion carries its value"
            if cur is None:
                cur = Held(e, v, (), False)
            elif k == cur_key:
                cur = Held(e, v, cur.replaced, False)
            else:
                cur = Held(e, v, (cur,), False, "", True)  # fresh: it displaced another value
            cur_key = k
            keys = one.get(k) or one.setdefault(k, frozenset((k,)))
        if at == last:
            series[-1] = (at, keys)
        else:
            series.append((at, keys))
            last = at
    now_held = _held_multi(held) if multi else [cur] if cur else []
    return series, now_held, now_held if pending else at_as_of


def _held_multi(held: dict[str, Event]) -> list[Held]:
    return [Held(e, e.value, (), False) for e in held.values()]  # type: ignore[arg-type]  # assertions only


def walk(
    events: Iterable[Event], subject: str, predicate: str, timeline: Timeline, *, cross: bool = True
) -> Iterator[Step]:
    """Every move of the pair in fold order, with the values held before and after it.

    ``cross=False`` leaves out what the pair's statements withdrew elsewhere (held
    values are the same either way; only ``replaced`` differs)."""
    held: dict[str, Held] = {}
    for m in moves(events, subject, predicate, timeline, cross=cross):
        before = list(held.values())
        before_ids = [(h.event.id, h.value) for h in before]
        gone = _apply(m, held, predicate, timeline)
        after = list(held.values())
        changed = bool(gone) or [(h.event.id, h.value) for h in after] != before_ids
        yield Step(m, before, after, gone, changed, frozenset(held))  # held is keyed by value key


def reads(e: Event, predicate: str, timeline: Timeline) -> bool:
    """Does the fold of ``predicate`` (for the event's subject) read this event for its held values?"""
    c = timeline.canonical(e.predicate)
    if c == predicate:
        return True
    if c == NOTE and not e.retraction:
        promo = timeline.promotion(e.id)
        if promo is not None and promo[0] == predicate:
            return True
    return bool(moves((e,), e.subject, predicate, timeline, cross=False))


def scope_ids(events: Iterable[Event], predicate: str, timeline: Timeline) -> set[str]:
    """Ids of every event the folds of ``predicate`` read, for every subject.

    Its own input, and (fold v5) the input of each pair it excludes or names in a
    ``replaces`` of the same subject, for ``replaced``. Applied to its own result it
    gives the same set, so a bundle cut this way verifies with it.
    """
    evs = events if isinstance(events, (list, tuple)) else list(events)
    out: set[str] = set()
    related: dict[str, set[str]] = {}
    for e in evs:
        if reads(e, predicate, timeline):
            out.add(e.id)
            if (
                timeline.rules_at_read
                and e.replaces
                and not e.retraction
                and timeline.canonical(e.predicate) == predicate
            ):
                related.setdefault(e.subject, set()).update(timeline.canonical(r.predicate) for r in e.replaces)
    if not timeline.rules_at_read:
        return out
    excluded = timeline.excluded_by(predicate)
    for e in evs:
        if e.id in out:
            continue
        for x in excluded | related.get(e.subject, set()):
            if x != predicate and reads(e, x, timeline):
                out.add(e.id)
                break
    return out


def beliefs_of(held: list[Held], predicate: str, timeline: Timeline) -> list[Belief]:
    return _beliefs({value_key(h.value): h for h in held}, predicate, timeline)


def attach_elsewhere(beliefs: list[Belief]) -> list[Belief]:
    """Give each typed belief the same value held about its subject under other typed predicates.

    ``beliefs`` are one instant's answers; nothing is decided by what this finds.
    """
    from dataclasses import replace

    from .records import Elsewhere

    by_key: dict[tuple[str, str], list[Belief]] = {}
    for b in beliefs:
        if b.predicate != NOTE:
            by_key.setdefault((b.subject, b.key), []).append(b)
    out = []
    for b in beliefs:
        group = by_key.get((b.subject, b.key), []) if b.predicate != NOTE else []
        others = tuple(
            Elsewhere(o.predicate, o.value, o.observed_at, o.event_id) for o in group if o.predicate != b.predicate
        )
        out.append(replace(b, elsewhere=others) if others else b)
    return out
