"""`RecallApp`: the Textual console over the recall_admin services (``recall-admin tui``).

The app opens a ``Session`` (in a worker), shows the main screen, and routes keys
and palette commands from the action table (``tui/actions.py``). It holds no rule
of its own: every answer, plan, preview and write comes from a service call.
"""

from __future__ import annotations

import gc
import logging
import time
import traceback
from typing import Any

from textual.app import App
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker

from recall_admin.governance import Stager
from recall_admin.session import DEFAULT_COLLECTION, Session, check_operator, check_user_collection
from recall_engine.errors import RecallError

from .actions import APP, Action, bindings
from .commands import RecallCommands
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .services import ServiceCalls, error_text, shown
from .widgets.subject_list import SubjectList

log = logging.getLogger("recall.tui")
# The cyclic garbage collector runs on a timer, between keys, instead of in the middle of a
# read: a view that reads 1,000 events makes tens of thousands of objects, and a collection
# that lands on the way pauses the UI for 15-50 ms (a middle-generation one, 200 ms).
GC_EVERY = 1.0  # seconds between young collections (when there is anything to collect)
GC_FULL_EVERY = 60  # young collections between full ones
GC_BACKSTOP = (200_000, 50, 50)  # automatic thresholds kept as a backstop for long runs without a timer


