"""The sidebar: a filter box over the store's subjects, each with its event count."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import DataTable, Input, Label

from recall_admin import browse
from recall_admin.session import Session

from .. import format as fmt
from ..messages import ShowView, SubjectChosen
from ..services import ServiceCalls
from .table import ConsoleTable

FILTER_DELAY = 0.15  # seconds of typing pause before the store is asked
STORE_WIDTH = 24
SIDEBAR_WIDTH = 27  # its widest (app.tcss), less its border
NAME_MIN = 6


class SubjectList(ServiceCalls, Vertical):
    """Subjects, most events first; typing narrows them by name prefix."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.subjects: list[tuple[str, int]] = []
        self._timer: Timer | None = None
        self._loaded_prefix: str | None = None
        self._drawn_width = 0

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter subjects (f)", id="subject-filter", compact=True)
        table: DataTable = ConsoleTable(id="subject-table", cursor_type="row", zebra_stripes=False)
        _columns(table)
        yield table
        yield Label("", id="subject-count")
        yield Label("", id="store-label")

    def show_store(self, session: Session, read_only: bool) -> None:
        """Which store, collection and operator the console works on."""
        ro = " · [b]read-only[/b]" if read_only else ""
        url = session.display_url
        if len(url) > STORE_WIDTH:
            url = "…" + url[-(STORE_WIDTH - 1) :]  # the end of a path says most
        self.query_one("#store-label", Label).update(
            f"{fmt.esc(url)}\n{fmt.esc(session.collection)} · {fmt.esc(session.operator)}{ro}"
        )

    @property
    def settled(self) -> bool:
        """No typed filter is waiting for its pause to end (then the store is asked)."""
        return self._timer is None

    @property
    def table(self) -> DataTable:
        return self.query_one("#subject-table", DataTable)

    def load(self, prefix: str | None = None) -> None:
        if prefix is None:
            prefix = self.query_one("#subject-filter", Input).value
        memory = self.app.memory
        self.call_service(
            browse.list_subjects, memory, prefix, then=lambda rows: self._show(prefix, rows), group="subjects"
        )

    def _show(self, prefix: str, rows: list[tuple[str, int]]) -> None:
        table = self.table
        keep = self.selected
        self.subjects = rows
        self._loaded_prefix = prefix
        self._fill()
        more = f" (first {len(rows):,})" if len(rows) >= browse.SUBJECTS_SHOWN else ""
        self.query_one("#subject-count", Label).update(f"{len(rows):,} subject(s){more}")
        if rows:
            index = next((i for i, (s, _) in enumerate(rows) if s == keep), 0)
            table.move_cursor(row=index, animate=False)
            self.post_message(SubjectChosen(rows[index][0]))

    def _name_width(self) -> int:
        """The columns a subject's name may take: the sidebar's width less the counts, the cells' padding and
        a scrollbar when the list is longer than the table (hidden: the widest the sidebar gets)."""
        counts = max([len("events"), *(len(f"{n:,}") for _, n in self.subjects)])
        width = self.size.width or SIDEBAR_WIDTH
        scrollbar = 2 if len(self.subjects) >= self.table.size.height else 0
        return max(NAME_MIN, width - counts - 4 - scrollbar)

    def _fill(self) -> None:
        """List the subjects, each name clipped (marked ``…``) so its count stays in view."""
        table = self.table
        self._drawn_width = width = self._name_width()
        table.clear(columns=True)  # a column keeps the width of the widest cell it held: start anew
        _columns(table)
        for subject, n in self.subjects:
            table.add_row(*fmt.cells(fmt.clip(subject, width), f"{n:,}"), key=subject)

    def on_resize(self) -> None:
        if self.subjects and self._name_width() != self._drawn_width:
            keep = self.selected
            self._fill()
            index = next((i for i, (s, _) in enumerate(self.subjects) if s == keep), 0)
            self.table.move_cursor(row=index, animate=False)

    @property
    def selected(self) -> str | None:
        table = self.table
        if not self.subjects or table.cursor_row < 0 or table.cursor_row >= len(self.subjects):
            return None
        return self.subjects[table.cursor_row][0]

    def select(self, subject: str) -> None:
        """Highlight a subject (from a search result); reload unfiltered if it is not listed."""
        for i, (s, _) in enumerate(self.subjects):
            if s == subject:
                self.table.move_cursor(row=i, animate=False)
                return
        box = self.query_one("#subject-filter", Input)
        box.value = subject
        self.load(subject)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "subject-filter":
            return
        event.stop()
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        value = event.value

        def load() -> None:
            self._timer = None
            self.load(value)

        self._timer = self.set_timer(FILTER_DELAY, load)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "subject-filter":
            return
        event.stop()
        self.table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a subject: into its pairs."""
        if event.data_table.id == "subject-table":
            event.stop()
            self.post_message(ShowView("pairs"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "subject-table":
            return
        event.stop()
        subject = event.row_key.value if event.row_key is not None else None
        if subject:
            self.post_message(SubjectChosen(subject))


def _columns(table: DataTable) -> None:
    table.add_column("subject", key="subject")
    table.add_column("events", key="events")
