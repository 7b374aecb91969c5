"""A store as it stood at an instant of the second time axis: only the events its
collection had recorded by ``known_at`` (docs/history-diff-explain.md, "Two time axes").

``KnownAt`` wraps any ``Store`` and keeps, from every event read, those whose recorded
instant (set by the store at append, docs/storage.md) is at or before ``known_at``.
Recorded instants grow with positions, so this is exactly the log truncated to its
appends up to ``known_at``; the reads are the same indexed reads as a plain read, and
the filter is a comparison per event. Browsing counts (``subjects``, ``pairs``,
``predicate_counts``) and watermarks are the store's own: they describe the log, not an
answer. The view is read-only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from ..errors import ReadOnlyStore
from ..records import Event
from .base import MAX_PAIR_EVENTS, Hit, PairRead, Store, Touch

if TYPE_CHECKING:
    import numpy as np


class KnownAt(Store):
    """``store`` with only the events recorded at or before ``known_at`` (nanoseconds)."""

    def __init__(self, store: Store, known_at: int) -> None:
        self.store = store
        self.known_at = known_at
        self.collection = store.collection

    @property
    def read_only(self) -> bool:
        return True

    def _known(self, events: Iterable[Event]) -> list[Event]:
        t = self.known_at
        return [e for e in events if e.recorded_at is None or e.recorded_at <= t]

    def _stream(self, events: Iterable[Event]) -> Iterator[Event]:
        t = self.known_at
        return (e for e in events if e.recorded_at is None or e.recorded_at <= t)

    def append(self, events: Sequence[Event]) -> int:
        raise ReadOnlyStore("a read as known at an earlier instant cannot write")

    def position(self) -> int:
        return self.store.position()

    def count(self) -> int:
        return self.store.count()

    def touched_since(self, position: int, limit: int = 100_000) -> list[Touch]:
        return self.store.touched_since(position, limit)

    def pair_events(self, subject: str, predicates: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        return self._known(self.store.pair_events(subject, predicates, limit))

    def subject_events(self, subject: str, limit: int = 100_000) -> list[Event]:
        return self._known(self.store.subject_events(subject, limit))

    def events_by_id(self, ids: Sequence[str]) -> list[Event]:
        return self._known(self.store.events_by_id(ids))

    def replacing_events(self, subject: str, predicates: Sequence[str]) -> list[Event]:
        return self._known(self.store.replacing_events(subject, predicates))

    def pair_read(
        self, subject: str, predicates: Sequence[str], replaced: Sequence[str], limit: int = MAX_PAIR_EVENTS
    ) -> PairRead:
        got = self.store.pair_read(subject, predicates, replaced, limit)
        events = self._known(got.events)
        keys = {e.key for e in events}
        # the names are today's, as ``value_predicates`` gives them here
        names = {k: n for k, n in got.value_names.items() if k in keys}
        return PairRead(events, self._known(got.replacing), names)

    def value_events(self, subject: str, value_keys: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        return self._known(self.store.value_events(subject, value_keys, limit))

    def value_predicates(self, subject: str, value_keys: Sequence[str]) -> set[str]:
        # the store's index-only read: today's names, a superset of those known then.
        # Its one caller (Memory, for ``elsewhere``) reads each named pair through this
        # view, where a name with nothing recorded by then holds nothing.
        return self.store.value_predicates(subject, value_keys)

    def predicate_events(self, predicates: Sequence[str], subjects: Sequence[str] | None = None) -> Iterator[Event]:
        return self._stream(self.store.predicate_events(predicates, subjects))

    def events_after(self, position: int, limit: int) -> list[tuple[int, Event]] | None:
        news = self.store.events_after(position, limit)
        t = self.known_at
        return None if news is None else [(i, e) for i, e in news if e.recorded_at is None or e.recorded_at <= t]

    def all_events(self, after_position: int = 0) -> Iterator[Event]:
        return self._stream(self.store.all_events(after_position))

    def shared_values(self, exclude_predicates: Sequence[str] = ()) -> Iterator[tuple[str, str, list[str]]]:
        return self.store.shared_values(exclude_predicates)

    def registry_events(self) -> list[Event]:
        return self._known(self.store.registry_events())

    def subjects(self, prefix: str = "", limit: int = 1000) -> list[tuple[str, int]]:
        return self.store.subjects(prefix, limit)

    def pairs(self, subject: str) -> list[tuple[str, int]]:
        return self.store.pairs(subject)

    def predicate_counts(self) -> dict[str, int]:
        return self.store.predicate_counts()

    # search ranks the store's hits, then keeps the known ones: a page may come back
    # shorter than ``k`` when later events ranked first
    def keyword_search(self, text: str, k: int, since: int | None = None, until: int | None = None) -> list[Hit]:
        return [h for h in self.store.keyword_search(text, k, since, until) if self._known([h.event])]

    def vector_search(
        self, vector: np.ndarray, k: int, since: int | None = None, until: int | None = None
    ) -> list[Hit]:
        return [h for h in self.store.vector_search(vector, k, since, until) if self._known([h.event])]
