"""Ordinary statements decoded from their stored JSON by msgspec, straight into typed fields.

The parser checks each field's JSON type (and refuses unknown fields) as it reads, so
what is left in Python is what a type cannot say: a known head, a confidence in
range, blank or oversized text. About a quarter of the instructions of parsing with
orjson and checking the dict by hand (docs/benchmarks.md, "Eighth round, first reads").

``statement`` accepts only what ``records.decode_event`` accepts, builds the same event,
and answers None for anything else: every body it does not take, valid or not, goes to
the reference path of ``decoding.stored_event``, which builds it or names what is wrong
(tested against it, tests/storage/test_decoding.py). msgspec refuses what the standard
parser alone would take (NaN, lone surrogates, numbers out of float range), so those
reach the reference path too; an integer beyond 64 bits is left to it as well, so that
Python's own digit limit decides it.

Imported only once a process has decoded enough rows to pay for importing msgspec
(``decoding.SWITCH_ROWS``): a short command reading a few events never loads it.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import msgspec

from .. import instants
from ..records import _GOOD_HEADS, _ID_LIMIT, MAX_EVIDENCE_BYTES, Event, _fine_text, _Unfrozen
from ..text import LIMITS, text_problem

# Checked by the parser: a confidence in [0, 1], and an id of 1 to 128 characters (a
# longer one is refused anyway: its UTF-8 is at least as long; a shorter one non-ASCII
# is measured in bytes below).
_CONFIDENCE = msgspec.Meta(ge=0.0, le=1.0)
_ID = msgspec.Meta(min_length=1, max_length=_ID_LIMIT)


class _Statement(msgspec.Struct, forbid_unknown_fields=True, gc=False, kw_only=True):
    """The JSON form of an ordinary statement (no ``replaces``: those take the reference path),
    its fields in the order ``Event.to_json`` writes them (the parser looks for the next one first)."""

    id: Annotated[str, _ID]
    # records.KINDS and records.SOURCES (tested): checked by the parser, and each decoded
    # as the one string object of its literal, whose hash is kept
    kind: Literal["fact", "preference"]
    subject: str
    predicate: str
    value: str | int | float | bool | None = None
    confidence: Annotated[float, _CONFIDENCE]  # a JSON integer becomes a float, as decode_event makes it
    source: Literal["user_stated", "agent_inferred", "tool_result", "operator"]
    retraction: bool = False
    observed_at: object = None  # never read: the instant is the row's (as decode_event with observed_at)
    # None when missing or null (decode_event reads both as ""); an empty text is refused below
    evidence: str | None = None
    evidence_id: str | None = None
    caused_by: str | None = None


_decode = msgspec.json.Decoder(_Statement).decode
_MIN_INT, _MAX_INT = -(2**63), 2**64 - 1
_isfinite = math.isfinite
_new = object.__new__
# The last head found in records._GOOD_HEADS, with its limit: a pair's rows share one, and
# comparing two strings costs less than hashing four new ones (one tuple, replaced whole,
# so threads see one head or another, never a mix).
_last: tuple[str, str, str, str, str] = ("", "", "", "", "")


def statement(body: str, observed_at: int, recorded_at: int | None) -> Event | None:
    """The event ``decode_event(json.loads(body), observed_at=..., recorded_at=...)`` builds,
    or None: the body is not an ordinary statement whose kind, subject, predicate and
    source were found valid before, or it is not valid at all."""
    try:
        s = _decode(body)
    except (msgspec.DecodeError, UnicodeEncodeError):  # ValidationError is a DecodeError
        return None
    global _last
    kind, subject, predicate, source = s.kind, s.subject, s.predicate, s.source
    last = _last
    if subject == last[1] and predicate == last[2] and kind is last[0] and source is last[3]:
        limit = last[4]
    else:
        found = _GOOD_HEADS.get((kind, subject, predicate, source))
        if found is None:
            return None
        limit = found
        _last = (kind, subject, predicate, source, limit)
    retraction = s.retraction
    eid = s.id
    # text_problem, written out for ASCII text (its length is its size in UTF-8, checked
    # by the parser); msgspec never gives a lone surrogate, so all text is valid UTF-8
    if eid.isspace():
        return None
    if eid.isascii():
        if "\x00" in eid:
            return None
    elif text_problem(eid, "id") is not None:
        return None
    if not instants.EARLIEST <= observed_at <= instants.LATEST:  # instants.instant_problem, inline
        return None
    value: Any = s.value  # its type is asked once, below (narrowing would ask again)
    t = type(value)
    if t is str:
        if not value or value.isspace():
            return None
        if value.isascii():
            if len(value) > LIMITS[limit] or "\x00" in value:
                return None
        elif text_problem(value, limit):
            return None
    elif value is None:
        if not retraction:
            return None
    elif t is float:
        if not _isfinite(value):
            return None
    elif t is int and not _MIN_INT <= value <= _MAX_INT:
        return None
    evidence, evidence_id, caused_by = s.evidence, s.evidence_id, s.caused_by
    if evidence is None:
        evidence = ""
    elif (
        retraction
        or not _fine_text(evidence, "evidence")
        or len(evidence.encode("utf-8", "surrogatepass")) > MAX_EVIDENCE_BYTES
    ):
        return None
    if evidence_id is None:
        evidence_id = ""
    elif not _fine_text(evidence_id, "evidence_id"):
        return None
    if caused_by is None:
        caused_by = ""
    elif not _fine_text(caused_by, "caused_by"):
        return None
    # records._built, inline: its slots set one by one, then the Event it is
    e = _new(_Unfrozen)
    e.id = eid
    e.kind = kind
    e.subject = subject
    e.predicate = predicate
    e.value = value
    e.confidence = s.confidence
    e.source = source
    e.retraction = retraction
    e.observed_at = observed_at
    e.evidence = evidence
    e.evidence_id = evidence_id
    e.replaces = ()
    e.caused_by = caused_by
    e.recorded_at = recorded_at
    e.__class__ = Event  # type: ignore[assignment]
    return e  # type: ignore[return-value]
