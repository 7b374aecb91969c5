"""Reads as known at an instant: the second time axis (docs/history-diff-explain.md).

The editor example: the agent answered "vim" on September 1st; later an operator made
``prefers_editor`` multi-valued retroactively and someone recorded a backdated "helix".
Asked today about September 1st, the engine says what it now believes was true then;
asked known at September 1st, it says what it answered then.
"""

from __future__ import annotations

import pytest

from recall_engine import clock
from recall_engine.errors import InvalidInput, UnknownPredicate
from recall_engine.instants import DAY_NS, parse_instant
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord
from tests.memory.conftest import declare

AUG1, AUG20, AUG25 = (parse_instant(f"2026-08-{d}T12:00:00Z") for d in ("01", "20", "25"))
SEP1, SEP10, SEP12 = (parse_instant(f"2026-09-{d}T12:00:00Z") for d in ("01", "10", "12"))
NOW = parse_instant("2026-11-30T12:00:00Z")


class Wall:
    """One clock for the memory and the store: each append is recorded at ``t``."""

    def __init__(self, t: int) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t


@pytest.fixture
def wall(monkeypatch) -> Wall:
    w = Wall(parse_instant("2026-01-01T00:00:00Z"))
    monkeypatch.setattr(clock, "now_ns", w)
    return w


@pytest.fixture
def mem(store, wall: Wall) -> Memory:
    m = Memory(store, now=wall)
    declare(m)
    return m


def values(beliefs) -> list:
    return sorted(b.value for b in beliefs)


def editor_story(mem: Memory, wall: Wall) -> dict[str, object]:
    """The issue's story; returns what plain reads answered along the way."""
    answered: dict[str, object] = {}
    wall.t = AUG1
    mem.remember("user", "prefers_editor", "emacs")
    wall.t = AUG20
    mem.remember("user", "prefers_editor", "vim")
    wall.t = SEP1
    answered["sep1"] = values(mem.read_pair("user", "prefers_editor"))
    answered["sep1 history"] = mem.history("user", "prefers_editor")
    answered["sep1 explain"] = mem.explain("user", "prefers_editor")
    wall.t = SEP10
    d = Definition("prefers_editor", "multi", "string", "The editors someone uses")
    mem.append_records(
        [RegistryRecord(op="redefine", name="prefers_editor", definition=d, retroactive=True, operator="ana")]
    )
    wall.t = SEP12
    mem.remember("user", "prefers_editor", "helix", at=AUG25)  # said on August 25th, recorded now
    wall.t = NOW
    return answered


def test_a_read_known_at_an_instant_answers_what_a_read_then_answered(mem: Memory, wall: Wall):
    answered = editor_story(mem, wall)
    assert answered["sep1"] == ["vim"]
    # what we now believe was true on September 1st
    assert values(mem.read_pair("user", "prefers_editor", as_of=SEP1)) == ["emacs", "helix", "vim"]
    # what we answered on September 1st (known_at alone: as_of is known_at)
    assert values(mem.read_pair("user", "prefers_editor", known_at=SEP1)) == ["vim"]
    assert values(mem.read_pair("user", "prefers_editor", as_of=SEP1, known_at=SEP1)) == ["vim"]
    # after the redefine, before the backdated statement
    assert values(mem.read_pair("user", "prefers_editor", as_of=SEP1, known_at=SEP10)) == ["emacs", "vim"]
    assert values(mem.profile("user", known_at=SEP1)) == ["vim"]
    assert values(mem.profile("user", as_of=SEP1)) == ["emacs", "helix", "vim"]


def test_known_at_or_after_the_last_append_is_a_plain_read(mem: Memory, wall: Wall):
    editor_story(mem, wall)
    plain = mem.read_pair("user", "prefers_editor", as_of=SEP1)
    assert mem.read_pair("user", "prefers_editor", as_of=SEP1, known_at=SEP12) == plain
    assert mem.read_pair("user", "prefers_editor", as_of=SEP1, known_at=NOW + DAY_NS) == plain
    assert mem.explain("user", "prefers_editor", SEP1, known_at=NOW) == mem.explain("user", "prefers_editor", SEP1)


