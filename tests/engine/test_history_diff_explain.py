"""History, diff and explain (docs/history-diff-explain.md): pure readings of folds."""

from __future__ import annotations

import pytest

from recall_engine.fold import fold
from recall_engine.history import change_of, diff_answers, explain, history, rules_for
from recall_engine.registry import Promotion, RegistryRecord

from .helpers import (
    NOW,
    SUBJECT,
    D,
    answer,
    declare,
    define,
    merge,
    note,
    promote,
    redefine,
    retract,
    retract_all,
    say,
    split,
    timeline,
)

REG = timeline(
    declare("likes", "01-01", "multi"),
    declare("dislikes", "01-01", "multi", excludes=("likes",)),
    declare("works_in", "01-01"),
    declare("editor", "01-01"),
)


def _log():
    return [
        say("likes", "mangoes", "09-01", evidence="I love mangoes"),
        say("likes", "kiwis", "09-02"),
        say("likes", "figs", "09-03"),
        say("dislikes", "mangoes", "09-10"),
        say("works_in", "acme", "09-11", replaces=[("likes", "kiwis")]),
        retract("likes", "figs", "09-12", caused_by="m-0123"),
        say("dislikes", "plums", "09-13"),  # excludes nothing held: not a step of likes
        say("works_in", "initech", "09-14", replaces=[("likes", "plums")]),  # withdrew nothing
        retract_all("likes", "09-20"),
        say("likes", "Mangoes", "09-21"),
    ]


# --- history -------------------------------------------------------------------------


def test_history_steps_oldest_first_with_before_after_withdrawn() -> None:
    log = _log()
    hist = history(log, SUBJECT, "likes", REG)
    assert [(s.action, s.value, s.before, s.after, s.withdrawn) for s in hist] == [
        ("assert", "mangoes", (), ("mangoes",), ()),
        ("assert", "kiwis", ("mangoes",), ("mangoes", "kiwis"), ()),
        ("assert", "figs", ("mangoes", "kiwis"), ("mangoes", "kiwis", "figs"), ()),
        ("exclude", "mangoes", ("mangoes", "kiwis", "figs"), ("kiwis", "figs"), ("mangoes",)),
        ("replaces", None, ("kiwis", "figs"), ("figs",), ("kiwis",)),
        ("retract", "figs", ("figs",), (), ("figs",)),
        ("retract_all", None, (), (), ()),
        ("assert", "Mangoes", (), ("Mangoes",), ()),
    ]
    assert [s.stored_as for s in hist][3:5] == ["dislikes", "works_in"]
    assert [s.via for s in hist][3:5] == ["dislikes", "works_in"]
    assert hist[0].evidence == "I love mangoes" and hist[5].caused_by == "m-0123"
    assert [s.event_id for s in hist] == [e.id for e in log if e.id in {s.event_id for s in hist}]


def test_each_history_step_agrees_with_an_as_of_read() -> None:
    log = _log()
    for s in history(log, SUBJECT, "likes", REG):
        assert answer(log, "likes", REG, s.at) == list(s.after)
        assert answer(log, "likes", REG, s.at - 1) == list(s.before)


def test_history_step_json() -> None:
    [s] = history([say("editor", "vim", "2026-09-01T10:00:00.5Z")], SUBJECT, "editor", REG)
    assert s.to_json() == {
        "at": "2026-09-01T10:00:00.5Z",
        "event_id": s.event_id,
        "action": "assert",
        "value": "vim",
        "stored_as": "editor",
        "before": [],
        "after": ["vim"],
        "withdrawn": [],
        "source": "user_stated",
        "evidence": "",
        "via": "",
        "caused_by": "",
        "replaced": [],
        "recorded_at": None,  # an event no store has appended has no recorded instant
    }


def test_history_of_a_merged_pair_keeps_each_stored_name() -> None:
    tl = timeline(
        declare("favorite_editor", "01-01"),
        define("editor_favorite", "02-01"),
        merge("editor_favorite", "favorite_editor", "10-01"),
    )
    log = [say("favorite_editor", "helix", "09-01"), say("editor_favorite", "zed", "09-05")]
    hist = history(log, SUBJECT, "favorite_editor", tl)
    assert [(s.stored_as, s.after) for s in hist] == [("favorite_editor", ("helix",)), ("editor_favorite", ("zed",))]


