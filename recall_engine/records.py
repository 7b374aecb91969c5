"""Statement events, their ids, their JSON form and strict decoding; beliefs.

An event is immutable and identified by its content and instant
(docs/records.md, "Ids"); a belief is what the fold derives from events, never stored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from importlib import import_module
from typing import Any

from .errors import InvalidEvent
from .instants import format_fixed, format_rfc3339, instant_problem, parse_instant
from .text import LIMITS, PREDICATE_RE, text_problem
from .values import Value, value_key

EVENT_VERSION = "recall-event-v3"
FOLD_VERSION = "recall-fold-v5"  # v5: excludes and historical read at the read; replaced across pairs (docs/fold.md)

KINDS = ("fact", "preference")
SOURCES = ("user_stated", "agent_inferred", "tool_result", "operator")
MAX_EVIDENCE_BYTES = LIMITS["evidence"]

REGISTRY_SUBJECT = "recall:registry"
REGISTRY_PREDICATE = "registry_change"
REVIEW_SUBJECT = "recall:review"
REVIEW_PREDICATE = "review_decision"
WRITER_SUBJECT = "recall:agents"  # which agent key wrote an event (recall_admin.agents.attribution)
WRITER_PREDICATE = "written_by"
RESERVED_PAIRS = frozenset(
    {(REGISTRY_SUBJECT, REGISTRY_PREDICATE), (REVIEW_SUBJECT, REVIEW_PREDICATE), (WRITER_SUBJECT, WRITER_PREDICATE)}
)
# Subjects the search indexes leave out: nothing searches who wrote an event, and an
# agent's every write carries one such record (docs/storage.md, "Search indexes").
UNSEARCHED_SUBJECTS = frozenset({WRITER_SUBJECT})


def _sha256() -> Callable[..., Any]:
    """CPython's own SHA-256 (the digest hashlib gives, from OpenSSL): importing hashlib
    loads OpenSSL, which costs a command more than its read (docs/benchmarks.md, "Start-up")."""
    for name in ("_sha2", "_sha256"):  # Python 3.12 and later; 3.11
        try:
            return import_module(name).sha256
        except (ImportError, AttributeError):
            continue
    from hashlib import sha256

    return sha256


sha256 = _sha256()  # ids, and the registry and log digests (timeline, integrity)


def event_id(subject: str, predicate: str, value: object, retraction: bool, observed_at: int) -> str:
    return fixed_event_id(subject, predicate, value, retraction, format_fixed(observed_at))


def fixed_event_id(subject: str, predicate: str, value: object, retraction: bool, fixed: str) -> str:
    """``event_id`` with the instant already in its storage form (``format_fixed``): an
    import has it from the line's own text, without formatting it again."""
    raw = "\x00".join((subject, predicate, value_key(value), "retract" if retraction else "assert", fixed))
    return "m-" + sha256(raw.encode()).digest()[:12].hex()


@dataclass(frozen=True, slots=True)
class Replace:
    """One earlier belief a statement withdraws, under any predicate."""

    predicate: str
    value: Value


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    kind: str
    subject: str
    predicate: str
    value: Value | None
    confidence: float
    source: str
    retraction: bool
    observed_at: int  # nanoseconds since the epoch, UTC
    evidence: str = ""
    evidence_id: str = ""
    replaces: tuple[Replace, ...] = ()
    caused_by: str = ""
    # When the store appended it (nanoseconds): store metadata, set by the store and
    # given back by its reads; None on an event not read from a store. Not part of the
    # id, the JSON form, a digest or equality (docs/storage.md, "Recorded instants").
    recorded_at: int | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return value_key(self.value)

    @property
    def blanket(self) -> bool:
        return self.retraction and self.value is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "subject": self.subject,
            "predicate": self.predicate,
            "value": self.value,
            "confidence": self.confidence,
            "source": self.source,
            "retraction": self.retraction,
            "observed_at": format_rfc3339(self.observed_at),
        }
        if self.evidence:
            out["evidence"] = self.evidence
        if self.evidence_id:
            out["evidence_id"] = self.evidence_id
        if self.replaces:
            out["replaces"] = [{"predicate": r.predicate, "value": r.value} for r in self.replaces]
        if self.caused_by:
            out["caused_by"] = self.caused_by
        return out


