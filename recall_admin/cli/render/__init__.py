"""The CLI's renderers: Rich tables and lines laid out from the JSON-ready data a command
computed (docs/architecture.md). They decide nothing.

Every piece of text a renderer shows goes through the cell helpers below (`txt`, `val`,
`vals`, `line`), which pass it through `recall_admin.display.visible`: values, subjects,
names and notes are written by agents, and an escape sequence in one of them must reach
the operator's terminal shown, not obeyed (docs/cli.md, "Text from agents").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich._ratio import ratio_reduce
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from recall_engine.values import value_text

from ...display import visible

Renderer = Callable[[Console, Any], None]

# Columns holding ids, digests or instants: never wrapped, so an id stays whole and can be
# copied from an 80-column terminal (other cells fold onto more lines instead).
WHOLE = {"id", "at", "since", "event", "note event", "group", "plan", "latest", "first write", "digest"}


def txt(s: Any, style: str = "") -> Text:
    """Any text as a cell or line: shown as written (never markup), controls escaped."""
    return Text("" if s is None else visible(s), style=style)


def hint(text: str) -> None:
    """Advice beside an answer (what to run next, what to keep): talk, so on stderr, where
    `> file` and `$(...)` leave it out (docs/cli.md, "Output, errors and exit codes")."""
    from ..output import err_console

    err_console().print(txt(text, "dim"))


def val(v: Any, style: str = "") -> Text:
    """A value as it reads in a table (numbers without exponent, booleans lower-case)."""
    return Text(visible(value_text(v)), style=style)


def values_text(values: Iterable[Any] | None) -> str:
    """A pair's answer as one short string: ``—`` when nothing is held (controls escaped)."""
    items = [visible(value_text(v)) for v in values or ()]
    return ", ".join(items) if items else "—"


def vals(values: Iterable[Any] | None, style: str = "") -> Text:
    text = values_text(values)
    return Text(text, style="dim" if text == "—" else style)


def names(items: Iterable[Any]) -> str:
    """Names joined by commas, each shown safely."""
    return ", ".join(visible(x) for x in items)


Part = str | tuple[str, str] | Text


def line(*parts: Part, style: str = "") -> Text:
    """One line from plain strings, (string, style) pairs and Texts; strings are escaped."""
    out = Text(style=style)
    for p in parts:
        if isinstance(p, Text):
            out.append(p)
        elif isinstance(p, tuple):
            out.append(visible(p[0]), style=p[1])
        else:
            out.append(visible(p))
    return out


class FitTable(Table):
    """A table that never splits a token: when its columns cannot all fit the width with
    every id and word whole, each row is shown as a stack of ``column  value`` lines
    instead, whose values wrap between words (docs/cli.md, "Tables")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fit_rows: list[tuple[RenderableType | None, ...]] = []

    def add_row(self, *renderables: RenderableType | None, **kwargs: Any) -> None:
        super().add_row(*renderables, **kwargs)
        self._fit_rows.append(renderables)

    def _calculate_column_widths(self, console: Console, options: ConsoleOptions) -> list[int]:
        # Rich narrows an over-wide table column by column without looking at the longest
        # word, so it cuts words that would fit; here a column gives up only what it has
        # beyond its longest token (the stacked layout takes over when that is not enough)
        ranges = [self._measure_column(console, options.update_width(1 << 20), c) for c in self.columns]
        widths = [r.maximum or 1 for r in ranges]
        excess = sum(widths) - options.max_width
        slack = [r.maximum - r.minimum for r in ranges]
        if excess <= 0 or self.expand or sum(slack) < excess:
            return super()._calculate_column_widths(console, options)
        return ratio_reduce(excess, slack, slack, widths)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # the narrowest this table gets with every token whole (measured without the cap
        # that Measurement.get applies at the available width)
        need = self.__rich_measure__(console, options.update(width=1 << 20)).minimum
        if need <= options.max_width or not self._fit_rows:
            yield from super().__rich_console__(console, options)
            return
        if self.title:
            yield Text(str(self.title), style="bold") if isinstance(self.title, str) else self.title
        heads = [c.header for c in self.columns]
        key_width = max(len(str(h)) for h in heads)
        for i, row in enumerate(self._fit_rows):
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="bold", no_wrap=True, min_width=key_width)
            grid.add_column(overflow="fold")
            for head, cell in zip(heads, row, strict=False):
                if not str(head) or cell is None or (isinstance(cell, (str, Text)) and not str(cell).strip()):
                    continue
                grid.add_row(head, cell)
            if i:
                yield Text("")
            yield grid


def table(*columns: str, title: str | None = None) -> Table:
    t = FitTable(title=title, title_justify="left", show_edge=False, pad_edge=False, header_style="bold")
    for c in columns:
        # nothing is ever cut with an ellipsis: long cells fold onto more lines; ids never split
        t.add_column(
            c, overflow="fold", no_wrap=c in WHOLE, min_width=14 if c in ("id", "event", "note event") else None
        )
    return t


def prior_text(replaced: Sequence[dict[str, Any]], predicate: str) -> str:
    """`replaced` entries: a value of the same pair as itself, another pair's as ``likes: mangoes``."""
    return ", ".join(
        visible(
            (f"{p['predicate']}: " if p.get("predicate") not in (None, "", predicate) else "") + value_text(p["value"])
        )
        for p in replaced
    )


def _marks(b: dict[str, Any]) -> Text:
    parts: list[Text] = []
    if b.get("replaced"):
        parts.append(Text("replaced " + prior_text(b["replaced"], b["predicate"]), style="cyan"))
    if b.get("elsewhere"):
        also = ", ".join(f"{visible(e['predicate'])}={visible(value_text(e['value']))}" for e in b["elsewhere"])
        parts.append(Text("also " + also, style="yellow"))
    if b.get("stored_as"):
        parts.append(txt(f"stored as {b['stored_as']}", "dim"))
    if b.get("promoted_from"):
        parts.append(txt(f"promoted from {b['promoted_from']}", "dim"))
    return Text("; ").join(parts)


def beliefs_table(beliefs: Sequence[dict[str, Any]], title: str | None = None) -> Table:
    t = table("subject", "predicate", "value", "since", "source", "marks", title=title)
    for b in beliefs:
        t.add_row(
            txt(b["subject"]), txt(b["predicate"]), val(b["value"]), txt(b["observed_at"]), txt(b["source"]), _marks(b)
        )
    return t
