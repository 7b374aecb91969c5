"""Which agent wrote an event: one reserved record per written event, in the same append.

A store used by an agent is wrapped in ``AttributedStore``: every batch it appends
carries, in the same transaction, one ``recall:agents / written_by`` event per event,
whose value is the written event's id and whose evidence names the writer (the key id
and namespace, or the local MCP server and its operator). Events are immutable, so the
record cannot be overwritten; agents cannot write ``recall:`` subjects, so they cannot
forge one. ``written_by`` looks records up by value (an index read). See docs/agents.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from recall_engine.records import WRITER_PREDICATE, WRITER_SUBJECT, Event, make_event
from recall_engine.storage.base import MAX_PAIR_EVENTS, Appended, Store
from recall_engine.storage.wrapped import WrappedStore
from recall_engine.values import value_key


def writer_evidence(writer: dict[str, str]) -> str:
    """How a writer record names its writer: compact JSON, keys sorted."""
    return json.dumps(writer, sort_keys=True, separators=(",", ":"))


def writer_record(event: Event, evidence: str) -> Event:
    """The record that ``evidence`` (``writer_evidence``) wrote ``event``."""
    return make_event(
        WRITER_SUBJECT, WRITER_PREDICATE, event.id, event.observed_at, source="tool_result", evidence=evidence
    )


class AttributedStore(WrappedStore):
    """A store whose appends record their writer; everything else is the wrapped store's."""

    def __init__(self, store: Store, writer: dict[str, str]) -> None:
        super().__init__(store)
        self.writer = dict(writer)
        self._evidence = writer_evidence(self.writer)  # the same for every record: rendered once

    def append(self, events: Sequence[Event]) -> int:
        return self.inner.append(self._attributed(events))

    def appended(self, events: Sequence[Event]) -> Appended | None:
        # what was written, writer records included, as a read of the log gives it back:
        # the engine's caches take it as it is instead of reading it back (Memory._write)
        return self.inner.appended(self._attributed(events))

    def _attributed(self, events: Sequence[Event]) -> list[Event]:
        events = list(events)
        return [*events, *(writer_record(e, self._evidence) for e in events)]


def describe_writer(writer: dict[str, Any]) -> str:
    """A writer in a few words, for human renderings: ``key 3fa2c1d0e9b8 (team:agent-1)``.

    The record's text came from the store, so whoever shows it passes it through
    ``display.visible`` (the console's cells do)."""
    if writer.get("key"):
        return f"key {writer['key']}" + (f" ({writer['namespace']})" if writer.get("namespace") else "")
    if writer.get("agent"):
        return f"{writer['agent']}" + (f" ({writer['operator']})" if writer.get("operator") else "")
    return ", ".join(f"{k}={v}" for k, v in sorted(writer.items()))


def written_by(store: Store, event_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The writer of each of these events that an agent wrote (others are left out)."""
    ids = sorted(set(event_ids))
    out: dict[str, dict[str, Any]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        for e in store.value_events(WRITER_SUBJECT, [value_key(x) for x in chunk], limit=MAX_PAIR_EVENTS):
            if e.predicate != WRITER_PREDICATE or e.retraction or not isinstance(e.value, str):
                continue
            try:
                writer = json.loads(e.evidence)
            except ValueError:
                continue
            if isinstance(writer, dict):
                out.setdefault(e.value, writer)
    return out