def test_history_of_a_promoted_note() -> None:
    n = note("I'm allergic to peanuts", "09-01")
    tl = timeline(declare("allergy", "01-01", "multi"), promote("allergy", "10-01", (n, "peanuts")))
    [s] = history([n], SUBJECT, "allergy", tl)
    assert (s.action, s.value, s.stored_as, s.evidence, s.after) == (
        "promote",
        "peanuts",
        "note",
        "I'm allergic to peanuts",
        ("peanuts",),
    )
    # seen from the note's side, it stays a step: where it went, never held here
    [away] = history([n], SUBJECT, "note", tl)
    assert (away.action, away.value, away.via, away.before, away.after) == (
        "promoted_to",
        "I'm allergic to peanuts",
        "allergy",
        (),
        (),
    )
    assert away.promoted_to is not None and away.promoted_to[:2] == ("allergy", "peanuts")
    assert away.describe().startswith("promoted to allergy = 'peanuts' by registry event m-")
    assert away.to_json()["promoted_to"]["predicate"] == "allergy"


def test_history_of_a_promoted_note_names_the_plan() -> None:
    n = note("I use fish", "09-01")
    rec = RegistryRecord("promote", "shell", notes=(Promotion(n.id, SUBJECT, "fish"),), plan="p-123").to_event(
        D("10-01")
    )
    tl = timeline(declare("shell", "01-01"), rec)
    [away] = history([n], SUBJECT, "note", tl)
    assert away.describe() == "promoted to shell = 'fish' by plan p-123"
    x = explain([n], SUBJECT, "note", tl, D("11-01"))
    assert [(r.value, r.held, r.reason) for r in x.reasons] == [
        ("I use fish", False, "promoted to shell = 'fish' by plan p-123")
    ]


# --- diff ----------------------------------------------------------------------------


def test_diff_began_and_stopped_by_value_identity() -> None:
    before = {("user", "likes"): ["mangoes", "kiwis"], ("user", "editor"): ["vim"], ("bob", "editor"): ["zed"]}
    after = {("user", "likes"): ["Kiwis", "figs"], ("user", "editor"): ["VIM"], ("ann", "editor"): ["nano"]}
    changes = diff_answers(before, after)
    assert [(c.subject, c.predicate, c.began, c.stopped) for c in changes] == [
        ("ann", "editor", ("nano",), ()),
        ("bob", "editor", (), ("zed",)),
        ("user", "likes", ("figs",), ("mangoes",)),
    ]
    assert changes[2].to_json() == {
        "subject": "user",
        "predicate": "likes",
        "before": ["mangoes", "kiwis"],
        "after": ["Kiwis", "figs"],
        "began": ["figs"],
        "stopped": ["mangoes"],
    }


@pytest.mark.parametrize(
    "before,after,began,stopped",
    [
        ([8000], [8000.0], None, None),
        (["vim"], ["Vim"], None, None),
        ([], [], None, None),
        ([1], ["1"], ("1",), (1,)),
        ([True], [1], (1,), (True,)),
        (["vim"], [], (), ("vim",)),
    ],
)
def test_change_of(before, after, began, stopped) -> None:
    c = change_of("user", "p", before, after)
    if began is None:
        assert c is None
    else:
        assert (c.began, c.stopped) == (began, stopped)


def test_diff_between_two_instants_of_the_editor_story() -> None:
    tl = timeline(declare("editor", "01-01"))
    log = [say("editor", "vim", "09-01"), say("editor", "emacs", "09-20"), say("editor", "zed", "10-05")]

    def answers(t):
        return {(SUBJECT, "editor"): [b.value for b in fold(log, SUBJECT, "editor", tl, t)]}

    [c] = diff_answers(answers(D("09-25")), answers(NOW))
    assert (c.before, c.after, c.began, c.stopped) == (("emacs",), ("zed",), ("zed",), ("emacs",))
    assert diff_answers(answers(D("09-20")), answers(D("09-25"))) == []


# --- explain -------------------------------------------------------------------------


