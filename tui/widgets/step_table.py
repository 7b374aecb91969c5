"""A virtual table for long lists (a pair's history holds up to 10,000 steps).

``DataTable`` measures every cell of every row when rows are added, so a
1,000-step history takes most of a second to show. This table uses Textual's
line API: it formats rows only when they scroll into view, so showing 10 steps
or 10,000 costs the same. It keeps a row cursor (keys and mouse) and a sticky
header, which is all the history view needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

Cell = tuple[str, str]  # (text, rich style)
GAP = 2
WIDTH_SAMPLE = 100  # rows read at each end of a long lazy sequence to size the columns


@dataclass(frozen=True)
class Column:
    label: str
    max_width: int = 40


def column_widths(rows: Sequence[Sequence[Cell]], columns: Sequence[Column]) -> list[int]:
    """Each column's width: its widest cell (capped at the column's ``max_width``), never narrower than its
    label. A long sequence is measured on its first and last ``WIDTH_SAMPLE`` rows. Pure: a view may call
    it in its worker, with the rows it read, so the UI thread only draws (docs/benchmarks.md, "Seventh
    round")."""
    widths = [cell_len(c.label) for c in columns]
    n = len(rows)
    sample = range(n) if n <= 2 * WIDTH_SAMPLE else [*range(WIDTH_SAMPLE), *range(n - WIDTH_SAMPLE, n)]
    for row in (rows[i] for i in sample):
        for i, (text, _) in enumerate(row):
            if len(text) > widths[i]:  # cheap first; cell_len only where it matters
                widths[i] = min(columns[i].max_width, cell_len(text))
    return widths


class StepTable(ScrollView, can_focus=True):
    """Rows of (text, style) cells; only the visible ones are formatted."""

    DEFAULT_CSS = """
    StepTable { height: 1fr; }
    StepTable > .step-table--header { text-style: bold; color: $text-muted; background: $panel; }
    StepTable > .step-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground;
                                       text-style: $block-cursor-text-style; }
    StepTable:blur > .step-table--cursor { background: $block-cursor-blurred-background; text-style: none; }
    """
    COMPONENT_CLASSES = {"step-table--header", "step-table--cursor"}
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True)

    class RowHighlighted(Message):
        def __init__(self, table: StepTable, row: int) -> None:
            super().__init__()
            self.table = table
            self.row = row

        @property
        def control(self) -> StepTable:
            return self.table

    def __init__(self, columns: Sequence[Column], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = list(columns)
        self.rows: Sequence[Sequence[Cell]] = []
        self.widths = [cell_len(c.label) for c in self.columns]
        self._styles: dict[str, Style] = {}
        self._lines: dict[int, list[Segment]] = {}
        # the lines drawn, by (row, scroll x, width, under the cursor): a frame that redraws the table (a
        # layout, the view shown again) reuses them; a new style (focus, theme) or new rows clear them
        self._strips: dict[tuple[int, int, int, bool], Strip] = {}
        self._base: Style | None = None  # the widget's style; Textual computes it from every ancestor per call
        self._center = False  # centre the cursor once the table has a size

    # --- data ------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def set_rows(self, rows: Sequence[Sequence[Cell]], cursor: int = 0, widths: list[int] | None = None) -> None:
        """Replace every row; widths come from the data (capped per column): ``widths`` when given (measured
        with ``column_widths`` off the UI thread), else measured here.

        ``rows`` may be a lazy sequence that formats a row when it is indexed: widths are then
        taken from the first and last ``WIDTH_SAMPLE`` rows, and only visible rows are formatted.
        """
        self.rows = rows if not isinstance(rows, (list, tuple)) else list(rows)
        self._lines.clear()
        self._strips.clear()
        self.widths = widths if widths is not None else column_widths(self.rows, self.columns)
        total = sum(self.widths) + GAP * (len(self.widths) - 1) + 1
        self.virtual_size = Size(total, len(self.rows) + 1)
        self.cursor_row = max(0, min(cursor, len(self.rows) - 1))
        self._center = True
        if self.size.height:
            self._scroll_cursor_into_view(center=True)
            self._center = False
        self.refresh()

    # --- drawing ---------------------------------------------------------------------

    def _style(self, spec: str) -> Style:
        style = self._styles.get(spec)
        if style is None:
            style = self._styles[spec] = Style.parse(spec) if spec else Style()
        return style

    def _cells(self, cells: Sequence[Cell]) -> list[Segment]:
        out: list[Segment] = []
        last = len(self.widths) - 1
        for i, (text, spec) in enumerate(cells):
            w = self.widths[i]
            text = " ".join(text.split()) if "\n" in text else text
            if cell_len(text) > w:
                text = set_cell_size(text, w - 1) + "…"
            elif i < last:
                text = set_cell_size(text, w)
            out.append(Segment(text, self._style(spec)))
            if i < last:
                out.append(Segment(" " * GAP))
        return out

    def _row_segments(self, index: int) -> list[Segment]:
        line = self._lines.get(index)
        if line is None:
            line = self._lines[index] = [Segment(" ")] + self._cells(self.rows[index])
        return line

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self._base = None

    @property
    def _base_style(self) -> Style:
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x, scroll_y = self.scroll_offset
        if y == 0:
            header = self.get_component_rich_style("step-table--header")
            segments = [Segment(" ")] + self._cells([(c.label, "") for c in self.columns])
            strip = Strip(segments).crop(scroll_x, scroll_x + width).apply_style(header)
            return strip.extend_cell_length(width, header)
        index = scroll_y + y - 1
        if index >= len(self.rows):
            return Strip.blank(width, self._base_style)
        key = (index, scroll_x, width, index == self.cursor_row)
        drawn = self._strips.get(key)
        if drawn is None:
            strip = Strip(self._row_segments(index)).crop(scroll_x, scroll_x + width)
            style = self.get_component_rich_style("step-table--cursor") if key[3] else self._base_style
            drawn = self._strips[key] = strip.apply_style(style).extend_cell_length(width, style)
        return drawn

    # --- cursor ----------------------------------------------------------------------

    def watch_cursor_row(self, old: int, new: int) -> None:
        self.refresh()
        if self.rows:
            self.post_message(self.RowHighlighted(self, new))

    def _page(self) -> int:
        return max(1, self.size.height - 2)

    def _scroll_cursor_into_view(self, center: bool = False) -> None:
        visible = max(1, self.size.height - 1)
        top = self.scroll_offset.y
        row = self.cursor_row
        if center:
            self.scroll_to(y=max(0, row - visible // 2), animate=False, immediate=True)
        elif row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + visible:
            self.scroll_to(y=row - visible + 1, animate=False, immediate=True)

    def move_cursor(self, row: int) -> None:
        if not self.rows:
            return
        self.cursor_row = max(0, min(row, len(self.rows) - 1))
        self._scroll_cursor_into_view()

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta * self._page())

    def action_edge(self, end: int) -> None:
        self.move_cursor(len(self.rows) - 1 if end else 0)

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1 and self.rows:
            self.move_cursor(self.scroll_offset.y + event.y - 1)

    def on_resize(self) -> None:
        self._scroll_cursor_into_view(center=self._center)
        self._center = False
