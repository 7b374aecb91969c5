"""History, diff and explain: pure readings of folds (no clock, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .fold import ASSERT, CLEAR, CROSS, EXCLUDE, PROMOTED_OUT, REPLACES, RETRACT, Held, Step, beliefs_of, walk
from .instants import format_rfc3339
from .records import Belief, Event, PriorValue
from .registry import RegistryRecord
from .timeline import LoggedRecord, Timeline
from .values import Value, value_key


@dataclass(frozen=True, slots=True)
class HistoryStep:
    at: int
    event_id: str
    action: str  # assert, retract, retract_all, exclude, replaces, promote, promoted_to
    value: Value | None
    stored_as: str  # the name the event was stored under
    before: tuple[Value, ...]
    after: tuple[Value, ...]
    withdrawn: tuple[Value, ...]
    source: str
    evidence: str
    via: str = ""  # for exclude: the excluding predicate; for promoted_to: where the note went
    caused_by: str = ""
    # an assertion: what it displaced, here and (through excludes or replaces) in other pairs
    replaced: tuple[PriorValue, ...] = ()
    # promoted_to (a note's history): (predicate, value, plan, promote record id)
    promoted_to: tuple[str, Value, str, str] | None = None
    # when the store appended the step's event ("recorded at", beside ``at``, "said at")
    recorded_at: int | None = None

    def describe(self) -> str:
        """A note's step that left for a typed predicate, in words (history, explain)."""
        if self.promoted_to is None:
            return ""
        p, v, plan, rec = self.promoted_to
        return f"promoted to {p} = {v!r} " + (f"by plan {plan}" if plan else f"by registry event {rec}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "at": format_rfc3339(self.at),
            "event_id": self.event_id,
            "action": self.action,
            "value": self.value,
            "stored_as": self.stored_as,
            "before": list(self.before),
            "after": list(self.after),
            "withdrawn": list(self.withdrawn),
            "source": self.source,
            "evidence": self.evidence,
            "via": self.via,
            "caused_by": self.caused_by,
            "replaced": [p.to_json() for p in self.replaced],
            "recorded_at": format_rfc3339(self.recorded_at) if self.recorded_at is not None else None,
        }
        if self.promoted_to is not None:
            p, v, plan, rec = self.promoted_to
            out["promoted_to"] = {"predicate": p, "value": v, "plan": plan, "record_id": rec, "text": self.describe()}
        return out


def _values(held: list[Held]) -> tuple[Value, ...]:
    return tuple(h.value for h in held)


def _priors(held: Iterable[Held], predicate: str) -> tuple[PriorValue, ...]:
    return tuple(PriorValue(h.value, h.event.observed_at, h.event.id, h.event.source, predicate) for h in held)


def _history_step(s: Step, predicate: str, timeline: Timeline) -> HistoryStep:
    m = s.move
    action = "promote" if m.promoted else m.action
    promoted_to = None
    if m.action == PROMOTED_OUT:
        promo = timeline.promotion(m.event.id)
        assert promo is not None, "a note moves out only while it is promoted"
        rec = timeline.record(promo[2])
        promoted_to = (m.via, promo[1].value, rec.record.plan if rec else "", promo[2])
    return HistoryStep(
        at=m.at,
        event_id=m.event.id,
        action=action,
        value=m.event.value if m.action == PROMOTED_OUT else m.value if m.action != REPLACES else None,
        stored_as=m.event.predicate,
        before=_values(s.before),
        after=_values(s.after),
        withdrawn=_values(s.withdrawn),
        source=m.event.source,
        evidence=m.event.evidence or (str(m.event.value) if m.promoted else ""),
        via=m.via or (m.event.predicate if m.action == REPLACES else ""),
        caused_by=m.event.caused_by,
        replaced=_priors(s.withdrawn, predicate) if m.action == ASSERT else (),
        promoted_to=promoted_to,
        recorded_at=m.event.recorded_at,
    )


def _steps(steps: Iterable[Step], predicate: str, timeline: Timeline) -> list[HistoryStep]:
    """History steps of a walk: what another pair stopped holding because of one of this
    pair's statements joins that statement's ``replaced``; an exclusion or a ``replaces``
    that withdrew nothing here is left out."""
    out: list[HistoryStep] = []
    where: dict[str, int] = {}
    for s in steps:
        m = s.move
        if m.action == CROSS:
            i = where.get(m.credit)
            if i is not None:
                out[i] = replace(out[i], replaced=out[i].replaced + _priors(m.gone, m.via))
            continue
        if m.action in (EXCLUDE, REPLACES) and not s.withdrawn:
            continue
        if m.action == ASSERT:
            where[m.event.id] = len(out)
        out.append(_history_step(s, predicate, timeline))
    return out


