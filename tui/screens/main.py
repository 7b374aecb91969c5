"""The main screen: subjects on the left, the views in tabs, the as-of instant and the plan on top."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Input, Label, LoadingIndicator, Static, TabbedContent, TabPane, Tabs

from .. import format as fmt
from ..messages import PairChosen, Selection, ShowView, StagePlan, StepPair, StoreChanged, SubjectChosen, TrayChanged
from ..services import AppNode
from ..views.diff import DiffView
from ..views.explain import ExplainView
from ..views.history import HistoryView
from ..views.pairs import PairsView
from ..views.plan import PlanTray
from ..views.queues import QueuesView
from ..views.registry import RegistryView
from ..widgets.footer import ConsoleFooter
from ..widgets.subject_list import SubjectList
from ..widgets.view_tabs import ViewTabs

VIEWS = ("pairs", "history", "explain", "diff", "registry", "queues", "plan")
TITLES = {
    "pairs": "1 Pairs",
    "history": "2 History",
    "explain": "3 Explain",
    "diff": "4 Diff",
    "registry": "5 Registry",
    "queues": "6 Queues",
    "plan": "7 Plan",
}
QUEUES = ("conflicts", "vocab", "notes")
READ_ONLY = (
    "The store is open read-only (--read-only): staging, apply and review decisions are off. "
    "Open it without --read-only to change it."
)
REVEAL_AFTER = 0.25  # seconds a pair's view may take to read before it is shown without its data


class MainScreen(AppNode, Screen[None]):
    """Holds the selection (subject, pair); views read it and load what they show."""

    AUTO_FOCUS = ""  # the focus is given explicitly: to the visible view's list

    def __init__(self) -> None:
        super().__init__()
        self.subject: str | None = None
        self.predicate: str | None = None
        self.stale: set[str] = set(VIEWS) | set(QUEUES)
        self.ready_at: float = 0.0
        self._reveal: object | None = None
        self._narrow: bool | None = None

    def compose(self) -> ComposeResult:
        # the width classes are set before the children exist, so styling them once is enough
        self._fit(self.app.size.width, update=False)
        with Horizontal(id="topbar"):
            yield Label("recall-admin", id="brand")
            yield Input(placeholder="/ search memory", id="search", compact=True)
            yield Label("as of", classes="bar-label")
            yield Input(placeholder="blank: now (a)", id="as-of", compact=True)
            # shown once used (K): history, explain and diff answer as a read then did
            yield Label("known at", id="known-at-label", classes="bar-label")
            yield Input(placeholder="blank: now (K)", id="known-at", compact=True)
            yield Label("no plan staged", id="plan-badge")
        with Horizontal(id="body"):
            yield SubjectList(id="sidebar")
            with ViewTabs(id="views", initial="pairs"):
                with TabPane(TITLES["pairs"], id="pairs"):
                    yield PairsView(id="pairs-view")
                with TabPane(TITLES["history"], id="history"):
                    yield HistoryView(id="history-view")
                with TabPane(TITLES["explain"], id="explain"):
                    yield ExplainView(id="explain-view")
                with TabPane(TITLES["diff"], id="diff"):
                    yield DiffView(id="diff-view")
                with TabPane(TITLES["registry"], id="registry"):
                    yield RegistryView(id="registry-view")
                with TabPane(TITLES["queues"], id="queues"):
                    yield QueuesView(id="queues-view")
                with TabPane(TITLES["plan"], id="plan"):
                    yield PlanTray(id="plan-view")
        with Vertical(id="startup"):
            yield LoadingIndicator()
            yield Static("", id="startup-error")
        yield ConsoleFooter()

    @property
    def settled(self) -> bool:
        """Nothing scheduled to read: no view waits to be revealed, the subject filter is not waiting."""
        return self._reveal is None and self.query_one(SubjectList).settled

    def on_mount(self) -> None:
        # number keys switch views; the tab strips stay out of the focus chain so Tab moves between lists
        for tabs in self.query(Tabs):
            tabs.can_focus = False
        for node in (self.query_one("#known-at-label"), self.query_one("#known-at")):
            node.display = False  # until a known-at instant is asked for (K, or a history step's g)
        self.app.open_session()

    NARROW = 100  # below this many columns the subjects start hidden (b shows them)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int, update: bool = True) -> None:
        """Narrow or wide layout. A class on the screen restyles every widget under it, so it changes
        only when the width crosses ``NARROW``."""
        narrow = width < self.NARROW
        if narrow != self._narrow:
            self._narrow = narrow
            self.set_class(narrow, "-narrow", update=update)
            self.set_class(not narrow, "-sidebar", update=update)

    def show_sidebar(self, show: bool | None) -> None:
        """Show, hide (or with None, toggle) the subjects."""
        show = (not self.has_class("-sidebar")) if show is None else show
        self.set_class(show, "-sidebar")
        sidebar = self.query_one(SubjectList)
        if not show and self.focused is not None and sidebar in self.focused.ancestors_with_self:
            self.focus_active()

    # --- session ---------------------------------------------------------------------

    def session_ready(self) -> None:
        app = self.app
        # the body replaces the loading indicator: two widgets change, not a class on the whole screen
        self.query_one("#startup").display = False
        self.query_one("#body").display = True
        self.update_plan_badge()
        assert app.session is not None
        self.query_one(SubjectList).show_store(app.session, app.read_only)
        self.query_one(SubjectList).load()
        if self.has_class("-sidebar"):
            self.set_focus(self.query_one(SubjectList).table)
        else:
            self.focus_active()

    def session_failed(self, title: str, text: str, heading: str = "Cannot open the store") -> None:
        self.query_one("#startup LoadingIndicator").display = False
        self.query_one("#startup-error", Static).update(
            f"[b red]{heading}[/b red]\n\n{fmt.esc(title)}: {fmt.esc(text)}\n\n[dim]q quits[/dim]"
        )

    # --- views -----------------------------------------------------------------------

    @property
    def selection(self) -> Selection:
        return Selection(self.subject, self.predicate, self.app.as_of, self.app.known_at)

    def view(self, name: str) -> Any:
        """A view by name (each view has its own class; callers know which they asked for)."""
        ids = {
            "pairs": "#pairs-view",
            "history": "#history-view",
            "explain": "#explain-view",
            "diff": "#diff-view",
            "registry": "#registry-view",
            "queues": "#queues-view",
            "plan": "#plan-view",
            "conflicts": "#conflicts",
            "vocab": "#vocab",
            "notes": "#notes",
        }
        return self.query_one(ids[name])

    @property
    def active(self) -> str:
        return self.query_one("#views", TabbedContent).active

    def show_view(self, name: str, focus: bool = True) -> None:
        if name in QUEUES:
            self.query_one(QueuesView).show(name)
            name = "queues"
        tabs = self.query_one("#views", TabbedContent)
        if tabs.active != name:
            tabs.active = name
        else:
            self._load_if_stale(name)
        if focus:
            self._focus_view(name)

    def on_screen_resume(self) -> None:
        """Back from a dialog: keep the focus in the visible view."""
        self.call_after_refresh(self._ensure_focus)

    def _ensure_focus(self) -> None:
        if self.focused is None or not self.focused.is_on_screen:
            self.focus_active()

    def focus_active(self) -> None:
        self._focus_view(self.active)

    def _focus_view(self, name: str) -> None:
        """Give the view's main list the focus (a focused widget left in a hidden view would switch back)."""
        target = {
            "pairs": "#pairs-table",
            "history": "#history-table",
            "explain": "#explain-scroll",
            "diff": "#diff-table",
            "registry": "#predicates-table",
            "plan": "#plan-body",  # the preview scrolls as one: summary, notes, changes
        }.get(name)
        if name == "queues":
            inner = self.query_one("#queue-tabs", TabbedContent).active.removeprefix("q-")
            target = {"conflicts": "#conflicts-table", "vocab": "#inbox-table", "notes": "#clusters-table"}[inner]
        if target is not None and self.active == (name if name not in QUEUES else "queues"):
            self.set_focus(self.query_one(target))

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane = event.pane.id or ""
        if event.tabbed_content.id == "views":
            self._load_if_stale(pane)
            if pane == "queues":
                inner = self.query_one("#queue-tabs", TabbedContent).active
                self._load_if_stale(inner.removeprefix("q-"))
        elif event.tabbed_content.id == "queue-tabs":
            self._load_if_stale(pane.removeprefix("q-"))

    def _load_if_stale(self, name: str) -> None:
        if self.app.session is None:
            return
        if name == "queues":
            return
        if name in self.stale:
            self.stale.discard(name)
            self.view(name).refresh_data(self.selection)

    def invalidate(self, *names: str) -> None:
        """Mark views to re-read; the visible one re-reads now."""
        self.stale.update(names or (set(VIEWS) | set(QUEUES)))
        self.stale.discard("plan")
        current = self.active
        if current == "queues":
            current = self.query_one("#queue-tabs", TabbedContent).active.removeprefix("q-")
        self._load_if_stale(current)

    # --- selection ---------------------------------------------------------------------

    def on_subject_chosen(self, message: SubjectChosen) -> None:
        if message.subject == self.subject and "pairs" not in self.stale:
            return
        self.subject = message.subject
        self.stale.update({"pairs", "history", "explain"})
        self.predicate = None
        self._load_if_stale("pairs")  # even when hidden: it picks the first pair and reports it

    def on_pair_chosen(self, message: PairChosen) -> None:
        changed = (message.subject, message.predicate) != (self.subject, self.predicate)
        if message.subject != self.subject:
            self.subject = message.subject
            self.query_one(SubjectList).select(message.subject)
            self.stale.add("pairs")
        self.predicate = message.predicate
        if changed:
            self.stale.update({"history", "explain"})
        if message.open:
            self.open_view(message.open)
        elif self.active in ("history", "explain"):
            self._load_if_stale(self.active)

    def open_view(self, name: str) -> None:
        """Show a pair's view. When it must read first, read, then switch: one redraw with the data in
        it, instead of an empty view and then its data (after REVEAL_AFTER it switches anyway)."""
        if name not in ("history", "explain") or name not in self.stale or self.active == name:
            self.show_view(name)
            return
        self.stale.discard(name)
        token = object()
        self._reveal = token
        asked_from = self.focused

        def reveal() -> None:
            if self._reveal is token:
                self._reveal = None
                # the operator may have gone on meanwhile (`a` and a date typed): leave the focus there
                self.show_view(name, focus=self.focused is asked_from or self.focused is None)

        self.view(name).refresh_data(self.selection, on_shown=reveal)
        self.set_timer(REVEAL_AFTER, reveal)

    def on_step_pair(self, message: StepPair) -> None:
        self.step_pair(message.delta)

    def on_show_view(self, message: ShowView) -> None:
        self.show_view(message.name)

    def step_pair(self, delta: int) -> None:
        """Move to the pair above or below in the subject's list, from any view (also right after a
        subject was chosen in the filter: the pairs are read even when their view is hidden)."""
        pairs = self.view("pairs")
        rows = pairs.rows
        if not rows:
            return
        index = next((i for i, r in enumerate(rows) if r.predicate == self.predicate), 0)
        index = max(0, min(len(rows) - 1, index + delta))
        from textual.widgets import DataTable

        pairs.query_one("#pairs-table", DataTable).move_cursor(row=index, animate=False)
        if rows[index].predicate != self.predicate:
            self.predicate = rows[index].predicate
            self.stale.update({"history", "explain"})
            self._load_if_stale(self.active)
        if self.active not in ("pairs", "history", "explain"):
            self.show_view("pairs")

    # --- as of -------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search":
            event.stop()
            self.show_view("pairs")
            self.view("pairs").search(event.value)
            return
        if event.input.id not in ("as-of", "known-at"):
            return
        event.stop()
        shown = self.app.as_of if event.input.id == "as-of" else self.app.known_at
        try:
            at = fmt.typed_instant(event.value, event.input.id.replace("-", " "), shown)
        except Exception as exc:
            self.app.report_error(exc)
            return
        if event.input.id == "as-of":
            self.app.as_of = at
        else:
            self.app.known_at = at
        self.focus_active()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """Leaving the as-of or known-at box without a valid Enter puts back the instant in force: a
        refused or unsubmitted entry left in the top bar would read as the instant every view answers at."""
        box = event.widget
        if not isinstance(box, Input) or box.id not in ("as-of", "known-at"):
            return
        at = self.app.as_of if box.id == "as-of" else self.app.known_at
        try:
            kept = fmt.typed_instant(box.value, box.id, at) == at
        except Exception:  # what is typed does not parse: it is not what the views answer at
            kept = False
        if not kept:
            box.value = fmt.instant(at) if at is not None else ""

    def show_known_at(self, focus: bool = False) -> None:
        for node in (self.query_one("#known-at-label"), self.query_one("#known-at")):
            node.display = True
        if focus:
            self.set_focus(self.query_one("#known-at"))

    def known_at_changed(self, at: int | None) -> None:
        box = self.query_one("#known-at", Input)
        if at is None:
            box.value = ""
        else:
            self.show_known_at()
            if box.value.strip() != fmt.instant(at):  # set from elsewhere (a history step): show it
                box.value = fmt.instant(at)
        self.invalidate("history", "explain", "diff")

    def as_of_changed(self, at: int | None) -> None:
        box = self.query_one("#as-of", Input)
        if at is None:
            box.value = ""
        elif not box.value.strip():  # set from elsewhere (the palette): show it
            box.value = fmt.instant(at)
        self.invalidate("pairs", "history", "explain")

    # --- plans and writes -------------------------------------------------------------

    def on_stage_plan(self, message: StagePlan) -> None:
        if self.app.read_only:
            self.app.notify(READ_ONLY, title="read-only", severity="warning", markup=False)
            return
        self.query_one(PlanTray).stage(message.recipe)
        self.show_view("plan")

    def on_tray_changed(self, message: TrayChanged) -> None:
        self.update_plan_badge()

    def update_plan_badge(self) -> None:
        badge = self.query_one("#plan-badge", Label)
        if self.app.read_only:
            badge.update("[b]read-only[/b]: staging and apply are off")
            return
        badge.update(self.query_one(PlanTray).badge())

    def on_store_changed(self, message: StoreChanged) -> None:
        self.query_one(SubjectList).load()
        self.invalidate()
