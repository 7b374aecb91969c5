"""A small chart of when each value of a pair held: one row per value, bars over time."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from recall_admin.browse import HeldSpan

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

    def show(self, spans: list[HeldSpan], start: int, end: int, as_of: int | None) -> None:
        self.spans, self.start, self.end, self.as_of = spans, start, max(end, start + 1), as_of
        height = min(len(spans), MAX_ROWS) + 2 + (1 if len(spans) > MAX_ROWS else 0)
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height  # a new height lays the view out again; the same one only repaints
        self.refresh()

    def render(self) -> Text:
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
