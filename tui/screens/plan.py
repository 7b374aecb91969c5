"""The plan tray: the staged plan, its preview (counts, risks, changes, as-of compare), apply or discard.

Staging runs the recipe (a service call that builds the plan) and then
``governance.preview`` in one thread worker; the preview reports progress, shown
in a progress bar, while the rest of the console stays usable. Apply asks first,
then calls ``governance.apply`` with exactly the previewed plan. A stale plan is
refused by the service; the tray shows why and offers to plan again.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Input, Label, ProgressBar, Static

from recall_admin import governance
from recall_admin.cli.render import plan as render_plan
from recall_admin.governance import Preview, Stager
from recall_engine.errors import StalePlan
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory

from .. import format as fmt
from ..actions import bindings
from ..messages import StoreChanged
from ..services import ServiceCalls, error_text
from ..staging import Recipe
from .confirm import ConfirmScreen

MAX_ROWS = 1000  # changes listed in the table; the counts cover every one


class PreviewProgress(Message):
    """Posted from the preview worker's thread: events read so far, of about ``total``."""

    def __init__(self, read: int, total: int) -> None:
        super().__init__()
        self.read = read
        self.total = total


def plan_and_preview(memory: Memory, stager: Stager, recipe: Recipe | None, plan: Any, as_of: int | None,
                     report: Callable[[int, int], None]) -> Preview:
    """Build the plan (unless given) and preview it. Runs in a worker thread."""
    if plan is None:
        assert recipe is not None
        plan = recipe.build(stager)
    counts = memory.store.predicate_counts()
    total = sum(counts.get(n, 0) for n in plan.scope) or 1
    report(0, total)
    pv = governance.preview(memory, plan, as_of=as_of, progress=lambda read: report(read, total))
    report(total, total)
    return pv


