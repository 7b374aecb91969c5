"""Each tool's description says what it does to memory and names every field of its answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recall_admin.agents.tools import TOOLS, Toolbox, agent_memory
from recall_admin.registry_sync import sync_registry
from recall_engine.memory import Memory
from recall_engine.registry_files import load_starter
from recall_engine.storage import open_backend

# one call of every tool, in an order that leaves something to read
CALLS = [
    ("remember", {"subject": "user", "predicate": "prefers_editor", "value": "vim", "at": "2026-01-01"}),
    ("recall", {"subject": "user"}),
    ("history", {"subject": "user", "predicate": "prefers_editor"}),
    ("diff", {"from": "2025-12-01", "subject": "user"}),
    ("explain", {"subject": "user", "predicate": "prefers_editor"}),
    ("predicates", {}),
    ("search", {"question": "vim"}),
    ("forget", {"subject": "user", "predicate": "prefers_editor", "all": True}),
]


@pytest.fixture
def answers(tmp_path: Path) -> dict[str, dict]:
    with open_backend(f"sqlite:///{tmp_path / 'recall.db'}") as b:
        store = b.store("memories")
        sync_registry(Memory(store), [load_starter("coding")], "ana")
        box = Toolbox(agent_memory(store, {"key": "k"}), writable=True)
        return {name: box.call(name, args) for name, args in CALLS}


def test_every_tool_is_called_once():
    assert sorted(name for name, _ in CALLS) == sorted(TOOLS)


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_the_description_names_every_field_of_the_answer(answers, name):
    description = TOOLS[name].description
    assert description.count("Answer:") == 1, description
    listed = set(re.findall(r"[a-z_]+", description.split("Answer:")[1]))
    assert set(answers[name]) - listed == set(), f"{name}: the answer's fields missing from its description"


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_the_description_says_what_the_tool_does_to_memory(name):
    tool = TOOLS[name]
    if tool.writes:
        assert "Appends" in tool.description and "Reads only" not in tool.description
    else:
        assert "Reads only." in tool.description
