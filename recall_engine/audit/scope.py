"""Which pair an event belongs to, and which events a predicate's bundle must hold."""

from __future__ import annotations

from ..fold import moves
from ..records import Event
from ..text import NOTE
from ..timeline import Timeline


def target(e: Event, timeline: Timeline) -> str:
    """The pair an event belongs to: its canonical predicate, or where its note was promoted."""
    c = timeline.canonical(e.predicate)
    if c == NOTE and not e.retraction:
        promo = timeline.promotion(e.id)
        if promo is not None:
            return promo[0]
    return c


def bears_on(e: Event, predicate: str, timeline: Timeline) -> bool:
    """Whether an event belongs in a bundle scoped to ``predicate``.

    Its own history (every name that resolves to the predicate, notes promoted into
    it) and every event the fold reads for it (docs/semantics.md §3: assertions
    under predicates that exclude it, ``replaces`` naming it): decided by
    ``fold.moves`` itself, so a bundle always holds what the fold needs.
    """
    if timeline.canonical(e.predicate) == predicate or target(e, timeline) == predicate:
        return True
    return bool(moves((e,), e.subject, predicate, timeline))
