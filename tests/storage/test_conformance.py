"""The storage contract, on every backend (tests/conftest.py parametrizes ``backend_url``).

Written only against ``Store`` and ``Backend``: what a backend must do, not how.
Backend-specific checks (raw SQL against the database itself) live next to each
backend's own tests.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from recall_engine.embed import embed, event_text
from recall_engine.errors import (
    IncompleteHistory,
    InvalidEvent,
    InvalidInput,
    NotFound,
    ReadOnlyStore,
    StorageError,
)
from recall_engine.instants import NS, parse_instant
from recall_engine.records import (
    REGISTRY_PREDICATE,
    REGISTRY_SUBJECT,
    REVIEW_PREDICATE,
    REVIEW_SUBJECT,
    Replace,
    make_event,
)
from recall_engine.storage import open_backend
from recall_engine.storage.base import Hit, Touch
from recall_engine.values import value_key

T0 = parse_instant("2026-03-01T09:00:00Z")
HOUR = 3600 * NS
READ_ONLY = "the store is open read-only; writes are refused (open it without --read-only to write)"


def ev(subject, predicate, value, hours=0, **kw):
    return make_event(subject, predicate, value, T0 + int(hours * HOUR), **kw)


def ids(events):
    return [e.id for e in events]


# --- writes, positions, counts -------------------------------------------------


def test_empty_store_has_position_zero_and_no_events(store):
    assert store.position() == 0
    assert store.count() == 0
    assert list(store.all_events()) == []
    assert store.pair_events("user", ["prefers_editor"]) == []


def test_append_returns_the_new_position_and_positions_only_grow(store):
    a = [ev("user", "prefers_editor", "vim"), ev("user", "lives_in", "Berlin", 1)]
    p1 = store.append(a)
    assert p1 == store.position() and p1 > 0
    assert store.count() == 2
    p2 = store.append([ev("user", "prefers_editor", "zed", 2)])
    assert p2 > p1 and store.position() == p2
    assert store.count() == 3
    touches = store.touched_since(0)
    positions = [t.position for t in touches]
    assert positions == sorted(positions) and len(set(positions)) == 3 and positions[-1] == p2


def test_appended_events_read_back_equal(store):
    e = ev(
        "user",
        "prefers_editor",
        "Zed",
        1,
        kind="preference",
        confidence=0.75,
        source="agent_inferred",
        evidence="I switched to Zed last week",
        evidence_id="m-000000000000000000000001",
        replaces=[Replace("prefers_editor", "vim"), Replace("uses_editor", "vim")],
        caused_by="m-x",
    )
    n = ev("user", "height_cm", 181.5, 2)
    b = ev("user", "vegetarian", True, 3)
    r = ev("user", "prefers_editor", None, 4, retraction=True)
    store.append([e, n, b, r])
    assert store.events_by_id([e.id, n.id, b.id, r.id]) == [e, n, b, r]
    assert store.pair_events("user", ["prefers_editor"]) == [e, r]


def test_appended_tells_what_a_read_of_the_log_would(store, backend):
    store.append([ev("ann", "likes", "tea")])
    backend.store("other").append([ev("bob", "likes", "jazz")])  # positions are shared across collections
    before = store.position()
    stored = ev("ann", "likes", "tea")  # already stored: skipped
    fresh = [ev("ann", "likes", "rum", 1), ev("ann", "did", "swim", 2, replaces=[Replace("likes", "rum")])]
    done = store.appended([stored, *fresh])
    after = store.events_after(before, 10)
    assert done is not None  # both backends say what they wrote (a store that cannot returns None)
    assert done.before == before
    assert [(p, e.id, e.recorded_at) for p, e in done.placed] == [(p, e.id, e.recorded_at) for p, e in after]
    assert [e for _, e in done.placed] == fresh
    again = store.appended([stored])
    assert again is not None and (again.before, again.placed) == (store.position(), [])


def test_an_empty_append_writes_nothing(store):
    assert store.append([]) == 0
    assert store.count() == 0


def test_duplicate_ids_are_skipped(store):
    e1, e2 = ev("user", "prefers_editor", "vim"), ev("user", "prefers_editor", "zed", 1)
    p = store.append([e1, e2])
    assert store.append([e1, e2]) == p
    assert store.count() == 2
    # the same id twice in one batch lands once; the new one lands
    e3 = ev("user", "prefers_editor", "emacs", 2)
    store.append([e3, e3, e1])
    assert store.count() == 3
    assert ids(store.pair_events("user", ["prefers_editor"])) == [e1.id, e2.id, e3.id]


def test_a_batch_is_atomic_when_the_database_refuses_one_event(store, monkeypatch):
    # the engine refuses such an instant itself (docs/records.md, "Instants"); lift its
    # check here so that the database is the one that refuses
    monkeypatch.setattr("recall_engine.records.instant_problem", lambda ns: None)
    store.append([ev("user", "lives_in", "Berlin")])
    before = (store.position(), store.count())
    good = ev("user", "prefers_editor", "vim", 1)
    # An instant past 2262 does not fit a 64-bit integer: the database refuses the
    # second row after the first one was written inside the transaction.
    too_late = dataclasses.replace(ev("user", "prefers_editor", "zed", 2), observed_at=2**63 + 5)
    with pytest.raises(StorageError) as err:
        store.append([good, too_late])
    assert "nothing of it was written" in str(err.value)
    assert (store.position(), store.count()) == before
    assert store.events_by_id([good.id]) == []
    assert store.pair_events("user", ["prefers_editor"]) == []
    # the store still works, and the good event lands on its own
    store.append([good])
    assert ids(store.pair_events("user", ["prefers_editor"])) == [good.id]


def test_an_event_that_could_not_be_read_back_is_never_written(store):
    good = ev("user", "prefers_editor", "vim")
    bad = dataclasses.replace(ev("user", "prefers_editor", "zed", 1), confidence=2.0)
    with pytest.raises(InvalidEvent) as err:
        store.append([good, bad])
    assert str(err.value) == f"event {bad.id!r} has invalid confidence"
    assert store.count() == 0


# --- complete reads --------------------------------------------------------------


def test_pair_events_is_complete_or_refused(store):
    events = [ev("user", "prefers_editor", f"editor {i}", i) for i in range(5)]
    store.append(events + [ev("user", "lives_in", "Berlin"), ev("other", "prefers_editor", "vim")])
    assert ids(store.pair_events("user", ["prefers_editor"], limit=5)) == ids(events)
    with pytest.raises(IncompleteHistory) as err:
        store.pair_events("user", ["prefers_editor"], limit=4)
    assert str(err.value) == (
        "the pair user/prefers_editor has more than 4 events (the limit); the read is refused rather than truncated"
    )


def test_pair_events_reads_every_stored_name_in_append_order(store):
    a = ev("user", "editor", "vim", 5)  # an older name, appended first but observed later
    b = ev("user", "prefers_editor", "zed", 1)
    c = ev("user", "editor", "emacs", 0)
    store.append([a, b, c, ev("user", "lives_in", "Berlin")])
    assert ids(store.pair_events("user", ["prefers_editor", "editor"])) == [a.id, b.id, c.id]
    assert store.pair_events("user", []) == []
    assert store.pair_events("nobody", ["editor"]) == []


def test_subject_events_is_complete_or_refused(store):
    mine = [ev("user", "prefers_editor", "vim"), ev("user", "lives_in", "Berlin", 1), ev("user", "likes", "tea", 2)]
    store.append(mine + [ev("other", "likes", "tea")])
    assert ids(store.subject_events("user")) == ids(mine)
    with pytest.raises(IncompleteHistory) as err:
        store.subject_events("user", limit=2)
    assert str(err.value) == (
        "the subject user has more than 2 events (the limit); the read is refused rather than truncated"
    )


def test_events_by_id_leaves_unknown_ids_out(store):
    a, b, c = ev("user", "likes", "tea"), ev("user", "likes", "coffee", 1), ev("other", "likes", "tea", 2)
    store.append([a, b, c])
    assert ids(store.events_by_id([c.id, "m-unknown", a.id, a.id])) == [a.id, c.id]  # append order, once each
    assert store.events_by_id([]) == []
    assert store.events_by_id(["m-unknown"]) == []


def test_absent_subjects_are_those_without_any_event(store, backend):
    other = backend.store("other")
    other.append([ev("carol", "likes", "tea")])  # another collection's subjects do not count
    store.append([ev("user", "likes", "tea"), ev("user", "likes", "tea", 1, retraction=True)])
    assert store.absent_subjects(["user", "carol", "nobody", "nobody", 'Ünïcode "q"']) == {
        "carol",
        "nobody",
        'Ünïcode "q"',
    }
    assert store.absent_subjects([]) == set()


def test_replacing_events_finds_events_whose_replaces_name_the_predicate(store):
    plain = ev("user", "prefers_editor", "vim")
    fix = ev("user", "uses_editor", "zed", 1, replaces=[Replace("prefers_editor", "vim")])
    both = ev("user", "likes", "zed", 2, replaces=[Replace("prefers_editor", "vim"), Replace("prefers_editor", "ed")])
    elsewhere = ev("user", "lives_in", "Paris", 3, replaces=[Replace("lives_in", "Berlin")])
    other = ev("other", "uses_editor", "zed", 4, replaces=[Replace("prefers_editor", "vim")])
    store.append([plain, fix, both, elsewhere, other])
    assert ids(store.replacing_events("user", ["prefers_editor"])) == [fix.id, both.id]
    assert ids(store.replacing_events("user", ["prefers_editor", "lives_in"])) == [fix.id, both.id, elsewhere.id]
    assert store.replacing_events("user", ["uses_editor"]) == []
    assert store.replacing_events("user", []) == []


def test_value_events_match_value_identity_under_any_predicate(store):
    likes = ev("user", "likes", "Mango")
    dislikes = ev("user", "dislikes", "mango", 1)
    retract = ev("user", "likes", "MANGO", 2, retraction=True)
    number = ev("user", "lucky_number", 8000, 3)
    store.append([likes, dislikes, retract, number, ev("user", "likes", "kiwi", 4), ev("other", "likes", "mango")])
    assert ids(store.value_events("user", [value_key("mango")])) == [likes.id, dislikes.id, retract.id]
    assert ids(store.value_events("user", [value_key(8000.0), value_key("kiwi")]))[0] == number.id
    with pytest.raises(IncompleteHistory) as err:
        store.value_events("user", [value_key("mango")], limit=2)
    assert str(err.value) == (
        "the events of user with the values asked for number more than 2 events (the limit); "
        "the read is refused rather than truncated"
    )
    assert store.value_events("user", []) == []


def test_touched_since_lists_what_each_later_event_touched(store):
    p = store.append([ev("user", "likes", "tea")])
    later = [ev("user", "likes", "Coffee", 1), ev("ann", "lives_in", "Oslo", 2, retraction=True)]
    end = store.append(later)
    touches = store.touched_since(p)
    assert [(t.subject, t.predicate, t.value_key) for t in touches] == [
        ("user", "likes", "s:coffee"),
        ("ann", "lives_in", "s:oslo"),
    ]
    assert all(isinstance(t, Touch) for t in touches) and touches[-1].position == end
    assert store.touched_since(end) == []
    with pytest.raises(IncompleteHistory) as err:
        store.touched_since(0, limit=2)
    assert str(err.value) == (
        "the events appended after position 0 number more than 2 events (the limit); "
        "the read is refused rather than truncated"
    )


# --- streams -------------------------------------------------------------------


def test_predicate_events_are_grouped_by_subject(store):
    events = [
        ev("bob", "likes", "tea", 0),
        ev("ann", "likes", "tea", 1),
        ev("bob", "dislikes", "coffee", 2),
        ev("cid", "lives_in", "Oslo", 3),
        ev("ann", "dislikes", "milk", 4),
        ev("bob", "likes", "water", 5),
    ]
    store.append(events)
    out = list(store.predicate_events(["likes", "dislikes"]))
    assert sorted(ids(out)) == sorted(e.id for e in events if e.predicate != "lives_in")
    subjects = [e.subject for e in out]
    # grouped: each subject's events are together, in append order
    assert len([s for i, s in enumerate(subjects) if i == 0 or subjects[i - 1] != s]) == 2
    for who in ("ann", "bob"):
        mine = [e for e in out if e.subject == who]
        assert ids(mine) == [e.id for e in events if e.subject == who and e.predicate != "lives_in"]
    only_ann = list(store.predicate_events(["likes", "dislikes"], subjects=["ann", "nobody"]))
    assert ids(only_ann) == [events[1].id, events[4].id]
    assert list(store.predicate_events(["likes"], subjects=[])) == []
    assert list(store.predicate_events([])) == []


def test_all_events_in_position_order_and_after_a_position(store):
    first = [ev("b", "likes", "tea", 3), ev("a", "likes", "tea", 1)]
    p = store.append(first)
    second = [ev("c", "likes", "tea", 0)]
    store.append(second)
    assert ids(store.all_events()) == ids(first + second)
    assert ids(store.all_events(after_position=p)) == ids(second)


def test_streams_end_where_the_log_stood_when_they_were_asked_for(store):
    store.append([ev(f"s{i}", "likes", f"v{i}", i) for i in range(5)])
    events = store.all_events()
    grouped = store.predicate_events(["likes"])
    first, first_grouped = next(events), next(grouped)
    store.append([ev("s0", "likes", "late", 9), ev("zz", "likes", "later", 10)])
    assert len([first, *events]) == 5
    assert len([first_grouped, *grouped]) == 5
    assert len(list(store.all_events())) == 7


def test_shared_values_finds_one_value_under_two_names(store):
    store.append(
        [
            ev("user", "likes", "Mango"),
            ev("user", "dislikes", "mango", 1),
            ev("user", "favorite_fruit", "MANGO", 2),
            ev("user", "likes", "kiwi", 3),
            ev("user", "likes", "kiwi", 4),  # the same name twice is not a conflict
            ev("user", "likes", "pear", 5),
            ev("user", "dislikes", "pear", 6, retraction=True),  # retractions do not count
            ev("ann", "likes", "tea", 0),
            ev("ann", "drinks", "Tea", 1),
            ev(REGISTRY_SUBJECT, REGISTRY_PREDICATE, "x", 0),
            ev(REGISTRY_SUBJECT, "note", "x", 1),
            ev(REVIEW_SUBJECT, REVIEW_PREDICATE, "y", 0),
            ev(REVIEW_SUBJECT, "note", "y", 1),
        ]
    )
    found = sorted(store.shared_values())
    assert found == [
        ("ann", "s:tea", ["drinks", "likes"]),
        ("user", "s:mango", ["dislikes", "favorite_fruit", "likes"]),
    ]
    assert sorted(store.shared_values(exclude_predicates=["drinks", "favorite_fruit"])) == [
        ("user", "s:mango", ["dislikes", "likes"]),
    ]


# --- registry and browsing ---------------------------------------------------------


def test_registry_events_are_the_registry_pair_only(store):
    reg = [ev(REGISTRY_SUBJECT, REGISTRY_PREDICATE, '{"op":"declare"}', i) for i in range(3)]
    store.append([reg[0], ev(REGISTRY_SUBJECT, "note", "x"), ev("user", REGISTRY_PREDICATE, "y"), reg[1], reg[2]])
    assert ids(store.registry_events()) == ids(reg)


def test_subjects_pairs_and_predicate_counts(store):
    store.append(
        [
            ev("user", "likes", "tea"),
            ev("user", "likes", "coffee", 1),
            ev("user", "lives_in", "Berlin", 2),
            ev("ursula", "likes", "tea", 3),
            ev("ann", "likes", "tea", 4),
            ev("ann", "lives_in", "Oslo", 5),
            ev(REGISTRY_SUBJECT, REGISTRY_PREDICATE, "x", 6),
            ev(REVIEW_SUBJECT, REVIEW_PREDICATE, "y", 7),
        ]
    )
    assert store.subjects() == [("user", 3), ("ann", 2), ("ursula", 1)]
    assert store.subjects(prefix="u") == [("user", 3), ("ursula", 1)]
    assert store.subjects(prefix="us") == [("user", 3)]
    assert store.subjects(limit=1) == [("user", 3)]
    assert store.subjects(prefix="recall") == []
    assert store.pairs("user") == [("likes", 2), ("lives_in", 1)]
    assert store.pairs(REGISTRY_SUBJECT) == [(REGISTRY_PREDICATE, 1)]  # asked for by name
    assert store.pairs("nobody") == []
    assert store.predicate_counts() == {"likes": 4, "lives_in": 2}


# --- search ----------------------------------------------------------------------


def _search_store(store):
    events = [
        ev("user", "prefers_editor", "neovim", 0),
        ev("user", "lives_in", "Berlin", 24, evidence="we moved to Berlin for the new job"),
        ev("user", "likes", "hiking in the alps", 48),
        ev("ann", "prefers_editor", "emacs", 72),
    ]
    store.append(events)
    return events


def test_keyword_search_finds_words_of_the_sentence_and_the_evidence(store):
    events = _search_store(store)
    hits = store.keyword_search("which editor? neovim!", 5)
    assert all(isinstance(h, Hit) for h in hits)
    assert hits[0].event.id == events[0].id  # two matching words rank first
    assert events[3].id in ids(h.event for h in hits)
    assert [h.event.id for h in store.keyword_search("new job", 5)] == [events[1].id]  # from the evidence
    assert store.keyword_search("submarine", 5) == []
    assert store.keyword_search("", 5) == [] and store.keyword_search("?! -- ", 5) == []


def test_keyword_search_treats_query_syntax_as_plain_words(store):
    events = _search_store(store)
    for text in ['emacs" OR "x', "emacs*", "NEAR(emacs vim)", "emacs AND", "subject:emacs", "(emacs", "^emacs -vim"]:
        assert [h.event.id for h in store.keyword_search(text, 5)][:1] == [events[3].id], text


def test_keyword_search_respects_the_time_window(store):
    events = _search_store(store)
    both = store.keyword_search("editor", 5)
    assert sorted(ids(h.event for h in both)) == sorted([events[0].id, events[3].id])
    late = store.keyword_search("editor", 5, since=T0 + HOUR)
    assert ids(h.event for h in late) == [events[3].id]
    early = store.keyword_search("editor", 5, until=T0)  # the bound is inclusive
    assert ids(h.event for h in early) == [events[0].id]
    assert store.keyword_search("editor", 5, since=T0 + 1, until=T0 + 71 * HOUR) == []


def test_vector_search_finds_the_nearest_sentence(store):
    events = _search_store(store)
    hits = store.vector_search(embed(event_text(events[2])), 2)
    assert len(hits) == 2
    assert hits[0].event.id == events[2].id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[0].score >= hits[1].score
    assert len(store.vector_search(embed("anything"), 10)) == 4


def test_vector_search_respects_the_time_window_and_sees_new_events(store):
    events = _search_store(store)
    q = embed("user prefers editor neovim")
    assert store.vector_search(q, 1)[0].event.id == events[0].id
    windowed = store.vector_search(q, 4, since=T0 + 24 * HOUR, until=T0 + 48 * HOUR)
    assert sorted(ids(h.event for h in windowed)) == sorted([events[1].id, events[2].id])
    assert store.vector_search(q, 3, since=T0 + 1000 * HOUR) == []
    newer = ev("user", "prefers_editor", "neovim nightly", 100)
    store.append([newer])
    assert newer.id in ids(h.event for h in store.vector_search(q, 2))


def test_vector_search_refuses_a_vector_of_the_wrong_size(store):
    with pytest.raises(InvalidInput):
        store.vector_search(np.zeros(3, dtype=np.float32), 5)


# --- collections -----------------------------------------------------------------


def test_collections_are_separate_namespaces(backend):
    a, b = backend.store("alpha"), backend.store("beta")
    shared = ev("user", "likes", "tea")
    a.append([shared, ev("user", "lives_in", "Berlin", 1)])
    b.append([shared])  # the same id in another collection is another event
    assert (a.count(), b.count()) == (2, 1)
    assert ids(b.subject_events("user")) == [shared.id]
    assert b.pair_events("user", ["lives_in"]) == []
    assert b.keyword_search("berlin", 5) == [] and len(a.keyword_search("berlin", 5)) == 1
    assert len(b.vector_search(embed("user lives in berlin"), 5)) == 1
    assert b.predicate_counts() == {"likes": 1}
    assert dict(backend.collections()) == {"alpha": 2, "beta": 1}


def test_a_malicious_collection_name_is_refused(backend):
    for name in ["x'; DROP TABLE events; --", "", "a b", "-x", "x" * 64, "ü"]:
        with pytest.raises(InvalidInput) as err:
            backend.store(name)
        assert str(err.value) == (
            "collection name must be 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit; "
            f"got {name!r}"
        )
    assert backend.collections() == []


def test_store_without_create_refuses_a_missing_collection(backend):
    backend.store("alpha")
    with pytest.raises(NotFound) as err:
        backend.store("beta", create=False)
    assert str(err.value) == f"no collection 'beta' in the store at {backend.url_for_display}; collections: alpha"


# --- read-only, reopen -------------------------------------------------------------


def test_read_only_mode_refuses_writes_and_still_reads(backend_url):
    e = ev("user", "likes", "tea")
    with open_backend(backend_url) as b:
        b.store("memories").append([e])
    with open_backend(backend_url, read_only=True) as ro:
        store = ro.store("memories")
        assert store.read_only
        with pytest.raises(ReadOnlyStore) as err:
            store.append([ev("user", "likes", "coffee", 1)])
        assert str(err.value) == READ_ONLY
        assert ids(store.pair_events("user", ["likes"])) == [e.id]
        assert store.count() == 1
        assert len(store.keyword_search("tea", 3)) == 1
        with pytest.raises(NotFound):
            ro.store("elsewhere")  # nothing can be created in read-only mode
    with open_backend(backend_url) as b:
        assert b.store("memories").count() == 1


def test_reopening_a_store_keeps_everything(backend_url):
    events = [ev("user", "likes", "tea"), ev("user", "likes", "coffee", 1, replaces=[Replace("likes", "tea")])]
    with open_backend(backend_url) as b:
        s = b.store("memories")
        pos = s.append(events)
        b.store("other").append(events[:1])
    with open_backend(backend_url) as b:
        s = b.store("memories", create=False)
        assert s.position() == pos and s.count() == 2
        assert s.pair_events("user", ["likes"]) == events
        assert ids(s.replacing_events("user", ["likes"])) == [events[1].id]
        assert s.keyword_search("coffee", 1)[0].event == events[1]
        assert dict(b.collections()) == {"memories": 2, "other": 1}
        assert s.append(events) == pos  # still skipped as duplicates after a reopen
