"""Search: text to candidate events, grouped by pair, each pair folded exactly.

A hit only says which pair a question is about; the fold says what the pair
holds, so a superseded value that ranks first answers with the current one
(docs/semantics.md §5; fusion: docs/formats.md, "Search").
"""

from __future__ import annotations

from .embed import embed
from .errors import InvalidInput
from .fold import attach_elsewhere, fold
from .memory import MAX_BELIEFS, Memory, order_beliefs
from .ranking import fuse_text_first, rank_pairs
from .records import Belief, Event
from .when import query_window


def search(memory: Memory, text: str, *, as_of: int | None = None, limit: int = 10) -> list[Belief]:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("search needs some text")
    if len(text.encode()) > 32 * 1024:
        raise InvalidInput("search text must be at most 32768 bytes")
    if limit < 1 or limit > MAX_BELIEFS:
        raise InvalidInput(f"limit must be between 1 and {MAX_BELIEFS}, got {limit}")
    at = memory.now() if as_of is None else as_of
    store = memory.store
    width = max(limit * 4, 20)
    window = query_window(text, at)
    query = window.remainder if window is not None and window.remainder.strip() else text
    vector = embed(query)
    first: list[Event] = []
    if window is not None:
        first = _hits(store, query, vector, limit, window.start, min(window.end, at))
    rest = _hits(store, query, vector, width, None, at)
    events = [*first, *rest]
    tl = memory.timeline()
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


def _hits(store, query: str, vector, k: int, since: int | None, until: int | None) -> list[Event]:
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
