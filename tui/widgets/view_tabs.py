"""Tabbed views switched by keys, clicks and the palette, never by where the focus lands."""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane


class ViewTabs(TabbedContent):
    """A ``TabbedContent`` that ignores ``TabPane.Focused``.

    The stock widget shows the pane holding a newly focused widget. When a dialog
    closes, the focus it gives back can land in the view the dialog was opened
    from, after the console already switched to another view (staging a plan shows
    the tray), and would switch back. Here only keys, clicks and the palette switch.
    """

    def on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        event.prevent_default()
