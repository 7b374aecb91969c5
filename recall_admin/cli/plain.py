"""The beliefs table of `recall` and `search` written without Rich, where Rich would draw
it without any style: stdout is not a terminal and nothing forces one (docs/benchmarks.md,
"Start-up"). Importing Rich costs more than the rest of a read, and for such output its
table is plain text whose layout is simple while every row fits the width.

Only that case is drawn here, byte for byte as ``render.beliefs_table`` draws it
(tests/cli/test_plain_table.py holds the two together): every cell printable ASCII (one
character, one cell), one line per cell, the whole table within the narrowest width the
console could have. Anything else returns None and Rich draws it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from recall_engine.values import value_text

from ..display import visible

HEADS = ("subject", "predicate", "value", "since", "source", "marks")


def plain_width(pipe_width: int) -> int | None:
    """The width Rich would lay stdout out at when it would draw no style there (``pipe_width``:
    Output widens a pipe's console to at least that, output._console), or None
    when it might draw styles (a terminal, FORCE_COLOR, TTY_COMPATIBLE) or when the width
    is not simply known (COLUMNS set; not POSIX; an encoding other than UTF-8)."""
    env = os.environ
    if os.name != "posix" or "COLUMNS" in env or env.get("TTY_COMPATIBLE") or env.get("FORCE_COLOR") is not None:
        return None
    out = sys.stdout
    try:
        if out.isatty() or not (getattr(out, "encoding", None) or "utf-8").lower().startswith("utf"):
            return None
    except ValueError:  # closed
        return None
    return pipe_width


def _cell(s: Any) -> str | None:
    text = "" if s is None else visible(s)
    return text if text.isascii() and text.isprintable() else None


def _marks(b: dict[str, Any]) -> str:
    """``render._marks`` as plain text."""
    parts: list[str] = []
    if b.get("replaced"):
        predicate = b["predicate"]
        parts.append(
            "replaced "
            + ", ".join(
                visible(
                    (f"{p['predicate']}: " if p.get("predicate") not in (None, "", predicate) else "")
                    + value_text(p["value"])
                )
                for p in b["replaced"]
            )
        )
    if b.get("elsewhere"):
        parts.append(
            "also " + ", ".join(f"{visible(e['predicate'])}={visible(value_text(e['value']))}" for e in b["elsewhere"])
        )
    if b.get("stored_as"):
        parts.append(visible(f"stored as {b['stored_as']}"))
    if b.get("promoted_from"):
        parts.append(visible(f"promoted from {b['promoted_from']}"))
    return "; ".join(parts)


def beliefs_table(beliefs: Sequence[dict[str, Any]], width: int) -> str | None:
    """The table's text, or None when Rich must draw it."""
    rows: list[tuple[str, ...]] = [HEADS]
    for b in beliefs:
        row = tuple(
            _cell(c)
            for c in (b["subject"], b["predicate"], value_text(b["value"]), b["observed_at"], b["source"], _marks(b))
        )
        if None in row:
            return None
        rows.append(row)  # type: ignore[arg-type]  # no None in it
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADS))]
    # cells are padded one space each side, but not at the table's outer edges
    if sum(widths) + 3 * (len(widths) - 1) > width:
        return None
    last = len(widths) - 1

    def draw(row: Sequence[str], bar: str) -> str:
        return f" {bar} ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))

    lines = [draw(rows[0], "┃"), "╇".join("━" * (w + (i > 0) + (i < last)) for i, w in enumerate(widths))]
    lines.extend(draw(r, "│") for r in rows[1:])
    return "\n".join(lines) + "\n"


def line(text: str, width: int) -> str | None:
    """One line of text (already shown safely), or None when Rich must draw it."""
    return text + "\n" if len(text) <= width and text.isascii() and text.isprintable() else None


def render_beliefs(data: dict[str, Any], width: int) -> str | None:
    """``render.memory.render_beliefs`` as plain text, or None when Rich must draw it."""
    out: list[str | None] = []
    if data.get("known_at"):
        out.append(line(visible(f"As answered by a read known at {data['known_at']} (as of {data['as_of']})"), width))
    if not data["beliefs"]:
        out.append(line(visible(f"Nothing is believed (as of {data['as_of']})."), width))
    else:
        out.append(beliefs_table(data["beliefs"], width))
    return None if None in out else "".join(out)  # type: ignore[arg-type]