def history(events: Iterable[Event], subject: str, predicate: str, timeline: Timeline) -> list[HistoryStep]:
    """Every event of the pair, oldest first, with the values held just before and after.

    Events of other predicates (an exclusion, a ``replaces``) appear only where they
    withdrew something here, so each step still agrees with an as-of read. An
    assertion lists what it ``replaced``, in this pair and in others; a note promoted
    into a typed predicate stays in the note's history as a ``promoted_to`` step.
    """
    return _steps(walk(events, subject, predicate, timeline), predicate, timeline)


def answer_at(steps: Iterable[HistoryStep], at: int) -> tuple[Value, ...]:
    """What the pair held at an instant, read off its history (each step is an as-of read)."""
    held: tuple[Value, ...] = ()
    for st in steps:
        if st.at > at:
            break
        held = st.after
    return held


# --- diff -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    subject: str
    predicate: str
    before: tuple[Value, ...]
    after: tuple[Value, ...]
    began: tuple[Value, ...]
    stopped: tuple[Value, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "predicate": self.predicate,
            "before": list(self.before),
            "after": list(self.after),
            "began": list(self.began),
            "stopped": list(self.stopped),
        }


def change_of(subject: str, predicate: str, before: Iterable[Value], after: Iterable[Value]) -> Change | None:
    """The difference between two answers of one pair, by value identity; None if equal."""
    b, a = tuple(before), tuple(after)
    bk = {value_key(v) for v in b}
    ak = {value_key(v) for v in a}
    began = tuple(v for v in a if value_key(v) not in bk)
    stopped = tuple(v for v in b if value_key(v) not in ak)
    if not began and not stopped:
        return None
    return Change(subject, predicate, b, a, began, stopped)


def diff_answers(
    before: Mapping[tuple[str, str], Iterable[Value]], after: Mapping[tuple[str, str], Iterable[Value]]
) -> list[Change]:
    """Each pair whose answer differs between two sets of answers, sorted by pair."""
    out = []
    for pair in sorted(set(before) | set(after)):
        c = change_of(pair[0], pair[1], before.get(pair, ()), after.get(pair, ()))
        if c is not None:
            out.append(c)
    return out


# --- explain ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    at: int
    op: str
    name: str
    change: str
    record: RegistryRecord
    event_id: str

    def to_json(self) -> dict[str, Any]:
        d = self.record.definition
        return {
            "at": format_rfc3339(self.at),
            "op": self.op,
            "name": self.name,
            "change": self.change,
            "cardinality": d.cardinality if d else None,
            "value_type": (d.value_type or "string") if d else None,
            "excludes": list(d.excludes) if d else [],
            "historical": d.historical if d else False,
            "operator": self.record.operator,
            "reason": self.record.reason,
            "plan": self.record.plan,
            "event_id": self.event_id,
        }


def describe_record(r: LoggedRecord, predicate: str) -> str:
    rec = r.record
    d = rec.definition
    if rec.op == "merge":
        return f"{rec.name} merged into {rec.into}" + (
            f" (automatic match, score {rec.score:.2f})" if rec.score else ""
        )
    if rec.op == "split":
        return f"{rec.name} split from the predicate it was merged into"
    if rec.op == "vocabulary":
        return "vocabulary opened: writes may define new predicates" if rec.open else "vocabulary closed"
    if rec.op == "promote":
        return f"{len(rec.notes)} note(s) promoted into {rec.name}"
    if rec.op == "applied":
        return f"plan {rec.plan} applied" + (f" by {rec.operator}" if rec.operator else "")
    if rec.op == "withdraw":
        return f"plan {rec.withdraws} withdrawn (reverted): its records and statements no longer count"
    assert d is not None
    shape = f"{d.cardinality}-valued {d.value_type or 'string'}"
    extra = []
    if d.excludes:
        extra.append("excludes " + ", ".join(d.excludes))
    if d.historical:
        extra.append("historical")
    tail = ": " + shape + ("; " + "; ".join(extra) if extra else "")
    if rec.name != predicate and predicate in d.excludes:
        return f"{rec.name} excludes {predicate}" + tail
    if rec.op == "redefine":
        return ("redefined for its whole history" if rec.retroactive else "redefined from this instant") + tail
    if rec.op == "define":
        return "defined on first use" + tail
    return "declared" + tail


def rules_for(predicate: str, timeline: Timeline) -> list[Rule]:
    p = timeline.canonical(predicate)
    return [
        Rule(r.at, r.record.op, r.record.name, describe_record(r, p), r.record, r.event_id)
        for r in timeline.governing(p)
    ]


