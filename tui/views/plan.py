"""The plan tray: staged plans, each with its preview (counts, risks, changes, as-of compare), apply or discard.

The tray holds several plans at once, listed at its top; the highlighted one is
shown below. Each plan previews in its own thread worker (its recipe, a service
call that builds the plan, then ``governance.preview``), goes stale on its own, and
is applied on its own: apply asks first, then calls ``governance.apply`` with
exactly the previewed plan. A stale plan is refused by the service; the tray shows
why and offers to plan again. A plan can be saved to a file and a saved plan file
staged (the CLI's ``--plan-out`` format, ``recall_admin.plans``).

Beside the preview's before → after, the tray can show what each changed pair was
*answered* at a chosen known-at instant (a read then, with only what the store had
recorded by then; docs/history-diff-explain.md, "Two time axes"), so an operator sees
whether the plan brings an answer back to what was said then.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, DataTable, Input, Label, ProgressBar, Static

from recall_admin import governance
from recall_admin.cli.render import plan as render_plan
from recall_admin.governance import Preview, Stager
from recall_admin.plans import write_plan
from recall_engine.errors import RecallError, StalePlan
from recall_engine.memory import Memory
from recall_engine.values import value_key

from .. import format as fmt
from ..actions import bindings
from ..messages import Selection, StoreChanged, TrayChanged
from ..screens.confirm import ConfirmScreen
from ..screens.form import Field, FormScreen
from ..services import ServiceCalls, error_text
from ..staging import Recipe, plan_file, typed_path
from ..widgets.line import Line
from ..widgets.table import ConsoleTable

MAX_ROWS = 1000  # changes listed in the table; the counts cover every one
READ_ONLY = "Read-only store (--read-only): plans cannot be staged or applied here."


class PreviewProgress(Message):
    """Posted from a preview worker's thread: events read so far, of about ``total``, for one staged plan."""

    def __init__(self, key: int, read: int, total: int) -> None:
        super().__init__()
        self.key = key
        self.read = read
        self.total = total


def plan_and_preview(
    memory: Memory,
    stager: Stager,
    recipe: Recipe | None,
    plan: Any,
    as_of: int | None,
    known_at: int | None,
    report: Callable[[int, int], None],
) -> tuple[Preview, governance.Answered | None]:
    """Build the plan (unless given), preview it, and with ``known_at`` read what its pairs were answered
    then. Runs in a worker thread."""
    if plan is None:
        assert recipe is not None
        plan = recipe.build(stager)
    counts = memory.store.predicate_counts()
    total = sum(counts.get(n, 0) for n in plan.scope) or 1
    report(0, total)
    pv = governance.preview(memory, plan, as_of=as_of, progress=lambda read: report(read, total))
    report(total, total)
    return pv, (governance.answered_then(memory, pv, known_at, as_of, limit=MAX_ROWS) if known_at is not None else None)


def same(a: Any, b: Any) -> bool:
    """Two answers hold the same values (in any order)."""
    return {value_key(v) for v in a or ()} == {value_key(v) for v in b or ()}


@dataclass
class Staged:
    """One plan in the tray, and where it stands."""

    key: int
    recipe: Recipe
    preview: Preview | None = None
    stale: str | None = None  # the service's words when it was refused as stale
    busy: bool = False
    error: str | None = None
    compare_at: int | None = None
    known_at: int | None = None  # compare with what was answered by a read at this instant
    answered: governance.Answered | None = None  # ... and what that read answered, per changed pair
    progress: tuple[int, int] = (0, 0)

    @property
    def state(self) -> str:
        if self.busy:
            return "previewing…"
        if self.error:
            return "could not plan"
        if self.stale:
            return "stale"
        if self.preview is not None:
            return f"{self.preview.impact.answers_changed} answer(s) change"
        return "staged"