def test_history_and_explain_known_at_an_instant_are_those_of_then(mem: Memory, wall: Wall):
    answered = editor_story(mem, wall)
    assert mem.history("user", "prefers_editor", known_at=SEP1) == answered["sep1 history"]
    then = mem.explain("user", "prefers_editor", known_at=SEP1)
    assert then == answered["sep1 explain"]
    assert [r.op for r in then.rules] == ["declare"]  # the rule that decided it then
    assert [r.op for r in mem.explain("user", "prefers_editor").rules] == ["declare", "redefine"]
    _, _, steps = mem.history("user", "prefers_editor")
    said_recorded = [(s.value, s.at, s.recorded_at) for s in steps]
    assert said_recorded == [("emacs", AUG1, AUG1), ("vim", AUG20, AUG20), ("helix", AUG25, SEP12)]


def test_diff_compares_two_known_instants_for_one_valid_instant(mem: Memory, wall: Wall):
    editor_story(mem, wall)
    (change,) = mem.diff(SEP1, SEP1, "user", known_at=SEP1, known_to=NOW)
    assert (change.predicate, change.before, sorted(change.after)) == (
        "prefers_editor",
        ("vim",),
        ["emacs", "helix", "vim"],
    )
    assert sorted(change.began) == ["emacs", "helix"] and change.stopped == ()
    assert mem.diff(SEP1, SEP1, "user", known_at=SEP10, known_to=SEP10) == []
    # one known instant for both sides: as_of moves, the log is the one known then
    (c,) = mem.diff(AUG1, SEP1, "user", known_at=SEP1)
    assert (c.before, c.after) == (("emacs",), ("vim",))


def test_a_statement_recorded_before_its_own_instant_reads_known_after_it(mem: Memory, wall: Wall):
    # a registry record recorded after a statement under the name it defines: known
    # before the record, the name is unknown
    wall.t = SEP1
    mem.append_records([RegistryRecord(op="declare", name="shell", definition=Definition("shell", "single", "string"))])
    wall.t = SEP10
    mem.remember("user", "shell", "fish")
    assert values(mem.read_pair("user", "shell", known_at=SEP10)) == ["fish"]
    with pytest.raises(UnknownPredicate, match="predicate 'shell' is not in the registry"):
        mem.read_pair("user", "shell", known_at=AUG1)


@pytest.mark.parametrize("bad", [True, 1.5, "2026-09-01"])
def test_a_known_at_that_is_not_an_instant_is_refused(mem: Memory, bad):
    with pytest.raises(InvalidInput) as e:
        mem.read_pair("user", "prefers_editor", known_at=bad)
    assert e.value.message.startswith("known_at must be integer nanoseconds, got ")


def test_a_kept_known_at_view_sees_what_is_appended_after_it_was_first_read(mem: Memory, wall: Wall):
    # Memory.known keeps its views with folded pairs; an append recorded by their
    # instant (one in the future) or a registry record must be seen by the next read
    wall.t = AUG1
    mem.remember("user", "prefers_editor", "emacs")
    later = NOW + DAY_NS
    assert values(mem.read_pair("user", "prefers_editor", known_at=later)) == ["emacs"]
    assert values(mem.read_pair("user", "prefers_editor", known_at=AUG1)) == ["emacs"]
    wall.t = AUG20
    mem.remember("user", "prefers_editor", "vim")
    assert values(mem.read_pair("user", "prefers_editor", known_at=later)) == ["vim"]
    assert values(mem.read_pair("user", "prefers_editor", known_at=AUG1)) == ["emacs"]  # as answered then
    wall.t = SEP1
    d = Definition("prefers_editor", "multi", "string", "The editors someone uses")
    mem.append_records(
        [RegistryRecord(op="redefine", name="prefers_editor", definition=d, retroactive=True, operator="ana")]
    )
    assert values(mem.read_pair("user", "prefers_editor", known_at=later)) == ["emacs", "vim"]
    assert values(mem.read_pair("user", "prefers_editor", as_of=AUG20, known_at=AUG20)) == ["vim"]
    assert mem.known(later) is mem.known(later)  # the view is kept, not built again


def test_only_the_last_few_known_at_views_are_kept(mem: Memory, wall: Wall):
    from recall_engine.memory import KNOWN_VIEWS

    wall.t = AUG1
    mem.remember("user", "prefers_editor", "emacs")
    first = mem.known(AUG1)
    for i in range(KNOWN_VIEWS):
        assert values(mem.known(AUG1 + i + 1).read_pair("user", "prefers_editor")) == ["emacs"]
    assert mem.known(AUG1) is not first
