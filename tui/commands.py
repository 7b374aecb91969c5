"""The command palette (ctrl+p): every row of the action table, and the listed subjects by name."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from . import format as fmt
from .actions import ACTIONS, APP
from .widgets.subject_list import SubjectList

if TYPE_CHECKING:
    from .app import RecallApp

SCOPE_NAMES = {
    "pairs": "Pairs",
    "history": "History",
    "explain": "Explain",
    "diff": "Diff",
    "registry": "Registry",
    "conflicts": "Conflicts",
    "vocab": "Vocabulary",
    "notes": "Notes",
    "plan": "Plan tray",
}


def _label(scope: str, title: str) -> str:
    return title if scope == APP else f"{SCOPE_NAMES.get(scope, scope)}: {title}"


class RecallCommands(Provider):
    """Actions from the table (by title or by the words an operator would type); a listed subject by name."""

    @property
    def console(self) -> RecallApp:
        return cast("RecallApp", self.app)

    async def discover(self) -> Hits:
        app = self.console
        for a in ACTIONS:
            yield DiscoveryHit(_label(a.scope, a.title), partial(app.run_action_row, a), help=a.help)

    async def search(self, query: str) -> Hits:
        app = self.console
        matcher = self.matcher(query)
        for a in ACTIONS:
            text = _label(a.scope, a.title)
            score = matcher.match(text)
            # the words an operator would type ("undo", "load"...) find the action too
            by_words = max((matcher.match(w) for w in a.words.split()), default=0) * 0.95
            if score > 0 or by_words > 0:
                shown = matcher.highlight(text) if score >= by_words else Text(text)
                yield Hit(max(score, by_words), shown, partial(app.run_action_row, a), text=text, help=a.help)
        try:
            subjects = app.main.query_one(SubjectList).subjects
        except Exception:  # the store is not open yet
            subjects = []
        for subject, n in subjects[:200]:
            text = f"Subject: {fmt.text(subject)}"  # a subject is agent-written: its escapes shown, never sent
            score = matcher.match(text)
            if score > 0:
                yield Hit(
                    score * 0.9,
                    matcher.highlight(text),
                    partial(app.open_subject, subject),
                    text=text,
                    help=f"{n:,} event(s)",
                )
