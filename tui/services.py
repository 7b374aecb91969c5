"""Running service calls off the UI thread, and showing their errors in the app.

Every call into ``recall_admin`` or ``recall_engine`` goes through
``ServiceCalls.call_service``: a thread worker (``run_worker(thread=True)``, the
same machinery as ``@work(thread=True)``) whose result comes back to the UI thread
as a ``Worker.StateChanged`` message. A newer call in the same group supersedes an
older one (``exclusive``), and a superseded result is dropped. A failure never
reaches the terminal as a traceback: it becomes a notification (and, for the plan
tray, an error panel).

The app counts the calls whose result has not been handled yet (``RecallApp.pending``):
tests wait on that, never on time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.worker import Worker, WorkerState

from recall_admin.display import visible
from recall_engine.errors import RecallError

if TYPE_CHECKING:
    from textual import getters
    from textual.dom import DOMNode

    from .app import RecallApp

    class AppNode(DOMNode):
        """A node of the console: its ``app`` is the ``RecallApp`` (stated once, for the type checker)."""

        app = getters.app(RecallApp)
else:

    class AppNode:
        """At run time the node's own ``app`` property answers; this class only carries the type."""


Done = Callable[[Any], None]
Failed = Callable[[BaseException], None]


def error_text(exc: BaseException) -> tuple[str, str]:
    """(title, message) for an error: a service's own words, or one line for a bug. A message may quote
    what an agent wrote: its control characters are shown escaped (its line breaks kept)."""
    if isinstance(exc, RecallError):
        return exc.code.replace("_", " "), shown(str(exc))
    return "internal error", shown(f"{type(exc).__name__}: {exc}".rstrip(": "))


def shown(message: str) -> str:
    """A message with its control characters escaped, line by line."""
    return "\n".join(visible(line) for line in message.split("\n"))


class ServiceCalls(AppNode):
    """Mixin for widgets and screens that call services in thread workers."""

    def call_service(
        self,
        fn: Callable[..., Any],
        *args: Any,
        then: Done | None = None,
        failed: Failed | None = None,
        group: str = "service",
        exclusive: bool = True,
        description: str = "",
        **kwargs: Any,
    ) -> Worker[Any]:
        pending = self.__dict__.setdefault("_service_pending", {})
        if exclusive:
            # The call supersedes the group's earlier ones: their results are dropped, so stop waiting for
            # them now. One cancelled before its task first ran never reports a state change (Textual sets
            # CANCELLED inside the task), and the app would count it as in flight for good.
            for old in [w for w in pending if w.group == group]:
                del pending[old]
                self.app.pending.discard(old)
        worker = self.run_worker(
            partial(fn, *args, **kwargs),
            name=group,
            group=group,
            description=description or getattr(fn, "__name__", "service call"),
            exclusive=exclusive,
            thread=True,
            exit_on_error=False,
        )
        pending[worker] = (then, failed)
        self.app.pending.add(worker)
        return worker

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        pending = self.__dict__.get("_service_pending", {})
        hooks = pending.get(event.worker)
        if hooks is None:
            return
        then, failed = hooks
        state = event.state
        if state in (WorkerState.PENDING, WorkerState.RUNNING):
            return
        pending.pop(event.worker, None)
        try:
            if state == WorkerState.SUCCESS and not event.worker.is_cancelled:
                if then is not None:
                    then(event.worker.result)
            elif state == WorkerState.ERROR:
                exc = event.worker.error or RuntimeError("the call failed")
                if failed is not None:
                    failed(exc)
                self.app.report_error(exc)
        finally:
            self.app.pending.discard(event.worker)
