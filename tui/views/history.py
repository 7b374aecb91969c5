"""Pair history: every step with before and after, a timeline of when each value held."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from recall_admin import browse
from recall_admin.browse import PairHistory

from .. import format as fmt
from ..actions import bindings
from ..messages import Selection, ShowView
from ..services import ServiceCalls
from ..widgets.line import Line
from ..widgets.step_table import Column, StepTable, column_widths
from ..widgets.timeline_chart import TimelineChart

ACTION_STYLE = {
    "assert": "green",
    "retract": "red",
    "retract_all": "red",
    "exclude": "yellow",
    "replaces": "yellow",
    "promote": "magenta",
}
COLUMNS = [
    Column("at (UTC)", 19),
    Column("action", 22),
    Column("value", 28),
    Column("before → after", 48),
    Column("source", 14),
    Column("stored as", 22),
    Column("evidence", 120),
]


class StepRows(Sequence):
    """A history's steps as table rows, each formatted when the table first shows it."""

    def __init__(self, h: PairHistory) -> None:
        self.h = h
        self.cache: dict[int, tuple] = {}

    def __len__(self) -> int:
        return len(self.h.steps)

    def __getitem__(self, i: Any) -> Any:  # a table asks for one row at a time
        row = self.cache.get(i)
        if row is None:
            s = self.h.steps[i]
            action = s.action + (f" by {s.via}" if s.via and s.action in ("exclude", "replaces") else "")
            if s.promoted_to is not None:
                action = s.describe()
            else:  # what it withdrew from other pairs (its own pair's are in before → after)
                elsewhere = [r for r in s.replaced if r.predicate and r.predicate != self.h.predicate]
                if elsewhere:
                    action += "; replaced " + ", ".join(f"{r.predicate}: {fmt.values([r.value])}" for r in elsewhere)
            row = self.cache[i] = (
                (fmt.instant(s.at)[:19], "dim"),  # the column's header says UTC
                (action, ACTION_STYLE.get(s.action, "")),
                (fmt.values([s.value]) if s.value is not None else "(every value)", "bold"),
                (f"{fmt.values(s.before)} → {fmt.values(s.after)}", ""),
                (fmt.text(s.source), ""),
                (fmt.text(s.stored_as), "magenta" if s.stored_as != self.h.predicate else "dim"),
                (fmt.text(s.evidence), "italic"),
            )
        return row


@dataclass(frozen=True)
class Shown:
    """A pair's history ready to draw: read, its rows measured and the step in force found off the UI thread."""

    history: PairHistory
    rows: StepRows
    widths: list[int]
    in_force: int  # the last step at or before the answer's instant (-1: none)


# the rows of the histories browse.pair_history keeps, by their steps: (the steps, their rows, the widths)
_rows_kept: OrderedDict[int, tuple[Sequence[Any], StepRows, list[int]]] = OrderedDict()
_rows_lock = threading.Lock()


def read_history(memory: Any, subject: str, predicate: str, as_of: int | None, known_at: int | None) -> Shown:
    """Runs in the worker: the history (``browse.pair_history``), and what the table needs before it can draw
    it, the column widths, whose measuring formats the first and last 100 rows. On the UI thread that was
    about a sixth of opening a 1,000-step history (docs/benchmarks.md, "Seventh round")."""
    h = browse.pair_history(memory, subject, predicate, as_of, known_at)
    rows, widths = _rows(h)
    in_force = -1
    for i, s in enumerate(h.steps):
        if s.at > h.at:
            break
        in_force = i
    return Shown(h, rows, widths, in_force)


