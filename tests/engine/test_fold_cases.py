"""The fold, rule by rule (docs/semantics.md sections 2-3, docs/fold.md "The walk").

Most rules are one row of ``CASES``: a registry log, a pair's events (often a
superset: other predicates and subjects ride along), and the answers expected
at several instants. The issue's must-show cases are named tests below.
"""

from __future__ import annotations

import dataclasses
import random
from typing import NamedTuple

import pytest

from recall_engine.fold import attach_elsewhere, fold
from recall_engine.history import history
from recall_engine.records import Event, Replace, make_event
from recall_engine.timeline import Timeline

from .helpers import (
    NOW,
    SUBJECT,
    D,
    answer,
    beliefs,
    declare,
    define,
    merge,
    note,
    profile,
    promote,
    redefine,
    retract,
    retract_all,
    say,
    split,
    steps,
    timeline,
)


class Case(NamedTuple):
    id: str
    predicate: str
    registry: list[Event]
    events: list[Event]
    expect: list[tuple[str, list]]  # (instant, values held then)


EDITOR = [declare("editor", "01-01")]
LANGS = [declare("languages", "01-01", "multi")]
LIKES = [
    declare("likes", "01-01", "multi"),
    declare("dislikes", "01-01", "multi", excludes=("likes",)),
]

