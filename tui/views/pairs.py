"""Subjects and pairs: the selected subject's pairs with their answers, and a search box."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from recall_admin import browse
from recall_admin.browse import PairRow
from recall_engine.records import Belief
from recall_engine.search import search as engine_search

from .. import format as fmt
from ..actions import bindings
from ..messages import PairChosen, Selection
from ..services import ServiceCalls
from ..widgets.line import Line
from ..widgets.table import ConsoleTable

REPLACED = "↺"
ELSEWHERE = "≠"
SEARCH_LIMIT = 50
SUBJECT_WIDTH = 24  # a search hit's subject, clipped so that its value stays on screen at 80 columns


def marks(row: PairRow) -> str:
    return (REPLACED if row.replaced else " ") + (ELSEWHERE if row.elsewhere else " ")


def belief_detail(b: Belief) -> Text:
    t = Text()
    t.append(fmt.values([b.value]), style="bold green")
    t.append(
        f"   since {fmt.instant(b.observed_at)} · {fmt.text(b.source)} · confidence {b.confidence:g} · {b.kind}",
        style="dim",
    )
    if b.stored_as:
        t.append(f"\n  stored as {fmt.text(b.stored_as)}", style="magenta")
    if b.promoted_from:
        t.append(f"\n  promoted from note {fmt.text(b.promoted_from)}", style="magenta")
    if b.evidence:
        t.append("\n  evidence: ", style="dim")
        t.append(fmt.clip(b.evidence, 200))
    for r in b.replaced:
        t.append(f"\n  {REPLACED} replaced ", style="cyan")
        where = f"{r.predicate} = " if r.predicate and r.predicate != b.predicate else ""  # withdrawn from another pair
        t.append(f"{where}{fmt.values([r.value])} (held since {fmt.instant(r.observed_at)})")
    for e in b.elsewhere:
        t.append(f"\n  {ELSEWHERE} also held as ", style="yellow")
        t.append(f"{fmt.text(e.predicate)} = {fmt.values([e.value])} (since {fmt.instant(e.observed_at)})")
    return t


class PairsView(ServiceCalls, Vertical):
    """The pairs table; a search replaces it with hits until Escape."""

    BINDINGS = bindings("pairs")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.subject: str | None = None
        self.rows: list[PairRow] = []
        self.hits: list[Belief] = []
        self.loaded_at: float = 0.0  # monotonic time the pairs were last rendered (benchmarks)
        self.sel = Selection()
        self._detailed: PairRow | None = None  # the row the detail shows

    def compose(self) -> ComposeResult:
        yield Line("", id="pairs-title", classes="view-title")
        pairs: DataTable = ConsoleTable(id="pairs-table", cursor_type="row")
        pairs.add_column("predicate", key="predicate")
        pairs.add_column("answer", key="answer")
        pairs.add_column("", key="marks", width=2)
        pairs.add_column("events", key="events")
        yield pairs
        hits: DataTable = ConsoleTable(id="search-table", cursor_type="row")
        for name in ("subject", "predicate", "value", "since", ""):
            hits.add_column(name, key=name or "marks")
        hits.display = False
        yield hits
        with VerticalScroll(id="pair-detail-box"):
            yield Static("", id="pair-detail")

    # --- loading ---------------------------------------------------------------

    def refresh_data(self, sel: Selection) -> None:
        self.sel = sel
        subject = sel.subject
        if subject is None:
            self.query_one("#pairs-title", Line).update("No subject: the store holds no statements yet.")
            return
        self.call_service(
            browse.subject_pairs,
            self.app.memory,
            subject,
            sel.as_of,
            then=lambda rows: self._show(subject, rows),
            group="pairs",
        )

    def _show(self, subject: str, rows: list[PairRow]) -> None:
        table = self.query_one("#pairs-table", DataTable)
        keep = self.sel.predicate if subject == self.subject else None
        self.subject, self.rows = subject, rows
        table.clear()
        # the answer column takes what the other columns leave (a hidden view measures the terminal)
        names = max((len(fmt.text(r.predicate)) for r in rows), default=9)
        counts = max((len(f"{r.events:,}") for r in rows), default=6)
        room = (self.size.width or self.app.size.width) - names - max(counts, 6) - 2 - 10
        width = max(20, min(60, room))
        for r in rows:
            table.add_row(
                Text(fmt.text(r.predicate), style="dim" if not r.beliefs else ""),
                Text(fmt.clip(fmt.values(r.values), width), style="" if r.beliefs else "dim"),
                Text(marks(r), style="bold cyan"),
                f"{r.events:,}",
                key=r.predicate,
            )
        as_of = self.sel.as_of
        self.query_one("#pairs-title", Line).update(
            f"[b]{fmt.esc(subject)}[/b] — {len(rows)} pair(s), answers as of {fmt.instant(as_of)}"
            f"   [dim]{REPLACED} replaced earlier · {ELSEWHERE} held elsewhere[/dim]"
        )
        index = next((i for i, r in enumerate(rows) if r.predicate == keep), 0)
        if rows:
            table.move_cursor(row=index, animate=False)
            self._detail(rows[index])
            self.post_message(PairChosen(subject, rows[index].predicate))
        else:
            self._show_detail(Text("This subject has no pairs.", style="dim"))
        if not self.loaded_at:
            self.app.first_screen_ready()
        self.loaded_at = time.monotonic()

    def _detail(self, row: PairRow) -> None:
        if row is self._detailed:
            return  # shown already (the cursor put on it reports it again): each new text lays the screen out
        parts: list[Any] = [Text(f"{fmt.text(row.subject)} · {fmt.text(row.predicate)}", style="bold")]
        if row.beliefs:
            parts.extend(belief_detail(b) for b in row.beliefs)
        else:
            parts.append(
                Text(
                    f"no value held as of {fmt.instant(self.sel.as_of)}; "
                    f"{row.events} event(s): Enter shows its history",
                    style="dim",
                )
            )
        if len(row.stored_names) > 1 or (row.stored_names and row.stored_names[0] != row.predicate):
            parts.append(Text("stored under: " + fmt.text(", ".join(row.stored_names)), style="magenta"))
        self._show_detail(Group(*parts), row)

    def _show_detail(self, content: Any, row: PairRow | None = None) -> None:
        """Put ``content`` below the table (``row``: the pair it details, so it is not written twice)."""
        self._detailed = row
        self.query_one("#pair-detail", Static).update(content)

    @property
    def current(self) -> PairRow | None:
        table = self.query_one("#pairs-table", DataTable)
        if not self.rows or not (0 <= table.cursor_row < len(self.rows)):
            return None
        return self.rows[table.cursor_row]

    # --- events ----------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.data_table.id == "pairs-table":
            row = self.current
            if row is not None and row.subject == self.subject:
                self._detail(row)
                self.post_message(PairChosen(row.subject, row.predicate))
        elif event.data_table.id == "search-table" and 0 <= event.cursor_row < len(self.hits):
            b = self.hits[event.cursor_row]
            self._show_detail(
                Group(
                    Text(f"{fmt.text(b.subject)} · {fmt.text(b.predicate)}", style="bold"),
                    belief_detail(b),
                    Text("Enter opens this pair's history · Escape goes back to the pairs", style="dim"),
                )
            )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "pairs-table":
            self.action_open_history()
        elif event.data_table.id == "search-table" and 0 <= event.cursor_row < len(self.hits):
            b = self.hits[event.cursor_row]
            self.post_message(PairChosen(b.subject, b.predicate, open="history"))

    def action_open_history(self) -> None:
        row = self.current
        if row is not None:
            self.post_message(PairChosen(row.subject, row.predicate, open="history"))

    def action_explain(self) -> None:
        row = self.current
        if row is not None:
            self.post_message(PairChosen(row.subject, row.predicate, open="explain"))

    # --- search ----------------------------------------------------------------

    def search(self, text: str) -> None:
        """Search with the engine's search (the box is in the top bar)."""
        text = text.strip()
        if not text:
            self.close_search()
            return
        self.query_one("#pairs-title", Line).update(f"searching for [b]{fmt.esc(text)}[/b]…")
        self.call_service(
            engine_search,
            self.app.memory,
            text,
            as_of=self.app.as_of,
            limit=SEARCH_LIMIT,
            then=lambda hits: self._show_hits(text, hits),
            group="search",
        )

    def _show_hits(self, text: str, hits: list[Belief]) -> None:
        self.hits = hits
        table = self.query_one("#search-table", DataTable)
        table.clear()
        for b in hits:
            mark = (REPLACED if b.replaced else " ") + (ELSEWHERE if b.elsewhere else " ")
            table.add_row(
                *fmt.cells(
                    fmt.clip(b.subject, SUBJECT_WIDTH),  # a subject may be 256 bytes; the detail shows it whole
                    b.predicate,
                    fmt.clip(fmt.values([b.value]), 50),
                    fmt.instant(b.observed_at),
                    Text(mark, style="bold cyan"),
                )
            )
        self.query_one("#pairs-table", DataTable).display = False
        table.display = True
        self.query_one("#pairs-title", Line).update(
            f"{len(hits)} answer(s) for [b]{fmt.esc(text)}[/b], as of {fmt.instant(self.app.as_of)}"
            "   [dim]Enter: history · Escape: back to the pairs[/dim]"
        )
        table.focus()
        if not hits:
            self._show_detail(Text("Nothing found.", style="dim"))

    def close_search(self) -> bool:
        hits = self.query_one("#search-table", DataTable)
        if not hits.display:
            return False
        if hits.display:
            hits.display = False
            pairs = self.query_one("#pairs-table", DataTable)
            pairs.display = True
            pairs.focus()
            if self.subject is not None:
                self._show(self.subject, self.rows)
        return True