def make_event(
    subject: str,
    predicate: str,
    value: Value | None,
    observed_at: int,
    *,
    retraction: bool = False,
    kind: str = "fact",
    confidence: float = 1.0,
    source: str = "user_stated",
    evidence: str = "",
    evidence_id: str = "",
    replaces: Iterable[Replace] = (),
    caused_by: str = "",
) -> Event:
    """Build an event with its derived id. Callers validate their inputs first.

    Built as ``_built`` builds a decoded event (a third of the frozen ``__init__``'s time:
    every remember and import builds its events here)."""
    e = _built(
        event_id(subject, predicate, value, retraction, observed_at),
        kind,
        subject,
        predicate,
        value,
        confidence,
        source,
        retraction,
        observed_at,
        evidence,
        evidence_id,
        caused_by,
        None,
    )
    replaces = tuple(replaces)
    if replaces:
        _set_replaces(e, replaces)
    return e


# the JSON form: every field but recorded_at, the store's metadata
_FIELDS = frozenset(f.name for f in fields(Event)) - {"recorded_at"}


_GOOD_NAMES: set[str] = set()

# The fields of an ordinary statement. An event with other fields (replaces) takes the
# full path of ``decode_event``.
_PLAIN_FIELDS = frozenset(("id", "kind", "subject", "predicate", "value", "confidence", "source", "retraction"))
_PLAIN_FIELDS |= {"observed_at", "evidence", "evidence_id", "caused_by"}

# (kind, subject, predicate, source) already found valid by the full path, with the
# limit their value takes: a pair's events repeat them, so each is checked once.
_GOOD_HEADS: dict[tuple[object, object, object, object], str] = {}
_MAX_GOOD_HEADS = 10_000
_ID_LIMIT = LIMITS["id"]


def _bad(eid: object, what: str) -> InvalidEvent:
    return InvalidEvent(f"event {eid!r} has invalid {what}")


