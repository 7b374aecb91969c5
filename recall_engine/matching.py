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
from collections.abc import Collection, Mapping

from . import sentence
from .registry import Definition
from .vocabulary import (
    DEFAULT_THRESHOLD,
    Match,
    candidate_pairs,
    candidates_of,
    name_text,
    pick,
    similarity,
    texts_for,
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
    return _pair_score(a, b, _vectors(texts_for(a.name, b.name, a.description, b.description)))


def best_match(
    name: str,
    storage_class: str,
    candidates: Mapping[str, Definition],
    *,
    description: str = "",
    cardinality: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> Match | None:
    """The existing predicate a new name most likely means, if it scores at or above the threshold."""
    if threshold < 0:
        return None
    names = candidates_of(name, storage_class, candidates, cardinality)
    if not names:
        return None
    texts = [t for c in names for t in texts_for(name, c, description, candidates[c].description)]
    vectors = _vectors(texts)
    return pick(name, [(similarity(name, description, candidates[c], vectors), c) for c in names], threshold)


def near_duplicates(
    defs: Mapping[str, Definition], threshold: float = DEFAULT_THRESHOLD, *, skip: Collection[tuple[str, str]] = ()
) -> list[tuple[str, str, float]]:
    """Every pair (a < b) of one storage class scoring at or above ``threshold``, by name.

    With the model, only pairs whose name vectors are close enough to reach the
    threshold are scored in full (``vocabulary.candidate_pairs``), so thousands
    of names cost one matrix product, not millions of comparisons."""
    names = sorted(defs)
    items = [defs[n] for n in names]
    matrix = sentence.embed_texts([name_text(n) for n in names]) if names else None
    if matrix is None:
        pairs = [
            (i, j)
            for i, j in itertools.combinations(range(len(names)), 2)
            if items[i].storage_class == items[j].storage_class
        ]
        vectors = None
    else:
        pairs = candidate_pairs(items, matrix, threshold)
        vectors = _vectors(
            [t for i, j in pairs for t in texts_for(names[i], names[j], items[i].description, items[j].description)]
        )
    out = []
    for i, j in pairs:
        a, b = names[i], names[j]
        if (a, b) in skip:
            continue
        s = _pair_score(items[i], items[j], vectors)
        if s >= threshold:
            out.append((a, b, s))
    return out
