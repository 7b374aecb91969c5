"""Search ranking helpers (docs/memory.md, "Search"): fusion and pair ranking."""

from __future__ import annotations

import pytest

from recall_engine.ranking import PairRank, fuse_hits, fuse_rrf, fuse_text_first, rank_pairs
from recall_engine.records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, REVIEW_PREDICATE, REVIEW_SUBJECT, make_event
from recall_engine.values import value_key

# --- fusion -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "lexical,vector,k,want",
    [
        # the Go case: the lexical ranking as it is, then the vector hits it lacks
        (["c", "b"], ["fresh", "a", "b"], 4, ["c", "b", "fresh", "a"]),
        (["c", "b"], ["fresh", "a", "b"], 3, ["c", "b", "fresh"]),
        (["c", "b"], ["fresh", "a", "b"], 10, ["c", "b", "fresh", "a"]),
        (["c", "b"], ["fresh", "a", "b"], 0, []),
        ([], ["x", "y"], 5, ["x", "y"]),
        (["x", "y"], [], 5, ["x", "y"]),
        (["a", "a", "b"], ["b", "c", "c"], 5, ["a", "b", "c"]),  # repeats count once
        ([], [], 3, []),
    ],
)
def test_fuse_text_first(lexical, vector, k, want):
    assert fuse_text_first(lexical, vector, k) == want


@pytest.mark.parametrize(
    "vector,lexical,k,constant,want",
    [
        # the Go case: b, found by both, leads; fresh and c tie and fresh was seen first
        (["fresh", "a", "b"], ["c", "b"], 3, 60, ["b", "fresh", "c"]),
        (["fresh", "a", "b"], ["c", "b"], 4, 60, ["b", "fresh", "c", "a"]),
        (["x"], ["y"], 2, 60, ["x", "y"]),  # a tie: the vector list first
        (["x", "y"], ["y", "x"], 2, 60, ["x", "y"]),  # equal sums keep first-seen order
        (["a", "a"], ["b"], 2, 60, ["a", "b"]),  # every occurrence counts
        (["a", "b", "c"], [], 2, 60, ["a", "b"]),
        ([], ["a", "b"], 5, 60, ["a", "b"]),
        (["a", "b"], ["c", "b"], 3, 60, ["b", "a", "c"]),
        (["a", "b"], ["c", "b"], 3, 0, ["a", "b", "c"]),  # constant 0: all score 1, a three-way tie
        (["a"], ["a"], 0, 60, []),
    ],
)
def test_fuse_rrf(vector, lexical, k, constant, want):
    assert fuse_rrf(vector, lexical, k, constant) == want


def test_rrf_default_constant_is_60():
    assert fuse_rrf(["a", "b"], ["c", "b"], 3) == fuse_rrf(["a", "b"], ["c", "b"], 3, 60)


def test_fuse_hits_dispatches_on_the_embedder():
    vector, lexical = ["fresh", "a", "b"], ["c", "b"]
    assert fuse_hits(vector, lexical, 4, text_first=True) == ["c", "b", "fresh", "a"]
    assert fuse_hits(vector, lexical, 3, text_first=False) == ["b", "fresh", "c"]


# --- pair ranking ---------------------------------------------------------------

T = 1_700_000_000 * 10**9
ALIASES = {"favourite_editor": "prefers_editor"}


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


def ev(subject, predicate, value, *, retraction=False, at=0):
    return make_event(subject, predicate, value, T + at, retraction=retraction)


def test_rank_pairs_groups_by_pair_in_order_of_first_appearance():
    events = [
        ev("user", "prefers_editor", "vim"),  # 0
        ev("user", "note", "likes tea"),  # 1
        ev(" User ", "prefers_editor", "neovim"),  # 2: same pair, normalized subject
        ev("user", "favourite_editor", "VIM"),  # 3: alias, and vim's key already ranked at 0
        ev("user", "note", "likes tea", retraction=True),  # 4: ranks nothing new
        ev("bob", "note", None, retraction=True),  # 5: a retraction ranks the pair, no value
        ev("user", "note", "likes coffee"),  # 6
        ev("bob", "note", "hello"),  # 7
    ]
    assert rank_pairs(events, canonical) == [
        PairRank("user", "prefers_editor", 0, {value_key("vim"): 0, value_key("neovim"): 2}),
        PairRank("user", "note", 1, {value_key("likes tea"): 1, value_key("likes coffee"): 6}),
        PairRank("bob", "note", 5, {value_key("hello"): 7}),
    ]


@pytest.mark.parametrize(
    "events,want",
    [
        ([], []),
        # a pair reached only by a retraction: ranked, with no value
        ([ev("a", "p", "x", retraction=True)], [PairRank("a", "p", 0, {})]),
        # a retraction before the assertion does not take the value's rank
        (
            [ev("a", "p", "x", retraction=True), ev("a", "p", "x", at=1)],
            [PairRank("a", "p", 0, {value_key("x"): 1})],
        ),
        # values keep the rank of their first assertion; numbers and booleans by key
        (
            [ev("a", "n", 1.5), ev("a", "n", True), ev("a", "n", 1.5, at=1), ev("a", "n", "1.5")],
            [PairRank("a", "n", 0, {value_key(1.5): 0, value_key(True): 1, value_key("1.5"): 3})],
        ),
        # without a canonical function names are taken as stored
        (
            [ev("u", "favourite_editor", "vim"), ev("u", "prefers_editor", "vim")],
            [
                PairRank("u", "favourite_editor", 0, {value_key("vim"): 0}),
                PairRank("u", "prefers_editor", 1, {value_key("vim"): 1}),
            ],
        ),
    ],
)
def test_rank_pairs_table(events, want):
    assert rank_pairs(events) == want


def test_blank_subjects_rank_nothing_but_keep_their_place():
    events = [ev("  ", "p", "x"), ev("a", "p", "y")]
    assert rank_pairs(events) == [PairRank("a", "p", 1, {value_key("y"): 1})]


def test_reserved_pairs_are_dropped_before_ranking_unless_asked_for():
    events = [
        ev(REGISTRY_SUBJECT, REGISTRY_PREDICATE, "{}"),
        ev("a", "p", "x"),
        ev(REVIEW_SUBJECT, REVIEW_PREDICATE, "{}"),
        ev("b", "p", "y"),
    ]
    assert rank_pairs(events) == [
        PairRank("a", "p", 0, {value_key("x"): 0}),
        PairRank("b", "p", 1, {value_key("y"): 1}),
    ]
    assert [(p.subject, p.rank) for p in rank_pairs(events, include_reserved=True)] == [
        (REGISTRY_SUBJECT, 0),
        ("a", 1),
        (REVIEW_SUBJECT, 2),
        ("b", 3),
    ]


def test_rank_pairs_accepts_any_iterable():
    events = (e for e in [ev("a", "p", "x"), ev("a", "p", "y")])
    assert rank_pairs(events, canonical) == [PairRank("a", "p", 0, {value_key("x"): 0, value_key("y"): 1})]
