"""The SQLite backend: one file, WAL mode, FTS5 for keywords, numpy for vectors.

The stdlib ``sqlite3`` module is used directly (no ORM on the hot path). Each
thread gets its own connection to the file; several processes may write one
file: writes take the write lock up front (``BEGIN IMMEDIATE``) and wait for
it up to ``BUSY_TIMEOUT_MS``. The layout is described in schema.py and
docs/storage.md.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from urllib.parse import quote

from ... import clock
from ...errors import NotFound, StorageError
from ..base import Backend, check_collection
from ..common import DECODE_CACHE, READ_ONLY_MESSAGE, SCHEMA_VERSION, guards_broken, newer_schema, older_schema
from .checkpoint import LOG_PAGES, Checkpointer
from .schema import SECONDARY_INDEXES, add_guards, check_guards, collection_tables
from .store import SQLiteStore

BUSY_TIMEOUT_MS = 10_000


def sqlite_display(path: str) -> str:
    return f"sqlite:///{path}"


def _not_a_file(path: str) -> str:
    """What ``path`` is when it is neither a regular file nor a folder ("" otherwise)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""  # SQLite's own open says what is wrong
    for test, kind in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return ""


class SQLiteBackend(Backend):
    """A store file. ``read_only`` opens it with ``mode=ro``; a file this process may
    not write is opened read-only on its own (``read_only_reason`` says why)."""

    def __init__(
        self, path: str | os.PathLike[str], read_only: bool = False, *, decode_cache: int = DECODE_CACHE
    ) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.decode_cache = max(0, int(decode_cache))
        self.url_for_display = sqlite_display(self.path)
        self.read_only = bool(read_only)
        self.read_only_reason = READ_ONLY_MESSAGE if read_only else ""
        self._lock = threading.Lock()
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._stores: dict[str, SQLiteStore] = {}
        self._closed = False
        self.checkpointer = Checkpointer(self.conn, os.path.basename(self.path))
        folder = os.path.dirname(self.path)
        exists = os.path.exists(self.path)
        if exists and os.path.isdir(self.path):
            raise StorageError(f"cannot open the store at {self.url_for_display}: it is a folder, not a file")
        if exists and (kind := _not_a_file(self.path)):
            # /dev/zero, /dev/null, a FIFO: SQLite would read it as an empty or endless file
            raise StorageError(
                f"cannot open the store at {self.url_for_display}: it is {kind}, not a store file "
                "(a store is a regular file)"
            )
        if exists and self._empty():
            raise StorageError(
                f"cannot open the store at {self.url_for_display}: the file is empty (0 bytes), not a recall "
                "store; it was truncated or made by something else. Restore it, or remove it to start a new store"
            )
        if not self.read_only:
            if exists and not (os.access(self.path, os.W_OK) and os.access(folder, os.W_OK)):
                self.read_only = True
                self.read_only_reason = (
                    f"the store at {self.url_for_display} is not writable by this process (permission denied), "
                    "so it is open read-only; writes are refused"
                )
            elif not exists:
                if not os.path.isdir(folder):
                    raise StorageError(
                        f"cannot create the store at {self.url_for_display}: the folder {folder} does not exist"
                    )
                if not os.access(folder, os.W_OK):
                    raise StorageError(
                        f"cannot create the store at {self.url_for_display}: the folder {folder} "
                        "is not writable (permission denied)"
                    )
        elif not exists:
            raise StorageError(f"no store at {self.url_for_display}; there is nothing to open read-only")
        self._open_schema()

    def _empty(self) -> bool:
        """An empty file, which SQLite would take as a new database. A store is never empty
        on disk, except for the instant between its creator's connect and its first pragma
        (then it has 4 KiB and a -wal beside it): that instant is waited out, briefly."""
        for _ in range(10):
            if os.path.getsize(self.path) > 0 or os.path.exists(self.path + "-wal"):
                return False
            time.sleep(0.05)
        return True

    # --- connections ---------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            if self.read_only:
                uri = f"file:{quote(self.path)}?mode=ro"
                conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            else:
                conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA cache_size = -65536")
            conn.execute("PRAGMA mmap_size = 268435456")
            conn.execute("PRAGMA journal_size_limit = 67108864")  # the log shrinks back to 64 MiB
            if self.read_only:
                conn.execute("PRAGMA query_only = ON")
            else:  # checkpoints run on a helper thread; the writer's own only bounds the log
                conn.execute(f"PRAGMA wal_autocheckpoint = {LOG_PAGES}")
        except sqlite3.Error as e:
            raise StorageError(f"cannot open the store at {self.url_for_display}: {e}") from None
        return conn

    @contextlib.contextmanager
    def group(self, collections: Sequence[str] = ()) -> Iterator[None]:
        """Appends inside share one transaction; each is a savepoint of it (store.py, _write).
        The file has one write lock, taken at the start, whatever the collections."""
        if self.grouped():
            yield  # already in a group: it joins the outer one
            return
        conn = self.conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise StorageError(
                f"cannot write to the store at {self.url_for_display}: {e}; nothing was written"
            ) from None
        self._local.group = True
        try:
            yield
            conn.execute("COMMIT")
            self.checkpointer.committed()
        except BaseException as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(e, sqlite3.Error):
                raise StorageError(
                    f"the grouped appends to the store at {self.url_for_display} were refused: {e}; "
                    "nothing of them was written"
                ) from None
            raise
        finally:
            self._local.group = False

    def grouped(self) -> bool:
        """Whether this thread is inside ``group()``."""
        return bool(getattr(self._local, "group", False))

    def conn(self) -> sqlite3.Connection:
        """This thread's connection."""
        c = getattr(self._local, "conn", None)
        if c is None:
            if self._closed:
                raise StorageError(f"the store at {self.url_for_display} is closed")
            c = self._connect()
            with self._lock:
                self._connections.append(c)
            self._local.conn = c
        return c

    def _open_schema(self) -> None:
        conn = self.conn()
        try:
            if self.read_only:
                version = self._version(conn)
                self._check_version(version)
                if version < SCHEMA_VERSION:
                    raise StorageError(older_schema(self.url_for_display, version))
                return
            conn.execute("PRAGMA journal_mode = WAL")
            if self._intact(conn):
                return  # nothing to write: no write lock, so opening never waits for a writer
            if self._version(conn) < SCHEMA_VERSION:
                # SQLAlchemy builds the schema (models.py): imported only to create or
                # upgrade, and before taking the write lock, not while holding it
                from ..models import upgrade_statements
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = self._version(conn)
                self._check_version(version)
                if version < SCHEMA_VERSION:
                    for statement in upgrade_statements(version, "sqlite", clock.now_ns()):
                        conn.execute(statement)
                    conn.execute("UPDATE schema_meta SET version = ? WHERE id = 1", (SCHEMA_VERSION,))
                present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
                for name, sql in SECONDARY_INDEXES.items():
                    if name not in present:  # a bulk import that did not finish
                        conn.execute(sql)
                self._guard(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            self.close()
            raise StorageError(f"cannot open the store at {self.url_for_display}: {e}") from None
        except BaseException:
            self.close()
            raise

    def _guard(self, conn: sqlite3.Connection) -> bool:
        """Refuse a store whose append-only guards were dropped or altered (docs/storage.md,
        "Append-only in the database"); True when they are all there."""
        wrong, only_added = check_guards(conn, [r[0] for r in conn.execute("SELECT id FROM collections")])
        if wrong and not only_added:
            raise StorageError(guards_broken(self.url_for_display, wrong))
        if only_added and conn.in_transaction:
            add_guards(conn)
        return not wrong

    def _intact(self, conn: sqlite3.Connection) -> bool:
        """The schema is current, its indexes and guards in place: opening writes nothing."""
        version = self._version(conn)
        self._check_version(version)
        if version < SCHEMA_VERSION:
            return False
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        return all(name in present for name in SECONDARY_INDEXES) and self._guard(conn)

    def _version(self, conn: sqlite3.Connection) -> int:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_meta" not in names:
            if names - {"sqlite_sequence"}:
                raise StorageError(
                    f"the file at {self.url_for_display} is an SQLite database but not a recall store "
                    f"(it has tables {', '.join(sorted(names)[:5])} and no schema_meta)"
                )
            return 0
        row = conn.execute("SELECT version FROM schema_meta WHERE id = 1").fetchone()
        if row is None or (int(row[0]) == 0 and "events" in names):
            # the version row is written with the tables, in one transaction
            raise StorageError(
                f"the store at {self.url_for_display} has lost its schema version (the row of schema_meta): "
                "it was changed outside recall-admin, so it cannot be opened or upgraded safely; "
                "restore it from a copy you trust"
            )
        return int(row[0])

    def _check_version(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise StorageError(newer_schema(self.url_for_display, version))

    # --- the contract --------------------------------------------------------

    def store(self, collection: str, *, create: bool = True) -> SQLiteStore:
        check_collection(collection)
        with self._lock:
            cached = self._stores.get(collection)
        if cached is not None:
            return cached
        conn = self.conn()
        row = conn.execute("SELECT id FROM collections WHERE name = ?", (collection,)).fetchone()
        if row is None:
            if not create or self.read_only:
                names = [n for n, _ in self.collections()]
                known = f"; collections: {', '.join(names)}" if names else "; it holds no collection yet"
                raise NotFound(f"no collection {collection!r} in the store at {self.url_for_display}{known}")
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(  # another process may have created it since the read above
                    "INSERT INTO collections (name) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM collections WHERE name = ?)",
                    (collection, collection),
                )
                (cid,) = conn.execute("SELECT id FROM collections WHERE name = ?", (collection,)).fetchone()
                for statement in collection_tables(cid):
                    conn.execute(statement)
                conn.execute("COMMIT")
            except sqlite3.Error as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StorageError(
                    f"cannot create collection {collection!r} in the store at {self.url_for_display}: {e}"
                ) from None
            row = conn.execute("SELECT id FROM collections WHERE name = ?", (collection,)).fetchone()
        store = SQLiteStore(self, collection, int(row[0]))
        with self._lock:
            return self._stores.setdefault(collection, store)

    def collections(self) -> list[tuple[str, int]]:
        rows = self.conn().execute("SELECT name, events FROM collections ORDER BY name").fetchall()
        return [(name, int(n)) for name, n in rows]

    def close(self) -> None:
        with self._lock:
            mine = getattr(self._local, "conn", None)
            conn = mine or (self._connections[0] if self._connections else None)
        if not self.read_only:  # what this backend committed since the helper's last checkpoint
            self.checkpointer.close(conn)
        with self._lock:
            self._closed = True
            conns, self._connections = self._connections, []
            self._stores.clear()
        for c in conns:
            with contextlib.suppress(sqlite3.Error):
                c.close()
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"SQLiteBackend({self.url_for_display!r}, read_only={self.read_only})"
