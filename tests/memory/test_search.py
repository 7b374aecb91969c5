"""Search on every backend: hits name pairs, the fold says what they hold."""

from __future__ import annotations

import pytest

from recall_engine.errors import InvalidInput
from recall_engine.instants import DAY_NS
from recall_engine.instants import parse_instant as T
from recall_engine.memory import Memory
from recall_engine.search import search

from .conftest import NOW


def test_a_superseded_hit_answers_with_the_current_value(memory: Memory):
    memory.remember("user", "prefers_editor", "vim", at=T("2026-09-01"), evidence="vim keybindings forever")
    memory.remember("user", "prefers_editor", "zed", at=T("2026-10-05"))
    hits = search(memory, "vim keybindings", limit=5)
    assert [(b.predicate, b.value) for b in hits][:1] == [("prefers_editor", "zed")]
    # as of before the switch, the same hit answers vim
    then = search(memory, "vim keybindings", as_of=T("2026-09-10"), limit=5)
    assert (then[0].predicate, then[0].value) == ("prefers_editor", "vim")


def test_a_multi_valued_pair_answers_only_with_the_values_hit(memory: Memory):
    for t in ("python", "rust", "kubernetes"):
        memory.remember("user", "uses_technology", t, at=T("2026-03-01"))
    hits = search(memory, "kubernetes", limit=5)
    assert [(b.predicate, b.value) for b in hits] == [("uses_technology", "kubernetes")]


def test_notes_rank_after_typed_beliefs(memory: Memory):
    memory.remember("user", "note", "I really like the zed editor", at=T("2026-03-01"))
    memory.remember("user", "prefers_editor", "zed", at=T("2026-03-02"))
    hits = search(memory, "zed editor", limit=5)
    assert [b.predicate for b in hits] == ["prefers_editor", "note"]


def test_a_time_phrase_searches_its_span_first(memory: Memory):
    at = NOW
    memory.remember("ana", "uses_technology", "rust", at=at - 60 * DAY_NS)
    memory.remember("bob", "uses_technology", "rust", at=at - 14 * DAY_NS)
    memory.remember("cy", "uses_technology", "rust", at=at - 2 * DAY_NS)
    hits = search(memory, "rust two weeks ago", as_of=at, limit=3)
    assert hits[0].subject == "bob"
    assert {b.subject for b in hits} == {"ana", "bob", "cy"}  # the hint reorders, it drops nothing


def test_a_retracted_pair_answers_nothing(memory: Memory):
    memory.remember("user", "prefers_editor", "helix", at=T("2026-03-01"))
    memory.forget("user", "prefers_editor", "helix")
    assert search(memory, "helix", limit=5) == []


@pytest.mark.parametrize(
    "text, limit, message",
    [
        ("   ", 10, "search needs some text"),
        ("vim", 0, "limit must be between 1 and 1000"),
        ("vim", 1001, "limit must be between 1 and 1000"),
        ("x" * 40_000, 10, "at most 32768 bytes"),
    ],
)
def test_bad_searches_say_what_is_wrong(memory: Memory, text, limit, message):
    with pytest.raises(InvalidInput) as exc:
        search(memory, text, limit=limit)
    assert message in str(exc.value)
