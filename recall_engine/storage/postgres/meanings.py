"""The sentence model's vectors of events, kept in PostgreSQL (docs/storage.md, "Vectors").

``recall.event_meanings`` holds one all-MiniLM-L6-v2 vector (pgvector, 384
dimensions) per event that has been embedded, with an HNSW index for the model's
nearest-neighbour query. Embedding an event costs milliseconds, too much for every
write and far too much for a bulk import, so an event is embedded when a search
first ranks it (recall_engine/search.py) and kept here: each event is embedded at
most once for every process and agent sharing the store, and later questions
reach it through the index even when no keyword of theirs is in it.

The table and its index are not part of the versioned schema (models.py): they
only add, so ``init`` and every opening with write access create them when missing
(``ensure``), and a store without them (an older server role, a read-only opening)
searches exactly as before. SQLite keeps these vectors in the model's cache file and
ranks with numpy (recall_engine/sentence.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import psycopg
from psycopg import errors as pgerrors
from psycopg import sql

from ...errors import StorageError
from ...sentence import DIMENSIONS
from ..base import Hit
from .schema import LOCK_CLASS, SCHEMA, SCHEMA_LOCK

if TYPE_CHECKING:
    from ...records import Event

TABLE = "event_meanings"
INDEX = "event_meanings_hnsw"


def ensure(conn: psycopg.Connection, vector_schema: str) -> bool:
    """Create the table and its HNSW index when missing; whether the index exists after.
    A role that may not create them leaves them be: search works without them."""
    present = conn.execute(
        "SELECT 1 FROM pg_catalog.pg_indexes WHERE schemaname = %s AND indexname = %s", (SCHEMA, INDEX)
    ).fetchone()
    if present:
        return True
    try:
        with conn.transaction():
            # two processes opening a new store at once: IF NOT EXISTS alone races in the catalog
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, SCHEMA_LOCK))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS recall.{} ("
                    "position bigint PRIMARY KEY REFERENCES recall.events (position), "
                    "collection_id integer NOT NULL, observed_at bigint NOT NULL, vec {}.vector({}) NOT NULL)"
                ).format(sql.Identifier(TABLE), sql.SQL(vector_schema), sql.Literal(DIMENSIONS))
            )
            # an empty graph is built at once and grows with each row: no rebuild later
            conn.execute(
                sql.SQL("CREATE INDEX IF NOT EXISTS {} ON recall.{} USING hnsw (vec {}.vector_cosine_ops)").format(
                    sql.Identifier(INDEX), sql.Identifier(TABLE), sql.SQL(vector_schema)
                )
            )
    except (pgerrors.InsufficientPrivilege, pgerrors.ReadOnlySqlTransaction):
        return False
    return True


def nearest_query(vector_schema: str, window: str = "") -> str:
    """The nearest embedded events of one collection: the HNSW index orders the inner
    query (its LIMIT is what lets the planner walk the graph), the join reads the events.
    Parameters: the vector, the collection id, the window's bounds, k."""
    return (
        f"WITH near AS (SELECT position, vec OPERATOR({vector_schema}.<=>) %s AS distance "
        f"FROM recall.{TABLE} WHERE collection_id = %s{window} ORDER BY distance LIMIT %s) "
        "SELECT e.position, e.id, e.observed_at, e.body::text, e.recorded_at, near.distance "
        "FROM near JOIN recall.events e USING (position) ORDER BY near.distance"
    )


class MeaningsMixin:
    """Needs from the store: ``backend`` (with ``has_meanings``, ``vector_schema``,
    ``connection``, ``read_only``), ``cid``, ``_window`` and ``_decode``."""

    def meaning_search(
        self, vector: np.ndarray, k: int, since: int | None = None, until: int | None = None
    ) -> list[Hit]:
        """The ``k`` embedded events nearest a model vector (HNSW, approximate), best first;
        [] when the store keeps no model vectors."""
        backend = self.backend  # type: ignore[attr-defined]
        if not getattr(backend, "has_meanings", False) or k <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape != (DIMENSIONS,) or not np.all(np.isfinite(q)):
            return []
        window, params = self._window(since, until)  # type: ignore[attr-defined]
        with backend.connection("searching by meaning") as conn:
            rows = conn.execute(nearest_query(backend.vector_schema, window), (q, self.cid, *params, int(k))).fetchall()  # type: ignore[attr-defined]
        events = self._decode(r[:5] for r in rows)  # type: ignore[attr-defined]
        return [Hit(ev, 1.0 - float(r[5])) for ev, r in zip(events, rows, strict=True)]

    def keep_meanings(self, events: Sequence[Event], vectors: np.ndarray) -> None:
        """Keep the model vectors of events (rows of ``vectors``) for later searches.
        Best effort: a read-only store or a role without the right keeps nothing."""
        backend = self.backend  # type: ignore[attr-defined]
        if not getattr(backend, "has_meanings", False) or backend.read_only or not events:
            return
        try:
            with backend.connection("keeping model vectors") as conn, conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO recall.{TABLE} (position, collection_id, observed_at, vec) "
                    "SELECT position, collection_id, observed_at, %s FROM recall.events "
                    "WHERE collection_id = %s AND id = %s ON CONFLICT (position) DO NOTHING",
                    [(np.asarray(v, dtype=np.float32), self.cid, e.id) for e, v in zip(events, vectors, strict=True)],  # type: ignore[attr-defined]
                )
        except StorageError:  # a cache: failing to keep only costs a later embedding
            return
