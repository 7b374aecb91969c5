"""WrappedStore forwards the whole Store contract (recall_engine/storage/wrapped.py)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np

from recall_engine.embed import embed
from recall_engine.instants import parse_instant
from recall_engine.records import Event, make_event
from recall_engine.storage.base import Store
from recall_engine.storage.wrapped import WrappedStore

T0 = parse_instant("2026-03-01T09:00:00Z")


def test_every_public_member_of_the_contract_is_forwarded():
    # a member added to Store and not here would run the base's code over the wrapper
    contract = {n for n, _ in inspect.getmembers(Store) if not n.startswith("_")} - {"collection"}
    assert contract
    assert contract - set(vars(WrappedStore)) == set()


class Counting(WrappedStore):
    """Changes one method, as AttributedStore does."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.appended = 0

    def append(self, events: Sequence[Event]) -> int:
        self.appended += len(events)
        return self.inner.append(events)


def test_a_wrapper_reads_what_the_wrapped_store_holds(store):
    wrapped = Counting(store)
    events = [
        make_event("user", "prefers_editor", "vim", T0),
        make_event("user", "prefers_editor", "helix", T0 + 1),
        make_event("user", "lives_in", "Berlin", T0 + 2),
    ]
    assert wrapped.append(events) == store.position() == 3
    assert wrapped.appended == 3
    assert wrapped.collection == store.collection
    assert wrapped.read_only is store.read_only is False
    assert wrapped.count() == 3
    assert [t.subject for t in wrapped.touched_since(1)] == ["user", "user"]
    assert [e.value for e in wrapped.pair_events("user", ["prefers_editor"])] == ["vim", "helix"]
    assert len(wrapped.subject_events("user")) == 3
    assert [e.value for e in wrapped.events_by_id([events[2].id])] == ["Berlin"]
    assert wrapped.replacing_events("user", ["prefers_editor"]) == []
    assert wrapped.value_predicates("user", [events[2].key]) == {"lives_in"}
    assert len(list(wrapped.predicate_events(["lives_in"]))) == 1
    assert len(list(wrapped.all_events(after_position=1))) == 2
    assert list(wrapped.shared_values()) == []
    assert wrapped.registry_events() == []
    assert wrapped.subjects() == store.subjects()
    assert wrapped.pairs("user") == store.pairs("user")
    assert wrapped.predicate_counts() == {"prefers_editor": 2, "lives_in": 1}
    assert [h.event.value for h in wrapped.keyword_search("Berlin", 5)] == ["Berlin"]
    vector = np.asarray(embed("lives in Berlin"), dtype=np.float32)
    assert [h.event.id for h in wrapped.vector_search(vector, 1)] == [
        h.event.id for h in store.vector_search(vector, 1)
    ]
    # what the contract does not name is the wrapped store's own
    assert wrapped.backend is store.backend
