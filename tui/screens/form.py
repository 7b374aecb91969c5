"""A small form in a modal: the arguments of one staging action.

The fields scroll between the title and the buttons, which stay on screen: at 80x24
a long form (Define, Redefine) keeps its buttons visible, and Tab scrolls the
focused field into view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, Select
from textual.widgets._select import SelectCurrent

from ..services import AppNode

CHROME = 12  # rows a dialog spends outside its fields: borders, padding, title, note, buttons


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    kind: str = "text"  # text | select | check
    value: Any = ""
    options: tuple[tuple[str, Any], ...] = ()  # (label, value) for a select
    placeholder: str = ""
    help: str = ""
    required: bool = False  # a text field that must not be left blank: Stage says so and stays open


class FormSelect(Select[Any]):
    """A Select whose first value waits for its own parts: Textual sets it in the Select's Mount
    handler, which on a busy machine can run before the SelectCurrent child has composed the label
    it writes to (NoMatches '#label', and the form opened with nothing focused)."""

    def _watch_value(self, value: Any) -> None:
        current = self.query(SelectCurrent)
        if current and not current.first().query("#label"):
            self.call_after_refresh(lambda: self._watch_value(self.value))
            return
        super()._watch_value(value)


def field_label(widget: Widget) -> Label | None:
    """The label written above a form field (a checkbox carries its own)."""
    parent = widget.parent
    if parent is None:
        return None
    siblings = list(parent.children)
    i = siblings.index(widget)
    before = siblings[i - 1] if i > 0 else None
    return before if isinstance(before, Label) and before.has_class("field-label") else None


class FormScreen(AppNode, ModalScreen["dict[str, Any] | None"]):
    """Dismisses with the values by field name, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "submit", "Stage")]

    def __init__(self, title: str, fields: list[Field], submit: str = "Stage", note: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields
        self.submit_label = submit
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog form"):
            yield Label(Text(self.title_text), classes="dialog-title")
            if self.note:
                yield Label(Text(self.note), classes="dialog-note")
            with VerticalScroll(classes="form-fields", can_focus=False):
                for f in self.fields:
                    if f.kind == "check":
                        yield Checkbox(Text(f.label), value=bool(f.value), id=f"f-{f.name}")
                    else:
                        yield Label(Text(f.label), classes="field-label")
                        if f.kind == "select":
                            known = any(v == f.value for _, v in f.options)
                            yield FormSelect(
                                list(f.options),
                                value=f.value if known else Select.NULL,
                                allow_blank=not known,
                                id=f"f-{f.name}",
                                compact=True,
                            )
                        else:
                            yield Input(
                                value=str(f.value or ""), placeholder=f.placeholder, id=f"f-{f.name}", compact=True
                            )
                    if f.help:
                        yield Label(Text(f.help), classes="field-help")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.submit_label, id="submit", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        first = self.query(".form-fields Input, .form-fields Select, .form-fields Checkbox").first()
        first.focus()

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in self.fields:
            w = self.query_one(f"#f-{f.name}")
            if isinstance(w, Checkbox):
                out[f.name] = w.value
            elif isinstance(w, Select):
                out[f.name] = None if w.value is Select.NULL else w.value
            elif isinstance(w, Input):
                out[f.name] = w.value.strip()
        return out

    def on_resize(self, event: events.Resize) -> None:
        """The fields take what the terminal leaves them; the buttons never leave the screen. The room the
        title, the note (which may wrap) and the buttons take is measured once laid out, then the fields
        give back whatever overflows."""
        self.query_one(".form-fields").styles.max_height = max(3, event.size.height - CHROME)
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        dialog = self.query_one("#dialog")
        fields = self.query_one(".form-fields")
        buttons = self.query_one(".dialog-buttons")
        overflow = buttons.region.bottom - dialog.content_region.bottom
        if overflow > 0:
            fields.styles.max_height = max(3, fields.outer_size.height - overflow)

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False) -> None:
        """Scroll the focused field into view at once, and only here: Textual's own scroll (to the centre,
        animated, after a refresh) would race this one and leave the fields at either offset."""
        super().set_focus(widget, scroll_visible=False, from_app_focus=from_app_focus)
        if widget is not None and scroll_visible and self.focused is widget:
            label = field_label(widget)
            if label is not None:  # the label first, so that a field reached going up keeps its label in view
                label.scroll_visible(animate=False, immediate=True)
            widget.scroll_visible(animate=False, immediate=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "submit":
            self.action_submit()
        else:
            self.dismiss(None)

    def action_submit(self) -> None:
        values = self.values()
        missing = next((f for f in self.fields if f.required and not values.get(f.name)), None)
        if missing is not None:
            self.app.notify(
                f"Fill in “{missing.label}” first.", title="nothing staged", severity="warning", markup=False
            )
            self.set_focus(self.query_one(f"#f-{missing.name}"))
            return
        self.dismiss(values)

    def action_cancel(self) -> None:
        self.dismiss(None)