class PlanTray(ServiceCalls, Vertical):
    BINDINGS = bindings("plan")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.recipe: Recipe | None = None
        self.preview: Preview | None = None
        self.compare_at: int | None = None
        self.stale: str | None = None
        self.busy = False
        self.applied: dict[str, Any] | None = None
        self.previewed_at: float = 0.0
        self._last_progress = 0.0

    def compose(self) -> ComposeResult:
        yield Label("No plan staged. Stage one from the Registry (5) or the review queues (6).", id="plan-title",
                    classes="view-title")
        with Horizontal(id="plan-progress-row"):
            yield ProgressBar(id="plan-progress", show_eta=False)
            yield Label("", id="plan-progress-label")
        with Horizontal(id="plan-bar", classes="bar"):
            yield Label("compare as of", classes="bar-label")
            yield Input(placeholder="day or RFC3339 (c)", id="plan-as-of", compact=True)
            yield Button("Apply (A)", id="plan-apply", variant="error", compact=True, disabled=True)
            yield Button("Discard (D)", id="plan-discard", compact=True, disabled=True)
            yield Button("Re-plan (R)", id="plan-replan", compact=True, disabled=True)
        yield Static("", id="plan-problem")
        with Vertical(id="plan-body"):
            yield Static("", id="plan-summary")
            table: DataTable = DataTable(id="plan-changes", cursor_type="row")
            yield table

    def on_mount(self) -> None:
        self.query_one("#plan-progress-row").display = False
        self.query_one("#plan-problem").display = False

    # --- state -----------------------------------------------------------------

    @property
    def plan(self) -> Any:
        return self.preview.plan if self.preview else None

    def _buttons(self) -> None:
        has = self.recipe is not None
        self.query_one("#plan-apply", Button).disabled = not (self.preview and not self.stale and not self.busy)
        self.query_one("#plan-discard", Button).disabled = not has or self.busy
        self.query_one("#plan-replan", Button).disabled = not has or self.busy
        self.refresh_bindings()  # the footer asks check_action again
        self.screen.update_plan_badge()  # type: ignore[attr-defined]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "apply":
            return bool(self.preview and not self.stale and not self.busy)
        if action in ("discard", "replan"):
            return self.recipe is not None and not self.busy
        if action == "compare_as_of":
            return self.preview is not None
        return True

    def _problem(self, text: RenderableType | None) -> None:
        box = self.query_one("#plan-problem", Static)
        box.display = text is not None
        box.update(text or "")

    def refresh_data(self) -> None:
        """Ask the service whether the staged plan went stale (another write may have landed)."""
        if self.preview is None or self.busy:
            return
        self.call_service(governance.check_stale, self.app.memory, self.preview.plan,  # type: ignore[attr-defined]
                          failed=self._stale_failed, group="stale")

    def _stale_failed(self, exc: BaseException) -> None:
        if isinstance(exc, StalePlan):
            self._apply_failed(exc)

    # --- staging and preview -------------------------------------------------------

    def stage(self, recipe: Recipe) -> None:
        self.recipe, self.preview, self.stale, self.applied = recipe, None, None, None
        self._run(rebuild=True)

    def _run(self, rebuild: bool) -> None:
        app = self.app
        self.busy = True
        self._problem(None)
        title = self.recipe.title if self.recipe else "plan"
        self.query_one("#plan-title", Label).update(
            f"{'Planning' if rebuild else 'Previewing'} [b]{fmt.esc(title)}[/b]… the console stays usable meanwhile")
        self.query_one("#plan-progress-row").display = True
        bar = self.query_one("#plan-progress", ProgressBar)
        bar.update(total=None, progress=0)
        self.query_one("#plan-progress-label", Label).update("reading the affected pairs…")
        plan = None if rebuild else self.plan
        self.call_service(
            plan_and_preview, app.memory, app.stager, self.recipe, plan, self.compare_at,  # type: ignore[attr-defined]
            self._report, then=self._show, failed=self._failed, group="preview",
        )
        self._buttons()

    def _report(self, read: int, total: int) -> None:  # called in the worker thread
        now = time.monotonic()
        if read in (0, total) or now - self._last_progress > 0.05:
            self._last_progress = now
            self.post_message(PreviewProgress(read, total))

    def on_preview_progress(self, message: PreviewProgress) -> None:
        if not self.busy:
            return
        bar = self.query_one("#plan-progress", ProgressBar)
        bar.update(total=max(message.total, message.read, 1), progress=message.read)
        self.query_one("#plan-progress-label", Label).update(f"{message.read:,} event(s) read")

    def _failed(self, exc: BaseException) -> None:
        self.busy = False
        self.query_one("#plan-progress-row").display = False
        title, text = error_text(exc)
        self.query_one("#plan-title", Label).update(
            f"Could not plan [b]{fmt.esc(self.recipe.title if self.recipe else '')}[/b]")
        self._problem(Text(f"{title}: {text}", style="bold red"))
        if self.preview is None:
            self.recipe = None if not isinstance(exc, StalePlan) else self.recipe
        self._buttons()

    def _show(self, pv: Preview) -> None:
        self.busy = False
        self.preview = pv
        self.stale = None
        self.query_one("#plan-progress-row").display = False
        data = pv.to_json()
        plan = data["plan"]
        self.query_one("#plan-title", Label).update(f"Staged: [b]{fmt.esc(plan['title'])}[/b]   [dim]{plan['id']}[/dim]")
        parts: list[RenderableType] = []
        imp = data["impact"]
        changed = pv.changes_answers
        head = Text(render_plan.summary_line(data), style="bold yellow" if changed else "bold green")
        based = plan["based_on"]
        head.append(f"\n  planned against log position {based['position']} · {imp.get('events_read', 0):,} event(s) "
                    "read", style="dim")
        if self.compare_at is not None:
            head.append(f" · comparing answers as of {fmt.instant(self.compare_at)} too", style="yellow")
        parts.append(head)
        ops = render_plan.ops_lines(plan)
        if ops:
            parts.append(Text("Appends:\n" + "\n".join(f"  + {line}" for line in ops), style="green"))
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
        self.query_one("#plan-summary", Static).update(Group(*parts))
        self._changes(imp["changes"])
        self.previewed_at = time.monotonic()
        self._buttons()

    def _changes(self, changes: list[dict[str, Any]]) -> None:
        table = self.query_one("#plan-changes", DataTable)
        table.clear(columns=True)
        if not changes:
            return
        as_of = self.compare_at is not None
        cols = ["subject", "predicate", "before", "", "after"]
        if as_of:
            cols.append(f"as of {fmt.day(self.compare_at)}: before → after")
        cols.append("history")
        for c in cols:
            table.add_column(c)
        for c in changes[:MAX_ROWS]:
            before, after = c.get("before", []), c.get("after", [])
            same = fmt.values(before) == fmt.values(after)
            row: list[Any] = [c["subject"], c["predicate"], Text(fmt.clip(fmt.values(before), 26), style="red"),
                              "=" if same else "→", Text(fmt.clip(fmt.values(after), 26), style="green")]
            if as_of:
                ba, aa = c.get("before_as_of", []), c.get("after_as_of", [])
                row.append(f"{fmt.clip(fmt.values(ba), 20)} {'=' if fmt.values(ba) == fmt.values(aa) else '→'} "
                           f"{fmt.clip(fmt.values(aa), 20)}")
            row.append(Text("changes", style="yellow") if c.get("history_changed") else Text("same", style="dim"))
            table.add_row(*fmt.cells(*row))

    # --- actions -------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        action = {"plan-apply": self.action_apply, "plan-discard": self.action_discard,
                  "plan-replan": self.action_replan}.get(event.button.id or "")
        if action is not None:
            action()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "plan-as-of":
            return
        event.stop()
        raw = event.value.strip()
        try:
            self.compare_at = parse_instant(raw, what="as of") if raw else None
        except Exception as exc:
            self.app.report_error(exc)  # type: ignore[attr-defined]
            return
        if self.preview is not None:
            self._run(rebuild=False)

    def action_compare_as_of(self) -> None:
        self.screen.set_focus(self.query_one("#plan-as-of", Input))

    def action_apply(self) -> None:
        pv = self.preview
        if pv is None or self.stale or self.busy:
            return
        data = pv.to_json()
        events = len(pv.plan.events())
        body = Group(
            Text(render_plan.summary_line(data), style="bold"),
            Text(f"\n{pv.plan.title}\n\nAppends exactly {events} event(s) in one transaction, as operator "
                 f"{self.app.operator}.", style=""),  # type: ignore[attr-defined]
            *([Text("\n") + render_plan.risks_text(data["risks"])] if data["risks"] else []),
        )
        self.app.ask(ConfirmScreen("Apply this plan?", body, yes="Apply"), self._confirmed)

    def _confirmed(self, yes: bool | None) -> None:
        if not yes or self.preview is None:
            return
        self.busy = True
        self._buttons()
        self.query_one("#plan-title", Label).update(f"Applying [b]{fmt.esc(self.preview.plan.title)}[/b]…")
        self.call_service(governance.apply, self.app.memory, self.preview.plan,  # type: ignore[attr-defined]
                          then=self._applied, failed=self._apply_failed, group="apply")

    def _applied(self, result: dict[str, Any]) -> None:
        self.busy = False
        self.applied = result
        title = self.preview.plan.title if self.preview else ""
        self.recipe, self.preview, self.stale = None, None, None
        text = render_plan.render_applied(result)
        self.query_one("#plan-title", Label).update(f"Applied: [b]{fmt.esc(title)}[/b]. Nothing is staged.")
        self.query_one("#plan-summary", Static).update(text)
        self._changes([])
        self.app.notify(text.plain, title="applied", markup=False)
        self._buttons()
        self.post_message(StoreChanged("apply"))

    def _apply_failed(self, exc: BaseException) -> None:
        self.busy = False
        if isinstance(exc, StalePlan):
            self.stale = str(exc)
            self.query_one("#plan-title", Label).update(
                f"Stale: [b]{fmt.esc(self.recipe.title if self.recipe else '')}[/b] was not applied")
            self._problem(Group(
                Text("The plan is stale — nothing was written.", style="bold red"),
                Text(str(exc)),
                Text("Re-plan (R) computes it again against the store as it is now and shows the new impact.",
                     style="yellow"),
            ))
        else:
            title, text = error_text(exc)
            self._problem(Text(f"{title}: {text}", style="bold red"))
        self._buttons()

    def action_discard(self) -> None:
        if self.recipe is None or self.busy:
            return
        title = self.recipe.title
        self.recipe, self.preview, self.stale, self.compare_at = None, None, None, None
        self.query_one("#plan-as-of", Input).value = ""
        self.query_one("#plan-title", Label).update(f"Discarded [b]{fmt.esc(title)}[/b]; nothing was written.")
        self.query_one("#plan-summary", Static).update("")
        self._changes([])
        self._problem(None)
        self._buttons()

    def action_replan(self) -> None:
        if self.recipe is None or self.busy:
            return
        self.preview, self.stale = None, None
        self._run(rebuild=True)
