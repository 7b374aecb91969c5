"""What both backends share besides the contract (base.py) and row decoding (decoding.py):
refusal messages, the reserved-subject filter, and the word normalisation keyword search
uses. See docs/storage.md."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from ..errors import IncompleteHistory
from ..records import UNSEARCHED_SUBJECTS

# The schema version this release writes (models.py defines the schema and its upgrades)
SCHEMA_VERSION = 4  # 3: events.recorded_at; 4: subject_counts
APPEND_ONLY = "events are append-only"  # what the database says to an UPDATE or DELETE

MAX_REGISTRY_EVENTS = 100_000
# Decoded events remembered per collection (by position, checked against the row): a
# pair read a second time skips JSON decoding. About 0.7 KB each; 0 turns it off.
DECODE_CACHE = 50_000
READ_ONLY_MESSAGE = "the store is open read-only; writes are refused (open it without --read-only to write)"

# Reserved subjects ("recall:registry", "recall:review", ...) all start with "recall:";
# in byte order they are exactly [recall:, recall;) (';' follows ':').
NOT_RESERVED = "NOT (subject >= 'recall:' AND subject < 'recall;')"
# The events the search indexes hold (records.UNSEARCHED_SUBJECTS left out), as SQL
SEARCHED = "subject NOT IN (" + ", ".join(f"'{s}'" for s in sorted(UNSEARCHED_SUBJECTS)) + ")"


def unique(items: Iterable[str]) -> list[str]:
    """The items without repeats, in first-seen order."""
    return list(dict.fromkeys(items))


def refused(what: str, limit: int) -> IncompleteHistory:
    """A listing past its limit: refused, never truncated (base.py)."""
    return IncompleteHistory(f"{what} more than {limit} events (the limit); the read is refused rather than truncated")


def recorded_instant(now: int, last: int | None) -> int:
    """The recorded instant of an append: the clock, moved after the collection's
    previous append, so recorded instants grow with positions even when the clock steps
    back and two appends never share one (docs/storage.md, "Recorded instants")."""
    return now if last is None else max(now, last + 1)


def pair_name(subject: str, predicates: Sequence[str]) -> str:
    if len(predicates) == 1:
        return f"the pair {subject}/{predicates[0]}"
    return f"the pair {subject}/{predicates[0]} (stored under {', '.join(predicates)})"


def strip_diacritics(word: str) -> str:
    """A word without its combining marks ("café" -> "cafe"), as keyword search compares
    words (SQLite's unicode61 tokenizer with remove_diacritics does the same)."""
    if word.isascii():
        return word
    stripped = "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", stripped)


def newer_schema(where: str, version: int) -> str:
    return (
        f"the store at {where} has schema version {version}, newer than this release "
        f"of recall-admin supports ({SCHEMA_VERSION}); upgrade recall-admin to open it"
    )


def older_schema(where: str, version: int) -> str:
    return (
        f"the store at {where} has schema version {version}, older than this release "
        f"uses ({SCHEMA_VERSION}); open it once without --read-only to upgrade it"
    )


def guards_broken(where: str, names: Sequence[str]) -> str:
    """Opening for writing found append-only guards missing or altered (docs/storage.md)."""
    shown = ", ".join(sorted(names)[:6]) + (" ..." if len(names) > 6 else "")
    return (
        f"the store at {where} has lost its append-only guards ({shown} missing or altered): it was changed "
        "outside recall-admin, so its log may have been rewritten; writes are refused. Check it with "
        "`recall-admin --read-only verify` (against a digest you kept) and restore it from a copy you trust"
    )
