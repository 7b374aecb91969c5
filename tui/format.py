"""How values and instants read on screen (presentation only)."""

from __future__ import annotations

from typing import Any, Iterable

from rich.text import Text
from textual.markup import escape

from recall_engine.instants import format_rfc3339
from recall_engine.values import value_text

NOTHING = "—"


def values(vals: Iterable[Any] | None) -> str:
    vs = list(vals or ())
    return ", ".join(value_text(v) for v in vs) if vs else NOTHING


def instant(ns: int | None) -> str:
    """Seconds precision, UTC: ``2026-05-10 10:00:00``."""
    if ns is None:
        return "now"
    text = format_rfc3339(ns)
    return text[:19].replace("T", " ")


def day(ns: int | None) -> str:
    return "now" if ns is None else format_rfc3339(ns)[:10]


def clip(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def cells(*items: Any) -> list[Any]:
    """Table cells: text is taken as it is, never as markup (a subject or a note may hold "[...]")."""
    return [Text(x) if isinstance(x, str) else x for x in items]


def esc(text: Any) -> str:
    """Data put into a label's markup, with its brackets escaped."""
    return escape(str(text))
