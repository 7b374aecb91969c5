"""Preview arithmetic: how a registry change would change every answer. Pure.

The caller hands in, subject by subject, the events that bear on the affected
predicates; this module folds each affected pair under the current timeline
and under the timeline with the plan's records added, and compares the answer
now, the answer at an as-of instant, and the whole history of answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fold import Held, plain_answers, plain_own, prior_values, walk
from .records import Event
from .text import NOTE
from .timeline import Timeline
from .values import Value, value_key


@dataclass(frozen=True, slots=True)
class PairImpact:
    subject: str
    predicate: str
    before: tuple[Value, ...]
    after: tuple[Value, ...]
    before_as_of: tuple[Value, ...] | None
    after_as_of: tuple[Value, ...] | None
    history_changed: bool
    # beliefs held now whose `replaced` differs: {"value", "before": [...], "after": [...]}
    replaced_changes: tuple[dict[str, Any], ...] = ()

    @property
    def changed(self) -> bool:
        return _keys(self.before) != _keys(self.after)

    @property
    def changed_as_of(self) -> bool:
        return self.before_as_of is not None and _keys(self.before_as_of) != _keys(self.after_as_of or ())

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject": self.subject,
            "predicate": self.predicate,
            "before": list(self.before),
            "after": list(self.after),
            "history_changed": self.history_changed,
        }
        if self.before_as_of is not None:
            out["before_as_of"] = list(self.before_as_of)
            out["after_as_of"] = list(self.after_as_of or ())
        out["replaced_changes"] = list(self.replaced_changes)
        return out


@dataclass
class Impact:
    pairs: int = 0
    subjects: int = 0
    answers_changed: int = 0
    answers_changed_as_of: int = 0
    history_changed: int = 0
    replaced_changed: int = 0  # pairs where a belief held now would list other `replaced` values
    changes: list[PairImpact] = field(default_factory=list)  # pairs whose answers or history differ
    conflicts_created: list[dict[str, Any]] = field(default_factory=list)
    conflicts_resolved: list[dict[str, Any]] = field(default_factory=list)
    values_hidden: int = 0  # values held now that the change would stop holding
    events_read: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "subjects": self.subjects,
            "answers_changed": self.answers_changed,
            "answers_changed_as_of": self.answers_changed_as_of,
            "history_changed": self.history_changed,
            "replaced_changed": self.replaced_changed,
            "values_hidden": self.values_hidden,
            "events_read": self.events_read,
            "changes": [c.to_json() for c in self.changes],
            "conflicts_created": self.conflicts_created,
            "conflicts_resolved": self.conflicts_resolved,
        }


def _keys(values: Iterable[Value]) -> frozenset[str]:
    return frozenset(value_key(v) for v in values)


def answers_over_time(
    events: Sequence[Event], subject: str, predicate: str, tl: Timeline, now: int, as_of: int | None
) -> tuple[list[tuple[int, frozenset[str]]], tuple[Value, ...], tuple[Value, ...] | None]:
    """The answer after each instant, the answer now, and the answer at as_of."""
    series, current, at_as_of, _ = _walk_answers(events, subject, predicate, tl, now, as_of)
    return series, current, at_as_of


def _walk_answers(
    events: Sequence[Event], subject: str, predicate: str, tl: Timeline, now: int, as_of: int | None
) -> tuple[list[tuple[int, frozenset[str]]], tuple[Value, ...], tuple[Value, ...] | None, list[Held]]:
    """As ``answers_over_time``, plus the values held now (with their ``replaced``)."""
    own = plain_own(events, subject, predicate, tl)
    if own is not None:
        series, held, held_as_of = plain_answers(own, bool(tl.fixed_multi(predicate)), now, as_of)
        return series, tuple(h.value for h in held), _values_at(held_as_of, as_of), held
    return _walk_steps(events, subject, predicate, tl, now, as_of)


def _walk_steps(
    events: Sequence[Event], subject: str, predicate: str, tl: Timeline, now: int, as_of: int | None
) -> tuple[list[tuple[int, frozenset[str]]], tuple[Value, ...], tuple[Value, ...] | None, list[Held]]:
    """``_walk_answers`` through the fold's general walk (every pair)."""
    series: list[tuple[int, frozenset[str]]] = []
    held: list[Held] = []
    held_as_of: list[Held] = []
    for step in walk(events, subject, predicate, tl):
        at = step.move.at
        if at > now:
            break
        held = step.after
        if series and series[-1][0] == at:
            series[-1] = (at, step.keys)
        else:
            series.append((at, step.keys))
        if as_of is not None and at <= as_of:
            held_as_of = held
    # the values themselves only where they are asked for: now, and at ``as_of``
    return series, tuple(h.value for h in held), _values_at(held_as_of, as_of), held


def _values_at(held: list[Held], as_of: int | None) -> tuple[Value, ...] | None:
    return tuple(h.value for h in held) if as_of is not None else None


