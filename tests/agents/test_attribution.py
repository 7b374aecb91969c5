"""Which agent wrote an event: recorded in the same append, shown by `explain` and by the console's explain view."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from recall_admin import browse
from recall_admin.agents.attribution import describe_writer, written_by
from recall_admin.agents.tools import Toolbox, agent_memory
from recall_admin.registry_sync import sync_registry
from recall_admin.views import explain_view
from recall_engine.memory import Memory
from recall_engine.registry_files import load_starter
from recall_engine.storage import open_backend
from recall_tui.views.explain import render_explanation


def plain(renderable: object) -> str:
    console = Console(width=240, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize(
    ("writer", "words"),
    [
        ({"key": "3fa2c1d0e9b8", "namespace": "team:agent-1"}, "key 3fa2c1d0e9b8 (team:agent-1)"),
        ({"agent": "mcp-stdio", "operator": "ana"}, "mcp-stdio (ana)"),
        ({"agent": "mcp-stdio"}, "mcp-stdio"),
        ({"other": "x"}, "other=x"),
    ],
)
def test_describe_writer(writer, words):
    assert describe_writer(writer) == words


def test_the_console_and_explain_show_the_key_that_wrote_each_event(tmp_path: Path):
    with open_backend(f"sqlite:///{tmp_path / 'recall.db'}") as b:
        store = b.store("team.agent-1")
        operator = Memory(store)
        sync_registry(operator, [load_starter("coding")], "ana")
        operator.remember("user", "prefers_editor", "vim", at=1_000_000_000)  # the operator's own statement
        agent = Toolbox(agent_memory(store, {"key": "3fa2c1d0e9b8", "namespace": "team:agent-1"}), writable=True)
        written = agent.call("remember", {"subject": "user", "predicate": "prefers_editor", "value": "zed"})

        agent_event = written["stored"]["event_id"]
        answer = browse.explain_answer(operator, "user", "prefers_editor")
        assert answer.writers == {agent_event: {"key": "3fa2c1d0e9b8", "namespace": "team:agent-1"}}
        by_id = {e["id"]: e for e in explain_view(operator, "user", "prefers_editor")["events"]}
        assert by_id[agent_event]["written_by"] == {"key": "3fa2c1d0e9b8", "namespace": "team:agent-1"}
        assert [e for e in by_id.values() if "written_by" not in e] != []  # the operator's event names nobody

        rows = [line for line in plain(render_explanation(answer)).splitlines() if "user_stated" in line]
        assert len(rows) == 2
        assert [("key 3fa2c1d0e9b8 (team:agent-1)" in r, "zed" in r) for r in rows] == [(False, False), (True, True)]


def test_a_writer_named_with_control_characters_reaches_the_screen_escaped(tmp_path: Path):
    with open_backend(f"sqlite:///{tmp_path / 'recall.db'}") as b:
        store = b.store("memories")
        sync_registry(Memory(store), [load_starter("coding")], "ana")
        m = agent_memory(store, {"agent": "mcp-stdio", "operator": "ana\x1b[31m"})
        m.remember("user", "prefers_editor", "vim")
        answer = browse.explain_answer(Memory(store), "user", "prefers_editor")
        assert list(written_by(store, [e.id for e in answer.explanation.events]).values()) == [
            {"agent": "mcp-stdio", "operator": "ana\x1b[31m"}
        ]
        text = plain(render_explanation(answer))
        assert "\x1b" not in text and "mcp-stdio (ana\\x1b[31m)" in text
