"""What the console draws stays what it was while it draws less (docs/benchmarks.md, "Seventh round"): the
footer's keys rewritten in place, one-line titles repainted without a layout, a pair's detail written once
per subject, the history's rows measured in its worker and kept, the table's and the timeline's lines
kept."""

from __future__ import annotations

import threading
from typing import Any

from textual._context import active_message_pump
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey

from recall_engine.instants import parse_instant
from recall_engine.records import make_event
from recall_engine.storage import open_backend
from recall_tui.views.history import COLUMNS, StepRows
from recall_tui.widgets.step_table import WIDTH_SAMPLE, StepTable, column_widths
from recall_tui.widgets.timeline_chart import TimelineChart

from .conftest import SIZE, idle, press, ready, run, screen_text, settle, wait_for
from .test_console import define
from .test_flows import choose_pair


def footer_keys(app: Any) -> list[FooterKey]:
    footer = app.main.query_one(Footer)
    return [k for k in footer.query_children(FooterKey) if k.display]


def stock_keys(footer: Footer) -> list[FooterKey]:
    """What Textual's own ``Footer`` composes for the footer's screen now, in its order."""
    token = active_message_pump.set(footer)  # its keys bind to the footer composing them
    try:
        return [w for w in Footer.compose(footer) if isinstance(w, FooterKey)]
    finally:
        active_message_pump.reset(token)


def shown(keys: list[FooterKey]) -> list[tuple[str, str, str, bool]]:
    return [(k.key, k.key_display, k.description, k.has_class("-disabled")) for k in keys]


