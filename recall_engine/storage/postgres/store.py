"""One collection of a PostgreSQL store: the ``Store`` contract over psycopg 3.

Writes go through binary COPY under a per-collection advisory lock (see
``_insert`` and docs/storage.md, PostgreSQL); reads are plain parameterized
SELECTs, complete or refused (limit + 1 rows); streams use a server-side cursor
on a connection of their own, so memory stays bounded.
"""

from __future__ import annotations

import itertools
import json
import math
import queue
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import numpy as np
import orjson
import psycopg
from psycopg import errors as pgerrors

from ... import clock
from ...embed import DIMENSIONS, event_text, token_sums, tokens
from ...errors import InvalidEvent, InvalidInput, ReadOnlyStore, StorageError
from ...records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, Event, decode_event, stamped
from ...values import value_key
from ..base import MAX_PAIR_EVENTS, Appended, Hit, PairRead, Store, Touch
from ..common import (
    MAX_REGISTRY_EVENTS,
    NOT_RESERVED,
    pair_name,
    recorded_instant,
    refused,
    strip_diacritics,
    unique,
)
from ..decoding import RowDecoder
from .meanings import MeaningsMixin
from .schema import LOCK_CLASS, SCHEMA_LOCK, SECONDARY_INDEXES

FETCH = 2000  # rows per round trip in streams
COPY_CHUNK = 1 << 20  # bytes per COPY write
RENDER_SLICE = 500  # events rendered at a time during a bulk COPY
SENT_AHEAD = 4  # COPY chunks rendered ahead of the one being sent (bounded memory)
PAIR_READ_VALUES = 16  # a pair's latest value keys whose names its first read brings along

_COLS = "position, id, observed_at, body::text, recorded_at"

_COPY_EVENTS = (
    "COPY recall.events (collection_id, id, subject, predicate, value_key, retraction, observed_at, body, "
    "terms, vec, recorded_at) FROM STDIN (FORMAT BINARY)"
)
_COPY_REPLACES = "COPY recall.event_replaces (collection_id, subject, predicate, event_id) FROM STDIN (FORMAT BINARY)"
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
_COPY_TRAILER = struct.pack(">h", -1)
_INT4 = struct.Struct(">i")
_INT8_FIELD = struct.Struct(">iq")
_TRUE = b"\x00\x00\x00\x01\x01"
_FALSE = b"\x00\x00\x00\x01\x00"
# field length (4 + 4 * 256), then pgvector's binary header: dimensions, unused
_VECTOR_PREFIX = struct.pack(">iHH", 4 + 4 * DIMENSIONS, DIMENSIONS, 0)
_INT64 = (-(1 << 63), (1 << 63) - 1)
_FLOAT4 = struct.Struct(">f")
_ZERO_VECTOR = bytes(4 * DIMENSIONS)
_EMPTY_VECTOR = _FLOAT4.pack(1.0) + bytes(4 * (DIMENSIONS - 1))  # a sentence without a token (as embed's)


_to_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _body(obj: dict) -> str:
    """The stored JSON of an event that decodes (so every number in it is finite): orjson,
    several times faster; what it refuses (an integer past 64 bits, a lone surrogate) is
    written by ``_to_json``. Both read back to the same event."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return _to_json(obj)


def one_row(cursor: psycopg.Cursor[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The row of a query that always yields one (an aggregate, a catalog function)."""
    row = cursor.fetchone()
    if row is None:
        raise StorageError("the server returned no row where a query always yields one")
    return row


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return _INT4.pack(len(data)) + data


class _Values(dict):
    """Packed float4 of each dimension's sum (a key) divided by one norm, made on first use."""

    def __init__(self, norm: float) -> None:
        super().__init__()
        self.norm = norm

    def __missing__(self, v: float) -> bytes:
        packed = self[v] = _FLOAT4.pack(v / self.norm)
        return packed


_VALUES: dict[float, _Values] = {}  # by the sum of squares (a whole number, at most the token count squared)


def _vector(words: list[str]) -> bytes | bytearray:
    """The stored vector of a sentence from its tokens: ``embed.embed_batch([sentence])[0]``
    as pgvector's binary values (256 big-endian float4), byte for byte, without numpy's
    per-call and per-row costs (a sentence has a handful of non-zero dimensions).

    The same arithmetic as ``embed_batch``: each dimension sums +-1.0 (exact), the norm is
    the float64 sum of squares (exact: small integers), its square root rounded to float32;
    each value a float32 division, done in float64 and rounded once by the pack, which is
    exact for a quotient of two float32 values. tests/storage/test_postgres.py checks the
    two agree."""
    sums = token_sums(words)
    total = sum([v * v for v in sums.values()])
    if not total:
        return _EMPTY_VECTOR
    values = _VALUES.get(total)
    if values is None:
        if len(_VALUES) > 10_000:
            _VALUES.clear()  # the packed value of each sum under this norm, worked out once
        norm = _FLOAT4.unpack(_FLOAT4.pack(math.sqrt(total)))[0]
        values = _VALUES[total] = _Values(norm)
    out = bytearray(_ZERO_VECTOR)
    for i, v in sums.items():
        if v:  # a dimension whose signs cancel stays +0.0, as numpy leaves it
            out[4 * i : 4 * i + 4] = values[v]
    return out


