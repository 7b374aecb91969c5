"""Keyword and vector search of one SQLite collection (mixed into SQLiteStore).

numpy and the embedder are imported where they are used, so that opening a store
and reading pairs stays quick to start.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import InvalidInput, StorageError
from ...records import Event
from ..base import Hit
from ..common import strip_diacritics, unique
from .sql import COLS, chunks, marks

if TYPE_CHECKING:
    import numpy as np

    from .vectors import SparseVectors

# A ranked keyword query scores every event holding one of its words (BM25 needs each
# word's frequency over the whole collection). Words are ranked rarest first while the
# events they match stay under this budget; see keyword_search.
KEYWORD_BUDGET = 20_000


def _match_expression(words: Sequence[str]) -> str:
    """Words as an FTS5 query that can only mean "any of these words": each one is quoted."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


class SearchHost(Protocol):
    """What search needs from the collection it is mixed into (store.py)."""

    cid: int
    collection: str
    _vectors: SparseVectors | None
    _vector_lock: threading.Lock
    _doc_freq: dict[str, int]  # word -> how many events hold it
    _doc_freq_at: int  # the collection's size when the frequencies were read

    def count(self) -> int: ...

    def _conn(self) -> sqlite3.Connection: ...

    def _decode(self, rows: Iterable[tuple[Any, ...]], memo: bool = True) -> list[Event]: ...


class SearchMixin:
    """Keyword and vector search, mixed into a collection that is a ``SearchHost``."""

    def keyword_search(
        self: SearchHost, text: str, k: int, since: int | None = None, until: int | None = None
    ) -> list[Hit]:
        """BM25 over the words of ``text`` (each quoted, so nothing in it is query syntax).

        Words found in more than half of the collection's events are left out of the
        ranking (BM25 gives them no weight), and so are the most common of the rest once
        the events to score pass KEYWORD_BUDGET. When the ranked words find fewer than
        ``k`` events, events holding any of the words fill the list, newest first, with
        score 0. ``since``/``until`` bound observed_at, both inclusive."""
        from ...embed import tokens

        words = unique(tokens(text or ""))
        if not words or k <= 0:
            return []
        conn = self._conn()
        n = self.count()
        freq = _frequencies(self, conn, words, n)
        useful = sorted((w for w in words if freq[w] * 2 <= n), key=lambda w: freq[w])
        ranked: list[str] = []
        total = 0
        for w in useful:
            if total + freq[w] > KEYWORD_BUDGET:
                break
            ranked.append(w)
            total += freq[w]
        found: list[tuple[int, float]] = []
        if ranked:
            found = _fts(conn, self.cid, ranked, k, since, until, ranked=True)
        if len(found) < k:
            seen = {p for p, _ in found}
            more = _fts(conn, self.cid, words, k + len(found), since, until, ranked=False)
            found += [(p, 0.0) for p, _ in more if p not in seen][: k - len(found)]
        return _hits(self, conn, found)

    def vector_search(
        self: SearchHost, vector: np.ndarray, k: int, since: int | None = None, until: int | None = None
    ) -> list[Hit]:
        """Exact cosine ranking of every event of the collection (see vectors.py);
        ties go to the older event; ``since``/``until`` bound observed_at, both inclusive."""
        import numpy as np

        from .vectors import DIMENSIONS

        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape != (DIMENSIONS,):
            raise InvalidInput(f"a search vector has {DIMENSIONS} dimensions, got {q.size}")
        if k <= 0:
            return []
        norm = float(np.sqrt(np.dot(q.astype(np.float64), q.astype(np.float64))))
        if norm > 0:
            q = q / np.float32(norm)
        vs = _load_vectors(self)
        if vs.n == 0:
            return []
        found = vs.top(q, int(k), None if since is None else int(since), None if until is None else int(until))
        return _hits(self, self._conn(), found)


def _frequencies(store: SearchHost, conn: sqlite3.Connection, words: list[str], n: int) -> dict[str, int]:
    """How many events hold each word (remembered until the collection grows by a quarter)."""
    with store._vector_lock:
        if n > store._doc_freq_at * 5 // 4 + 100 or n < store._doc_freq_at or not store._doc_freq:
            store._doc_freq = {}
            store._doc_freq_at = n
        cache = store._doc_freq
        # the vocabulary table holds words as the tokenizer stored them (diacritics removed)
        missing = unique(strip_diacritics(w) for w in words if strip_diacritics(w) not in cache)
    for chunk in chunks(missing):
        got = dict(
            conn.execute(
                f"SELECT term, doc FROM event_vocab_{store.cid} WHERE term IN ({marks(len(chunk))})", chunk
            ).fetchall()
        )
        with store._vector_lock:
            for w in chunk:
                cache[w] = int(got.get(w, 0))
    return {w: cache.get(strip_diacritics(w), 0) for w in words}


def _fts(
    conn: sqlite3.Connection,
    cid: int,
    words: list[str],
    k: int,
    since: int | None,
    until: int | None,
    *,
    ranked: bool,
) -> list[tuple[int, float]]:
    table = f"event_text_{cid}"
    join, window, params = "", "", []
    if since is not None or until is not None:
        join = f" JOIN events e ON e.position = {table}.rowid"
        if since is not None:
            window += " AND e.observed_at >= ?"
            params.append(int(since))
        if until is not None:
            window += " AND e.observed_at <= ?"
            params.append(int(until))
    order = f"{table}.rank, {table}.rowid" if ranked else f"{table}.rowid DESC"
    rank = f"{table}.rank" if ranked else "0"
    rows = conn.execute(
        f"SELECT {table}.rowid, {rank} FROM {table}{join} WHERE {table} MATCH ?{window} ORDER BY {order} LIMIT ?",
        (_match_expression(words), *params, int(k)),
    ).fetchall()
    return [(int(p), -float(r) if r else 0.0) for p, r in rows]


def _hits(store: SearchHost, conn: sqlite3.Connection, found: list[tuple[int, float]]) -> list[Hit]:
    if not found:
        return []
    by_pos: dict[int, tuple[Any, ...]] = {}
    positions = [p for p, _ in found]
    for chunk in chunks(positions):
        for row in conn.execute(f"SELECT {COLS} FROM events WHERE position IN ({marks(len(chunk))})", chunk):
            by_pos[row[0]] = row
    events = store._decode(by_pos[p] for p in positions)
    return [Hit(ev, score) for ev, (_, score) in zip(events, found, strict=False)]


def _load_vectors(store: SearchHost) -> SparseVectors:
    """The collection's vectors, read on first use and topped up with what was appended since."""
    from .vectors import SparseVectors

    with store._vector_lock:
        if store._vectors is None:
            store._vectors = SparseVectors()
        vs = store._vectors
        cursor = store._conn().execute(
            f"SELECT position, observed_at, vector FROM event_vectors_{store.cid} WHERE position > ? ORDER BY position",
            (vs.upto,),
        )
        try:
            while True:
                rows = cursor.fetchmany(20_000)
                if not rows:
                    break
                pos, obs, blobs = zip(*rows, strict=False)
                try:
                    vs.add(list(pos), list(obs), list(blobs))
                except ValueError as e:
                    raise StorageError(
                        f"the vectors of collection {store.collection!r} are corrupt ({e}); search is refused"
                    ) from None
        finally:
            cursor.close()
        vs.settle()
        return vs
