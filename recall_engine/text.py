"""Names and case: subject normalisation, predicate names, simple case folding."""

from __future__ import annotations

import re

from .errors import InvalidInput

PREDICATE_RE = re.compile(r"^[a-z][a-z0-9_]*\Z")  # \Z: "$" would accept a trailing newline
MAX_PREDICATE_BYTES = 64
RESERVED_PREDICATES = frozenset({"registry_change", "review_decision", "extraction"})
NOTE = "note"


def simple_lower(text: str) -> str:
    """Lower-case one character at a time with the simple mapping (as Go's strings.ToLower).

    Python's str.lower() applies full mappings ('İ' becomes two code points), which
    would change ids, value identity and search tokens for a few characters.
    """
    if text.isascii():
        return text.lower()
    out = []
    for ch in text:
        low = ch.lower()
        out.append(low[0] if len(low) > 1 else low)
    return "".join(out)


def normalize_subject(subject: object) -> str:
    if not isinstance(subject, str):
        raise InvalidInput(f"subject must be text, got {type(subject).__name__}")
    norm = simple_lower(subject.strip())
    if not norm.isascii():
        try:
            norm.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput("subject must be valid UTF-8 text") from None
    if not norm:
        raise InvalidInput("subject must not be empty")
    return norm


def is_predicate_name(name: object) -> bool:
    return (
        isinstance(name, str)
        and bool(PREDICATE_RE.match(name))
        and len(name.encode()) <= MAX_PREDICATE_BYTES
    )


def check_predicate_name(name: object) -> str:
    if not isinstance(name, str) or not is_predicate_name(name.strip()):
        raise InvalidInput(
            f"predicate must be snake_case (e.g. prefers_editor) of at most "
            f"{MAX_PREDICATE_BYTES} bytes, got {name!r}"
        )
    return name.strip()


def snake_case(name: str) -> str:
    """Open-vocabulary normalisation: 'Works For' and 'works-for' become works_for.

    Every run of characters that are not ASCII letters or digits is one separator;
    leading and trailing separators are dropped.
    """
    words = re.split(r"[^a-z0-9]+", name.lower() if name.isascii() else simple_lower(name))
    return "_".join(w for w in words if w)


def predicate_words(name: str) -> str:
    return name.replace("_", " ")