def _index_fields(ev: Event) -> tuple[str, bytes | bytearray]:
    """An event's keyword-search terms (``search_terms(search_text(ev))`` joined by spaces)
    and its stored vector (of ``event_text(ev)``), tokenising the sentence once: the search
    text is the sentence, a line break, then the evidence, so its tokens are the sentence's
    followed by the evidence's."""
    sentence = event_text(ev)
    words = tokens(sentence)
    vector = _vector(words)
    said = ev.evidence
    if said:
        every = words + tokens(said)
        if not (sentence.isascii() and said.isascii()):
            return " ".join([t for t in map(strip_diacritics, every) if t]), vector
        return " ".join(every), vector
    if sentence.isascii():
        return " ".join(words), vector
    return " ".join([t for t in map(strip_diacritics, words) if t]), vector


def _pair_listing(subject: str, predicates: list[str]) -> str:
    """What a refusal of a pair's events past their limit names (``pair_events``, ``pair_read``)."""
    return f"{pair_name(subject, predicates)} has"


def _replacing_listing(subject: str, predicates: list[str]) -> str:
    """What a refusal of the events replacing a pair names (``replacing_events``, ``pair_read``)."""
    return f"the events of {subject} whose replaces name {', '.join(predicates)} number"


def search_terms(text: str) -> list[str]:
    """The words keyword search sees: the engine's tokens, lower-cased, diacritics removed
    (as SQLite's unicode61 tokenizer with remove_diacritics)."""
    words = tokens(text)
    if text.isascii():
        return words
    return [t for t in (strip_diacritics(t) for t in words) if t]


def tsquery_any(text: str) -> str:
    """User text as a tsquery that can only mean "any of these words": each word is a
    quoted lexeme (quotes and backslashes escaped), joined with ``|``."""
    words = unique(search_terms(text))
    return " | ".join("'" + w.replace("\\", "\\\\").replace("'", "''") + "'" for w in words)


class _Refused(Exception):
    """A row the database cannot hold, found while copying: the append is rolled back."""


class Host(Protocol):
    """What a collection needs from its backend (backend.py): pooled connections, the
    pgvector type, error wording and how the database was opened."""

    url_for_display: str
    read_only: bool
    read_only_reason: str
    decode_cache: int
    has_vector_index: bool
    has_meanings: bool
    vector_schema: str

    def connection(self, what: str) -> AbstractContextManager[psycopg.Connection]: ...

    def describe(self, e: BaseException) -> str: ...

    def build_missing_indexes(self) -> list[str]: ...


