"""A one-line label whose size the stylesheet sets, so a new text only repaints it."""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Label


class Line(Label):
    """A ``Label`` for a line whose height and width come from the stylesheet, never from its text (a view's
    title: ``.view-title``, one row, the width its parent gives). ``Label.update`` lays the whole screen out
    again by default (Textual 8.2); a title rewritten on every key then cost a full layout and a redraw of
    every widget on screen (docs/benchmarks.md, "Seventh round"). Here an update repaints the line only."""

    def update(self, content: VisualType = "", *, layout: bool = False) -> None:
        super().update(content, layout=layout)
