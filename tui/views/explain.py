"""Explain: why the selected pair answers what it does — events, the deciding rule, registry events."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, Static

from recall_admin import browse
from recall_admin.agents.attribution import describe_writer
from recall_admin.browse import AnswerExplanation
from recall_admin.cli.render import FitTable

from .. import format as fmt
from ..actions import bindings
from ..messages import Selection
from ..services import ServiceCalls

NO_WRAP = {"at", "event", "held", "op", "operator", "plan"}


def _table(title: str, *columns: str) -> Table:
    """Too narrow for every column with its words whole (80 columns with the subjects shown), a row is
    shown as a stack of ``column  value`` lines instead of columns folded to a letter or two."""
    t = FitTable(
        title=title,
        title_justify="left",
        title_style="bold yellow",
        expand=True,
        show_edge=False,
        pad_edge=False,
        box=None,
        header_style="dim",
    )
    for c in columns:
        if c in NO_WRAP:
            t.add_column(c, no_wrap=True)
        else:
            t.add_column(c, overflow="fold", ratio=1)
    return t


def render_explanation(a: AnswerExplanation) -> RenderableType:
    x = a.explanation
    parts: list[RenderableType] = []
    head = Text()
    head.append(f"{fmt.text(x.subject)} · {fmt.text(x.predicate)}", style="bold")
    head.append(f" as of {fmt.instant(x.at)}: ", style="dim")
    head.append(fmt.values([b.value for b in x.beliefs]), style="bold green")
    parts.append(head)

    why = _table("Why each value", "value", "held", "reason", "event", "at")
    for r in x.reasons:
        why.add_row(
            *fmt.cells(
                fmt.values([r.value]),
                Text("yes", style="green") if r.held else Text("no", style="red"),
                fmt.text(r.reason),
                fmt.text(r.event_id),
                fmt.instant(r.at),
            )
        )
    parts.append(why)

    rule = Text()
    rule.append("The rule that decided it\n", style="bold yellow")
    d = a.in_force
    if d is None:
        rule.append("  no definition governs this predicate at that instant", style="dim")
    else:
        rule.append(f"  {d.cardinality}-valued {d.value_type or 'string'}", style="bold")
        if d.excludes:
            rule.append(f"; excludes {fmt.text(', '.join(d.excludes))}")
        if d.historical:
            rule.append("; historical (only an explicit retraction withdraws a value)")
        if d.allowed:
            rule.append(f"; allowed {fmt.text(', '.join(d.allowed))}")
        if a.deciding_record is not None:
            deciding = x.rules[a.deciding_record]
            rule.append(
                f"\n  set by {deciding.op} of {fmt.text(deciding.name)} at {fmt.instant(deciding.at)}: "
                f"{fmt.text(deciding.change)}",
                style="dim",
            )
    parts.append(rule)

    rules = _table("Registry events that govern it, oldest first", "at", "op", "name", "change", "operator", "plan")
    for i, rec in enumerate(x.rules):
        style = "bold" if i == a.deciding_record else ""
        rules.add_row(
            *fmt.cells(
                fmt.instant(rec.at), rec.op, rec.name, rec.change, rec.record.operator or "—", rec.record.plan or "—"
            ),
            style=style,
        )
    parts.append(rules)

    events = _table(
        "Its events, oldest first (dim: after the instant)", "at", "event", "value", "stored as", "source", "evidence"
    )
    for e in sorted(x.events, key=lambda e: (e.observed_at, e.retraction, e.id)):
        value = ("retract " if e.retraction else "") + (
            fmt.values([e.value]) if e.value is not None else "(every value)"
        )
        later = e.observed_at > x.at
        events.add_row(
            *fmt.cells(
                fmt.instant(e.observed_at),
                e.id,
                Text(value, style="red" if e.retraction else ""),
                e.predicate,
                e.source + (f" · {describe_writer(a.writers[e.id])}" if e.id in a.writers else ""),
                fmt.clip(e.evidence, 80),
            ),
            style="dim" if later else "",
        )
    parts.append(events)
    return Group(*parts)


class ExplainView(ServiceCalls, Vertical):
    BINDINGS = bindings("explain")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data: AnswerExplanation | None = None

    def compose(self) -> ComposeResult:
        yield Label("Choose a pair in Pairs (1) and press e.", id="explain-title", classes="view-title")
        with VerticalScroll(id="explain-scroll"):
            yield Static("", id="explain-body")

    def refresh_data(self, sel: Selection, on_shown: Callable[[], None] | None = None) -> None:
        subject, predicate = sel.subject, sel.predicate
        if not subject or not predicate:
            return
        app = self.app
        self.query_one("#explain-title", Label).update(
            f"Explaining [b]{fmt.esc(fmt.subject(subject))}[/b] · [b]{fmt.esc(predicate)}[/b]…"
        )
        self.call_service(
            browse.explain_answer,
            app.memory,
            subject,
            predicate,
            sel.as_of,
            sel.known_at,
            then=lambda data: self._show(data, on_shown, sel.known_at),
            failed=lambda _: on_shown and on_shown(),
            group="explain",
        )

    def _show(
        self, a: AnswerExplanation, on_shown: Callable[[], None] | None = None, known_at: int | None = None
    ) -> None:
        self.data = a
        x = a.explanation
        known = f", as answered by a read known at {fmt.instant(known_at)}" if known_at is not None else ""
        self.query_one("#explain-title", Label).update(
            f"Why [b]{fmt.esc(fmt.subject(x.subject))}[/b] · [b]{fmt.esc(x.predicate)}[/b] answers what it does, "
            f"as of {fmt.instant(x.at)}{known}"
        )
        self.query_one("#explain-body", Static).update(render_explanation(a))
        if on_shown is not None:
            on_shown()
