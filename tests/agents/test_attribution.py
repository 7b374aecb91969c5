"""Which agent wrote an event: recorded in the same append, shown by `explain` and by the console's explain view."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from recall_admin import browse
from recall_admin.agents.attribution import describe_writer, written_by
from recall_admin.agents.tools import Toolbox, agent_memory
from recall_admin.cli import app
from recall_admin.registry_sync import sync_registry
from recall_admin.views import explain_view
from recall_engine.memory import Memory
from recall_engine.records import WRITER_SUBJECT
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


# --- the writer records and the search indexes ----------------------------------------


def _verify(url: str) -> tuple[int, list[str]]:
    r = CliRunner().invoke(app, ["--store", url, "--json", "verify"])
    doc = json.loads(r.stdout)
    return r.exit_code, [p["reason"] for p in doc["data"]["problems"]] if doc["ok"] else [doc["error"]["message"]]


def _agent_writes(url: str) -> list[str]:
    """An operator's statement and three agent writes; the ids of the agent's statements."""
    with open_backend(url) as b:
        store = b.store("memories")
        operator = Memory(store)
        sync_registry(operator, [load_starter("coding")], "ana")
        operator.remember("user", "prefers_editor", "vim", at=1_000_000_000)
        agent = Toolbox(agent_memory(store, {"key": "3fa2c1d0e9b8", "namespace": "team:agent-1"}), writable=True)
        ids = []
        for value in ("zed", "helix"):
            ids.append(agent.call("remember", {"subject": "user", "predicate": "prefers_editor", "value": value}))
        ids.append(agent.call("remember", {"subject": "user", "predicate": "uses_technology", "value": "Redis"}))
        return [a["stored"]["event_id"] for a in ids]


def test_verify_is_clean_after_agent_writes_and_search_finds_them(backend_url: str):
    agent_ids = _agent_writes(backend_url)
    assert _verify(backend_url) == (0, [])
    with open_backend(backend_url) as b:
        store = b.store("memories")
        assert set(written_by(store, agent_ids)) == set(agent_ids)  # the records are in the log
        hits = Toolbox(Memory(store), writable=False).call("search", {"question": "Redis"})["beliefs"]
        assert [(h["predicate"], h["value"]) for h in hits][:1] == [("uses_technology", "Redis")]


def test_sqlite_indexes_leave_the_writer_records_out(sqlite_url: str):
    """Nothing searches who wrote an event: its record gets no text or vector row, and
    verify expects exactly that (docs/storage.md, "Search indexes")."""
    _agent_writes(sqlite_url)
    conn = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    cid = conn.execute("SELECT id FROM collections WHERE name = 'memories'").fetchone()[0]
    writers = {r[0] for r in conn.execute("SELECT position FROM events WHERE subject = ?", (WRITER_SUBJECT,))}
    others = {r[0] for r in conn.execute("SELECT position FROM events WHERE subject <> ?", (WRITER_SUBJECT,))}
    assert len(writers) == 3
    assert {r[0] for r in conn.execute(f"SELECT position FROM event_vectors_{cid}")} == others
    assert {r[0] for r in conn.execute(f"SELECT rowid FROM event_text_{cid}")} == others

    # an index row smuggled in for a position no event holds is still reported
    conn.execute(f"INSERT INTO event_text_{cid} (rowid, text) VALUES (?, 'free money')", (max(writers | others) + 50,))
    # and so is a searched event whose vector was removed (the trigger dropped first)
    conn.execute(f"DROP TRIGGER event_vectors_{cid}_no_delete")
    conn.execute(f"DELETE FROM event_vectors_{cid} WHERE position = ?", (max(others),))
    conn.close()
    assert _verify(sqlite_url) == (
        1,
        [
            f"1 row(s) of the text index (event_text_{cid}) match no event of the log",
            f"1 event(s) of the log have no row in the vector index (event_vectors_{cid})",
        ],
    )


def test_sqlite_verify_accepts_writer_records_an_earlier_release_indexed(sqlite_url: str):
    """Stores written before the records were left out hold index rows for them: each
    matches its event, so verify stands by them."""
    _agent_writes(sqlite_url)
    conn = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    cid = conn.execute("SELECT id FROM collections WHERE name = 'memories'").fetchone()[0]
    for pos, at in conn.execute("SELECT position, observed_at FROM events WHERE subject = ?", (WRITER_SUBJECT,)):
        conn.execute(f"INSERT INTO event_text_{cid} (rowid, text) VALUES (?, 'recall:agents written_by')", (pos,))
        conn.execute(f"INSERT INTO event_vectors_{cid} (position, observed_at, vector) VALUES (?, ?, x'00')", (pos, at))
    conn.close()
    assert _verify(sqlite_url) == (0, [])
