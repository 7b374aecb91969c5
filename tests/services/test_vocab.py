"""vocab: the inbox of names agents defined, near-duplicate suggestions, never-merge decisions."""

from __future__ import annotations

import pytest

from recall_admin import governance, vocab
from recall_engine.errors import NotFound
from recall_engine.memory import Memory

from .conftest import OPERATOR, at, stager, values


@pytest.fixture
def invented(open_memory):
    m = Memory(open_memory.store, match_threshold=-1)  # matching off: the new name is defined, not matched
    m.remember("alice", "prefers_editor", "helix", at=at("2026-04-01"))
    m.remember("bob", "Editor Preference", "vim", at=at("2026-04-02"), cardinality="single")
    return m


def test_a_name_defined_by_first_use_is_in_the_inbox(invented):
    entries = {e.name: e for e in vocab.inbox(invented)}
    assert entries["editor_preference"].origin == "defined"


def test_suggest_pairs_near_duplicates_and_its_id_stages_the_merge(invented):
    clusters = vocab.suggest(invented, 0.9)
    c = next(c for c in clusters if set(c.names) == {"editor_preference", "prefers_editor"})
    plan = vocab.merge_plan(stager(invented), c, "prefers_editor")
    governance.apply(invented, plan)
    assert values(invented, "bob", "prefers_editor") == ["vim"]


def test_never_keeps_a_pair_out_of_suggestions_and_an_unknown_id_is_not_found(invented):
    pairs = vocab.resolve_pairs(invented, "editor_preference", "prefers_editor")
    assert vocab.never(invented, pairs, OPERATOR, "not the same")
    assert not [c for c in vocab.suggest(invented, 0.9) if set(c.names) == {"editor_preference", "prefers_editor"}]
    assert vocab.never(invented, pairs, OPERATOR) == []  # recorded once
    with pytest.raises(NotFound):
        vocab.find_cluster(invented, "v-000000000000")


def test_a_name_matched_automatically_is_in_the_inbox_as_matched(open_memory):
    open_memory.remember("bob", "Editor Preference", "vim", at=at("2026-04-02"), cardinality="single")
    entry = next(e for e in vocab.inbox(open_memory) if e.name == "editor_preference")
    assert (entry.origin, entry.into) == ("matched", "prefers_editor")
