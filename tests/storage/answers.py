"""What a store answers through the ``Store`` contract, as plain JSON: used to check
that a store written by an earlier release answers the same once upgraded.

Only the public contract is read (every listing, stream, watermark and search), so
the recorded answers stay valid whatever the storage layout becomes.
"""

from __future__ import annotations

import numpy as np

from recall_engine.storage.base import Backend, Store

# Words and fixed query vectors for the searches (not derived from the embedder, so
# a change of embedder does not change what is asked)
WORDS = ["editor", "berlin", "coffee", "vim", "team", "café", "customer refund"]
_RNG = np.random.default_rng(7)
VECTORS = [_RNG.standard_normal(256).astype(np.float32) for _ in range(3)]


def _event(e) -> dict:
    return {"id": e.id, "observed_at": e.observed_at, "json": e.to_json()}


def _hits(hits) -> list:
    return [[h.event.id, round(h.score, 4)] for h in hits]


def store_answers(store: Store) -> dict:
    events = list(store.all_events())
    subjects = store.subjects(limit=10_000)
    out: dict = {
        "position": store.position(),
        "count": store.count(),
        "all_events": [_event(e) for e in events],
        "touched_since_0": [[t.position, t.subject, t.predicate, t.value_key] for t in store.touched_since(0)],
        "subjects": [list(s) for s in subjects],
        "predicate_counts": store.predicate_counts(),
        "registry_events": [e.id for e in store.registry_events()],
        "shared_values": [list(v) for v in store.shared_values()],
        "pairs": {},
        "keyword_search": {w: _hits(store.keyword_search(w, 5)) for w in WORDS},
        "vector_search": [_hits(store.vector_search(v, 5)) for v in VECTORS],
    }
    every_subject = sorted({e.subject for e in events})
    for s in every_subject:
        pairs = store.pairs(s)
        out["pairs"][s] = {
            "pairs": [list(p) for p in pairs],
            "subject_events": [e.id for e in store.subject_events(s)],
            "pair_events": {p: [e.id for e in store.pair_events(s, [p])] for p, _ in pairs},
            "replacing": {p: [e.id for e in store.replacing_events(s, [p])] for p, _ in pairs},
            "predicate_events": [e.id for e in store.predicate_events([p for p, _ in pairs], [s])],
        }
    ids = [e.id for e in events]
    out["events_by_id"] = [e.id for e in store.events_by_id(list(reversed(ids)))]
    return out


def backend_answers(backend: Backend) -> dict:
    return {
        "collections": [list(c) for c in backend.collections()],
        "stores": {name: store_answers(backend.store(name, create=False)) for name, _ in backend.collections()},
    }