class PlanTray(ServiceCalls, Vertical):
    BINDINGS = bindings("plan")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[Staged] = []
        self.selected: Staged | None = None
        self.applied: dict[str, Any] | None = None
        self.previewed_at: float = 0.0
        self._keys = itertools.count(1)
        self._last_progress = 0.0

    def compose(self) -> ComposeResult:
        yield Line(
            "No plan staged. Stage one from the Registry (5) or the review queues (6), or open a plan file (O).",
            id="plan-title",
            classes="view-title",
        )
        tray: DataTable[Any] = ConsoleTable(id="plan-list", cursor_type="row")
        tray.add_column("#", key="n")
        tray.add_column("staged plan", key="title")
        tray.add_column("state", key="state")
        yield tray
        with Horizontal(id="plan-progress-row"):
            yield ProgressBar(id="plan-progress", show_eta=False)
            yield Line("", id="plan-progress-label")
        with Horizontal(id="plan-bar", classes="bar"):
            yield Label("compare as of", classes="bar-label")
            yield Input(placeholder="a day or RFC3339 (c)", id="plan-as-of", compact=True)
            yield Label("answered at", classes="bar-label")
            yield Input(placeholder="a known-at day (k)", id="plan-known-at", compact=True)
        with Horizontal(id="plan-buttons", classes="bar"):
            yield Button("Apply (A)", id="plan-apply", variant="error", compact=True, disabled=True)
            yield Button("Discard (D)", id="plan-discard", compact=True, disabled=True)
            yield Button("Re-plan (R)", id="plan-replan", compact=True, disabled=True)
        yield Static("", id="plan-problem")
        with VerticalScroll(id="plan-body"):
            yield Static("", id="plan-summary")
            table: DataTable[Any] = ConsoleTable(id="plan-changes", cursor_type="row")
            yield table

    def on_mount(self) -> None:
        self.query_one("#plan-progress-row").display = False
        self.query_one("#plan-bar").display = self.query_one("#plan-buttons").display = False
        self.query_one("#plan-problem").display = False
        self.query_one("#plan-list").display = False

    # --- the selected plan (what the buttons and keys act on) ------------------------

    @property
    def recipe(self) -> Recipe | None:
        return self.selected.recipe if self.selected else None

    @property
    def preview(self) -> Preview | None:
        return self.selected.preview if self.selected else None

    @property
    def stale(self) -> str | None:
        return self.selected.stale if self.selected else None

    @property
    def busy(self) -> bool:
        return bool(self.selected and self.selected.busy)

    @property
    def compare_at(self) -> int | None:
        return self.selected.compare_at if self.selected else None

    @property
    def known_at(self) -> int | None:
        return self.selected.known_at if self.selected else None

    @property
    def plan(self) -> Any:
        return self.preview.plan if self.preview else None

    def badge(self) -> str:
        """The top bar's line: the plans staged and the highlighted one's state."""
        s = self.selected
        if s is None:
            return "no plan staged"
        title = fmt.esc(fmt.clip(s.recipe.title, 30))
        more = f" (+{len(self.entries) - 1} more)" if len(self.entries) > 1 else ""
        if s.busy:
            return f"[yellow]previewing: {title}[/yellow]{more}"
        if s.stale:
            return f"[red]stale plan: {title}[/red]{more}"
        if s.preview is not None:
            # the count first: a narrow top bar cuts the end of the line
            return f"[b]plan[/b] ({s.preview.impact.answers_changed} answer(s) change): {title}{more}"
        return f"plan: {title}{more}"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("apply", "open_file") and self.app.read_only:
            return None
        if action == "apply":
            return bool(self.preview and not self.stale and not self.busy)
        if action in ("discard", "replan"):
            return self.recipe is not None and not self.busy
        if action in ("compare_as_of", "compare_known_at", "save"):
            return self.preview is not None
        return True

    def _buttons(self) -> None:
        ro = self.app.read_only
        s = self.selected
        for bar in ("#plan-bar", "#plan-buttons"):  # nothing to compare or act on without a plan
            self.query_one(bar).display = s is not None
        self.query_one("#plan-apply", Button).disabled = ro or not (s and s.preview and not s.stale and not s.busy)
        self.query_one("#plan-discard", Button).disabled = s is None or s.busy
        self.query_one("#plan-replan", Button).disabled = s is None or s.busy or not s.recipe.replannable
        self.refresh_bindings()  # the footer asks check_action again
        self._list()
        self.post_message(TrayChanged())

    def _list(self) -> None:
        tray = self.query_one("#plan-list", DataTable)
        # listed when there is a choice, and after an apply (the plan now selected is not on show)
        tray.display = len(self.entries) > 1 or bool(self.entries and self.applied is not None)
        tray.clear()
        for s in self.entries:
            tray.add_row(str(s.key), Text(fmt.clip(s.recipe.title, 60)), s.state, key=str(s.key))
        if self.selected in self.entries:
            tray.move_cursor(row=self.entries.index(self.selected), animate=False)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "plan-list":
            return
        event.stop()
        # only the operator's own moves choose a plan: the tray refills the list itself on every change
        if (
            event.data_table.has_focus
            and 0 <= event.cursor_row < len(self.entries)
            and (self.entries[event.cursor_row] is not self.selected or self.applied is not None)
        ):
            self.selected, self.applied = self.entries[event.cursor_row], None
            self._show_selected()
            self._buttons()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a listed plan shows it (also the one left selected after an apply)."""
        if event.data_table.id != "plan-list":
            return
        event.stop()
        if 0 <= event.cursor_row < len(self.entries):
            self.selected, self.applied = self.entries[event.cursor_row], None
            self._show_selected()
            self._buttons()

    def _problem(self, text: RenderableType | None) -> None:
        box = self.query_one("#plan-problem", Static)
        box.display = text is not None
        box.update(text or "")

    def refresh_data(self, sel: Selection | None = None) -> None:
        """Ask the service whether each previewed plan went stale (another write may have landed)."""
        if self.selected is None and self.app.read_only:
            self._show_selected()  # say why nothing can be staged here
        for s in self.entries:
            if s.preview is not None and not s.busy and not s.stale:
                self.call_service(
                    governance.check_stale,
                    self.app.memory,
                    s.preview.plan,
                    failed=partial(self._stale_failed, s),
                    group=f"stale-{s.key}",
                )

    def _stale_failed(self, s: Staged, exc: BaseException) -> None:
        if isinstance(exc, StalePlan):
            s.stale = str(exc)
            self._show_selected()
            self._buttons()

    # --- staging and preview -------------------------------------------------------

    def stage(self, recipe: Recipe) -> None:
        s = Staged(next(self._keys), recipe)
        self.entries.append(s)
        self.selected, self.applied = s, None
        self._run(s, rebuild=True)

    def _run(self, s: Staged, rebuild: bool) -> None:
        s.busy, s.error = True, None
        plan = None if rebuild else (s.preview.plan if s.preview else None)
        s.progress = (0, 0)
        self.call_service(
            plan_and_preview,
            self.app.memory,
            self.app.stager,
            s.recipe,
            plan,
            s.compare_at,
            s.known_at,
            partial(self._report, s.key),
            then=lambda result: self._previewed(s, *result),
            failed=lambda exc: self._failed(s, exc),
            group=f"preview-{s.key}",
        )
        self._show_selected()
        self._buttons()

    def _report(self, key: int, read: int, total: int) -> None:  # called in the worker thread
        now = time.monotonic()
        if read in (0, total) or now - self._last_progress > 0.05:
            self._last_progress = now
            self.post_message(PreviewProgress(key, read, total))

    def on_preview_progress(self, message: PreviewProgress) -> None:
        s = next((e for e in self.entries if e.key == message.key), None)
        if s is None or not s.busy:
            return
        s.progress = (message.read, message.total)
        if s is self.selected:
            self._progress(s)

    def _progress(self, s: Staged) -> None:
        read, total = s.progress
        self.query_one("#plan-progress", ProgressBar).update(
            total=max(total, read, 1) if total else None, progress=read
        )
        self.query_one("#plan-progress-label", Line).update(
            f"{read:,} event(s) read" if total else "reading the affected pairs…"
        )

    def _failed(self, s: Staged, exc: BaseException) -> None:
        s.busy = False
        title, text = error_text(exc)
        s.error = f"{title}: {text}"
        self._show_selected()
        self._buttons()

    def _previewed(self, s: Staged, pv: Preview, answered: governance.Answered | None) -> None:
        s.busy, s.preview, s.stale, s.error, s.answered = False, pv, None, None, answered
        self.previewed_at = time.monotonic()
        self._show_selected()
        self._buttons()

    # --- what the selected plan shows ------------------------------------------------

    def _show_selected(self) -> None:
        s = self.selected
        title = self.query_one("#plan-title", Line)
        self.query_one("#plan-progress-row").display = bool(s and s.busy)
        summary = self.query_one("#plan-summary", Static)
        ro = Text(f"\n{READ_ONLY}", style="bold yellow") if self.app.read_only else Text("")
        if s is None:
            title.update(
                "Nothing can be staged: the store is open read-only."
                if self.app.read_only
                else "No plan staged. Stage one from the Registry (5) or the review queues (6), or open a plan file (O)."
            )
            summary.update(ro)
            self._changes([])
            self._problem(None)
            return
        self.query_one("#plan-as-of", Input).value = fmt.instant(s.compare_at)[:19] if s.compare_at else ""
        self.query_one("#plan-known-at", Input).value = fmt.instant(s.known_at)[:19] if s.known_at else ""
        name = fmt.esc(s.recipe.title)
        if s.busy:
            title.update(f"Planning [b]{name}[/b]… the console stays usable meanwhile")
            self._progress(s)
            self._problem(None)
            return
        if s.error:
            title.update(f"Could not plan [b]{name}[/b]")
            self._problem(Text(s.error, style="bold red"))
            summary.update("")
            self._changes([])
            return
        if s.stale:
            title.update(f"Stale: [b]{name}[/b] was not applied")
            self._problem(
                Group(
                    Text("The plan is stale — nothing was written.", style="bold red"),
                    Text(fmt.text(s.stale)),
                    Text(
                        "Re-plan (R) computes it again against the store as it is now and shows the new impact."
                        if s.recipe.replannable
                        else "A plan file is applied as written: discard it (D).",
                        style="yellow",
                    ),
                )
            )
        else:
            self._problem(None)
        if s.preview is None:
            return
        data = s.preview.to_json()
        plan = data["plan"]
        if not s.stale:
            title.update(f"Staged: [b]{fmt.esc(plan['title'])}[/b]   [dim]{fmt.esc(plan['id'])}[/dim]")
        summary.update(self._summary(s, data))
        merged = {op["name"]: op["into"] for op in plan.get("ops", []) if op.get("op") == "merge" and op.get("into")}
        self._changes(data["impact"]["changes"], merged, s)

    def _summary(self, s: Staged, data: dict[str, Any]) -> RenderableType:
        plan, imp = data["plan"], data["impact"]
        parts: list[RenderableType] = []
        assert s.preview is not None
        head = Text(render_plan.summary_line(data), style="bold yellow" if s.preview.changes_answers else "bold green")
        based = plan["based_on"]
        head.append(
            f"\n  planned against log position {based['position']} · {imp.get('events_read', 0):,} event(s) read",
            style="dim",
        )
        if s.compare_at is not None:
            head.append(f" · comparing answers as of {fmt.instant(s.compare_at)} too", style="yellow")
        parts.append(head)
        if s.known_at is not None and s.answered is not None:
            parts.append(self._answered_line(s, imp["changes"]))
        ops = render_plan.ops_lines(plan)
        if ops:
            parts.append(Text("Appends:\n" + "\n".join(f"  + {fmt.text(line)}" for line in ops), style="green"))
        details = plan.get("details", {})
        if isinstance(details, dict) and details.get("reverts"):  # a revert: what the withdraw takes back
            taken = render_plan.ops_lines(
                {"ops": details.get("records", []), "statements": details.get("statements", [])}
            )
            if taken:
                head_line = f"Takes back what {fmt.text(details['reverts'])} appended:\n"
                parts.append(Text(head_line + "\n".join(f"  - {line}" for line in taken), style="yellow"))
        predicates = render_plan.predicates_text(plan.get("details", {}))  # a registry load, name by name
        if predicates is not None:
            parts.append(Text("Predicates:", style="bold") + Text("\n") + predicates)
        conflicts = render_plan.conflicts_text(imp)
        if conflicts is not None:
            parts.append(Text("Conflicts:", style="bold") + Text("\n") + conflicts)
        if data["risks"]:
            parts.append(Text("Risk flags:", style="bold red") + Text("\n") + render_plan.risks_text(data["risks"]))
        else:
            parts.append(Text("No risk flag.", style="dim"))
        notes = render_plan.notes_table(plan.get("details", {}))
        if notes is not None:
            parts.append(notes)
        if not imp["changes"]:
            parts.append(Text("No answer and no past answer changes.", style="green"))
        if self.app.read_only:
            parts.append(Text(READ_ONLY, style="bold yellow"))
        return Group(*parts)

    @staticmethod
    def _compared(s: Staged, c: dict[str, Any]) -> tuple[Any, Any]:
        """The before and after a known-at answer is compared with: as of the compare instant when set."""
        if s.compare_at is not None:
            return c.get("before_as_of", []), c.get("after_as_of", [])
        return c.get("before", []), c.get("after", [])

    def _answered_line(self, s: Staged, changes: list[dict[str, Any]]) -> Text:
        """How the answers given at the known-at instant compare with the plan's before and after."""
        assert s.known_at is not None and s.answered is not None
        rows = [c for c in changes[:MAX_ROWS] if (c["subject"], c["predicate"]) in s.answered]
        then = [s.answered[(c["subject"], c["predicate"])] for c in rows]
        back = sum(1 for c, t in zip(rows, then, strict=True) if t is not None and same(t, self._compared(s, c)[1]))
        kept = sum(1 for c, t in zip(rows, then, strict=True) if t is not None and same(t, self._compared(s, c)[0]))
        about = f" about {fmt.instant(s.compare_at)}" if s.compare_at is not None else ""
        line = Text(f"Answered by a read at {fmt.instant(s.known_at)}{about}: ", style="bold cyan")
        if not rows:
            return line.append("the plan changes no pair, so there is nothing to compare.")
        line.append(
            f"{back} of {len(rows)} changed pair(s) answered then what they answer after the plan; "
            f"{kept} answered then what they answer before it."
        )
        return line

    def _changes(
        self, changes: list[dict[str, Any]], merged: dict[str, str] | None = None, s: Staged | None = None
    ) -> None:
        table = self.query_one("#plan-changes", DataTable)
        table.clear(columns=True)
        if not changes:
            return
        merged = merged or {}
        compare_at = s.compare_at if s else None
        as_of = compare_at is not None
        answered = s.answered if s and s.known_at is not None else None
        cols = ["subject", "predicate", "before", "", "after"]
        if as_of:
            cols.append(f"as of {fmt.day(compare_at)} (UTC): before → after")
        if answered is not None and s is not None:
            cols.append(f"answered at {fmt.day(s.known_at)} (UTC)")
        cols.append("history")
        for name in cols:
            table.add_column(name)
        for c in changes[:MAX_ROWS]:
            before, after = c.get("before", []), c.get("after", [])
            same = fmt.values(before) == fmt.values(after)
            shown_after = Text(fmt.clip(fmt.values(after), 26), style="green")
            if not after and c.get("predicate") in merged:  # the name is merged away: its values read elsewhere
                shown_after = Text(f"read as {fmt.text(merged[c['predicate']])}", style="dim")
            row: list[Any] = [
                c["subject"],
                c["predicate"],
                Text(fmt.clip(fmt.values(before), 26), style="red"),
                "=" if same else "→",
                shown_after,
            ]
            if as_of:
                ba, aa = c.get("before_as_of", []), c.get("after_as_of", [])
                row.append(
                    f"{fmt.clip(fmt.values(ba), 20)} {'=' if fmt.values(ba) == fmt.values(aa) else '→'} "
                    f"{fmt.clip(fmt.values(aa), 20)}"
                )
            if answered is not None and s is not None:
                row.append(
                    self._answered_cell(answered.get((c["subject"], c["predicate"]), None), *self._compared(s, c))
                )
            row.append(Text("changes", style="yellow") if c.get("history_changed") else Text("same", style="dim"))
            table.add_row(*fmt.cells(*row))

    @staticmethod
    def _answered_cell(then: list[Any] | None, before: Any, after: Any) -> Text:
        """What was answered then, marked with the side of the plan it agrees with."""
        if then is None:
            return Text("not a predicate then", style="dim")
        cell = Text(fmt.clip(fmt.values(then), 22), style="cyan")
        if same(then, after) and not same(then, before):
            cell.append("  = after", style="green")
        elif same(then, before) and not same(then, after):
            cell.append("  = before", style="dim")
        return cell

    # --- actions -------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        action = {
            "plan-apply": self.action_apply,
            "plan-discard": self.action_discard,
            "plan-replan": self.action_replan,
        }.get(event.button.id or "")
        if action is not None:
            action()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id not in ("plan-as-of", "plan-known-at"):
            return
        event.stop()
        s = self.selected
        if s is None:
            return
        what = "as of" if event.input.id == "plan-as-of" else "known at"
        shown = s.compare_at if what == "as of" else (s.known_at or self.app.known_at)
        try:
            at = fmt.typed_instant(event.value, what, shown)
        except RecallError as exc:
            self.app.report_error(exc)
            return
        if what == "as of":
            s.compare_at = at
        else:
            s.known_at, s.answered = at, None
        self.query_one("#plan-body").focus()  # the tray's keys answer again
        if s.preview is None:
            return
        if what == "known at" and at is not None:  # the preview stands: only read what was answered then
            self.call_service(
                partial(governance.answered_then, limit=MAX_ROWS),
                self.app.memory,
                s.preview,
                at,
                s.compare_at,
                then=partial(self._answered, s, at),
                group=f"answered-{s.key}",
            )
        elif what == "known at":
            self._show_selected()
        else:
            self._run(s, rebuild=False)

    def _answered(self, s: Staged, known_at: int, answered: governance.Answered) -> None:
        if s.known_at != known_at:  # asked again meanwhile: that read will report
            return
        s.answered = answered
        if s is self.selected:
            self._show_selected()

    def action_compare_as_of(self) -> None:
        self.query_one("#plan-as-of", Input).focus()

    def action_compare_known_at(self) -> None:
        """Focus "answered at"; it starts from the top bar's known-at instant when one is set."""
        box = self.query_one("#plan-known-at", Input)
        if not box.value and self.app.known_at is not None:
            box.value = fmt.instant(self.app.known_at)[:19]
        box.focus()

    def action_apply(self) -> None:
        s = self.selected
        if self.app.read_only:
            self.app.notify(READ_ONLY, severity="warning", markup=False)
            return
        if s is None or s.preview is None or s.stale or s.busy:
            return
        pv = s.preview
        data = pv.to_json()
        events = len(pv.plan.events())
        body = Group(
            Text(render_plan.summary_line(data), style="bold"),
            Text(
                f"\n{fmt.text(pv.plan.title)}\n\nAppends exactly the plan's {events} event(s) and the record of who "
                f"applied it, in one transaction, as operator {fmt.text(self.app.operator)}."
            ),
            *([Text("\n") + render_plan.risks_text(data["risks"])] if data["risks"] else []),
        )
        self.app.ask(ConfirmScreen("Apply this plan?", body, yes="Apply"), lambda yes: self._confirmed(s, yes))

    def _confirmed(self, s: Staged, yes: bool | None) -> None:
        if not yes or s.preview is None:
            return
        s.busy = True
        self._buttons()
        self.query_one("#plan-title", Line).update(f"Applying [b]{fmt.esc(s.preview.plan.title)}[/b]…")
        self.call_service(
            governance.apply,
            self.app.memory,
            s.preview.plan,
            then=lambda result: self._applied(s, result),
            failed=lambda exc: self._apply_failed(s, exc),
            group=f"apply-{s.key}",
        )

    def _applied(self, s: Staged, result: dict[str, Any]) -> None:
        self.applied = result
        title = s.preview.plan.title if s.preview else s.recipe.title
        self._drop(s)
        text = render_plan.render_applied(result)
        rest = f" {len(self.entries)} plan(s) still staged." if self.entries else " Nothing is staged."
        self.query_one("#plan-title", Line).update(f"Applied: [b]{fmt.esc(title)}[/b].{rest}")
        self.query_one("#plan-summary", Static).update(text)
        self._changes([])
        self.app.notify(text.plain, title="applied", markup=False)
        self._buttons()
        self.post_message(StoreChanged("apply"))

    def _apply_failed(self, s: Staged, exc: BaseException) -> None:
        s.busy = False
        if isinstance(exc, StalePlan):
            s.stale = str(exc)
        else:
            title, text = error_text(exc)
            s.error = f"{title}: {text}"
        self._show_selected()
        self._buttons()

    def _drop(self, s: Staged) -> None:
        i = self.entries.index(s)
        self.entries.remove(s)
        self.selected = self.entries[min(i, len(self.entries) - 1)] if self.entries else None

    def action_discard(self) -> None:
        s = self.selected
        if s is None or s.busy:
            return
        self._drop(s)
        self._show_selected()
        if self.selected is None:
            self.query_one("#plan-title", Line).update(
                f"Discarded [b]{fmt.esc(s.recipe.title)}[/b]; nothing was written."
            )
        self._buttons()

    def action_replan(self) -> None:
        s = self.selected
        if s is None or s.busy:
            return
        if not s.recipe.replannable:
            self.app.notify(
                "A plan read from a file is applied as written or not at all: it cannot be re-planned. "
                "Discard it (D), then open the file again (O) or stage the change afresh.",
                severity="warning",
                markup=False,
            )
            return
        s.preview, s.stale = None, None
        self._run(s, rebuild=True)

    def action_save(self) -> None:
        s = self.selected
        if s is None or s.preview is None:
            return
        plan = s.preview.plan

        def done(v: dict[str, Any] | None) -> None:
            if v and v.get("path"):
                path = typed_path(v["path"])
                self.call_service(
                    write_plan,
                    plan,
                    path,
                    then=lambda _: self.app.notify(
                        f"Wrote plan {plan.id} to {path}; apply it here (O) or with `recall-admin apply {path}`.",
                        markup=False,
                    ),
                    group="save",
                )

        self.app.ask(
            FormScreen(
                "Save the plan to a file",
                [Field("path", "file", value=f"{plan.id}.json", placeholder="a path for the JSON plan", required=True)],
                submit="Save",
                note="The same format as the CLI's --plan-out.",
            ),
            done,
        )

    def action_open_file(self) -> None:
        if self.app.read_only:
            self.app.notify(READ_ONLY, severity="warning", markup=False)
            return

        def done(v: dict[str, Any] | None) -> None:
            if v and v.get("path"):
                self.stage(plan_file(v["path"]))

        self.app.ask(
            FormScreen(
                "Open a plan file",
                [Field("path", "file", placeholder="a plan written with --plan-out or Save", required=True)],
                submit="Preview",
                note="The plan is previewed here; Apply writes it as written.",
            ),
            done,
        )
