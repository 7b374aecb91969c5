"""Diff: every answer that differs between two instants, for one subject or the whole store."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Input, Label, LoadingIndicator

from recall_engine.history import Change

from .. import format as fmt
from ..actions import bindings
from ..messages import Selection
from ..services import ServiceCalls
from ..widgets.table import ConsoleTable


class DiffView(ServiceCalls, Vertical):
    BINDINGS = bindings("diff")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.changes: list[Change] = []
        self.known_at: int | None = None  # both sides as known at (the top bar's known at)

    def compose(self) -> ComposeResult:
        with Horizontal(id="diff-bar", classes="bar"):
            yield Label("from", classes="bar-label")
            yield Input(placeholder="a day or RFC3339 (i)", id="diff-from", compact=True)
            yield Label("to", classes="bar-label")
            yield Input(placeholder="blank: now", id="diff-to", compact=True)
            yield Label("subject", classes="bar-label")
            yield Input(placeholder="blank: the whole store", id="diff-subject", compact=True)
            yield Button("Compare", id="diff-go", compact=True, variant="primary")
        yield Label(
            "Press i to type two instants (a day or RFC3339), then Enter.", id="diff-summary", classes="view-title"
        )
        yield LoadingIndicator(id="diff-loading")
        table: DataTable = ConsoleTable(id="diff-table", cursor_type="row")
        for name in ("subject", "predicate", "before", "after", "began", "stopped"):  # values, no instants
            table.add_column(name)
        yield table

    def on_mount(self) -> None:
        self.query_one("#diff-loading").display = False

    def refresh_data(self, sel: Selection) -> None:
        self.known_at = sel.known_at
        subject = sel.subject
        box = self.query_one("#diff-subject", Input)
        if subject and not box.value and not self.changes:
            box.value = subject

    def action_edit(self) -> None:
        self.query_one("#diff-from", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_compare()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_compare()

    def action_compare(self) -> None:
        raw_from = self.query_one("#diff-from", Input).value.strip()
        raw_to = self.query_one("#diff-to", Input).value.strip()
        subject = self.query_one("#diff-subject", Input).value.strip() or None
        try:
            if not raw_from:
                raise ValueError("give the From instant: a day such as 2026-05-01, or an RFC3339 time")
            start = fmt.typed_instant(raw_from, "from")
            assert start is not None  # From is not blank
            end = fmt.typed_instant(raw_to, "to")
        except Exception as exc:  # InvalidInput or the message above
            self.app.report_error(exc)
            return
        memory = self.app.memory
        where = subject or "the whole store"
        if self.known_at is not None:
            where += f", known at {fmt.instant(self.known_at)}"
        self.query_one("#diff-summary", Label).update(
            f"Comparing {fmt.esc(where)} between {fmt.instant(start)} and {fmt.instant(end)}…"
        )
        self.query_one("#diff-loading").display = True
        self.call_service(
            memory.diff,
            start,
            end,
            subject,
            known_at=self.known_at,
            then=lambda ch: self._show(ch, start, end, where),
            failed=lambda _: self._done(),
            group="diff",
        )

    def _done(self) -> None:
        self.query_one("#diff-loading").display = False

    def _show(self, changes: list[Change], start: int, end: int | None, where: str) -> None:
        self._done()
        self.changes = changes
        table = self.query_one("#diff-table", DataTable)
        table.clear()
        for c in changes:
            table.add_row(
                *fmt.cells(
                    c.subject,
                    c.predicate,
                    Text(fmt.clip(fmt.values(c.before), 40), style="red"),
                    Text(fmt.clip(fmt.values(c.after), 40), style="green"),
                    fmt.clip(fmt.values(c.began), 30),
                    fmt.clip(fmt.values(c.stopped), 30),
                )
            )
        subjects = len({c.subject for c in changes})
        table.focus()
        self.query_one("#diff-summary", Label).update(
            f"{len(changes)} answer(s) differ across {subjects} subject(s) in {fmt.esc(where)}, "
            f"between {fmt.instant(start)} and {fmt.instant(end)}"
        )
