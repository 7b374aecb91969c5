"""A batch of writes held back until the end: what ``Memory.remember_many`` writes through.

``PendingStore`` wraps a store for the reads a ``remember`` makes and keeps its
appends in memory; each later read sees them as if they were stored, so every
statement of a batch is answered as one ``remember`` at a time would answer it.
At the end the batch is appended in one transaction (all of it or none).
Positions of pending events are counted on from the store's position when the
batch began; they are the batch's own and never leave it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, Event
from .storage.base import MAX_PAIR_EVENTS, Appended, PairRead, Store
from .storage.common import pair_name, refused
from .values import value_key


class PendingStore:
    """The store as it will be once the pending events are appended (the reads ``remember`` makes)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.base = store.position()
        self.pending: list[Event] = []
        self._ids: set[str] = set()
        self._by_subject: dict[str, list[Event]] = {}
        # subject -> value key -> stored names asserting it, of the pending assertions
        self._values: dict[str, dict[str, set[str]]] = {}
        self._absent: set[str] = set()  # subjects the store held no event of when the batch began

    def expect(self, subjects: Sequence[str]) -> None:
        """Learn, in one read, which of the subjects the batch will write the store holds
        nothing of: reads of those skip the store (the batch's own events are all there is)."""
        self._absent.update(self.store.absent_subjects(subjects))

    def __getattr__(self, name: str) -> Any:  # anything else reads the store as it is
        return getattr(self.store, name)

    # --- writes ---
    def append(self, events: Sequence[Event]) -> int:
        for e in events:
            if e.id in self._ids:
                continue  # the store skips an id it holds; ids stored before the batch are skipped at the end
            self._ids.add(e.id)
            self.pending.append(e)
            self._by_subject.setdefault(e.subject, []).append(e)
            if not e.retraction:
                self._values.setdefault(e.subject, {}).setdefault(value_key(e.value), set()).add(e.predicate)
        return self.position()

    def appended(self, events: Sequence[Event]) -> Appended:
        """``append``, saying what joined the batch (at the batch's own positions)."""
        before = self.position()
        self.append(events)  # held back: nothing is written before the batch ends
        return Appended(before, [(before + 1 + i, e) for i, e in enumerate(self.pending[before - self.base :])])

    # --- watermarks ---
    def position(self) -> int:
        return self.base + len(self.pending)

    def events_after(self, position: int, limit: int) -> list[tuple[int, Event]] | None:
        out: list[tuple[int, Event]] = []
        if position < self.base:
            stored = self.store.events_after(position, limit)
            if stored is None:
                return None
            out = [(p, e) for p, e in stored if p <= self.base]
        start = max(position - self.base, 0)
        out += [(self.base + 1 + i, e) for i, e in enumerate(self.pending[start:], start)]
        return out if len(out) <= limit else None

    # --- reads ---
    def _mine(self, subject: str) -> list[Event]:
        return self._by_subject.get(subject, [])

    def pair_events(self, subject: str, predicates: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        names = set(predicates)
        stored = [] if subject in self._absent else self.store.pair_events(subject, predicates, limit)
        out = stored + [e for e in self._mine(subject) if e.predicate in names]
        if len(out) > limit:
            raise refused(f"{pair_name(subject, sorted(names))} has", limit)
        return out

    def replacing_events(self, subject: str, predicates: Sequence[str]) -> list[Event]:
        names = set(predicates)
        stored = [] if subject in self._absent else self.store.replacing_events(subject, predicates)
        return stored + [e for e in self._mine(subject) if any(r.predicate in names for r in e.replaces)]

    def pair_read(
        self, subject: str, predicates: Sequence[str], replaced: Sequence[str], limit: int = MAX_PAIR_EVENTS
    ) -> PairRead:
        if subject in self._absent or subject in self._by_subject:
            # the reads above, with the pending events (the store's own would leave them out)
            return PairRead(self.pair_events(subject, predicates, limit), self.replacing_events(subject, replaced), {})
        return self.store.pair_read(subject, predicates, replaced, limit)  # nothing of it pending

    def events_by_id(self, ids: Sequence[str]) -> list[Event]:
        wanted = set(ids)
        return self.store.events_by_id(ids) + [e for e in self.pending if e.id in wanted]

    def value_predicates(self, subject: str, value_keys: Sequence[str]) -> set[str]:
        names = set() if subject in self._absent else self.store.value_predicates(subject, value_keys)
        mine = self._values.get(subject)
        if mine:
            for k in value_keys:
                names |= mine.get(k, set())
        return names

    def subject_events(self, subject: str, limit: int = 100_000) -> list[Event]:
        stored = [] if subject in self._absent else self.store.subject_events(subject, limit)
        out = stored + self._mine(subject)
        if len(out) > limit:
            raise refused(f"the subject {subject} has", limit)
        return out

    def registry_events(self) -> list[Event]:
        return self.store.registry_events() + [
            e for e in self._mine(REGISTRY_SUBJECT) if e.predicate == REGISTRY_PREDICATE
        ]

    def commit(self) -> None:
        """Append the batch in one transaction."""
        if self.pending:
            self.store.append(self.pending)


@contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cycle collector paused for the block (if it was running).

    Everything a batch builds (its pending events, folded pairs and answers) lives until
    the batch ends, so each collection while it grows only walks them again: in a batch
    of 10,000 statements that was a third of its time (benchmarks/bench_speed.py). At the
    end, what the block made joins the oldest generation at once (``gc.freeze`` then
    ``gc.unfreeze``), as objects that survived would: the collection the first allocation
    after the block would otherwise make walked all of them once more (about 5% of a
    10,000-statement ``remember_many``, docs/benchmarks.md, "Seventh round, writes").
    Cyclic garbage made meanwhile is collected by the next full collection. A program that
    froze objects itself keeps them frozen: then the collector is only started again."""
    if not gc.isenabled():
        yield  # paused by an outer batch or by the program: leave it so
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.enable()
            gc.unfreeze()
        else:
            gc.enable()


def statement_fields(statement: object, index: int) -> dict[str, Any]:
    """One statement of a batch as ``remember``'s arguments, or an error naming it."""
    from .errors import InvalidInput

    if type(statement) is dict and STATEMENT_FIELDS.issuperset(statement) and REQUIRED.issubset(statement):
        return statement  # the common case, checked at once
    if not isinstance(statement, dict):
        raise InvalidInput(f"statement {index}: a statement is an object with subject, predicate and value")
    unknown = sorted(set(statement) - STATEMENT_FIELDS)
    if unknown:
        raise InvalidInput(f"statement {index}: unknown field {unknown[0]!r}")
    missing = [k for k in ("subject", "predicate", "value") if k not in statement]
    if missing:
        raise InvalidInput(f"statement {index}: {missing[0]} is missing")
    return dict(statement)


STATEMENT_FIELDS = frozenset(
    {
        "subject",
        "predicate",
        "value",
        "at",
        "kind",
        "source",
        "confidence",
        "evidence",
        "evidence_id",
        "replaces",
        "cardinality",
        "description",
    }
)
REQUIRED = frozenset({"subject", "predicate", "value"})
