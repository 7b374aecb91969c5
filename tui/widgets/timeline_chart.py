"""A small chart of when each value of a pair held: one row per value, bars over time."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from recall_admin.browse import HISTORIES_KEPT, HeldSpan

from .. import format as fmt

LABEL = 18
MAX_ROWS = 6
PALETTE = ("green", "cyan", "magenta", "yellow", "blue", "red")


class TimelineChart(Widget):
    """Draws ``HeldSpan`` rows with block characters; ``▲`` marks the as-of instant."""

    DEFAULT_CSS = """
    TimelineChart { height: auto; min-height: 3; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.spans: list[HeldSpan] = []
        self.start = 0
        self.end = 0
        self.as_of: int | None = None
        self._text: tuple[int, Text, Any] | None = None  # (width, the chart's text, a key of what it shows)
        self._drawn: OrderedDict[Any, list[Strip]] = OrderedDict()

    def show(self, spans: list[HeldSpan], start: int, end: int, as_of: int | None) -> None:
        self.spans, self.start, self.end, self.as_of = spans, start, max(end, start + 1), as_of
        self._text = None
        height = min(len(spans), MAX_ROWS) + 2 + (1 if len(spans) > MAX_ROWS else 0)
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height  # a new height lays the view out again; the same one only repaints
        self.refresh()

    def render_line(self, y: int) -> Strip:
        """The chart's lines as Textual drew them from ``render``, kept by what they show (the text, its
        styles), size and style: a chart shown again (a pair opened again, ``[`` back to it) is not drawn
        again. Building the text is cheap; Textual turning its ~600 styled cells into lines took about a
        third of the UI thread's time in opening a history (docs/benchmarks.md, "Seventh round"). The text,
        not the data, is the key: the chart ends now, and a later now mostly draws the same cells."""
        key = (self._chart()[2], self.size, self.visual_style)
        lines = self._drawn.get(key)
        if lines is None:
            self._render_content()  # what Widget.render_line does when the widget was refreshed: draw now
            lines = self._drawn[key] = [super(TimelineChart, self).render_line(i) for i in range(self.size.height)]
            while len(self._drawn) > HISTORIES_KEPT:  # as many charts as the histories browse keeps
                self._drawn.popitem(last=False)
        else:
            self._drawn.move_to_end(key)
        return lines[y] if y < len(lines) else Strip.blank(self.size.width, self.visual_style.rich_style)

    def render(self) -> Text:
        return self._chart()[1].copy()

    def _chart(self) -> tuple[int, Text, Any]:
        """The chart's text at the current width, built once per data and width."""
        width = self.size.width
        if self._text is None or self._text[0] != width:
            text = self._draw()
            self._text = (width, text, (text.plain, tuple(text.spans)))
        return self._text

    def _draw(self) -> Text:
        if not self.spans:
            return Text("no value was ever held", style="dim")
        width = max(10, self.size.width - LABEL)
        span = self.end - self.start
        out = Text(no_wrap=True, overflow="crop")

        def col(t: int) -> int:
            return min(width - 1, max(0, int((t - self.start) * width / span)))

        mark = col(self.as_of) if self.as_of is not None and self.start <= self.as_of <= self.end else None
        for i, held in enumerate(self.spans[:MAX_ROWS]):
            label = fmt.clip(fmt.values([held.value]), LABEL - 1)
            style = PALETTE[i % len(PALETTE)]
            out.append(f"{label:<{LABEL}}", style="bold" if held.held_now else "")
            cells = ["·"] * width
            for a, b in held.spans:
                lo = col(a)
                last = width - 1 if b is None else max(lo, col(b) - 1)
                for c in range(lo, last + 1):
                    cells[c] = "█"
            for c, ch in enumerate(cells):
                if c == mark:
                    out.append(ch if ch == "█" else "│", style=f"reverse {style}" if ch == "█" else "yellow")
                else:
                    out.append(ch, style=style if ch == "█" else "dim")
            out.append("\n")
        if len(self.spans) > MAX_ROWS:
            out.append(f"… {len(self.spans) - MAX_ROWS} more value(s)\n", style="dim")
        axis = [" "] * width
        if mark is not None:
            axis[mark] = "▲"
        out.append(f"{'as of ' + fmt.day(self.as_of) if mark is not None else '':<{LABEL}}", style="yellow")
        out.append("".join(axis) + "\n", style="bold yellow")
        left, right = fmt.day(self.start), fmt.day(self.end)
        out.append(" " * LABEL + left + " " * max(1, width - len(left) - len(right)) + right, style="dim")
        return out
