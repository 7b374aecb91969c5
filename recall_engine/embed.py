"""The lexical embedder ``recall-lexical-v1-256`` (docs/formats.md, "Search"), and event sentences.

Signed feature hashing of lower-cased letter/number tokens with FNV-1a 64, so
vectors written by the Go engine and by this one are the same.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from .records import REGISTRY_SUBJECT, Event
from .text import simple_lower
from .values import format_number

SPACE = "recall-lexical-v1-256"
DIMENSIONS = 256

# Letters (L*) and numbers (N*): everything else separates tokens.
_TOKEN = re.compile(r"[^\W_]+")
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(simple_lower(text))


@lru_cache(maxsize=200_000)
def _slot(token: str) -> tuple[int, float]:
    h = _FNV_OFFSET
    for byte in token.encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h % DIMENSIONS, (-1.0 if h >> 63 else 1.0)


_SLOTS: dict[str, tuple[int, float]] = {}  # _slot's answers, read without a call (the stores' hot path)


def token_sums(words: list[str]) -> dict[int, float]:
    """Each dimension a token reaches, with the sum of its tokens' signs: ``embed``'s
    vector before it is normalised, in the sparse form the stores pack it from (a sum is
    0.0 where signs cancel). Exact: sums of +-1.0."""
    slots = _SLOTS
    if len(slots) > 200_000:
        slots.clear()
    sums: dict[int, float] = {}
    for t in words:
        hit = slots.get(t)
        if hit is None:
            hit = slots[t] = _slot(t)
        sums[hit[0]] = sums.get(hit[0], 0.0) + hit[1]
    return sums


def embed(text: str) -> np.ndarray:
    v = np.zeros(DIMENSIONS, dtype=np.float32)
    for t in tokens(text):
        i, s = _slot(t)
        v[i] += np.float32(s)
    norm = float(np.sum(v.astype(np.float64) ** 2))
    if norm == 0:
        v[0] = 1.0
        return v
    return v / np.float32(np.sqrt(norm))


def embed_batch(texts: list[str]) -> np.ndarray:
    """Embed many texts at once: (n, 256) float32, each row as ``embed`` gives it."""
    n = len(texts)
    out = np.zeros((n, DIMENSIONS), dtype=np.float32)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for r, text in enumerate(texts):
        for t in tokens(text):
            i, s = _slot(t)
            rows.append(r)
            cols.append(i)
            vals.append(s)
    if rows:
        np.add.at(out, (np.array(rows), np.array(cols)), np.array(vals, dtype=np.float32))
    norms = np.einsum("ij,ij->i", out.astype(np.float64), out.astype(np.float64))
    empty = norms == 0
    out[empty, 0] = 1.0
    norms[empty] = 1.0
    out /= np.sqrt(norms).astype(np.float32)[:, None]
    return out


def _go_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        f = float(v)
        # Go's %v of a float64: shortest form, exponent from 1e21 up or below 1e-4
        if f != 0 and (abs(f) >= 1e21 or abs(f) < 1e-4):
            m, e = repr(f).split("e") if "e" in repr(f) else (repr(f), "0")
            ex = int(e)
            return f"{m.rstrip('0').rstrip('.') if '.' in m else m}e{'+' if ex >= 0 else '-'}{abs(ex):02d}"
        return format_number(f)
    return str(v)


def event_text(e: Event) -> str:
    """The sentence an event is embedded as (docs/formats.md, "The event's sentence")."""
    if e.subject == REGISTRY_SUBJECT:
        return REGISTRY_SUBJECT
    words = e.predicate.replace("_", " ")
    if e.retraction and e.value is None:
        return f"{e.subject} no longer has any {words}"
    stem = f"{e.subject} {words} {_go_value(e.value)}"
    return "not: " + stem if e.retraction else stem


def search_text(e: Event) -> str:
    """What keyword search indexes: the sentence, then the evidence."""
    t = event_text(e)
    return f"{t}\n{e.evidence}" if e.evidence else t
