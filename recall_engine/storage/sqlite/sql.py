"""SQL text helpers of the SQLite store modules (placeholders, chunked IN lists)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

CHUNK = 500  # parameters per IN list
COLS = "position, id, observed_at, body, recorded_at"  # what a decoded read selects


def marks(n: int) -> str:
    return ",".join("?" * n)


def chunks(items: Sequence, size: int = CHUNK) -> Iterator[Sequence]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
