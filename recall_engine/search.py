"""Search: text to candidate events, grouped by pair, each pair folded exactly.

A hit only says which pair a question is about; the fold says what the pair
holds, so a superseded value that ranks first answers with the current one
(docs/semantics.md §5; fusion: docs/formats.md, "Search").

Candidates come from the keyword index and the stored (lexical) vectors, as in
the reference. With the sentence model (``recall_engine.sentence``) the
question is also read for meaning: the predicates whose names and descriptions
are nearest the question bring in their events for the subjects the candidates
name ("where does alice work" reaches ``works_at``), every candidate is ranked by
the model, and that ranking is fused with the lexical one (reciprocal rank).
Without the model the lexical ranking is the answer, as before.
"""

from __future__ import annotations

import numpy as np

from . import sentence
from .embed import embed, event_text
from .errors import InvalidInput
from .fold import attach_elsewhere, fold
from .instants import STORED_INSTANTS
from .memory import MAX_BELIEFS, Memory, order_beliefs
from .ranking import fuse_rrf, fuse_text_first, rank_pairs
from .records import Belief, Event
from .text import NOTE
from .timeline import Timeline
from .vocabulary import definition_text
from .when import query_window

ROUTED_PREDICATES = 3  # predicates nearest the question whose events join the candidates
ROUTED_SUBJECTS = 5  # ... for the first subjects the lexical candidates name
ROUTED_EVENTS = 50  # each is embedded once (then cached): a first search stays short
ROUTE_FLOOR = 0.3  # a predicate this far from the question is not about it


def search(
    memory: Memory, text: str, *, as_of: int | None = None, limit: int = 10, known_at: int | None = None
) -> list[Belief]:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("search needs some text")
    if len(text.encode()) > 32 * 1024:
        raise InvalidInput("search text must be at most 32768 bytes")
    if limit < 1 or limit > MAX_BELIEFS:
        raise InvalidInput(f"limit must be between 1 and {MAX_BELIEFS}, got {limit}")
    if known_at is not None:  # what a search at known_at found (docs/history-diff-explain.md)
        memory, as_of = memory.known(known_at), known_at if as_of is None else as_of
    at = memory.now() if as_of is None else as_of
    store = memory.store
    width = max(limit * 4, 20)
    window = query_window(text, at)
    query = window.remainder if window is not None and window.remainder.strip() else text
    vector = embed(query)
    tl = memory.timeline()
    meaning = sentence.embed_texts([query])
    qv = None if meaning is None else meaning[0]
    first: list[Event] = []
    if window is not None:
        first = _hits(store, tl, query, vector, qv, limit, window.start, min(window.end, at))
    rest = _hits(store, tl, query, vector, qv, width, None, at)
    events = [*first, *rest]
    ranked = rank_pairs(events, tl.canonical)
    out: list[tuple[int, Belief]] = []
    for pr in ranked:
        beliefs = fold(memory.pair_input(pr.subject, pr.predicate, tl), pr.subject, pr.predicate, tl, at)
        if not beliefs:
            continue
        if tl.multi_at(pr.predicate, at):
            # a question about one value of a multi-valued pair does not bring back the others
            for b in beliefs:
                r = pr.value_ranks.get(b.key)
                if r is not None:
                    out.append((r, b))
        else:
            out.extend((pr.rank, b) for b in beliefs)
    out.sort(key=lambda t: t[0])
    page = [b for _, b in out[:limit]]
    return order_beliefs(attach_elsewhere(page))


def _hits(store, tl: Timeline, query: str, vector, qv, k: int, since: int | None, until: int | None) -> list[Event]:
    # an instant past the stored range (--as-of 9999-12-31, a valid day) bounds nothing more
    # than the range's end does, and a store's 64-bit column cannot take it
    low, high = STORED_INSTANTS[0], STORED_INSTANTS[-1]
    since = None if since is None else min(max(since, low), high)
    until = None if until is None else min(max(until, low), high)
    if qv is not None:
        return _model_hits(store, tl, query, vector, qv, k, since, until)
    lexical = store.keyword_search(query, k, since, until)
    if len(lexical) >= k:
        # With the lexical embedder the keyword ranking leads and vector hits only fill
        # what it leaves (docs/formats.md, "Search"): a full keyword page is the fused page.
        return [h.event for h in lexical[:k]]
    # a vector "hit" that shares no token with the question carries nothing: leave it out
    vec = [h for h in store.vector_search(vector, k, since, until) if h.score > 1e-6]
    by_id = {h.event.id: h.event for h in [*lexical, *vec]}
    ids = fuse_text_first([h.event.id for h in lexical], [h.event.id for h in vec], k)
    return [by_id[i] for i in ids]


def _lexical_ranking(store, query: str, vector, k: int, since: int | None, until: int | None) -> list[Event]:
    lexical = store.keyword_search(query, k, since, until)
    vec = [h for h in store.vector_search(vector, k, since, until) if h.score > 1e-6]
    by_id = {h.event.id: h.event for h in [*lexical, *vec]}
    return [by_id[i] for i in fuse_text_first([h.event.id for h in lexical], [h.event.id for h in vec], k)]


def _routed(
    store, tl: Timeline, qv: np.ndarray, subjects: list[str], since: int | None, until: int | None
) -> list[Event]:
    """Events of the predicates nearest the question in meaning, for these subjects."""
    defs = {n: d for n, d in tl.predicates().items() if n != NOTE}
    if not defs or not subjects:
        return []
    names = sorted(defs)
    m = sentence.embed_texts([definition_text(n, defs[n].description) for n in names])
    if m is None:
        return []
    sims = m @ qv
    near = [names[i] for i in np.argsort(-sims)[:ROUTED_PREDICATES] if sims[i] >= ROUTE_FLOOR]
    stored = [s for n in near for s in tl.stored_names(n)]
    out: list[Event] = []
    if not stored:
        return out
    for e in store.predicate_events(stored, subjects):
        if (since is not None and e.observed_at < since) or (until is not None and e.observed_at > until):
            continue
        out.append(e)
        if len(out) >= ROUTED_EVENTS:
            break
    return out


def _model_hits(
    store, tl: Timeline, query: str, vector, qv: np.ndarray, k: int, since: int | None, until: int | None
) -> list[Event]:
    """The lexical ranking fused with the model's ranking of every candidate (reciprocal rank).

    A store that keeps the model's vectors (PostgreSQL: storage/postgres/meanings.py)
    adds its nearest embedded events to the candidates, and keeps the vectors of the
    candidates it did not hold yet."""
    lexical = _lexical_ranking(store, query, vector, k, since, until)
    subjects = list(dict.fromkeys(e.subject for e in lexical))[:ROUTED_SUBJECTS]
    nearest = getattr(store, "meaning_search", None)
    kept = [h.event for h in nearest(qv, k, since, until)] if nearest is not None else []
    pool = {e.id: e for e in [*lexical, *_routed(store, tl, qv, subjects, since, until), *kept]}
    events = list(pool.values())
    m = sentence.embed_texts([event_text(e) for e in events])
    if m is None or not events:
        return lexical
    keep = getattr(store, "keep_meanings", None)
    if keep is not None:
        held = {e.id for e in kept}
        new = [i for i, e in enumerate(events) if e.id not in held]
        if new:
            keep([events[i] for i in new], m[new])
    order = np.argsort(-(m @ qv), kind="stable")
    ids = fuse_rrf([events[i].id for i in order[:k]], [e.id for e in lexical], k)
    return [pool[i] for i in ids]
