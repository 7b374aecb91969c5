"""The one progress indicator: on stderr, transient, and only for work long enough to need it.

Stdout is never touched, so ``--json`` keeps exactly one document there. With a known
total it is a bar (import, demo), without one a spinner counting events (a plan preview).
"""

from __future__ import annotations

import time
from typing import Any

from .output import Output

PREVIEW_AFTER_SECONDS = 0.5  # previews quicker than this show no indicator
IMPORT_MIN_EVENTS = 2000  # smaller imports show no bar
DEMO_MIN_EVENTS = 20_000


class Progress:
    """``update(done[, total])`` as work goes on, ``stop()`` (or leave the ``with``) at the end.

    Shown only when the total reaches ``min_total`` and ``after_seconds`` have passed;
    a bar is never shown in --json mode, a spinner is (it is on stderr)."""

    def __init__(
        self, output: Output, label: str, *, total: int | None = None, min_total: int = 0, after_seconds: float = 0.0
    ) -> None:
        self.output, self.label, self.total = output, label, total
        self.min_total, self.after_seconds = min_total, after_seconds
        self.started = time.monotonic()
        self._live: Any = None
        self._task: Any = None

    def start(self, total: int) -> None:
        """The total became known (an import, once every line was checked)."""
        self.total = total

    def update(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = total
        if self._live is None and not self._show():
            return
        if self._live is None:
            self._open()
        if self.total is None:
            self._live.update(self._task, description=f"{self.label}: {done} event(s) read")
        else:
            self._live.update(self._task, completed=done)

    def _show(self) -> bool:
        if self.total is not None and (self.output.json_mode or self.total < self.min_total):
            return False
        return time.monotonic() - self.started >= self.after_seconds

    def _open(self) -> None:
        from rich import progress as rp

        if self.total is None:
            columns: tuple[Any, ...] = (rp.SpinnerColumn(), rp.TextColumn("{task.description}"), rp.TimeElapsedColumn())
        else:
            columns = (rp.TextColumn(self.label), rp.BarColumn(), rp.MofNCompleteColumn(), rp.TimeRemainingColumn())
        self._live = rp.Progress(*columns, console=self.output.err, transient=True)
        self._live.start()
        self._task = self._live.add_task(self.label, total=self.total)

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
