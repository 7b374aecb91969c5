"""The console's data table: Textual's ``DataTable``, drawn with the widths its rows were measured at."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.widgets import DataTable
from textual.widgets.data_table import RowKey


class ConsoleTable(DataTable[Any]):
    """``DataTable`` measures new rows when it is next idle and widens its columns then, but (Textual 8.2)
    neither invalidates the lines it cached nor asks to be drawn again. A frame drawn between adding rows
    and that measuring (a busy machine draws one) stayed on screen with every cell cut to its header's
    width (tests/tui/test_table.py). Its caches are keyed by the update count: bumping it and refreshing
    draws the measured widths."""

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(new_rows)
        self._update_count += 1
        self.refresh()