class PostgresStore(MeaningsMixin, Store):
    def __init__(self, backend: Host, collection: str, collection_id: int) -> None:
        self.backend = backend
        self.collection = collection
        self.cid = collection_id
        self._decoder = RowDecoder(collection, backend.decode_cache)

    @property
    def read_only(self) -> bool:
        return self.backend.read_only

    def __repr__(self) -> str:
        return f"PostgresStore({self.backend.url_for_display!r}, {self.collection!r})"

    # --- decoding ------------------------------------------------------------

    def _decode(self, rows: Iterable[tuple], memo: bool = True) -> list[Event]:
        return self._decoder.decode(rows, memo)

    def _corrupt(self, eid: object, e: Exception) -> InvalidEvent:
        return self._decoder.corrupt(eid, e)

    def _complete(self, query: str, params: Sequence[object], limit: int, what: str) -> list[Event]:
        limit = int(limit)
        with self.backend.connection("reading events") as conn:
            rows = conn.execute(query, (*params, limit + 1)).fetchall()
        if len(rows) > limit:
            raise refused(what, limit)
        return self._decode(rows)

    def _stream(self, what: str, query: str, params: Sequence[object], decode: bool = True) -> Iterator:
        """Rows of ``query`` through a server-side cursor, decoded ``FETCH`` at a time."""
        with self.backend.connection(what) as conn, conn.transaction():
            with conn.cursor(name="recall_stream") as cur:
                cur.itersize = FETCH
                cur.execute(query, params)
                while True:
                    rows = cur.fetchmany(FETCH)
                    if not rows:
                        return
                    if decode:
                        yield from self._decode(rows, memo=False)
                    else:
                        yield from rows

    # --- writes --------------------------------------------------------------

    def _refuse_write(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(self.backend.read_only_reason)

    @staticmethod
    def _prepare(
        events: Iterable[Event], bodies: Iterable[str | None] | None = None
    ) -> list[tuple[Event, str, str, str, bytes | bytearray]]:
        """Validate and render: (event, body, value key, terms, vector). What could not be read
        back is never written. ``bodies`` (an import's, see ``append_many``): an event's
        JSON already decoded into it."""
        out = []
        given = zip(events, bodies, strict=True) if bodies is not None else zip(events, itertools.repeat(None))
        for ev, body in given:
            if not isinstance(ev, Event):
                raise InvalidInput(f"append takes events, got {type(ev).__name__}")
            if body is None:
                at = ev.observed_at
                if not isinstance(at, int) or isinstance(at, bool):
                    raise InvalidEvent(f"event {ev.id!r} has invalid observed_at (not integer nanoseconds)")
                obj = ev.to_json()
                decode_event(obj, observed_at=at)
                body = _body(obj)
            out.append((ev, body, value_key(ev.value), *_index_fields(ev)))
        return out

    def _copy_rows(
        self, prepared: list[tuple[Event, str, str, str, bytes | bytearray]], recorded: int
    ) -> Iterator[bytes]:
        """Binary COPY rows for recall.events (the column list of ``_COPY_EVENTS``): each
        text field is its byte length, then its UTF-8 bytes."""
        head = struct.pack(">hii", 11, 4, self.cid)
        int8 = _INT8_FIELD.pack
        size = _INT4.pack
        tail = int8(8, recorded)
        low, high = _INT64
        for ev, body, key, terms, vector in prepared:
            at = ev.observed_at
            if not low <= at <= high:
                # the database's bigint refuses it, mid-transaction, like any refused row
                raise _Refused(
                    f"event {ev.id!r} has an instant ({at} ns) that does not fit a 64-bit "
                    "integer (instants run from 1677 to 2262)"
                )
            eid, subject, predicate = ev.id.encode(), ev.subject.encode(), ev.predicate.encode()
            key_b, body_b, terms_b = key.encode(), body.encode(), terms.encode()
            yield b"".join(
                (
                    head,
                    size(len(eid)),
                    eid,
                    size(len(subject)),
                    subject,
                    size(len(predicate)),
                    predicate,
                    size(len(key_b)),
                    key_b,
                    _TRUE if ev.retraction else _FALSE,
                    int8(8, at),
                    size(len(body_b)),
                    body_b,
                    size(len(terms_b)),
                    terms_b,
                    _VECTOR_PREFIX,
                    vector,
                    tail,
                )
            )

    def _rendered(
        self, events: list[Event], prepared: list[tuple] | None, recorded: int, bodies: list[str | None] | None = None
    ) -> Iterator[bytes]:
        """COPY rows, rendered a slice at a time as they are sent (``_copy``), so a bulk
        import holds one slice's rendering at a time and the server takes in one chunk
        while the next is rendered."""
        if prepared is not None:
            yield from self._copy_rows(prepared, recorded)
            return
        for i in range(0, len(events), RENDER_SLICE):
            given = None if bodies is None else bodies[i : i + RENDER_SLICE]
            yield from self._copy_rows(self._prepare(events[i : i + RENDER_SLICE], given), recorded)

    def _copy_links(self, events: list[Event]) -> list[bytes]:
        head = struct.pack(">hii", 4, 4, self.cid)
        rows = []
        for ev in events:
            if ev.replaces:
                for name in unique(r.predicate for r in ev.replaces):
                    rows.append(head + _text(ev.subject) + _text(name) + _text(ev.id))
        return rows

    @staticmethod
    def _chunks(rows: Iterable[bytes]) -> Iterator[bytes]:
        """The binary COPY stream of ``rows`` in pieces of about ``COPY_CHUNK`` bytes."""
        buf = [_COPY_HEADER]
        size = len(_COPY_HEADER)
        for row in rows:
            buf.append(row)
            size += len(row)
            if size >= COPY_CHUNK:
                yield b"".join(buf)
                buf, size = [], 0
        buf.append(_COPY_TRAILER)
        yield b"".join(buf)

    @classmethod
    def _copy(cls, cur, statement: str, rows: Iterable[bytes], ahead: bool = False) -> None:
        """COPY ``rows``. With ``ahead`` (a bulk copy), a thread sends each chunk while this
        one renders the next: sending waits for the server to take in the chunk before the
        last (libpq's buffer), so rendering and the server's inserts would otherwise take
        turns instead of running at once. A small append sends on this thread (a thread
        would cost more than it saves)."""
        with cur.copy(statement) as copy:
            if not ahead:
                for chunk in cls._chunks(rows):
                    copy.write(chunk)
                return
            ready: queue.Queue[bytes | None] = queue.Queue(maxsize=SENT_AHEAD)
            failed: list[BaseException] = []

            def send() -> None:
                try:
                    while (chunk := ready.get()) is not None:
                        if not failed:
                            copy.write(chunk)
                except BaseException as e:  # raised on this thread, after the sender stops
                    failed.append(e)
                    while ready.get() is not None:  # let the renderer finish putting
                        pass

            sender = threading.Thread(target=send, name="recall-copy", daemon=True)
            sender.start()
            try:
                for chunk in cls._chunks(rows):
                    if failed:
                        break
                    ready.put(chunk)
            except BaseException:
                failed.append(RuntimeError("stopped"))  # the sender drops what is queued
                raise
            finally:
                ready.put(None)
                sender.join()
            if failed:
                raise failed[0]

    def _insert(self, events: list[Event], prepared: list[tuple] | None = None, placed: list | None = None) -> int:
        """One transaction: take the collection's lock, skip stored ids, COPY the rest.

        The advisory lock serializes appends to one collection, so positions (drawn
        from the identity while the lock is held) become visible in position order:
        a reader that has seen position p has seen every event of the collection
        below p, and ``touched_since(p)`` never misses a later commit.
        ``prepared`` (the rendering of ``events``) is given by ``append``, which
        validates before taking the lock; a bulk import renders while copying.
        """
        for ev in events:
            if not isinstance(ev, Event):
                raise InvalidInput(f"append takes events, got {type(ev).__name__}")
        with self._appending() as conn:
            return self._insert_in(conn, events, prepared, placed)

    @contextmanager
    def _appending(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection for an append; what the server refuses is worded as a refused append."""
        try:
            with self.backend.connection(f"the append to collection {self.collection!r}") as conn:
                try:
                    yield conn
                except (psycopg.OperationalError, pgerrors.ReadOnlySqlTransaction, pgerrors.InsufficientPrivilege):
                    raise  # the backend words these (a lost connection may have committed)
                except psycopg.Error as e:
                    raise StorageError(self._appendrefused(self.backend.describe(e))) from None
        except _Refused as e:
            raise StorageError(self._appendrefused(str(e))) from None

    def _appendrefused(self, why: str) -> str:
        return (
            f"the append to collection {self.collection!r} of the store at {self.backend.url_for_display} "
            f"was refused: {why}; nothing of it was written"
        )

    def _insert_in(
        self,
        conn,
        events: list[Event],
        prepared: list[tuple] | None,
        placed: list | None = None,
    ) -> int:
        """The transaction of ``_insert``; given a list, ``placed`` gets the collection's
        position before it, then each new event with its position (``appended``)."""
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, self.cid))
            # under the lock, in one round trip: the ids already stored, and the collection's
            # last event (its position, and the recorded instant the next append follows)
            found, last_position, last_recorded = one_row(
                conn.execute(
                    "SELECT (SELECT array_agg(id) FROM recall.events WHERE collection_id = %s AND id = ANY(%s)), "
                    "last.position, last.recorded_at FROM (SELECT 1) AS one LEFT JOIN (SELECT position, recorded_at "
                    "FROM recall.events WHERE collection_id = %s ORDER BY position DESC LIMIT 1) AS last ON true",
                    (self.cid, unique(ev.id for ev in events), self.cid),
                )
            )
            stored = set(found or ())
            keep = []
            for i, ev in enumerate(events):
                if ev.id not in stored:
                    stored.add(ev.id)
                    keep.append(i)
            if placed is not None:
                placed.append(int(last_position or 0))
            if not keep:
                return 0
            if len(keep) < len(events):
                events = [events[i] for i in keep]
                if prepared is not None:
                    prepared = [prepared[i] for i in keep]
            recorded = recorded_instant(clock.now_ns(), last_recorded)
            with conn.cursor() as cur:
                self._copy(cur, _COPY_EVENTS, self._rendered(events, prepared, recorded), len(events) > RENDER_SLICE)
                links = self._copy_links(events)
                if links:
                    self._copy(cur, _COPY_REPLACES, links)
            if placed is None:
                conn.execute(
                    "UPDATE recall.collections SET events = events + %s WHERE id = %s", (len(events), self.cid)
                )
            else:
                # the lock keeps other appends out of this collection, and the identity is
                # drawn in COPY order: the positions above the last one are these events'
                # (read in the count's statement: one round trip fewer for a remember)
                positions = conn.execute(
                    "WITH counted AS (UPDATE recall.collections SET events = events + %s WHERE id = %s) "
                    "SELECT position FROM recall.events WHERE collection_id = %s AND position > %s ORDER BY position",
                    (len(events), self.cid, self.cid, placed[0]),
                ).fetchall()
                placed.extend((int(r[0]), stamped(ev, recorded)) for r, ev in zip(positions, events, strict=True))
        return len(events)

    def append(self, events: Sequence[Event]) -> int:
        self._refuse_write()
        events = list(events)
        prepared = self._prepare(events)
        if prepared:
            self._insert(events, prepared)
        return self.position()

    def appended(self, events: Sequence[Event]) -> Appended | None:
        self._refuse_write()
        events = list(events)
        prepared = self._prepare(events)
        if not prepared:
            return None
        placed: list = []
        self._insert(events, prepared, placed)
        return Appended(placed[0], placed[1:])

    def append_many(
        self,
        events: Iterable[Event],
        batch_size: int = 5000,
        progress: Callable[[int, int], None] | None = None,
        *,
        atomic: bool = False,
        bodies: Iterable[str | None] | None = None,
    ) -> int:
        """Bulk import through COPY: one transaction per batch of ``batch_size`` events, so
        an import is atomic per batch, not as a whole (a plain ``append`` is atomic as a
        whole); with ``atomic``, one transaction for them all (``import`` of a file: a
        failure anywhere leaves nothing of it written). Ids already stored are skipped,
        so an interrupted import can simply be run again. Returns how many events were
        new; calls ``progress(read, written)`` after each batch.
        ``bodies`` (with ``atomic``), one per event: the JSON form (``Event.to_json``) the
        event was just decoded from, stored as it is (an import has it); None: rendered
        and checked here.

        Into a database that holds no event yet (and as the owner of the tables), the
        secondary indexes are dropped first and built once at the end; the unique id
        index stays, so duplicates are still skipped. If the process dies before the
        end, the next open of the store with write access builds the missing indexes."""
        self._refuse_write()
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be at least 1, got {batch_size}")
        if atomic:
            return self._append_all(events, batch_size, progress, bodies)
        read = written = 0
        rendered = None if bodies is None else iter(bodies)

        def flush(batch: list[Event]) -> None:
            nonlocal read, written
            read += len(batch)
            given = None if rendered is None else list(itertools.islice(rendered, len(batch)))
            written += self._insert(batch, None if given is None else self._prepare(batch, given))
            if progress is not None:
                progress(read, written)

        deferred = self._drop_indexes_if_empty()
        try:
            it = iter(events)
            while batch := list(itertools.islice(it, batch_size)):
                flush(batch)
        finally:
            if deferred:
                self.backend.build_missing_indexes()
        return written

    def _append_all(
        self,
        events: Iterable[Event],
        batch_size: int,
        progress: Callable[[int, int], None] | None,
        bodies: Iterable[str | None] | None = None,
    ) -> int:
        """``append_many(atomic=True)``: every batch, and the indexes dropped and built
        again around them, in one transaction, the new events of every batch in one COPY.

        Under the collection's lock, each batch's stored ids are looked up first (the
        events are held in memory: an import has them all already); then the batches are
        rendered into the COPY one after the other, ``progress`` called after each, and a
        batch holding something other than an event is refused when its turn comes, as a
        batch at a time refused it. One COPY rather than one a batch: the server's
        per-statement work runs once (the subject-counts trigger adds to each subject once,
        not once a batch; the collection's count is updated once, so the foreign-key check
        of every event row finds its row without walking a version per batch), and there
        are no round trips between batches."""
        with self._appending() as conn, conn.transaction():
            deferred = self._drop_indexes(conn)
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, self.cid))
            last_recorded = one_row(
                conn.execute(
                    "SELECT (SELECT recorded_at FROM recall.events WHERE collection_id = %s "
                    "ORDER BY position DESC LIMIT 1)",
                    (self.cid,),
                )
            )[0]
            # per batch: its new events, their bodies, how many events it held, an item that is
            # none, its recorded instant (one a batch, as when each batch was a COPY of its own)
            plan: list[tuple[list[Event], list[str | None] | None, int, object, int]] = []
            stored: set[str] = set()
            it = iter(events)
            rendered = None if bodies is None else iter(bodies)
            while batch := list(itertools.islice(it, batch_size)):
                odd = next((ev for ev in batch if not isinstance(ev, Event)), None)
                if odd is not None:
                    plan.append(([], None, len(batch), odd, 0))
                    break
                given = None if rendered is None else list(itertools.islice(rendered, len(batch)))
                found = one_row(
                    conn.execute(
                        "SELECT array_agg(id) FROM recall.events WHERE collection_id = %s AND id = ANY(%s)",
                        (self.cid, unique(ev.id for ev in batch if ev.id not in stored)),
                    )
                )[0]
                stored.update(found or ())
                keep = []
                for i, ev in enumerate(batch):
                    if ev.id not in stored:
                        stored.add(ev.id)
                        keep.append(i)
                recorded = 0
                if keep:
                    recorded = last_recorded = recorded_instant(clock.now_ns(), last_recorded)
                if len(keep) < len(batch):
                    kept = [batch[i] for i in keep]
                    plan.append((kept, None if given is None else [given[i] for i in keep], len(batch), None, recorded))
                else:
                    plan.append((batch, given, len(batch), None, recorded))
            new = [ev for kept, *_ in plan for ev in kept]

            def rows() -> Iterator[bytes]:
                read = written = 0
                for kept, given, held, odd, recorded in plan:
                    if odd is not None:
                        raise InvalidInput(f"append takes events, got {type(odd).__name__}")
                    yield from self._rendered(kept, None, recorded, given)
                    read += held
                    written += len(kept)
                    if progress is not None:
                        progress(read, written)

            if new:
                with conn.cursor() as cur:
                    self._copy(cur, _COPY_EVENTS, rows(), len(new) > RENDER_SLICE)
                    links = self._copy_links(new)
                    if links:
                        self._copy(cur, _COPY_REPLACES, links)
                conn.execute("UPDATE recall.collections SET events = events + %s WHERE id = %s", (len(new), self.cid))
            else:  # nothing new: the progress calls (and a refusal) all the same
                for _ in rows():
                    pass
            if deferred:
                for sql in SECONDARY_INDEXES.values():
                    conn.execute(sql)
        return len(new)

    def _drop_indexes_if_empty(self) -> bool:
        with self.backend.connection("preparing a bulk import") as conn, conn.transaction():
            return self._drop_indexes(conn)

    @staticmethod
    def _drop_indexes(conn) -> bool:
        """Drop the secondary indexes inside the caller's transaction if the database holds
        no event yet and this role owns the tables; whether they were dropped."""
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, SCHEMA_LOCK))
        empty, owner = one_row(
            conn.execute(
                "SELECT NOT EXISTS (SELECT 1 FROM recall.events), "
                "pg_has_role(c.relowner, 'USAGE') FROM pg_catalog.pg_class c "
                "WHERE c.oid = 'recall.events'::regclass"
            )
        )
        if not (empty and owner):
            return False
        for name in SECONDARY_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS recall.{name}")
        return True

    # --- watermarks ----------------------------------------------------------

    def position(self) -> int:
        with self.backend.connection("reading the store position") as conn:
            row = one_row(conn.execute("SELECT max(position) FROM recall.events WHERE collection_id = %s", (self.cid,)))
        return int(row[0] or 0)

    def count(self) -> int:
        with self.backend.connection("counting events") as conn:
            row = conn.execute("SELECT events FROM recall.collections WHERE id = %s", (self.cid,)).fetchone()
        return int(row[0]) if row else 0

    def touched_since(self, position: int, limit: int = 100_000) -> list[Touch]:
        limit = int(limit)
        with self.backend.connection("reading what changed") as conn:
            rows = conn.execute(
                "SELECT position, subject, predicate, value_key FROM recall.events "
                "WHERE collection_id = %s AND position > %s ORDER BY position LIMIT %s",
                (self.cid, int(position), limit + 1),
            ).fetchall()
        if len(rows) > limit:
            raise refused(f"the events appended after position {position} number", limit)
        return [Touch(int(p), s, pr, k) for p, s, pr, k in rows]

    def events_after(self, position: int, limit: int) -> list[tuple[int, Event]] | None:
        with self.backend.connection("reading what changed") as conn:
            rows = conn.execute(
                f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND position > %s "
                "ORDER BY position LIMIT %s",
                (self.cid, int(position), int(limit) + 1),
            ).fetchall()
        if len(rows) > limit:
            return None
        return list(zip([int(r[0]) for r in rows], self._decode(rows), strict=True))

    # --- complete reads ------------------------------------------------------

    def pair_events(self, subject: str, predicates: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        preds = unique(predicates)
        if not preds:
            return []
        if len(preds) == 1:
            query = (
                f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND subject = %s AND predicate = %s "
                "ORDER BY position LIMIT %s"
            )
            params: tuple = (self.cid, subject, preds[0])
        else:
            query = (
                f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND subject = %s "
                "AND predicate = ANY(%s) ORDER BY position LIMIT %s"
            )
            params = (self.cid, subject, preds)
        return self._complete(query, params, limit, _pair_listing(subject, preds))

    def subject_events(self, subject: str, limit: int = 100_000) -> list[Event]:
        return self._complete(
            f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND subject = %s ORDER BY position LIMIT %s",
            (self.cid, subject),
            limit,
            f"the subject {subject} has",
        )

    def events_by_id(self, ids: Sequence[str]) -> list[Event]:
        wanted = unique(ids)
        if not wanted:
            return []
        with self.backend.connection("reading events by id") as conn:
            rows = conn.execute(
                f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND id = ANY(%s) ORDER BY position",
                (self.cid, wanted),
            ).fetchall()
        return self._decode(rows)

    def replacing_events(self, subject: str, predicates: Sequence[str]) -> list[Event]:
        preds = unique(predicates)
        if not preds:
            return []
        return self._complete(
            f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND id IN ("
            "SELECT event_id FROM recall.event_replaces WHERE collection_id = %s AND subject = %s "
            "AND predicate = ANY(%s)) ORDER BY position LIMIT %s",
            (self.cid, self.cid, subject, preds),
            MAX_PAIR_EVENTS,
            _replacing_listing(subject, preds),
        )

    def pair_read(
        self, subject: str, predicates: Sequence[str], replaced: Sequence[str], limit: int = MAX_PAIR_EVENTS
    ) -> PairRead:
        # one statement: each round trip costs the client more than the server spends on
        # the query (docs/benchmarks.md, "Eighth round, PostgreSQL"). The value names are
        # those of the pair's latest values: what ``elsewhere`` asks about next, bounded.
        preds, repl, limit = unique(predicates), unique(replaced), int(limit)
        if not preds or not repl:
            return super().pair_read(subject, preds, repl, limit)
        with self.backend.connection("reading events") as conn:
            rows = conn.execute(
                "WITH pair AS (SELECT position, id, observed_at, body, recorded_at, value_key FROM recall.events "
                "WHERE collection_id = %(c)s AND subject = %(s)s AND predicate = ANY(%(p)s) "
                "ORDER BY position LIMIT %(n)s), "
                "replacing AS (SELECT position, id, observed_at, body, recorded_at FROM recall.events "
                "WHERE collection_id = %(c)s AND id IN (SELECT event_id FROM recall.event_replaces "
                "WHERE collection_id = %(c)s AND subject = %(s)s AND predicate = ANY(%(r)s)) "
                "ORDER BY position LIMIT %(m)s), "
                "latest AS (SELECT value_key FROM pair GROUP BY value_key ORDER BY max(position) DESC LIMIT %(k)s) "
                "SELECT 0 AS part, position, id, observed_at, body::text, recorded_at FROM pair "
                "UNION ALL SELECT 1, position, id, observed_at, body::text, recorded_at FROM replacing "
                "UNION ALL SELECT 2, NULL, l.value_key, NULL, v.predicate, NULL FROM latest l LEFT JOIN LATERAL "
                "(SELECT DISTINCT predicate FROM recall.events WHERE collection_id = %(c)s AND subject = %(s)s "
                "AND value_key = l.value_key AND NOT retraction) v ON true "
                "ORDER BY part, position",
                {
                    "c": self.cid,
                    "s": subject,
                    "p": preds,
                    "r": repl,
                    "n": limit + 1,
                    "m": MAX_PAIR_EVENTS + 1,
                    "k": PAIR_READ_VALUES,
                },
            ).fetchall()
        parts: tuple[list[tuple], list[tuple], list[tuple]] = ([], [], [])
        for r in rows:
            parts[r[0]].append(r[1:])
        own, replacing, values = parts
        if len(own) > limit:
            raise refused(_pair_listing(subject, preds), limit)
        events = self._decode(own)
        if len(replacing) > MAX_PAIR_EVENTS:
            raise refused(_replacing_listing(subject, repl), MAX_PAIR_EVENTS)
        names: dict[str, set[str]] = {}
        for _, key, _, name, _ in values:
            got = names.setdefault(key, set())
            if name is not None:
                got.add(name)
        return PairRead(events, self._decode(replacing), names)

    def value_events(self, subject: str, value_keys: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        keys = unique(value_keys)
        if not keys:
            return []
        return self._complete(
            f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND subject = %s "
            "AND value_key = ANY(%s) ORDER BY position LIMIT %s",
            (self.cid, subject, keys),
            limit,
            f"the events of {subject} with the values asked for number",
        )

    def value_predicates(self, subject: str, value_keys: Sequence[str]) -> set[str]:
        keys = unique(value_keys)
        if not keys:
            return set()
        with self.backend.connection("reading value predicates") as conn:
            rows = conn.execute(
                "SELECT DISTINCT predicate FROM recall.events WHERE collection_id = %s AND subject = %s "
                "AND value_key = ANY(%s) AND NOT retraction",
                (self.cid, subject, keys),
            ).fetchall()
        return {r[0] for r in rows}

    def absent_subjects(self, subjects: Sequence[str]) -> set[str]:
        # one index probe per subject (a DISTINCT would walk all of a big subject's rows)
        with self.backend.connection("reading subjects") as conn:
            rows = conn.execute(
                "SELECT s FROM unnest(%s::text[]) AS s WHERE NOT EXISTS "
                "(SELECT 1 FROM recall.events WHERE collection_id = %s AND subject = s)",
                (unique(subjects), self.cid),
            ).fetchall()
        return {r[0] for r in rows}

    # --- streams -------------------------------------------------------------

    def predicate_events(self, predicates: Sequence[str], subjects: Sequence[str] | None = None) -> Iterator[Event]:
        """Grouped by subject (subjects in ascending byte order), each subject's events in position order."""
        preds = unique(predicates)
        if not preds:
            return iter(())
        if subjects is None:
            return self._stream(
                "reading events by predicate",
                f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND predicate = ANY(%s) "
                "ORDER BY subject, position",
                (self.cid, preds),
            )
        subs = sorted(set(subjects))
        if not subs:
            return iter(())
        return self._stream(
            "reading events by predicate",
            f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND predicate = ANY(%s) "
            "AND subject = ANY(%s) ORDER BY subject, position",
            (self.cid, preds, subs),
        )

    def all_events(self, after_position: int = 0) -> Iterator[Event]:
        return self._stream(
            "reading the log",
            f"SELECT {_COLS} FROM recall.events WHERE collection_id = %s AND position > %s ORDER BY position",
            (self.cid, int(after_position)),
        )

    def shared_values(self, exclude_predicates: Sequence[str] = ()) -> Iterator[tuple[str, str, list[str]]]:
        rows = self._stream(
            "looking for shared values",
            "SELECT subject, value_key, array_agg(DISTINCT predicate ORDER BY predicate) FROM recall.events "
            f"WHERE collection_id = %s AND NOT retraction AND {NOT_RESERVED} AND predicate <> ALL(%s) "
            "GROUP BY subject, value_key HAVING count(DISTINCT predicate) >= 2 ORDER BY subject, value_key",
            (self.cid, unique(exclude_predicates)),
            decode=False,
        )
        return ((s, k, list(names)) for s, k, names in rows)

    # --- registry ------------------------------------------------------------

    def registry_events(self) -> list[Event]:
        return self.pair_events(REGISTRY_SUBJECT, [REGISTRY_PREDICATE], limit=MAX_REGISTRY_EVENTS)

    # --- browsing ------------------------------------------------------------

    def subjects(self, prefix: str = "", limit: int = 1000) -> list[tuple[str, int]]:
        """The ``limit`` subjects with the most events (ties by name); reserved subjects left out."""
        params: list[object] = [self.cid]
        where = ""
        if prefix:
            where = "AND subject >= %s AND subject < %s "
            params += [prefix, prefix + "\U0010ffff"]
        with self.backend.connection("listing subjects") as conn:
            rows = conn.execute(
                f"SELECT subject, events FROM recall.subject_counts WHERE collection_id = %s {where}"
                f"AND {NOT_RESERVED} ORDER BY events DESC, subject LIMIT %s",
                (*params, max(0, int(limit))),
            ).fetchall()
        return [(s, int(n)) for s, n in rows]

    def subject_counts(self) -> dict[str, int]:
        """Every subject's kept event count, reserved subjects included (verify compares it with the log)."""
        with self.backend.connection("reading subject counts") as conn:
            rows = conn.execute(
                "SELECT subject, events FROM recall.subject_counts WHERE collection_id = %s", (self.cid,)
            ).fetchall()
        return {s: int(n) for s, n in rows}

    def pairs(self, subject: str) -> list[tuple[str, int]]:
        with self.backend.connection("listing pairs") as conn:
            rows = conn.execute(
                "SELECT predicate, count(*) FROM recall.events WHERE collection_id = %s AND subject = %s "
                "GROUP BY predicate ORDER BY predicate",
                (self.cid, subject),
            ).fetchall()
        return [(p, int(n)) for p, n in rows]

    def predicate_counts(self) -> dict[str, int]:
        with self.backend.connection("counting predicates") as conn:
            rows = conn.execute(
                f"SELECT predicate, count(*) FROM recall.events WHERE collection_id = %s AND {NOT_RESERVED} "
                "GROUP BY predicate ORDER BY predicate",
                (self.cid,),
            ).fetchall()
        return {p: int(n) for p, n in rows}

    # --- search --------------------------------------------------------------

    @staticmethod
    def _window(since: int | None, until: int | None) -> tuple[str, list[int]]:
        clause, params = "", []
        if since is not None:
            clause += " AND observed_at >= %s"
            params.append(int(since))
        if until is not None:
            clause += " AND observed_at <= %s"
            params.append(int(until))
        return clause, params

    def keyword_search(self, text: str, k: int, since: int | None = None, until: int | None = None) -> list[Hit]:
        query = tsquery_any(text or "")
        if not query or k <= 0:
            return []
        window, params = self._window(since, until)
        with self.backend.connection("searching keywords") as conn:
            rows = conn.execute(
                f"SELECT {_COLS}, ts_rank(tsv, q) AS rank "
                "FROM recall.events, to_tsquery('pg_catalog.simple', %s) AS q "
                f"WHERE collection_id = %s AND tsv @@ q{window} ORDER BY rank DESC, position LIMIT %s",
                (query, self.cid, *params, int(k)),
            ).fetchall()
        events = self._decode(r[:5] for r in rows)
        return [Hit(ev, float(r[5])) for ev, r in zip(events, rows, strict=False)]

    def vector_search(
        self, vector: np.ndarray, k: int, since: int | None = None, until: int | None = None
    ) -> list[Hit]:
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape != (DIMENSIONS,):
            raise InvalidInput(f"a search vector has {DIMENSIONS} dimensions, got {q.size}")
        if k <= 0:
            return []
        window, params = self._window(since, until)
        norm = float(np.sqrt(np.dot(q.astype(np.float64), q.astype(np.float64))))
        if not np.isfinite(norm):
            raise InvalidInput("a search vector must hold finite numbers")
        if norm == 0:  # no direction: every event scores 0, ties go by position
            with self.backend.connection("searching vectors") as conn:
                rows = conn.execute(
                    f"SELECT {_COLS}, 0.0 FROM recall.events WHERE collection_id = %s{window} "
                    "ORDER BY position LIMIT %s",
                    (self.cid, *params, int(k)),
                ).fetchall()
        else:
            # an exact scan orders ties by position; the optional HNSW index can only
            # serve ORDER BY distance alone
            tie = "" if self.backend.has_vector_index else ", position"
            with self.backend.connection("searching vectors") as conn:
                rows = conn.execute(
                    f"SELECT {_COLS}, vec OPERATOR({self.backend.vector_schema}.<=>) %s "
                    f"AS distance FROM recall.events WHERE collection_id = %s{window} ORDER BY distance{tie} LIMIT %s",
                    # a numpy array: pgvector's adapter (backend.py) sends it as a vector
                    (q / np.float32(norm), self.cid, *params, int(k)),
                ).fetchall()
            rows = [(*r[:5], 1.0 - float(r[5])) for r in rows]
        events = self._decode(r[:5] for r in rows)
        return [Hit(ev, float(r[5])) for ev, r in zip(events, rows, strict=False)]

    def index_problems(self) -> list[str]:
        """Rows of the collection's vectors (``recall.event_meanings``) that do not agree with
        its log (``verify``; docs/storage.md, "Search indexes"). The text index is a column
        of the events themselves, under their append-only guard: nothing to compare."""
        if not self.backend.has_meanings:
            return []
        with self.backend.connection("checking the search indexes") as conn:
            row = conn.execute(
                "SELECT count(*) FROM recall.event_meanings m LEFT JOIN recall.events e "
                "ON e.position = m.position AND e.collection_id = m.collection_id "
                "WHERE m.collection_id = %s AND (e.position IS NULL OR e.observed_at != m.observed_at)",
                (self.cid,),
            ).fetchone()
        n = int(row[0]) if row else 0
        return [f"{n} row(s) of the vector index (recall.event_meanings) match no event of the log"] if n else []
