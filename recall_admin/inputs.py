"""Text typed by an operator (CLI arguments, TUI fields) turned into engine inputs.

A value is typed by the predicate it is written to: the predicate is resolved
through the registry timeline first, then ``parse_cli_value`` reads the text as
that predicate's type ("8000" is a number for a number predicate, "true" a
boolean for a boolean one). A predicate the registry does not know yet can only
be written under an open vocabulary, where the write defines it; its type is then
inferred from the text: a plain decimal number is a number, true/false a
boolean, anything else a string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import overload

from recall_engine.errors import InvalidInput
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.timeline import Timeline
from recall_engine.values import Value, parse_cli_value, parse_number, underflows


def infer_value(text: str) -> Value:
    """The type of a value written to a predicate nobody has defined yet."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    f = parse_number(t)  # the engine's one strict reading of a number
    return text if f is None else f


def typed_value(memory: Memory, predicate: str, text: str, tl: Timeline | None = None) -> Value:
    """CLI text read as the type of the predicate it is written to.

    When the predicate cannot be resolved the text is passed on unchanged, so the
    engine reports the real problem (an unknown predicate, a bad name).
    """
    tl = tl or memory.timeline()
    try:
        p = memory.resolve(predicate, tl, must_exist=False)
    except InvalidInput:
        return text
    d = tl.definition(p)
    if d is not None:
        return parse_cli_value(d.value_type, text)
    if tl.open_vocabulary:
        return infer_value(text)
    return text


def parse_replaces(memory: Memory, items: Iterable[str], tl: Timeline | None = None) -> list[tuple[str, Value]]:
    """``PREDICATE=VALUE`` pairs, each value typed by its own predicate."""
    tl = tl or memory.timeline()
    out: list[tuple[str, Value]] = []
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip() or not text.strip():
            raise InvalidInput(f"--replaces takes PREDICATE=VALUE (for example prefers_editor=vim), got {item!r}")
        name = name.strip()
        out.append((name, typed_value(memory, name, text, tl)))
    return out


def parse_note_values(items: Iterable[str] | None) -> dict[str, str] | None:
    """``--note EVENT_ID=VALUE`` items (promote) to {event id: value text}; None when none given."""
    if not items:
        return None
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InvalidInput(f"--note takes EVENT_ID=VALUE (for example m-3b505d61520c=fish), got {item!r}")
        out[key.strip()] = value
    return out


@overload
def instant(text: str, what: str) -> int: ...
@overload
def instant(text: str | None, what: str) -> int | None: ...
def instant(text: str | None, what: str) -> int | None:
    """An instant given as RFC3339 or a day (its midnight UTC); None when not given."""
    if text is None:
        return None
    return parse_instant(text, what=what)


_INT_DIGITS = re.compile(r"value has (\d+) digits")
# A number literal that may be too small for a float64: an exponent of -100 or below, or
# 300 zeros after the point. Only text that holds one is parsed a second time.
_MAYBE_TINY = re.compile(r"[eE]-0*[1-9][0-9]{2}|\.0{300}")


def _exact_float(literal: str) -> float:
    f = float(literal)
    if underflows(literal, f):
        shown = literal if len(literal) <= 40 else literal[:20] + "..." + literal[-12:]
        raise ValueError(f"a number in it, {shown}, is too small for a number to hold; it would be stored as 0")
    return f


def check_tiny_numbers(text: str) -> None:
    """Refuse JSON text holding a number literal that underflows to 0 (``1e-400``), as a
    number too large is refused: either would store something the writer never said.
    A ValueError, worded by ``json_problem`` like the other number problems."""
    if _MAYBE_TINY.search(text):
        json.loads(text, parse_float=_exact_float)


def json_problem(exc: ValueError, *, one_line: bool = False) -> str:
    """What is wrong with JSON text that did not parse, in words a user can act on.

    Python words three failures for its programmers: a number past 4300 digits ("use
    sys.set_int_max_str_digits()"), bytes that are not UTF-8 ("'utf-8' codec can't
    decode") and a byte order mark ("decode using utf-8-sig"). ``one_line``: the text is one line, so only the column is named.
    """
    if isinstance(exc, json.JSONDecodeError):
        if exc.msg.startswith("Unexpected UTF-8 BOM"):  # Python's advice is for its programmers
            return "it starts with a byte order mark (BOM); save it as UTF-8 without a BOM"
        return f"{exc.msg} at column {exc.colno}" if one_line else f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return f"it is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
    if "integer string conversion" in str(exc):
        m = _INT_DIGITS.search(str(exc))
        return f"a number in it has {m.group(1) if m else 'too many'} digits, more than a number can hold"
    return str(exc)
