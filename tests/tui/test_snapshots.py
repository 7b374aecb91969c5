"""One snapshot per screen (pytest-textual-snapshot). The store, the clock and the operator are
fixed (see conftest), so the SVGs are the same on every run; review the HTML report before
``--snapshot-update``."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable, Input

from .conftest import SIZE, idle, press, ready, steady, wait_for
from .test_console import confirm_apply
from .test_flows import choose_pair, staged, submit_form

SMALL = (80, 24)  # the smallest terminal docs/tui.md supports


async def history_as_of(pilot: Any) -> None:
    await ready(pilot)
    await choose_pair(pilot, "user", "lives_in")
    await press(pilot, "enter")
    await press(pilot, "a", *"2026-06-01", "enter")
    await idle(pilot)


async def plan_preview(pilot: Any) -> None:
    app = pilot.app
    await ready(pilot)
    await press(pilot, "6", "greater_than_sign")
    await wait_for(pilot, lambda: app.main.view("vocab").clusters)
    await press(pilot, "m")
    await submit_form(pilot, reason="same predicate")
    await staged(pilot)
    await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "plan-body", what="focus")
    await idle(pilot)


class TestPairsScreen:
    def test_first_screen(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_small_terminal(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)

    def test_search_results(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "slash", *"editor", "enter")
            await wait_for(pilot, lambda: pilot.app.main.view("pairs").hits)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


class TestHistoryScreen:
    def test_history_as_of(self, snap_compare: Any, make_app: Any) -> None:
        assert snap_compare(make_app(), terminal_size=SIZE, run_before=history_as_of)


class TestExplainScreen:
    def test_explain(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await choose_pair(pilot, "user", "likes")
            await press(pilot, "e")
            await wait_for(pilot, lambda: pilot.app.main.view("explain").data is not None)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


class TestDiffScreen:
    def test_diff(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            app = pilot.app
            await ready(pilot)
            await press(pilot, "4", "i", *"2026-06-01", "tab", *"2026-10-01")
            app.main.query_one("#diff-subject", Input).value = "user"
            await press(pilot, "enter")
            await wait_for(pilot, lambda: app.main.view("diff").changes)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


class TestRegistryScreen:
    def test_predicates(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            app = pilot.app
            await ready(pilot)
            await press(pilot, "5")
            view = app.main.view("registry")
            await wait_for(pilot, lambda: view.predicates)
            index = next(i for i, p in enumerate(view.predicates) if p["name"] == "likes")
            app.main.query_one("#predicates-table", DataTable).move_cursor(row=index)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_lint(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "5")
            await wait_for(pilot, lambda: pilot.app.main.view("registry").findings is not None)
            await press(pilot, "greater_than_sign", "greater_than_sign")
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


class TestQueuesScreen:
    def test_conflicts(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "6")
            await wait_for(pilot, lambda: pilot.app.main.view("conflicts").items)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_vocabulary(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "6", "greater_than_sign")
            await wait_for(pilot, lambda: pilot.app.main.view("vocab").clusters)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_notes(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "6", "greater_than_sign", "greater_than_sign")
            await wait_for(pilot, lambda: pilot.app.main.view("notes").clusters)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


class TestPlanTray:
    def test_preview(self, snap_compare: Any, make_app: Any) -> None:
        assert snap_compare(make_app(), terminal_size=SIZE, run_before=plan_preview)

    def test_confirm_apply(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await plan_preview(pilot)
            await press(pilot, "A")
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_stale_plan(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            from recall_engine.instants import parse_instant

            app = pilot.app
            await plan_preview(pilot)
            app.memory.remember("erin", "editor_preference", "nano", at=parse_instant("2026-11-01"))
            await confirm_apply(pilot)
            await wait_for(pilot, lambda: app.main.view("plan").stale is not None)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


class TestDialogs:
    def test_help(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "question_mark")
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_redefine_form(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "5")
            await wait_for(pilot, lambda: pilot.app.main.view("registry").predicates)
            await press(pilot, "e")
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)

    def test_store_that_cannot_open(self, snap_compare: Any) -> None:
        from recall_tui.app import RecallApp

        async def run_before(pilot: Any) -> None:
            await wait_for(pilot, lambda: pilot.app.errors)
            await idle(pilot)

        app = steady(RecallApp("sqlite:////nonexistent-recall-folder/recall.db", operator="tester", tune_gc=False))
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class TestSmallTerminal:
    """Every dialog and view at 80x24: scrollable, the focused field and the buttons on screen."""

    def test_define_form_tabbed_to_its_buttons(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "5")
            await wait_for(pilot, lambda: pilot.app.main.view("registry").all_predicates)
            await press(pilot, "d")
            await wait_for(pilot, lambda: pilot.app.screen.query("#submit"))
            while pilot.app.focused is None or pilot.app.focused.id != "submit":
                await press(pilot, "tab")
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)

    def test_promote_preview_keeps_the_notes_table(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            app = pilot.app
            await ready(pilot)
            await press(pilot, "6", "greater_than_sign", "greater_than_sign")
            await wait_for(pilot, lambda: app.main.view("notes").clusters)
            await press(pilot, "p")
            await submit_form(pilot, reason="shells")
            await staged(pilot)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)

    def test_registry(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "5")
            await wait_for(pilot, lambda: pilot.app.main.view("registry").all_predicates)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)

    def test_conflicts(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await ready(pilot)
            await press(pilot, "6")
            await wait_for(pilot, lambda: pilot.app.main.view("conflicts").items)
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)

    def test_apply_dialog(self, snap_compare: Any, make_app: Any) -> None:
        async def run_before(pilot: Any) -> None:
            await plan_preview(pilot)
            await press(pilot, "A")
            await idle(pilot)

        assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)
