"""Stepping through the inner tabs of a view (registry, queues) with > and <."""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane


def step_tab(tabs: TabbedContent, delta: int) -> None:
    ids = [p.id for p in tabs.query(TabPane) if p.id and p.parent is not None and p.parent.parent is tabs]
    if tabs.active in ids:
        tabs.active = ids[(ids.index(tabs.active) + delta) % len(ids)] or tabs.active
