"""The footer: the keys of the view in focus, rewritten in place when the focus moves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.geometry import Size
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.screen import Screen

Key = tuple[str, str, str, str, bool, str]  # key, how it is shown, description, action, disabled, tooltip


class ConsoleFooter(Footer):
    """Textual's ``Footer`` (8.2) removes every key widget and mounts new ones after each focus move: on a
    view switch that was about 30 ms of styling and a second layout of the whole screen, after the frame
    that showed the view (docs/benchmarks.md, "Seventh round"). This one keeps its key widgets: when the
    keys differ it rewrites their text in place, in the same frame as the focus move, hides the ones it
    does not need and mounts more only when a view has more keys than it ever showed. The console's
    bindings carry no groups (``tui/actions.py``); should one appear, the stock rebuild draws it.

    A key that does not fit whole beside the palette's is hidden, its place kept (``_fit``): the stock
    footer cuts it mid-label (``S Sa``). The keys are the stock footer's all the same."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple[list[Key], Key | None] | None = None
        self._queued = False

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._queued:
            self._queued = True  # several focus moves in one turn of the loop: one update
            self.call_later(self._update_keys)

    def _wanted(self) -> tuple[list[Key], Key | None] | None:
        """The keys to show and the palette's key, as the stock footer composes them (None: it has a group)."""
        app = self.app
        active = self.screen.active_bindings
        keys: list[Key] = []
        seen: set[str] = set()  # one key per action, the first bound
        for _, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in seen:
                continue
            if binding.group is not None:
                return None
            seen.add(binding.action)
            keys.append(
                (binding.key, app.get_key_display(binding), binding.description, binding.action, not enabled, tooltip)
            )
        palette: Key | None = None
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE and app.COMMAND_PALETTE_BINDING in active:
            _, binding, enabled, _tooltip = active[app.COMMAND_PALETTE_BINDING]
            palette = (
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                not enabled,
                binding.tooltip or binding.description,
            )
        return keys, palette

    async def _update_keys(self) -> None:
        self._queued = False
        if not self.is_attached or self._pruning:
            return
        wanted = self._wanted()
        if wanted is not None and wanted == self._shown:
            return  # the same keys (the same view shown again): nothing to draw
        widgets = list(self.query_children(FooterKey))
        palette_widget = next((w for w in widgets if w.has_class("-command-palette")), None)
        keys = [w for w in widgets if w is not palette_widget]
        if wanted is None or self._shown is None or (wanted[1] is None) != (palette_widget is None):
            self._shown = wanted
            await self.recompose()  # the first keys, or a shape the in-place update does not cover
            self._fit()
            return
        self._shown = wanted
        rows, palette = wanted
        for widget, row in zip(keys, rows, strict=False):
            _set_key(widget, row)
        for widget in keys[len(rows) :]:
            widget.display = False
        if palette is not None and palette_widget is not None:
            _set_key(palette_widget, palette)
        extra = [
            FooterKey(*row[:4], disabled=row[4], tooltip=row[5]).data_bind(compact=Footer.compact)
            for row in rows[len(keys) :]
        ]
        if extra:
            await self.mount_all(extra, before=palette_widget)
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        """Show the keys that fit whole, in order, in the width the palette's key leaves; hide the rest."""
        widgets = [w for w in self.query_children(FooterKey) if w.display]
        palette = next((w for w in widgets if w.has_class("-command-palette")), None)
        room = self.size.width - (_width(palette) if palette is not None else 0)
        used = 0
        for widget in widgets:
            if widget is palette:
                continue
            used += _width(widget)
            widget.styles.visibility = "visible" if used <= room else "hidden"


def _width(widget: FooterKey) -> int:
    """The columns a key takes: its text, padding, border and margin (its size is known before a layout)."""
    styles = widget.styles
    return widget.get_content_width(Size(0, 0), Size(0, 0)) + styles.gutter.width + styles.margin.width


def _set_key(widget: FooterKey, row: Key) -> None:
    """Show ``row`` in an existing key widget (what ``FooterKey.__init__`` sets, set again)."""
    key, display, description, action, disabled, tooltip = row
    if (widget.key, widget.key_display, widget.description, widget.action, widget._disabled) != row[:5]:
        widget.key, widget.key_display, widget.description, widget.action = key, display, description, action
        widget._disabled = disabled
        widget.set_class(disabled, "-disabled")
        widget.refresh(layout=True)  # its width follows its text
    widget.tooltip = tooltip or None
    widget.display = True
