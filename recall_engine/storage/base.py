"""The storage contract: one collection's append-only event log.

Every backend (SQLite, PostgreSQL) implements ``Store`` and ``Backend`` and
passes the same conformance suite (tests/storage). A store knows events, log
positions and indexes; it knows nothing of folds or registries.

Rules every implementation keeps:
- ``append`` is one transaction: all of the batch lands, or none of it.
  An event whose id is already stored is skipped (same content, same id).
- Listings are complete or refused: read ``limit + 1`` rows and raise
  ``IncompleteHistory`` naming the limit when more exist; never truncate.
- A row that does not decode raises ``InvalidEvent`` naming the event id;
  the whole read fails, never a partial answer.
- Positions only grow, in append order; ``position()`` is the highest one
  (0 for an empty collection) and serves as the watermark.
- The database itself refuses UPDATE and DELETE of events.
- Collection names never reach SQL text; they are parameters.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InvalidInput

if TYPE_CHECKING:  # numpy costs ~300 ms to import; only the search path needs it
    import numpy as np
from ..records import Event

MAX_PAIR_EVENTS = 10_000
COLLECTION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


def check_collection(name: str) -> str:
    if not isinstance(name, str) or not COLLECTION_RE.match(name):
        raise InvalidInput(
            f"collection name must be 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit; got {name!r}"
        )
    return name


@dataclass(frozen=True, slots=True)
class Hit:
    """A search hit: the event and its score."""

    event: Event
    score: float


@dataclass(frozen=True, slots=True)
class Touch:
    """What an appended event touched, for stale-plan detection."""

    position: int
    subject: str
    predicate: str
    value_key: str


@dataclass(frozen=True, slots=True)
class Appended:
    """What one append wrote: the collection's position just before it (read under the
    write lock) and each new event with its position. A writer whose view of the log
    stood at ``before`` knows the log now without reading it back."""

    before: int
    placed: list[tuple[int, Event]]


@dataclass(frozen=True, slots=True)
class PairRead:
    """What a pair's first read asks of the store (``Store.pair_read``)."""

    events: list[Event]
    replacing: list[Event]
    # value key -> stored names asserting it (``value_predicates`` of that key alone),
    # for those of ``events``' value keys the backend read with them (maybe none)
    value_names: dict[str, set[str]]