CASES = [
    # --- single / multi -----------------------------------------------------------
    Case(
        "single-newest-wins",
        "editor",
        EDITOR,
        [say("editor", "vim", "09-01"), say("editor", "emacs", "09-20")],
        [("09-10", ["vim"]), ("09-20", ["emacs"]), ("2027-01-01", ["emacs"])],
    ),
    Case(
        "single-ignores-log-order",
        "editor",
        EDITOR,
        [say("editor", "emacs", "09-20"), say("editor", "vim", "09-01")],
        [("2027-01-01", ["emacs"])],
    ),
    Case(
        "multi-accumulates-in-first-assertion-order",
        "languages",
        LANGS,
        [say("languages", "python", "09-01"), say("languages", "go", "09-02"), say("languages", "python", "09-03")],
        [("09-02", ["python", "go"]), ("09-03", ["python", "go"])],
    ),
    Case(
        "multi-targeted-retraction-removes-one",
        "languages",
        LANGS,
        [say("languages", "python", "09-01"), say("languages", "go", "09-02"), retract("languages", "python", "09-03")],
        [("09-03", ["go"])],
    ),
    Case(
        "multi-blanket-clears-then-starts-afresh",
        "languages",
        LANGS,
        [
            say("languages", "python", "09-01"),
            say("languages", "go", "09-02"),
            retract_all("languages", "09-03"),
            say("languages", "rust", "09-04"),
        ],
        [("09-03", []), ("09-04", ["rust"])],
    ),
    Case(
        "unknown-predicate-is-single",
        "editor",
        [],
        [say("editor", "vim", "09-01"), say("editor", "emacs", "09-02")],
        [("09-02", ["emacs"])],
    ),
    # --- retractions --------------------------------------------------------------
    Case(
        "retract-old-value-leaves-current",
        "editor",
        EDITOR,
        [say("editor", "vim", "09-01"), say("editor", "emacs", "09-02"), retract("editor", "vim", "09-03")],
        [("09-03", ["emacs"])],
    ),
    Case(
        "retract-current-never-revives",
        "editor",
        EDITOR,
        [say("editor", "vim", "09-01"), say("editor", "emacs", "09-02"), retract("editor", "emacs", "09-03")],
        [("09-02", ["emacs"]), ("09-03", [])],
    ),
    Case(
        "retract-is-case-insensitive",
        "editor",
        EDITOR,
        [say("editor", "vim", "09-01"), say("editor", "emacs", "09-02"), retract("editor", "EMACS", "09-03")],
        [("09-03", [])],
    ),
    Case(
        "retract-unknown-value-changes-nothing",
        "editor",
        EDITOR,
        [say("editor", "vim", "09-01"), retract("editor", "nano", "09-03")],
        [("09-03", ["vim"])],
    ),
    Case(
        "blanket-retraction-on-single",
        "editor",
        EDITOR,
        [say("editor", "vim", "09-01"), retract_all("editor", "09-02")],
        [("09-01", ["vim"]), ("09-02", [])],
    ),
    Case(
        "reassert-after-retraction",
        "editor",
        EDITOR,
        [say("editor", "vim", "09-01"), retract("editor", "vim", "09-02"), say("editor", "vim", "09-03")],
        [("09-02", []), ("09-03", ["vim"])],
    ),
    Case(
        "retraction-before-assertion-in-time-does-nothing",
        "editor",
        EDITOR,
        [retract("editor", "vim", "09-01"), say("editor", "vim", "09-02")],
        [("09-02", ["vim"])],
    ),
    # --- value identity -----------------------------------------------------------
    Case(
        "case-insensitive-identity-one-belief",
        "languages",
        LANGS,
        [say("languages", "Python", "09-01"), say("languages", "go", "09-02"), say("languages", "PYTHON", "09-03")],
        [("09-03", ["PYTHON", "go"])],
    ),
    Case(
        "numbers-8000-and-8000.0-are-one",
        "budget",
        [declare("budget", "01-01", "multi", value_type="number")],
        [say("budget", 8000, "09-01"), say("budget", 8000.0, "09-02")],
        [("09-02", [8000.0])],
    ),
    Case(
        "string-and-number-differ",
        "tags",
        [declare("tags", "01-01", "multi")],
        [say("tags", "1", "09-01"), say("tags", 1, "09-02"), say("tags", True, "09-03")],
        [("09-03", ["1", 1, True])],
    ),
    # --- as-of boundaries ---------------------------------------------------------
    Case(
        "as-of-before-first-event-is-nothing",
        "editor",
        EDITOR,
        [say("editor", "vim", "09-01")],
        [("08-31", []), ("2026-08-31T23:59:59.999999999Z", []), ("09-01", ["vim"])],
    ),
    Case(
        "as-of-nanosecond-boundaries",
        "editor",
        EDITOR,
        [
            say("editor", "vim", "2026-09-01T10:00:00.000000001Z"),
            say("editor", "emacs", "2026-09-01T10:00:00.000000002Z"),
        ],
        [
            ("2026-09-01T10:00:00Z", []),
            ("2026-09-01T10:00:00.000000001Z", ["vim"]),
            ("2026-09-01T10:00:00.000000002Z", ["emacs"]),
        ],
    ),
    # --- cardinality as of each event ---------------------------------------------
    Case(
        "cardinality-read-as-of-each-event",
        "editor",
        [declare("editor", "01-01"), redefine("editor", "09-10", "multi"), redefine("editor", "09-20", "single")],
        [
            say("editor", "a", "09-01"),
            say("editor", "b", "09-05"),
            say("editor", "c", "09-12"),
            say("editor", "d", "09-15"),
            say("editor", "e", "09-25"),
        ],
        [
            ("09-05", ["b"]),
            ("09-12", ["b", "c"]),
            ("09-15", ["b", "c", "d"]),
            ("09-24", ["b", "c", "d"]),
            ("09-25", ["e"]),
        ],
    ),
    Case(
        "definition-at-the-events-instant-governs-it",
        "editor",
        [declare("editor", "01-01"), redefine("editor", "09-10", "multi")],
        [say("editor", "a", "09-01"), say("editor", "b", "09-10")],
        [("09-10", ["a", "b"])],
    ),
    Case(
        "first-definition-governs-older-events",
        "languages",
        [declare("languages", "10-01", "multi")],
        [say("languages", "python", "09-01"), say("languages", "go", "09-02")],
        [("09-02", ["python", "go"])],
    ),
    Case(
        "single-to-multi-keeps-past-answers",
        "editor",
        [declare("editor", "01-01"), redefine("editor", "09-15", "multi")],
        [say("editor", "vim", "09-01"), say("editor", "emacs", "09-10"), say("editor", "helix", "09-20")],
        [("09-12", ["emacs"]), ("09-16", ["emacs"]), ("09-20", ["emacs", "helix"])],
    ),
    Case(
        "multi-to-single-keeps-held-until-next-assertion",
        "languages",
        [declare("languages", "01-01", "multi"), redefine("languages", "09-15", "single")],
        [say("languages", "python", "09-01"), say("languages", "go", "09-10"), say("languages", "rust", "09-20")],
        [("09-16", ["python", "go"]), ("09-20", ["rust"])],
    ),
    Case(
        "retroactive-redefine-restores-hidden-values",
        "allergy",
        [define("allergy", "01-01"), redefine("allergy", "10-01", "multi", retroactive=True)],
        [say("allergy", "peanuts", "09-01"), say("allergy", "shellfish", "09-02")],
        [("09-01", ["peanuts"]), ("09-02", ["peanuts", "shellfish"]), ("10-02", ["peanuts", "shellfish"])],
    ),
    Case(
        "later-ordinary-definition-takes-over-from-its-instant",
        "allergy",
        [
            define("allergy", "01-01"),
            redefine("allergy", "10-01", "multi", retroactive=True),
            redefine("allergy", "10-15", "single"),
        ],
        [say("allergy", "peanuts", "09-01"), say("allergy", "shellfish", "09-02"), say("allergy", "latex", "10-20")],
        [("09-02", ["peanuts", "shellfish"]), ("10-16", ["peanuts", "shellfish"]), ("10-20", ["latex"])],
    ),
    Case(
        "later-retroactive-wins-over-earlier-retroactive",
        "allergy",
        [
            define("allergy", "01-01"),
            redefine("allergy", "10-01", "multi", retroactive=True),
            redefine("allergy", "10-05", "single", retroactive=True),
        ],
        [say("allergy", "peanuts", "09-01"), say("allergy", "shellfish", "09-02")],
        [("09-02", ["shellfish"])],
    ),
    Case(
        "first-define-wins",
        "editor",
        [define("editor", "01-01", "single"), define("editor", "02-01", "multi")],
        [say("editor", "vim", "09-01"), say("editor", "emacs", "09-02")],
        [("09-02", ["emacs"])],
    ),
    Case(
        "define-after-declare-is-ignored",
        "languages",
        [declare("languages", "01-01", "multi"), define("languages", "02-01", "single")],
        [say("languages", "python", "09-01"), say("languages", "go", "09-02")],
        [("09-02", ["python", "go"])],
    ),
    # --- names: merge, split, rename ------------------------------------------------
    Case(
        "merge-makes-two-histories-one",
        "favorite_editor",
        [
            declare("favorite_editor", "01-01"),
            define("editor_favorite", "02-01"),
            merge("editor_favorite", "favorite_editor", "10-01"),
        ],
        [say("favorite_editor", "helix", "09-01"), say("editor_favorite", "zed", "09-05")],
        [("09-02", ["helix"]), ("09-06", ["zed"]), ("2027-01-01", ["zed"])],
    ),
    Case(
        "merged-pair-folds-under-into-definitions",
        "favorite_editor",
        [
            declare("favorite_editor", "01-01", "multi"),
            define("editor_favorite", "02-01", "single"),
            merge("editor_favorite", "favorite_editor", "10-01"),
        ],
        [say("editor_favorite", "vim", "09-01"), say("editor_favorite", "zed", "09-05")],
        [("09-06", ["vim", "zed"])],
    ),
    Case(
        "split-separates-the-histories-again",
        "favorite_editor",
        [
            declare("favorite_editor", "01-01"),
            define("editor_favorite", "02-01"),
            merge("editor_favorite", "favorite_editor", "10-01"),
            split("editor_favorite", "10-10"),
        ],
        [say("favorite_editor", "helix", "09-01"), say("editor_favorite", "zed", "09-05")],
        [("09-06", ["helix"]), ("2027-01-01", ["helix"])],
    ),
    Case(
        "merge-chain-a-into-b-into-c",
        "c",
        [
            declare("a", "01-01"),
            declare("b", "01-01"),
            declare("c", "01-01"),
            merge("a", "b", "10-01"),
            merge("b", "c", "10-02"),
        ],
        [say("c", "one", "09-01"), say("b", "two", "09-02"), say("a", "three", "09-03")],
        [("09-02", ["two"]), ("09-03", ["three"])],
    ),
    Case(
        "rename-via-aliases",
        "favorite_editor",
        [declare("editor", "01-01"), declare("favorite_editor", "06-01", aliases=("editor",))],
        [say("editor", "vim", "03-01"), say("favorite_editor", "emacs", "07-01")],
        [("03-02", ["vim"]), ("07-02", ["emacs"])],
    ),
    Case(
        "rename-keeps-the-old-names-rules-for-its-time",
        "likes_food",
        [declare("food", "01-01", "multi"), declare("likes_food", "06-01", "single", aliases=("food",))],
        [say("food", "mango", "03-01"), say("food", "kiwi", "03-02"), say("likes_food", "fig", "07-01")],
        [("03-03", ["mango", "kiwi"]), ("07-01", ["fig"])],
    ),
    Case(
        "rename-chain-keeps-the-first-names-rules",
        "eats",
        [
            declare("food", "01-01", "multi"),
            declare("likes_food", "06-01", "single", aliases=("food",)),
            declare("eats", "07-01", "single", aliases=("likes_food",)),
        ],
        [
            say("food", "mango", "03-01"),
            say("food", "kiwi", "03-02"),
            say("likes_food", "fig", "06-15"),
            say("eats", "plum", "07-15"),
        ],
        [("03-03", ["mango", "kiwi"]), ("06-15", ["fig"]), ("07-15", ["plum"])],
    ),
    # --- exclusions ----------------------------------------------------------------
    Case(
        "exclusion-withdraws-same-value",
        "likes",
        LIKES,
        [say("likes", "mangoes", "09-01"), say("likes", "kiwis", "09-02"), say("dislikes", "mangoes", "09-10")],
        [("09-09", ["mangoes", "kiwis"]), ("09-10", ["kiwis"])],
    ),
    Case(
        "exclusion-is-case-insensitive",
        "likes",
        LIKES,
        [say("likes", "Mangoes", "09-01"), say("dislikes", "mangoes", "09-10")],
        [("09-10", [])],
    ),
    Case(
        "exclusion-at-equal-instant-withdraws",
        "likes",
        LIKES,
        [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-01")],
        [("09-01", [])],
    ),
    Case(
        "exclusion-then-restating-holds-again",
        "likes",
        LIKES,
        [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10"), say("likes", "mangoes", "09-20")],
        [("09-10", []), ("09-20", ["mangoes"])],
    ),
    Case(
        "exclusion-never-revives",
        "likes",
        LIKES,
        [
            say("likes", "mangoes", "09-01"),
            say("dislikes", "mangoes", "09-10"),
            retract("dislikes", "mangoes", "09-11"),
        ],
        [("09-11", [])],
    ),
    Case(
        "exclusion-is-one-way",
        "dislikes",
        LIKES,
        [say("dislikes", "mangoes", "09-01"), say("likes", "mangoes", "09-10")],
        [("09-10", ["mangoes"])],
    ),
    Case(
        "exclusion-by-other-subject-ignored",
        "likes",
        LIKES,
        [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10", subject="bob")],
        [("09-10", ["mangoes"])],
    ),
    Case(
        "exclusion-added-by-retroactive-redefine-covers-old-log",
        "likes",
        [
            declare("likes", "01-01", "multi"),
            declare("dislikes", "01-01", "multi"),
            redefine("dislikes", "10-01", "multi", retroactive=True, excludes=("likes",)),
        ],
        [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10")],
        [("09-09", ["mangoes"]), ("09-10", []), ("2027-01-01", [])],
    ),
    Case(
        "exclusion-added-by-ordinary-redefine-covers-old-log-too",
        "likes",
        [
            declare("likes", "01-01", "multi"),
            declare("dislikes", "01-01", "multi"),
            redefine("dislikes", "10-01", "multi", excludes=("likes",)),
        ],
        [
            say("likes", "mangoes", "09-01"),
            say("dislikes", "mangoes", "09-10"),
            say("likes", "kiwis", "09-02"),
            say("dislikes", "kiwis", "10-05"),
        ],
        [("09-09", ["mangoes", "kiwis"]), ("09-10", ["kiwis"]), ("2027-01-01", [])],
    ),
    Case(
        "exclusion-added-later-covers-the-old-log-as-of-too",
        "enjoys",  # issue 19's example
        [
            declare("enjoys", "01-01", "multi"),
            declare("hates", "01-01", "multi"),
            redefine("hates", "10-01", "multi", excludes=("enjoys",)),
        ],
        [say("enjoys", "mangoes", "09-01"), say("hates", "mangoes", "09-10")],
        [("09-09", ["mangoes"]), ("09-12", []), ("2027-01-01", [])],
    ),
    Case(
        "exclusion-removed-later-no-longer-withdraws",
        "likes",
        [
            declare("likes", "01-01", "multi"),
            declare("dislikes", "01-01", "multi", excludes=("likes",)),
            redefine("dislikes", "10-01", "multi"),
        ],
        [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10")],
        [("09-10", ["mangoes"]), ("2027-01-01", ["mangoes"])],
    ),
    Case(
        "historical-marked-later-is-never-withdrawn-even-before",
        "did",
        [
            declare("did", "01-01", "multi"),
            declare("regrets", "01-01", "multi", excludes=("did",)),
            redefine("did", "10-01", "multi", historical=True),
        ],
        [say("did", "run a marathon", "09-01"), say("regrets", "run a marathon", "09-10")],
        [("09-10", ["run a marathon"])],
    ),
    Case(
        "exclusion-names-resolve-at-read-time",
        "enjoys",
        [
            declare("enjoys", "01-01", "multi"),
            declare("likes", "01-01", "multi"),
            declare("dislikes", "01-01", "multi", excludes=("likes",)),
            merge("likes", "enjoys", "10-01"),
        ],
        [say("enjoys", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10")],
        [("09-10", [])],
    ),
    Case(
        "exclusions-of-a-merged-name-apply-only-after-a-split",
        "likes",
        [
            declare("likes", "01-01", "multi"),
            declare("dislikes", "01-01", "multi", excludes=("likes",)),
            declare("hates", "01-01", "multi"),
            merge("dislikes", "hates", "10-01"),
        ],
        [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10"), say("hates", "mangoes", "09-11")],
        [("2027-01-01", ["mangoes"])],
    ),
    Case(
        "exclusions-of-a-split-name-apply-again",
        "likes",
        [
            declare("likes", "01-01", "multi"),
            declare("dislikes", "01-01", "multi", excludes=("likes",)),
            declare("hates", "01-01", "multi"),
            merge("dislikes", "hates", "10-01"),
            split("dislikes", "10-02", "multi", excludes=("likes",)),
        ],
        [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10")],
        [("09-09", ["mangoes"]), ("2027-01-01", [])],
    ),
    Case(
        "historical-never-withdrawn-by-exclusion",
        "did",
        [declare("did", "01-01", "multi", historical=True), declare("regrets", "01-01", "multi", excludes=("did",))],
        [say("did", "run a marathon", "09-01"), say("regrets", "run a marathon", "09-10")],
        [("09-10", ["run a marathon"])],
    ),
    Case(
        "historical-withdrawn-only-by-explicit-retraction",
        "did",
        [declare("did", "01-01", "multi", historical=True)],
        [say("did", "run a marathon", "09-01"), retract("did", "run a marathon", "09-10")],
        [("09-09", ["run a marathon"]), ("09-10", [])],
    ),
    Case(
        "historical-never-withdrawn-by-replaces",
        "did",
        [declare("did", "01-01", "multi", historical=True), declare("goal", "01-01", "multi")],
        [
            say("did", "run a marathon", "09-01"),
            say("goal", "run a marathon", "09-10", replaces=[("did", "run a marathon")]),
        ],
        [("09-10", ["run a marathon"])],
    ),
    # --- replaces ------------------------------------------------------------------
    Case(
        "replaces-withdraws-a-value-in-another-pair",
        "lives_in",
        [declare("lives_in", "01-01"), declare("works_in", "01-01")],
        [say("lives_in", "berlin", "09-01"), say("works_in", "paris", "09-10", replaces=[("lives_in", "Berlin")])],
        [("09-09", ["berlin"]), ("09-10", [])],
    ),
    Case(
        "replaces-in-the-same-multi-pair",
        "languages",
        LANGS,
        [
            say("languages", "python", "09-01"),
            say("languages", "go", "09-02"),
            say("languages", "rust", "09-03", replaces=[("languages", "go")]),
        ],
        [("09-03", ["python", "rust"])],
    ),
    Case(
        "replaces-of-its-own-value-is-ignored",
        "languages",
        LANGS,
        [say("languages", "python", "09-01"), say("languages", "python", "09-03", replaces=[("languages", "python")])],
        [("09-03", ["python"])],
    ),
    Case(
        "replaces-a-value-not-held-does-nothing",
        "lives_in",
        [declare("lives_in", "01-01"), declare("works_in", "01-01")],
        [say("lives_in", "berlin", "09-01"), say("works_in", "paris", "09-10", replaces=[("lives_in", "rome")])],
        [("09-10", ["berlin"])],
    ),
    Case(
        "replaces-never-revives",
        "lives_in",
        [declare("lives_in", "01-01"), declare("works_in", "01-01")],
        [
            say("lives_in", "rome", "08-01"),
            say("lives_in", "berlin", "09-01"),
            say("works_in", "paris", "09-10", replaces=[("lives_in", "berlin")]),
        ],
        [("09-10", [])],
    ),
    Case(
        "replaces-through-a-merged-name",
        "lives_in",
        [
            declare("lives_in", "01-01"),
            define("home_city", "01-02"),
            declare("works_in", "01-01"),
            merge("home_city", "lives_in", "10-01"),
        ],
        [say("lives_in", "berlin", "09-01"), say("works_in", "paris", "09-10", replaces=[("home_city", "berlin")])],
        [("09-10", [])],
    ),
    Case(
        "replaces-on-a-retraction-is-ignored",
        "lives_in",
        [declare("lives_in", "01-01"), declare("works_in", "01-01")],
        [
            say("lives_in", "berlin", "09-01"),
            make_event(
                "user", "works_in", "paris", D("09-10"), retraction=True, replaces=(Replace("lives_in", "berlin"),)
            ),
        ],
        [("09-10", ["berlin"])],
    ),
    # --- superset input ------------------------------------------------------------
    Case(
        "other-subjects-and-predicates-are-ignored",
        "editor",
        EDITOR + [declare("shell", "01-01")],
        [
            say("editor", "vim", "09-01"),
            say("editor", "emacs", "09-02", subject="bob"),
            say("shell", "zsh", "09-03"),
            retract_all("shell", "09-04"),
            note("vim is great", "09-05"),
        ],
        [("09-05", ["vim"])],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fold_case(case: Case) -> None:
    tl = timeline(*case.registry)
    for when, expected in case.expect:
        assert answer(case.events, case.predicate, tl, when) == expected, when
    # the same log in any order, or with every event twice, folds the same
    rng = random.Random(case.id)
    shuffled = case.events * 2
    rng.shuffle(shuffled)
    for when, expected in case.expect:
        assert answer(shuffled, case.predicate, tl, when) == expected, when


# --- tie ordering (docs/fold.md) ---------------------------------------------------------


def _with_id(e: Event, eid: str) -> Event:
    return dataclasses.replace(e, id=eid)


def test_equal_instant_tie_pinned_case() -> None:
    # log [retract vim, assert emacs, assert vim] at one instant: a(vim), b(emacs) -> emacs
    t = D("09-01")
    log = [
        _with_id(retract("editor", "vim", t), "c"),
        _with_id(say("editor", "emacs", t), "b"),
        _with_id(say("editor", "vim", t), "a"),
    ]
    assert answer(log, "editor", timeline(*EDITOR), t) == ["emacs"]


@pytest.mark.parametrize("retract_id,assert_id", [("a", "b"), ("b", "a")])
def test_retraction_orders_after_its_assertion_at_one_instant(retract_id: str, assert_id: str) -> None:
    t = D("09-01")
    log = [_with_id(retract("editor", "vim", t), retract_id), _with_id(say("editor", "vim", t), assert_id)]
    assert answer(log, "editor", timeline(*EDITOR), t) == []
    log = [_with_id(retract_all("editor", t), retract_id), _with_id(say("editor", "vim", t), assert_id)]
    assert answer(log, "editor", timeline(*EDITOR), t) == []


def test_equal_instant_assertions_order_by_id() -> None:
    t = D("09-01")
    vim, emacs = say("editor", "vim", t), say("editor", "emacs", t)
    winner, loser = sorted((vim, emacs), key=lambda e: e.id, reverse=True)
    assert answer([vim, emacs], "editor", timeline(*EDITOR), t) == [winner.value]
    assert [p.value for p in beliefs([vim, emacs], "editor", timeline(*EDITOR), t)[0].replaced] == [loser.value]
    assert answer([emacs, vim], "editor", timeline(*EDITOR), t) == [winner.value]


def test_duplicate_write_at_one_instant_is_one_belief() -> None:
    t = D("09-01")
    a = _with_id(say("languages", "go", t), "a")
    b = _with_id(say("languages", "Go", t, source="agent_inferred"), "b")
    out = beliefs([b, a], "languages", timeline(*LANGS), t)
    assert [x.value for x in out] == ["Go"] and out[0].event_id == "b"


# --- replaced (docs/fold.md) -------------------------------------------------------------------


def test_replaced_goes_back_one_step() -> None:
    log = [say("editor", "vim", "09-01"), say("editor", "emacs", "09-02"), say("editor", "neovim", "09-03")]
    tl = timeline(*EDITOR)
    [now] = beliefs(log, "editor", tl)
    assert [p.value for p in now.replaced] == ["emacs"]
    assert now.replaced[0].event_id == log[1].id and now.replaced[0].observed_at == D("09-02")
    [then] = beliefs(log, "editor", tl, "09-02")
    assert [p.value for p in then.replaced] == ["vim"]


def test_restating_keeps_its_correction() -> None:
    log = [say("editor", "vim", "09-01"), say("editor", "emacs", "09-02"), say("editor", "Emacs", "09-03")]
    [b] = beliefs(log, "editor", timeline(*EDITOR))
    assert b.value == "Emacs" and b.event_id == log[2].id and b.observed_at == D("09-03")
    assert [p.value for p in b.replaced] == ["vim"]


def test_restating_under_multi_keeps_position_and_refreshes() -> None:
    log = [
        say("languages", "python", "09-01"),
        say("languages", "go", "09-02"),
        say("languages", "python", "09-03", confidence=0.5),
    ]
    out = beliefs(log, "languages", timeline(*LANGS))
    assert [b.value for b in out] == ["python", "go"]
    assert out[0].observed_at == D("09-03") and out[0].confidence == 0.5
    assert all(not b.replaced for b in out)


def test_reassertion_after_retraction_replaced_nothing() -> None:
    log = [
        say("editor", "vim", "09-01"),
        say("editor", "emacs", "09-02"),
        retract("editor", "emacs", "09-03"),
        say("editor", "vim", "09-04"),
    ]
    [b] = beliefs(log, "editor", timeline(*EDITOR))
    assert b.value == "vim" and b.replaced == ()


def test_multi_to_single_step_lists_every_other_held_value() -> None:
    tl = timeline(declare("languages", "01-01", "multi"), redefine("languages", "09-15", "single"))
    log = [say("languages", "python", "09-01"), say("languages", "go", "09-10"), say("languages", "rust", "09-20")]
    [b] = beliefs(log, "languages", tl)
    assert [p.value for p in b.replaced] == ["python", "go"]


def test_belief_predicate_is_canonical_and_keeps_stored_as() -> None:
    tl = timeline(
        declare("favorite_editor", "01-01"),
        define("editor_favorite", "02-01"),
        merge("editor_favorite", "favorite_editor", "10-01"),
    )
    log = [say("editor_favorite", "zed", "09-05")]
    [b] = beliefs(log, "favorite_editor", tl)
    assert b.predicate == "favorite_editor" and b.stored_as == "editor_favorite"
    assert b.to_json()["stored_as"] == "editor_favorite"


# --- the issue's must-show cases ---------------------------------------------------------


def test_issue_editor_vim_emacs_zed() -> None:
    tl = timeline(*EDITOR)
    log = [say("editor", "vim", "09-01"), say("editor", "emacs", "09-20"), say("editor", "zed", "10-05")]
    hist = steps(log, "editor", tl)
    assert len(hist) == 3
    assert [(s.value, s.before, s.after) for s in hist] == [
        ("vim", (), ("vim",)),
        ("emacs", ("vim",), ("emacs",)),
        ("zed", ("emacs",), ("zed",)),
    ]
    assert [s.withdrawn for s in hist] == [(), ("vim",), ("emacs",)]
    assert answer(log, "editor", tl) == ["zed"]
    [sep25] = beliefs(log, "editor", tl, "09-25")
    assert sep25.value == "emacs"
    assert [(p.value, p.observed_at, p.event_id) for p in sep25.replaced] == [("vim", D("09-01"), log[0].id)]


def test_issue_likes_then_dislikes_mangoes() -> None:
    tl = timeline(*LIKES)
    log = [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10")]
    assert answer(log, "likes", tl, "09-05") == ["mangoes"]
    assert answer(log, "likes", tl) == []
    assert answer(log, "dislikes", tl) == ["mangoes"]
    hist = steps(log, "likes", tl)
    assert [(s.action, s.before, s.after, s.via) for s in hist] == [
        ("assert", (), ("mangoes",), ""),
        ("exclude", ("mangoes",), (), "dislikes"),
    ]
    # the exclusion added later covers the old log, retroactive or not (issue 19)...
    plain = [declare("likes", "01-01", "multi"), declare("dislikes", "01-01", "multi")]
    for retroactive in (True, False):
        later = timeline(*plain, redefine("dislikes", "10-01", "multi", retroactive=retroactive, excludes=("likes",)))
        assert answer(log, "likes", later) == [] and answer(log, "likes", later, "09-10") == []
        assert answer(log, "likes", later, "09-09") == ["mangoes"]
    # ...except in a recall-fold-v4 bundle, replayed with the rules it was written under
    old = Timeline([*plain, redefine("dislikes", "10-01", "multi", excludes=("likes",))], fold_version="recall-fold-v4")
    assert answer(log, "likes", old) == ["mangoes"]
    assert answer(log + [say("dislikes", "mangoes", "10-02")], "likes", old) == []


def test_issue_goal_and_did_see_each_other_elsewhere() -> None:
    tl = timeline(declare("goal", "01-01", "multi"), declare("did", "01-01", "multi", historical=True))
    log = [
        say("goal", "run a marathon", "03-01"),
        say("did", "Run a Marathon", "09-01"),
        note("run a marathon", "09-02"),
        say("goal", "learn go", "03-02"),
    ]
    out = {(b.predicate, b.value): b for b in profile(log, tl)}
    goal, did, nt = out[("goal", "run a marathon")], out[("did", "Run a Marathon")], out[("note", "run a marathon")]
    assert [(x.predicate, x.value, x.observed_at, x.event_id) for x in goal.elsewhere] == [
        ("did", "Run a Marathon", D("09-01"), log[1].id)
    ]
    assert [(x.predicate, x.observed_at) for x in did.elsewhere] == [("goal", D("03-01"))]
    assert nt.elsewhere == () and out[("goal", "learn go")].elsewhere == ()
    # as of before `did` was said, nothing is elsewhere
    early = {(b.predicate, b.value): b for b in profile(log, tl, "08-01")}
    assert early[("goal", "run a marathon")].elsewhere == ()


def test_elsewhere_across_subjects_is_not_joined() -> None:
    tl = timeline(declare("goal", "01-01", "multi"), declare("did", "01-01", "multi"))
    bs = beliefs([say("goal", "x", "09-01")], "goal", tl) + beliefs(
        [say("did", "x", "09-01", subject="bob")], "did", tl, subject="bob"
    )
    assert all(b.elsewhere == () for b in attach_elsewhere(bs))


def test_issue_single_to_multi_keeps_past_answers_and_retroactive_restores_hidden() -> None:
    log = [say("editor", "vim", "09-01"), say("editor", "emacs", "09-10"), say("editor", "helix", "09-20")]
    ordinary = timeline(declare("editor", "01-01"), redefine("editor", "09-15", "multi"))
    assert answer(log, "editor", ordinary) == ["emacs", "helix"]
    assert answer(log, "editor", ordinary, "09-12") == ["emacs"]  # as it answered then
    assert answer(log, "editor", ordinary, "09-01") == ["vim"]
    retro = timeline(declare("editor", "01-01"), redefine("editor", "09-15", "multi", retroactive=True))
    assert answer(log, "editor", retro) == ["vim", "emacs", "helix"]
    assert answer(log, "editor", retro, "09-12") == ["vim", "emacs"]  # the past answer changes


def test_issue_merge_then_split() -> None:
    reg = [declare("favorite_editor", "01-01"), define("editor_favorite", "02-01")]
    log = [say("favorite_editor", "helix", "09-01"), say("editor_favorite", "zed", "09-05")]
    before = timeline(*reg)
    assert answer(log, "favorite_editor", before) == ["helix"]
    assert answer(log, "editor_favorite", before) == ["zed"]
    merged = timeline(*reg, merge("editor_favorite", "favorite_editor", "10-01"))
    [b] = beliefs(log, "favorite_editor", merged)
    assert (b.value, b.stored_as, [p.value for p in b.replaced]) == ("zed", "editor_favorite", ["helix"])
    assert merged.canonical("editor_favorite") == "favorite_editor"
    assert [s.stored_as for s in steps(log, "favorite_editor", merged)] == ["favorite_editor", "editor_favorite"]
    # a later write naming the merged name files under `into`, keeping its name
    later = say("editor_favorite", "vim", "10-05")
    assert [b.stored_as for b in beliefs(log + [later], "favorite_editor", merged)] == ["editor_favorite"]
    split_tl = timeline(*reg, merge("editor_favorite", "favorite_editor", "10-01"), split("editor_favorite", "10-10"))
    assert answer(log + [later], "favorite_editor", split_tl) == ["helix"]
    assert answer(log + [later], "editor_favorite", split_tl) == ["vim"]
    assert split_tl.canonical("editor_favorite") == "editor_favorite"


def test_merge_chain_and_cycle_do_not_loop() -> None:
    tl = timeline(declare("a", "01-01"), declare("b", "01-01"), merge("a", "b", "10-01"), merge("b", "a", "10-02"))
    assert tl.canonical("a") in ("a", "b") and tl.canonical("b") in ("a", "b")
    answer([say("a", "x", "09-01")], "a", tl)  # terminates


def test_issue_promote_and_promote_back() -> None:
    n1 = note("I'm allergic to peanuts", "09-01")
    n2 = note("nice weather today", "09-02")
    log = [say("allergy", "shellfish", "08-01"), n1, n2]
    reg = [declare("allergy", "01-01", "multi")]
    promoted = timeline(*reg, promote("allergy", "10-01", (n1, "peanuts")))
    out = beliefs(log, "allergy", promoted)
    assert [b.value for b in out] == ["shellfish", "peanuts"]
    p = out[1]
    assert p.observed_at == D("09-01") and p.event_id == n1.id and p.promoted_from == n1.id
    assert p.evidence == "I'm allergic to peanuts" and p.evidence_id == n1.id and p.stored_as == "note"
    # at the note's own instant, although the promote came later (names resolve at read time)
    assert answer(log, "allergy", promoted, "09-01") == ["shellfish", "peanuts"]
    assert answer(log, "allergy", promoted, "08-31") == ["shellfish"]
    assert answer(log, "note", promoted) == ["nice weather today"]
    [h] = [s for s in steps(log, "allergy", promoted) if s.event_id == n1.id]
    assert h.action == "promote" and h.value == "peanuts" and h.evidence == "I'm allergic to peanuts"
    back = timeline(*reg, promote("allergy", "10-01", (n1, "peanuts")), promote("note", "10-05", (n1, n1.value)))
    assert answer(log, "allergy", back) == ["shellfish"]
    assert answer(log, "note", back) == ["I'm allergic to peanuts", "nice weather today"]


def test_promoted_note_supersedes_under_single_at_its_own_instant() -> None:
    n = note("switched to emacs", "09-10")
    log = [say("editor", "vim", "09-01"), n, say("editor", "zed", "09-20")]
    tl = timeline(*EDITOR, promote("editor", "10-01", (n, "emacs")))
    [b] = beliefs(log, "editor", tl, "09-15")
    assert b.value == "emacs" and [p.value for p in b.replaced] == ["vim"]
    assert answer(log, "editor", tl) == ["zed"]


def test_promoted_note_into_an_excluding_predicate_excludes() -> None:
    # A promoted note reads as an assertion of predicate = value: it excludes like one.
    n = note("I can't stand mangoes", "09-10")
    log = [say("likes", "mangoes", "09-01"), n]
    tl = timeline(*LIKES, promote("dislikes", "10-01", (n, "mangoes")))
    assert answer(log, "dislikes", tl) == ["mangoes"]
    assert answer(log, "likes", tl, "09-05") == ["mangoes"]
    assert answer(log, "likes", tl) == []


def test_promoted_note_of_another_subject_is_ignored() -> None:
    n = note("I'm allergic to peanuts", "09-01", subject="bob")
    tl = timeline(declare("allergy", "01-01", "multi"), promote("allergy", "10-01", (n, "peanuts")))
    assert answer([n], "allergy", tl) == []
    assert answer([n], "allergy", tl, subject="bob") == ["peanuts"]


def test_retracting_a_promoted_value_under_the_typed_predicate() -> None:
    n = note("I'm allergic to peanuts", "09-01")
    tl = timeline(declare("allergy", "01-01", "multi"), promote("allergy", "10-01", (n, "peanuts")))
    log = [n, retract("allergy", "peanuts", "10-02")]
    assert answer(log, "allergy", tl, "10-01") == ["peanuts"]
    assert answer(log, "allergy", tl) == []


def test_fold_uses_no_clock_and_as_of_now_is_explicit() -> None:
    log = [say("editor", "vim", NOW + 10)]
    assert answer(log, "editor", timeline(*EDITOR), NOW) == []
    assert answer(log, "editor", timeline(*EDITOR), NOW + 10) == ["vim"]


@pytest.mark.parametrize("fold_version, withdrawn_at", [("recall-fold-v5", "09-10"), ("recall-fold-v4", "10-02")])
def test_history_and_fold_agree_for_exclusion_by_ordinary_redefine(fold_version, withdrawn_at) -> None:
    tl = Timeline(
        [
            declare("likes", "01-01", "multi"),
            declare("dislikes", "01-01", "multi"),
            redefine("dislikes", "10-01", "multi", excludes=("likes",)),
        ],
        fold_version=fold_version,
    )
    log = [say("likes", "mangoes", "09-01"), say("dislikes", "mangoes", "09-10"), say("dislikes", "mangoes", "10-02")]
    hist = history(log, SUBJECT, "likes", tl)
    assert [(s.action, s.after) for s in hist] == [("assert", ("mangoes",)), ("exclude", ())]
    assert hist[-1].at == D(withdrawn_at)
    assert fold(log, SUBJECT, "likes", tl, D(withdrawn_at) - 1) and not fold(log, SUBJECT, "likes", tl, D(withdrawn_at))


# --- replaced across pairs (issue 18) -------------------------------------------------------

PA = [
    declare("likes", "01-01", "multi", excludes=("dislikes",)),
    declare("dislikes", "01-01", "multi", excludes=("likes",)),
    declare("goal", "01-01", "multi"),
    declare("did", "01-01", "multi", historical=True),
    declare("regrets", "01-01", "multi", excludes=("did",)),
]
_LIKE = say("likes", "mangoes", "09-01")
_DISLIKE = say("dislikes", "mangoes", "09-10")
_GOAL = say("goal", "run a marathon", "09-01")
_DID = say("did", "run a marathon", "09-10", replaces=[("goal", "run a marathon"), ("goal", "learn piano")])
_DID_RETRACTION = retract("goal", "run a marathon", "09-10", caused_by=_DID.id)  # what remember appends with it


class ReplacedCase(NamedTuple):
    id: str
    predicate: str
    events: list
    when: str
    expect: list  # (value, [(predicate, value, event id)])


REPLACED_CASES = [
    ReplacedCase(
        "exclusion-lists-the-withdrawn-like",
        "dislikes",
        [_LIKE, _DISLIKE],
        "09-10",
        [("mangoes", [("likes", "mangoes", _LIKE.id)])],
    ),
    ReplacedCase("as-of-before-the-statement", "dislikes", [_LIKE, _DISLIKE], "09-09", []),
    ReplacedCase("nothing-held-there-nothing-listed", "dislikes", [_DISLIKE], "09-10", [("mangoes", [])]),
    ReplacedCase(
        "replaces-lists-the-goal-only-once",
        "did",
        [_GOAL, _DID, _DID_RETRACTION],
        "09-10",
        [("run a marathon", [("goal", "run a marathon", _GOAL.id)])],
    ),
    ReplacedCase(
        "replaces-without-its-retraction",
        "did",
        [_GOAL, _DID],
        "09-10",
        [("run a marathon", [("goal", "run a marathon", _GOAL.id)])],
    ),
    ReplacedCase(
        "a-restatement-keeps-the-correction",
        "dislikes",
        [_LIKE, _DISLIKE, say("dislikes", "Mangoes", "09-20")],
        "09-20",
        [("Mangoes", [("likes", "mangoes", _LIKE.id)])],
    ),
    ReplacedCase(
        "a-restatement-that-corrects-again-lists-the-new-correction",
        "dislikes",
        [_LIKE, _DISLIKE, say("likes", "mangoes", "09-15"), say("dislikes", "mangoes", "09-20")],
        "09-20",
        [("mangoes", [("likes", "mangoes", say("likes", "mangoes", "09-15").id)])],
    ),
    ReplacedCase(
        "historical-is-never-withdrawn-so-never-listed",
        "regrets",
        [say("did", "run a marathon", "09-01"), say("regrets", "run a marathon", "09-10")],
        "09-10",
        [("run a marathon", [])],
    ),
    ReplacedCase(
        "multi-valued-accumulates-and-replaces-nothing",
        "goal",
        [_GOAL, say("goal", "swim", "09-02")],
        "09-02",
        [("run a marathon", []), ("swim", [])],
    ),
]


@pytest.mark.parametrize("case", REPLACED_CASES, ids=[c.id for c in REPLACED_CASES])
def test_replaced_across_pairs(case: ReplacedCase) -> None:
    out = fold(case.events, SUBJECT, case.predicate, timeline(*PA), D(case.when))
    assert [(b.value, [(p.predicate, p.value, p.event_id) for p in b.replaced]) for b in out] == case.expect


def test_a_restatement_that_corrects_again_lists_only_the_new_correction() -> None:
    """One-way exclusion: the second dislikes is a restatement of a held value."""
    like2 = say("likes", "mangoes", "09-15")
    log = [_LIKE, _DISLIKE, like2, say("dislikes", "Mangoes", "09-20")]
    tl = timeline(*LIKES)
    [held_then] = fold(log, SUBJECT, "dislikes", tl, D("09-15"))
    assert [(p.predicate, p.event_id) for p in held_then.replaced] == [("likes", _LIKE.id)]
    [b] = fold(log, SUBJECT, "dislikes", tl, D("09-20"))
    assert (b.value, [(p.predicate, p.event_id) for p in b.replaced]) == ("Mangoes", [("likes", like2.id)])


def test_replaced_own_pair_is_named_and_a_v4_timeline_keeps_the_old_form() -> None:
    log = [say("editor", "vim", "09-01"), say("editor", "emacs", "09-02")]
    [b] = fold(log, SUBJECT, "editor", timeline(*EDITOR), D("09-03"))
    assert [(p.predicate, p.value) for p in b.replaced] == [("editor", "vim")]
    assert b.to_json()["replaced"][0]["predicate"] == "editor"
    old = Timeline(PA, fold_version="recall-fold-v4")
    [b] = fold([_LIKE, _DISLIKE], SUBJECT, "dislikes", old, D("09-10"))
    assert b.replaced == ()  # v4 listed only its own pair
    [b] = fold(log, SUBJECT, "editor", Timeline(EDITOR, fold_version="recall-fold-v4"), D("09-03"))
    assert "predicate" not in b.to_json()["replaced"][0]
