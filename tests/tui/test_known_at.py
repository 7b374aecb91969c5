"""The console's known-at control (K) beside as of, honoured by history, explain and
diff, and g on a history step: the answer as given then (docs/history-diff-explain.md)."""

from __future__ import annotations

from typing import Any

import pytest

from recall_engine.instants import format_rfc3339, parse_instant
from recall_engine.memory import Memory
from recall_engine.storage import open_backend

from .conftest import SIZE, idle, press, ready, run, screen_text, wait_for
from .test_flows import choose_pair

PORTO_SAID = parse_instant("2026-05-15T09:00:00Z")


@pytest.fixture
def corrected(store_url: str) -> int:
    """A backdated lives_in statement recorded after the demo; returns the last instant
    the demo was recorded at (a read known then has not seen the correction)."""
    backend = open_backend(store_url)
    try:
        store = backend.store("memories")
        before = max(e.recorded_at for e in store.all_events())
        Memory(store).remember("user", "lives_in", "Porto", at=PORTO_SAID)
    finally:
        backend.close()
    return before


def test_known_at_reads_history_and_explain_as_a_read_then(make_app: Any, corrected: int) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            assert app.main.query_one("#known-at").display is False  # shown once asked for
            await choose_pair(pilot, "user", "lives_in")
            await press(pilot, "enter")
            history = app.main.view("history")
            await wait_for(pilot, lambda: history.data is not None)
            assert "Porto" in [s.value for s in history.data.steps]
            await press(pilot, "K")
            assert app.focused.id == "known-at" and app.main.query_one("#known-at").display is True
            app.focused.value = str(corrected)  # nanoseconds are not an instant: refused, nothing changes
            await press(pilot, "enter")
            assert app.known_at is None
            app.main.query_one("#known-at").value = ""
            app.main.query_one("#known-at").focus()
            await press(pilot, *format_rfc3339(corrected), "enter")
            await wait_for(pilot, lambda: app.known_at == corrected, what="the known-at instant")
            await wait_for(pilot, lambda: "Porto" not in [s.value for s in history.data.steps], what="the re-read")
            title = str(app.main.query_one("#history-title").render())
            assert "recorded by" in title
            await press(pilot, "e")
            explain = app.main.view("explain")
            await wait_for(pilot, lambda: explain.data is not None and "known at" in str(
                app.main.query_one("#explain-title").render()
            ))  # fmt: skip
            then = Memory(app.memory.store).explain("user", "lives_in", known_at=corrected)
            assert explain.data.explanation.beliefs == then.beliefs
            await press(pilot, "n")  # back to now: both instants cleared
            await wait_for(pilot, lambda: app.known_at is None and app.as_of is None)

    run(scenario())


async def g_on_the_porto_step(pilot: Any) -> int:
    """Open user · lives_in's history, highlight the backdated Porto step and press g; returns the step's
    recorded instant."""
    app = pilot.app
    await choose_pair(pilot, "user", "lives_in")
    await press(pilot, "enter")
    history = app.main.view("history")
    await wait_for(pilot, lambda: history.data is not None)
    porto = next(i for i, s in enumerate(history.data.steps) if s.value == "Porto")
    table = app.main.query_one("#history-table")
    table.focus()
    table.cursor_row = porto
    recorded = history.data.steps[porto].recorded_at
    await press(pilot, "g")
    return recorded


def test_g_on_a_history_step_explains_the_answer_given_then(make_app: Any, corrected: int) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            recorded = await g_on_the_porto_step(pilot)
            assert recorded is not None and recorded > corrected
            await wait_for(pilot, lambda: app.main.active == "explain", what="the explain view")
            assert (app.known_at, app.as_of) == (recorded, recorded)
            explain = app.main.view("explain")
            await wait_for(pilot, lambda: explain.data is not None and explain.data.explanation.at == recorded)
            then = Memory(app.memory.store).read_pair("user", "lives_in", known_at=recorded)
            assert [b.value for b in explain.data.explanation.beliefs] == [b.value for b in then]
            assert app.main.query_one("#known-at").display is True

    run(scenario())


def test_diff_compares_as_known_at_the_known_at_instant(make_app: Any, corrected: int) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            app.known_at = corrected
            await press(pilot, "4")
            diff = app.main.view("diff")
            await wait_for(pilot, lambda: diff.known_at == corrected, what="the diff's selection")
            start, end = parse_instant("2026-05-01"), parse_instant("2026-06-01")
            diff.query_one("#diff-from").value = "2026-05-01"
            diff.query_one("#diff-to").value = "2026-06-01"
            diff.query_one("#diff-subject").value = "user"
            await press(pilot, "c")
            memory = Memory(app.memory.store)
            want = memory.diff(start, end, "user", known_at=corrected)
            assert want != memory.diff(start, end, "user")  # the correction changes the answer
            await wait_for(pilot, lambda: diff.changes == want, what="the known-at diff")
            assert "known at" in str(diff.query_one("#diff-summary").render())

    run(scenario())