def test_explain_gives_beliefs_reasons_rules_and_history() -> None:
    log = _log()
    x = explain(log, SUBJECT, "likes", REG, NOW)
    assert [b.value for b in x.beliefs] == ["Mangoes"] == answer(log, "likes", REG)
    reasons = {r.value.lower(): r for r in x.reasons}
    assert reasons["mangoes"].held and reasons["mangoes"].reason == "stated"
    assert not reasons["kiwis"].held and reasons["kiwis"].reason.startswith("withdrawn by replaces of works_in")
    assert not reasons["figs"].held and reasons["figs"].reason == "retracted (caused by m-0123)"
    assert [r.op for r in x.rules] == ["declare", "declare"]
    assert [r.name for r in x.rules] == ["likes", "dislikes"]
    assert x.rules[1].change == "dislikes excludes likes: multi-valued string; excludes likes"
    assert [s.to_json() for s in x.steps] == [s.to_json() for s in history(log, SUBJECT, "likes", REG)]
    assert {e.id for e in x.events} >= {s.event_id for s in x.steps}
    assert all(e.predicate != "editor" for e in x.events)


def test_explain_as_of_an_earlier_instant() -> None:
    log = _log()
    x = explain(log, SUBJECT, "likes", REG, D("09-10"))
    assert [b.value for b in x.beliefs] == ["kiwis", "figs"] == answer(log, "likes", REG, "09-10")
    reasons = {r.value: r for r in x.reasons}
    assert (
        reasons["mangoes"].reason
        == "withdrawn by exclusion: dislikes excludes likes (the statement dislikes 'mangoes')"
    )
    assert reasons["mangoes"].at == D("09-10") and not reasons["mangoes"].held


def test_explain_single_valued_replacement_and_restating() -> None:
    tl = timeline(declare("editor", "01-01"))
    log = [say("editor", "vim", "09-01"), say("editor", "emacs", "09-20"), say("editor", "emacs", "09-25")]
    x = explain(log, SUBJECT, "editor", tl, NOW)
    r = {v.value: v for v in x.reasons}
    assert r["vim"].reason == "replaced by 'emacs' (editor was single-valued then)" and not r["vim"].held
    assert r["emacs"].reason == "restated; replaced 'vim'" and r["emacs"].event_id == log[2].id
    assert x.rules[0].to_json()["cardinality"] == "single"


def test_explain_promoted_note() -> None:
    n = note("I'm allergic to peanuts", "09-01")
    tl = timeline(declare("allergy", "01-01", "multi"), promote("allergy", "10-01", (n, "peanuts")))
    x = explain([n], SUBJECT, "allergy", tl, NOW)
    assert x.reasons[0].reason == f"promoted from note {n.id}"
    assert [r.change for r in x.rules] == ["declared: multi-valued string", "1 note(s) promoted into allergy"]


def test_explain_rules_of_merge_then_split_oldest_first() -> None:
    tl = timeline(
        declare("favorite_editor", "01-01"),
        define("editor_favorite", "02-01"),
        merge("editor_favorite", "favorite_editor", "10-01"),
        split("editor_favorite", "10-10"),
        declare("shell", "01-02"),
    )
    rules = rules_for("favorite_editor", tl)
    assert [(r.op, r.name) for r in rules] == [
        ("declare", "favorite_editor"),
        ("merge", "editor_favorite"),
        ("split", "editor_favorite"),
    ]
    assert [r.at for r in rules] == sorted(r.at for r in rules)
    assert rules[1].to_json()["cardinality"] is None


def test_explain_rules_describe_redefines() -> None:
    tl = timeline(
        define("allergy", "01-01"),
        redefine("allergy", "05-01", "multi", retroactive=True),
        redefine("allergy", "06-01", "single"),
        define("allergy", "07-01", "multi"),
    )
    assert [r.change for r in rules_for("allergy", tl)] == [
        "defined on first use: single-valued string",
        "redefined for its whole history: multi-valued string",
        "redefined from this instant: single-valued string",
    ]  # the second define is ignored, so it decides nothing and is not listed


def test_explain_of_a_rename_lists_both_names() -> None:
    tl = timeline(declare("editor", "01-01"), declare("favorite_editor", "06-01", aliases=("editor",)))
    assert [r.name for r in rules_for("editor", tl)] == ["editor", "favorite_editor"]
    x = explain([say("editor", "vim", "03-01")], SUBJECT, "editor", tl, NOW)
    assert x.predicate == "favorite_editor" and x.beliefs[0].stored_as == "editor"
