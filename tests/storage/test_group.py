"""``Backend.group()``: appends that share one transaction (group commit for `serve`,
docs/agents.md). Each append stays all-or-nothing on its own; the group is committed at
the end, or nothing of it is. Both backends."""

from __future__ import annotations

import dataclasses

import pytest

from recall_engine.errors import StorageError
from recall_engine.instants import NS, parse_instant
from recall_engine.records import make_event

T0 = parse_instant("2026-03-01T09:00:00Z")


def ev(subject, predicate, value, hours=0):
    return make_event(subject, predicate, value, T0 + int(hours * 3600 * NS))


def ids(events):
    return [e.id for e in events]


def test_reads_inside_a_group_see_its_appends_and_the_commit_keeps_them(backend):
    one, two = backend.store("one"), backend.store("two")
    a, b = ev("user", "prefers_editor", "vim"), ev("user", "uses_technology", "go")
    with backend.group():
        one.append([a])
        assert ids(one.pair_events("user", ["prefers_editor"])) == [a.id]
        two.append([b])  # a group may span collections
        assert two.position() > 0
    assert ids(one.pair_events("user", ["prefers_editor"])) == [a.id]
    assert ids(two.pair_events("user", ["uses_technology"])) == [b.id]
    assert (one.count(), two.count()) == (1, 1)


def test_an_append_the_database_refuses_takes_back_only_its_own_rows(backend, monkeypatch):
    # the engine refuses such an instant itself; lift its check so the database refuses it
    monkeypatch.setattr("recall_engine.records.instant_problem", lambda ns: None)
    store = backend.store("memories")
    first, last = ev("user", "prefers_editor", "vim"), ev("ticket", "uses_technology", "go", 3)
    good = ev("user", "uses_technology", "rust", 1)
    too_late = dataclasses.replace(ev("user", "uses_technology", "zig", 2), observed_at=2**63 + 5)
    with backend.group():
        store.append([first])
        with pytest.raises(StorageError) as err:
            store.append([good, too_late])  # the database refuses the second row, after the first
        assert "nothing of it was written" in str(err.value)
        assert store.events_by_id([good.id]) == []
        store.append([last])
    assert ids(store.all_events()) == [first.id, last.id]
    assert store.count() == 2


def test_a_group_that_raises_writes_nothing(backend):
    store = backend.store("memories")
    kept = ev("user", "prefers_editor", "vim")
    store.append([kept])
    before = (store.position(), store.count())
    with pytest.raises(RuntimeError, match="caller"), backend.group():
        store.append([ev("user", "prefers_editor", "zed", 1)])
        raise RuntimeError("the caller gave up")
    assert (store.position(), store.count()) == before
    assert ids(store.all_events()) == [kept.id]
    store.append([ev("user", "prefers_editor", "zed", 1)])  # and the store still takes writes
    assert store.count() == 2


def test_a_group_inside_a_group_joins_it(backend):
    store = backend.store("memories")
    with pytest.raises(RuntimeError), backend.group():
        with backend.group():
            store.append([ev("user", "prefers_editor", "vim")])
        raise RuntimeError("the outer group fails")
    assert store.count() == 0  # the inner block did not commit on its own


@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("stored", [0, 1])  # 0: into an empty store, whose indexes a bulk append rebuilds
def test_a_bulk_append_inside_a_group_is_part_of_it(backend, atomic, stored):
    store = backend.store("memories")
    store.append([ev("user", "prefers_editor", "vim")][:stored])
    bulk = [ev("user", "uses_technology", f"tech-{k}", k + 1) for k in range(5)]
    with pytest.raises(RuntimeError, match="gave up"), backend.group():
        assert store.append_many(bulk, batch_size=2, atomic=atomic) == 5
        assert store.count() == stored + 5  # seen inside the group
        raise RuntimeError("the caller gave up")
    assert store.count() == stored  # taken back with the group
    with backend.group():
        assert store.append_many(bulk, batch_size=2, atomic=atomic) == 5
    assert ids(store.pair_events("user", ["uses_technology"])) == ids(bulk)
    assert store.count() == stored + 5
