"""Names and case: subject normalisation, predicate names, simple case folding."""

from __future__ import annotations

import re

from .errors import InvalidInput

PREDICATE_RE = re.compile(r"^[a-z][a-z0-9_]*\Z")  # \Z: "$" would accept a trailing newline
MAX_PREDICATE_BYTES = 64

# The most UTF-8 bytes each text field may hold, the same on every backend
# (docs/records.md, "Limits"). A statement's subject, predicate and value key share
# one PostgreSQL btree index entry (at most 2,704 bytes, and a lower-cased value can
# take 1.5 times its bytes), so their sum stays below it even for text that does
# not compress.
LIMITS = {
    "id": 128,
    "subject": 256,
    "predicate": MAX_PREDICATE_BYTES,
    "value": 1024,  # a value of a typed predicate
    "note": 1536,  # a value of `note`: the words as they were stated
    "evidence": 2048,
    "evidence_id": 256,
    "caused_by": 128,
    "registry record": 64 * 1024,
    "description": 1024,
    "reason": 1024,
    "operator": 128,
}
RESERVED_PREDICATES = frozenset({"registry_change", "review_decision", "extraction"})
NOTE = "note"


def utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def text_problem(text: str, field: str) -> str | None:
    """Why a text cannot be stored in ``field`` ("longer than N bytes", "a NUL character"), or None.

    NUL is refused everywhere: PostgreSQL cannot store it in text or JSON, so SQLite
    must not take it either (one answer on both backends).
    """
    limit = LIMITS[field]
    n = len(text)
    if n > limit or (n * 4 > limit and utf8_size(text) > limit):
        return f"longer than {limit} bytes"
    if "\x00" in text:
        return "a NUL character"
    return None


def check_text(text: str, field: str) -> str:
    """``text`` if it fits ``field``; InvalidInput naming the field and the limit otherwise."""
    problem = text_problem(text, field)
    if problem is None:
        return text
    if problem.startswith("longer"):
        raise InvalidInput(f"{field} must be UTF-8 of at most {LIMITS[field]} bytes, got {utf8_size(text)}")
    raise InvalidInput(f"{field} must not contain a NUL character (\\x00)")


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
    return check_text(norm, "subject")


def is_predicate_name(name: object) -> bool:
    return isinstance(name, str) and bool(PREDICATE_RE.match(name)) and len(name.encode()) <= MAX_PREDICATE_BYTES


def check_predicate_name(name: object) -> str:
    if not isinstance(name, str) or not is_predicate_name(name.strip()):
        raise InvalidInput(
            f"predicate must be snake_case (e.g. prefers_editor) of at most {MAX_PREDICATE_BYTES} bytes, got {name!r}"
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