def test_the_footer_rewrites_its_keys_in_place_and_shows_what_textuals_footer_composes(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await choose_pair(pilot, "user", "lives_in")
            before = footer_keys(app)
            seen = []
            for key in ("enter", "1", "5", "7", "1"):  # history, pairs, registry, the tray, pairs again
                await press(pilot, key)
                await idle(pilot)
                keys = footer_keys(app)
                stock = stock_keys(app.main.query_one(Footer))
                assert shown(keys) == shown(stock), key
                seen.append(shown(keys))
            assert len({tuple(keys) for keys in seen}) > 1  # the views' keys differ: a switch rewrote them
            # the same widgets throughout: none removed, none mounted again
            assert footer_keys(app)[: len(before)] == before

    run(scenario())


def test_at_80_columns_every_view_shows_help_first_and_no_key_cut_mid_label(make_app: Any) -> None:
    """The footer cut its last key mid-label at 80 columns (the tray's ``S Sa``), and ``? Help``, listed last,
    was off screen: now help comes first in every view, and a key that does not fit whole is not shown."""

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await define(pilot, "footer_probe")  # the tray then has its most keys
            cut = set()
            for view in ("1", "2", "3", "4", "5", "6", "7"):
                await press(pilot, view)
                await idle(pilot)
                line = screen_text(app).splitlines()[-1]
                keys = [k for k in footer_keys(app) if not k.has_class("-command-palette")]
                whole = [k for k in keys if k.styles.visibility != "hidden"]
                assert (whole[0].key_display, whole[0].description) == ("?", "Help"), view
                labels = "  ".join(f"{k.key_display} {k.description}" for k in whole)
                assert line.split("▏")[0].strip() == labels, view  # the keys shown, each whole, nothing else
                assert line.endswith("^p palette"), view
                if len(whole) < len(keys):
                    cut.add(view)
            assert {"5", "7"} <= cut  # the registry and the tray have more keys than 80 columns hold

    run(scenario())


def test_a_title_repaints_without_laying_out_the_screen(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await idle(pilot)
            title = app.main.query_one("#pairs-title")
            title.update("a title of another length")
            assert not title._layout_required  # its size is the stylesheet's: one row, the view's width
            await settle(pilot)
            assert "a title of another length" in screen_text(app)

    run(scenario())


def test_a_pair_s_detail_is_written_once_per_subject_and_again_after_a_search(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await idle(pilot)
            sidebar = app.main.query_one("#sidebar")
            sidebar.table.focus()
            detail = app.main.query_one("#pair-detail", Static)
            writes: list[Any] = []
            update = detail.update
            detail.update = lambda content="", **kw: (writes.append(content), update(content, **kw))[1]  # type: ignore[method-assign]
            await press(pilot, "down")  # the next subject: its pairs read, the first one's detail shown
            await wait_for(pilot, lambda: app.main.view("pairs").subject == "alice", what="alice's pairs")
            await idle(pilot)
            assert len(writes) == 1  # the cursor put on the first row reports it again: not written twice
            await press(pilot, "slash", *"Toronto", "enter")
            await wait_for(pilot, lambda: app.main.view("pairs").hits, what="search hits")
            await press(pilot, "escape")
            await idle(pilot)
            # back from the results: the highlighted pair's detail again, not the last hit's
            row = app.main.view("pairs").current
            assert row is not None and f"{row.subject} · {row.predicate}" in screen_text(app)
            assert "Escape goes back to the pairs" not in screen_text(app)

    run(scenario())


def long_pairs(store_url: str, steps: int) -> None:
    """Two pairs of ``steps`` steps each for the subject ``longhistory`` (lives_in, works_at)."""
    with open_backend(store_url) as backend:
        base = parse_instant("2026-02-01")
        backend.store("memories").append(
            [
                make_event("longhistory", p, f"v{k % 7}", base + k * 3_600_000_000_000 + j, source="agent_inferred")
                for j, p in enumerate(("lives_in", "works_at"))
                for k in range(steps)
            ]
        )


def test_a_long_history_is_measured_in_its_worker_drawn_as_before_and_not_formatted_again(
    make_app: Any, store_url: str
) -> None:
    long_pairs(store_url, 3 * WIDTH_SAMPLE)

    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await choose_pair(pilot, "longhistory", "lives_in")
            formatted: list[tuple[bool, int]] = []  # (on the UI thread, row)
            getitem = StepRows.__getitem__

            def counted(self: StepRows, i: Any) -> Any:
                if i not in self.cache:
                    formatted.append((threading.current_thread() is threading.main_thread(), i))
                return getitem(self, i)

            history = app.main.view("history")
            table = app.main.query_one("#history-table", StepTable)
            StepRows.__getitem__ = counted  # type: ignore[method-assign]
            try:
                await press(pilot, "enter")
                await wait_for(pilot, lambda: history.shown == "lives_in", what="the long history")
                await idle(pilot)
                # the UI thread formatted only rows it drew, none that the worker's measuring had formatted
                assert formatted and sum(ui for ui, _ in formatted) < table.size.height
                assert table.widths == column_widths(StepRows(history.data), COLUMNS)
                assert table.cursor_row == 3 * WIDTH_SAMPLE - 1 and "v5" in screen_text(app)
                first = screen_text(app)
                for predicate in ("works_at", "lives_in"):  # another pair, then the first again
                    await press(pilot, "1")
                    await choose_pair(pilot, "longhistory", predicate)
                    formatted.clear()
                    await press(pilot, "enter")
                    await wait_for(pilot, lambda p=predicate: history.shown == p, what=predicate)
                    await idle(pilot)
                # the first pair's history was kept, and its rows with it: not formatted again
                assert formatted == [] and screen_text(app) == first
            finally:
                StepRows.__getitem__ = getitem  # type: ignore[method-assign]

    run(scenario())


def test_the_step_table_draws_its_cursor_blurred_after_the_focus_leaves(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await choose_pair(pilot, "user", "lives_in")
            await press(pilot, "enter")
            await wait_for(pilot, lambda: app.main.view("history").shown == "lives_in")
            await idle(pilot)
            table = app.main.query_one("#history-table", StepTable)
            y = table.cursor_row - table.scroll_offset.y + 1
            focused = table.render_line(y)
            await press(pilot, "a")  # the as-of box takes the focus; the history stays on screen
            blurred = table.render_line(y)
            assert blurred.text == focused.text and blurred != focused  # the line kept while focused is not reused
            await press(pilot, "escape")
            assert table.render_line(y) == focused

    run(scenario())


def test_a_chart_shown_again_is_not_drawn_again_and_is_drawn_the_same(make_app: Any) -> None:
    async def scenario() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await choose_pair(pilot, "user", "lives_in")
            await press(pilot, "enter")
            history = app.main.view("history")
            await wait_for(pilot, lambda: history.shown == "lives_in")
            await idle(pilot)
            chart = app.main.query_one(TimelineChart)
            lines = [chart.render_line(y) for y in range(chart.size.height)]
            kept = (chart._chart()[2], chart.size, chart.visual_style)  # what its lines are kept under
            drawn: list[Any] = []
            render = chart.render
            # each draw with what it was kept under (a paint between the pair's new height and
            # its layout is at another size: another key, drawn or not as the machine's timing goes)
            chart.render = lambda: (drawn.append((chart._chart()[2], chart.size, chart.visual_style)), render())[1]  # type: ignore[method-assign]
            await press(pilot, "right_square_bracket")
            await wait_for(pilot, lambda: history.shown != "lives_in")
            await idle(pilot)
            assert drawn  # another pair: drawn
            drawn.clear()
            await press(pilot, "left_square_bracket")
            await wait_for(pilot, lambda: history.shown == "lives_in")
            await idle(pilot)
            assert kept not in drawn  # the same chart again: its lines were kept
            assert [chart.render_line(y) for y in range(chart.size.height)] == lines

    run(scenario())
