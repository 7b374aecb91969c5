"""The PostgreSQL + pgvector backend: a store that several agents and operators share.

psycopg 3 is used directly (no ORM on the hot paths). The backend keeps a small
pool of autocommit connections, so it can be used from several threads (the
TUI's workers); each call borrows a connection, and a stream keeps one for as
long as it is being read. The schema (schema.py) is created on first use,
together with the pgvector extension, in one transaction.

Credentials never appear in a message: every URL is shown through
``display_url`` and every driver message is scrubbed of the password.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from urllib.parse import parse_qsl, unquote, urlsplit

import psycopg
from pgvector.psycopg.vector import register_vector_info
from psycopg import errors as pgerrors
from psycopg import sql
from psycopg.types import TypeInfo

from ... import clock
from ...errors import NotFound, ReadOnlyStore, StorageError
from ..base import Backend, check_collection
from ..common import DECODE_CACHE, READ_ONLY_MESSAGE, SCHEMA_VERSION, guards_broken, newer_schema, older_schema
from ..urls import display_url, hidden_port
from . import meanings
from .schema import (
    ADDED_TRIGGER_NAMES,
    ADDED_TRIGGERS,
    LOCK_CLASS,
    SCHEMA,
    SCHEMA_LOCK,
    SECONDARY_INDEXES,
    TRIGGER_NAMES,
)
from .store import PostgresStore, one_row

CONNECT_TIMEOUT_S = 10
MAX_IDLE = 4
VECTOR_INDEX = "events_vec_hnsw"


_USERINFO_PASSWORD = re.compile(r"://[^:/@?#]*:([^@/?#]*)@")
_QUERY_PASSWORD = re.compile(r"[?&](?:ssl)?password=([^&#]*)", re.IGNORECASE)


def _secrets(url: str) -> list[str]:
    """Every form in which the URL's passwords could show up in a driver message."""
    found = _USERINFO_PASSWORD.findall(url) + _QUERY_PASSWORD.findall(url)
    try:
        parts = urlsplit(url)
        found.append(parts.password or "")
        found.append(hidden_port(parts.netloc))
        found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if "password" in k.lower()]
    except ValueError:  # not parseable as a URL: the patterns above still apply
        pass
    found += [unquote(s) for s in found]
    return sorted({s for s in found if s}, key=len, reverse=True)


class _Pool:
    """Idle autocommit connections, borrowed one at a time."""

    def __init__(self, connect) -> None:
        self._connect = connect
        self._idle: list[psycopg.Connection] = []
        self._lock = threading.Lock()
        self.closed = False

    def get(self) -> psycopg.Connection:
        with self._lock:
            if self.closed:
                raise psycopg.InterfaceError("the pool is closed")
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def put(self, conn: psycopg.Connection) -> None:
        if conn.closed or conn.broken:
            # the server went away or restarted: the idle sessions are gone too
            with self._lock:
                idle, self._idle = self._idle, []
            for other in idle:
                other.close()
            return
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            try:
                conn.rollback()
            except psycopg.Error:
                conn.close()
                return
        with self._lock:
            if not self.closed and len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            with suppress(psycopg.Error):
                conn.close()


