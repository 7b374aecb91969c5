"""Stored events that cannot be read, listed so that no bad record hides (docs/records.md, "Bad records").

The log is append-only, so a bad event (written by an older release, or behind
the engine's back) cannot be repaired; it must not make the collection
unreadable either. The registry reads without the records that do not decode
(``readable_registry``), a statement that does not decode refuses only the reads
of its own subject, and ``bad_events`` lists every such event with its position
and the reason, for ``recall-admin verify``.

``verify_log`` is that command's check of a live collection (docs/audit.md, "Verifying
a live store"): every event decodes and its id matches its content, the collection's
count matches the events its log holds, the search indexes hold no row that matches no
event of the log, and the log digest, a running SHA-256 over the events in log order,
matches a digest the operator kept (for the events it covered).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .errors import IncompleteHistory, InvalidEvent, InvalidInput, RecallError
from .records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, Event, check_id, sha256
from .registry import decode_record

_ALL = 10**9


@dataclass(frozen=True)
class BadEvent:
    """One stored event a read cannot use: where it is, and why."""

    event_id: str
    subject: str
    reason: str
    position: int | None = None  # None when the store did not say

    def to_json(self) -> dict[str, Any]:
        return {"position": self.position, "event_id": self.event_id, "subject": self.subject, "reason": self.reason}


def readable_registry(events: Iterable[Event]) -> tuple[list[Event], list[BadEvent]]:
    """The registry events whose records decode, and the others as BadEvents.

    A record that does not decode is left out of the registry rather than
    refusing every read of the collection.
    """
    good: list[Event] = []
    bad: list[BadEvent] = []
    for e in events:
        if e.subject == REGISTRY_SUBJECT and e.predicate == REGISTRY_PREDICATE and not e.retraction:
            try:
                decode_record(e)
            except RecallError as err:
                bad.append(BadEvent(e.id, e.subject, err.message))
                continue
        good.append(e)
    return good, bad


def _from_error(err: InvalidEvent, subject: str) -> BadEvent:
    return BadEvent(
        event_id=str(getattr(err, "event_id", "") or ""),
        subject=subject,
        reason=err.message,
        position=getattr(err, "position", None),
    )


def bad_events(store: Any, touches: Sequence[Any] | None = None) -> list[BadEvent]:
    """Every stored event of a collection that a read cannot use, subject by subject.

    Per subject, the store's decoder stops at the first row it cannot decode, so a
    subject with several bad rows shows the first; every other subject is read in full.
    Given the log's touches, the subjects are read off them, so a row added behind the
    engine's back (which no kept subject count knows) is still found.
    """
    out: list[BadEvent] = []
    try:
        registry = store.registry_events()
    except InvalidEvent as err:
        out.append(_from_error(err, REGISTRY_SUBJECT))
    else:
        out.extend(readable_registry(registry)[1])
    if touches is None:
        listed = store.subjects(limit=_ALL)
    else:  # as subjects() orders them: most events first, then by name; reserved subjects left out
        counts: dict[str, int] = {}
        for t in touches:
            counts[t.subject] = counts.get(t.subject, 0) + 1
        listed = sorted(((s, n) for s, n in counts.items() if not s.startswith("recall:")), key=lambda x: (-x[1], x[0]))
    for subject, _count in listed:
        if subject == REGISTRY_SUBJECT:
            continue
        try:
            events = store.subject_events(subject, limit=_ALL)
        except InvalidEvent as err:
            out.append(_from_error(err, subject))
            continue
        except IncompleteHistory:  # pragma: no cover - the limit above is larger than any subject
            continue
        for e in events:
            try:
                check_id(e)
            except InvalidEvent as err:
                out.append(BadEvent(e.id, subject, err.message))
    return out


def _registry_positions(store: Any, bad: list[BadEvent], touches: list[Any]) -> list[BadEvent]:
    """Bad registry records with their positions: the registry's events are its touches, in log order."""
    if all(b.position is not None or b.subject != REGISTRY_SUBJECT for b in bad):
        return bad
    try:
        ids = [e.id for e in store.registry_events()]
    except InvalidEvent:
        return bad
    at = [t.position for t in touches if t.subject == REGISTRY_SUBJECT and t.predicate == REGISTRY_PREDICATE]
    where = dict(zip(ids, at, strict=False)) if len(ids) == len(at) else {}
    return [replace(b, position=where.get(b.event_id)) if b.position is None else b for b in bad]


# A log digest names how many events it covers: "recall-log-v1:<count>:<64 hex>".
LOG_DIGEST = "recall-log-v1"
_LOG_DIGEST = re.compile(rf"^{LOG_DIGEST}:([0-9]{{1,12}}):([0-9a-f]{{64}})$")


def parse_log_digest(text: str) -> tuple[int, str]:
    """(events covered, hex) of a log digest an operator kept; anything else is refused."""
    m = _LOG_DIGEST.match(text.strip())
    if m is None:
        raise InvalidInput(f"a log digest has the form {LOG_DIGEST}:<events>:<64 hex digits>, got {text[:100]!r}")
    return int(m.group(1)), m.group(2)


