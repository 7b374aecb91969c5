"""Messages between views: attributes go down (``Selection``), these go up to the main screen.

A view never reaches into the screen above it: it posts one of these, and the main
screen (which owns the selection, the tabs and the focus) decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from .staging import Recipe


@dataclass(frozen=True)
class Selection:
    """What the views read at: handed down by the main screen with every ``refresh_data``."""

    subject: str | None = None
    predicate: str | None = None
    as_of: int | None = None  # None: now
    # history, explain and diff: only what the store had recorded by then (None: the whole log)
    known_at: int | None = None


class SubjectChosen(Message):
    """A subject was highlighted in the sidebar (or a search result named one)."""

    def __init__(self, subject: str) -> None:
        super().__init__()
        self.subject = subject


class PairChosen(Message):
    """A pair was highlighted; ``open`` names a view to show it in (history, explain) or is empty."""

    def __init__(self, subject: str, predicate: str, open: str = "") -> None:
        super().__init__()
        self.subject = subject
        self.predicate = predicate
        self.open = open


class StepPair(Message):
    """Move to the pair above (-1) or below (+1) in the subject's list."""

    def __init__(self, delta: int) -> None:
        super().__init__()
        self.delta = delta


class ShowView(Message):
    """Show a view (``pairs``, ``explain``, ``conflicts``...) and focus its list."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class StagePlan(Message):
    """Stage a plan into the tray: the recipe builds it from a Stager (and again on re-plan)."""

    def __init__(self, recipe: Recipe) -> None:
        super().__init__()
        self.recipe = recipe


class TrayChanged(Message):
    """The tray's plans changed state (staged, previewed, stale, applied): the top bar's badge follows."""


class StoreChanged(Message):
    """Something was written (a plan applied, a review decision): views re-read."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what
