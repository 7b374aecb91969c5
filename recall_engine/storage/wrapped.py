"""A store that forwards the whole ``Store`` contract to another store.

Subclass it to change one part of the contract and keep the rest (the agents'
``AttributedStore`` adds a writer record to every append). Every method is forwarded
by name, so the wrapper is a ``Store`` to the type checker as well as at run time;
what is not part of the contract (a backend's own attributes) is forwarded too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..records import Event
from .base import MAX_PAIR_EVENTS, Appended, Hit, PairRead, Store, Touch

if TYPE_CHECKING:
    import numpy as np


class WrappedStore(Store):
    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.collection = inner.collection

    def __getattr__(self, name: str) -> Any:
        # only reached for what the contract does not name (``backend``, ...)
        if name == "inner":  # not set yet (a copy being built): never recurse
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def read_only(self) -> bool:
        return self.inner.read_only

    def append(self, events: Sequence[Event]) -> int:
        return self.inner.append(events)

    def appended(self, events: Sequence[Event]) -> Appended | None:
        # through this wrapper's append (a subclass may change what is written, as
        # AttributedStore adds its writer records); a reader then learns it from the log
        self.append(events)
        return None

    def position(self) -> int:
        return self.inner.position()

    def count(self) -> int:
        return self.inner.count()

    def touched_since(self, position: int, limit: int = 100_000) -> list[Touch]:
        return self.inner.touched_since(position, limit)

    def pair_events(self, subject: str, predicates: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        return self.inner.pair_events(subject, predicates, limit)

    def subject_events(self, subject: str, limit: int = 100_000) -> list[Event]:
        return self.inner.subject_events(subject, limit)

    def events_by_id(self, ids: Sequence[str]) -> list[Event]:
        return self.inner.events_by_id(ids)

    def replacing_events(self, subject: str, predicates: Sequence[str]) -> list[Event]:
        return self.inner.replacing_events(subject, predicates)

    def pair_read(
        self, subject: str, predicates: Sequence[str], replaced: Sequence[str], limit: int = MAX_PAIR_EVENTS
    ) -> PairRead:
        return self.inner.pair_read(subject, predicates, replaced, limit)

    def value_events(self, subject: str, value_keys: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        return self.inner.value_events(subject, value_keys, limit)

    def value_predicates(self, subject: str, value_keys: Sequence[str]) -> set[str]:
        return self.inner.value_predicates(subject, value_keys)

    def absent_subjects(self, subjects: Sequence[str]) -> set[str]:
        return self.inner.absent_subjects(subjects)

    def predicate_events(self, predicates: Sequence[str], subjects: Sequence[str] | None = None) -> Iterator[Event]:
        return self.inner.predicate_events(predicates, subjects)

    def events_after(self, position: int, limit: int) -> list[tuple[int, Event]] | None:
        return self.inner.events_after(position, limit)

    def all_events(self, after_position: int = 0) -> Iterator[Event]:
        return self.inner.all_events(after_position)

    def shared_values(self, exclude_predicates: Sequence[str] = ()) -> Iterator[tuple[str, str, list[str]]]:
        return self.inner.shared_values(exclude_predicates)

    def registry_events(self) -> list[Event]:
        return self.inner.registry_events()

    def subjects(self, prefix: str = "", limit: int = 1000) -> list[tuple[str, int]]:
        return self.inner.subjects(prefix, limit)

    def pairs(self, subject: str) -> list[tuple[str, int]]:
        return self.inner.pairs(subject)

    def predicate_counts(self) -> dict[str, int]:
        return self.inner.predicate_counts()

    def keyword_search(self, text: str, k: int, since: int | None = None, until: int | None = None) -> list[Hit]:
        return self.inner.keyword_search(text, k, since, until)

    def vector_search(
        self, vector: np.ndarray, k: int, since: int | None = None, until: int | None = None
    ) -> list[Hit]:
        return self.inner.vector_search(vector, k, since, until)