@dataclass(frozen=True)
class Verification:
    """What ``verify_log`` found in one collection."""

    collection: str
    events: int  # events read from the log
    counted: int  # the collection's count, kept in each append's transaction
    digest: str  # the log digest over every event read ("" when one did not decode)
    bad: tuple[BadEvent, ...] = ()
    problems: tuple[str, ...] = ()  # what else does not hold (count, the kept digest)
    kept: str = ""  # the digest the operator kept, when one was given
    kept_matches: bool | None = None

    @property
    def ok(self) -> bool:
        return not self.bad and not self.problems

    def to_json(self) -> dict[str, Any]:
        """The shape of `recall-admin verify` (docs/cli-contract.md): ``problems`` holds the
        bad events first, then what else does not hold (its position and event null)."""
        return {
            "collection": self.collection,
            "valid": self.ok,
            "events": self.events,
            "counted": self.counted,
            "digest": self.digest,
            "kept": self.kept or None,
            "kept_matches": self.kept_matches,
            "problems": [b.to_json() for b in self.bad]
            + [{"position": None, "event_id": None, "subject": None, "reason": p} for p in self.problems],
        }


def subject_count_problems(logged: dict[str, int], kept: dict[str, int], shown: int = 5) -> list[str]:
    """The subjects whose kept event count differs from the events the log holds for them."""
    wrong = sorted(s for s in logged.keys() | kept.keys() if logged.get(s, 0) != kept.get(s, 0))
    if not wrong:
        return []
    listed = "; ".join(f"{s!r} counted {kept.get(s, 0)}, logged {logged.get(s, 0)}" for s in wrong[:shown])
    more = f" (and {len(wrong) - shown} more)" if len(wrong) > shown else ""
    return [
        f"the kept event counts of {len(wrong)} subject(s) differ from the log: {listed}{more}; "
        "events were removed or added behind the engine's back"
    ]


def verify_log(store: Any, kept: str = "") -> Verification:
    """Check a live collection: ids against content, count against the log, and the log
    digest (against ``kept``, a digest printed by an earlier run, when given).

    The digest covers the whole event (what audit bundles hash: docs/audit.md), so an
    event edited with its id recomputed is caught by a kept digest, not by the id check."""
    from .audit.digest import event_encoding_v4, field  # the audit package stays out of reads (docs/benchmarks.md)

    want = parse_log_digest(kept) if kept else None
    counted = store.count()
    h = sha256(field(LOG_DIGEST))
    n = 0
    at_kept = ""
    read = 0
    bad: list[BadEvent] = []
    per_subject: dict[str, int] = {}
    events = store.all_events(0)
    # the positions, read after the stream began: a prefix of them is the stream's
    touches = store.touched_since(0, limit=_ALL)
    positions = [t.position for t in touches]
    try:
        for e in events:
            n += 1
            per_subject[e.subject] = per_subject.get(e.subject, 0) + 1
            at = positions[n - 1] if n <= len(positions) else None
            try:
                check_id(e)
                if e.subject == REGISTRY_SUBJECT and e.predicate == REGISTRY_PREDICATE and not e.retraction:
                    decode_record(e)  # a record the registry leaves out (readable_registry), with its position
            except RecallError as err:
                bad.append(BadEvent(e.id, e.subject, err.message, at))
            h.update(field(event_encoding_v4(e)))
            if want is not None and n == want[0]:
                at_kept = h.hexdigest()
    except InvalidEvent:
        bad = [*bad, *(b for b in bad_events(store, touches) if b.event_id not in {x.event_id for x in bad})]
        n, digest = -1, ""
        read = len(positions)  # the rows the log holds; one of them does not decode
        bad = _registry_positions(store, bad, touches)
    else:
        digest = f"{LOG_DIGEST}:{n}:{h.hexdigest()}"
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    if want is not None and want[0] == 0:
        at_kept = sha256(field(LOG_DIGEST)).hexdigest()
    problems: list[str] = []
    if n >= 0 and n != counted:
        problems.append(
            f"the collection's count says {counted} events but its log holds {n}: "
            "events were removed or added behind the engine's back"
        )
    # each subject's kept count (docs/storage.md, "Subject counts") against the log
    kept_counts = getattr(store, "subject_counts", None)
    if n >= 0 and kept_counts is not None:
        problems.extend(subject_count_problems(per_subject, kept_counts()))
    # the search indexes are derived from the log: rows that match no event are reported
    index_problems = getattr(store, "index_problems", None)
    if index_problems is not None:
        problems.extend(index_problems())
    matches = None
    if want is not None:
        if n < 0:
            problems.append("the kept digest cannot be compared: an event of the log does not decode")
        elif want[0] > n:
            matches = False
            problems.append(f"the kept digest covers {want[0]} events but the log now holds {n}: events were removed")
        else:
            matches = at_kept == want[1]
            if not matches:
                problems.append(
                    f"the first {want[0]} events of the log do not match the kept digest: "
                    "events were changed since it was taken"
                )
    return Verification(
        store.collection, n if n >= 0 else read, counted, digest, tuple(bad), tuple(problems), kept.strip(), matches
    )


def verify_collections(backend: Any) -> list[Verification]:
    """``verify_log`` of every collection of a store, by name (``recall-admin verify --all``)."""
    out = []
    for name, _count in sorted(backend.collections()):
        out.append(verify_log(backend.store(name, create=False)))
    return out
