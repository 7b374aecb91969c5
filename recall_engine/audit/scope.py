"""Which pair an event belongs to (a predicate's bundle holds ``fold.scope_ids``)."""

from __future__ import annotations

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
