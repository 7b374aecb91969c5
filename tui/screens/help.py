"""The help screen: every key and action, by view, from the action table."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from ..actions import ACTIONS

SCOPES = {
    "app": "Anywhere",
    "pairs": "Subjects and pairs",
    "history": "Pair history",
    "explain": "Explain",
    "diff": "Diff",
    "registry": "Registry",
    "conflicts": "Queues: conflicts",
    "vocab": "Queues: vocabulary",
    "notes": "Queues: notes",
    "plan": "Plan tray",
}

KEY_NAMES = {
    "slash": "/",
    "question_mark": "?",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "enter": "Enter",
}


def key_text(key: str | None, display: str | None) -> str:
    if key is None:
        return "palette"
    return display or KEY_NAMES.get(key, key)


def keys_table() -> Table:
    t = Table(box=None, show_header=False, expand=True, padding=(0, 1))
    t.add_column("key", style="bold cyan", no_wrap=True, width=8)
    t.add_column("action", style="bold", no_wrap=True)
    t.add_column("what it does", style="dim")
    for scope, label in SCOPES.items():
        rows = [a for a in ACTIONS if a.scope == scope]
        if not rows:
            continue
        t.add_row("", Text(label, style="bold yellow underline"), "")
        for a in rows:
            shown = (a.key or "palette") if a.action.startswith("show_view") else key_text(a.key, a.key_display)
            t.add_row(shown, a.title, a.help)
    t.add_row("", Text("Everywhere", style="bold yellow underline"), "")
    t.add_row("^p", "Command palette", "Every action above, searchable; also subjects and predicates by name")
    t.add_row("tab", "Next field", "Move the focus; the mouse works too: click tabs, rows and buttons")
    t.add_row("esc", "Close", "Close a dialog, or leave an input")
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog", classes="dialog"):
            yield Label("Keys — recall-admin console", classes="dialog-title")
            with VerticalScroll():
                yield Static(keys_table(), id="help-keys")
            yield Label("esc or ? closes · every action is also in the command palette (ctrl+p)", classes="dialog-note")

    def action_close(self) -> None:
        self.dismiss(None)
