"""The fold: a pair's events, read through the registry timeline, give the answer.

``fold`` is pure (no clock, no I/O). Its input may be any superset of what the
pair needs: the pair's own events under every name that resolves to it, note
events promoted into it, and the subject's events under predicates that
exclude it or that name it in ``replaces``. Everything else is ignored, so the
same log in any order, or with an event twice, folds the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable, Iterator

from .records import Belief, Event, PriorValue, belief_from_event, sort_key
from .text import NOTE
from .timeline import Timeline
from .values import Value, value_key

# What a move does to the held values.
ASSERT = "assert"  # an assertion of the pair (or a note promoted into it)
RETRACT = "retract"  # a targeted retraction
CLEAR = "retract_all"  # a blanket retraction
EXCLUDE = "exclude"  # an assertion under a predicate that excludes this one
REPLACES = "replaces"  # an assertion whose `replaces` names a value of this pair


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


@dataclass(slots=True)
class Held:
    event: Event
    value: Value
    replaced: tuple["Held", ...]  # the values this one displaced, one step back
    promoted: bool


@dataclass(slots=True)
class Step:
    """One move of the walk with what it did."""

    move: Move
    before: list[Held]
    after: list[Held]
    withdrawn: list[Held]  # values this move took away (replaced, retracted, excluded)
    effective: bool  # did it change the held values (or refresh one)?


def _content(e: Event) -> str:
    return json.dumps(e.to_json(), sort_keys=True)


def _put(out: dict[tuple[str, str], Move], k: tuple[str, str], m: Move) -> None:
    """Keep one move per (event id, action); an event given twice counts once.

    Two different events can share an id (ids ignore letter case, kind, source,
    confidence and evidence), so which one stays must not depend on input order.
    """
    prev = out.get(k)
    if prev is None:
        out[k] = m
    elif prev.event != m.event and _content(m.event) < _content(prev.event):
        out[k] = m


def moves(events: Iterable[Event], subject: str, predicate: str, timeline: Timeline) -> list[Move]:
    """Classify and order the events that bear on one pair."""
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
                if promo[0] == predicate:
                    _put(out, (e.id, ASSERT), Move(e.observed_at, 0, e, ASSERT, promo[1].value, value_key(promo[1].value), promoted=True))
                elif promo[0] in excluders:
                    # a promoted note reads as an assertion of its predicate: it excludes like one
                    _put(out, (e.id, EXCLUDE), Move(e.observed_at, 1, e, EXCLUDE, promo[1].value, value_key(promo[1].value), via=promo[0]))
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
                k for r in e.replaces if canonical(r.predicate) == predicate and (k := value_key(r.value)) != own
            )
            if keys:
                _put(out, (e.id, REPLACES), Move(e.observed_at, 1, e, REPLACES, None, "", keys=keys))
    return sorted(out.values(), key=lambda m: (m.at, m.order, m.event.id, m.action))


def _apply(m: Move, held: dict[str, Held], predicate: str, timeline: Timeline) -> list[Held]:
    """Apply one move in place; return the values it withdrew."""
    if m.action == ASSERT:
        prev = held.get(m.key)
        if timeline.multi_at(predicate, m.at):
            held[m.key] = Held(m.event, m.value, prev.replaced if prev else (), m.promoted)  # type: ignore[arg-type]
            return []
        if not held or (prev is not None and len(held) == 1):
            others = []  # the common single-valued case: nothing else to replace
        else:
            others = [h for k, h in held.items() if k != m.key]
        # what it displaced, kept as the held values themselves; PriorValues are built
        # only for the beliefs that come out (most steps of a long history never do)
        replaced = tuple(others) if others else (prev.replaced if prev else ())
        held.clear()
        held[m.key] = Held(m.event, m.value, replaced, m.promoted)  # type: ignore[arg-type]
        return others
    if m.action == RETRACT:
        h = held.pop(m.key, None)
        return [h] if h else []
    if m.action == CLEAR:
        gone = list(held.values())
        held.clear()
        return gone
    if m.action == EXCLUDE:
        if m.key in held and timeline.excludes_at(m.via, predicate, m.at) and not timeline.historical_at(predicate, m.at):
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


def _beliefs(held: dict[str, Held], predicate: str) -> list[Belief]:
    out = []
    for h in held.values():
        b = belief_from_event(h.event, predicate, h.value, promoted=h.promoted)
        if h.replaced:
            prior = tuple(PriorValue(r.value, r.event.observed_at, r.event.id, r.event.source) for r in h.replaced)
            b = Belief(
                b.subject, b.predicate, b.value, b.observed_at, b.event_id, b.source, b.confidence, b.kind,
                b.evidence, b.evidence_id, b.stored_as, prior, (), b.promoted_from,
            )
        out.append(b)
    return out


def fold(events: Iterable[Event], subject: str, predicate: str, timeline: Timeline, at: int) -> list[Belief]:
    """What is believed about (subject, predicate) at an instant (an event exactly at it counts)."""
    evs = events if isinstance(events, list) else list(events)
    held = _fold_plain(evs, subject, predicate, timeline, at)
    if held is None:
        held = {}
        for m in moves(evs, subject, predicate, timeline):
            if m.at > at:
                break
            _apply(m, held, predicate, timeline)
    return _beliefs(held, predicate)


def _fold_plain(events: list[Event], subject: str, predicate: str, timeline: Timeline, at: int) -> dict[str, Held] | None:
    """The same walk for the common pair, without building moves; None when it does not apply.

    It applies when every event is the pair's own, stored under the predicate's own
    name, carries no ``replaces``, ids are unique, and the cardinality never changed:
    then only assertions and retractions of this pair remain, in the same order.
    """
    multi = timeline.fixed_multi(predicate)
    if multi is None or timeline.withdrawn_events or predicate == NOTE or timeline.canonical(predicate) != predicate:
        return None
    seen: set[str] = set()
    for e in events:
        if e.subject != subject or e.predicate != predicate or e.replaces or e.id in seen:
            return None
        seen.add(e.id)
    held: dict[str, Held] = {}
    for e in sorted(events, key=sort_key):
        if e.observed_at > at:
            break
        if e.retraction:
            if e.value is None:
                held.clear()
            else:
                held.pop(value_key(e.value), None)
            continue
        k = value_key(e.value)
        prev = held.get(k)
        if multi:
            held[k] = Held(e, e.value, prev.replaced if prev else (), False)  # type: ignore[arg-type]
            continue
        if not held or (prev is not None and len(held) == 1):
            replaced = prev.replaced if prev else ()
        else:
            replaced = tuple(h for kk, h in held.items() if kk != k)
        held = {k: Held(e, e.value, replaced, False)}  # type: ignore[arg-type]
    return held


def walk(events: Iterable[Event], subject: str, predicate: str, timeline: Timeline) -> Iterator[Step]:
    """Every move of the pair in fold order, with the values held before and after it."""
    held: dict[str, Held] = {}
    for m in moves(events, subject, predicate, timeline):
        before = list(held.values())
        before_ids = [(h.event.id, h.value) for h in before]
        gone = _apply(m, held, predicate, timeline)
        after = list(held.values())
        changed = bool(gone) or [(h.event.id, h.value) for h in after] != before_ids
        yield Step(m, before, after, gone, changed)


def beliefs_of(held: list[Held], predicate: str) -> list[Belief]:
    return _beliefs({value_key(h.value): h for h in held}, predicate)


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
