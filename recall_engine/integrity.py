"""Stored events that cannot be read, listed so that no bad record hides (docs/records.md, "Bad records").

The log is append-only, so a bad event (written by an older release, or behind
the engine's back) cannot be repaired; it must not make the collection
unreadable either. The registry reads without the records that do not decode
(``readable_registry``), a statement that does not decode refuses only the reads
of its own subject, and ``bad_events`` lists every such event with its position
and the reason, for ``recall-admin verify``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import IncompleteHistory, InvalidEvent, RecallError
from .records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, Event, check_id
from .registry import decode_record

_ALL = 10**9


@dataclass(frozen=True)
class BadEvent:
    """One stored event a read cannot use: where it is, and why."""

    event_id: str
    subject: str
    reason: str
    position: int | None = None  # None when the store did not say

    def to_json(self) -> dict[str, Any]:
        return {"position": self.position, "event_id": self.event_id, "subject": self.subject, "reason": self.reason}


def readable_registry(events: Iterable[Event]) -> tuple[list[Event], list[BadEvent]]:
    """The registry events whose records decode, and the others as BadEvents.

    A record that does not decode is left out of the registry rather than
    refusing every read of the collection.
    """
    good: list[Event] = []
    bad: list[BadEvent] = []
    for e in events:
        if e.subject == REGISTRY_SUBJECT and e.predicate == REGISTRY_PREDICATE and not e.retraction:
            try:
                decode_record(e)
            except RecallError as err:
                bad.append(BadEvent(e.id, e.subject, err.message))
                continue
        good.append(e)
    return good, bad


def _from_error(err: InvalidEvent, subject: str) -> BadEvent:
    return BadEvent(
        event_id=str(getattr(err, "event_id", "") or ""),
        subject=subject,
        reason=err.message,
        position=getattr(err, "position", None),
    )


def bad_events(store: Any) -> list[BadEvent]:
    """Every stored event of a collection that a read cannot use, subject by subject.

    Per subject, the store's decoder stops at the first row it cannot decode, so a
    subject with several bad rows shows the first; every other subject is read in full.
    """
    out: list[BadEvent] = []
    try:
        registry = store.registry_events()
    except InvalidEvent as err:
        out.append(_from_error(err, REGISTRY_SUBJECT))
    else:
        out.extend(readable_registry(registry)[1])
    for subject, _count in store.subjects(limit=_ALL):
        if subject == REGISTRY_SUBJECT:
            continue
        try:
            events = store.subject_events(subject, limit=_ALL)
        except InvalidEvent as err:
            out.append(_from_error(err, subject))
            continue
        except IncompleteHistory:  # pragma: no cover - the limit above is larger than any subject
            continue
        for e in events:
            try:
                check_id(e)
            except InvalidEvent as err:
                out.append(BadEvent(e.id, subject, err.message))
    return out
