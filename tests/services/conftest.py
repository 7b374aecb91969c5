"""Services called directly, as both front ends call them, on a real store of each backend
(the ``store`` fixture of tests/conftest.py: SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from recall_admin.governance import Stager
from recall_admin.registry_sync import sync_registry
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.registry_files import load_starter

OPERATOR = "ana"


def at(day: str) -> int:
    return parse_instant(day)


@pytest.fixture
def memory(store) -> Memory:
    m = Memory(store)
    sync_registry(m, [load_starter("coding"), load_starter("personal-assistant")], OPERATOR)
    return m


@pytest.fixture
def open_memory(store) -> Memory:
    m = Memory(store)
    sync_registry(m, [load_starter("coding"), load_starter("personal-assistant")], OPERATOR, open_vocabulary=True)
    return m


def stager(memory: Memory) -> Stager:
    return Stager(memory, "memories", OPERATOR)


def values(memory: Memory, subject: str, predicate: str) -> list:
    return sorted(str(b.value) for b in memory.read_pair(subject, predicate, memory.now()))
