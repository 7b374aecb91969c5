"""The memory API on every backend: writes, reads, and every validation error a user sees."""

from __future__ import annotations

import pytest

from recall_engine.errors import InvalidInput, LimitExceeded, UnknownPredicate
from recall_engine.instants import parse_instant as T
from recall_engine.memory import Memory
from recall_engine.search import search

from .conftest import NOW, declare


def values(beliefs):
    return [b.value for b in beliefs]


def test_editor_story_history_and_as_of(memory: Memory):
    for v, day in [("vim", "2026-09-01"), ("emacs", "2026-09-20"), ("zed", "2026-10-05")]:
        memory.remember("User", "prefers_editor", v, at=T(day))
    assert values(memory.read_pair("user", "prefers_editor")) == ["zed"]
    then = memory.read_pair("user", "prefers_editor", T("2026-09-25"))
    assert values(then) == ["emacs"]
    assert [p.value for p in then[0].replaced] == ["vim"]
    s, p, steps = memory.history("user", "prefers_editor")
    assert (s, p) == ("user", "prefers_editor")
    assert [(st.action, st.value, list(st.before), list(st.after)) for st in steps] == [
        ("assert", "vim", [], ["vim"]),
        ("assert", "emacs", ["vim"], ["emacs"]),
        ("assert", "zed", ["emacs"], ["zed"]),
    ]


def test_remember_reports_displaced_and_already_known(memory: Memory):
    memory.remember("user", "prefers_editor", "vim", at=T("2026-09-01"))
    r = memory.remember("user", "prefers_editor", "emacs", at=T("2026-09-02"))
    assert not r.already_known and values(r.displaced) == ["vim"]
    again = memory.remember("user", "prefers_editor", "EMACS", at=T("2026-09-03"))
    assert again.already_known and again.events == []
    assert again.stored.value == "emacs"


def test_replaces_withdraws_across_predicates_and_reports_unreplaced(memory: Memory):
    memory.remember("user", "goal", "run a marathon", at=T("2026-02-01"))
    r = memory.remember(
        "user",
        "did",
        "run a marathon",
        at=T("2026-05-01"),
        replaces=[("goal", "run a marathon"), ("goal", "learn piano")],
    )
    assert [(b.predicate, b.value) for b in r.displaced] == [("goal", "run a marathon")]
    assert [(u.predicate, u.value, u.reason) for u in r.unreplaced] == [("goal", "learn piano", "never believed")]
    retractions = [e for e in r.events if e.retraction]
    assert len(retractions) == 1 and retractions[0].caused_by == r.stored.event_id
    assert memory.read_pair("user", "goal") == []
    assert values(memory.read_pair("user", "did")) == ["run a marathon"]


def test_replaces_of_a_historical_or_later_belief_is_unreplaced(memory: Memory):
    memory.remember("user", "did", "swim", at=T("2026-02-01"))
    memory.remember("user", "goal", "climb", at=T("2026-06-01"))
    r = memory.remember("user", "goal", "swim", at=T("2026-03-01"), replaces=[("did", "swim"), ("goal", "climb")])
    reasons = {u.value: u.reason for u in r.unreplaced}
    assert "historical" in reasons["swim"]
    assert reasons["climb"] == "stated later than this statement"


def test_exclusion_withdraws_and_is_reported(memory: Memory):
    memory.remember("user", "likes", "mangoes", at=T("2026-03-01"))
    r = memory.remember("user", "dislikes", "mangoes", at=T("2026-04-01"))
    assert [(b.predicate, b.value) for b in r.displaced] == [("likes", "mangoes")]
    assert memory.read_pair("user", "likes") == []
    assert values(memory.read_pair("user", "likes", T("2026-03-15"))) == ["mangoes"]


def test_elsewhere_on_reads(memory: Memory):
    memory.remember("user", "goal", "run a marathon", at=T("2026-02-01"))
    memory.remember("user", "did", "run a marathon", at=T("2026-05-01"))
    (goal,) = memory.read_pair("user", "goal")
    assert [(e.predicate, e.value) for e in goal.elsewhere] == [("did", "run a marathon")]
    prof = {b.predicate: b for b in memory.profile("user")}
    assert [e.predicate for e in prof["did"].elsewhere] == ["goal"]


