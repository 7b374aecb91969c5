"""governance: stage, preview, apply, and staleness, without any front end."""

from __future__ import annotations

import gc

import pytest

from recall_admin import governance
from recall_admin.plans import plan_from_json
from recall_engine.errors import PlanError, StalePlan

from .conftest import at, stager, values


@pytest.fixture
def editors(memory):
    for v, day in (("vim", "2026-09-01"), ("emacs", "2026-09-20"), ("zed", "2026-10-05")):
        memory.remember("user", "prefers_editor", v, at=at(day))
    return memory


def test_a_retroactive_redefine_previews_what_apply_gives(editors):
    plan = stager(editors).redefine("prefers_editor", cardinality="multi", retroactive=True)
    pv = governance.preview(editors, plan)
    change = next(c for c in pv.to_json()["impact"]["changes"] if c["subject"] == "user")
    assert pv.changes_answers
    governance.apply(editors, plan)
    assert values(editors, "user", "prefers_editor") == sorted(str(v) for v in change["after"])


def test_a_preview_folds_with_the_cycle_collector_paused_and_starts_it_again(editors):
    """What a preview reads and folds lives until it ends: a collection meanwhile would only walk it again."""
    plan = stager(editors).redefine("prefers_editor", cardinality="multi", retroactive=True)
    running = []
    assert gc.isenabled()
    governance.preview(editors, plan, progress=lambda read: running.append(gc.isenabled()))
    assert running == [False] and gc.isenabled()


def test_a_plan_whose_pairs_changed_since_is_stale(editors):
    plan = stager(editors).redefine("prefers_editor", cardinality="multi", retroactive=True)
    editors.remember("user", "prefers_editor", "helix", at=at("2026-10-20"))
    with pytest.raises(StalePlan):
        governance.apply(editors, plan)


def test_a_plan_round_trips_through_its_json_form(editors):
    plan = stager(editors).define("shell_used", cardinality="single", value_type="string")
    again = plan_from_json(plan.to_json(), "test")
    assert again.id == plan.id
    governance.apply(editors, again)
    assert editors.timeline().knows("shell_used")


def test_define_refuses_an_existing_name(editors):
    with pytest.raises(PlanError):
        stager(editors).define("prefers_editor", cardinality="single", value_type="string")
