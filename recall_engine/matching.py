"""The vocabulary rule (``vocabulary``) fed with the sentence model's vectors.

``vocabulary`` is pure: it says which texts a comparison reads and scores them
from vectors it is given. This module embeds those texts with
``recall_engine.sentence`` (loaded on first use, cached per process) and is
what every caller comparing names uses: automatic matching on write, ``vocab
suggest``, ``registry lint``, the console's vocabulary queue. Without the model
the same calls give the lexical rule (docs/review-queues.md, "How a match is
decided").
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from . import sentence
from .batch import collection_paused
from .registry import Definition
from .vocabulary import (
    DEFAULT_THRESHOLD,
    Candidates,
    Match,
    candidate_pairs,
    candidates_of,
    decided_by_words,
    definition_text,
    described,
    name_text,
    opposite_words,
    pick,
    residual_texts,
    same_words,
    same_words_of_pairs,
    score_bounds,
    similarity,
    texts_for,
    tight_bounds,
)
from .vocabulary import (
    pair_score as _pair_score,
)


def _vectors(texts: list[str]):
    return sentence.vectors(texts) if texts else {}


def pair_score(a: Definition, b: Definition) -> float:
    """How alike two definitions are, in [0, 1] (0 across storage classes)."""
    if a.storage_class != b.storage_class:
        return 0.0
    if decided_by_words(a.name, b.name):
        return _pair_score(a, b)
    return _pair_score(a, b, _vectors(texts_for(a.name, b.name, a.description, b.description)))


def _matrix(texts: tuple[str, ...]) -> np.ndarray | None:
    """The unit vectors of texts as one matrix; the last few are kept, for a registry
    does not change between two writes and stacking thousands of rows is not free."""
    if not sentence.available():  # (a matrix kept from before must not prune for the lexical rule)
        return None
    hit = _matrices.get(texts)
    if hit is None:
        hit = sentence.embed_texts(texts) if texts else np.zeros((0, sentence.DIMENSIONS), dtype=np.float32)
        if hit is None:
            return None
        _keep(texts, hit)
    return hit


def _one_blas_thread() -> AbstractContextManager[object]:
    """numpy's BLAS on one thread while the encoder's batches run on every core: its other
    threads wait for work spinning, and took about a second of CPU from a first ``vocab
    suggest`` (docs/review-queues.md, "Speed")."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        _blas = ThreadpoolController()
    return _blas.limit(limits=1, user_api="blas")


_blas: Any = None


def _keep(texts: tuple[str, ...], matrix: np.ndarray) -> None:
    if len(_matrices) >= 4:
        _matrices.pop(next(iter(_matrices)))
    _matrices[texts] = matrix


_matrices: dict[tuple[str, ...], np.ndarray] = {}


def _description_matrix(defs: list[Definition]) -> np.ndarray | None:
    """Each described definition's ``definition_text`` vector (zero rows for the others)."""
    rows = [i for i, d in enumerate(defs) if described(d.description)]
    if not rows:
        return None
    m = _matrix(tuple(definition_text(defs[i].name, defs[i].description) for i in rows))
    if m is None:
        return None
    out = np.zeros((len(defs), sentence.DIMENSIONS), dtype=np.float32)
    out[rows] = m
    return out


