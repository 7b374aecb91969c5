"""One collection of an SQLite store: the ``Store`` contract over sqlite3."""

from __future__ import annotations

import heapq
import itertools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

import orjson

from ... import clock
from ...errors import InvalidEvent, InvalidInput, ReadOnlyStore, StorageError
from ...records import REGISTRY_PREDICATE, REGISTRY_SUBJECT, UNSEARCHED_SUBJECTS, Event, decode_event, stamped
from ...values import value_key
from ..base import MAX_PAIR_EVENTS, Appended, Store, Touch
from ..common import MAX_REGISTRY_EVENTS, NOT_RESERVED, SEARCHED, pair_name, recorded_instant, refused, unique
from ..decoding import RowDecoder
from .checkpoint import LOG_PAGES, Checkpointer
from .schema import SECONDARY_INDEXES
from .search import SearchMixin
from .sql import COLS, chunks, marks

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .vectors import SparseVectors

# numpy and the embedder (which needs it) are imported where they are used, so that
# opening a store and reading pairs stays quick to start (the CLI opens one per command).

FETCH = 1000  # rows per fetchmany in streams

# the body of an event: json.dumps(event.to_json(), separators=(",", ":")), without
# building a new encoder for every event
_compact = json.JSONEncoder(separators=(",", ":")).encode


