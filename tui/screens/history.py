"""Pair history: every step with before and after, a timeline of when each value held."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Label

from recall_admin import browse
from recall_admin.browse import PairHistory

from .. import format as fmt
from ..actions import bindings
from ..services import ServiceCalls
from ..widgets.timeline_chart import TimelineChart

ACTION_STYLE = {"assert": "green", "retract": "red", "retract_all": "red", "exclude": "yellow",
                "replaces": "yellow", "promote": "magenta"}


class HistoryView(ServiceCalls, Vertical):
    BINDINGS = bindings("history")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data: PairHistory | None = None
        self.loaded_at: float = 0.0

    def compose(self) -> ComposeResult:
        yield Label("Choose a pair in Pairs (1) and press Enter.", id="history-title", classes="view-title")
        yield Label("", id="history-answer")
        yield TimelineChart(id="timeline")
        table: DataTable = DataTable(id="history-table", cursor_type="row")
        for name in ("at", "action", "value", "before → after", "source", "stored as", "evidence"):
            table.add_column(name)
        yield table

    def refresh_data(self) -> None:
        screen = self.screen
        subject, predicate = screen.subject, screen.predicate  # type: ignore[attr-defined]
        if not subject or not predicate:
            return
        app = self.app
        self.query_one("#history-title", Label).update(f"[b]{subject}[/b] · [b]{predicate}[/b] — reading…")
        self.call_service(browse.pair_history, app.memory, subject, predicate, app.as_of,  # type: ignore[attr-defined]
                          then=self._show, group="history")

    def _show(self, h: PairHistory) -> None:
        self.data = h
        as_of = self.app.as_of  # type: ignore[attr-defined]
        self.query_one("#history-title", Label).update(
            f"[b]{h.subject}[/b] · [b]{h.predicate}[/b] — {len(h.steps)} step(s), oldest first"
        )
        answer = Text("answer as of ", style="dim")
        answer.append(fmt.instant(as_of), style="bold yellow" if as_of is not None else "bold")
        answer.append(": ")
        answer.append(fmt.values([b.value for b in h.answer]), style="bold green")
        answer.append("   (re-folded at that instant; set it with a)", style="dim")
        self.query_one("#history-answer", Label).update(answer)
        start = h.steps[0].at if h.steps else h.now
        self.query_one(TimelineChart).show(h.spans, start, max(h.now, start + 1), h.at if as_of is not None else None)
        table = self.query_one("#history-table", DataTable)
        table.clear()
        in_force = -1
        for i, s in enumerate(h.steps):
            if s.at <= h.at:
                in_force = i
            action = s.action + (f" by {s.via}" if s.via and s.action in ("exclude", "replaces") else "")
            table.add_row(
                fmt.instant(s.at),
                Text(action, style=ACTION_STYLE.get(s.action, "")),
                fmt.clip(fmt.values([s.value]) if s.value is not None else "(every value)", 30),
                fmt.clip(f"{fmt.values(s.before)} → {fmt.values(s.after)}", 50),
                s.source,
                Text(s.stored_as, style="magenta" if s.stored_as != h.predicate else "dim"),
                fmt.clip(s.evidence, 60),
            )
        if in_force >= 0:
            table.move_cursor(row=in_force, animate=False)
        self.loaded_at = time.monotonic()

    def action_prev_pair(self) -> None:
        self.screen.step_pair(-1)  # type: ignore[attr-defined]

    def action_next_pair(self) -> None:
        self.screen.step_pair(1)  # type: ignore[attr-defined]

    def action_explain(self) -> None:
        self.screen.show_view("explain")  # type: ignore[attr-defined]