def test_typed_values_are_parsed_and_stored_in_their_form(memory: Memory):
    assert memory.remember("acme", "deal_value", 8000.0).stored.value == 8000
    assert memory.remember("acme", "budget_confirmed", True).stored.value is True
    assert memory.remember("acme", "deal_stage", " WON ").stored.value == "won"
    assert memory.remember("acme", "close_date", "2026-10-01T09:00:00+02:00").stored.value == "2026-10-01T07:00:00Z"
    assert memory.remember("bob", "works_at", "  Acme ").stored.value == "acme"


@pytest.mark.parametrize(
    "call, error, message",
    [
        (dict(subject="  ", predicate="prefers_editor", value="vim"), InvalidInput, "subject must not be empty"),
        (
            dict(subject="u", predicate="Prefers Editor", value="vim"),
            InvalidInput,
            "predicate must be snake_case (e.g. prefers_editor) of at most 64 bytes, got 'Prefers Editor'",
        ),
        (
            dict(subject="u", predicate="favourite_editor", value="vim"),
            UnknownPredicate,
            "predicate 'favourite_editor' is not in the registry; registered predicates are: budget_confirmed, close_date",
        ),
        (
            dict(subject="u", predicate="deal_value", value="lots"),
            InvalidInput,
            "deal_value expects a number value, got string 'lots'",
        ),
        (
            dict(subject="u", predicate="budget_confirmed", value="yes"),
            InvalidInput,
            "budget_confirmed expects a boolean value, got string 'yes'",
        ),
        (
            dict(subject="u", predicate="deal_stage", value="maybe"),
            InvalidInput,
            "deal_stage expects one of: lead, qualified, won, lost; got 'maybe'",
        ),
        (
            dict(subject="u", predicate="close_date", value="next week"),
            InvalidInput,
            "close_date expects a date such as 2026-10-01 or an RFC3339 time, got 'next week'",
        ),
        (
            dict(subject="u", predicate="prefers_editor", value="vim", confidence=1.5),
            InvalidInput,
            "confidence must be in [0, 1], got 1.5",
        ),
        (
            dict(subject="u", predicate="prefers_editor", value="vim", source="rumour"),
            InvalidInput,
            'source must be "user_stated", "agent_inferred", "tool_result", or "operator", got \'rumour\'',
        ),
        (
            dict(subject="u", predicate="prefers_editor", value="vim", kind="opinion"),
            InvalidInput,
            'kind must be "fact" or "preference", got \'opinion\'',
        ),
        (
            dict(subject="u", predicate="prefers_editor", value="vim", evidence="x" * 2049),
            InvalidInput,
            "evidence must be UTF-8 of at most 2048 bytes",
        ),
        (
            dict(subject="u", predicate="prefers_editor", value="vim", at=NOW + 3600 * 10**9),
            InvalidInput,
            "is in the future; a statement can only be recorded as made now or earlier",
        ),
        (dict(subject="u", predicate="prefers_editor", value="   "), InvalidInput, "value must not be empty"),
        (
            dict(subject="recall:registry", predicate="prefers_editor", value="vim"),
            InvalidInput,
            "is reserved for the engine's own records",
        ),
    ],
)
def test_validation_errors_say_what_is_wrong_and_write_nothing(memory: Memory, call, error, message):
    before = memory.store.position()
    with pytest.raises(error) as exc:
        memory.remember(**call)
    assert message in str(exc.value)
    assert memory.store.position() == before


def test_unknown_predicate_advises_note(memory: Memory):
    with pytest.raises(UnknownPredicate) as exc:
        memory.remember("u", "shoe_size", "42")
    assert 'remember it with predicate "note" and the statement as the value' in str(exc.value)


