"""Regular expressions typed by an operator (`notes list --match`, `promote --match`), run
with a time bound.

A pattern such as ``(a|aa)+$`` backtracks exponentially on a long note; with the standard
``re`` module one search could hold the command (or the console) for minutes. The
``regex`` package takes the same syntax and stops a search after ``timeout`` seconds;
past it the command fails with a clear error (docs/review-queues.md).
"""

from __future__ import annotations

from typing import Any

import regex

from recall_engine.errors import InvalidInput, RecallError

SEARCH_TIMEOUT_S = 0.25  # per text searched; the package checks it every so many steps


class Pattern:
    """A compiled operator pattern (case-insensitive) whose searches are time-bounded."""

    def __init__(self, text: str, what: str = "--match", error: type[RecallError] = InvalidInput) -> None:
        self.text = text
        self.what = what
        self.error = error
        try:
            self._rx = regex.compile(text, regex.IGNORECASE | regex.VERSION0)
        except (regex.error, ValueError, OverflowError) as exc:
            raise error(f"{what} is not a valid regular expression: {exc}") from None

    @property
    def groupindex(self) -> dict[str, int]:
        return dict(self._rx.groupindex)

    @property
    def groups(self) -> int:
        return int(self._rx.groups)

    def search(self, text: str) -> Any:
        try:
            return self._rx.search(text, timeout=SEARCH_TIMEOUT_S)
        except TimeoutError:
            raise self.error(
                f"{self.what} {self.text[:80]!r} took longer than {SEARCH_TIMEOUT_S:g} s on one text "
                "(it backtracks too much); write a simpler pattern"
            ) from None
