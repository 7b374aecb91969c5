from __future__ import annotations

import pytest

from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord

NOW = parse_instant("2026-11-30T12:00:00Z")

DEFS = [
    Definition("prefers_editor", "single", "string", "The editor someone prefers"),
    Definition("uses_technology", "multi", "string"),
    Definition("likes", "multi", "string", excludes=("dislikes",)),
    Definition("dislikes", "multi", "string", excludes=("likes",)),
    Definition("goal", "multi", "string"),
    Definition("did", "multi", "string", historical=True),
    Definition("deal_value", "single", "number"),
    Definition("budget_confirmed", "single", "boolean"),
    Definition("deal_stage", "single", "enum", allowed=("lead", "qualified", "won", "lost")),
    Definition("close_date", "single", "date"),
    Definition("works_at", "single", "ref"),
]


def declare(memory: Memory, defs=DEFS, *, open_vocabulary: bool = False) -> None:
    recs = [RegistryRecord(op="declare", name=d.name, definition=d, operator="test") for d in defs]
    if open_vocabulary:
        recs.append(RegistryRecord(op="vocabulary", name="", open=True))
    memory.append_records(recs)


@pytest.fixture
def clock():
    class Clock:
        t = NOW

        def __call__(self) -> int:
            self.t += 1000
            return self.t

    return Clock()


@pytest.fixture
def memory(store, clock) -> Memory:
    m = Memory(store, now=clock)
    clock.t = parse_instant("2026-01-01")
    declare(m)
    clock.t = NOW
    return m
