"""Small builders shared by the engine tests: events, registry records, answers.

Instants are written as days of 2026 (``D("09-01")``) or full RFC3339 text
(``D("2026-09-01T12:00:00Z")``); every event is built with ``make_event`` so its
id is the derived one.
"""

from __future__ import annotations

from collections.abc import Iterable

from recall_engine.fold import attach_elsewhere, fold
from recall_engine.history import history
from recall_engine.instants import NS, parse_instant
from recall_engine.records import Event, Replace, make_event
from recall_engine.registry import Definition, Promotion, RegistryRecord
from recall_engine.timeline import Timeline
from recall_engine.values import value_key

SUBJECT = "user"
NOW = parse_instant("2027-01-01")


def D(text: str) -> int:
    """An instant: '09-01' is 2026-09-01 at midnight UTC; anything else is parsed as given."""
    if len(text) == 5 and text[2] == "-":
        text = "2026-" + text
    return parse_instant(text)


def at(when: int | str) -> int:
    return when if isinstance(when, int) else D(when)


# --- statement events ---------------------------------------------------------


def say(
    predicate: str, value, when, subject: str = SUBJECT, *, replaces: Iterable[tuple[str, object]] = (), **kw
) -> Event:
    return make_event(subject, predicate, value, at(when), replaces=tuple(Replace(p, v) for p, v in replaces), **kw)


def retract(predicate: str, value, when, subject: str = SUBJECT, **kw) -> Event:
    return make_event(subject, predicate, value, at(when), retraction=True, **kw)


def retract_all(predicate: str, when, subject: str = SUBJECT, **kw) -> Event:
    return make_event(subject, predicate, None, at(when), retraction=True, **kw)


def note(text: str, when, subject: str = SUBJECT) -> Event:
    return make_event(subject, "note", text, at(when))


# --- registry records ----------------------------------------------------------


def definition(name: str, cardinality: str = "single", **kw) -> Definition:
    return Definition(name, cardinality, kw.pop("value_type", "string"), **kw)


def declare(name: str, when, cardinality: str = "single", **kw) -> Event:
    return RegistryRecord("declare", name, definition=definition(name, cardinality, **kw)).to_event(at(when))


def define(name: str, when, cardinality: str = "single", **kw) -> Event:
    return RegistryRecord("define", name, definition=definition(name, cardinality, **kw), auto=True).to_event(at(when))


def redefine(name: str, when, cardinality: str = "single", *, retroactive: bool = False, **kw) -> Event:
    return RegistryRecord(
        "redefine", name, definition=definition(name, cardinality, **kw), retroactive=retroactive
    ).to_event(at(when))


def merge(name: str, into: str, when) -> Event:
    return RegistryRecord("merge", name, into=into).to_event(at(when))


def split(name: str, when, cardinality: str = "single", **kw) -> Event:
    return RegistryRecord("split", name, definition=definition(name, cardinality, **kw)).to_event(at(when))


def promote(name: str, when, *notes: tuple[Event, object]) -> Event:
    return RegistryRecord("promote", name, notes=tuple(Promotion(e.id, e.subject, v) for e, v in notes)).to_event(
        at(when)
    )


def timeline(*records: Event) -> Timeline:
    return Timeline(records)


# --- answers ---------------------------------------------------------------------


def answer(events: Iterable[Event], predicate: str, tl: Timeline, when=NOW, subject: str = SUBJECT) -> list:
    """The values held, in answer order."""
    return [b.value for b in fold(list(events), subject, predicate, tl, at(when))]


def beliefs(events: Iterable[Event], predicate: str, tl: Timeline, when=NOW, subject: str = SUBJECT):
    return fold(list(events), subject, predicate, tl, at(when))


def profile(events: Iterable[Event], tl: Timeline, when=NOW, subject: str = SUBJECT):
    """Every typed and note pair of the subject, folded and given `elsewhere`."""
    evs = list(events)
    preds = sorted({tl.canonical(e.predicate) for e in evs if e.subject == subject} | set(tl.predicates()))
    out = []
    for p in preds:
        out.extend(fold(evs, subject, p, tl, at(when)))
    return attach_elsewhere(out)


def steps(events: Iterable[Event], predicate: str, tl: Timeline, subject: str = SUBJECT):
    return history(list(events), subject, predicate, tl)


def keys(values: Iterable) -> set[str]:
    return {value_key(v) for v in values}


def ns(seconds: float) -> int:
    return int(seconds * NS)