def replaced_changes(
    predicate: str, before: list[Held], after: list[Held], tl_before: Timeline, tl_after: Timeline
) -> tuple[dict[str, Any], ...]:
    """Beliefs held under both timelines whose ``replaced`` lists differ (by predicate, value and event)."""

    def ident(h: Held, tl: Timeline) -> frozenset[tuple[str, str, str]]:
        # the entries ``prior_values`` lists, by predicate (the one named, or this one), value and event
        named = tl.rules_at_read
        return frozenset(((r.pair if named else "") or predicate, value_key(r.value), r.event.id) for r in h.replaced)

    def shown(h: Held, tl: Timeline) -> list[dict[str, Any]]:
        return [p.to_json() for p in prior_values(h, predicate, tl)]

    old = {value_key(h.value): h for h in before}
    out = []
    for h in after:
        o = old.get(value_key(h.value))
        # the same displaced values (most often none) list the same: built only where they differ
        if o is None or not (o.replaced or h.replaced) or ident(o, tl_before) == ident(h, tl_after):
            continue
        out.append({"value": h.value, "before": shown(o, tl_before), "after": shown(h, tl_after)})
    return tuple(out)


def series_differ(a: list[tuple[int, frozenset[str]]], b: list[tuple[int, frozenset[str]]]) -> bool:
    """Do two step functions of answers over time differ at any instant?"""
    i = j = 0
    va: frozenset[str] = frozenset()
    vb: frozenset[str] = frozenset()
    while i < len(a) or j < len(b):
        ta = a[i][0] if i < len(a) else None
        tb = b[j][0] if j < len(b) else None
        t = min(x for x in (ta, tb) if x is not None)
        if ta == t:
            va = a[i][1]
            i += 1
        if tb == t:
            vb = b[j][1]
            j += 1
        if va != vb:
            return True
    return False


def affected_pairs(
    events: Iterable[Event], names_before: set[str], names_after: set[str], before: Timeline, after: Timeline
) -> list[str]:
    """Canonical predicates (under either timeline) that these events give the subject."""
    preds: set[str] = set()
    for e in events:
        if e.predicate in names_before:
            preds.add("b:" + before.canonical(e.predicate))
        if e.predicate in names_after:
            preds.add("a:" + after.canonical(e.predicate))
        if before.canonical(e.predicate) == NOTE and not e.retraction:
            for tl, tag in ((before, "b:"), (after, "a:")):
                promo = tl.promotion(e.id)
                if promo is not None:
                    preds.add(tag + promo[0])
    return sorted(preds)


def subject_impact(
    subject: str,
    events: Sequence[Event],
    predicates: Iterable[str],
    before: Timeline,
    after: Timeline,
    now: int,
    as_of: int | None = None,
) -> list[PairImpact]:
    """Fold each named predicate of one subject under both timelines and compare."""
    out = []
    for p in sorted(set(predicates)):
        sb, nb, ab, hb = _walk_answers(events, subject, p, before, now, as_of)
        sa, na, aa, ha = _walk_answers(events, subject, p, after, now, as_of)
        if not sb and not sa:
            continue
        out.append(
            PairImpact(subject, p, nb, na, ab, aa, series_differ(sb, sa), replaced_changes(p, hb, ha, before, after))
        )
    return out


def conflicts_of(subject: str, answers: dict[str, tuple[Value, ...]]) -> set[tuple[str, str, tuple[str, ...]]]:
    """(subject, value key, predicates) for each value held under two or more typed predicates."""
    by_key: dict[str, set[str]] = {}
    for p, values in answers.items():
        if p == NOTE:
            continue
        for v in values:
            by_key.setdefault(value_key(v), set()).add(p)
    return {(subject, k, tuple(sorted(ps))) for k, ps in by_key.items() if len(ps) > 1}


def summarize(per_subject: Iterable[list[PairImpact]]) -> Impact:
    """Counts, changes and conflict deltas over every subject's pair impacts."""
    imp = Impact()
    for pairs in per_subject:
        if not pairs:
            continue
        imp.subjects += 1
        before: dict[str, tuple[Value, ...]] = {}
        after: dict[str, tuple[Value, ...]] = {}
        for pi in pairs:
            imp.pairs += 1
            before[pi.predicate] = pi.before
            after[pi.predicate] = pi.after
            kb, ka = _keys(pi.before), _keys(pi.after)
            changed = kb != ka  # pi.changed, with the keys kept for values_hidden
            if changed:
                imp.answers_changed += 1
                imp.values_hidden += len(kb - ka)
            changed_as_of = pi.changed_as_of
            if changed_as_of:
                imp.answers_changed_as_of += 1
            if pi.history_changed:
                imp.history_changed += 1
            if pi.replaced_changes:
                imp.replaced_changed += 1
            if changed or pi.history_changed or changed_as_of or pi.replaced_changes:
                imp.changes.append(pi)
        if len(pairs) < 2:
            continue  # a conflict is a value held under two predicates
        subject = pairs[0].subject
        cb, ca = conflicts_of(subject, before), conflicts_of(subject, after)
        if ca == cb:
            continue
        # the value itself, for readers: a value key (`s:coffee`) is internal
        shown = {value_key(v): v for vals in (*before.values(), *after.values()) for v in vals}
        for s, k, ps in sorted(ca - cb):
            imp.conflicts_created.append({"subject": s, "value_key": k, "value": shown.get(k), "predicates": list(ps)})
        for s, k, ps in sorted(cb - ca):
            imp.conflicts_resolved.append({"subject": s, "value_key": k, "value": shown.get(k), "predicates": list(ps)})
    return imp
