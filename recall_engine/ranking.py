"""Pure ranking helpers for semantic search (docs/formats.md, "Search").

``fuse_text_first`` / ``fuse_rrf`` merge a vector and a lexical ranking of
event ids (``fuse_hits`` picks one); ``rank_pairs`` groups a ranked list of
events into (subject, predicate) pairs with the pair's rank and the rank of
the first assertion of each value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from .records import RESERVED_PAIRS, Event
from .text import simple_lower

RRF_CONSTANT = 60


def fuse_text_first(lexical: Sequence[str], vector: Sequence[str], k: int) -> list[str]:
    """All lexical ids in order, then the vector ids not already present; at most k.

    The rule for the built-in lexical embedder, whose vectors are only hashed
    words: the vector hits the text index lacks are mostly events written since
    it last caught up. An id repeated within a list counts once.
    """
    seen: dict[str, None] = {}
    for ids in (lexical, vector):
        for i in ids:
            seen.setdefault(i)
    return list(seen)[: max(k, 0)]


def fuse_rrf(vector: Sequence[str], lexical: Sequence[str], k: int, constant: int = RRF_CONSTANT) -> list[str]:
    """Reciprocal-rank fusion, at most k ids.

    Each id scores the sum of 1 / (constant + rank + 1) over the vector list,
    then the lexical list (rank from 0; every occurrence counts). Sorted by
    score descending, stably: ties keep first-seen order, vector list first.
    """
    score: dict[str, float] = {}
    for ids in (vector, lexical):
        for rank, i in enumerate(ids):
            score[i] = score.get(i, 0.0) + 1 / (constant + rank + 1)
    order = sorted(score, key=lambda i: -score[i])  # sorted() is stable; dicts keep first-seen order
    return order[: max(k, 0)]


def fuse_hits(vector: Sequence[str], lexical: Sequence[str], k: int, *, text_first: bool) -> list[str]:
    """``fuse_text_first`` for the built-in lexical embedder, ``fuse_rrf`` for any other."""
    return fuse_text_first(lexical, vector, k) if text_first else fuse_rrf(vector, lexical, k)


@dataclass(frozen=True, slots=True)
class PairRank:
    """One (normalized subject, canonical predicate) pair a search reached.

    ``rank`` is the position of the pair's first event in the ranked list;
    ``value_ranks`` maps each value key to the position of the first assertion
    of it (retractions rank the pair but no value).
    """

    subject: str
    predicate: str
    rank: int
    value_ranks: dict[str, int] = field(default_factory=dict)


def rank_pairs(
    events: Iterable[Event],
    canonical: Callable[[str], str] = lambda name: name,
    *,
    include_reserved: bool = False,
) -> list[PairRank]:
    """Group ranked events into pairs in order of first appearance (Go ``rankCandidates``).

    Events of reserved pairs (the registry's and the review log's) are dropped
    first unless ``include_reserved``; an event's rank is its position among
    the events kept. Predicates read as ``canonical(name)``, subjects are
    normalized; an event with an empty subject or predicate ranks nothing.
    """
    kept = [
        e for e in events if include_reserved or (simple_lower(e.subject.strip()), e.predicate) not in RESERVED_PAIRS
    ]
    index: dict[tuple[str, str], PairRank] = {}
    for rank, e in enumerate(kept):
        subject = simple_lower(e.subject.strip())
        predicate = canonical(e.predicate.strip()).strip()
        if not subject or not predicate:
            continue
        p = index.get((subject, predicate))
        if p is None:
            p = index[(subject, predicate)] = PairRank(subject, predicate, rank)
        if not e.retraction:
            p.value_ranks.setdefault(e.key, rank)
    return list(index.values())