def test_forget_targeted_all_and_nothing(memory: Memory):
    for t in ("python", "rust", "go"):
        memory.remember("user", "uses_technology", t, at=T("2026-03-01"))
    assert values(memory.forget("user", "uses_technology", "RUST")) == ["rust"]
    assert values(memory.read_pair("user", "uses_technology")) == ["python", "go"]
    pos = memory.store.position()
    assert memory.forget("user", "uses_technology", "cobol") == []
    assert memory.store.position() == pos
    assert values(memory.forget("user", "uses_technology", all_values=True)) == ["python", "go"]
    assert memory.read_pair("user", "uses_technology") == []
    with pytest.raises(InvalidInput, match="exactly one of a value or --all"):
        memory.forget("user", "uses_technology")


def test_open_vocabulary_defines_and_matches(store, clock):
    m = Memory(store, now=clock)
    declare(m, open_vocabulary=True)
    r = m.remember("user", "Favorite Editor", "helix")  # matched into prefers_editor
    assert r.stored.predicate == "prefers_editor" and r.stored.stored_as == "favorite_editor"
    m.remember("user", "shoe size", 42)
    tl = m.timeline()
    assert tl.definition("shoe_size").value_type == "number"
    assert tl.merged_into("favorite_editor") == "prefers_editor"
    with pytest.raises(InvalidInput, match="shoe_size expects a number value"):
        m.remember("user", "shoe_size", "large")


def test_diff_between_instants(memory: Memory):
    memory.remember("user", "prefers_editor", "vim", at=T("2026-09-01"))
    memory.remember("user", "prefers_editor", "zed", at=T("2026-10-05"))
    memory.remember("user", "uses_technology", "rust", at=T("2026-09-10"))
    changes = memory.diff(T("2026-09-05"), T("2026-11-01"), subject="user")
    got = {(c.predicate, c.began, c.stopped) for c in changes}
    assert got == {("prefers_editor", ("zed",), ("vim",)), ("uses_technology", ("rust",), ())}


def test_explain_names_rules_and_reasons(memory: Memory):
    memory.remember("user", "prefers_editor", "vim", at=T("2026-09-01"))
    memory.remember("user", "prefers_editor", "zed", at=T("2026-10-05"))
    x = memory.explain("user", "prefers_editor")
    assert values(x.beliefs) == ["zed"]
    assert [r.op for r in x.rules] == ["declare"]
    reasons = {r.value: r.reason for r in x.reasons}
    assert reasons["vim"].startswith("replaced by 'zed'")
    assert reasons["zed"].startswith("stated")


def test_search_answers_with_the_current_value(memory: Memory):
    memory.remember("user", "prefers_editor", "vim", at=T("2026-09-01"), evidence="I love vim keybindings")
    memory.remember("user", "prefers_editor", "zed", at=T("2026-10-05"))
    memory.remember("user", "uses_technology", "kubernetes", at=T("2026-10-05"))
    hits = search(memory, "vim keybindings", limit=5)
    assert hits and (hits[0].predicate, hits[0].value) == ("prefers_editor", "zed")


def test_pair_history_limit_is_refused_not_truncated(memory: Memory, monkeypatch):
    import recall_engine.memory as mem

    monkeypatch.setattr(mem, "MAX_PAIR_EVENTS", 3)
    for i in range(3):
        memory.remember("user", "uses_technology", f"t{i}", at=T("2026-03-01") + i)
    with pytest.raises(
        LimitExceeded, match="the pair user/uses_technology has 3 events and the limit is 3; the write is refused"
    ):
        memory.remember("user", "uses_technology", "t9")
    # restating a held value on a full pair is not new information: already known, nothing written
    pos = memory.store.position()
    r = memory.remember("user", "uses_technology", "T1")
    assert r.already_known and r.events == [] and memory.store.position() == pos
    assert [b.value for b in memory.read_pair("user", "uses_technology")] == ["t0", "t1", "t2"]


def test_a_replaces_that_would_overfill_the_other_pair_is_refused(memory: Memory, monkeypatch):
    import recall_engine.memory as mem

    monkeypatch.setattr(mem, "MAX_PAIR_EVENTS", 3)
    for i in range(3):
        memory.remember("user", "goal", f"g{i}", at=T("2026-03-01") + i)
    pos = memory.store.position()
    with pytest.raises(LimitExceeded, match="the pair user/goal has 3 events"):
        memory.remember("user", "did", "g1", replaces=[("goal", "g1")])
    assert memory.store.position() == pos  # nothing written