def test_plan_preview_compares_with_what_was_answered_at_a_known_at_instant(make_app: Any, corrected: int) -> None:
    """A redefine previewed as of June 1st, beside what a read known at ``corrected`` answered about June
    1st: Berlin then (the backdated Porto was not recorded yet), Porto before the plan now."""
    from textual.widgets import DataTable

    from .test_flows import staged, submit_form

    june = parse_instant("2026-06-01")

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await press(pilot, "5")
            registry = app.main.view("registry")
            await wait_for(pilot, lambda: registry.predicates, what="the predicates")
            index = next(i for i, p in enumerate(registry.predicates) if p["name"] == "lives_in")
            app.main.query_one("#predicates-table", DataTable).move_cursor(row=index)
            await press(pilot, "e")
            await submit_form(pilot, cardinality="multi", retroactive=True)
            tray = await staged(pilot)
            await press(pilot, "c", *"2026-06-01", "enter")
            await wait_for(pilot, lambda: tray.compare_at == june and tray.preview.impact.changes[0].before_as_of)
            await press(pilot, "k")
            assert app.focused.id == "plan-known-at"
            await press(pilot, *"not a time", "enter")  # refused with the parser's words; nothing read
            await wait_for(pilot, lambda: app.errors, what="the error")
            assert "known at" in app.errors[-1][1] and tray.known_at is None and tray.selected.answered is None
            app.focused.value = ""
            await press(pilot, *format_rfc3339(corrected), "enter")
            await wait_for(pilot, lambda: tray.selected.answered is not None, what="the answers given then")
            assert tray.known_at == corrected
            memory = Memory(app.memory.store)
            then = [b.value for b in memory.read_pair("user", "lives_in", june, known_at=corrected)]
            now = [b.value for b in memory.read_pair("user", "lives_in", june)]
            assert (then, now) == (["Berlin"], ["Porto"])  # the two axes disagree about June 1st
            assert tray.selected.answered[("user", "lives_in")] == then
            table = tray.query_one("#plan-changes", DataTable)
            labels = [str(c.label) for c in table.columns.values()]
            column = next(i for i, label in enumerate(labels) if label.startswith("answered at"))
            row = next(i for i in range(table.row_count) if [str(x) for x in table.get_row_at(i)[:2]] == [
                "user", "lives_in"
            ])  # fmt: skip
            assert str(table.get_row_at(row)[column]).startswith("Berlin")
            await idle(pilot)
            summary = " ".join(screen_text(app).split())
            assert f"Answered by a read at {format_rfc3339(corrected)[:19].replace('T', ' ')} UTC" in summary
            # a re-plan keeps the comparison: the new preview comes with the answers given then
            await press(pilot, "R")
            await wait_for(pilot, lambda: tray.preview is not None and not tray.busy, what="the re-plan")
            assert tray.selected.answered[("user", "lives_in")] == then

    run(scenario())


def test_an_instant_the_console_filled_in_is_taken_back_as_it_is(make_app: Any, corrected: int) -> None:
    """g fills the top bar's boxes with the step's recorded instant as the console shows it (seconds, UTC),
    and k fills the tray's "answered at" from the top bar's known-at: Enter on either, unchanged, keeps
    that instant to the nanosecond. The console's own form was refused as not RFC3339 before."""

    async def scenario() -> None:
        from recall_tui.messages import StagePlan
        from recall_tui.staging import Recipe

        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            recorded = await g_on_the_porto_step(pilot)
            await wait_for(pilot, lambda: app.known_at == recorded, what="g")
            assert app.main.query_one("#known-at").value.endswith(" UTC")
            await press(pilot, "K", "enter", "a", "enter")
            await idle(pilot)
            assert app.errors == [] and (app.known_at, app.as_of) == (recorded, recorded)
            app.main.post_message(
                StagePlan(Recipe("redefine lives_in", lambda st: st.redefine("lives_in", cardinality="multi")))
            )
            tray = app.main.view("plan")
            await wait_for(pilot, lambda: tray.preview is not None and not tray.busy, what="the preview")
            await press(pilot, "k")
            assert app.focused.id == "plan-known-at" and app.focused.value
            await press(pilot, "enter")
            await wait_for(
                pilot, lambda: tray.selected.answered is not None or app.errors, what="the answers given then"
            )
            assert app.errors == [] and tray.selected.known_at == recorded

    run(scenario())


def test_a_refused_or_unsubmitted_as_of_is_not_left_in_the_top_bar(make_app: Any) -> None:
    """The top bar's as-of box shows the instant every view answers at: leaving it (Escape) after a refused
    entry, or without Enter, puts that instant back instead of the text typed."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            box = app.main.query_one("#as-of")
            await press(pilot, "a", *"yesterday", "enter")
            assert app.errors and app.focused is box and app.as_of is None
            await press(pilot, "escape")
            assert box.value == "" and app.as_of is None
            await press(pilot, "a", *"2026-03-01", "enter")
            await wait_for(pilot, lambda: app.as_of == parse_instant("2026-03-01"), what="the as-of instant")
            await press(pilot, "a", "escape")  # what was typed and applied stays as typed
            assert box.value == "2026-03-01"
            await press(pilot, "a", "backspace", "backspace", "escape")
            assert box.value == "2026-03-01 00:00:00 UTC" and app.as_of == parse_instant("2026-03-01")

    run(scenario())


def test_g_leaves_no_read_counted_in_flight(make_app: Any, corrected: int) -> None:
    """g sets as of and known at in one key: the history is asked for twice in one tick, and the first call,
    cancelled before its task ran, never reports. It is not counted in flight for good (the garbage
    collector's tick waits while a read is in flight, and tests wait for none)."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await g_on_the_porto_step(pilot)
            explain = app.main.view("explain")
            await wait_for(pilot, lambda: explain.data is not None and app.known_at is not None, what="explained")
            await wait_for(pilot, lambda: not app.pending and app.settled, timeout=30, what="no call in flight")

    run(scenario())
