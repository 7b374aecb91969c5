"""The command palette (ctrl+p): every row of the action table, and the listed subjects by name."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

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


def _highlight(matcher: Matcher, text: str) -> Content:
    """``text`` with the query's letters marked. Textual's ``Matcher.highlight`` reads its text as markup:
    a subject is agent-written, so it is taken as plain text here."""
    content = Content(text)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, text)
    for offset in offsets:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


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
        for subject, n in subjects:
            name = fmt.text(subject)  # a subject is agent-written: its escapes shown, never sent
            text = f"Subject: {name}"
            # The name is matched on its own: matched on "Subject: name", the query "subject" hit the label
            # first, so every subject scored the same and one whose name holds the word ranked no higher
            # than any other. A subject the label alone matches ("subj" lists them all) ranks below.
            by_name = matcher.match(name)
            if by_name > 0:
                # among names the query matches as well, one that starts with it first, then the shorter
                prefix = name.casefold().startswith(query.casefold())
                score = by_name * (0.95 if prefix else 0.9) - len(name) * 1e-6
                shown = Content("Subject: ") + _highlight(matcher, name)
            else:
                score, shown = matcher.match(text) * 0.5, _highlight(matcher, text)
            if score > 0:
                yield Hit(score, shown, partial(app.open_subject, subject), text=text, help=f"{n:,} event(s)")