def _utf8(text: str) -> bool:
    """False for a string holding lone surrogates, which no UTF-8 byte sequence can carry."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_value(eid: object, value: object, *, allow_null: bool, what: str = "value", limit: str = "value") -> None:
    if type(value) is str:  # the common case first
        if not value or value.isspace():
            raise _bad(eid, f"{what} (blank)")
        if not value.isascii() and not _utf8(value):
            raise _bad(eid, f"{what} (not valid UTF-8)")
        problem = text_problem(value, limit)
        if problem is not None:
            raise _bad(eid, f"{what} ({problem})")
        return
    if value is None:
        if not allow_null:
            raise _bad(eid, f"{what} (null on an assertion)")
    elif isinstance(value, bool):
        pass
    elif isinstance(value, (int, float)):
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer too large for a float64 (JSON 1 followed by 400 zeros)
            finite = False
        if not finite:
            raise _bad(eid, f"{what} (not a finite number)")
    elif isinstance(value, str):
        if not value.isascii() and not _utf8(value):
            raise _bad(eid, f"{what} (not valid UTF-8)")
        if not value.strip():
            raise _bad(eid, f"{what} (blank)")
        problem = text_problem(value, limit)
        if problem is not None:
            raise _bad(eid, f"{what} ({problem})")
    else:
        raise _bad(eid, what)


def _text_field(eid: object, obj: dict[str, Any], name: str) -> str:
    v = obj.get(name)
    if v is None:
        return ""
    if not isinstance(v, str) or not v.strip():
        raise _bad(eid, name)
    problem = text_problem(v, name)
    if problem is not None:
        raise _bad(eid, f"{name} ({problem})")
    return v


def _checked_name(eid: object, field: str, text: str) -> None:
    problem = text_problem(text, field)
    if problem is not None:
        raise _bad(eid, f"{field} ({problem})")


def decode_event(
    obj: object,
    *,
    observed_at: int | None = None,
    allowed_sources: tuple[str, ...] = SOURCES,
    recorded_at: int | None = None,
) -> Event:
    """Strictly decode one event from its JSON form; an invalid event names its field.

    ``observed_at`` may be given when the store keeps the instant in its own column;
    ``recorded_at`` is the store's own column (never in the JSON form).
    """
    if observed_at is not None and allowed_sources is SOURCES and type(obj) is dict:
        plain = _decode_plain(obj, observed_at, recorded_at)
        if plain is not None:
            return plain
    if not isinstance(obj, dict):
        raise InvalidEvent(f"event must be a JSON object, got {type(obj).__name__}")
    eid = obj.get("id")
    if not _FIELDS.issuperset(obj):
        raise _bad(eid, f"field {sorted(obj.keys() - _FIELDS)[0]!r} (unknown)")
    if not isinstance(eid, str) or not eid or eid.isspace():
        raise _bad(eid, "id")
    kind = obj.get("kind")
    if kind not in KINDS:
        raise _bad(eid, "kind")
    subject = obj.get("subject")
    if (
        not isinstance(subject, str)
        or not subject
        or subject.isspace()
        or (not subject.isascii() and not _utf8(subject))
    ):
        raise _bad(eid, "subject")
    if not eid.isascii() and not _utf8(eid):
        raise _bad(eid, "id")
    _checked_name(eid, "id", eid)
    _checked_name(eid, "subject", subject)
    predicate = obj.get("predicate")
    if type(predicate) is not str or predicate not in _GOOD_NAMES:  # names recur: check each once
        if not isinstance(predicate, str) or not PREDICATE_RE.match(predicate):
            raise _bad(eid, "predicate")
        _checked_name(eid, "predicate", predicate)
        if len(_GOOD_NAMES) < 10_000:
            _GOOD_NAMES.add(predicate)
    source = obj.get("source")
    if source not in allowed_sources:
        raise _bad(eid, "source")
    conf = obj.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not (0 <= conf <= 1):
        raise _bad(eid, "confidence")
    retraction = obj.get("retraction", False)
    if not isinstance(retraction, bool):
        raise _bad(eid, "retraction")
    value = obj.get("value")
    if subject == REGISTRY_SUBJECT and predicate == REGISTRY_PREDICATE:
        limit = "registry record"
    else:
        limit = "note" if predicate == "note" else "value"
    _check_value(eid, value, allow_null=retraction, limit=limit)
    if observed_at is None:
        at = obj.get("observed_at")
        if not isinstance(at, str):
            raise _bad(eid, "observed_at")
        try:
            observed_at = parse_instant(at)
        except Exception:
            raise _bad(eid, "observed_at") from None
    problem = instant_problem(observed_at)
    if problem is not None:
        raise _bad(eid, f"observed_at ({problem})")
    evidence = _text_field(eid, obj, "evidence") if "evidence" in obj else ""
    if evidence:
        if retraction:
            raise _bad(eid, "evidence (on a retraction)")
        if len(evidence.encode("utf-8", "surrogatepass")) > MAX_EVIDENCE_BYTES:
            raise _bad(eid, "evidence (longer than 2048 bytes)")
    evidence_id = _text_field(eid, obj, "evidence_id") if "evidence_id" in obj else ""
    caused_by = _text_field(eid, obj, "caused_by") if "caused_by" in obj else ""
    replaces: tuple[Replace, ...] = ()
    raw = obj.get("replaces")
    if raw is not None:
        if not isinstance(raw, list):
            raise _bad(eid, "replaces")
        items = []
        for r in raw:
            if not isinstance(r, dict) or r.keys() != {"predicate", "value"}:
                raise _bad(eid, "replaces")
            if not isinstance(r["predicate"], str) or not PREDICATE_RE.match(r["predicate"]):
                raise _bad(eid, "replaces predicate")
            _check_value(eid, r["value"], allow_null=False, what="replaces value")
            items.append(Replace(r["predicate"], r["value"]))
        replaces = tuple(items)
    if allowed_sources is SOURCES:
        if len(_GOOD_HEADS) >= _MAX_GOOD_HEADS:  # start afresh: a full memo would leave every new head slow
            _GOOD_HEADS.clear()
        _GOOD_HEADS[(kind, subject, predicate, source)] = limit
    return Event(
        eid,
        kind,
        subject,
        predicate,
        value,
        float(conf) if isinstance(conf, int) else conf,
        source,
        retraction,
        observed_at,
        evidence,
        evidence_id,
        replaces,
        caused_by,
        recorded_at,
    )


class _Unfrozen:
    """An Event's slots, in the same order, without its frozen ``__setattr__``: decoding
    builds every event read from disk, and its ``__init__`` sets the slots with plain
    attribute stores, about 3x faster than the frozen ``__init__`` or one
    ``object.__setattr__`` per field. ``_built`` then turns it into the Event it is (the
    layouts are the same, so Python allows the ``__class__`` change; tested)."""

    __slots__ = Event.__slots__

    def __init__(
        self,
        eid: str,
        kind: str,
        subject: str,
        predicate: str,
        value: Value | None,
        conf: float,
        source: str,
        retraction: bool,
        at: int,
        evidence: str,
        evidence_id: str,
        caused_by: str,
        recorded_at: int | None,
    ) -> None:
        self.id = eid
        self.kind = kind
        self.subject = subject
        self.predicate = predicate
        self.value = value
        self.confidence = conf
        self.source = source
        self.retraction = retraction
        self.observed_at = at
        self.evidence = evidence
        self.evidence_id = evidence_id
        self.replaces = ()
        self.caused_by = caused_by
        self.recorded_at = recorded_at


_set_replaces = vars(Event)["replaces"].__set__  # the slot's own descriptor


def _built(
    eid: str,
    kind: str,
    subject: str,
    predicate: str,
    value: Value | None,
    conf: float,
    source: str,
    retraction: bool,
    at: int,
    evidence: str,
    evidence_id: str,
    caused_by: str,
    recorded_at: int | None,
) -> Event:
    """``Event(...)`` for an event decoded from disk (no replaces), built as ``_Unfrozen``."""
    e = _Unfrozen(
        eid,
        kind,
        subject,
        predicate,
        value,
        conf,
        source,
        retraction,
        at,
        evidence,
        evidence_id,
        caused_by,
        recorded_at,
    )
    e.__class__ = Event  # type: ignore[assignment]
    return e  # type: ignore[return-value]


def stamped(e: Event, recorded_at: int | None) -> Event:
    """``dataclasses.replace(e, recorded_at=recorded_at)``, its slots set directly (an
    append stamps every event it wrote with the instant it recorded it)."""
    out = _built(
        e.id,
        e.kind,
        e.subject,
        e.predicate,
        e.value,
        e.confidence,
        e.source,
        e.retraction,
        e.observed_at,
        e.evidence,
        e.evidence_id,
        e.caused_by,
        recorded_at,
    )
    if e.replaces:
        _set_replaces(out, e.replaces)
    return out


def _fine_text(v: object, name: str) -> bool:
    return type(v) is str and bool(v.strip()) and text_problem(v, name) is None


def _decode_plain(obj: dict[str, Any], observed_at: int, recorded_at: int | None) -> Event | None:
    """``decode_event`` of an ordinary statement whose kind, subject, predicate and source
    were found valid before, or None: anything else, and every invalid event, takes the
    full path, which names what is wrong. Accepts exactly what the full path accepts, and
    builds the same event (tested against it)."""
    if not _PLAIN_FIELDS.issuperset(obj):
        return None
    get = obj.get
    try:
        limit = _GOOD_HEADS.get((obj["kind"], obj["subject"], obj["predicate"], obj["source"]))
        conf = obj["confidence"]
        eid = obj["id"]
    except (KeyError, TypeError):  # a field missing, or one that is a list or an object
        return None
    retraction = get("retraction", False)
    if limit is None or type(conf) is not float or not 0.0 <= conf <= 1.0 or type(retraction) is not bool:
        return None
    # text_problem, written out for ASCII text (its length is its size in UTF-8): this runs
    # on every event read from disk
    if type(eid) is not str or not eid or eid.isspace():
        return None
    if eid.isascii():
        if len(eid) > _ID_LIMIT or "\x00" in eid:
            return None
    elif not _utf8(eid) or text_problem(eid, "id") is not None:
        return None
    if instant_problem(observed_at) is not None:
        return None
    value = get("value")
    t = type(value)
    if t is str:
        if not value or value.isspace():
            return None
        if value.isascii():
            if len(value) > LIMITS[limit] or "\x00" in value:
                return None
        elif not _utf8(value) or text_problem(value, limit):
            return None
    elif value is None:
        if not retraction:
            return None
    elif t is int or t is float:
        try:
            if not math.isfinite(value):
                return None
        except OverflowError:
            return None
    elif t is not bool:
        return None
    evidence = evidence_id = caused_by = ""
    if len(obj) > 6 + ("value" in obj) + ("retraction" in obj) + ("observed_at" in obj):
        # beyond the six fields read above and these three: evidence, evidence_id, caused_by
        evidence, evidence_id, caused_by = get("evidence") or "", get("evidence_id") or "", get("caused_by") or ""
        if "evidence" in obj and (
            not _fine_text(evidence, "evidence")
            or retraction
            or len(evidence.encode("utf-8", "surrogatepass")) > MAX_EVIDENCE_BYTES
        ):
            return None
        if ("evidence_id" in obj and not _fine_text(evidence_id, "evidence_id")) or (
            "caused_by" in obj and not _fine_text(caused_by, "caused_by")
        ):
            return None
    return _built(
        eid,
        obj["kind"],
        obj["subject"],
        obj["predicate"],
        value,
        conf,
        obj["source"],
        retraction,
        observed_at,
        evidence,
        evidence_id,
        caused_by,
        recorded_at,
    )


def check_id(e: Event) -> None:
    """Refuse an event whose derived id (``m-`` + hash) does not match its content.

    Ids in other forms (hand-written fixtures, other engines) are taken as given.
    """
    if e.id.startswith("m-") and e.id != event_id(e.subject, e.predicate, e.value, e.retraction, e.observed_at):
        raise InvalidEvent(
            f"event {e.id!r} has an id that does not match its content (subject, predicate, "
            "value, retraction and instant); it was changed after it was written"
        )


def sort_key(e: Event) -> tuple[int, int, str]:
    """Fold order: instant, then assertions before retractions, then id."""
    return (e.observed_at, 1 if e.retraction else 0, e.id)


# --- beliefs -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PriorValue:
    """A value a belief displaced, one step back: in its own pair, or withdrawn from
    ``predicate`` by an exclusion or a ``replaces`` (docs/fold.md "replaced")."""

    value: Value
    observed_at: int
    event_id: str
    source: str = ""
    predicate: str = ""  # the canonical predicate it was held under (empty under folds before v5)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": self.value,
            "observed_at": format_rfc3339(self.observed_at),
            "event_id": self.event_id,
            "source": self.source,
        }
        if self.predicate:
            out["predicate"] = self.predicate
        return out


@dataclass(frozen=True, slots=True)
class Elsewhere:
    predicate: str
    value: Value
    observed_at: int
    event_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "predicate": self.predicate,
            "value": self.value,
            "observed_at": format_rfc3339(self.observed_at),
            "event_id": self.event_id,
        }


@dataclass(frozen=True, slots=True)
class Belief:
    subject: str
    predicate: str  # the canonical name
    value: Value
    observed_at: int
    event_id: str
    source: str
    confidence: float
    kind: str
    evidence: str = ""
    evidence_id: str = ""
    stored_as: str = ""  # the name the event was stored under, when it differs
    replaced: tuple[PriorValue, ...] = ()
    elsewhere: tuple[Elsewhere, ...] = ()
    promoted_from: str = ""  # the note event this belief was promoted from

    @property
    def key(self) -> str:
        return value_key(self.value)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject": self.subject,
            "predicate": self.predicate,
            "value": self.value,
            "observed_at": format_rfc3339(self.observed_at),
            "event_id": self.event_id,
            "source": self.source,
            "confidence": self.confidence,
            "kind": self.kind,
        }
        if self.evidence:
            out["evidence"] = self.evidence
        if self.evidence_id:
            out["evidence_id"] = self.evidence_id
        if self.stored_as:
            out["stored_as"] = self.stored_as
        if self.promoted_from:
            out["promoted_from"] = self.promoted_from
        out["replaced"] = [p.to_json() for p in self.replaced]
        out["elsewhere"] = [e.to_json() for e in self.elsewhere]
        return out


class _UnfrozenBelief:
    """A Belief's slots without its frozen ``__setattr__``, as ``_Unfrozen`` is an Event's:
    every fold builds its beliefs here, in about a quarter of the frozen ``__init__``'s instructions."""

    __slots__ = Belief.__slots__

    def __init__(
        self,
        subject: str,
        predicate: str,
        value: Value,
        observed_at: int,
        event_id: str,
        source: str,
        confidence: float,
        kind: str,
        evidence: str,
        evidence_id: str,
        stored_as: str,
        replaced: tuple[PriorValue, ...],
        promoted_from: str,
    ) -> None:
        self.subject = subject
        self.predicate = predicate
        self.value = value
        self.observed_at = observed_at
        self.event_id = event_id
        self.source = source
        self.confidence = confidence
        self.kind = kind
        self.evidence = evidence
        self.evidence_id = evidence_id
        self.stored_as = stored_as
        self.replaced = replaced
        self.elsewhere = ()
        self.promoted_from = promoted_from


def belief_from_event(
    e: Event,
    predicate: str,
    value: Value | None = None,
    *,
    promoted: bool = False,
    replaced: tuple[PriorValue, ...] = (),
) -> Belief:
    held = e.value if value is None else value
    assert held is not None, "a belief comes from an assertion, which carries its value"
    b = _UnfrozenBelief(
        e.subject,
        predicate,
        held,
        e.observed_at,
        e.id,
        e.source,
        e.confidence,
        e.kind,
        # a promoted note is its own evidence: its words and its id
        str(e.value) if promoted else e.evidence,
        e.id if promoted else e.evidence_id,
        e.predicate if e.predicate != predicate else "",
        replaced,
        e.id if promoted else "",
    )
    b.__class__ = Belief  # type: ignore[assignment]
    return b  # type: ignore[return-value]
