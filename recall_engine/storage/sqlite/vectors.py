"""Exact vector search over a collection's vectors, held in memory in sparse form.

The lexical embedder gives each sentence a handful of non-zero dimensions out
of 256, so the vectors are kept column by column (for each dimension, the
events that have it and their weights). A query adds up, for each of its own
non-zero dimensions, that column's contribution: every event is scored, as a
brute-force dot product would, at a fraction of the memory and time. Dense
vectors work too (they are just slower).

Events only ever get added, so the index only grows: new rows land in a small
unsorted tail that is merged into the columns when it grows.

Stored form of one vector (a BLOB): its non-zero entries as 5-byte records
(dimension as one unsigned byte, value as float32 little-endian), or, when that
would be longer, all 256 float32 little-endian values (1024 bytes, which is not
a multiple of 5, so the two forms never mix up). A lexical vector has a few
non-zero entries, so it takes tens of bytes instead of a kilobyte.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from ... import embed

DIMENSIONS = embed.DIMENSIONS
DENSE_BYTES = DIMENSIONS * 4
_RECORD = np.dtype([("dim", "u1"), ("value", "<f4")])  # packed: 5 bytes
assert _RECORD.itemsize == 5 and DENSE_BYTES % 5 != 0


def encode_rows(matrix: np.ndarray) -> list[bytes]:
    """The stored form of each row of an (n, 256) float32 matrix."""
    matrix = np.asarray(matrix, dtype=np.float32)
    r, c = np.nonzero(matrix)
    records = np.empty(len(r), dtype=_RECORD)
    records["dim"] = c
    records["value"] = matrix[r, c]
    buf = records.tobytes()
    ends = np.cumsum(np.bincount(r, minlength=len(matrix))) * 5
    out = []
    start = 0
    for i, end in enumerate(ends.tolist()):
        if end - start < DENSE_BYTES:
            out.append(buf[start:end])
        else:
            out.append(matrix[i].astype("<f4").tobytes())
        start = end
    return out


_F32 = struct.Struct("<f")
_ENTRY = struct.Struct("<Bf")  # one 5-byte record, as _RECORD packs it
_SPARSE_MOST = (DENSE_BYTES - 1) // 5  # more non-zero entries than this: the dense form
_EMPTY = _ENTRY.pack(0, 1.0)  # a text without a token: the embedder's (1, 0, 0, ...)


def _f32(x: float) -> float:
    return _F32.unpack(_F32.pack(x))[0]


def encode_texts(texts: list[str]) -> list[bytes]:
    """``encode_rows(embed.embed_batch(texts))``, byte for byte, without the dense
    (n, 256) matrix: a lexical vector has a handful of non-zero dimensions, so an append
    pays a few microseconds an event instead of numpy's per-call and per-row costs.

    The same arithmetic: each dimension sums +-1.0 (exact), the norm is the float64 sum
    of squares rounded to float32 after its square root, and each value is a float32
    division (done in float64 and rounded once, which is exact for a quotient of two
    float32 values). A text with too many dimensions for the sparse form goes through
    numpy. tests/storage/test_sqlite.py checks the two agree."""
    out: list[bytes] = []
    dense: list[int] = []
    token_sums, tokens, pack = embed.token_sums, embed.tokens, _ENTRY.pack
    for n, text in enumerate(texts):
        sums = token_sums(tokens(text))
        dims = [i for i, v in sums.items() if v]
        if not dims:
            out.append(_EMPTY)
            continue
        if len(dims) > _SPARSE_MOST:
            dense.append(n)
            out.append(b"")
            continue
        dims.sort()
        norm = _f32(math.sqrt(sum([sums[i] * sums[i] for i in dims])))
        out.append(b"".join([pack(i, sums[i] / norm) for i in dims]))
    if dense:
        for n, blob in zip(dense, encode_rows(embed.embed_batch([texts[n] for n in dense])), strict=True):
            out[n] = blob
    return out


def decode_rows(blobs: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, dimension, value) of every non-zero entry of stored vectors."""
    lengths = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    dense = lengths == DENSE_BYTES
    bad = (lengths % 5 != 0) & ~dense
    if bad.any():
        raise ValueError(f"a stored vector has {int(lengths[bad][0])} bytes, which is no vector form")
    if not dense.any():
        records = np.frombuffer(b"".join(blobs), dtype=_RECORD)
        rows = np.repeat(np.arange(len(blobs)), lengths // 5)
        dims, values = records["dim"].astype(np.int16), records["value"].astype(np.float32)
    else:
        parts = []
        for i, b in enumerate(blobs):
            if len(b) == DENSE_BYTES:
                v = np.frombuffer(b, dtype="<f4")
                d = np.flatnonzero(v)
                parts.append((np.full(len(d), i), d.astype(np.int16), v[d].astype(np.float32)))
            else:
                rec = np.frombuffer(b, dtype=_RECORD)
                parts.append((np.full(len(rec), i), rec["dim"].astype(np.int16), rec["value"].astype(np.float32)))
        rows = np.concatenate([p[0] for p in parts])
        dims = np.concatenate([p[1] for p in parts])
        values = np.concatenate([p[2] for p in parts])
    if values.size and not np.isfinite(values).all():
        raise ValueError("a stored vector holds a value that is not a finite number")
    return rows, dims, values


class _Grow:
    """A growable 1-D numpy array."""

    def __init__(self, dtype: type) -> None:
        self.data: np.ndarray = np.zeros(1024, dtype=dtype)
        self.n = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.n + len(values)
        if need > len(self.data):
            bigger = np.zeros(max(need, 2 * len(self.data)), dtype=self.data.dtype)
            bigger[: self.n] = self.data[: self.n]
            self.data = bigger
        self.data[self.n : need] = values
        self.n = need

    @property
    def view(self) -> np.ndarray:
        return self.data[: self.n]


class SparseVectors:
    def __init__(self) -> None:
        self.upto = 0  # highest position loaded
        self.positions = _Grow(np.int64)  # row -> log position (ascending)
        self.observed = _Grow(np.int64)  # row -> observed_at
        # sorted part: entries grouped by dimension, rows ascending within a dimension
        self.col_ptr = np.zeros(DIMENSIONS + 1, dtype=np.int64)
        self.rows = np.zeros(0, dtype=np.int32)
        self.vals = np.zeros(0, dtype=np.float32)
        # tail: entries not merged yet
        self.t_rows = _Grow(np.int32)
        self.t_cols = _Grow(np.int16)
        self.t_vals = _Grow(np.float32)

    @property
    def n(self) -> int:
        return self.positions.n

    def add(self, positions: list[int], observed: list[int], blobs: list[bytes]) -> None:
        """Append rows (in position order) given their stored forms (see encode_rows)."""
        k = len(positions)
        if not k:
            return
        r, c, v = decode_rows(blobs)
        keep = v != 0
        self.t_rows.extend((r[keep] + self.n).astype(np.int32))
        self.t_cols.extend(c[keep])
        self.t_vals.extend(v[keep])
        self.positions.extend(np.asarray(positions, dtype=np.int64))
        self.observed.extend(np.asarray(observed, dtype=np.int64))
        self.upto = int(positions[-1])

    def settle(self) -> None:
        """Merge the tail into the columns once it is large enough to slow queries."""
        if self.t_rows.n > max(50_000, len(self.rows) // 8):
            self._merge()

    def _merge(self) -> None:
        cols = np.concatenate(
            [np.repeat(np.arange(DIMENSIONS, dtype=np.int16), np.diff(self.col_ptr)), self.t_cols.view]
        )
        rows = np.concatenate([self.rows, self.t_rows.view])
        vals = np.concatenate([self.vals, self.t_vals.view])
        # rows ascend within the sorted part and within the tail, and tail rows come later,
        # so a stable sort by dimension keeps rows ascending inside each dimension
        order = np.argsort(cols, kind="stable")
        self.rows, self.vals = rows[order], vals[order]
        self.col_ptr = np.zeros(DIMENSIONS + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=DIMENSIONS), out=self.col_ptr[1:])
        self.t_rows, self.t_cols, self.t_vals = _Grow(np.int32), _Grow(np.int16), _Grow(np.float32)

    def scores(self, q: np.ndarray) -> np.ndarray:
        """The dot product of ``q`` with every row."""
        out = np.zeros(self.n, dtype=np.float32)
        for j in np.flatnonzero(q):
            a, b = self.col_ptr[j], self.col_ptr[j + 1]
            if b > a:
                # each row appears at most once per dimension, so fancy-index addition is safe
                out[self.rows[a:b]] += q[j] * self.vals[a:b]
        if self.t_rows.n:
            np.add.at(out, self.t_rows.view, q[self.t_cols.view] * self.t_vals.view)
        return out

    def top(self, q: np.ndarray, k: int, since: int | None, until: int | None) -> list[tuple[int, float]]:
        """(position, score) of the ``k`` best rows, best first; ties go to the older position."""
        scores = self.scores(q)
        if since is not None or until is not None:
            mask = np.ones(self.n, dtype=bool)
            observed = self.observed.view
            if since is not None:
                mask &= observed >= since
            if until is not None:
                mask &= observed <= until
            rows = np.flatnonzero(mask)
        else:
            rows = np.arange(self.n)
        if rows.size == 0:
            return []
        s = scores[rows]
        if rows.size > k:
            kth = s[np.argpartition(-s, k - 1)[k - 1]]
            above = np.flatnonzero(s > kth)
            ties = np.flatnonzero(s == kth)[: k - above.size]  # ascending rows: oldest positions first
            pick = np.concatenate([above, ties])
        else:
            pick = np.arange(rows.size)
        chosen = rows[pick]
        order = np.lexsort((chosen, -scores[chosen]))  # score descending, then position ascending
        chosen = chosen[order]
        positions = self.positions.view
        return [(int(positions[r]), float(scores[r])) for r in chosen]