def best_match(
    name: str,
    storage_class: str,
    candidates: Mapping[str, Definition],
    *,
    description: str = "",
    cardinality: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> Match | None:
    """The existing predicate a new name most likely means, if it scores at or above the threshold.

    With the model, one product of the name's vector with the candidates' matrix
    leaves out every candidate that cannot reach the threshold (``score_bounds``):
    a write that defines a name costs a handful of full comparisons, not one per
    registered name."""
    if threshold < 0:
        return None
    names = candidates_of(name, storage_class, candidates, cardinality)
    if not names:
        return None
    defs = [candidates[c] for c in names]
    matrix = _matrix(tuple(name_text(c) for c in names))
    mine = sentence.embed_texts([name_text(name), definition_text(name, description)])
    if matrix is not None and mine is not None:
        dcos = None
        if described(description):
            dm = _description_matrix(defs)
            if dm is not None:
                dcos = dm @ mine[1]
                dcos[[not described(d.description) for d in defs]] = np.nan
        cos = matrix @ mine[0]
        near = np.flatnonzero(score_bounds(cos, dcos) >= threshold)  # loose: every pair mixed
        tight = tight_bounds(
            [name] * len(near), [names[i] for i in near], cos[near], None if dcos is None else dcos[near]
        )
        keep = {names[i] for i, b in zip(near.tolist(), tight.tolist(), strict=True) if b >= threshold}
        names = [c for c in names if c in keep or same_words(name, c)]
    texts = [
        t
        for c in names
        if not decided_by_words(name, c)
        for t in texts_for(name, c, description, candidates[c].description)
    ]
    vectors = _vectors(texts)
    return pick(name, [(similarity(name, description, candidates[c], vectors), c) for c in names], threshold)


def near_duplicates(
    defs: Mapping[str, Definition], threshold: float = DEFAULT_THRESHOLD, *, skip: Collection[tuple[str, str]] = ()
) -> list[tuple[str, str, float]]:
    """Every pair (a < b) of one storage class scoring at or above ``threshold``, by name.

    With the model, only pairs that can reach the threshold are scored in full
    (``vocabulary.candidate_pairs``), so thousands of names cost a few matrix
    products, not millions of comparisons. Of those, the rule runs only on pairs
    whose bound from all their cosines (what each name keeps of its own included)
    still reaches the threshold, or whose words are the same: the bound is the
    score but for the guards, the penalty for an added word and the description
    veto, which only lower it, so no answer changes.

    Python's cycle collector is paused meanwhile: the candidates, their texts and the
    encoder's batches are thousands of live objects it would only walk again and again:
    about a fifth of a first ``vocab suggest``'s CPU outside the encoder (docs/review-queues.md,
    "Speed")."""
    with collection_paused():
        return _near_duplicates(defs, threshold, skip)


def _near_duplicates(
    defs: Mapping[str, Definition], threshold: float, skip: Collection[tuple[str, str]]
) -> list[tuple[str, str, float]]:
    names = sorted(defs)
    items = [defs[n] for n in names]
    with sentence.deferred_writes() as written:  # kept on disk while the rule scores
        found = _candidates(names, items, threshold, skip) if sentence.available() else None
        if found is None:
            pairs = [
                (i, j)
                for i, j in itertools.combinations(range(len(names)), 2)
                if items[i].storage_class == items[j].storage_class
            ]
            vectors = None
        else:
            pairs, vectors = _worth_scoring(names, items, *found, threshold)
    out = []
    for i, j in pairs:
        a, b = names[i], names[j]
        if (a, b) in skip:
            continue
        s = _pair_score(items[i], items[j], vectors)
        if s >= threshold:
            out.append((a, b, s))
    written()
    return out


def _candidates(
    names: list[str], items: list[Definition], threshold: float, skip: Collection[tuple[str, str]]
) -> tuple[dict[tuple[int, int], tuple[str, str] | None], np.ndarray, np.ndarray | None] | None:
    """The candidate pairs (``vocabulary.candidate_pairs``) worth bounding (``_worth``), the
    names' matrix and the described names' rows (``_description_matrix``); None without
    the model.

    Names not embedded before are taken as each of the encoder's batches is done
    (``sentence.embed_as_done``), against those already taken, while the next
    batches run: a first ``vocab suggest`` keeps both cores busy with the encoder,
    and its own work fills the gaps (docs/review-queues.md, "Speed")."""
    described_rows = _description_matrix(items)
    texts = tuple(name_text(n) for n in names)
    matrix = _matrices.get(texts)
    if matrix is not None:
        return (
            _worth(names, candidate_pairs(items, matrix, threshold, described_rows), skip, threshold),
            matrix,
            described_rows,
        )
    parts = sentence.embed_as_done(texts)
    if parts is None:
        return None
    matrix = np.zeros((len(names), sentence.DIMENSIONS), dtype=np.float32)
    found = Candidates(items, threshold, described_rows)
    worth = _worth(names, found.same_words(), skip, threshold)
    with _one_blas_thread():
        for positions, vecs in parts:
            matrix[positions] = vecs
            worth.update(_worth(names, found.take(matrix, positions), skip, threshold))
    _keep(texts, matrix)
    return worth, matrix, described_rows


def _worth(
    names: list[str], pairs: Iterable[tuple[int, int]], skip: Collection[tuple[str, str]], threshold: float
) -> dict[tuple[int, int], tuple[str, str] | None]:
    """The pairs not skipped whose score needs vectors (the antonym guard's 0 needs none), each
    with what its names keep of their own (``residual_texts``)."""
    out = {}
    for i, j in pairs:
        a, b = names[i], names[j]
        if (a, b) in skip or (threshold > 0 and opposite_words(a) != opposite_words(b)):
            continue
        out[(i, j)] = residual_texts(a, b)
    return out


def _worth_scoring(
    names: list[str],
    items: list[Definition],
    worth: dict[tuple[int, int], tuple[str, str] | None],
    matrix: np.ndarray,
    described_rows: np.ndarray | None,
    threshold: float,
) -> tuple[list[tuple[int, int]], dict[str, np.ndarray] | None]:
    """The candidate pairs the rule may still put at or above the threshold, and the vectors
    of every text they read (``texts_for``; what a mixed pair's names keep embedded here)."""
    pairs = sorted(worth)
    if not pairs:
        return [], None
    rests = [worth[p] for p in pairs]
    named = sorted({i for p in pairs for i in p})
    texts = [name_text(names[i]) for i in named] + [t for r in rests if r for t in r]
    if described_rows is not None:  # (their vectors are the rows of ``described_rows``, cached)
        texts += [definition_text(names[i], items[i].description) for i in named if described(items[i].description)]
    distinct = list(dict.fromkeys(texts))
    embedded = sentence.embed_texts(distinct)
    if embedded is None:  # (the model gave ``matrix``; without it every pair takes the lexical rule)
        return pairs, None
    vectors = dict(zip(distinct, embedded, strict=True))
    first = np.array([i for i, _ in pairs], dtype=np.int64)
    second = np.array([j for _, j in pairs], dtype=np.int64)
    name_cos = np.einsum("ij,ij->i", matrix[first], matrix[second])
    row = {t: k for k, t in enumerate(distinct)}
    mixed = np.array([r is not None for r in rests], dtype=bool)
    left = np.array([row[r[0]] if r else 0 for r in rests], dtype=np.int64)
    right = np.array([row[r[1]] if r else 0 for r in rests], dtype=np.int64)
    residual_cos = np.einsum("ij,ij->i", embedded[left], embedded[right])
    bound = score_bounds(name_cos, None, mixed, residual_cos)
    if described_rows is not None:
        has = np.array([described(d.description) for d in items], dtype=bool)
        dcos = np.einsum("ij,ij->i", described_rows[first], described_rows[second])
        dcos[~(has[first] & has[second])] = np.nan
        # a name score of exactly 1 is not averaged with its description's: the larger of the two
        bound = np.maximum(bound, score_bounds(name_cos, dcos, mixed, residual_cos))
    keep = (bound >= threshold) | same_words_of_pairs(names, first, second)
    return [p for p, k in zip(pairs, keep.tolist(), strict=True) if k], vectors
