"""JSONL import and export of a collection's events: one ``Event.to_json()`` per line.

Import is strict and all-or-nothing: every line is decoded (and every registry
record checked) before anything is written, so a bad line fails with its line
number and leaves the store as it was. Events whose id is already stored are
skipped, so importing the same file twice imports nothing the second time.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import IO

import orjson

from recall_engine import clock
from recall_engine.admission import Admission
from recall_engine.batch import collection_paused, statement_fields
from recall_engine.errors import InvalidEvent, InvalidInput, NotFound, RecallError, StorageError
from recall_engine.instants import NS, parse_instant
from recall_engine.memory import Memory, check_import_room
from recall_engine.records import REGISTRY_SUBJECT, Event, check_id, decode_event, fixed_event_id
from recall_engine.registry import decode_record
from recall_engine.storage.base import Store
from recall_engine.text import normalize_subject

from .display import json_safe
from .files import write_whole
from .inputs import check_tiny_numbers, json_problem

BATCH_SIZE = 2000
MAX_LINE_BYTES = 1 << 20

Progress = Callable[[int, int], None]  # (events done, events in all)


@dataclass(frozen=True)
class ImportResult:
    imported: int  # new events written
    skipped: int  # events already stored (same id), including repeats within the file
    lines: int  # lines read, blank ones included

    def to_json(self) -> dict[str, int]:
        return {"imported": self.imported, "skipped": self.skipped}


# --- import ---------------------------------------------------------------------


def decode_line(text: str, line_no: int) -> Event | None:
    """One JSONL line as an event; None for a blank line; InvalidEvent naming the line."""
    if not text.strip():
        return None
    if len(text) > MAX_LINE_BYTES:
        raise InvalidEvent(f"line {line_no}: longer than {MAX_LINE_BYTES} bytes")
    try:
        check_tiny_numbers(text)
        obj = json.loads(text)
    except ValueError as e:
        raise InvalidEvent(f"line {line_no}: not valid JSON ({json_problem(e, one_line=True)})") from None
    except RecursionError:  # an event nests a few levels
        raise InvalidEvent(f"line {line_no}: not an event (its JSON is nested too deeply)") from None
    try:
        event = decode_event(obj)
        check_id(event)
        if event.subject == REGISTRY_SUBJECT and not event.retraction:
            decode_record(event)
    except RecallError as e:
        raise InvalidEvent(f"line {line_no}: {e.message}") from None
    return event


def _bounded_lines(f: IO[bytes], error: type[RecallError] = InvalidEvent) -> Iterator[str]:
    """The lines of a binary file, each decoded on its own. A line is read no further than
    ``MAX_LINE_BYTES``: a longer one (or a file with no newline, /dev/zero) is refused there,
    never read whole into memory; bytes that are not UTF-8 are refused naming their line
    and column (a text file decodes by chunks, so its error's offset is the chunk's)."""
    read = f.readline
    n = 0
    while raw := read(MAX_LINE_BYTES + 1):
        n += 1
        if len(raw) > MAX_LINE_BYTES:
            raise error(f"line {n}: longer than {MAX_LINE_BYTES} bytes")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"line {n}: not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})") from None


def _stdin() -> IO[bytes]:
    return sys.stdin.buffer


def _lines(path: str, error: type[RecallError] = InvalidEvent) -> Iterator[str]:
    if path == "-":
        yield from _bounded_lines(_stdin(), error)
        return
    try:
        f = open(path, "rb")  # noqa: SIM115 - opened here to tell its errors apart, closed below
    except FileNotFoundError:
        raise NotFound(f"cannot import {path}: no such file") from None
    except IsADirectoryError:
        raise NotFound(f"cannot import {path}: it is a folder, not a JSONL file") from None
    except OSError as e:
        raise StorageError(f"cannot import {path}: {e.strerror or e}") from None
    with f:
        yield from _bounded_lines(f, error)


def _decode_all(
    lines: Iterable[str], admission: Admission | None = None, bodies: list[str | None] | None = None
) -> Iterator[Event]:
    """Each line decoded once: an ordinary line through ``_quick_event``, anything else
    (and every line it is unsure of) through ``decode_line``, which words the refusal.
    Given ``bodies``, each event's stored JSON is appended to it as ``_quick_event``
    found it (None: the store renders it)."""
    days: dict[str, int] = {}
    for n, text in enumerate(lines, 1):
        quick = _quick_event(text, days)
        if quick is None:
            event = decode_line(text, n)
            if event is None:
                continue
            body = None
        else:
            event, body = quick
        if bodies is not None:
            bodies.append(body)
        if admission is not None:
            admission.admit(event, f"line {n}", id_checked=True)  # as remember would check it
        yield event
    if admission is not None:
        admission.timeline()


# an instant as ``export`` writes it (RFC3339 UTC); the epoch second of each day is found once
_EXPORTED_INSTANT = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z\Z")
_BIG_FLOAT = 2.0**63  # orjson reads an integer past 64 bits as a float; json.loads keeps the integer


# the keys of ``Event.to_json`` in its order, for a statement without replaces, by which
# of evidence, evidence_id and caused_by it has
_STATEMENT_KEYS = ("id", "kind", "subject", "predicate", "value", "confidence", "source", "retraction", "observed_at")
_OPTIONAL_KEYS = ("evidence", "evidence_id", "caused_by")
_JSON_KEYS = {
    flags: _STATEMENT_KEYS + tuple(k for k, on in zip(_OPTIONAL_KEYS, flags, strict=True) if on)
    for flags in itertools.product((False, True), repeat=3)
}


def _quick_event(text: str, days: dict[str, int]) -> tuple[Event, str | None] | None:
    """``decode_line``'s event for an ordinary valid line (a statement whose id matches),
    or None, and then ``decode_line`` decides: a blank line, a registry record, and
    every line it would refuse take that path, so each refusal reads as it always has.

    With the event comes its stored JSON when the line's object is already the event's
    JSON form (``Event.to_json``: the same keys in the same order, the same values, the
    instant as ``format_rfc3339`` writes it, as ``export`` writes every line); then the
    store serialises that object instead of building and checking it again. Else None.

    orjson parses what json.loads parses into the same objects, except that it refuses
    more (lone surrogates, NaN, nesting past 1024) and reads an integer past 64 bits as
    a float: those lines go the slow way too."""
    if len(text) > MAX_LINE_BYTES:
        return None
    try:
        check_tiny_numbers(text)  # orjson would read 1e-400 as 0
        obj = orjson.loads(text)
    except ValueError:  # orjson's JSONDecodeError is one
        return None
    if type(obj) is not dict or obj.get("subject") == REGISTRY_SUBJECT:
        return None
    at = obj.get("observed_at")
    m = _EXPORTED_INSTANT.match(at) if type(at) is str else None
    if m is None:
        return None
    day, hh, mm, ss, frac = m.groups()
    midnight = days.get(day)
    if midnight is None:
        try:
            midnight = parse_instant(day)  # the calendar checked (February 30 refused)
        except RecallError:
            return None
        if len(days) < 100_000:
            days[day] = midnight
    h, mi, sec = int(hh), int(mm), int(ss)
    if h > 23 or mi > 59 or sec > 59:  # parse_instant refuses them too
        return None
    nanos = frac.ljust(9, "0") if frac else "000000000"
    try:
        event = decode_event(obj, observed_at=midnight + (h * 3600 + mi * 60 + sec) * NS + int(nanos))
    except Exception:  # noqa: BLE001 - whatever it is, decode_line words it
        return None
    v = event.value
    if (type(v) is float and abs(v) >= _BIG_FLOAT) or (
        event.replaces and any(type(r.value) is float and abs(r.value) >= _BIG_FLOAT for r in event.replaces)
    ):
        return None
    # check_id, with the instant's storage form read off the line (format_fixed gives the
    # same text for a UTC instant whose calendar parse_instant accepted)
    eid = event.id
    fixed = f"{day}T{hh}:{mm}:{ss}.{nanos}Z"
    if eid.startswith("m-") and eid != fixed_event_id(event.subject, event.predicate, v, event.retraction, fixed):
        return None
    canonical = (
        not event.replaces
        and (frac is None or frac[-1] != "0")  # format_rfc3339 trims trailing zeros (and a zero fraction)
        and type(obj["confidence"]) is float  # an integer one decodes as a float
        and tuple(obj) == _JSON_KEYS[(bool(event.evidence), bool(event.evidence_id), bool(event.caused_by))]
    )
    if not canonical:
        return event, None
    try:
        return event, orjson.dumps(obj).decode()
    except TypeError:  # what orjson will not write, the store writes its own way
        return event, None


def validate_file(path: str, admission: Admission | None = None) -> int:
    """Decode (and admit) every line of a file; the number of events, or an error naming the line."""
    count = 0
    for _ in _decode_all(_lines(path), admission):
        count += 1
    return count


def import_events(
    store: Store,
    events: Iterable[Event],
    total: int,
    progress: Progress | None = None,
    batch_size: int = BATCH_SIZE,
    bodies: Iterable[str | None] | None = None,
) -> ImportResult:
    """Append decoded events in one transaction (the store's bulk path when it has one):
    a failure anywhere leaves nothing of them written. ``bodies``: each event's stored
    JSON as ``_quick_event`` found it, or None (see ``append_many``)."""
    before = store.count()
    bulk = getattr(store, "append_many", None)
    if callable(bulk):
        cb = (lambda done, _written: progress(done, total)) if progress else None
        if bodies is None:
            bulk(events, batch_size=batch_size, progress=cb, atomic=True)
        else:
            bulk(events, batch_size=batch_size, progress=cb, atomic=True, bodies=bodies)
    else:
        store.append(list(events))
        if progress:
            progress(total, total)
    imported = store.count() - before
    return ImportResult(imported=imported, skipped=max(total - imported, 0), lines=total)


def import_file(
    store: Store,
    path: str,
    progress: Progress | None = None,
    batch_size: int = BATCH_SIZE,
    on_validated: Callable[[int], None] | None = None,
) -> ImportResult:
    """Import a JSONL file (``-`` for standard input): every line is read once, decoded
    and admitted before anything is written, then the events are appended in one
    transaction. What was checked is what is written: the file is not read again."""
    # every event lives until the end, so each run of the cycle collector while they pile
    # up only walks them again (a fifth of an import's time): paused, as for a batch
    with collection_paused():
        admission = Admission(store.registry_events(), now=clock.now_ns())
        bodies: list[str | None] = []
        events = list(_decode_all(_lines(path), admission, bodies))
        total = len(events)
        if on_validated:
            on_validated(total)
        if total == 0:
            return ImportResult(0, 0, 0)
        # no pair may end past the cap (it could no longer be read): refused before any row is written
        check_import_room(store, lambda: events)
        return import_events(store, events, total, progress, batch_size, bodies)


# --- statements -----------------------------------------------------------------

STATEMENT_BATCH = 5000  # statements per transaction


def decode_statement(text: str, line_no: int) -> dict | None:
    """One JSONL line as a statement (``remember``'s fields); None for a blank line."""
    if not text.strip():
        return None
    if len(text) > MAX_LINE_BYTES:
        raise InvalidInput(f"line {line_no}: longer than {MAX_LINE_BYTES} bytes")
    try:
        check_tiny_numbers(text)
        obj = json.loads(text)
    except ValueError as e:
        raise InvalidInput(f"line {line_no}: not valid JSON ({json_problem(e, one_line=True)})") from None
    try:
        fields = statement_fields(obj, line_no)
    except InvalidInput as e:
        raise InvalidInput("line" + e.message.removeprefix("statement")) from None
    reps = fields.get("replaces")
    if reps is not None:  # [[predicate, value], ...] or [{"predicate", "value"}, ...]
        if not isinstance(reps, list):
            raise InvalidInput(f"line {line_no}: replaces must be a list of [predicate, value] pairs")
        pairs = []
        for r in reps:
            if isinstance(r, dict) and set(r) == {"predicate", "value"}:
                pairs.append((r["predicate"], r["value"]))
            elif isinstance(r, list) and len(r) == 2:
                pairs.append((r[0], r[1]))
            else:
                raise InvalidInput(f"line {line_no}: replaces must be a list of [predicate, value] pairs")
        fields["replaces"] = pairs
    at = fields.get("at")
    if isinstance(at, str):
        try:
            fields["at"] = parse_instant(at)
        except RecallError as e:
            raise InvalidInput(f"line {line_no}: at: {e.message}") from None
    return fields


def import_statements(memory: Memory, path: str, progress: Progress | None = None) -> ImportResult:
    """Remember every statement of a JSONL file (``-`` for standard input), as ``remember``
    one at a time would, in transactions of ``STATEMENT_BATCH`` statements. Every line is
    decoded before anything is written; a statement the engine refuses fails with its
    line number, and the batches before it stay written (``imported`` counts events,
    ``skipped`` the statements already known)."""
    lines = _lines(path, InvalidInput)
    statements = [(n, st) for n, text in enumerate(lines, 1) if (st := decode_statement(text, n)) is not None]
    total = len(statements)
    imported = skipped = 0
    for i in range(0, total, STATEMENT_BATCH):
        with memory.batch():
            for n, st in statements[i : i + STATEMENT_BATCH]:
                try:
                    r = memory.remember(**st)
                except RecallError as e:
                    raise type(e)(f"line {n}: {e.message}", code=e.code) from None
                imported += len(r.events)
                skipped += r.already_known
        if progress:
            progress(min(i + STATEMENT_BATCH, total), total)
    return ImportResult(imported=imported, skipped=skipped, lines=total)


# --- export ---------------------------------------------------------------------


def events_for_export(store: Store, subject: str | None = None) -> Generator[Event, None, None]:
    """Every event of the collection in log order (registry records included), or every
    event of one subject."""
    if subject is None:
        yield from store.all_events()
    else:
        yield from store.subject_events(normalize_subject(subject))


def event_line(e: Event) -> str:
    # json_safe: the same data, with C1 controls escaped, so `export` to a terminal is harmless
    return json_safe(json.dumps(e.to_json(), ensure_ascii=False, separators=(",", ":"))) + "\n"


def write_events(events: Iterable[Event], out: IO[str], admission: Admission | None = None) -> int:
    n = 0
    for e in events:
        if admission is not None:  # never write a line that import would refuse
            try:
                admission.admit(e, f"line {n + 1}")
            except InvalidInput as err:
                raise InvalidEvent(
                    f"the export was refused, nothing was written: stored event {e.id!r} at "
                    f"{err.message}; import would refuse it"
                ) from None
        out.write(event_line(e))
        n += 1
    return n


def export_file(store: Store, path: str, subject: str | None = None) -> int:
    """Write the events to a file, atomically: a failed export leaves no partial file."""
    events = events_for_export(store, subject)
    try:
        admission = Admission(store.registry_events() if subject is not None else ())
        n = write_whole(path, lambda f: write_events(events, f, admission), "export to")
    finally:
        events.close()
    return n