def _body(obj: dict) -> str:
    """The stored JSON of an event that decodes (so every number in it is finite): orjson,
    about 8x faster; what it refuses (an integer past 64 bits, a lone surrogate) is
    written by the standard encoder. Both read back to the same event."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return _compact(obj)


# the sequence, the highest position of any collection, and this collection's highest
# position and latest recorded instant (the ``?`` is the collection id)
_WATERMARKS = (
    "SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'events'), (SELECT MAX(position) FROM events), "
    "last.position, last.recorded_at FROM (SELECT 1) LEFT JOIN (SELECT position, recorded_at FROM events "
    "WHERE collection_id = ? ORDER BY position DESC LIMIT 1) AS last"
)
# the same, and whether the one event an append brings (``?2``) is stored: a single
# append (every ``remember``) asks both in one statement
_WATERMARKS_AND_ID = (
    "SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'events'), (SELECT MAX(position) FROM events), "
    "last.position, last.recorded_at, EXISTS (SELECT 1 FROM events WHERE collection_id = ?1 AND id = ?2) "
    "FROM (SELECT 1) LEFT JOIN (SELECT position, recorded_at FROM events "
    "WHERE collection_id = ?1 ORDER BY position DESC LIMIT 1) AS last"
)
# a subject's event count, kept in the append's transaction (docs/storage.md, "Subject counts")
_COUNT_SUBJECTS = (
    "INSERT INTO subject_counts (collection_id, subject, events) VALUES (?, ?, ?) "
    "ON CONFLICT (collection_id, subject) DO UPDATE SET events = events + excluded.events"
)


_INDEXING: tuple[ModuleType, ModuleType] | None = None


def _indexing() -> tuple[ModuleType, ModuleType]:
    """The sentence and vector modules an append renders index rows with, imported at the
    first append (numpy), then kept: an import statement in the append itself cost about 3 µs
    every time, a hundredth of a ``remember`` (docs/benchmarks.md, "Seventh round, writes")."""
    global _INDEXING
    if _INDEXING is None:
        from ... import embed
        from . import vectors

        _INDEXING = (embed, vectors)
    return _INDEXING


class _Bulk:
    """What the batches of one atomic ``append_many`` keep between them: the watermarks,
    read once under its write lock (as ``_place`` reads them for each batch, and finds
    them where the batch before left them), and the counts, written once at the end."""

    def __init__(self, conn: sqlite3.Connection, cid: int, known: set[str] | None) -> None:
        seq, top, _mine, last = conn.execute(_WATERMARKS, (cid,)).fetchone()
        self.base = max(seq or 0, top or 0)  # the last position drawn
        self.recorded: int | None = last  # the collection's latest recorded instant
        self.known = known  # every id an empty collection holds (then none is looked up)
        self.subjects: dict[str, int] = {}
        self.events = 0
        self.links: list[tuple[int, str, str, str]] = []

    def finish(self, conn: sqlite3.Connection, cid: int) -> None:
        """The collection's and its subjects' counts, as the batches' own updates would
        leave them, and the rows of ``replaces``."""
        if self.links:
            conn.executemany(_INSERT_LINKS, self.links)
        if self.events:
            conn.execute("UPDATE collections SET events = events + ? WHERE id = ?", (self.events, cid))
            conn.executemany(_COUNT_SUBJECTS, [(cid, subject, n) for subject, n in self.subjects.items()])


def _lift(conn: sqlite3.Connection, triggers: list[str]) -> list[str]:
    """Drop the named triggers inside the caller's transaction; their SQL as stored, to
    create them again, the same, before it commits (a failure takes the drop back).

    An atomic import lifts the guard ``events_no_replace`` while it inserts: the guard
    refuses an insert that would collide with a stored position or id, which only
    ``INSERT OR REPLACE`` could otherwise make, and costs two lookups a row. The import's
    plain ``INSERT`` of positions drawn above every stored one and of ids it found absent
    would be refused by the primary key and the unique id index anyway, and no other
    writer inserts while it holds the write lock; every other connection sees the guard
    all along (docs/benchmarks.md, "Eighth round, bulk import")."""
    lifted = []
    for name in triggers:
        row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)).fetchone()
        if row is not None and row[0]:
            conn.execute(f"DROP TRIGGER {name}")
            lifted.append(row[0])
    return lifted


def _insert_rows(conn: sqlite3.Connection, sql: str, rows: list[tuple]) -> None:
    """``executemany``, or ``execute`` for one row (a ``remember``'s append: a little less
    work in the sqlite3 module per statement)."""
    if len(rows) == 1:
        conn.execute(sql, rows[0])
    else:
        conn.executemany(sql, rows)


def _fresh(prepared: list[tuple], stored: set[str]) -> list[tuple]:
    """The prepared events whose ids are not in ``stored``, each once (``stored`` grows with them)."""
    fresh = []
    add = stored.add
    for p in prepared:
        eid = p[0].id
        if eid not in stored:
            add(eid)
            fresh.append(p)
    return fresh


_INSERT_LINKS = "INSERT INTO event_replaces (collection_id, subject, predicate, event_id) VALUES (?,?,?,?)"


def _write_rows(
    conn: sqlite3.Connection, cid: int, fresh: list[tuple], base: int, recorded: int
) -> tuple[list[tuple], list[tuple[int, str, str, str]]]:
    """Insert the event, text and vector rows of ``fresh`` (``_prepare``'s tuples) at the
    positions after ``base``. Returns the event rows, which the caller counts, and the
    rows of ``replaces``, which it writes (a bulk import once, at its end)."""
    rows = []
    texts = []
    vectors = []
    links = []
    pos = base
    for ev, body, key, vector, text in fresh:
        pos += 1
        rows.append(
            (pos, cid, ev.id, ev.subject, ev.predicate, key, 1 if ev.retraction else 0, ev.observed_at, body, recorded)
        )
        if text is not None:
            texts.append((pos, text))
            vectors.append((pos, ev.observed_at, vector))
        if ev.replaces:
            for name in unique(r.predicate for r in ev.replaces):
                links.append((cid, ev.subject, name, ev.id))
    _insert_rows(
        conn,
        "INSERT INTO events (position, collection_id, id, subject, predicate, value_key, retraction, "
        "observed_at, body, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    if texts:
        _insert_rows(conn, f"INSERT INTO event_text_{cid} (rowid, text) VALUES (?, ?)", texts)
        _insert_rows(conn, f"INSERT INTO event_vectors_{cid} (position, observed_at, vector) VALUES (?, ?, ?)", vectors)
    return rows, links


class Host(Protocol):
    """What a collection needs from its backend (backend.py): this thread's connection,
    and how the file was opened."""

    url_for_display: str
    read_only: bool
    read_only_reason: str
    decode_cache: int
    checkpointer: Checkpointer  # told of each commit (checkpoint.py)

    def conn(self) -> sqlite3.Connection: ...

    def grouped(self) -> bool: ...


class SQLiteStore(SearchMixin, Store):
    def __init__(self, backend: Host, collection: str, collection_id: int) -> None:
        self.backend = backend
        self.collection = collection
        self.cid = collection_id
        self._vectors: SparseVectors | None = None
        self._vector_lock = threading.Lock()
        self._doc_freq: dict[str, int] = {}
        self._doc_freq_at = 0  # the collection's size when the frequencies were read
        self._decoder = RowDecoder(collection, backend.decode_cache)

    @property
    def read_only(self) -> bool:
        return self.backend.read_only

    def _conn(self) -> sqlite3.Connection:
        return self.backend.conn()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.backend.url_for_display!r}, {self.collection!r})"

    # --- decoding ------------------------------------------------------------

    def _decode(self, rows: Iterable[tuple], memo: bool = True) -> list[Event]:
        return self._decoder.decode(rows, memo)

    def _corrupt(self, eid: object, e: Exception) -> InvalidEvent:
        return self._decoder.corrupt(eid, e)

    def _stream(self, cursor: sqlite3.Cursor) -> Iterator[Event]:
        try:
            while True:
                rows = cursor.fetchmany(FETCH)
                if not rows:
                    return
                yield from self._decode(rows, memo=False)
        finally:
            cursor.close()

    def _complete(self, sql: str, params: Sequence[object], limit: int, what: str) -> list[Event]:
        rows = self._conn().execute(sql, (*params, limit + 1)).fetchall()
        if len(rows) > limit:
            raise refused(what, limit)
        return self._decode(rows)

    # --- writes --------------------------------------------------------------

    def _refuse_write(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(self.backend.read_only_reason)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        where = f"collection {self.collection!r} of the store at {self.backend.url_for_display}"
        if self.backend.grouped():
            with self._savepoint(conn, where):
                yield conn
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            waited = conn.execute("PRAGMA busy_timeout").fetchone()[0] / 1000
            raise StorageError(
                f"cannot write to {where}: {e} (another writer held the write lock for more than {waited:g} s); "
                "nothing was written"
            ) from None
        try:
            yield conn
            conn.execute("COMMIT")
            self.backend.checkpointer.committed()
        except BaseException as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(e, (sqlite3.Error, UnicodeError, OverflowError)):
                raise StorageError(f"the append to {where} was refused: {e}; nothing of it was written") from None
            raise

    @staticmethod
    @contextmanager
    def _savepoint(conn: sqlite3.Connection, where: str) -> Iterator[None]:
        """One append inside a group's transaction (Backend.group): a savepoint, so an
        append that fails takes back only its own rows."""
        if not conn.in_transaction:  # SQLite ended the group's transaction after an error
            raise StorageError(f"the append to {where} was refused: its group's transaction ended; nothing was written")
        conn.execute("SAVEPOINT recall_append")
        try:
            yield
            conn.execute("RELEASE recall_append")
        except BaseException as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK TO recall_append")
                conn.execute("RELEASE recall_append")
            if isinstance(e, (sqlite3.Error, UnicodeError, OverflowError)):
                raise StorageError(f"the append to {where} was refused: {e}; nothing of it was written") from None
            raise

    @staticmethod
    def _prepare(events: Sequence[Event], bodies: Sequence[str | None] | None = None) -> list[tuple]:
        """Validate and render outside the write lock: (event, body, value key, vector, search text).
        ``bodies`` (an import's, see ``append_many``): an event's JSON already decoded into it."""
        out = []
        given = zip(events, bodies, strict=True) if bodies is not None else zip(events, itertools.repeat(None))
        for ev, body in given:
            if not isinstance(ev, Event):
                raise InvalidInput(f"append takes events, got {type(ev).__name__}")
            if body is None:
                if not isinstance(ev.observed_at, int) or isinstance(ev.observed_at, bool):
                    raise InvalidEvent(f"event {ev.id!r} has invalid observed_at (not integer nanoseconds)")
                obj = ev.to_json()
                decode_event(obj, observed_at=ev.observed_at)  # what cannot be read back is never written
                body = _body(obj)
            out.append((ev, body, value_key(ev.value)))
        if not out:
            return out
        embed, vectors_module = _indexing()
        event_text = embed.event_text

        # the search indexes leave some records out (records.UNSEARCHED_SUBJECTS): no vector, no text
        searched = [i for i, p in enumerate(out) if p[0].subject not in UNSEARCHED_SUBJECTS]
        sentences = [event_text(out[i][0]) for i in searched]
        vectors = vectors_module.encode_texts(sentences) if sentences else []
        indexed: list[tuple] = [(None, None)] * len(out)
        for j, i in enumerate(searched):
            ev = out[i][0]
            # what keyword search indexes: the sentence, then the evidence (embed.search_text)
            indexed[i] = (vectors[j], f"{sentences[j]}\n{ev.evidence}" if ev.evidence else sentences[j])
        return [(*p, *indexed[i]) for i, p in enumerate(out)]

    def _insert(self, conn: sqlite3.Connection, prepared: list[tuple]) -> int:
        """Insert inside the caller's transaction; skip stored ids; return how many were new."""
        return len(self._place(conn, prepared)[1])

    def _place(self, conn: sqlite3.Connection, prepared: list[tuple]) -> tuple[int, list[tuple[int, Event, int]]]:
        """``_insert``, returning the collection's position before the insert and the new
        events with the positions and the recorded instant they got."""
        cid = self.cid
        watermarks: list | None = None
        if len(prepared) == 1:
            *watermarks, held = conn.execute(_WATERMARKS_AND_ID, (cid, prepared[0][0].id)).fetchone()
            stored = {prepared[0][0].id} if held else set()
        else:
            stored = self._stored_ids(conn, prepared)
        fresh = _fresh(prepared, stored)
        # one statement for every watermark the insert needs, under the write lock:
        # positions are drawn above both the sequence and the highest stored row
        seq, top, mine, last = watermarks or conn.execute(_WATERMARKS, (cid,)).fetchone()
        before = int(mine or 0)
        if not fresh:
            return before, []
        base = max(seq or 0, top or 0)
        recorded = recorded_instant(clock.now_ns(), last)
        rows, links = _write_rows(conn, cid, fresh, base, recorded)
        placed = [(base + i, p[0], recorded) for i, p in enumerate(fresh, 1)]
        if links:
            _insert_rows(conn, _INSERT_LINKS, links)
        conn.execute("UPDATE collections SET events = events + ? WHERE id = ?", (len(rows), cid))
        per_subject: dict[str, int] = {}
        for row in rows:
            per_subject[row[3]] = per_subject.get(row[3], 0) + 1
        _insert_rows(conn, _COUNT_SUBJECTS, [(cid, subject, n) for subject, n in per_subject.items()])
        return before, placed

    def append(self, events: Sequence[Event]) -> int:
        self._refuse_write()
        prepared = self._prepare(list(events))
        if prepared:
            with self._write() as conn:
                self._insert(conn, prepared)
        return self.position()

    def appended(self, events: Sequence[Event]) -> Appended | None:
        self._refuse_write()
        prepared = self._prepare(list(events))
        if not prepared:
            return None
        with self._write() as conn:
            before, placed = self._place(conn, prepared)
        # stamped with their recorded instant, as a read of them gives them back
        return Appended(before, [(pos, stamped(ev, recorded)) for pos, ev, recorded in placed])

    def append_many(
        self,
        events: Iterable[Event],
        batch_size: int = 5000,
        progress: Callable[[int, int], None] | None = None,
        *,
        atomic: bool = False,
        bodies: Iterable[str | None] | None = None,
    ) -> int:
        """Bulk import: one transaction per batch of ``batch_size`` events, so an import is
        atomic per batch, not as a whole; with ``atomic``, one transaction for them all
        (``import`` of a file: a failure anywhere leaves nothing of it written). Ids
        already stored are skipped, so an interrupted import can simply be run again.
        Returns how many events were new; calls ``progress(read, written)`` after each batch.
        ``bodies``, one per event: the JSON form (``Event.to_json``) the event was just
        decoded from, stored as it is (an import has it); None: rendered and checked here.

        While one batch is written, the next one is validated and embedded on a helper
        thread. The write-ahead log is checkpointed every 40 MiB.
        Into a file that holds no event yet, the secondary indexes are dropped first and
        built once at the end (sorting once is far faster than upkeep row by row); the
        unique id index stays, so duplicates are still skipped. If the process dies
        before the end, the next open of the store builds the missing indexes.
        An atomic one places its batches with ``_place_bulk`` (the rows ``_insert`` would
        write), and lifts the guard trigger while it inserts (``_lift``)."""
        self._refuse_write()
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be at least 1, got {batch_size}")
        conn = self._conn()
        deferred = conn.execute("SELECT 1 FROM events LIMIT 1").fetchone() is None
        read = written = 0
        bulk: _Bulk | None = None  # an atomic import: what its batches keep between them

        def write(prepared: list[tuple], upto: int) -> None:
            nonlocal written
            if bulk is not None:
                written += self._place_bulk(conn, prepared, bulk)
            else:
                with self._write() as c:
                    written += self._insert(c, prepared)
            if progress is not None:
                progress(upto, written)

        def run() -> None:
            nonlocal read
            from concurrent.futures import ThreadPoolExecutor  # only an import needs it (and its logging)

            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-import")
            pending: tuple[Future, int] | None = None
            try:
                it = iter(events)
                rendered = None if bodies is None else iter(bodies)
                while True:
                    batch = list(itertools.islice(it, batch_size))
                    if not batch:
                        break
                    read += len(batch)
                    given = None if rendered is None else list(itertools.islice(rendered, len(batch)))
                    ahead = (pool.submit(self._prepare, batch, given), read)
                    if pending is not None:
                        write(pending[0].result(), pending[1])
                    pending = ahead
                if pending is not None:
                    write(pending[0].result(), pending[1])
            finally:
                pool.shutdown(wait=True, cancel_futures=True)

        conn.execute("PRAGMA wal_autocheckpoint = 10000")
        try:
            if atomic:  # the indexes are dropped and built again inside the one transaction
                with self._write() as c:
                    if deferred:
                        for name in SECONDARY_INDEXES:
                            c.execute(f"DROP INDEX IF EXISTS {name}")
                    empty = (
                        c.execute("SELECT 1 FROM events WHERE collection_id = ? LIMIT 1", (self.cid,)).fetchone()
                        is None
                    )
                    bulk = _Bulk(c, self.cid, set() if empty else None)
                    lifted = _lift(c, ["events_no_replace"])
                    run()
                    for sql in lifted:  # as they were, inside the same transaction
                        c.execute(sql)
                    bulk.finish(c, self.cid)
                    if deferred:
                        for sql in SECONDARY_INDEXES.values():
                            c.execute(sql)
            else:
                if deferred:
                    with self._write() as c:
                        for name in SECONDARY_INDEXES:
                            c.execute(f"DROP INDEX IF EXISTS {name}")
                try:
                    run()
                finally:
                    if deferred:
                        with self._write() as c:
                            for sql in SECONDARY_INDEXES.values():
                                c.execute(sql)
        finally:
            conn.execute(f"PRAGMA wal_autocheckpoint = {LOG_PAGES}")
            if not conn.in_transaction:  # inside a group the log is the group's until it commits
                self._truncate_log(conn)
        return written

    @staticmethod
    def _truncate_log(conn: sqlite3.Connection) -> None:
        """Fold an import's log into the file and shrink it, without waiting for readers."""
        busy = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(busy)}")

    def _stored_ids(self, conn: sqlite3.Connection, prepared: list[tuple]) -> set[str]:
        """Which of the prepared events' ids the collection holds already."""
        stored: set[str] = set()
        for chunk in chunks(unique([p[0].id for p in prepared])):
            stored.update(
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM events WHERE collection_id = ? AND id IN ({marks(len(chunk))})",
                    (self.cid, *chunk),
                )
            )
        return stored

    def _place_bulk(self, conn: sqlite3.Connection, prepared: list[tuple], bulk: _Bulk) -> int:
        """``_insert`` of one batch of an atomic ``append_many``, inside its one transaction;
        the same rows, drawn from watermarks read once for the whole import (each batch
        moves them as ``_place`` finds them moved), with the counts written at the end
        (``_Bulk.finish``) instead of once a batch. Returns how many events were new."""
        cid = self.cid
        stored = bulk.known
        if stored is None:  # a collection that held events: this batch's ids looked up
            stored = self._stored_ids(conn, prepared)
        fresh = _fresh(prepared, stored)
        if not fresh:
            return 0
        base = bulk.base
        recorded = bulk.recorded = recorded_instant(clock.now_ns(), bulk.recorded)
        rows, links = _write_rows(conn, cid, fresh, base, recorded)
        bulk.base = base + len(fresh)
        bulk.links.extend(links)
        counts = bulk.subjects
        for row in rows:
            counts[row[3]] = counts.get(row[3], 0) + 1
        bulk.events += len(rows)
        return len(rows)

    # --- watermarks ----------------------------------------------------------

    def position(self) -> int:
        row = self._conn().execute("SELECT MAX(position) FROM events WHERE collection_id = ?", (self.cid,)).fetchone()
        return int(row[0] or 0)

    def count(self) -> int:
        row = self._conn().execute("SELECT events FROM collections WHERE id = ?", (self.cid,)).fetchone()
        return int(row[0]) if row else 0

    def touched_since(self, position: int, limit: int = 100_000) -> list[Touch]:
        rows = (
            self._conn()
            .execute(
                "SELECT position, subject, predicate, value_key FROM events "
                "WHERE collection_id = ? AND position > ? ORDER BY position LIMIT ?",
                (self.cid, int(position), limit + 1),
            )
            .fetchall()
        )
        if len(rows) > limit:
            raise refused(f"the events appended after position {position} number", limit)
        return [Touch(*r) for r in rows]

    def events_after(self, position: int, limit: int) -> list[tuple[int, Event]] | None:
        rows = (
            self._conn()
            .execute(
                f"SELECT {COLS} FROM events WHERE collection_id = ? AND position > ? ORDER BY position LIMIT ?",
                (self.cid, int(position), int(limit) + 1),
            )
            .fetchall()
        )
        if len(rows) > limit:
            return None
        return list(zip([r[0] for r in rows], self._decode(rows), strict=True))

    # --- complete reads ------------------------------------------------------

    def pair_events(self, subject: str, predicates: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        preds = unique(predicates)
        if not preds:
            return []
        if len(preds) == 1:
            # one pair: its index holds the rows in position order (the rowid ends every
            # index entry), so no sort; with IN, "+" keeps the planner off events_position
            sql = (
                f"SELECT {COLS} FROM events WHERE collection_id = ? AND subject = ? AND predicate = ? "
                "ORDER BY position LIMIT ?"
            )
        else:
            sql = (
                f"SELECT {COLS} FROM events WHERE collection_id = ? AND subject = ? "
                f"AND predicate IN ({marks(len(preds))}) ORDER BY +position LIMIT ?"
            )
        return self._complete(sql, (self.cid, subject, *preds), limit, f"{pair_name(subject, preds)} has")

    def subject_events(self, subject: str, limit: int = 100_000) -> list[Event]:
        return self._complete(
            f"SELECT {COLS} FROM events WHERE collection_id = ? AND subject = ? ORDER BY +position LIMIT ?",
            (self.cid, subject),
            limit,
            f"the subject {subject} has",
        )

    def events_by_id(self, ids: Sequence[str]) -> list[Event]:
        wanted = unique(ids)
        rows: list[tuple[int, str, int, str]] = []
        conn = self._conn()
        for chunk in chunks(wanted):
            rows.extend(
                conn.execute(
                    f"SELECT {COLS} FROM events WHERE collection_id = ? AND id IN ({marks(len(chunk))})",
                    (self.cid, *chunk),
                )
            )
        rows.sort()
        return self._decode(rows)

    def replacing_events(self, subject: str, predicates: Sequence[str]) -> list[Event]:
        preds = unique(predicates)
        if not preds:
            return []
        return self._complete(
            f"SELECT {COLS} FROM events WHERE collection_id = ? AND id IN (SELECT event_id FROM event_replaces "
            f"WHERE collection_id = ? AND subject = ? AND predicate IN ({marks(len(preds))})) "
            "ORDER BY +position LIMIT ?",
            (self.cid, self.cid, subject, *preds),
            MAX_PAIR_EVENTS,
            f"the events of {subject} whose replaces name {', '.join(preds)} number",
        )

    def value_events(self, subject: str, value_keys: Sequence[str], limit: int = MAX_PAIR_EVENTS) -> list[Event]:
        keys = unique(value_keys)
        if not keys:
            return []
        return self._complete(
            f"SELECT {COLS} FROM events WHERE collection_id = ? AND subject = ? "
            f"AND value_key IN ({marks(len(keys))}) ORDER BY +position LIMIT ?",
            (self.cid, subject, *keys),
            limit,
            f"the events of {subject} with the values asked for number",
        )

    def value_predicates(self, subject: str, value_keys: Sequence[str]) -> set[str]:
        keys = unique(value_keys)
        if not keys:
            return set()
        rows = (
            self._conn()
            .execute(
                "SELECT DISTINCT predicate FROM events WHERE collection_id = ? AND subject = ? "
                f"AND value_key IN ({marks(len(keys))}) AND retraction = 0",
                (self.cid, subject, *keys),
            )
            .fetchall()
        )
        return {r[0] for r in rows}

    def absent_subjects(self, subjects: Sequence[str]) -> set[str]:
        # one index probe per subject (a DISTINCT would walk all of a big subject's rows)
        rows = self._conn().execute(
            "SELECT value FROM json_each(?) WHERE NOT EXISTS "
            "(SELECT 1 FROM events WHERE collection_id = ? AND subject = json_each.value)",
            (json.dumps(unique(subjects)), self.cid),
        )
        return {r[0] for r in rows}

    # --- streams -------------------------------------------------------------

    def predicate_events(self, predicates: Sequence[str], subjects: Sequence[str] | None = None) -> Iterator[Event]:
        """Grouped by subject (subjects in ascending order), each subject's events in position order."""
        preds = unique(predicates)
        if not preds:
            return iter(())
        top = self.position()  # the stream ends where the log stood when it was asked for
        if subjects is None:
            return self._merged(preds, [None], top)
        subs = sorted(set(subjects))
        return self._merged(preds, list(chunks(subs)), top) if subs else iter(())

    def _merged(self, preds: list[str], chunks: list[Sequence[str] | None], top: int) -> Iterator[Event]:
        conn = self._conn()
        for chunk in chunks:
            streams = []
            for p in preds:
                params: tuple[object, ...]
                if chunk is None:
                    sql, params = (
                        # `+position`: without it SQLite walks the position index over the whole
                        # collection instead of the predicate's index (a scan per predicate, even an empty one)
                        f"SELECT subject, {COLS} FROM events "
                        "WHERE collection_id = ? AND predicate = ? AND +position <= ? ORDER BY subject, position",
                        (self.cid, p, top),
                    )
                else:
                    sql, params = (
                        f"SELECT subject, {COLS} FROM events "
                        f"WHERE collection_id = ? AND predicate = ? AND subject IN ({marks(len(chunk))}) "
                        "AND position <= ? ORDER BY subject, position",
                        (self.cid, p, *chunk, top),
                    )
                streams.append(self._rows(conn.execute(sql, params)))
            rows = streams[0] if len(streams) == 1 else heapq.merge(*streams)
            batch = []
            for r in rows:
                batch.append(r[1:])
                if len(batch) >= FETCH:
                    yield from self._decode(batch, memo=False)
                    batch = []
            if batch:
                yield from self._decode(batch, memo=False)

    @staticmethod
    def _rows(cursor: sqlite3.Cursor) -> Iterator[tuple]:
        try:
            while True:
                rows = cursor.fetchmany(FETCH)
                if not rows:
                    return
                yield from rows
        finally:
            cursor.close()

    def all_events(self, after_position: int = 0) -> Iterator[Event]:
        top = self.position()  # the stream ends where the log stood when it was asked for
        cursor = self._conn().execute(
            f"SELECT {COLS} FROM events WHERE collection_id = ? AND position > ? AND position <= ? ORDER BY position",
            (self.cid, int(after_position), top),
        )
        return self._stream(cursor)

    def shared_values(self, exclude_predicates: Sequence[str] = ()) -> Iterator[tuple[str, str, list[str]]]:
        excluded = unique(exclude_predicates)
        skip = f"AND predicate NOT IN ({marks(len(excluded))}) " if excluded else ""
        conn = self._conn()
        # MIN < MAX finds the groups with two names or more in one pass of the covering
        # index, without the temporary b-trees COUNT/group_concat(DISTINCT) build for
        # every group; the names of the few groups found are then read by index.
        cursor = conn.execute(
            "SELECT subject, value_key FROM events "
            f"WHERE collection_id = ? AND retraction = 0 AND {NOT_RESERVED} {skip}"
            "GROUP BY subject, value_key HAVING MIN(predicate) < MAX(predicate) ORDER BY subject, value_key",
            (self.cid, *excluded),
        )
        names_sql = (
            "SELECT DISTINCT predicate FROM events WHERE collection_id = ? AND subject = ? AND value_key = ? "
            f"AND retraction = 0 {skip}"
        )
        for s, k in list(self._rows(cursor)):
            names = sorted(r[0] for r in conn.execute(names_sql, (self.cid, s, k, *excluded)))
            yield (s, k, names)

    # --- registry ------------------------------------------------------------

    def registry_events(self) -> list[Event]:
        return self.pair_events(REGISTRY_SUBJECT, [REGISTRY_PREDICATE], limit=MAX_REGISTRY_EVENTS)

    # --- browsing ------------------------------------------------------------

    def subjects(self, prefix: str = "", limit: int = 1000) -> list[tuple[str, int]]:
        """The ``limit`` subjects with the most events (ties by name); reserved subjects left out."""
        params: list[object] = [self.cid]
        where = ""
        if prefix:
            where = "AND subject >= ? AND subject < ? "
            params += [prefix, prefix + "\U0010ffff"]
        rows = (
            self._conn()
            .execute(
                f"SELECT subject, events FROM subject_counts WHERE collection_id = ? {where}AND {NOT_RESERVED} "
                "ORDER BY events DESC, subject LIMIT ?",
                (*params, max(0, int(limit))),
            )
            .fetchall()
        )
        return [(s, int(n)) for s, n in rows]

    def subject_counts(self) -> dict[str, int]:
        """Every subject's kept event count, reserved subjects included (verify compares it with the log)."""
        rows = self._conn().execute("SELECT subject, events FROM subject_counts WHERE collection_id = ?", (self.cid,))
        return {s: int(n) for s, n in rows}

    def pairs(self, subject: str) -> list[tuple[str, int]]:
        rows = (
            self._conn()
            .execute(
                "SELECT predicate, COUNT(*) FROM events WHERE collection_id = ? AND subject = ? "
                "GROUP BY predicate ORDER BY predicate",
                (self.cid, subject),
            )
            .fetchall()
        )
        return [(p, int(n)) for p, n in rows]

    def predicate_counts(self) -> dict[str, int]:
        rows = (
            self._conn()
            .execute(
                f"SELECT predicate, COUNT(*) FROM events WHERE collection_id = ? AND {NOT_RESERVED} "
                "GROUP BY predicate ORDER BY predicate",
                (self.cid,),
            )
            .fetchall()
        )
        return {p: int(n) for p, n in rows}

    def index_problems(self) -> list[str]:
        """Rows of the collection's search indexes that do not agree with its log, and events
        search should find that have no rows (``verify``).

        The FTS5 index and the vectors are derived from the events (docs/storage.md,
        "Search indexes"): SQLite allows no trigger on a virtual table, and a vector row
        may be replaced with INSERT OR REPLACE, so verify reads them against the log."""
        conn, cid = self._conn(), self.cid
        out = []
        (stray,) = conn.execute(
            f"SELECT count(*) FROM event_vectors_{cid} v LEFT JOIN events e "
            "ON e.position = v.position AND e.collection_id = ? "
            "WHERE e.position IS NULL OR e.observed_at != v.observed_at",
            (cid,),
        ).fetchone()
        if stray:
            out.append(f"{stray} row(s) of the vector index (event_vectors_{cid}) match no event of the log")
        (text,) = conn.execute(
            f"SELECT count(*) FROM event_text_{cid} t "
            "WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.position = t.rowid AND e.collection_id = ?)",
            (cid,),
        ).fetchone()
        if text:
            out.append(f"{text} row(s) of the text index (event_text_{cid}) match no event of the log")
        # every event search may find has both rows; the records it leaves out need none
        # (an earlier release indexed them too: such rows match their event, and stand)
        (unvectored, untexted) = conn.execute(
            f"SELECT coalesce(sum(NOT EXISTS (SELECT 1 FROM event_vectors_{cid} v WHERE v.position = e.position)), 0), "
            f"coalesce(sum(NOT EXISTS (SELECT 1 FROM event_text_{cid} t WHERE t.rowid = e.position)), 0) "
            f"FROM events e WHERE e.collection_id = ? AND {SEARCHED}",
            (cid,),
        ).fetchone()
        if unvectored:
            out.append(f"{unvectored} event(s) of the log have no row in the vector index (event_vectors_{cid})")
        if untexted:
            out.append(f"{untexted} event(s) of the log have no row in the text index (event_text_{cid})")
        return out