@dataclass(frozen=True, slots=True)
class ValueReason:
    """Why one value is (or is no longer) believed."""

    value: Value
    held: bool
    reason: str
    event_id: str
    at: int

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "held": self.held,
            "reason": self.reason,
            "event_id": self.event_id,
            "at": format_rfc3339(self.at),
        }


def _reason(s: Step, predicate: str) -> str:
    m = s.move
    if m.action == ASSERT:
        base = f"promoted from note {m.event.id}" if m.promoted else "stated"
        return base
    if m.action == RETRACT:
        return "retracted" + (f" (caused by {m.event.caused_by})" if m.event.caused_by else "")
    if m.action == CLEAR:
        return "retracted with every value of the pair"
    if m.action == EXCLUDE:
        return f"withdrawn by exclusion: {m.via} excludes {predicate} (the statement {m.via} {m.value!r})"
    return f"withdrawn by replaces of {m.event.predicate} event {m.event.id}"


def _replaced_text(h: Held, predicate: str, timeline: Timeline) -> str:
    """``; replaced …``: own values by value, another pair's with its predicate and the rule."""
    parts = []
    for r in h.replaced:
        if not r.pair or r.pair == predicate:
            parts.append(repr(r.value))
        elif timeline.excludes_at(predicate, r.pair, h.event.observed_at):
            parts.append(f"{r.pair}: {r.value!r} (withdrawn by exclusion: {predicate} excludes {r.pair})")
        else:
            parts.append(f"{r.pair}: {r.value!r} (withdrawn by its replaces)")
    return "; replaced " + ", ".join(parts) if parts else ""


def value_reasons(steps: list[Step], predicate: str, at: int, timeline: Timeline) -> list[ValueReason]:
    """For every value the pair ever held up to ``at``: the move that last decided it."""
    last: dict[str, ValueReason] = {}
    base: dict[str, str] = {}  # a held value's reason before its ``replaced``
    for s in steps:
        m = s.move
        if m.at > at:
            break
        if m.action == CROSS:
            for h in s.after:
                if h.event.id == m.credit:
                    k = value_key(h.value)
                    last[k] = replace(last[k], reason=base[k] + _replaced_text(h, predicate, timeline))
            continue
        if m.action == PROMOTED_OUT:
            promo = timeline.promotion(m.event.id)
            rec = timeline.record(promo[2]) if promo else None
            plan = rec.record.plan if rec else ""
            why = f"promoted to {m.via} = {m.value!r}" + (f" by plan {plan}" if plan else "")
            assert m.event.value is not None, "a note carries its words"
            last[value_key(m.event.value)] = ValueReason(m.event.value, False, why, m.event.id, m.at)
            continue
        for h in s.withdrawn:
            k = value_key(h.value)
            why = _reason(s, predicate)
            if m.action == ASSERT:
                why = f"replaced by {m.value!r} ({predicate} was single-valued then)"
            last[k] = ValueReason(h.value, False, why, m.event.id, m.at)
        if m.action == ASSERT:
            assert m.value is not None, "an assertion carries its value"
            k = m.key
            prev = last.get(k)
            reason = _reason(s, predicate)
            if prev is not None and prev.held:
                reason = "restated"
            base[k] = reason
            after = next((h for h in s.after if value_key(h.value) == k), None)
            if after is not None:
                reason += _replaced_text(after, predicate, timeline)
            last[k] = ValueReason(m.value, True, reason, m.event.id, m.at)
    return list(last.values())


@dataclass(frozen=True)
class Explanation:
    subject: str
    predicate: str
    at: int
    beliefs: list[Belief]
    reasons: list[ValueReason]
    rules: list[Rule]
    steps: list[HistoryStep]
    events: list[Event] = field(default_factory=list)


def explain(events: Iterable[Event], subject: str, predicate: str, timeline: Timeline, at: int) -> Explanation:
    evs = list(events)
    p = timeline.canonical(predicate)
    steps = list(walk(evs, subject, p, timeline))
    held: list[Held] = []
    for s in steps:
        if s.move.at > at:
            break
        held = s.after
    beliefs = beliefs_of(held, p, timeline)
    used = {s.move.event.id for s in steps}
    return Explanation(
        subject=subject,
        predicate=p,
        at=at,
        beliefs=beliefs,
        reasons=value_reasons(steps, p, at, timeline),
        rules=rules_for(p, timeline),
        steps=_steps(steps, p, timeline),
        events=[e for e in evs if e.id in used],
    )