class PostgresBackend(Backend):
    """A PostgreSQL database (``postgresql://`` URL) holding recall collections.

    ``read_only`` sets ``default_transaction_read_only`` on every session and makes
    ``append`` refuse; a role that may not append (no INSERT on recall.events) is
    opened read-only on its own, and ``read_only_reason`` says why.
    """

    def __init__(self, url: str, read_only: bool = False, *, decode_cache: int = DECODE_CACHE) -> None:
        self.decode_cache = max(0, int(decode_cache))
        self.url_for_display = display_url(url)
        self._secrets = _secrets(url)
        self._raw_url = url
        self._conninfo = self._libpq_url(url)
        self.read_only = bool(read_only)
        self.read_only_reason = READ_ONLY_MESSAGE if read_only else ""
        self.role = ""
        self.database = ""
        self.vector_schema = ""
        self.vector_type = ""
        self.has_vector_index = False
        self.has_meanings = False  # the model's vectors and their HNSW index (meanings.py)
        self._vector_info: TypeInfo | None = None
        self._stores: dict[str, PostgresStore] = {}
        self._lock = threading.Lock()
        self._pool = _Pool(self._connect)
        self._local = threading.local()  # the connection of this thread's group(), if any
        try:
            with self.connection("opening the store") as conn:
                self.role, self.database = one_row(conn.execute("SELECT current_user, current_database()"))
                self._open_schema(conn)
                if not self.read_only:
                    self._check_guards(conn)
                self._check_privileges(conn)
                self._load_vector_type(conn)
            if not self.read_only:
                self.build_missing_indexes()
        except BaseException:
            self.close()
            raise

    # --- connections ---------------------------------------------------------

    @staticmethod
    def _libpq_url(url: str) -> str:
        text = url.strip()
        scheme, sep, rest = text.partition("://")
        if sep and scheme.lower() in ("postgresql+psycopg", "postgresql+psycopg2", "postgres"):
            text = "postgresql://" + rest
        return text

    def scrub(self, message: str) -> str:
        """A driver message with the URL shown safely and any password removed."""
        text = str(message)
        if self._raw_url.strip():
            text = text.replace(self._raw_url, self.url_for_display)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _connect(self) -> psycopg.Connection:
        # a timeout the URL names wins (psycopg drops keyword parameters that are None)
        timeout = None if "connect_timeout" in self._conninfo else CONNECT_TIMEOUT_S
        try:
            conn = psycopg.connect(
                self._conninfo, autocommit=True, application_name="recall-admin", connect_timeout=timeout
            )
        except psycopg.Error as e:
            raise StorageError(f"cannot connect to the store at {self.url_for_display}: {self.describe(e)}") from None
        except Exception as e:  # malformed URL text, bad option value...
            raise StorageError(f"cannot connect to the store at {self.url_for_display}: {self.describe(e)}") from None
        try:
            conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
            if self.read_only:
                conn.execute("SET default_transaction_read_only = on")
            if self._vector_info is not None:
                register_vector_info(conn, self._vector_info)
            if self.has_vector_index or self.has_meanings:
                self._tune_hnsw(conn)
        except psycopg.Error as e:
            conn.close()
            raise StorageError(f"cannot set up a session on {self.url_for_display}: {self.describe(e)}") from None
        return conn

    @contextmanager
    def connection(self, what: str) -> Iterator[psycopg.Connection]:
        """Borrow a connection; a database error becomes a StorageError saying ``what`` failed.
        Inside ``group()`` it is the group's connection, in the group's transaction."""
        pinned = getattr(self._local, "group", None)
        if pinned is not None:
            try:
                yield pinned
            except psycopg.Error as e:
                raise self.error(e, what) from None
            return
        try:
            conn = self._pool.get()
        except psycopg.InterfaceError:
            raise StorageError(f"the store at {self.url_for_display} is closed") from None
        try:
            yield conn
        except psycopg.Error as e:
            raise self.error(e, what) from None
        finally:
            self._pool.put(conn)

    @contextmanager
    def group(self, collections: Sequence[str] = ()) -> Iterator[None]:
        """Appends inside share one transaction on one connection; each append's own
        transaction becomes a savepoint of it (psycopg nests them). The append locks of
        the named collections (opened already) are taken first, in the order of their ids."""
        if getattr(self._local, "group", None) is not None:
            yield  # already in a group: it joins the outer one
            return
        what = "the grouped appends"
        with self._lock:
            cids = sorted({s.cid for c in collections if (s := self._stores.get(c)) is not None})
        try:
            conn = self._pool.get()
        except psycopg.InterfaceError:
            raise StorageError(f"the store at {self.url_for_display} is closed") from None
        try:
            with conn.transaction():
                for cid in cids:  # held to the commit, as each append's own lock (store.py)
                    conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, cid))
                self._local.group = conn
                yield
                if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
                    # a failed statement outside any append's savepoint: COMMIT would roll back
                    raise StorageError(f"{what} to {self.url_for_display} failed; nothing of them was written")
        except psycopg.Error as e:
            raise self.error(e, what) from None
        finally:
            self._local.group = None
            self._pool.put(conn)

    def describe(self, e: BaseException) -> str:
        """A driver or server message on one line (message, detail, hint), password-free."""
        diag = getattr(e, "diag", None)
        primary = getattr(diag, "message_primary", None)
        if diag is not None and primary:
            text = primary
            if diag.message_detail:
                text += f" ({diag.message_detail})"
            if diag.message_hint:
                text += f"; hint: {diag.message_hint}"
        else:
            text = " ".join(str(e).split())
        return self.scrub(text)

    def error(self, e: psycopg.Error, what: str) -> StorageError:
        msg = self.describe(e)
        if isinstance(e, pgerrors.ReadOnlySqlTransaction):
            return ReadOnlyStore(self.read_only_reason or READ_ONLY_MESSAGE)
        if isinstance(e, pgerrors.InsufficientPrivilege):
            return StorageError(
                f"{what} was refused by {self.url_for_display}: {msg} (role {self.role or '?'!s}); "
                "ask an administrator for the grants listed in docs/storage.md, section PostgreSQL"
            )
        if isinstance(e, psycopg.OperationalError):
            lost = f"{what} failed: the connection to {self.url_for_display} was lost or refused: {msg}"
            if what.startswith("the append"):
                lost += (
                    "; whether the append was written is unknown: read it back (appending the same "
                    "events again is safe, stored ids are skipped)"
                )
            return StorageError(lost)
        return StorageError(f"{what} failed on {self.url_for_display}: {msg}")

    # --- schema --------------------------------------------------------------

    def _version(self, conn: psycopg.Connection) -> int:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v')",
                (SCHEMA,),
            )
        }
        if "schema_meta" not in tables:
            if tables:
                raise StorageError(
                    f"the database {self.database!r} at {self.url_for_display} has a schema named {SCHEMA!r} "
                    f"that is not a recall store (tables {', '.join(sorted(tables)[:5])}, no schema_meta)"
                )
            return 0
        if not one_row(conn.execute("SELECT has_schema_privilege(%s, 'USAGE')", (SCHEMA,)))[0]:
            raise self._no_read_access()
        try:
            row = conn.execute("SELECT version FROM recall.schema_meta WHERE id = 1").fetchone()
        except pgerrors.InsufficientPrivilege:
            raise self._no_read_access() from None
        return int(row[0]) if row else 0

    def _no_read_access(self) -> StorageError:
        return StorageError(
            f"the role {self.role!r} may not read the recall store in database {self.database!r} "
            f"({self.url_for_display}); ask an administrator to run: GRANT USAGE ON SCHEMA recall TO "
            f"{self.role}; GRANT SELECT ON ALL TABLES IN SCHEMA recall TO {self.role}"
        )

    def _check_version(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise StorageError(newer_schema(self.url_for_display, version))

    def _open_schema(self, conn: psycopg.Connection) -> None:
        version = self._version(conn)
        self._check_version(version)
        if version == SCHEMA_VERSION:
            return
        if self.read_only:
            if version == 0:
                raise StorageError(
                    f"no recall store in database {self.database!r} at {self.url_for_display}; "
                    "there is nothing to open read-only (open it once with write access to create it)"
                )
            raise StorageError(older_schema(self.url_for_display, version))
        self._migrate(conn)

    def _migrate(self, conn: psycopg.Connection) -> None:
        # SQLAlchemy builds the schema (models.py): imported only to create or upgrade,
        # and before taking the schema lock, not while holding it
        from ..models import upgrade_statements

        stage = "extension"
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, SCHEMA_LOCK))
                version = self._version(conn)  # another process may have done it meanwhile
                self._check_version(version)
                if version == SCHEMA_VERSION:
                    return
                if self._extension_schema(conn) is None:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                stage = "tables"
                # the model's DDL names tables and the vector type unqualified: they land
                # in (and resolve through) recall, then the extension's schema
                extension = self._extension_schema(conn)
                assert extension is not None, "the extension exists: it was created above"
                vector_schema = sql.Identifier(extension).as_string(conn)
                if version == 0:
                    conn.execute("CREATE SCHEMA IF NOT EXISTS recall")
                conn.execute(f"SET LOCAL search_path TO recall, {vector_schema}")
                for statement in upgrade_statements(version, "postgresql", clock.now_ns()):
                    conn.execute(statement)
                conn.execute("UPDATE recall.schema_meta SET version = %s WHERE id = 1", (SCHEMA_VERSION,))
        except pgerrors.InsufficientPrivilege as e:
            detail = self.describe(e)
            if stage == "extension":
                raise StorageError(
                    f"the role cannot create the pgvector extension; ask an administrator to run "
                    f"CREATE EXTENSION vector in database {self.database!r} "
                    f"(connected as role {self.role!r} to {self.url_for_display}; the server said: {detail})"
                ) from None
            raise StorageError(
                f"the role cannot create the recall tables in database {self.database!r} "
                f"(connected as role {self.role!r} to {self.url_for_display}; the server said: {detail}); "
                f"ask an administrator to open the store once as the database owner, or to run "
                f"GRANT CREATE ON DATABASE {self.database} TO {self.role}"
            ) from None
        except (pgerrors.FeatureNotSupported, pgerrors.UndefinedFile) as e:
            if stage != "extension":
                raise
            raise StorageError(
                f"the PostgreSQL server at {self.url_for_display} does not have the pgvector extension "
                f"installed ({self.describe(e)}); install pgvector on the server, then open the "
                "store again"
            ) from None

    @staticmethod
    def _extension_schema(conn: psycopg.Connection) -> str | None:
        row = conn.execute(
            "SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n "
            "ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
        ).fetchone()
        return row[0] if row else None

    def _load_vector_type(self, conn: psycopg.Connection) -> None:
        schema = self._extension_schema(conn)
        if schema is None:
            raise StorageError(
                f"the pgvector extension was removed from database {self.database!r} at {self.url_for_display}; "
                "ask an administrator to run CREATE EXTENSION vector there"
            )
        self.vector_schema = sql.Identifier(schema).as_string(conn)
        self.vector_type = f"{self.vector_schema}.vector"
        # pgvector's psycopg adapter: numpy arrays travel as vectors. The type is looked
        # up once, by its qualified name (the extension's schema need not be on the
        # search path), and registered on each new session without a round trip.
        self._vector_info = TypeInfo.fetch(conn, self.vector_type)
        register_vector_info(conn, self._vector_info)
        self.has_vector_index = bool(
            conn.execute(
                "SELECT 1 FROM pg_catalog.pg_indexes WHERE schemaname = %s AND indexname = %s",
                (SCHEMA, VECTOR_INDEX),
            ).fetchone()
        )
        if self.read_only:
            self.has_meanings = bool(
                conn.execute(
                    "SELECT 1 FROM pg_catalog.pg_indexes WHERE schemaname = %s AND indexname = %s",
                    (SCHEMA, meanings.INDEX),
                ).fetchone()
            )
        else:
            self.has_meanings = meanings.ensure(conn, self.vector_schema)
        if self.has_vector_index or self.has_meanings:
            self._tune_hnsw(conn)

    def _check_guards(self, conn: psycopg.Connection) -> None:
        """Refuse to write to a store whose append-only triggers were dropped or disabled.

        A store from before ``ADDED_TRIGGERS`` gets them when its owner opens it; other
        roles open it as it is (docs/storage.md, "Roles, privileges, read-only")."""
        state: dict[str, str] = dict(
            conn.execute(
                "SELECT t.tgname, t.tgenabled FROM pg_catalog.pg_trigger t "
                "JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
                "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND NOT t.tgisinternal",
                (SCHEMA,),
            ).fetchall()
        )
        wrong = [name for name in TRIGGER_NAMES if state.get(name) not in ("O", "A")]  # O, A: enabled
        if not wrong:
            return
        if set(wrong) == set(ADDED_TRIGGER_NAMES) and not set(ADDED_TRIGGER_NAMES) & state.keys():
            (owner,) = one_row(
                conn.execute(
                    "SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_catalog.pg_class "
                    "WHERE oid = 'recall.events'::regclass"
                )
            )
            if owner:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, SCHEMA_LOCK))
                    if not conn.execute(
                        "SELECT 1 FROM pg_catalog.pg_trigger WHERE tgname = %s", (ADDED_TRIGGER_NAMES[0],)
                    ).fetchone():
                        for statement in ADDED_TRIGGERS:
                            conn.execute(statement.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1))
            return
        raise StorageError(guards_broken(self.url_for_display, wrong))

    def _check_privileges(self, conn: psycopg.Connection) -> None:
        row = one_row(
            conn.execute(
                "SELECT has_table_privilege(e.oid, 'SELECT'), has_table_privilege(e.oid, 'INSERT'), "
                "has_table_privilege(r.oid, 'INSERT'), has_table_privilege(c.oid, 'INSERT'), "
                "has_column_privilege(c.oid, 'events', 'UPDATE') "
                "FROM pg_catalog.pg_class e, pg_catalog.pg_class r, pg_catalog.pg_class c "
                "WHERE e.oid = 'recall.events'::regclass AND r.oid = 'recall.event_replaces'::regclass "
                "AND c.oid = 'recall.collections'::regclass"
            )
        )
        can_read, can_insert, can_link, _can_add_collection, can_count = row
        if not can_read:
            raise self._no_read_access()
        if self.read_only:
            return
        if not (can_insert and can_link and can_count):
            self.read_only = True
            missing = [
                name
                for name, ok in (
                    ("INSERT on recall.events", can_insert),
                    ("INSERT on recall.event_replaces", can_link),
                    ("UPDATE (events) on recall.collections", can_count),
                )
                if not ok
            ]
            self.read_only_reason = (
                f"the role {self.role!r} may not append to the store at {self.url_for_display} "
                f"(it lacks {', '.join(missing)}), so it is open read-only; writes are refused"
            )
            conn.execute("SET default_transaction_read_only = on")

    def build_missing_indexes(self) -> list[str]:
        """Build the secondary indexes a bulk import dropped (or that a crash left
        missing); return their names. A role that may not create them leaves them be:
        reads stay correct, only slower."""
        with self.connection("building indexes") as conn:
            present = {
                r[0]
                for r in conn.execute("SELECT indexname FROM pg_catalog.pg_indexes WHERE schemaname = %s", (SCHEMA,))
            }
            missing = [name for name in SECONDARY_INDEXES if name not in present]
            for name in missing:
                try:
                    conn.execute(SECONDARY_INDEXES[name])
                except pgerrors.InsufficientPrivilege:
                    return []
        return missing

    # --- the optional vector index ---------------------------------------------

    def _tune_hnsw(self, conn: psycopg.Connection) -> None:
        # a filtered search (one collection, a time span) keeps scanning the graph
        # until it has k rows, in exact distance order
        conn.execute("SET hnsw.iterative_scan = strict_order")
        conn.execute("SET hnsw.ef_search = 200")

    def build_vector_index(self, m: int = 16, ef_construction: int = 64) -> None:
        """Build the optional HNSW index on event vectors (slow: about 25 s per 100,000 events).

        Vector search is an exact scan without it. With it, search is approximate
        (recall@10 about 0.96 at ef_search = 200) and ties are no longer ordered by
        position. Build it after a bulk import, not before.
        """
        if self.read_only:
            raise ReadOnlyStore(self.read_only_reason or READ_ONLY_MESSAGE)
        with self.connection("building the vector index") as conn:
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON recall.events USING hnsw (vec {}.vector_cosine_ops) "
                    "WITH (m = {}, ef_construction = {})"
                ).format(
                    sql.Identifier(VECTOR_INDEX),
                    sql.SQL(self.vector_schema),
                    sql.Literal(int(m)),
                    sql.Literal(int(ef_construction)),
                )
            )
        self.has_vector_index = True
        # sessions opened before the index get the search settings when next borrowed
        with self._pool._lock:
            idle, self._pool._idle = self._pool._idle, []
        for conn in idle:
            conn.close()

    # --- the contract --------------------------------------------------------

    def store(self, collection: str, *, create: bool = True) -> PostgresStore:
        check_collection(collection)
        with self._lock:
            cached = self._stores.get(collection)
        if cached is not None:
            return cached
        where = f"opening collection {collection!r}"
        with self.connection(where) as conn:
            row = conn.execute("SELECT id FROM recall.collections WHERE name = %s", (collection,)).fetchone()
            if row is None:
                if not create or self.read_only:
                    names = [n for (n,) in conn.execute("SELECT name FROM recall.collections ORDER BY name")]
                    known = f"; collections: {', '.join(names)}" if names else "; it holds no collection yet"
                    raise NotFound(f"no collection {collection!r} in the store at {self.url_for_display}{known}")
                conn.execute(
                    "INSERT INTO recall.collections (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (collection,)
                )
                row = one_row(conn.execute("SELECT id FROM recall.collections WHERE name = %s", (collection,)))
        store = PostgresStore(self, collection, int(row[0]))
        with self._lock:
            return self._stores.setdefault(collection, store)

    def collections(self) -> list[tuple[str, int]]:
        with self.connection("listing collections") as conn:
            rows = conn.execute("SELECT name, events FROM recall.collections ORDER BY name").fetchall()
        return [(name, int(n)) for name, n in rows]

    def close(self) -> None:
        self._pool.close()
        with self._lock:
            self._stores.clear()

    def __repr__(self) -> str:
        return f"PostgresBackend({self.url_for_display!r}, read_only={self.read_only})"