class Store(ABC):
    """One collection of one backend."""

    collection: str

    @property
    @abstractmethod
    def read_only(self) -> bool:
        """Writes are refused: the store was opened read-only."""

    # --- writes ---
    @abstractmethod
    def append(self, events: Sequence[Event]) -> int:
        """Append in one transaction; skip ids already stored; return the new position."""

    def appended(self, events: Sequence[Event]) -> Appended | None:
        """``append``, telling what it wrote when the backend knows it cheaply; None when
        it does not (then read the log to learn it)."""
        self.append(events)
        return None

    # --- watermarks ---
    @abstractmethod
    def position(self) -> int: ...

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def touched_since(self, position: int, limit: int = 100_000) -> list[Touch]:
        """(subject, predicate, value key) of every event appended after ``position``."""

    @abstractmethod
    def events_after(self, position: int, limit: int) -> list[tuple[int, Event]] | None:
        """(position, event) of every event appended after ``position``, in position order;
        None when there are more than ``limit`` (a reader that keeps folded pairs then starts
        over instead of catching up)."""

    # --- complete reads (limit + 1, refused past limit) ---
    @abstractmethod
    def pair_events(self, subject: str, predicates: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        """Every event of ``subject`` stored under any of ``predicates``."""

    @abstractmethod
    def subject_events(self, subject: str, limit: int = 100_000) -> list[Event]:
        """Every event of a subject (profile reads)."""

    @abstractmethod
    def events_by_id(self, ids: Sequence[str]) -> list[Event]:
        """The stored events with these ids (unknown ids are left out)."""

    @abstractmethod
    def replacing_events(self, subject: str, predicates: Sequence[str]) -> list[Event]:
        """Events of ``subject`` whose ``replaces`` names any of ``predicates``."""

    @abstractmethod
    def value_events(self, subject: str, value_keys: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        """Every event of ``subject`` whose value has one of these keys (any predicate)."""

    def pair_read(
        self, subject: str, predicates: Sequence[str], replaced: Sequence[str], limit: int = MAX_PAIR_EVENTS
    ) -> PairRead:
        """``pair_events(subject, predicates, limit)`` and ``replacing_events(subject, replaced)``,
        refused as those are (in that order), with the value names of some of the events' value
        keys: a backend that reads them all in one statement spares a first read its round
        trips (the pair, the events replacing it, then ``elsewhere``'s names)."""
        return PairRead(self.pair_events(subject, predicates, limit), self.replacing_events(subject, replaced), {})

    def value_predicates(self, subject: str, value_keys: Sequence[str]) -> set[str]:
        """Stored names under which ``subject`` asserted any of these values (an index-only read)."""
        return {e.predicate for e in self.value_events(subject, value_keys) if not e.retraction}

    def absent_subjects(self, subjects: Sequence[str]) -> set[str]:
        """Those of ``subjects`` the collection holds no event of (a batch of writes then
        skips reading them; recall_engine.batch)."""
        return {s for s in set(subjects) if not self.pairs(s)}

    # --- streams for previews, conflicts, exports (ordered, bounded memory) ---
    @abstractmethod
    def predicate_events(self, predicates: Sequence[str], subjects: Sequence[str] | None = None) -> Iterator[Event]:
        """Every event stored under these names (optionally only these subjects), grouped by subject."""

    @abstractmethod
    def all_events(self, after_position: int = 0) -> Iterator[Event]:
        """Every event in position order."""

    @abstractmethod
    def shared_values(self, exclude_predicates: Sequence[str] = ()) -> Iterator[tuple[str, str, list[str]]]:
        """(subject, value key, stored predicate names) where one subject asserted one value under
        two or more stored names, ignoring ``exclude_predicates``: conflict candidates, by index."""

    # --- registry ---
    @abstractmethod
    def registry_events(self) -> list[Event]: ...

    # --- browsing ---
    @abstractmethod
    def subjects(self, prefix: str = "", limit: int = 1000) -> list[tuple[str, int]]:
        """Subjects with their event counts, most events first."""

    @abstractmethod
    def pairs(self, subject: str) -> list[tuple[str, int]]:
        """Stored predicate names of a subject with their event counts."""

    @abstractmethod
    def predicate_counts(self) -> dict[str, int]:
        """Events per stored predicate name."""

    # --- search ---
    @abstractmethod
    def keyword_search(self, text: str, k: int, since: int | None = None, until: int | None = None) -> list[Hit]: ...

    @abstractmethod
    def vector_search(
        self, vector: np.ndarray, k: int, since: int | None = None, until: int | None = None
    ) -> list[Hit]: ...


class Backend(ABC):
    url_for_display: str

    @abstractmethod
    def store(self, collection: str, *, create: bool = True) -> Store: ...

    @abstractmethod
    def collections(self) -> list[tuple[str, int]]:
        """Every collection with its event count."""

    @abstractmethod
    def close(self) -> None: ...

    @contextmanager
    def group(self, collections: Sequence[str] = ()) -> Iterator[None]:
        """Group commit: the appends this thread makes inside share one transaction,
        committed when the block ends (and none of them if it raises). Each append is
        still all-or-nothing on its own: one that fails leaves the others in the group.
        Reads inside see the group's appends. ``collections`` names those the group will
        append to, so a backend that locks each one takes their locks up front, always in
        one order (two groups then never wait on each other in a cycle). A backend that
        cannot group commits each append as it comes, which callers cannot tell apart
        except by speed."""
        yield

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
