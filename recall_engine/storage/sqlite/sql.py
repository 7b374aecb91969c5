"""Small helpers the SQLite store modules share."""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence

CHUNK = 500  # parameters per IN list
COLS = "position, id, observed_at, body"  # what a decoded read selects


def marks(n: int) -> str:
    return ",".join("?" * n)


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def chunks(items: Sequence, size: int = CHUNK) -> Iterator[Sequence]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
