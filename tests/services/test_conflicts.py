"""conflicts: found, confirmed (one conflict, never a group), excluded, dismissed."""

from __future__ import annotations

import pytest

from recall_admin import conflicts, governance
from recall_engine.errors import NotFound, PlanError

from .conftest import OPERATOR, at, stager, values


@pytest.fixture
def goals(memory):
    for who in ("dan", "eve"):
        memory.remember(who, "goal", "run a marathon", at=at("2026-02-10"))
        memory.remember(who, "did", "run a marathon", at=at("2026-10-12"))
    return memory


def test_one_value_under_two_predicates_is_a_conflict_per_subject_in_one_group(goals):
    listing = conflicts.find_conflicts(goals)
    assert sorted(c.subject for c in listing.conflicts) == ["dan", "eve"]
    assert {tuple(c.predicates) for c in listing.conflicts} == {("did", "goal")}
    assert len(listing.groups) == 1 and listing.groups[0].count == 2


def test_confirm_keeps_one_predicate_for_one_conflict(goals):
    c = next(c for c in conflicts.find_conflicts(goals).conflicts if c.subject == "dan")
    plan = conflicts.confirm(stager(goals), c.id, "did")
    assert governance.preview(goals, plan).changes_answers
    governance.apply(goals, plan)
    assert values(goals, "dan", "goal") == [] and values(goals, "dan", "did") == ["run a marathon"]
    assert [x.subject for x in conflicts.find_conflicts(goals).conflicts] == ["eve"]


def test_confirm_refuses_a_group_of_conflicts(goals):
    group = conflicts.find_conflicts(goals).groups[0]
    with pytest.raises(PlanError) as e:
        conflicts.confirm(stager(goals), group.id, "did")
    assert str(e.value.message) == f"{group.id} is a group of 2 conflicts: confirm takes one conflict id (c-...)"


def test_confirm_refuses_a_predicate_outside_the_conflict_and_an_unknown_id(goals):
    c = conflicts.find_conflicts(goals).conflicts[0]
    with pytest.raises(PlanError, match="is not one of the predicates of conflict"):
        conflicts.confirm(stager(goals), c.id, "likes")
    with pytest.raises(NotFound, match="no conflict or conflict group 'c-nope' is open now"):
        conflicts.confirm(stager(goals), "c-nope", "did")


def test_exclude_settles_the_whole_group_and_dismiss_hides_a_conflict(goals):
    listing = conflicts.find_conflicts(goals)
    dan = next(c for c in listing.conflicts if c.subject == "dan")
    conflicts.dismiss(goals, [dan], OPERATOR, "a goal that was done")
    assert [c.subject for c in conflicts.find_conflicts(goals).conflicts] == ["eve"]
    assert len(conflicts.find_conflicts(goals, include_dismissed=True).conflicts) == 2
    found, _ = conflicts.lookup(goals, listing.groups[0].id)
    governance.apply(goals, conflicts.exclude_plan(stager(goals), found, by="did"))
    assert conflicts.find_conflicts(goals, include_dismissed=True).conflicts == []
