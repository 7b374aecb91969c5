"""Review decisions: the operator's answers to the review queues, kept in the log.

A decision is a statement about ``recall:review`` / ``review_decision`` whose value
is a JSON object (docs/semantics.md, sections 1 and 6). Two kinds are written here:

- ``dismiss_conflict``: ``{kind, conflict, subject, value, predicates, held: [event ids],
  reason, operator}``. The conflict stays hidden while the beliefs it saw (``held``)
  are the ones held now; a later change to either belief reopens it.
- ``undismiss_conflict``: ``{kind, conflict, reason, operator}``: the conflict's
  latest dismissal no longer hides it.
- ``never_merge``: ``{kind, names: [a, b], reason, operator}``. The pair of predicate
  names is never suggested for a merge again.

Decisions are never folded as beliefs; they are read here, as a log, oldest first.
A decision that does not decode is skipped (it cannot change any answer).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recall_engine.memory import Memory
from recall_engine.records import REVIEW_PREDICATE, REVIEW_SUBJECT, Event, make_event

DISMISS = "dismiss_conflict"
UNDISMISS = "undismiss_conflict"
NEVER_MERGE = "never_merge"
MAX_DECISIONS = 100_000


@dataclass(frozen=True)
class Decision:
    event_id: str
    at: int
    kind: str
    body: dict[str, Any]


def decisions(memory: Memory) -> list[Decision]:
    """Every review decision of the collection, oldest first."""
    events = memory.store.pair_events(REVIEW_SUBJECT, [REVIEW_PREDICATE], limit=MAX_DECISIONS)
    out = []
    for e in sorted(events, key=lambda e: (e.observed_at, e.id)):
        if e.retraction or not isinstance(e.value, str):
            continue
        try:
            body = json.loads(e.value)
        except ValueError:
            continue
        if isinstance(body, dict) and isinstance(body.get("kind"), str):
            out.append(Decision(e.id, e.observed_at, body["kind"], body))
    return out


def decision_events(memory: Memory, bodies: Sequence[dict[str, Any]]) -> list[Event]:
    """Review decision events for these bodies, at instants after every earlier decision."""
    events = memory.store.pair_events(REVIEW_SUBJECT, [REVIEW_PREDICATE], limit=MAX_DECISIONS)
    t = max([memory.now(), *(e.observed_at + 1 for e in events)])
    out = []
    for i, body in enumerate(bodies):
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        out.append(make_event(REVIEW_SUBJECT, REVIEW_PREDICATE, text, t + i, source="operator"))
    return out


def record(memory: Memory, bodies: Sequence[dict[str, Any]]) -> list[Event]:
    """Append review decisions in one transaction."""
    events = decision_events(memory, bodies)
    if events:
        memory.store.append(events)
    return events