class RecallApp(ServiceCalls, App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "recall-admin"
    COMMANDS = App.COMMANDS | {RecallCommands}
    BINDINGS = bindings(APP)
    ERROR_TIMEOUT: float = 10  # seconds an error stays on screen (other notices: NOTIFICATION_TIMEOUT)

    as_of: reactive[int | None] = reactive(None, init=False)
    known_at: reactive[int | None] = reactive(None, init=False)

    def __init__(
        self,
        store_url: str | None = None,
        collection: str = DEFAULT_COLLECTION,
        operator: str | None = None,
        read_only: bool = False,
        match_threshold: float | None = None,
        *,
        session: Session | None = None,
        tune_gc: bool = True,
    ) -> None:
        super().__init__()
        self.store_url = store_url
        self.collection = collection
        self.operator_name = operator
        self.open_read_only = read_only
        self.match_threshold = match_threshold
        self.pending: set[Worker[Any]] = set()  # service calls whose result is not handled yet
        self.session: Session | None = session
        self.stager: Stager | None = None
        self.errors: list[tuple[str, str]] = []  # every error shown, for tests and the log
        self._owns_session = session is None
        self.ready_at = 0.0
        self.tune_gc = tune_gc

    # --- session -----------------------------------------------------------------------

    @property
    def settled(self) -> bool:
        """No service call is running or waiting to deliver its result, and no view waits to read (a
        debounced filter, a view waiting for its data before it is shown). Tests wait on this."""
        if self.pending:
            return False
        try:
            main = self.main
        except LookupError:
            return True
        return main.settled

    @property
    def memory(self) -> Any:
        assert self.session is not None, "the store is not open yet"
        return self.session.memory

    @property
    def operator(self) -> str:
        return self.session.operator if self.session else (self.operator_name or "")

    @property
    def read_only(self) -> bool:
        return bool(self.session and self.session.read_only)

    def get_default_screen(self) -> Screen:
        return MainScreen()

    def open_session(self) -> None:
        """Called by the main screen once mounted: open the store in a worker (or use the given session)."""
        if self.session is not None:
            self._opened(self.session)
            return
        try:
            # an option's own fault is named as such, not as a store that cannot open (Session.open
            # checks these too, first, with the same words)
            check_user_collection(self.collection)
            if self.operator_name is not None:
                check_operator(self.operator_name)
        except RecallError as exc:
            self.main.session_failed(*error_text(exc), heading="Invalid option")
            self.report_error(exc)
            return
        self.call_service(
            Session.open,
            self.store_url,
            self.collection,
            self.operator_name,
            self.open_read_only,
            create=False,  # a read never creates a store (docs/governance.md, "Reads never write")
            match_threshold=self.match_threshold,
            then=self._opened,
            failed=self._open_failed,
            group="session",
        )

    def _opened(self, session: Session) -> None:
        self.session = session
        self.stager = Stager(session.memory, session.collection, session.operator)
        self.main.session_ready()

    def first_screen_ready(self) -> None:
        """The first screen is up: take the cyclic garbage collector off the keys' path.

        What exists now (widgets, styles, the registry) lives as long as the app: it is frozen
        out of every later collection. From then on collections run on a timer, between keys,
        with the automatic thresholds raised to a backstop. Reference counting still frees what
        a view reads and drops the moment it drops it; only cycles wait for the timer.
        """
        self.ready_at = time.monotonic()
        if self.tune_gc:
            # after the screen is drawn: a full collection on the way would delay the first frame
            self.call_after_refresh(self._tune_gc)

    def _tune_gc(self) -> None:
        gc.collect()
        gc.freeze()
        gc.set_threshold(*GC_BACKSTOP)
        self._gc_rounds = 0
        self.set_interval(GC_EVERY, self._collect)

    def _collect(self) -> None:
        if self.pending:
            return  # a key's read is on its way: collect at the next tick, not in the middle of showing it
        self._gc_rounds += 1
        if self._gc_rounds % GC_FULL_EVERY == 0:
            gc.collect()
        elif gc.get_count()[0] > 1000:
            gc.collect(1)

    def _open_failed(self, exc: BaseException) -> None:
        self.main.session_failed(*error_text(exc))

    def on_unmount(self) -> None:
        if self.session is not None and self._owns_session:
            self.session.close()

    @property
    def main(self) -> MainScreen:
        for s in self.screen_stack:
            if isinstance(s, MainScreen):
                return s
        raise LookupError("the main screen is not mounted")

    # --- errors ------------------------------------------------------------------------

    def report_error(self, exc: BaseException) -> None:
        """Show an error in the app: a service's message as it is, a bug as one line."""
        title, text = error_text(exc)
        self.errors.append((title, text))
        if title == "internal error":
            log.error("internal error in the console:\n%s", "".join(traceback.format_exception(exc)))
        self.notify(text, title=title, severity="error", timeout=self.ERROR_TIMEOUT, markup=False)

    def _handle_exception(self, error: Exception) -> None:
        """A bug in the console itself: outside tests, exit with one line, the traceback goes to the log."""
        if self.is_headless:
            super()._handle_exception(error)  # tests see the traceback
            return
        path = write_crash_log(error)
        self._return_code = 1
        self.exit(
            return_code=1,
            message=f"recall-admin tui: internal error: {shown(f'{type(error).__name__}: {error}')} (details in {path})",
        )

    # --- actions -----------------------------------------------------------------------

    def watch_as_of(self, at: int | None) -> None:
        self.main.as_of_changed(at)

    def watch_known_at(self, at: int | None) -> None:
        self.main.known_at_changed(at)

    def action_show_view(self, name: str) -> None:
        self.main.show_view(name)

    def action_step_pair(self, delta: int) -> None:
        self.main.step_pair(delta)

    def action_focus_subjects(self) -> None:
        self.main.show_sidebar(True)
        self.main.set_focus(self.main.query_one("#subject-filter"))

    def action_toggle_sidebar(self) -> None:
        self.main.show_sidebar(None)

    def action_focus_search(self) -> None:
        self.main.show_view("pairs", focus=False)
        self.main.set_focus(self.main.query_one("#search"))

    def action_focus_as_of(self) -> None:
        self.main.set_focus(self.main.query_one("#as-of"))

    def action_focus_known_at(self) -> None:
        self.main.show_known_at(focus=True)

    def action_clear_as_of(self) -> None:
        self.as_of = None
        self.known_at = None

    def action_refresh(self) -> None:
        if self.session is None:
            return
        from .messages import StoreChanged

        self.main.post_message(StoreChanged("refresh"))

    def action_leave(self) -> None:
        """Escape: leave an input for the view's list, or close the search results."""
        from textual.widgets import Input

        main = self.main
        if self.screen is not main:
            return
        if isinstance(self.focused, Input) and self.focused.id != "search":
            main.focus_active()
            return
        if not main.view("pairs").close_search() and isinstance(self.focused, Input):
            main.focus_active()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.ask(HelpScreen())

    def ask(self, screen: Screen[Any], callback: Any = None) -> None:
        """Open a dialog. The main screen forgets its focus first: on return it focuses the view that is
        visible then (a dialog that stages a plan shows the tray), never the widget it was opened from."""
        if self.screen is self.main:
            self.main.set_focus(None)
        self.push_screen(screen, callback)

    async def run_action_row(self, a: Action) -> None:
        """Run one row of the action table from the palette: show its view first."""
        if a.scope == APP:
            await self.run_action(a.action)
            return
        main = self.main
        main.show_view(a.scope)
        await self.run_action(a.action, main.view(a.scope))

    def open_subject(self, subject: str) -> None:
        main = self.main
        main.query_one(SubjectList).select(subject)
        main.show_view("pairs")


def write_crash_log(error: BaseException) -> str:
    """Write a traceback to the user log folder; returns where (or a note if that failed)."""
    try:
        import os

        from platformdirs import user_log_dir

        folder = user_log_dir("recall-admin")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "tui-crash.log")
        with open(path, "a", encoding="utf-8") as f:
            f.write("".join(traceback.format_exception(error)) + "\n")
        return path
    except Exception:  # the log is a courtesy; never fail while failing
        return "no log written"


def main(**session_args: Any) -> None:
    """Run the console with the CLI's global options (``recall-admin [OPTIONS] tui``; ``python -m tui``
    goes through the CLI too): store_url, collection, operator, read_only, match_threshold."""
    RecallApp(**session_args).run()
