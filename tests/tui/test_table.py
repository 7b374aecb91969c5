"""The console's tables draw the widths their rows were measured at, even when a frame is drawn between
adding rows and measuring them (the plan tray's changes once showed every cell cut to its header)."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from recall_tui.widgets.table import ConsoleTable

from .conftest import run, screen_text, settle

WIDE = "a value wider than its header"


class OneTable(App[None]):
    def __init__(self, table: type[DataTable[Any]]) -> None:
        super().__init__()
        self.table = table

    def compose(self) -> ComposeResult:
        yield self.table(id="t")


def shown_after_an_early_frame(table: type[DataTable[Any]]) -> str:
    async def scenario() -> str:
        app = OneTable(table)
        async with app.run_test(size=(60, 8)) as pilot:
            await settle(pilot)
            t = app.query_one("#t", DataTable)
            t.add_column("v")
            t.add_row(WIDE)
            await settle(pilot)
            t.clear(columns=True)  # drawn again with one more column, as the plan tray does
            t.add_columns("v", "w")
            t.add_row(WIDE, "x")
            for y in range(t.size.height):  # a frame drawn before the table is idle and measures its new row
                t.render_line(y)
            await settle(pilot)  # idle: the row measured, the column widened
            return screen_text(app)

    return run(scenario())


def test_a_frame_drawn_before_the_rows_are_measured_does_not_stay_on_screen() -> None:
    assert WIDE in shown_after_an_early_frame(ConsoleTable)


def test_textuals_own_table_still_keeps_that_frame() -> None:
    # why ConsoleTable exists: when this fails, Textual draws the measured widths itself and the
    # subclass can go
    shown = shown_after_an_early_frame(DataTable)
    assert WIDE not in shown and WIDE[:1] in shown