def _rows(h: PairHistory) -> tuple[StepRows, list[int]]:
    """A history's rows and their widths, kept with the histories ``browse.pair_history`` keeps: a kept
    history hands back the same steps (the same list), whose rows read the same whatever the instant of its
    answer, so a pair opened again is not formatted again. The entry holds the steps, so its key (their
    ``id``) cannot name other steps while it is kept."""
    key = id(h.steps)
    with _rows_lock:
        kept = _rows_kept.get(key)
        if kept is not None and kept[0] is h.steps:
            _rows_kept.move_to_end(key)
            return kept[1], kept[2]
    rows = StepRows(h)
    widths = column_widths(rows, COLUMNS)
    with _rows_lock:
        _rows_kept[key] = (h.steps, rows, widths)
        while len(_rows_kept) > browse.HISTORIES_KEPT:
            _rows_kept.popitem(last=False)
    return rows, widths


class HistoryView(ServiceCalls, Vertical):
    BINDINGS = bindings("history")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data: PairHistory | None = None
        self.loaded_at: float = 0.0
        self.shown: str = ""  # the predicate whose history is on screen (benchmarks)

    def compose(self) -> ComposeResult:
        yield Line("Choose a pair in Pairs (1) and press Enter.", id="history-title", classes="view-title")
        yield Line("", id="history-answer")
        yield TimelineChart(id="timeline")
        yield StepTable(COLUMNS, id="history-table")

    def refresh_data(self, sel: Selection, on_shown: Callable[[], None] | None = None) -> None:
        subject, predicate = sel.subject, sel.predicate
        if not subject or not predicate:
            return
        app = self.app
        self.query_one("#history-title", Line).update(
            f"[b]{fmt.esc(fmt.subject(subject))}[/b] · [b]{fmt.esc(predicate)}[/b] — reading…"
        )
        self.call_service(
            read_history,
            app.memory,
            subject,
            predicate,
            sel.as_of,
            sel.known_at,
            then=lambda data: self._show(data, sel.as_of, on_shown, sel.known_at),
            failed=lambda _: on_shown and on_shown(),
            group="history",
        )

    def _show(
        self,
        shown: Shown,
        as_of: int | None,
        on_shown: Callable[[], None] | None = None,
        known_at: int | None = None,
    ) -> None:
        h = shown.history
        self.data = h
        known = f", the steps recorded by {fmt.instant(known_at)}" if known_at is not None else ""
        self.query_one("#history-title", Line).update(
            f"[b]{fmt.esc(fmt.subject(h.subject))}[/b] · [b]{fmt.esc(h.predicate)}[/b] — {len(h.steps)} step(s), oldest first"
            + known
        )
        answer = Text("answer as of ", style="dim")
        if as_of is None and known_at is not None:
            as_of = known_at  # a read at that instant
        answer.append(fmt.instant(as_of), style="bold yellow" if as_of is not None else "bold")
        if known_at is not None:
            answer.append(" known at ", style="dim")
            answer.append(fmt.instant(known_at), style="bold yellow")
        answer.append(": ")
        answer.append(fmt.values(h.answer), style="bold green")
        answer.append("   (re-folded at that instant; set it with a)", style="dim")
        self.query_one("#history-answer", Line).update(answer)
        start = h.steps[0].at if h.steps else h.now
        self.query_one(TimelineChart).show(h.spans, start, max(h.now, start + 1), h.at if as_of is not None else None)
        self.query_one(StepTable).set_rows(shown.rows, cursor=max(shown.in_force, 0), widths=shown.widths)
        self.shown = h.predicate
        self.loaded_at = time.monotonic()
        if on_shown is not None:
            on_shown()

    def action_explain(self) -> None:
        self.post_message(ShowView("explain"))

    def action_answer_then(self) -> None:
        """The answer as given right after the highlighted step was recorded: known at and
        as of its recorded instant, explained (docs/history-diff-explain.md)."""
        if self.data is None or not self.data.steps:
            return
        step = self.data.steps[self.query_one(StepTable).cursor_row]
        if step.recorded_at is None:
            return
        self.app.as_of = step.recorded_at
        self.app.known_at = step.recorded_at
        self.post_message(ShowView("explain"))
