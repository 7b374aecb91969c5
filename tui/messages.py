"""Messages between views: attributes go down, these go up to the main screen."""

from __future__ import annotations

from textual.message import Message

from .staging import Recipe


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


class StagePlan(Message):
    """Stage a plan into the tray: the recipe builds it from a Stager (and again on re-plan)."""

    def __init__(self, recipe: Recipe) -> None:
        super().__init__()
        self.recipe = recipe


class StoreChanged(Message):
    """Something was written (a plan applied, a review decision): views re-read."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what
