"""Admission of whole events from outside: JSONL imports and audit bundles (docs/records.md, "Admission").

``remember`` checks a statement while it builds it. An event that arrives already
built (a line of an import, an event of a bundle) gets the same checks here, in
order, before anything is written: its id matches its content, its instant lies
in range, a reserved subject or predicate holds only the engine's own records, a
registry record decodes and leaves a registry that reads, and a statement names a
predicate of the registry (the store's, with the records admitted before it) and
carries a value of that predicate's storage class; given ``now``, no event is dated
in the future. The first failure is reported
with where the event came from ("line 7"), and the caller writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InvalidInput, RecallError
from .instants import MINUTE_NS, check_instant, format_rfc3339
from .records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, RESERVED_PAIRS, Event, check_id
from .registry import decode_record
from .text import RESERVED_PREDICATES
from .timeline import Timeline
from .values import STORAGE_CLASS, describe, storage_class_of


class Admission:
    """Checks a stream of incoming events against a store's registry log."""

    def __init__(self, registry_log: Iterable[Event] = (), *, now: int | None = None) -> None:
        self._log = list(registry_log)
        self._latest = None if now is None else now + MINUTE_NS  # as remember allows
        self._timeline: Timeline | None = None
        self._unbuilt = ""  # where the last registry record not yet folded came from
        # the predicates of statements admitted under the registry as it stands, with the
        # storage class of their values: the checks they passed, kept (an import admits
        # thousands of statements of a few predicates); emptied by every registry record
        self._classes: dict[str, str] = {}

    def admit(self, e: Event, where: str, *, id_checked: bool = False) -> None:
        """Raise InvalidInput "<where>: <problem>" for an event ``remember`` would not write.
        ``id_checked``: the caller has already run ``check_id`` on it (a JSONL import)."""
        try:
            self._check(e, where, id_checked)
        except RecallError as err:
            raise InvalidInput(f"{where}: {err.message}") from None

    def admit_all(self, events: Iterable[tuple[str, Event]]) -> int:
        """Admit (where, event) pairs; the number admitted."""
        n = 0
        for where, e in events:
            self.admit(e, where)
            n += 1
        self.timeline()  # the records of the tail must read too
        return n

    def timeline(self) -> Timeline:
        if self._timeline is None:
            try:
                self._timeline = Timeline(self._log)
            except RecallError as err:
                raise InvalidInput(f"{self._unbuilt or 'the registry'}: {err.message}") from None
            self._unbuilt = ""
        return self._timeline

    def _check(self, e: Event, where: str, id_checked: bool = False) -> None:
        if not id_checked:
            check_id(e)
        check_instant(e.observed_at)
        if self._latest is not None and e.observed_at > self._latest:
            raise InvalidInput(f"observed_at {format_rfc3339(e.observed_at)} is in the future")
        kept = self._classes.get(e.predicate)
        # every reserved subject starts "recall:" (the pairs below included)
        if kept is not None and not e.subject.startswith("recall:"):
            if e.value is None or storage_class_of(e.value) == kept:
                return
        pair = (e.subject, e.predicate)
        if pair == (REGISTRY_SUBJECT, REGISTRY_PREDICATE):
            if not e.retraction:
                decode_record(e)
            self._log.append(e)
            self._timeline = None
            self._classes = {}
            self._unbuilt = where
            return
        if pair in RESERVED_PAIRS:
            return
        if e.subject.startswith("recall:"):
            raise InvalidInput(f"subject {e.subject!r} is reserved for the engine's own records")
        if e.predicate in RESERVED_PREDICATES:
            raise InvalidInput(f"predicate {e.predicate!r} is reserved for the engine's own records")
        tl = self.timeline()
        p = tl.canonical(e.predicate)
        d = tl.definition(p)
        if d is None:
            raise InvalidInput(
                f"predicate {e.predicate!r} is not in the registry (the store's, with the registry records before it)"
            )
        if e.value is not None and storage_class_of(e.value) != d.storage_class:
            raise InvalidInput(
                f"{p} stores {STORAGE_CLASS.get(d.value_type, 'string')} values, got {describe(e.value)}"
            )
        self._classes[e.predicate] = d.storage_class
