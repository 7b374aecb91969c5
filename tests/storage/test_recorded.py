"""The recorded instant: set by the store at append, per collection, on every backend
(docs/storage.md, "Recorded instants")."""

from __future__ import annotations

import pytest

from recall_engine import clock
from recall_engine.audit.digest import digest_v4
from recall_engine.instants import NS, parse_instant
from recall_engine.records import make_event

T0 = parse_instant("2026-03-01T09:00:00Z")


class Clock:
    def __init__(self, t: int) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t


@pytest.fixture
def wall(monkeypatch) -> Clock:
    c = Clock(parse_instant("2026-09-01T12:00:00Z"))
    monkeypatch.setattr(clock, "now_ns", c)
    return c


def ev(value: str, hours: int = 0):
    return make_event("user", "prefers_editor", value, T0 + hours * 3600 * NS)


def test_an_append_records_the_clock_on_each_of_its_events(store, wall: Clock):
    a, b = ev("vim"), ev("zed", 1)
    store.append([a, b])
    got = store.pair_events("user", ["prefers_editor"])
    assert [e.recorded_at for e in got] == [wall.t, wall.t]
    assert [e.recorded_at for e in store.all_events()] == [wall.t, wall.t]
    assert store.events_by_id([b.id])[0].recorded_at == wall.t


def test_recorded_instants_never_go_back_even_when_the_clock_does(store, wall: Clock):
    store.append([ev("vim")])
    first = wall.t
    wall.t -= 3600 * NS  # the clock steps back an hour
    store.append([ev("zed", 1)])
    wall.t += 7200 * NS
    store.append([ev("helix", 2)])
    got = [e.recorded_at for e in store.all_events()]
    assert got == [first, first + 1, first + 3600 * NS]


def test_each_collection_has_its_own_sequence(backend, wall: Clock):
    a, b = backend.store("a"), backend.store("b")
    a.append([ev("vim")])
    wall.t -= NS
    b.append([ev("vim")])
    assert [e.recorded_at for e in b.all_events()] == [wall.t]  # not moved after a's


def test_the_recorded_instant_is_outside_the_id_equality_and_digest(store, wall: Clock):
    e = ev("vim")
    store.append([e])
    (back,) = store.all_events()
    assert back.recorded_at == wall.t and e.recorded_at is None
    assert back == e and back.id == e.id
    assert "recorded_at" not in back.to_json()
    assert digest_v4([back]) == digest_v4([e])


def test_a_skipped_duplicate_keeps_its_first_recorded_instant(store, wall: Clock):
    e = ev("vim")
    store.append([e])
    first = wall.t
    wall.t += NS
    store.append([e, ev("zed", 1)])
    got = {x.value: x.recorded_at for x in store.all_events()}
    assert got == {"vim": first, "zed": first + NS}


def test_search_hits_carry_the_recorded_instant(store, wall: Clock):
    store.append([ev("vim")])
    hits = store.keyword_search("vim", 5)
    assert [h.event.recorded_at for h in hits] == [wall.t]
