"""notes: listing, clusters and promotion (the new predicate's name normalised for both front ends)."""

from __future__ import annotations

import pytest

from recall_admin import governance, notes
from recall_engine.errors import InvalidInput, PlanError
from recall_engine.registry import Definition

from .conftest import at, stager, values


def _shell_notes(m):
    ids = {}
    for who, shell in (("alice", "zsh"), ("bob", "fish"), ("carol", "bash")):
        ids[who] = m.remember(who, "note", f"I use {shell} as my shell", at=at("2026-05-01")).stored.event_id
    m.remember("dan", "note", "Prefers answers with code first", at=at("2026-05-02"))
    return ids


def test_list_notes_with_a_pattern(memory):
    _shell_notes(memory)
    assert len(notes.list_notes(memory)) == 4
    assert sorted(b.subject for b in notes.list_notes(memory, match=r"\bshell\b")) == ["alice", "bob", "carol"]


def test_clusters_find_the_shell_notes(memory):
    _shell_notes(memory)
    clusters = notes.note_clusters(memory)
    assert any({nv.note.subject for nv in c.notes} >= {"alice", "bob", "carol"} for c in clusters)


def test_promote_defines_a_name_written_as_words_under_an_open_vocabulary(open_memory):
    ids = _shell_notes(open_memory)
    d = Definition("Shell Used", "single", "string", "The shell someone uses")
    plan = notes.promote_plan(stager(open_memory), "Shell Used", notes={ids["bob"]: "fish"}, define=d)
    assert plan.records[0].name == "shell_used"
    governance.apply(open_memory, plan)
    assert values(open_memory, "bob", "shell_used") == ["fish"]


def test_promote_refuses_such_a_name_under_a_closed_vocabulary(memory):
    ids = _shell_notes(memory)
    d = Definition("Shell Used", "single", "string", "")
    with pytest.raises(InvalidInput):
        notes.promote_plan(stager(memory), "Shell Used", notes={ids["bob"]: "fish"}, define=d)


def test_promote_needs_exactly_one_selection(memory):
    with pytest.raises(PlanError, match="promote needs exactly one of"):
        notes.promote_plan(stager(memory), "prefers_editor")
