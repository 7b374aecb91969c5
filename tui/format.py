"""How values and instants read on screen (presentation only).

Text from the store (values, notes, evidence, names, subjects) is untrusted: it is
shown as text, never as markup, and its control characters are made visible
(``recall_admin.display.visible``), so an ESC sequence in a value never reaches the
terminal. Every helper here does both; views build ``Text`` from their results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual.markup import escape

from recall_admin.display import visible
from recall_engine.instants import format_rfc3339, parse_instant
from recall_engine.values import value_text

NOTHING = "—"
ZONE = "UTC"  # every instant is shown in UTC, and says so


def text(x: Any) -> str:
    """Store text made safe for the screen: control characters shown escaped."""
    return visible(x)


def values(vals: Iterable[Any] | None) -> str:
    vs = list(vals or ())
    return visible(", ".join(value_text(v) for v in vs)) if vs else NOTHING


def instant(ns: int | None) -> str:
    """Seconds precision, with its zone: ``2026-05-10 10:00:00 UTC``."""
    if ns is None:
        return "now"
    return format_rfc3339(ns)[:19].replace("T", " ") + " " + ZONE


# An instant as the console shows it (``instant``): typed back, or left in a box it filled in.
_SHOWN = re.compile(r"(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?: UTC)?\Z")


def typed_instant(raw: str, what: str, shown: int | None = None) -> int | None:
    """The instant an input box holds (blank: None): a day or RFC3339, or the console's own
    ``2026-05-10 10:00:00 UTC`` (every instant it shows is UTC, so the zone may be left off).
    ``shown`` is the instant the console put in the box: while the box still reads it, it is
    that instant to the nanosecond, not the second the box shows."""
    raw = raw.strip()
    if not raw:
        return None
    if shown is not None and raw in (instant(shown), instant(shown)[:19]):
        return shown
    m = _SHOWN.match(raw)
    return parse_instant(f"{m[1]}T{m[2]}Z" if m else raw, what=what)


def day(ns: int | None) -> str:
    """The day (UTC) of an instant: ``2026-05-10``."""
    return "now" if ns is None else format_rfc3339(ns)[:10]


# What ``visible`` writes for one character (``\x1b``, ``\u200b``), or any one character: a cut falls between these.
_SHOWN_CHAR = re.compile(r"\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|.", re.S)


def clip(x: Any, width: int) -> str:
    """Store text shown in at most ``width`` columns, one line; a cut ends in ``…`` and never splits an
    escape (``…==\\x`` would read as other text than the store holds)."""
    s = " ".join(visible(x).split())
    if len(s) <= width:
        return s
    kept, used = [], 0
    for m in _SHOWN_CHAR.finditer(s):
        if used + len(m[0]) > width - 1:
            break
        kept.append(m[0])
        used += len(m[0])
    return "".join(kept) + "…"


SUBJECT_IN_TITLE = 32  # a subject may be 256 bytes: a title clips it so the predicate after it is shown


def subject(x: Any) -> str:
    """A subject in a view's title line, clipped (the table or detail below shows it whole)."""
    return clip(x, SUBJECT_IN_TITLE)


def cells(*items: Any) -> list[Any]:
    """Table cells: text is taken as it is, never as markup (a subject or a note may hold "[...]")."""
    return [Text(visible(x)) if isinstance(x, str) else x for x in items]


def esc(x: Any) -> str:
    """Data put into a label's markup, with its brackets escaped and its control characters visible."""
    return escape(visible(x))
