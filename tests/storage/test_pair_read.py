"""``Store.pair_read``: what a pair's first read asks of the store, in one statement on
PostgreSQL, the answers of the reads it stands for on every backend and through every
wrapper (recall_engine/storage/base.py; docs/benchmarks.md, "Ninth round, PostgreSQL first
reads")."""

from __future__ import annotations

import pytest

from recall_engine.batch import PendingStore
from recall_engine.errors import IncompleteHistory
from recall_engine.instants import NS, parse_instant
from recall_engine.records import Replace, make_event
from recall_engine.storage.base import MAX_PAIR_EVENTS
from recall_engine.storage.known import KnownAt
from recall_engine.storage.postgres import store as pg_store
from recall_engine.storage.wrapped import WrappedStore

T0 = parse_instant("2026-03-01T09:00:00Z")
HOUR = 3600 * NS


def ev(subject, predicate, value, hours, **kw):
    return make_event(subject, predicate, value, T0 + hours * HOUR, **kw)


EVENTS = [
    ev("ann", "likes", "tea", 0),
    ev("ann", "likes", "rum", 1),
    ev("ann", "dislikes", "rum", 2),  # the same value under another name
    ev("ann", "likes", "tea", 3, retraction=True),
    ev("ann", "likes", None, 4, retraction=True),  # a value key no assertion holds
    ev("ann", "uses_editor", "zed", 5, replaces=[Replace("likes", "rum")]),
    ev("ann", "goal", "rum", 6),
    ev("bob", "likes", "rum", 7),  # another subject: never
    ev("bob", "dislikes", "tea", 8, replaces=[Replace("likes", "tea")]),
]


def same_as_its_reads(store, subject, predicates, replaced, limit=MAX_PAIR_EVENTS):
    got = store.pair_read(subject, predicates, replaced, limit)
    assert got.events == store.pair_events(subject, predicates, limit)
    assert got.replacing == store.replacing_events(subject, replaced)
    assert set(got.value_names) <= {e.key for e in got.events}
    for key, names in got.value_names.items():
        assert names == store.value_predicates(subject, [key]), key
    return got


def test_a_pair_read_answers_as_the_reads_it_stands_for(store):
    store.append(EVENTS)
    got = same_as_its_reads(store, "ann", ["likes"], ["likes"])
    assert [e.value for e in got.events] == ["tea", "rum", "tea", None]
    assert [e.predicate for e in got.replacing] == ["uses_editor"]
    same_as_its_reads(store, "ann", ["likes", "dislikes"], ["likes"])
    same_as_its_reads(store, "ann", ["goal"], ["goal", "likes"])
    same_as_its_reads(store, "bob", ["likes"], ["likes"])
    nothing = same_as_its_reads(store, "cy", ["likes"], ["likes"])
    assert nothing.events == nothing.replacing == [] and nothing.value_names == {}
    if store.backend.url_for_display.startswith("postgresql"):
        # read with the pair, every key of it (a key only retracted has no names)
        assert got.value_names == {
            EVENTS[0].key: {"likes"},  # asserted, then retracted: the index keeps the name
            EVENTS[1].key: {"likes", "dislikes", "goal"},
            EVENTS[4].key: set(),
        }


def test_a_pair_read_past_its_limit_is_refused_as_the_pair_read_is(store):
    store.append(EVENTS)
    assert len(store.pair_read("ann", ["likes"], ["likes"], limit=4).events) == 4
    with pytest.raises(IncompleteHistory) as alone:
        store.pair_events("ann", ["likes"], limit=3)
    with pytest.raises(IncompleteHistory) as read:
        store.pair_read("ann", ["likes"], ["likes"], limit=3)
    assert read.value.message == alone.value.message


def test_replacing_events_past_the_cap_are_refused_as_they_are(store, monkeypatch):
    store.append(EVENTS + [ev("ann", "goal", f"g{i}", 10 + i, replaces=[Replace("likes", "tea")]) for i in range(3)])
    monkeypatch.setattr(pg_store, "MAX_PAIR_EVENTS", 2)  # the cap both reads of PostgreSQL check
    if store.backend.url_for_display.startswith("postgresql"):
        with pytest.raises(IncompleteHistory) as alone:
            store.replacing_events("ann", ["likes"])
        with pytest.raises(IncompleteHistory) as read:
            store.pair_read("ann", ["likes"], ["likes"])
        assert read.value.message == alone.value.message
    else:
        same_as_its_reads(store, "ann", ["likes"], ["likes"])


def test_the_latest_values_of_a_pair_have_their_names_read_with_it(store):
    # a bounded number of them: the latest, those a read's ``elsewhere`` asks about
    store.append([ev("ann", "likes", f"v{i}", i) for i in range(pg_store.PAIR_READ_VALUES + 5)])
    got = same_as_its_reads(store, "ann", ["likes"], ["likes"])
    if store.backend.url_for_display.startswith("postgresql"):
        assert set(got.value_names) == {e.key for e in got.events[-pg_store.PAIR_READ_VALUES :]}


def test_a_wrapper_reads_the_pair_of_the_store_it_wraps(store):
    store.append(EVENTS)
    wrapped = WrappedStore(store)
    assert wrapped.pair_read("ann", ["likes"], ["likes"]) == store.pair_read("ann", ["likes"], ["likes"])


def test_a_view_known_at_an_instant_reads_what_was_recorded_by_then(store):
    store.append(EVENTS[:2])
    then = store.pair_events("ann", ["likes"])[-1].recorded_at
    store.append(EVENTS[2:])
    view = KnownAt(store, then)
    got = same_as_its_reads(view, "ann", ["likes"], ["likes"])
    assert [e.value for e in got.events] == ["tea", "rum"] and got.replacing == []
    if store.backend.url_for_display.startswith("postgresql"):
        # today's names, as value_predicates gives them, of the values known then
        assert got.value_names == {EVENTS[0].key: {"likes"}, EVENTS[1].key: {"likes", "dislikes", "goal"}}


def test_a_batch_reads_its_pending_events_with_the_stored_ones(store):
    store.append(EVENTS)
    pending = PendingStore(store)
    pending.expect(["ann", "cy"])
    untouched = same_as_its_reads(pending, "ann", ["likes"], ["likes"])
    assert untouched == store.pair_read("ann", ["likes"], ["likes"])  # nothing of ann pending: the store's read
    pending.append([ev("ann", "likes", "gin", 20), ev("ann", "goal", "gin", 21, replaces=[Replace("likes", "rum")])])
    pending.append([ev("cy", "likes", "tea", 22)])
    got = same_as_its_reads(pending, "ann", ["likes"], ["likes"])
    assert [e.value for e in got.events] == ["tea", "rum", "tea", None, "gin"]
    assert [e.predicate for e in got.replacing] == ["uses_editor", "goal"]
    assert [e.value for e in same_as_its_reads(pending, "cy", ["likes"], ["likes"]).events] == ["tea"]
