"""Text that came from outside, made safe to show a person.

Values, notes, evidence, subjects and predicate names are written by agents. Shown raw,
an escape sequence in one of them could set the terminal's title, write its clipboard
(OSC 52) or clear the screen. Every human rendering, in the CLI and in the console,
passes such text through `visible`; JSON output passes through `json_safe`. See
docs/cli.md ("Text from agents").
"""

from __future__ import annotations

import re

# C0 (tab and newline included: a cell must stay one line), DEL, C1, the bidirectional
# marks, overrides and isolates (which reorder what is shown), the Unicode line separators,
# and the invisible zero-width characters and format marks: "ad\u200bmin" would read as
# "admin", and terminals disagree on the width of a sequence joined by U+200D, which shifts
# every cell after it in a console table's row.
_BIDI_AND_INVISIBLE = "\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u2028\u2029\ufeff"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI_AND_INVISIBLE}]")
# JSON encoders escape C0 themselves; C1 and the rest they leave raw, and a JSON document
# printed on a terminal is reordered by a bidi override as any other text is.
_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f{_BIDI_AND_INVISIBLE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """`text` as a string whose control characters are shown escaped, e.g. ESC as `\\x1b`."""
    s = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, s) if _UNSAFE.search(s) else s


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_safe(encoded: str) -> str:
    """A JSON document's text with C1 controls, bidi controls, line separators and the
    invisible characters `visible` shows as `\\uXXXX` escapes.

    The escapes are valid JSON string escapes, so the decoded data is unchanged; only
    the bytes that reach a terminal differ.
    """
    return _UNSAFE_IN_JSON.sub(_json_escape, encoded)
